//! One worker thread of a workload: its backend, fd slots, buffers and statistics, and the
//! flowops.
//!
//! Semantics follow filebench's flowop library: flowops that need a file use
//! their fd slot, opening a picked existing file on first use; `read`/`write` are random
//! (iosize-aligned, inside the working set) or sequential at the slot's position; whole-file
//! flowops count as one op with all their bytes. Differences are deliberate and documented
//! with the workload language.
//!
//! Every data transfer, append and fsync goes through the thread's [`Backend`]; the worker is
//! generic over it, so each engine gets its own compiled copy. Metadata flowops (create,
//! delete, stat, directories) are plain syscalls, skipped altogether on an engine that does no
//! I/O. aio flowops queue on the backend when it can queue, and otherwise on a per-thread
//! io_uring of their own (filebench runs POSIX AIO beside its synchronous flowops).

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;

use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use iolab_util::rng::Rng;
use iolab_workload::model::{FlowopKind, FlowopSpec, QuitMode, ThreadSpec};

use super::shared::{Cond, Semaphore};
use super::{Run, MAX_FD};
use crate::backend::{dispatch, Backend, Dir, FinalSync, Request, UringBackend, Visit};
use crate::buffer::{AlignedBuf, AllocError};
use crate::error::EngineError;
use crate::fileset::{Cursor, EntryId, Want};
use crate::stats::{IntervalRecorder, LatencyHistogram};
use crate::usage::Usage;

/// aiowrites in flight per thread before an aiowrite waits for one to finish, unless an
/// iodepth is given.
pub const AIO_DEPTH: usize = 64;

/// Statistics of one flowop in one thread.
#[derive(Debug, Clone, Default)]
pub(crate) struct OpStats {
    pub ops: u64,
    pub bytes: u64,
    pub latency: LatencyHistogram,
    pub ran_dry: u64,
    /// testrandvar: samples, sum, sum of squares.
    pub samples: Option<(u64, f64, f64)>,
}

/// A flowop of this thread with its statistics slot; composites hold their steps.
pub(crate) struct Node<'w> {
    pub spec: &'w FlowopSpec,
    pub stat: usize,
    pub children: Vec<Node<'w>>,
    /// Per-instance state of limits (filebench's fo_tputlast / fo_tputbucket).
    pub last: u64,
    pub bucket: i64,
    /// This thread's own condition / semaphore when the flowop is a block / semblock.
    pub cond: Option<Arc<Cond>>,
    pub sem: Option<Arc<Semaphore>>,
    /// Index of the target flowop's statistics in this thread, for limits and finishon*.
    pub target_stat: Option<usize>,
}

/// What a flowop asks of the thread's loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flow {
    Continue,
    /// finishoncount/finishonbytes reached: this thread is done.
    Finished,
    /// The run is stopping.
    Stopped,
}

/// An open file in an fd slot, as the backend holds it.
struct Slot<F> {
    io: F,
    fileset: usize,
    entry: EntryId,
    /// Position of sequential reads and writes.
    pos: u64,
}

/// A file of a fileset: its index and entry, to name it in an error.
type FileRef = (usize, EntryId);

impl<F> Slot<F> {
    fn file(&self) -> FileRef {
        (self.fileset, self.entry)
    }
}

/// The result of one op: bytes moved, or that no file could be picked.
enum Done {
    Bytes(u64),
    RanDry,
}

pub(crate) struct Worker<'r, B: Backend> {
    run: &'r Run<'r>,
    pub spec: &'r ThreadSpec,
    rng: Rng,
    backend: B,
    /// The engine does no I/O: no file is opened, read, written or synced.
    no_io: bool,
    /// Chunks of a whole-file flowop in flight at once (1: one after the other).
    depth: usize,
    slots: Vec<Option<Slot<B::File>>>,
    /// The buffer of synchronous transfers, and of whole-file chunks (`depth` of them).
    buf: AlignedBuf,
    /// Per chunk slot of a queued whole-file flowop: the bytes it asked for.
    chunk_len: Vec<usize>,
    chunk_free: Vec<usize>,
    mem: Vec<u8>,
    path: PathBuf,
    /// Own rotors per fileset, for `opennext`.
    rotors: Vec<u64>,
    pub stats: Vec<OpStats>,
    pub is_io: Vec<bool>,
    pub intervals: IntervalRecorder,
    /// Data ops and bytes of this thread, for progress.
    pub data_ops: u64,
    pub data_bytes: u64,
    aio: Aio,
    progress: &'r std::sync::atomic::AtomicU64,
}

/// A thread's flowops and statistics slots, built before the run so that every block and
/// semblock object exists before any thread could signal it.
pub(crate) struct ThreadPlan<'w> {
    pub spec: &'w ThreadSpec,
    /// The process's nice value.
    pub nice: i32,
    pub nodes: Vec<Node<'w>>,
    pub stats: Vec<OpStats>,
    pub names: Vec<String>,
    pub is_io: Vec<bool>,
}

impl<'w> ThreadPlan<'w> {
    pub fn new(spec: &'w ThreadSpec, nice: i32, objs: &mut InstanceObjects) -> ThreadPlan<'w> {
        let mut plan = ThreadPlan {
            spec,
            nice,
            nodes: Vec::new(),
            stats: Vec::new(),
            names: Vec::new(),
            is_io: Vec::new(),
        };
        let mut nodes: Vec<Node<'w>> = spec.flowops.iter().map(|f| plan.node(f, objs)).collect();
        // Targets resolve within the thread, as filebench looks them up in the thread's list.
        let mut by_name = std::collections::HashMap::new();
        for (i, n) in plan.names.iter().enumerate() {
            by_name.entry(n.clone()).or_insert(i);
        }
        fn fix(nodes: &mut [Node<'_>], by_name: &std::collections::HashMap<String, usize>) {
            for n in nodes {
                if let Some(t) = &n.spec.target {
                    n.target_stat = by_name.get(&t.0).copied();
                }
                fix(&mut n.children, by_name);
            }
        }
        fix(&mut nodes, &by_name);
        plan.nodes = nodes;
        plan
    }

    fn node(&mut self, spec: &'w FlowopSpec, objs: &mut InstanceObjects) -> Node<'w> {
        let stat = self.stats.len();
        self.stats.push(OpStats {
            latency: LatencyHistogram::coarse(),
            ..OpStats::default()
        });
        self.names.push(spec.name.clone());
        self.is_io.push(counts_as_io(&spec.kind));
        let children = match &spec.kind {
            FlowopKind::Composite(steps) => steps.iter().map(|s| self.node(s, objs)).collect(),
            _ => Vec::new(),
        };
        let cond = matches!(spec.kind, FlowopKind::Block).then(|| {
            let c = Arc::new(Cond::default());
            objs.conds.push((spec.name.clone(), c.clone()));
            c
        });
        let sem = matches!(spec.kind, FlowopKind::SemBlock).then(|| {
            let s = Arc::new(Semaphore::new(spec.highwater));
            objs.sems.push((spec.name.clone(), s.clone()));
            s
        });
        Node {
            spec,
            stat,
            children,
            last: 0,
            bucket: 0,
            cond,
            sem,
            target_stat: None,
        }
    }
}

/// What one thread produced.
pub(crate) struct Ran {
    pub stats: Vec<OpStats>,
    pub intervals: Vec<crate::stats::Bucket>,
    pub usage: Usage,
    pub end: Instant,
    /// How the loop ended: Ok when the run stopped or the thread finished (finishon*, or
    /// running dry in firstdone/alldone mode).
    pub result: Result<(), EngineError>,
}

/// Everything a thread starts from.
pub(crate) struct Start<'r> {
    pub run: &'r Run<'r>,
    pub spec: &'r ThreadSpec,
    pub stats: Vec<OpStats>,
    pub is_io: Vec<bool>,
    pub seed: u64,
    pub start: Instant,
    pub progress: &'r std::sync::atomic::AtomicU64,
}

/// Runs one thread's loop on the run's engine. An error is one of setting it up (its buffer or
/// backend); the loop's own outcome is in [`Ran::result`].
pub(crate) fn run_thread<'r>(
    st: Start<'r>,
    nodes: &mut [Node<'r>],
    nice: i32,
) -> Result<Ran, EngineError> {
    struct Go<'a, 'r> {
        st: Start<'r>,
        nodes: &'a mut [Node<'r>],
        nice: i32,
    }
    impl<'r> Visit for Go<'_, 'r> {
        type Output = Result<Ran, EngineError>;
        fn visit<B: Backend>(self) -> Self::Output {
            let start = self.st.start;
            let mut worker = Worker::<B>::new(self.st)?;
            let before = Usage::thread();
            let result = worker.run_loop(self.nodes, self.nice);
            let usage = Usage::thread() - before;
            let end = Instant::now();
            Ok(Ran {
                intervals: std::mem::replace(
                    &mut worker.intervals,
                    IntervalRecorder::new(start, super::INTERVAL, 0),
                )
                .finish(end),
                stats: std::mem::take(&mut worker.stats),
                usage,
                end,
                result,
            })
        }
    }
    let engine = st.run.engine;
    dispatch(engine, Go { st, nodes, nice })
}

impl<'r, B: Backend> Worker<'r, B> {
    fn new(st: Start<'r>) -> Result<Worker<'r, B>, EngineError> {
        let (run, spec) = (st.run, st.spec);
        let buf = AlignedBuf::zeroed(1 << 16)
            .map_err(|e| EngineError::alloc(format!("thread `{}`", spec.name), e))?;
        let caps = B::KIND.caps();
        let depth = run.iodepth.map_or(1, |d| d as usize);
        let aio_depth = run.iodepth.map_or(AIO_DEPTH, |d| d as usize);
        // A queued engine takes the aio slots first, then one per whole-file chunk.
        let backend = B::new(if caps.queued { aio_depth + depth } else { 1 })
            .map_err(|e| setup_err(&spec.name, e))?;
        Ok(Worker {
            run,
            spec,
            rng: Rng::new(st.seed),
            backend,
            no_io: caps.no_io,
            depth,
            slots: (0..MAX_FD).map(|_| None).collect(),
            buf,
            chunk_len: vec![0; depth],
            chunk_free: Vec::with_capacity(depth),
            mem: Vec::new(),
            path: PathBuf::new(),
            rotors: vec![0; run.filesets.len()],
            stats: st.stats,
            is_io: st.is_io,
            intervals: IntervalRecorder::new(st.start, super::INTERVAL, 64),
            data_ops: 0,
            data_bytes: 0,
            aio: Aio::new(aio_depth),
            progress: st.progress,
        })
    }

    /// The thread's loop: every flowop in order, again and again, until the run stops or a
    /// finishon* flowop says this thread is done.
    fn run_loop(&mut self, nodes: &mut [Node<'r>], nice: i32) -> Result<(), EngineError> {
        self.apply_priorities(nice);
        let result = self.loop_inner(nodes);
        self.close_all();
        result
    }

    /// A process's `nice` and a thread's `ioprio` (best-effort class, level 0–7) apply to
    /// this thread only: on Linux both are per-thread attributes. Failures (not permitted)
    /// leave the defaults, as filebench does.
    fn apply_priorities(&self, nice: i32) {
        // SAFETY: plain syscalls on the calling thread.
        unsafe {
            let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
            if nice != 0 {
                libc::setpriority(libc::PRIO_PROCESS, tid, nice);
            }
            if let Some(level) = self.spec.ioprio {
                const IOPRIO_WHO_PROCESS: libc::c_long = 1;
                const IOPRIO_CLASS_BE: libc::c_long = 2;
                let prio = (IOPRIO_CLASS_BE << 13) | libc::c_long::from(level.min(7));
                libc::syscall(
                    libc::SYS_ioprio_set,
                    IOPRIO_WHO_PROCESS,
                    0 as libc::c_long,
                    prio,
                );
            }
        }
    }

    fn loop_inner(&mut self, nodes: &mut [Node<'r>]) -> Result<(), EngineError> {
        loop {
            for n in nodes.iter_mut() {
                match self.exec(n)? {
                    Flow::Continue => {}
                    Flow::Finished | Flow::Stopped => return Ok(()),
                }
            }
            if self.run.stop.is_set() {
                return Ok(());
            }
        }
    }

    fn exec(&mut self, n: &mut Node<'r>) -> Result<Flow, EngineError> {
        for _ in 0..n.spec.iters {
            if self.run.stop.is_set() {
                return Ok(Flow::Stopped);
            }
            if let FlowopKind::Composite(_) = n.spec.kind {
                let t0 = Instant::now();
                for c in n.children.iter_mut() {
                    match self.exec(c)? {
                        Flow::Continue => {}
                        other => return Ok(other),
                    }
                }
                self.record(n.stat, t0, Instant::now(), 0);
                continue;
            }
            // An I/O error names the flowop and where the file defines it.
            match self
                .op(n)
                .map_err(|e| e.in_flowop(&n.spec.name, n.spec.at.as_deref()))?
            {
                Flow::Continue => {}
                other => return Ok(other),
            }
        }
        Ok(Flow::Continue)
    }

    #[inline]
    fn record(&mut self, stat: usize, t0: Instant, t1: Instant, bytes: u64) {
        let s = &mut self.stats[stat];
        s.ops += 1;
        s.bytes += bytes;
        s.latency.record((t1 - t0).as_nanos() as u64);
        if self.is_io[stat] {
            self.intervals.add(t1, 1, bytes);
        }
    }

    /// Counts a data op for progress and, when some flowop needs them, run-wide totals.
    #[inline]
    fn count_data(&mut self, bytes: u64) {
        self.data_ops += 1;
        self.data_bytes += bytes;
        self.progress.store(self.data_ops, Ordering::Relaxed);
        if let Some(g) = &self.run.global {
            g.ops.fetch_add(1, Ordering::Relaxed);
            g.bytes.fetch_add(bytes, Ordering::Relaxed);
        }
    }

    /// Runs one flowop once, timing it.
    fn op(&mut self, n: &mut Node<'r>) -> Result<Flow, EngineError> {
        let spec = n.spec;
        let stat = n.stat;
        let data = spec.kind.is_read() || spec.kind.is_write();
        let t0 = Instant::now();
        let done = match &spec.kind {
            FlowopKind::Read => self.read(spec)?,
            FlowopKind::Write => self.write(spec)?,
            FlowopKind::AppendFile => {
                let size = spec.iosize.sample(&mut self.rng);
                self.append(spec, size)?
            }
            FlowopKind::AppendFileRand => {
                let max = spec.iosize.sample(&mut self.rng);
                let size = if max == 0 { 0 } else { self.rng.below(max) };
                if size == 0 {
                    Done::Bytes(0)
                } else {
                    self.append(spec, size)?
                }
            }
            FlowopKind::ReadWholeFile => self.read_whole(spec)?,
            FlowopKind::WriteWholeFile => self.write_whole(spec)?,
            FlowopKind::CreateFile => self.create(spec)?,
            FlowopKind::OpenFile => self.open(spec)?,
            FlowopKind::CloseFile => self.close(spec)?,
            FlowopKind::DeleteFile => self.delete(spec)?,
            FlowopKind::StatFile => self.stat(spec)?,
            FlowopKind::Fsync => self.fsync(spec)?,
            FlowopKind::FsyncSet => self.fsyncset(spec)?,
            FlowopKind::MakeDir => self.dir_op(spec, true)?,
            FlowopKind::RemoveDir => self.dir_op(spec, false)?,
            FlowopKind::ListDir => self.listdir(spec)?,
            FlowopKind::AioWrite => self.aiowrite(spec)?,
            FlowopKind::AioWait => self.aiowait(spec)?,
            FlowopKind::Block => {
                if let Some(c) = &n.cond {
                    c.wait(&self.run.stop);
                }
                Done::Bytes(0)
            }
            FlowopKind::Wakeup => {
                if let Some(t) = &spec.target {
                    for c in self.run.sync.conds.get(&t.0).into_iter().flatten() {
                        c.broadcast();
                    }
                }
                Done::Bytes(0)
            }
            FlowopKind::SemBlock => {
                let v = spec.value.sample(&mut self.rng).max(1);
                if let Some(s) = &n.sem {
                    if !s.acquire(v, &self.run.stop) {
                        return Ok(Flow::Stopped);
                    }
                }
                Done::Bytes(0)
            }
            FlowopKind::SemPost => {
                let v = spec.value.sample(&mut self.rng).max(1);
                if let Some(t) = &spec.target {
                    for s in self.run.sync.sems.get(&t.0).into_iter().flatten() {
                        if !s.post(v, spec.blocking, &self.run.stop) {
                            return Ok(Flow::Stopped);
                        }
                    }
                }
                Done::Bytes(0)
            }
            FlowopKind::Hog => {
                let v = spec.value.sample(&mut self.rng);
                if self.mem.is_empty() {
                    self.mem = vec![0u8; 4096];
                }
                let len = self.mem.len();
                for i in 0..v as usize {
                    self.mem[i % len] = i as u8;
                }
                std::hint::black_box(&self.mem);
                Done::Bytes(0)
            }
            FlowopKind::Delay => {
                let v = spec.value.sample(&mut self.rng);
                if !self.run.stop.sleep(Duration::from_secs(v)) {
                    return Ok(Flow::Stopped);
                }
                Done::Bytes(0)
            }
            FlowopKind::EventLimit => {
                if let Some(g) = self.run.events.as_ref().and_then(|c| c.get()) {
                    if !g.take(1, &self.run.stop) {
                        return Ok(Flow::Stopped);
                    }
                }
                Done::Bytes(0)
            }
            FlowopKind::IopsLimit | FlowopKind::OpsLimit | FlowopKind::BwLimit => {
                if !self.limit(n) {
                    return Ok(Flow::Stopped);
                }
                Done::Bytes(0)
            }
            FlowopKind::FinishOnCount | FlowopKind::FinishOnBytes => {
                let limit = spec.value.sample(&mut self.rng);
                let (count, bytes) = match n.target_stat {
                    Some(t) => (self.stats[t].ops, self.stats[t].bytes),
                    None => match &self.run.global {
                        Some(g) => (
                            g.ops.load(Ordering::Relaxed),
                            g.bytes.load(Ordering::Relaxed),
                        ),
                        None => (self.data_ops, self.data_bytes),
                    },
                };
                let t1 = Instant::now();
                self.record(stat, t0, t1, 0);
                let reached = match spec.kind {
                    FlowopKind::FinishOnCount => count >= limit,
                    _ => bytes > limit,
                };
                return Ok(if reached {
                    Flow::Finished
                } else {
                    Flow::Continue
                });
            }
            FlowopKind::Print(_) => Done::Bytes(0),
            FlowopKind::TestRandVar => {
                let v = spec.value.sample(&mut self.rng) as f64;
                let s = self.stats[stat].samples.get_or_insert((0, 0.0, 0.0));
                s.0 += 1;
                s.1 += v;
                s.2 += v * v;
                Done::Bytes(0)
            }
            FlowopKind::Composite(_) => unreachable!("composites run their steps"),
        };
        let t1 = Instant::now();
        match done {
            Done::Bytes(b) => {
                self.record(stat, t0, t1, b);
                if data {
                    self.count_data(b);
                }
            }
            Done::RanDry => {
                self.stats[stat].ran_dry += 1;
                // No file to work on. With `set mode quit firstdone|alldone` that is how a
                // workload says it is done (createfiles: every file exists), as in filebench.
                // In timeout mode filebench aborts the whole run; iolab moves on.
                if self.run.workload.run.quit != QuitMode::Timeout {
                    return Ok(Flow::Finished);
                }
                std::thread::yield_now();
            }
        }
        Ok(Flow::Continue)
    }

    /// iopslimit/opslimit/bwlimit: filebench's token bucket over the event generator.
    fn limit(&mut self, n: &mut Node<'r>) -> bool {
        let Some(events) = self.run.events.as_ref().and_then(|c| c.get()) else {
            return true;
        };
        let bw = matches!(n.spec.kind, FlowopKind::BwLimit);
        let current = match n.target_stat {
            Some(t) => {
                if bw {
                    self.stats[t].bytes
                } else {
                    self.stats[t].ops
                }
            }
            None => match &self.run.global {
                Some(g) if bw => g.bytes.load(Ordering::Relaxed),
                Some(g) => g.ops.load(Ordering::Relaxed),
                None if bw => self.data_bytes,
                None => self.data_ops,
            },
        };
        if n.last == 0 {
            n.last = current.max(1);
            return true;
        }
        n.bucket -= current.saturating_sub(n.last) as i64;
        n.last = current;
        if n.bucket >= 0 {
            return true;
        }
        let deficit = (-n.bucket) as u64;
        const MB: u64 = 1 << 20;
        let (want, credit) = if bw {
            let e = deficit / MB + 1;
            (e, e * MB)
        } else {
            (deficit, deficit)
        };
        if !events.take(want, &self.run.stop) {
            return false;
        }
        n.bucket += credit as i64;
        true
    }

    // ----- files -----

    fn fileset(&self, spec: &FlowopSpec) -> Result<usize, EngineError> {
        spec.fileset.ok_or_else(|| {
            EngineError::Workload(format!(
                "flowop `{}` needs a fileset (filesetname=) or an open fd",
                spec.name
            ))
        })
    }

    fn cursor(&mut self, spec: &FlowopSpec, fs: usize) -> Cursor<'_> {
        if let Some(rv) = &spec.indexed {
            return Cursor::At(rv.sample(&mut self.rng));
        }
        if self.run.pick_random {
            let n = self.run.filesets[fs].entries().max(1);
            return Cursor::At(self.rng.below(n));
        }
        if spec.opennext {
            return Cursor::Own(&mut self.rotors[fs]);
        }
        Cursor::Shared
    }

    fn open_options(&self, spec: &FlowopSpec, fs: usize, create: bool) -> OpenOptions {
        let mut o = OpenOptions::new();
        let fspec = &self.run.workload.filesets[fs];
        let (r, w) = if fspec.readonly {
            (true, false)
        } else if fspec.writeonly {
            // A mapping needs a descriptor open for reading, even to store into it.
            (B::KIND.caps().mapped, true)
        } else {
            (true, true)
        };
        o.read(r).write(w).create(create).mode(0o644);
        let mut flags = 0;
        if spec.dsync {
            flags |= libc::O_SYNC;
        }
        if spec.directio {
            flags |= libc::O_DIRECT;
        }
        o.custom_flags(flags);
        o
    }

    fn io_err(&self, op: &'static str, e: io::Error) -> EngineError {
        EngineError::Io {
            op,
            path: self.path.clone(),
            source: e,
        }
    }

    /// Attaches an open file (none on an engine without I/O) to the backend in `slot`.
    fn attach(
        &mut self,
        spec: &FlowopSpec,
        slot: usize,
        file: Option<File>,
        fileset: usize,
        entry: EntryId,
        len: u64,
    ) -> Result<(), EngineError> {
        let writable = !self.run.workload.filesets[fileset].readonly;
        let io = self.backend.attach(file, len, writable).map_err(|e| {
            let op = if B::KIND.caps().mapped {
                "mmap"
            } else {
                "open"
            };
            match AllocError::from_io(&e) {
                Some(a) => buf_err(spec, a),
                None => self.io_err(op, e),
            }
        })?;
        self.slots[slot] = Some(Slot {
            io,
            fileset,
            entry,
            pos: 0,
        });
        Ok(())
    }

    /// Opens a picked existing entry into `slot`; None when the fileset ran dry.
    fn open_into(&mut self, spec: &FlowopSpec, slot: usize) -> Result<Option<()>, EngineError> {
        let fs_idx = self.fileset(spec)?;
        let run = self.run;
        let fs = &run.filesets[fs_idx];
        // Picked and counted as open in one atomic step, without a claim: any number of
        // threads may hold the same file open (a `define file` shared by 200 threads).
        let cursor = self.cursor(spec, fs_idx);
        let Some(entry) = fs.pick_open(cursor) else {
            return Ok(None);
        };
        fs.path_of(entry, &mut self.path);
        let file = if self.no_io {
            None
        } else {
            match self.open_options(spec, fs_idx, false).open(&self.path) {
                Ok(file) => {
                    if spec.noreadahead {
                        // SAFETY: advisory call on a descriptor we own.
                        unsafe {
                            libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_RANDOM)
                        };
                    }
                    Some(file)
                }
                Err(e) => {
                    fs.closed(entry);
                    return Err(self.io_err("open", e));
                }
            }
        };
        if let Err(e) = self.attach(spec, slot, file, fs_idx, entry, fs.size(entry)) {
            fs.closed(entry);
            return Err(e);
        }
        Ok(Some(()))
    }

    fn slot_index(spec: &FlowopSpec) -> usize {
        spec.fd.unwrap_or(0) as usize
    }

    /// The flowop's slot, opened on first use as filebench's filesetup does. A flowop without
    /// a fileset relies on an earlier flowop (createfile, openfile) to fill its slot; when that
    /// one ran dry, so does this one.
    fn ensure_slot(&mut self, spec: &FlowopSpec) -> Result<Option<usize>, EngineError> {
        let s = Self::slot_index(spec);
        if self.slots[s].is_none() {
            if spec.fileset.is_none() {
                return Ok(None);
            }
            if self.open_into(spec, s)?.is_none() {
                return Ok(None);
            }
        }
        Ok(Some(s))
    }

    /// Grows the I/O buffer to at least `len` bytes for `spec`; a size the machine cannot
    /// allocate is an error naming the flowop, not an abort.
    fn ensure_buf(&mut self, spec: &FlowopSpec, len: u64) -> Result<(), EngineError> {
        if (self.buf.len() as u64) < len {
            // Free the old one first: it is not needed, and memory may be tight.
            self.buf = AlignedBuf::zeroed(0).map_err(|e| buf_err(spec, e))?;
            self.buf = AlignedBuf::zeroed(len).map_err(|e| buf_err(spec, e))?;
        }
        Ok(())
    }

    /// The working set of an I/O flowop: `workingset`, or the file's size.
    fn wss(&mut self, spec: &FlowopSpec, slot: usize) -> u64 {
        let ws = spec.workingset.sample(&mut self.rng);
        if ws > 0 {
            return ws;
        }
        let s = self.slots[slot].as_ref().expect("open slot");
        self.run.filesets[s.fileset].size(s.entry)
    }

    /// An iosize-aligned offset in `[0, wss − iosize]` for a random flowop.
    fn random_offset(
        &mut self,
        spec: &FlowopSpec,
        iosize: u64,
        wss: u64,
    ) -> Result<u64, EngineError> {
        if iosize > wss || iosize == 0 {
            return Err(EngineError::Workload(format!(
                "flowop `{}`: iosize {iosize} does not fit the working set of {wss} bytes",
                spec.name
            )));
        }
        Ok(self.rng.below((wss - iosize) / iosize + 1) * iosize)
    }

    fn read(&mut self, spec: &FlowopSpec) -> Result<Done, EngineError> {
        let iosize = spec.iosize.sample(&mut self.rng);
        let Some(slot) = self.ensure_slot(spec)? else {
            return Ok(Done::RanDry);
        };
        self.ensure_buf(spec, iosize)?;
        let wss = self.wss(spec, slot);
        let random = spec.random;
        let off = if random {
            self.random_offset(spec, iosize, wss)?
        } else {
            self.slots[slot].as_ref().expect("open slot").pos
        };
        let run = self.run;
        let s = self.slots[slot].as_mut().expect("open slot");
        let file = s.file();
        let buf = &mut self.buf.as_mut_slice()[..iosize as usize];
        let n = self
            .backend
            .transfer(&mut s.io, Dir::Read, buf, off)
            .map_err(|e| file_err(run, Some(file), "read", e))?;
        if !random {
            // At end of file, start over (filebench seeks back to 0).
            s.pos = if n == 0 { 0 } else { s.pos + n as u64 };
        }
        Ok(Done::Bytes(n as u64))
    }

    fn write(&mut self, spec: &FlowopSpec) -> Result<Done, EngineError> {
        let iosize = spec.iosize.sample(&mut self.rng);
        let Some(slot) = self.ensure_slot(spec)? else {
            return Ok(Done::RanDry);
        };
        self.ensure_buf(spec, iosize)?;
        let wss = self.wss(spec, slot);
        let off = if spec.random {
            self.random_offset(spec, iosize, wss)?
        } else {
            self.slots[slot].as_ref().expect("open slot").pos
        };
        let run = self.run;
        let s = self.slots[slot].as_mut().expect("open slot");
        let file = s.file();
        let buf = &mut self.buf.as_mut_slice()[..iosize as usize];
        self.backend
            .io(&mut s.io, Dir::Write, buf, off)
            .map_err(|e| file_err(run, Some(file), "write", e))?;
        if !spec.random {
            s.pos += iosize;
        }
        Ok(Done::Bytes(iosize))
    }

    fn append(&mut self, spec: &FlowopSpec, size: u64) -> Result<Done, EngineError> {
        let Some(slot) = self.ensure_slot(spec)? else {
            return Ok(Done::RanDry);
        };
        self.ensure_buf(spec, size)?;
        let run = self.run;
        let s = self.slots[slot].as_mut().expect("open slot");
        let file = s.file();
        // At the real end, found anew each time: other threads may have the file open too.
        let n = self
            .backend
            .append(&mut s.io, &self.buf.as_slice()[..size as usize])
            .map_err(|e| file_err(run, Some(file), "append", e))?;
        if n as u64 != size {
            let full = io::Error::from_raw_os_error(libc::ENOSPC);
            return Err(file_err(run, Some(file), "append", full));
        }
        // The entry keeps its layout size, as in filebench (fse_size is set once, at
        // layout): a file deleted and created again is written whole at that size, not at
        // the size appends grew it to. Whole-file reads read to the real end anyway.
        Ok(Done::Bytes(size))
    }

    fn read_whole(&mut self, spec: &FlowopSpec) -> Result<Done, EngineError> {
        let Some(slot) = self.ensure_slot(spec)? else {
            return Ok(Done::RanDry);
        };
        let wss = self.wss(spec, slot);
        let mut iosize = spec.iosize.sample(&mut self.rng);
        if iosize == 0 {
            iosize = wss.max(1);
        }
        let total = if self.depth > 1 {
            self.whole_queued(spec, slot, Dir::Read, iosize, 0, None)?
        } else {
            self.ensure_buf(spec, iosize)?;
            let run = self.run;
            let s = self.slots[slot].as_mut().expect("open slot");
            let file = s.file();
            let buf = &mut self.buf.as_mut_slice()[..iosize as usize];
            // Up to the real end of the file: a read that returns nothing.
            let mut off = 0u64;
            loop {
                let n = self
                    .backend
                    .transfer(&mut s.io, Dir::Read, buf, off)
                    .map_err(|e| file_err(run, Some(file), "read", e))?;
                if n == 0 {
                    break;
                }
                off += n as u64;
            }
            off
        };
        self.slots[slot].as_mut().expect("open slot").pos = total;
        Ok(Done::Bytes(total))
    }

    fn write_whole(&mut self, spec: &FlowopSpec) -> Result<Done, EngineError> {
        let Some(slot) = self.ensure_slot(spec)? else {
            return Ok(Done::RanDry);
        };
        let mut wss = self.wss(spec, slot);
        if let Some(src) = spec.srcfd {
            match &self.slots[src as usize] {
                Some(s) => wss = self.run.filesets[s.fileset].size(s.entry),
                None => {
                    return Err(EngineError::Workload(format!(
                        "flowop `{}`: srcfd {src} is not open",
                        spec.name
                    )))
                }
            }
        }
        let mut iosize = spec.iosize.sample(&mut self.rng);
        if iosize == 0 {
            iosize = wss.max(1);
        }
        let start = self.slots[slot].as_ref().expect("open slot").pos;
        let done = if self.depth > 1 {
            self.whole_queued(
                spec,
                slot,
                Dir::Write,
                iosize.min(wss.max(1)),
                start,
                Some(wss),
            )?
        } else {
            self.ensure_buf(spec, iosize.min(wss.max(1)))?;
            let run = self.run;
            let s = self.slots[slot].as_mut().expect("open slot");
            let file = s.file();
            let mut done = 0u64;
            while done < wss {
                let n = iosize.min(wss - done) as usize;
                self.backend
                    .io(
                        &mut s.io,
                        Dir::Write,
                        &mut self.buf.as_mut_slice()[..n],
                        start + done,
                    )
                    .map_err(|e| file_err(run, Some(file), "write", e))?;
                done += n as u64;
            }
            done
        };
        self.slots[slot].as_mut().expect("open slot").pos = start + done;
        Ok(Done::Bytes(done))
    }

    /// A whole-file flowop with up to `depth` chunks of `iosize` in flight: reads from offset
    /// 0 until a chunk comes back short (the end of the file), or writes `limit` bytes from
    /// `start`. Returns the bytes moved.
    fn whole_queued(
        &mut self,
        spec: &FlowopSpec,
        slot: usize,
        dir: Dir,
        iosize: u64,
        start: u64,
        limit: Option<u64>,
    ) -> Result<u64, EngineError> {
        let depth = self.depth;
        self.ensure_buf(spec, iosize.saturating_mul(depth as u64))?;
        let iosize = iosize as usize;
        let base = self.buf.as_mut_ptr();
        let aio_slots = self.aio.depth;
        let run = self.run;
        let Worker {
            backend,
            slots,
            chunk_len,
            chunk_free,
            aio,
            ..
        } = self;
        let s = slots[slot].as_mut().expect("open slot");
        let file = s.file();
        chunk_free.clear();
        chunk_free.extend((0..depth).rev());
        let (mut next, mut total, mut in_flight) = (0u64, 0u64, 0usize);
        let mut end = false;
        let mut failed: Option<io::Error> = None;
        loop {
            while !end && failed.is_none() {
                let len = match limit {
                    Some(l) if next >= l => break,
                    Some(l) => (l - next).min(iosize as u64) as usize,
                    None => iosize,
                };
                let Some(k) = chunk_free.pop() else { break };
                let req = Request {
                    dir,
                    buf: base.wrapping_add(k * iosize),
                    len,
                    offset: start + next,
                    sync: None,
                };
                // SAFETY: chunk k's part of `buf` is not touched until it is reaped below,
                // before this function returns.
                match unsafe { backend.submit(&mut s.io, aio_slots + k, req) } {
                    Ok(()) => {
                        chunk_len[k] = len;
                        next += len as u64;
                        in_flight += 1;
                    }
                    Err(e) => {
                        chunk_free.push(k);
                        failed = Some(e);
                    }
                }
            }
            if in_flight == 0 {
                break;
            }
            let reaped = backend.reap(1, &mut |done, r| {
                let Some(k) = done.checked_sub(aio_slots) else {
                    aio.completed(done, r);
                    return;
                };
                chunk_free.push(k);
                in_flight -= 1;
                match r {
                    Ok(n) if n == chunk_len[k] => total += n as u64,
                    Ok(n) => {
                        total += n as u64;
                        // A short read is the end of the file; a short write is an error.
                        match dir {
                            Dir::Read => end = true,
                            Dir::Write => {
                                failed.get_or_insert(crate::backend::short_transfer(
                                    dir,
                                    n,
                                    chunk_len[k],
                                ));
                            }
                        }
                    }
                    Err(e) => {
                        failed.get_or_insert(e);
                    }
                }
            });
            if let Err(e) = reaped {
                // The queue itself failed: chunks may still be in flight into the buffer, so
                // it is left to them rather than freed.
                std::mem::forget(std::mem::replace(
                    &mut self.buf,
                    AlignedBuf::zeroed(0).map_err(|a| buf_err(spec, a))?,
                ));
                return Err(file_err(run, Some(file), dir.name(), e));
            }
        }
        match failed {
            Some(e) => Err(file_err(run, Some(file), dir.name(), e)),
            None => Ok(total),
        }
    }

    fn create(&mut self, spec: &FlowopSpec) -> Result<Done, EngineError> {
        let slot = Self::slot_index(spec);
        if self.slots[slot].is_some() {
            return Err(EngineError::Workload(format!(
                "flowop `{}`: fd {slot} is already open (close it first)",
                spec.name
            )));
        }
        let fs_idx = self.fileset(spec)?;
        let run = self.run;
        let fs = &run.filesets[fs_idx];
        let cursor = self.cursor(spec, fs_idx);
        let Some(entry) = fs.pick(Want::Missing, cursor) else {
            return Ok(Done::RanDry);
        };
        fs.path_of(entry, &mut self.path);
        let file = if self.no_io {
            None
        } else {
            let mut opened = self.open_options(spec, fs_idx, true).open(&self.path);
            if matches!(&opened, Err(e) if e.kind() == io::ErrorKind::NotFound) {
                // A removed parent directory (by removedir, or by the user): recreate it.
                if let Some(parent) = self.path.parent() {
                    let _ = std::fs::create_dir_all(parent);
                }
                opened = self.open_options(spec, fs_idx, true).open(&self.path);
            }
            match opened {
                Ok(file) => Some(file),
                Err(e) => {
                    fs.release(entry, false);
                    return Err(self.io_err("create", e));
                }
            }
        };
        // The entry keeps its layout size: writewholefile after createfile writes that many
        // bytes, as in filebench. The new file itself is empty.
        fs.release_opened(entry);
        if let Err(e) = self.attach(spec, slot, file, fs_idx, entry, 0) {
            fs.closed(entry);
            return Err(e);
        }
        Ok(Done::Bytes(0))
    }

    fn open(&mut self, spec: &FlowopSpec) -> Result<Done, EngineError> {
        let slot = Self::slot_index(spec);
        if self.slots[slot].is_some() {
            return Err(EngineError::Workload(format!(
                "flowop `{}`: fd {slot} is already open (close it first)",
                spec.name
            )));
        }
        Ok(match self.open_into(spec, slot)? {
            Some(()) => Done::Bytes(0),
            None => Done::RanDry,
        })
    }

    fn close(&mut self, spec: &FlowopSpec) -> Result<Done, EngineError> {
        let slot = Self::slot_index(spec);
        match self.slots[slot].take() {
            Some(s) => {
                self.run.filesets[s.fileset].closed(s.entry);
                drop(s.io);
                Ok(Done::Bytes(0))
            }
            // The flowop that should have opened it ran dry.
            None => Ok(Done::RanDry),
        }
    }

    fn close_all(&mut self) {
        for s in self.slots.iter_mut() {
            if let Some(s) = s.take() {
                self.run.filesets[s.fileset].closed(s.entry);
            }
        }
    }

    /// Runs a metadata syscall, or nothing on an engine without I/O.
    fn meta<T: Default>(&self, call: impl FnOnce() -> io::Result<T>) -> io::Result<T> {
        if self.no_io {
            Ok(T::default())
        } else {
            call()
        }
    }

    fn delete(&mut self, spec: &FlowopSpec) -> Result<Done, EngineError> {
        let slot = Self::slot_index(spec);
        let run = self.run;
        // With an explicit fd holding a file, that file is the one deleted (filebench).
        if spec.fd.is_some_and(|f| f > 0) {
            if let Some(s) = self.slots[slot].take() {
                let fs = &run.filesets[s.fileset];
                fs.path_of(s.entry, &mut self.path);
                drop(s.io);
                fs.closed(s.entry);
                if fs.try_claim(s.entry, Want::ExistsNotOpen) {
                    let r = self.meta(|| std::fs::remove_file(&self.path));
                    fs.release(s.entry, r.is_err());
                    r.map_err(|e| self.io_err("unlink", e))?;
                }
                return Ok(Done::Bytes(0));
            }
        }
        let Some(fs_idx) = spec.fileset else {
            // deletefile fd=N whose file was never opened (its opener ran dry).
            return Ok(Done::RanDry);
        };
        let fs = &run.filesets[fs_idx];
        let cursor = self.cursor(spec, fs_idx);
        // Files other threads have open are skipped: another existing file is deleted instead
        // (filebench waits on them and starves until the run aborts).
        let Some(entry) = fs.pick(Want::ExistsNotOpen, cursor) else {
            return Ok(Done::RanDry);
        };
        fs.path_of(entry, &mut self.path);
        match self.meta(|| std::fs::remove_file(&self.path)) {
            Ok(()) => {
                fs.release(entry, false);
                Ok(Done::Bytes(0))
            }
            Err(e) => {
                fs.release(entry, true);
                Err(self.io_err("unlink", e))
            }
        }
    }

    fn stat(&mut self, spec: &FlowopSpec) -> Result<Done, EngineError> {
        let slot = Self::slot_index(spec);
        if spec.fd.is_some_and(|f| f > 0) {
            if let Some(s) = &self.slots[slot] {
                if let Some(file) = B::file(&s.io) {
                    let at = Some(s.file());
                    file.metadata()
                        .map_err(|e| file_err(self.run, at, "fstat", e))?;
                }
                return Ok(Done::Bytes(0));
            }
        }
        let Some(fs_idx) = spec.fileset else {
            return Ok(Done::RanDry);
        };
        let run = self.run;
        let fs = &run.filesets[fs_idx];
        let cursor = self.cursor(spec, fs_idx);
        let Some(entry) = fs.pick(Want::Exists, cursor) else {
            return Ok(Done::RanDry);
        };
        fs.path_of(entry, &mut self.path);
        let r = self.meta(|| std::fs::metadata(&self.path).map(|_| ()));
        fs.release(entry, true);
        r.map_err(|e| self.io_err("stat", e))?;
        Ok(Done::Bytes(0))
    }

    fn fsync(&mut self, spec: &FlowopSpec) -> Result<Done, EngineError> {
        let slot = Self::slot_index(spec);
        let run = self.run;
        match self.slots[slot].as_mut() {
            Some(s) => {
                let file = s.file();
                self.backend
                    .sync(&mut s.io, FinalSync::Fsync)
                    .map_err(|e| file_err(run, Some(file), "fsync", e))?;
                Ok(Done::Bytes(0))
            }
            None => Ok(Done::RanDry),
        }
    }

    fn fsyncset(&mut self, spec: &FlowopSpec) -> Result<Done, EngineError> {
        let fs = self.fileset(spec)?;
        let run = self.run;
        for s in self.slots.iter_mut().flatten() {
            if s.fileset == fs {
                let file = s.file();
                self.backend
                    .sync(&mut s.io, FinalSync::Fsync)
                    .map_err(|e| file_err(run, Some(file), "fsync", e))?;
            }
        }
        Ok(Done::Bytes(0))
    }

    fn dir_op(&mut self, spec: &FlowopSpec, make: bool) -> Result<Done, EngineError> {
        let fs_idx = self.fileset(spec)?;
        let run = self.run;
        let fs = &run.filesets[fs_idx];
        let want = if make { Want::Missing } else { Want::Exists };
        let cursor = match &spec.indexed {
            Some(rv) => Cursor::At(rv.sample(&mut self.rng)),
            None => Cursor::Shared,
        };
        let Some(dir) = fs.pick_leafdir(want, cursor) else {
            return Ok(Done::RanDry);
        };
        fs.leafdir_path(dir, &mut self.path);
        let r = self.meta(|| {
            if make {
                std::fs::create_dir(&self.path)
            } else {
                std::fs::remove_dir(&self.path)
            }
        });
        match r {
            Ok(()) => {
                fs.release_leafdir(dir, make);
                Ok(Done::Bytes(0))
            }
            Err(e) => {
                fs.release_leafdir(dir, !make);
                Err(self.io_err(if make { "mkdir" } else { "rmdir" }, e))
            }
        }
    }

    fn listdir(&mut self, spec: &FlowopSpec) -> Result<Done, EngineError> {
        let fs_idx = self.fileset(spec)?;
        let run = self.run;
        let fs = &run.filesets[fs_idx];
        let Some(dir) = fs.pick_dir(Cursor::Shared) else {
            return Ok(Done::RanDry);
        };
        fs.dir_path(dir, &mut self.path);
        let listed = self.meta(|| list_dir(&self.path));
        fs.release_dir(dir);
        Ok(Done::Bytes(listed.map_err(|e| self.io_err("readdir", e))?))
    }

    // ----- asynchronous writes -----

    fn aiowrite(&mut self, spec: &FlowopSpec) -> Result<Done, EngineError> {
        let iosize = spec.iosize.sample(&mut self.rng);
        let Some(slot) = self.ensure_slot(spec)? else {
            return Ok(Done::RanDry);
        };
        let wss = self.wss(spec, slot);
        let off = self.random_offset(spec, iosize, wss)?;
        let len = usize::try_from(iosize).map_err(|_| buf_err(spec, AllocError { len: iosize }))?;
        let run = self.run;
        let file = self.slots[slot].as_ref().expect("open slot").file();
        let aio_err = |e: io::Error| match AllocError::from_io(&e) {
            Some(a) => buf_err(spec, a),
            None => file_err(run, Some(file), "aiowrite", e),
        };
        // A write that failed names its own file, which may be another one than this.
        let write_err = |f: AioFailure| file_err(run, f.file.or(Some(file)), "aiowrite", f.error);
        if !B::KIND.caps().queued {
            self.aio.ensure_ring().map_err(aio_err)?;
        }
        if self.aio.buf.as_ref().is_none_or(|b| b.len() < len) {
            // Writes in flight read from the buffer: it is replaced only once they are done.
            self.aio_wait().map_err(write_err)?;
            self.aio.buf = None;
            self.aio.buf =
                Some(AlignedBuf::zeroed(iosize.max(1 << 20)).map_err(|a| buf_err(spec, a))?);
        }
        if self.aio.free.is_empty() {
            self.aio_reap(1).map_err(aio_err)?;
        }
        if let Some(f) = self.aio.failed.take() {
            return Err(write_err(f));
        }
        let a = self.aio.free.pop().expect("a slot was reaped");
        let req = Request {
            dir: Dir::Write,
            buf: self.aio.buf.as_mut().expect("allocated above").as_mut_ptr(),
            len,
            offset: off,
            sync: None,
        };
        let s = self.slots[slot].as_mut().expect("open slot");
        // SAFETY: the aio buffer is only replaced or dropped after every write in flight has
        // been reaped (aio_wait, and Drop); writes only read from it, so they may share it.
        let submitted = if B::KIND.caps().queued {
            unsafe { self.backend.submit(&mut s.io, a, req) }
        } else {
            let fd = B::file(&s.io).map(|f| f.as_raw_fd());
            match (self.aio.ring.as_mut(), fd) {
                (Some(ring), Some(fd)) => unsafe { ring.submit_fd(fd, a, req) },
                _ => Err(io::Error::from(io::ErrorKind::Unsupported)),
            }
        };
        if let Err(e) = submitted {
            self.aio.free.push(a);
            return Err(aio_err(e));
        }
        self.aio.targets[a] = Some(file);
        self.aio.in_flight += 1;
        // Started now, not at the next wait: the write runs while the thread goes on.
        let started = match self.aio.ring.as_mut() {
            Some(ring) => ring.start(),
            None => self.backend.start(),
        };
        started.map_err(aio_err)?;
        Ok(Done::Bytes(iosize))
    }

    fn aiowait(&mut self, _spec: &FlowopSpec) -> Result<Done, EngineError> {
        let run = self.run;
        self.aio_wait()
            .map_err(|f| file_err(run, f.file, "aiowrite", f.error))?;
        Ok(Done::Bytes(0))
    }

    /// Collects at least `min` finished aiowrites from whichever queue they went to.
    fn aio_reap(&mut self, min: usize) -> io::Result<()> {
        let Worker { backend, aio, .. } = self;
        if B::KIND.caps().queued {
            backend.reap(min, &mut |slot, r| aio.completed(slot, r))
        } else {
            let Some(mut ring) = aio.ring.take() else {
                return Ok(());
            };
            let r = ring.reap(min, &mut |slot, r| aio.completed(slot, r));
            aio.ring = Some(ring);
            r
        }
    }

    /// Waits for every aiowrite in flight; the first failure among them is the error.
    fn aio_wait(&mut self) -> Result<(), AioFailure> {
        while self.aio.in_flight > 0 {
            self.aio_reap(self.aio.in_flight)
                .map_err(|error| AioFailure { error, file: None })?;
        }
        self.aio.failed.take().map_or(Ok(()), Err)
    }
}

impl<B: Backend> Drop for Worker<'_, B> {
    fn drop(&mut self) {
        // In-flight asynchronous writes read from our buffer: drain them first.
        if self.aio_wait().is_err() && self.aio.in_flight > 0 {
            // The queue failed with writes still in flight: leave them the buffer.
            std::mem::forget(self.aio.buf.take());
        }
    }
}

/// Reads a whole directory; returns filebench's byte count for it (name length plus the fixed
/// part of struct dirent, per entry).
fn list_dir(path: &std::path::Path) -> io::Result<u64> {
    let mut bytes = 0u64;
    for e in std::fs::read_dir(path)? {
        let e = e?;
        bytes += e.file_name().len() as u64 + std::mem::size_of::<libc::dirent64>() as u64 - 1;
    }
    Ok(bytes)
}

/// Flowops that filebench counts in its IO Summary (its FLOW_TYPE_IO and FLOW_TYPE_AIO).
pub(crate) fn counts_as_io(kind: &FlowopKind) -> bool {
    kind.is_read()
        || kind.is_write()
        || matches!(
            kind,
            FlowopKind::CreateFile
                | FlowopKind::OpenFile
                | FlowopKind::CloseFile
                | FlowopKind::DeleteFile
                | FlowopKind::StatFile
                | FlowopKind::Fsync
                | FlowopKind::FsyncSet
                | FlowopKind::MakeDir
                | FlowopKind::RemoveDir
                | FlowopKind::ListDir
                | FlowopKind::AioWait
        )
}

/// The error for a buffer of `spec`'s size that cannot be allocated.
fn buf_err(spec: &FlowopSpec, e: AllocError) -> EngineError {
    EngineError::alloc(format!("flowop `{}`", spec.name), e)
}

/// Block and semblock objects a thread registers while building its tree.
#[derive(Default)]
pub(crate) struct InstanceObjects {
    pub conds: Vec<(String, Arc<Cond>)>,
    pub sems: Vec<(String, Arc<Semaphore>)>,
}

/// aiowrite/aiowait bookkeeping: slots `0..depth` of the queue the writes go to (the
/// backend's when it queues, else a per-thread io_uring made on first use), and one buffer all
/// writes read from.
struct Aio {
    depth: usize,
    ring: Option<UringBackend>,
    buf: Option<AlignedBuf>,
    free: Vec<usize>,
    in_flight: usize,
    /// The file each slot's write goes to, for an error.
    targets: Vec<Option<FileRef>>,
    /// The first failure of a write, reported by the next aiowrite or aiowait.
    failed: Option<AioFailure>,
}

/// An asynchronous write that failed, and its file (`None`: the queue itself failed).
struct AioFailure {
    error: io::Error,
    file: Option<FileRef>,
}

impl Aio {
    fn new(depth: usize) -> Aio {
        Aio {
            depth,
            ring: None,
            buf: None,
            free: (0..depth).rev().collect(),
            in_flight: 0,
            targets: vec![None; depth],
            failed: None,
        }
    }

    /// Makes the io_uring of an engine that cannot queue, on first use; its writes are never
    /// linked to a sync, so it needs one entry per write.
    fn ensure_ring(&mut self) -> io::Result<()> {
        if self.ring.is_none() {
            let entries = self.depth.next_power_of_two() as u32;
            self.ring = Some(UringBackend::with_entries(self.depth, entries)?);
        }
        Ok(())
    }

    /// Books a finished write.
    fn completed(&mut self, slot: usize, r: io::Result<usize>) {
        self.free.push(slot);
        self.in_flight -= 1;
        let file = self.targets[slot].take();
        if let Err(error) = r {
            self.failed.get_or_insert(AioFailure { error, file });
        }
    }
}

/// An error of an open file, named by its path (`None`: of the thread's queue of
/// asynchronous writes, no one file's).
fn file_err(run: &Run<'_>, file: Option<FileRef>, op: &'static str, e: io::Error) -> EngineError {
    let mut path = PathBuf::new();
    match file {
        Some((fileset, entry)) => run.filesets[fileset].path_of(entry, &mut path),
        None => path.push("the thread's queue of asynchronous writes"),
    }
    EngineError::Io {
        op,
        path,
        source: e,
    }
}

/// A backend that could not be set up for a thread.
fn setup_err(thread: &str, e: io::Error) -> EngineError {
    match AllocError::from_io(&e) {
        Some(a) => EngineError::alloc(format!("thread `{thread}`'s I/O queue"), a),
        None => EngineError::Io {
            op: "io_uring_setup",
            path: PathBuf::from(format!("thread `{thread}`")),
            source: e,
        },
    }
}
