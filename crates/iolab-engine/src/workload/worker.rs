//! One worker thread of a workload: its fd slots, buffers and statistics, and the flowops.
//!
//! Semantics follow filebench's flowop library (docs/wml.md, "Flowops"): flowops that need
//! a file use their fd slot, opening a picked existing file on first use; `read`/`write` are
//! random (iosize-aligned, inside the working set) or sequential at the slot's position;
//! whole-file flowops count as one op with all their bytes. Differences are deliberate and
//! documented in docs/wml.md.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;

use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use iolab_workload::model::{FlowopKind, FlowopSpec, QuitMode, ThreadSpec};
use iolab_workload::rng::Rng;

use super::shared::{Cond, Semaphore};
use super::{Run, MAX_FD};
use crate::buffer::{AlignedBuf, AllocError};
use crate::error::EngineError;
use crate::fileset::{Cursor, EntryId, Want};
use crate::stats::{IntervalRecorder, LatencyHistogram};

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

/// An open file in an fd slot.
struct Slot {
    file: File,
    fileset: usize,
    entry: EntryId,
    /// Position of sequential reads and writes.
    pos: u64,
}

/// The result of one op: bytes moved, or that no file could be picked.
enum Done {
    Bytes(u64),
    RanDry,
}

pub(crate) struct Worker<'r> {
    run: &'r Run<'r>,
    pub spec: &'r ThreadSpec,
    rng: Rng,
    slots: Vec<Option<Slot>>,
    buf: AlignedBuf,
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
    aio: Option<Aio>,
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

impl<'r> Worker<'r> {
    pub fn new(
        run: &'r Run<'r>,
        spec: &'r ThreadSpec,
        stats: Vec<OpStats>,
        is_io: Vec<bool>,
        seed: u64,
        start: Instant,
        progress: &'r std::sync::atomic::AtomicU64,
    ) -> Result<Worker<'r>, EngineError> {
        let buf = AlignedBuf::zeroed(1 << 16)
            .map_err(|e| EngineError::alloc(format!("thread `{}`", spec.name), e))?;
        Ok(Worker {
            run,
            spec,
            rng: Rng::new(seed),
            slots: (0..MAX_FD).map(|_| None).collect(),
            buf,
            mem: Vec::new(),
            path: PathBuf::new(),
            rotors: vec![0; run.filesets.len()],
            stats,
            is_io,
            intervals: IntervalRecorder::new(start, super::INTERVAL, 64),
            data_ops: 0,
            data_bytes: 0,
            aio: None,
            progress,
        })
    }

    /// The thread's loop: every flowop in order, again and again, until the run stops or a
    /// finishon* flowop says this thread is done.
    pub fn run_loop(&mut self, nodes: &mut [Node<'r>], nice: i32) -> Result<(), EngineError> {
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
            match self.op(n)? {
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
            (false, true)
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
        let opened = self.open_options(spec, fs_idx, false).open(&self.path);
        match opened {
            Ok(file) => {
                if spec.noreadahead {
                    // SAFETY: advisory call on a descriptor we own.
                    unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_RANDOM) };
                }
                self.slots[slot] = Some(Slot {
                    file,
                    fileset: fs_idx,
                    entry,
                    pos: 0,
                });
                Ok(Some(()))
            }
            Err(e) => {
                fs.closed(entry);
                Err(self.io_err("open", e))
            }
        }
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

    fn read(&mut self, spec: &FlowopSpec) -> Result<Done, EngineError> {
        let iosize = spec.iosize.sample(&mut self.rng);
        let Some(slot) = self.ensure_slot(spec)? else {
            return Ok(Done::RanDry);
        };
        self.ensure_buf(spec, iosize)?;
        let wss = self.wss(spec, slot);
        let s = self.slots[slot].as_mut().expect("open slot");
        let buf = &mut self.buf.as_mut_slice()[..iosize as usize];
        if spec.random {
            if iosize > wss || iosize == 0 {
                return Err(EngineError::Workload(format!(
                    "flowop `{}`: iosize {iosize} does not fit the working set of {wss} bytes",
                    spec.name
                )));
            }
            let off = self.rng.below((wss - iosize) / iosize + 1) * iosize;
            let n = s.file.read_at(buf, off).map_err(|e| EngineError::Io {
                op: "read",
                path: PathBuf::from(format!("fd {slot}")),
                source: e,
            })?;
            Ok(Done::Bytes(n as u64))
        } else {
            let n = s.file.read_at(buf, s.pos).map_err(|e| EngineError::Io {
                op: "read",
                path: PathBuf::from(format!("fd {slot}")),
                source: e,
            })?;
            // At end of file, start over (filebench seeks back to 0).
            s.pos = if n == 0 { 0 } else { s.pos + n as u64 };
            Ok(Done::Bytes(n as u64))
        }
    }

    fn write(&mut self, spec: &FlowopSpec) -> Result<Done, EngineError> {
        let iosize = spec.iosize.sample(&mut self.rng);
        let Some(slot) = self.ensure_slot(spec)? else {
            return Ok(Done::RanDry);
        };
        self.ensure_buf(spec, iosize)?;
        let wss = self.wss(spec, slot);
        let s = self.slots[slot].as_mut().expect("open slot");
        let buf = &self.buf.as_slice()[..iosize as usize];
        let off = if spec.random {
            if iosize > wss || iosize == 0 {
                return Err(EngineError::Workload(format!(
                    "flowop `{}`: iosize {iosize} does not fit the working set of {wss} bytes",
                    spec.name
                )));
            }
            self.rng.below((wss - iosize) / iosize + 1) * iosize
        } else {
            s.pos
        };
        s.file.write_all_at(buf, off).map_err(|e| EngineError::Io {
            op: "write",
            path: PathBuf::from(format!("fd {slot}")),
            source: e,
        })?;
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
        let s = self.slots[slot].as_mut().expect("open slot");
        let fd = s.file.as_raw_fd();
        // lseek(SEEK_END) + write, as filebench: appends land at the real end even when other
        // threads have the same file open.
        // SAFETY: plain syscalls on our descriptor and buffer.
        let at = unsafe { libc::lseek(fd, 0, libc::SEEK_END) };
        let r = if at < 0 {
            -1
        } else {
            // SAFETY: the buffer holds at least `size` bytes (ensure_buf).
            unsafe { libc::write(fd, self.buf.as_slice().as_ptr().cast(), size as usize) }
        };
        if r < 0 || r as u64 != size {
            let e = if r < 0 {
                io::Error::last_os_error()
            } else {
                io::Error::from_raw_os_error(libc::ENOSPC)
            };
            return Err(EngineError::Io {
                op: "append",
                path: PathBuf::from(format!("fd {slot}")),
                source: e,
            });
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
        self.ensure_buf(spec, iosize)?;
        let s = self.slots[slot].as_mut().expect("open slot");
        let buf = &mut self.buf.as_mut_slice()[..iosize as usize];
        let mut off = 0u64;
        loop {
            let n = s.file.read_at(buf, off).map_err(|e| EngineError::Io {
                op: "read",
                path: PathBuf::from(format!("fd {slot}")),
                source: e,
            })?;
            if n == 0 {
                break;
            }
            off += n as u64;
        }
        s.pos = off;
        Ok(Done::Bytes(off))
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
        self.ensure_buf(spec, iosize.min(wss.max(1)))?;
        let s = self.slots[slot].as_mut().expect("open slot");
        let mut done = 0u64;
        while done < wss {
            let n = iosize.min(wss - done) as usize;
            s.file
                .write_all_at(&self.buf.as_slice()[..n], s.pos)
                .map_err(|e| EngineError::Io {
                    op: "write",
                    path: PathBuf::from(format!("fd {slot}")),
                    source: e,
                })?;
            s.pos += n as u64;
            done += n as u64;
        }
        Ok(Done::Bytes(done))
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
        let mut opened = self.open_options(spec, fs_idx, true).open(&self.path);
        if matches!(&opened, Err(e) if e.kind() == io::ErrorKind::NotFound) {
            // A removed parent directory (by removedir, or by the user): recreate it.
            if let Some(parent) = self.path.parent() {
                let _ = std::fs::create_dir_all(parent);
            }
            opened = self.open_options(spec, fs_idx, true).open(&self.path);
        }
        match opened {
            Ok(file) => {
                // The entry keeps its layout size: writewholefile after createfile writes
                // that many bytes, as in filebench.
                fs.release_opened(entry);
                self.slots[slot] = Some(Slot {
                    file,
                    fileset: fs_idx,
                    entry,
                    pos: 0,
                });
                Ok(Done::Bytes(0))
            }
            Err(e) => {
                fs.release(entry, false);
                Err(self.io_err("create", e))
            }
        }
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
                drop(s.file);
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

    fn delete(&mut self, spec: &FlowopSpec) -> Result<Done, EngineError> {
        let slot = Self::slot_index(spec);
        let run = self.run;
        // With an explicit fd holding a file, that file is the one deleted (filebench).
        if spec.fd.is_some_and(|f| f > 0) {
            if let Some(s) = self.slots[slot].take() {
                let fs = &run.filesets[s.fileset];
                fs.path_of(s.entry, &mut self.path);
                drop(s.file);
                fs.closed(s.entry);
                if fs.try_claim(s.entry, Want::ExistsNotOpen) {
                    let r = std::fs::remove_file(&self.path);
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
        match std::fs::remove_file(&self.path) {
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
                s.file.metadata().map_err(|e| EngineError::Io {
                    op: "fstat",
                    path: PathBuf::from(format!("fd {slot}")),
                    source: e,
                })?;
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
        let r = std::fs::metadata(&self.path);
        fs.release(entry, true);
        r.map_err(|e| self.io_err("stat", e))?;
        Ok(Done::Bytes(0))
    }

    fn fsync(&mut self, spec: &FlowopSpec) -> Result<Done, EngineError> {
        let slot = Self::slot_index(spec);
        match &self.slots[slot] {
            Some(s) => {
                s.file.sync_all().map_err(|e| EngineError::Io {
                    op: "fsync",
                    path: PathBuf::from(format!("fd {slot}")),
                    source: e,
                })?;
                Ok(Done::Bytes(0))
            }
            None => Ok(Done::RanDry),
        }
    }

    fn fsyncset(&mut self, spec: &FlowopSpec) -> Result<Done, EngineError> {
        let fs = self.fileset(spec)?;
        for s in self.slots.iter().flatten() {
            if s.fileset == fs {
                s.file.sync_all().map_err(|e| EngineError::Io {
                    op: "fsync",
                    path: PathBuf::from("fsyncset"),
                    source: e,
                })?;
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
        let r = if make {
            std::fs::create_dir(&self.path)
        } else {
            std::fs::remove_dir(&self.path)
        };
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
        let listed = list_dir(&self.path);
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
        if iosize == 0 || iosize > wss {
            return Err(EngineError::Workload(format!(
                "flowop `{}`: iosize {iosize} does not fit the working set of {wss} bytes",
                spec.name
            )));
        }
        let off = self.rng.below((wss - iosize) / iosize + 1) * iosize;
        let fd = self.slots[slot]
            .as_ref()
            .expect("open slot")
            .file
            .as_raw_fd();
        if self.aio.is_none() {
            let aio = Aio::new().map_err(|e| match AllocError::from_io(&e) {
                Some(a) => buf_err(spec, a),
                None => self.io_err("io_uring_setup", e),
            })?;
            self.aio = Some(aio);
        }
        let aio = self.aio.as_mut().expect("just set");
        aio.submit(fd, iosize, off)
            .map_err(|e| match AllocError::from_io(&e) {
                Some(a) => buf_err(spec, a),
                None => EngineError::Io {
                    op: "aiowrite",
                    path: PathBuf::from(format!("fd {slot}")),
                    source: e,
                },
            })?;
        Ok(Done::Bytes(iosize))
    }

    fn aiowait(&mut self, _spec: &FlowopSpec) -> Result<Done, EngineError> {
        if let Some(aio) = self.aio.as_mut() {
            aio.wait_all().map_err(|e| EngineError::Io {
                op: "aiowait",
                path: PathBuf::from("aio"),
                source: e,
            })?;
        }
        Ok(Done::Bytes(0))
    }
}

impl Drop for Worker<'_> {
    fn drop(&mut self) {
        // In-flight asynchronous writes reference our buffers: drain them first.
        if let Some(aio) = self.aio.as_mut() {
            let _ = aio.wait_all();
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

/// aiowrite/aiowait through a small io_uring: writes are queued and submitted at once, and
/// aiowait reaps everything outstanding (filebench uses POSIX AIO for the same).
struct Aio {
    ring: io_uring::IoUring,
    buf: AlignedBuf,
    inflight: usize,
}

impl Aio {
    const DEPTH: u32 = 64;

    fn new() -> io::Result<Aio> {
        Ok(Aio {
            ring: io_uring::IoUring::new(Self::DEPTH)?,
            buf: AlignedBuf::zeroed(1 << 20)?,
            inflight: 0,
        })
    }

    fn submit(&mut self, fd: i32, len: u64, off: u64) -> io::Result<()> {
        // One io_uring write moves at most u32::MAX bytes.
        let len32 = u32::try_from(len).map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{len} bytes is more than one asynchronous write can move (4 GiB)"),
            )
        })?;
        if (self.buf.len() as u64) < len {
            self.wait_all()?;
            self.buf = AlignedBuf::zeroed(0)?;
            self.buf = AlignedBuf::zeroed(len)?;
        }
        if self.inflight >= Self::DEPTH as usize {
            self.reap(1)?;
        }
        let e = io_uring::opcode::Write::new(io_uring::types::Fd(fd), self.buf.as_mut_ptr(), len32)
            .offset(off)
            .build();
        // SAFETY: the buffer lives in self and is only replaced after wait_all().
        unsafe { self.ring.submission().push(&e) }
            .map_err(|_| io::Error::other("aio queue full"))?;
        self.ring.submit()?;
        self.inflight += 1;
        Ok(())
    }

    fn reap(&mut self, min: usize) -> io::Result<()> {
        self.ring.submit_and_wait(min)?;
        let mut first_err = None;
        for cqe in self.ring.completion() {
            self.inflight -= 1;
            if cqe.result() < 0 && first_err.is_none() {
                first_err = Some(io::Error::from_raw_os_error(-cqe.result()));
            }
        }
        first_err.map_or(Ok(()), Err)
    }

    fn wait_all(&mut self) -> io::Result<()> {
        while self.inflight > 0 {
            self.reap(self.inflight)?;
        }
        Ok(())
    }
}
