//! The processes a run's workload is shared with ([`Ranks`]): under MPI one per rank, each on
//! its own host or not, running its share of the workload in lock-step; without MPI just this
//! process ([`Solo`]). [`Threads`] runs ranks as threads of one process, for the kinds' tests
//! of their multi-rank logic (a real group: its barriers block, its failures end every rank).
//!
//! Every synchronisation carries whether a rank failed: a rank whose workload fails stops
//! calling its kind's syncs and the runner syncs once more on its behalf with the failure, so
//! the other ranks see it at their next sync, which returns an error. From then on every sync
//! of the run returns that error at once without communicating (the group is *poisoned* until
//! the runner's next run): no rank waits for one that will not come.

use std::sync::{Arc, Condvar, Mutex, PoisonError};

use crate::run::RunFailure;

/// The ranks of a run. Calls from one rank are made by one thread at a time.
pub trait Ranks {
    /// This process's rank, 0-based.
    fn rank(&self) -> usize;
    /// How many ranks share the workload (1 without MPI).
    fn size(&self) -> usize;
    /// How many ranks run on this rank's host (IOR's tasks per node: reading back the data
    /// of the rank this many places on defeats the client's cache).
    fn ranks_per_node(&self) -> usize;
    /// Waits until every rank has reached a sync and returns the largest `value` any of them
    /// gave (stonewalling: the most work done by the deadline). An error when a rank failed
    /// or the run was cancelled: the run ends.
    fn sync_max(&self, value: u64) -> Result<u64, RunFailure>;
    /// Waits until every rank has reached a sync.
    fn barrier(&self) -> Result<(), RunFailure> {
        self.sync_max(0).map(drop)
    }
    /// Every rank's `bytes`, in rank order.
    fn all_gather(&self, bytes: &[u8]) -> Result<Vec<Vec<u8>>, RunFailure>;
}

/// The ranks as the runner drives them: rank 0 decides what runs and stores it, every rank
/// runs it (the kind's syncs in between), and each run ends with [`Group::end`] and
/// [`Group::gather`], which every rank calls whatever happened.
pub trait Group: Ranks {
    /// Rank 0's `bytes` on every rank (what runs next); the others pass `None`. An error when
    /// the run was cancelled while waiting.
    fn broadcast(&self, bytes: Option<&[u8]>) -> Result<Vec<u8>, RunFailure>;
    /// The run's last sync: whether any rank failed (a poisoned group says so without
    /// communicating).
    fn end(&self, failed: bool) -> bool;
    /// Every rank's `bytes` on rank 0 (its outcome), in rank order; `None` on the others.
    /// Not poisoned: every rank calls it after [`Group::end`].
    fn gather(&self, bytes: &[u8]) -> Result<Option<Vec<Vec<u8>>>, RunFailure>;
    /// Forgets a failure: the next run starts clean.
    fn reset(&self);
    /// Where each rank runs: every rank's host name, in rank order.
    fn hosts(&self) -> Vec<String>;
    /// The lowest rank on this rank's node (same kernel and mounts): it prepares the system
    /// under test for the node's ranks.
    fn leader(&self) -> usize;
    /// The group as a kind sees it.
    fn as_ranks(&self) -> &dyn Ranks;
}

/// Why a sync failed: another rank's workload failed (its reason is stored with the run).
pub fn other_rank_failed() -> RunFailure {
    RunFailure::failed("another rank failed (its reason is the run's)")
}

/// This process alone.
#[derive(Debug, Clone, Copy, Default)]
pub struct Solo;

impl Ranks for Solo {
    fn rank(&self) -> usize {
        0
    }
    fn size(&self) -> usize {
        1
    }
    fn ranks_per_node(&self) -> usize {
        1
    }
    fn sync_max(&self, value: u64) -> Result<u64, RunFailure> {
        Ok(value)
    }
    fn all_gather(&self, bytes: &[u8]) -> Result<Vec<Vec<u8>>, RunFailure> {
        Ok(vec![bytes.to_vec()])
    }
}

/// Ranks as threads of this process: [`Threads::group`] makes one handle per rank, each
/// moved to its thread. `ranks_per_node` is what the group is made with (all on one node by
/// default), so that the kinds' reading of another node's data can be tested.
#[derive(Debug, Clone)]
pub struct Threads {
    rank: usize,
    size: usize,
    per_node: usize,
    shared: Arc<(Mutex<Round>, Condvar)>,
    poisoned: Arc<std::sync::atomic::AtomicBool>,
}

#[derive(Debug, Default)]
struct Round {
    /// Completed syncs (each rank's own count tells which one it is in).
    generation: u64,
    arrived: usize,
    max: u64,
    failed: bool,
    gathered: Vec<Option<Vec<u8>>>,
    /// The previous sync's result, for the ranks that wake after the next one started.
    done: (u64, bool, Vec<Vec<u8>>),
}

impl Threads {
    /// `size` handles (rank 0 first), `per_node` ranks to a node.
    pub fn group(size: usize, per_node: usize) -> Vec<Threads> {
        let shared = Arc::new((Mutex::new(Round::default()), Condvar::new()));
        (0..size)
            .map(|rank| Threads {
                rank,
                size,
                per_node: per_node.clamp(1, size.max(1)),
                shared: Arc::clone(&shared),
                poisoned: Arc::new(std::sync::atomic::AtomicBool::new(false)),
            })
            .collect()
    }

    fn round(&self, value: u64, failed: bool, bytes: Option<&[u8]>) -> (u64, bool, Vec<Vec<u8>>) {
        let (lock, cv) = &*self.shared;
        let mut r = lock.lock().unwrap_or_else(PoisonError::into_inner);
        if r.arrived == 0 {
            r.max = 0;
            r.failed = false;
            r.gathered = vec![None; self.size];
        }
        r.arrived += 1;
        r.max = r.max.max(value);
        r.failed |= failed;
        if let Some(b) = bytes {
            r.gathered[self.rank] = Some(b.to_vec());
        }
        let generation = r.generation;
        if r.arrived == self.size {
            let gathered = std::mem::take(&mut r.gathered)
                .into_iter()
                .map(Option::unwrap_or_default)
                .collect();
            r.done = (r.max, r.failed, gathered);
            r.arrived = 0;
            r.generation += 1;
            cv.notify_all();
        } else {
            while r.generation == generation {
                r = cv.wait(r).unwrap_or_else(PoisonError::into_inner);
            }
        }
        let out = r.done.clone();
        if out.1 {
            self.poisoned
                .store(true, std::sync::atomic::Ordering::Relaxed);
        }
        out
    }
}

impl Ranks for Threads {
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
        if self.poisoned.load(std::sync::atomic::Ordering::Relaxed) {
            return Err(other_rank_failed());
        }
        match self.round(value, false, None) {
            (_, true, _) => Err(other_rank_failed()),
            (max, false, _) => Ok(max),
        }
    }
    fn all_gather(&self, bytes: &[u8]) -> Result<Vec<Vec<u8>>, RunFailure> {
        if self.poisoned.load(std::sync::atomic::Ordering::Relaxed) {
            return Err(other_rank_failed());
        }
        match self.round(0, false, Some(bytes)) {
            (_, true, _) => Err(other_rank_failed()),
            (_, false, all) => Ok(all),
        }
    }
}

impl Group for Threads {
    fn broadcast(&self, bytes: Option<&[u8]>) -> Result<Vec<u8>, RunFailure> {
        let (_, _, all) = self.round(0, false, bytes.or(Some(&[])));
        Ok(all.into_iter().next().unwrap_or_default())
    }
    fn end(&self, failed: bool) -> bool {
        if self.poisoned.load(std::sync::atomic::Ordering::Relaxed) {
            return true;
        }
        self.round(0, failed, None).1
    }
    fn gather(&self, bytes: &[u8]) -> Result<Option<Vec<Vec<u8>>>, RunFailure> {
        let (_, _, all) = self.round(0, false, Some(bytes));
        Ok((self.rank == 0).then_some(all))
    }
    fn reset(&self) {
        self.poisoned
            .store(false, std::sync::atomic::Ordering::Relaxed);
    }
    fn hosts(&self) -> Vec<String> {
        (0..self.size)
            .map(|r| format!("thread-node{}", r / self.per_node))
            .collect()
    }
    fn leader(&self) -> usize {
        self.rank / self.per_node * self.per_node
    }
    fn as_ranks(&self) -> &dyn Ranks {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn on_threads<T: Send + 'static>(
        size: usize,
        f: impl Fn(Threads) -> T + Send + Sync + 'static,
    ) -> Vec<T> {
        let f = Arc::new(f);
        let (tx, rx) = std::sync::mpsc::channel();
        for t in Threads::group(size, 1) {
            let (f, tx) = (Arc::clone(&f), tx.clone());
            std::thread::spawn(move || {
                let rank = t.rank();
                tx.send((rank, f(t))).unwrap();
            });
        }
        drop(tx);
        let mut out: Vec<(usize, T)> = (0..size)
            .map(|_| {
                rx.recv_timeout(Duration::from_secs(60))
                    .expect("a rank hung")
            })
            .collect();
        out.sort_by_key(|(r, _)| *r);
        out.into_iter().map(|(_, t)| t).collect()
    }

    #[test]
    fn syncs_give_the_largest_value_and_gathers_are_in_rank_order() {
        let out = on_threads(4, |t| {
            let m1 = t.sync_max(t.rank() as u64 * 10).unwrap();
            let m2 = t.sync_max(100 - t.rank() as u64).unwrap();
            let all = t.all_gather(&[t.rank() as u8; 2]).unwrap();
            (m1, m2, all)
        });
        for (m1, m2, all) in out {
            assert_eq!((m1, m2), (30, 100));
            assert_eq!(all, vec![vec![0, 0], vec![1, 1], vec![2, 2], vec![3, 3]]);
        }
    }

    #[test]
    fn a_failed_rank_ends_every_rank_at_its_next_sync_and_none_waits() {
        let out = on_threads(3, |t| {
            t.reset();
            if t.rank() == 1 {
                // Fails before its first sync: the runner ends for it.
                return (t.end(true), None);
            }
            let first = t.barrier();
            // Poisoned: returns at once, though rank 1 never syncs again.
            let second = t.sync_max(5);
            (
                t.end(first.is_err()),
                Some((first.is_err(), second.is_err())),
            )
        });
        assert!(out.iter().all(|(failed, _)| *failed));
        assert_eq!(out[0].1, Some((true, true)));
        assert_eq!(out[2].1, Some((true, true)));
    }

    #[test]
    fn a_run_ends_with_every_outcome_on_rank_zero() {
        let out = on_threads(3, |t| {
            let order = t
                .broadcast((t.rank() == 0).then_some(&b"run 7"[..]))
                .unwrap();
            assert_eq!(order, b"run 7");
            let failed = t.end(t.rank() == 2);
            let got = t.gather(format!("r{}", t.rank()).as_bytes()).unwrap();
            t.reset();
            // The next run starts clean.
            let next = t.barrier().is_ok();
            (failed, got, next)
        });
        assert!(out.iter().all(|(failed, _, next)| *failed && *next));
        assert_eq!(
            out[0].1,
            Some(vec![b"r0".to_vec(), b"r1".to_vec(), b"r2".to_vec()])
        );
        assert_eq!(out[1].1, None);
    }

    #[test]
    fn solo_is_one_rank() {
        assert_eq!(Solo.sync_max(7).unwrap(), 7);
        assert_eq!(Solo.all_gather(b"x").unwrap(), vec![b"x".to_vec()]);
        assert_eq!((Solo.rank(), Solo.size(), Solo.ranks_per_node()), (0, 1, 1));
    }
}
