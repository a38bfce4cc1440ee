//! The ranks over MPI's world communicator.
//!
//! A sync is one all-reduce (maximum) of `[failed, value]`, started non-blocking and tested
//! in a loop that also polls the cancel flag: a rank never sits in MPI where a signal cannot
//! end its run. A broadcast's length travels the same way; the payloads after it (every rank
//! is then known to be there) are blocking calls.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use iolab_kind::ranks::other_rank_failed;
use iolab_kind::{Group, Ranks, RunFailure};
use mpi::collective::SystemOperation;
use mpi::datatype::PartitionMut;
use mpi::environment::Universe;
use mpi::request::StaticScope;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use mpi::Count;

use crate::Error;

pub(crate) struct World {
    group: Arc<MpiGroup>,
    // Last: MPI_Finalize when dropped, after the group.
    _universe: Universe,
}

impl World {
    pub(crate) fn start(cancel: Arc<AtomicBool>) -> Result<Option<World>, Error> {
        let (universe, threading) = mpi::initialize_with_threading(mpi::Threading::Multiple)
            .ok_or_else(|| Error::Init("MPI was already started".into()))?;
        // The runner calls the group from one thread at a time, not always the main one.
        if threading < mpi::Threading::Serialized {
            return Err(Error::Init(format!(
                "this MPI gives {threading:?} threading; iolab needs MPI_THREAD_SERIALIZED"
            )));
        }
        let world = universe.world();
        if world.size() <= 1 {
            return Ok(None);
        }
        let rank = world.rank() as usize;
        let size = world.size() as usize;
        let keys = gather_all(&world, crate::node_key().as_bytes());
        let names = gather_all(&world, crate::hostname().as_bytes());
        let per_node = keys.iter().filter(|k| **k == keys[rank]).count();
        let group = MpiGroup {
            world,
            rank,
            size,
            per_node,
            hosts: names
                .iter()
                .map(|b| String::from_utf8_lossy(b).into_owned())
                .collect(),
            nodes: keys
                .iter()
                .map(|b| String::from_utf8_lossy(b).into_owned())
                .collect(),
            poisoned: AtomicBool::new(false),
            cancel,
            lock: Mutex::new(()),
        };
        Ok(Some(World {
            group: Arc::new(group),
            _universe: universe,
        }))
    }

    pub(crate) fn group(&self) -> Arc<dyn Group + Send + Sync> {
        Arc::clone(&self.group) as Arc<dyn Group + Send + Sync>
    }

    pub(crate) fn abort(&self, code: i32) -> ! {
        self.group.world.abort(code)
    }
}

/// Every rank's `bytes`, blocking (at start-up, when every rank is there).
fn gather_all(world: &SimpleCommunicator, bytes: &[u8]) -> Vec<Vec<u8>> {
    let size = world.size() as usize;
    let mut lens = vec![0 as Count; size];
    world.all_gather_into(&(bytes.len() as Count), &mut lens[..]);
    let displs = displacements(&lens);
    let mut buf = vec![0u8; lens.iter().map(|&c| c as usize).sum()];
    {
        let mut part = PartitionMut::new(&mut buf[..], &lens[..], &displs[..]);
        world.all_gather_varcount_into(bytes, &mut part);
    }
    split(&buf, &lens)
}

fn displacements(lens: &[Count]) -> Vec<Count> {
    lens.iter()
        .scan(0, |at, &c| {
            let d = *at;
            *at += c;
            Some(d)
        })
        .collect()
}

fn split(buf: &[u8], lens: &[Count]) -> Vec<Vec<u8>> {
    let mut at = 0;
    lens.iter()
        .map(|&c| {
            let v = buf[at..at + c as usize].to_vec();
            at += c as usize;
            v
        })
        .collect()
}

struct MpiGroup {
    world: SimpleCommunicator,
    rank: usize,
    size: usize,
    per_node: usize,
    hosts: Vec<String>,
    /// Each rank's node key (crate::node_key).
    nodes: Vec<String>,
    poisoned: AtomicBool,
    cancel: Arc<AtomicBool>,
    /// One MPI call sequence at a time (MPI_THREAD_SERIALIZED).
    lock: Mutex<()>,
}

// SAFETY: the communicator is a handle MPI lets any thread use when calls are serialised,
// which `lock` does for every call made through the group.
unsafe impl Send for MpiGroup {}
// SAFETY: as above.
unsafe impl Sync for MpiGroup {}

fn interrupted() -> RunFailure {
    RunFailure {
        interrupted: true,
        ..RunFailure::failed("interrupted while waiting for the other ranks")
    }
}

impl MpiGroup {
    /// Waits for a non-blocking request, polling the cancel flag: spins (yielding the CPU)
    /// for the first millisecond, where a barrier's release is usually decided, then naps
    /// 50 µs at a time. A longer spin costs the ranks still working: a rank that finished a
    /// phase early would take CPU time from those that have not (on 4 ranks of 2 CPUs, IOR's
    /// easy write ran 7 % slower with 20 ms of spinning).
    fn wait<D: ?Sized>(
        &self,
        mut req: mpi::request::Request<'static, D, StaticScope>,
    ) -> Result<(), RunFailure> {
        let start = Instant::now();
        loop {
            match req.test() {
                Ok(_) => return Ok(()),
                Err(r) => req = r,
            }
            if self.cancel.load(Ordering::Relaxed) {
                // MPI still owns the buffers: both stay allocated for good (the process is
                // ending) and the request is never completed.
                std::mem::forget(req);
                return Err(interrupted());
            }
            if start.elapsed() < Duration::from_millis(1) {
                std::thread::yield_now();
            } else {
                std::thread::sleep(Duration::from_micros(50));
            }
        }
    }

    /// One all-reduce (maximum) of `[failed, value]`.
    fn reduce(&self, failed: bool, value: u64) -> Result<(bool, u64), RunFailure> {
        let send: *mut [u64] = Box::into_raw(vec![u64::from(failed), value].into_boxed_slice());
        let recv: *mut [u64] = Box::into_raw(vec![0u64; 2].into_boxed_slice());
        // SAFETY: both buffers live until the request completes (reclaimed below) or for
        // good (a cancelled wait leaks them); nothing else touches them meanwhile.
        let req = unsafe {
            self.world.immediate_all_reduce_into(
                StaticScope,
                &*send,
                &mut *recv,
                SystemOperation::max(),
            )
        };
        self.wait(req)?;
        // SAFETY: the request completed: MPI is done with the buffers, made by into_raw above.
        let (_send, recv) = unsafe { (Box::from_raw(send), Box::from_raw(recv)) };
        Ok((recv[0] != 0, recv[1]))
    }

    fn sync(&self, failed: bool, value: u64) -> Result<u64, RunFailure> {
        if self.poisoned.load(Ordering::Relaxed) {
            return Err(other_rank_failed());
        }
        let (any_failed, max) = self.reduce(failed, value)?;
        if any_failed {
            self.poisoned.store(true, Ordering::Relaxed);
            return Err(other_rank_failed());
        }
        Ok(max)
    }

    fn guard(&self) -> std::sync::MutexGuard<'_, ()> {
        self.lock.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Ranks for MpiGroup {
    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        self.size
    }
    fn ranks_per_node(&self) -> usize {
        self.per_node
    }
    fn sync_max(&self, value: u64) -> Result<u64, RunFailure> {
        let _g = self.guard();
        self.sync(false, value)
    }
    fn all_gather(&self, bytes: &[u8]) -> Result<Vec<Vec<u8>>, RunFailure> {
        let _g = self.guard();
        // Every rank is there once the sync is through: the rest may block.
        self.sync(false, 0)?;
        Ok(gather_all(&self.world, bytes))
    }
}

impl Group for MpiGroup {
    fn broadcast(&self, bytes: Option<&[u8]>) -> Result<Vec<u8>, RunFailure> {
        let _g = self.guard();
        let root = self.world.process_at_rank(0);
        let len: *mut [u64] =
            Box::into_raw(vec![bytes.map_or(0, |b| b.len() as u64)].into_boxed_slice());
        // SAFETY: as in `reduce`.
        let req = unsafe { root.immediate_broadcast_into(StaticScope, &mut *len) };
        self.wait(req)?;
        // SAFETY: the request completed.
        let len = unsafe { Box::from_raw(len) }[0] as usize;
        let mut buf = match bytes {
            Some(b) => b.to_vec(),
            None => vec![0u8; len],
        };
        root.broadcast_into(&mut buf[..]);
        Ok(buf)
    }

    fn end(&self, failed: bool) -> bool {
        let _g = self.guard();
        if self.poisoned.load(Ordering::Relaxed) {
            return true;
        }
        match self.reduce(failed, 0) {
            Ok((any, _)) => {
                if any {
                    self.poisoned.store(true, Ordering::Relaxed);
                }
                any
            }
            // Cancelled: this rank's run ends as interrupted whatever the others did.
            Err(_) => true,
        }
    }

    fn gather(&self, bytes: &[u8]) -> Result<Option<Vec<Vec<u8>>>, RunFailure> {
        let _g = self.guard();
        // A sync that is never poisoned first, so that the blocking gather finds every rank.
        self.reduce(false, 0)?;
        let root = self.world.process_at_rank(0);
        let len = bytes.len() as Count;
        if self.rank != 0 {
            root.gather_into(&len);
            root.gather_varcount_into(bytes);
            return Ok(None);
        }
        let mut lens = vec![0 as Count; self.size];
        root.gather_into_root(&len, &mut lens[..]);
        let displs = displacements(&lens);
        let mut buf = vec![0u8; lens.iter().map(|&c| c as usize).sum()];
        {
            let mut part = PartitionMut::new(&mut buf[..], &lens[..], &displs[..]);
            root.gather_varcount_into_root(bytes, &mut part);
        }
        Ok(Some(split(&buf, &lens)))
    }

    fn reset(&self) {
        self.poisoned.store(false, Ordering::Relaxed);
    }

    fn hosts(&self) -> Vec<String> {
        self.hosts.clone()
    }

    fn leader(&self) -> usize {
        let mine = &self.nodes[self.rank];
        self.nodes
            .iter()
            .position(|n| n == mine)
            .unwrap_or(self.rank)
    }

    fn as_ranks(&self) -> &dyn Ranks {
        self
    }
}
