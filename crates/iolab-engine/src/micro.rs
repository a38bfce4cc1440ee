//! Runs a micro test: prepare one file per thread, release all threads at once, visit every
//! record of each file in the plan's order under the sync mode, and measure.
//!
//! Outside the timed region: creating and pre-filling files (write modes overwrite a
//! pre-filled, synced file; reads of a missing file fill it first), opening, mapping,
//! allocating buffers and computing the visiting order. Inside: the records and, for write
//! passes, the final fsync/msync (../shared/spec/micro.md).

use std::fs::{self, File};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Barrier, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

use iolab_workload::micro::{Access, DataPattern, EngineKind, MicroPlan, RecordSync};

use crate::backend::{open_file, Dir, IoFile, MmapFile, NullFile, PsyncFile, SyncFile, UringFile};
use crate::buffer::AlignedBuf;
use crate::clock::Clock;
use crate::error::EngineError;
use crate::order::Order;
use crate::stats::{merge_intervals, Bucket, IntervalCounter, LatencyHistogram, ThreadStats};
use crate::usage::Usage;
use iolab_workload::rng::Rng;

/// How often [`Observer::progress`] is called.
pub const PROGRESS_PERIOD: Duration = Duration::from_millis(500);
/// Width of the per-interval counters.
pub const INTERVAL: Duration = Duration::from_secs(1);
/// Chunk size for pre-filling files: large enough to stream, small enough for smooth progress.
const FILL_CHUNK: usize = 1 << 20;

/// Hooks for the caller, all called from the calling thread.
pub trait Observer {
    /// Pre-filling data files: `done` of `total` bytes written.
    fn preparing(&mut self, _done: u64, _total: u64) {}
    /// Called about every [`PROGRESS_PERIOD`] during the timed region: records completed so
    /// far, records planned (all passes), time since the start.
    fn progress(&mut self, _done: u64, _planned: u64, _elapsed: Duration) {}
    /// Every worker is ready; the timed region starts right after this returns.
    fn started(&mut self) {}
    /// The last worker finished; the timed region has ended.
    fn finished(&mut self) {}
}

impl Observer for () {}

/// What a micro run measured.
#[derive(Debug, Clone)]
pub struct MicroResult {
    pub plan: MicroPlan,
    /// From the release of the threads to the last thread's end (final sync included).
    pub elapsed_ns: u64,
    pub ops: u64,
    pub bytes: u64,
    /// Per-record latency (the transfer plus its per-record sync).
    pub latency: LatencyHistogram,
    /// Per-record sync calls alone (synchronous engines only).
    pub sync_latency: LatencyHistogram,
    /// Longest final sync among the threads.
    pub final_sync_ns: u64,
    pub interval_ns: u64,
    pub intervals: Vec<Bucket>,
    /// CPU usage of the worker threads during the timed region, summed.
    pub usage: Usage,
    pub threads: Vec<ThreadSummary>,
    pub files: Vec<PathBuf>,
    /// Whether existing files of the right size were reused instead of written anew.
    pub reused_files: bool,
    /// Whether the time limit ended the run before every record was visited.
    pub time_limited: bool,
}

#[derive(Debug, Clone, Copy)]
pub struct ThreadSummary {
    pub ops: u64,
    pub bytes: u64,
    pub elapsed_ns: u64,
    pub usage: Usage,
}

/// A data file and whether this run created it (and so must remove it on failure).
struct Prepared {
    path: PathBuf,
    created: bool,
}

/// The name of thread `t`'s data file in `dir`.
pub fn data_file(dir: &Path, thread: u32) -> PathBuf {
    dir.join(format!("iolab-micro.{thread}"))
}

/// Runs `plan`. On failure, files this run created are removed.
pub fn run_micro(plan: &MicroPlan, obs: &mut dyn Observer) -> Result<MicroResult, EngineError> {
    run_micro_cancellable(plan, obs, &AtomicBool::new(false))
}

/// [`run_micro`] that ends early with [`EngineError::Interrupted`] once `cancel` is set (from
/// a signal handler, say): within a record while filling files, within a
/// [`PROGRESS_PERIOD`] while running. Files it created are removed.
pub fn run_micro_cancellable(
    plan: &MicroPlan,
    obs: &mut dyn Observer,
    cancel: &AtomicBool,
) -> Result<MicroResult, EngineError> {
    let mut prepared = Vec::new();
    let result = prepare(plan, obs, &mut prepared, cancel)
        .and_then(|()| execute(plan, &prepared, obs, cancel));
    if result.is_err() {
        for p in prepared.iter().filter(|p| p.created) {
            let _ = fs::remove_file(&p.path);
        }
    }
    result
}

fn check_dir(dir: &Path) -> Result<(), EngineError> {
    match fs::metadata(dir) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            Err(EngineError::MissingDir(dir.to_path_buf()))
        }
        Err(e) => Err(EngineError::Io {
            op: "stat",
            path: dir.to_path_buf(),
            source: e,
        }),
        Ok(m) if !m.is_dir() => Err(EngineError::NotADirectory(dir.to_path_buf())),
        Ok(_) => Ok(()),
    }
}

/// Classifies a failure to create a file in the target directory: permission and read-only
/// filesystems are the user's input, anything else is a failed run.
fn create_error(path: &Path, dir: &Path, e: io::Error) -> EngineError {
    match e.raw_os_error() {
        Some(libc::EACCES) | Some(libc::EPERM) | Some(libc::EROFS) => EngineError::DirNotWritable {
            path: dir.to_path_buf(),
            source: e,
        },
        _ => EngineError::Io {
            op: "create",
            path: path.to_path_buf(),
            source: e,
        },
    }
}

fn prepare(
    plan: &MicroPlan,
    obs: &mut dyn Observer,
    out: &mut Vec<Prepared>,
    cancel: &AtomicBool,
) -> Result<(), EngineError> {
    if plan.engine == EngineKind::Null {
        return Ok(());
    }
    check_dir(&plan.dir)?;
    let mut to_fill = Vec::new();
    for t in 0..plan.threads {
        let path = data_file(&plan.dir, t);
        if plan.access == Access::Append {
            // Append measures allocating writes: start from a fresh, empty file.
            match fs::remove_file(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(create_error(&path, &plan.dir, e)),
            }
            File::create(&path).map_err(|e| create_error(&path, &plan.dir, e))?;
            out.push(Prepared {
                path,
                created: true,
            });
            continue;
        }
        let reusable = fs::metadata(&path)
            .map(|m| m.is_file() && m.len() == plan.file_size)
            .unwrap_or(false);
        if !reusable {
            File::create(&path).map_err(|e| create_error(&path, &plan.dir, e))?;
            to_fill.push(out.len());
        }
        out.push(Prepared {
            path,
            created: !reusable,
        });
    }
    let total = to_fill.len() as u64 * plan.file_size;
    let mut done = 0;
    for (i, &idx) in to_fill.iter().enumerate() {
        let mut rng = matches!(plan.data, DataPattern::Random)
            .then(|| Rng::stream(plan.seed, 1_000_000 + i as u64));
        fill(&out[idx].path, plan.file_size, rng.as_mut(), &mut |n| {
            done += n;
            obs.preparing(done, total);
            !cancel.load(Ordering::Relaxed)
        })?;
    }
    if plan.writes() {
        // Overwrite modes start from a synced file: nothing of the preparation may still be
        // dirty when the timed region starts (a reused file may have been written just now).
        for p in out.iter() {
            let f = File::options()
                .write(true)
                .open(&p.path)
                .map_err(|e| create_error(&p.path, &plan.dir, e))?;
            f.sync_all().map_err(|e| EngineError::Io {
                op: "fsync",
                path: p.path.clone(),
                source: e,
            })?;
        }
    }
    if plan.sync.open_flags().o_direct {
        if let Some(p) = out.first() {
            check_direct(&p.path, plan.bs)?;
        }
    }
    Ok(())
}

/// Writes `size` bytes of the data pattern to `path` and syncs it.
fn fill(
    path: &Path,
    size: u64,
    mut rng: Option<&mut Rng>,
    // Told the bytes just written; returns false to stop (cancelled).
    progress: &mut dyn FnMut(u64) -> bool,
) -> Result<(), EngineError> {
    let io_err = |op, e| EngineError::Io {
        op,
        path: path.to_path_buf(),
        source: e,
    };
    let file = File::options()
        .write(true)
        .open(path)
        .map_err(|e| io_err("open", e))?;
    let mut buf = AlignedBuf::zeroed(FILL_CHUNK);
    let mut off = 0u64;
    while off < size {
        let n = (size - off).min(FILL_CHUNK as u64) as usize;
        if let Some(r) = rng.as_deref_mut() {
            r.fill(&mut buf.as_mut_slice()[..n]);
        }
        file.write_all_at(&buf.as_slice()[..n], off)
            .map_err(|e| io_err("write", e))?;
        off += n as u64;
        if !progress(n as u64) {
            return Err(EngineError::Interrupted);
        }
    }
    file.sync_all().map_err(|e| io_err("fsync", e))
}

/// Checks with statx(STATX_DIOALIGN) (Linux ≥ 6.1) that the file supports O_DIRECT and that
/// the record size is a multiple of its offset alignment; older kernels report nothing and
/// the first transfer's EINVAL tells instead.
fn check_direct(path: &Path, bs: u64) -> Result<(), EngineError> {
    let mut cpath = path.as_os_str().as_bytes().to_vec();
    cpath.push(0);
    // SAFETY: statx fills the zeroed struct; the path is NUL-terminated.
    let mut stx: libc::statx = unsafe { std::mem::zeroed() };
    let r = unsafe {
        libc::statx(
            libc::AT_FDCWD,
            cpath.as_ptr().cast(),
            0,
            libc::STATX_DIOALIGN,
            &mut stx,
        )
    };
    if r != 0 || stx.stx_mask & libc::STATX_DIOALIGN == 0 {
        return Ok(());
    }
    let align = stx.stx_dio_offset_align;
    if align == 0 {
        return Err(EngineError::NoDirectIo {
            path: path.to_path_buf(),
        });
    }
    if !bs.is_multiple_of(u64::from(align)) {
        return Err(EngineError::DirectIoUnaligned {
            bs,
            align,
            path: path.to_path_buf(),
        });
    }
    Ok(())
}

/// What every worker shares.
/// A worker's completed-record count, alone on its cache line so that publishing it costs a
/// plain store and never bounces a line between cores.
#[repr(align(64))]
#[derive(Default)]
struct Progress(AtomicU64);

struct Shared<'a> {
    progress: Vec<Progress>,
    clock: Clock,
    plan: &'a MicroPlan,
    ready: Barrier,
    go: Barrier,
    start: OnceLock<Instant>,
    abort: AtomicBool,
}

fn execute(
    plan: &MicroPlan,
    prepared: &[Prepared],
    obs: &mut dyn Observer,
    cancel: &AtomicBool,
) -> Result<MicroResult, EngineError> {
    let n = plan.threads as usize;
    let shared = Shared {
        plan,
        ready: Barrier::new(n + 1),
        go: Barrier::new(n + 1),
        start: OnceLock::new(),
        abort: AtomicBool::new(false),
        progress: (0..n).map(|_| Progress::default()).collect(),
        clock: Clock::new(),
    };
    // Workers wake the main thread when they finish, so it does not sleep out a full
    // progress period after the run has ended.
    let main_thread = thread::current();
    let outcomes: Vec<Result<ThreadStats, EngineError>> = thread::scope(|s| {
        let mut handles = Vec::with_capacity(n);
        for t in 0..n {
            let path = prepared.get(t).map(|p| p.path.as_path());
            let shared = &shared;
            let main_thread = &main_thread;
            let h = thread::Builder::new()
                .name(format!("iolab-w{t}"))
                .spawn_scoped(s, move || {
                    let r = worker(t as u32, path, shared);
                    main_thread.unpark();
                    r
                });
            match h {
                Ok(h) => handles.push(h),
                Err(e) => {
                    // Threads already started wait at the barriers; release them to fail.
                    shared.abort.store(true, Ordering::Relaxed);
                    let spawned = handles.len();
                    let _ = shared.start.set(Instant::now());
                    let mut out: Vec<_> = Vec::new();
                    if spawned > 0 {
                        // Barrier sizes are fixed; stand in for the missing parties.
                        for _ in spawned..n {
                            s.spawn(|| {
                                shared.ready.wait();
                                shared.go.wait();
                            });
                        }
                        shared.ready.wait();
                        shared.go.wait();
                        out.extend(handles.into_iter().map(join));
                    }
                    out.push(Err(EngineError::Spawn(e)));
                    return out;
                }
            }
        }
        shared.ready.wait();
        obs.started();
        let _ = shared.start.set(Instant::now());
        shared.go.wait();
        let planned = plan.records_per_thread * u64::from(plan.threads) * u64::from(plan.loops);
        let start = *shared.start.get().expect("set above");
        while !handles.iter().all(|h| h.is_finished()) {
            thread::park_timeout(PROGRESS_PERIOD);
            if cancel.load(Ordering::Relaxed) {
                shared.abort.store(true, Ordering::Relaxed);
            }
            let done = shared
                .progress
                .iter()
                .map(|p| p.0.load(Ordering::Relaxed))
                .sum();
            obs.progress(done, planned, start.elapsed());
        }
        let out: Vec<_> = handles.into_iter().map(join).collect();
        obs.finished();
        out
    });

    if cancel.load(Ordering::Relaxed) {
        return Err(EngineError::Interrupted);
    }
    let mut stats = Vec::with_capacity(n);
    for o in outcomes {
        stats.push(o?);
    }
    Ok(merge(plan, prepared, stats))
}

fn join(
    h: thread::ScopedJoinHandle<'_, Result<ThreadStats, EngineError>>,
) -> Result<ThreadStats, EngineError> {
    h.join().unwrap_or_else(|p| Err(EngineError::from_panic(p)))
}

fn merge(plan: &MicroPlan, prepared: &[Prepared], stats: Vec<ThreadStats>) -> MicroResult {
    let mut latency = LatencyHistogram::default();
    let mut sync_latency = LatencyHistogram::default();
    let mut usage = Usage::default();
    let mut series = Vec::with_capacity(stats.len());
    let mut threads = Vec::with_capacity(stats.len());
    for s in &stats {
        latency.merge(&s.latency);
        sync_latency.merge(&s.sync_latency);
        usage = usage + s.usage;
        series.push(s.intervals.clone());
        threads.push(ThreadSummary {
            ops: s.ops,
            bytes: s.bytes,
            elapsed_ns: s.elapsed_ns,
            usage: s.usage,
        });
    }
    let ops = stats.iter().map(|s| s.ops).sum::<u64>();
    let planned = plan.records_per_thread * u64::from(plan.threads) * u64::from(plan.loops);
    MicroResult {
        plan: plan.clone(),
        elapsed_ns: stats.iter().map(|s| s.elapsed_ns).max().unwrap_or(0),
        ops,
        bytes: stats.iter().map(|s| s.bytes).sum(),
        latency,
        sync_latency,
        final_sync_ns: stats.iter().map(|s| s.final_sync_ns).max().unwrap_or(0),
        interval_ns: INTERVAL.as_nanos() as u64,
        intervals: merge_intervals(&series),
        usage,
        threads,
        files: prepared.iter().map(|p| p.path.clone()).collect(),
        reused_files: prepared.iter().any(|p| !p.created),
        time_limited: ops < planned,
    }
}

/// Per-thread context for the loops.
struct Ctx<'a> {
    plan: &'a MicroPlan,
    path: &'a Path,
    dir: Dir,
    record_sync: Option<RecordSync>,
    order: Order,
    clock: Clock,
    /// The common start, in clock ticks.
    start: u64,
    /// Interval width and time limit, in clock ticks.
    interval: u64,
    deadline: Option<u64>,
    abort: &'a AtomicBool,
    progress: &'a AtomicU64,
}

impl Ctx<'_> {
    fn err(&self, op: &'static str, offset: u64, e: io::Error) -> EngineError {
        self.abort.store(true, Ordering::Relaxed);
        EngineError::IoAt {
            op,
            path: self.path.to_path_buf(),
            offset,
            source: e,
        }
    }

    fn op_name(&self) -> &'static str {
        match self.dir {
            Dir::Read => "read",
            Dir::Write => "write",
        }
    }
}

enum Backend {
    Psync(PsyncFile),
    Sync(SyncFile),
    Mmap(MmapFile),
    Uring(Box<UringFile>),
    Null(NullFile),
}

fn open_backend(plan: &MicroPlan, path: Option<&Path>) -> Result<Backend, EngineError> {
    let Some(path) = path else {
        return Ok(Backend::Null(NullFile::new(plan.iodepth as usize)));
    };
    let write = plan.writes();
    let io_err = |op, e| EngineError::Io {
        op,
        path: path.to_path_buf(),
        source: e,
    };
    let file = open_file(path, write, plan.sync.open_flags()).map_err(|e| io_err("open", e))?;
    Ok(match plan.engine {
        EngineKind::Psync => Backend::Psync(PsyncFile::new(file)),
        EngineKind::Sync => Backend::Sync(SyncFile::new(file)),
        EngineKind::Mmap => Backend::Mmap(
            MmapFile::new(file, plan.file_size, write, plan.access == Access::Append)
                .map_err(|e| io_err("mmap", e))?,
        ),
        EngineKind::IoUring => Backend::Uring(Box::new(
            UringFile::new(file, plan.iodepth as usize, plan.bs as usize)
                .map_err(|e| io_err("io_uring_setup", e))?,
        )),
        EngineKind::Null => Backend::Null(NullFile::new(plan.iodepth as usize)),
    })
}

fn worker(t: u32, path: Option<&Path>, shared: &Shared<'_>) -> Result<ThreadStats, EngineError> {
    let plan = shared.plan;
    crate::fdtable::make_private();
    // Set-up errors still pass both barriers so that no thread waits forever.
    let setup = open_backend(plan, path).map(|b| {
        let mut rng = Rng::stream(plan.seed, u64::from(t));
        let order = if plan.access.is_random() {
            Order::random(plan.records_per_thread, &mut rng)
        } else {
            Order::sequential(plan.records_per_thread)
        };
        let data = matches!(plan.data, DataPattern::Random).then_some(&mut rng);
        let buf = AlignedBuf::with_data(plan.bs as usize, data);
        (b, order, buf)
    });
    shared.ready.wait();
    shared.go.wait();
    let (backend, order, buf) = setup?;
    if shared.abort.load(Ordering::Relaxed) {
        return Ok(ThreadStats::default());
    }
    let start = *shared
        .start
        .get()
        .expect("start is set before the threads are released");
    let ctx = Ctx {
        plan,
        path: path.unwrap_or(Path::new("null")),
        dir: if plan.writes() { Dir::Write } else { Dir::Read },
        record_sync: plan.record_sync(),
        order,
        clock: shared.clock,
        start: shared.clock.ticks_at(start),
        interval: shared.clock.ticks_in(INTERVAL),
        deadline: plan
            .time_limit
            .map(|d| shared.clock.ticks_at(start) + shared.clock.ticks_in(d)),
        abort: &shared.abort,
        progress: &shared.progress[t as usize].0,
    };
    let before = Usage::thread();
    let mut stats = match backend {
        Backend::Psync(f) => run_sync(f, buf, &ctx),
        Backend::Sync(f) => run_sync(f, buf, &ctx),
        Backend::Mmap(f) => run_sync(f, buf, &ctx),
        Backend::Uring(f) => run_queued(*f, &ctx),
        Backend::Null(f) if plan.iodepth > 1 => run_queued(f, &ctx),
        Backend::Null(f) => run_sync(f, buf, &ctx),
    }?;
    stats.usage = Usage::thread() - before;
    Ok(stats)
}

/// The loop for synchronous backends: one record at a time, each timed around its syscalls.
fn run_sync<F: IoFile>(
    mut f: F,
    mut buf: AlignedBuf,
    ctx: &Ctx<'_>,
) -> Result<ThreadStats, EngineError> {
    let plan = ctx.plan;
    let bs = plan.bs as usize;
    let n = ctx.order.len();
    let mut stats = ThreadStats::default();
    let mut intervals = IntervalCounter::new(ctx.start, ctx.interval, expected_intervals(plan));
    let buf = &mut buf.as_mut_slice()[..bs];
    let mut last = ctx.start;
    let mut done = 0u64;
    'passes: for _ in 0..plan.loops {
        for i in 0..n {
            let offset = ctx.order.get(i) * plan.bs;
            let t0 = ctx.clock.ticks();
            f.io(ctx.dir, buf, offset)
                .map_err(|e| ctx.err(ctx.op_name(), offset, e))?;
            let mut t1 = ctx.clock.ticks();
            if let Some(how) = ctx.record_sync {
                f.record_sync(how, offset, bs)
                    .map_err(|e| ctx.err(how.name(), offset, e))?;
                let t2 = ctx.clock.ticks();
                stats.sync_latency.record(ctx.clock.ns(t2 - t1));
                t1 = t2;
            }
            stats.latency.record(ctx.clock.ns(t1 - t0));
            intervals.add(t1, 1, bs as u64);
            done += 1;
            ctx.progress.store(done, Ordering::Relaxed);
            last = t1;
            if ctx.deadline.is_some_and(|d| t1 >= d) || ctx.abort.load(Ordering::Relaxed) {
                break 'passes;
            }
        }
    }
    finish(&mut f, ctx, stats, intervals, last)
}

/// The loop for queued backends: keep up to `depth` records in flight; a record's latency runs
/// from just before the submitting syscall to just after the reaping one.
fn run_queued<F: IoFile>(mut f: F, ctx: &Ctx<'_>) -> Result<ThreadStats, EngineError> {
    let plan = ctx.plan;
    let depth = f.depth();
    if ctx.dir == Dir::Write && plan.data == DataPattern::Random {
        let mut rng = Rng::stream(plan.seed, 2_000_000);
        for slot in 0..depth {
            if let Some(b) = f.slot_buffer(slot) {
                rng.fill(b);
            }
        }
    }
    let n = ctx.order.len();
    let total = n * u64::from(plan.loops);
    let mut stats = ThreadStats::default();
    let mut intervals = IntervalCounter::new(ctx.start, ctx.interval, expected_intervals(plan));
    let mut free: Vec<usize> = (0..depth).rev().collect();
    let mut fresh: Vec<usize> = Vec::with_capacity(depth);
    let mut done: Vec<(usize, io::Result<()>)> = Vec::with_capacity(depth);
    let mut submitted_at = vec![ctx.start; depth];
    let mut offsets = vec![0u64; depth];
    let mut next = 0u64;
    let mut completed = 0u64;
    let mut stopping = false;
    let mut first_error: Option<EngineError> = None;
    let mut last = ctx.start;
    loop {
        while !stopping && next < total {
            let Some(slot) = free.pop() else { break };
            let offset = ctx.order.get(next % n) * plan.bs;
            if let Err(e) = f.submit(ctx.dir, slot, offset, ctx.record_sync) {
                free.push(slot);
                first_error.get_or_insert_with(|| ctx.err("submit", offset, e));
                stopping = true;
                break;
            }
            offsets[slot] = offset;
            fresh.push(slot);
            next += 1;
        }
        if free.len() == depth && fresh.is_empty() {
            break; // nothing in flight, nothing to submit
        }
        let t_submit = ctx.clock.ticks();
        for slot in fresh.drain(..) {
            submitted_at[slot] = t_submit;
        }
        if let Err(e) = f.reap(1, &mut |slot, r| done.push((slot, r))) {
            // The ring itself failed; in-flight buffers cannot be trusted to be idle, so leak
            // nothing further and report.
            return Err(first_error.unwrap_or_else(|| ctx.err("io_uring_enter", 0, e)));
        }
        let t_done = ctx.clock.ticks();
        for (slot, r) in done.drain(..) {
            free.push(slot);
            match r {
                Ok(()) => {
                    stats
                        .latency
                        .record(ctx.clock.ns(t_done - submitted_at[slot]));
                    intervals.add(t_done, 1, plan.bs);
                    completed += 1;
                    ctx.progress.store(completed, Ordering::Relaxed);
                }
                Err(e) => {
                    let op = ctx.op_name();
                    first_error.get_or_insert_with(|| ctx.err(op, offsets[slot], e));
                    stopping = true;
                }
            }
        }
        last = t_done;
        if ctx.deadline.is_some_and(|d| t_done >= d) || ctx.abort.load(Ordering::Relaxed) {
            stopping = true;
        }
    }
    if let Some(e) = first_error {
        return Err(e);
    }
    finish(&mut f, ctx, stats, intervals, last)
}

/// Ends a pass: the final sync for writes (timed, and part of the elapsed time), then totals.
fn finish<F: IoFile>(
    f: &mut F,
    ctx: &Ctx<'_>,
    mut stats: ThreadStats,
    intervals: IntervalCounter,
    mut last: u64,
) -> Result<ThreadStats, EngineError> {
    if let Some(how) = ctx.plan.final_sync() {
        let t0 = ctx.clock.ticks();
        f.final_sync(how).map_err(|e| ctx.err("final sync", 0, e))?;
        last = ctx.clock.ticks();
        stats.final_sync_ns = ctx.clock.ns(last - t0);
    }
    stats.ops = stats.latency.count();
    stats.bytes = stats.ops * ctx.plan.bs;
    stats.elapsed_ns = ctx.clock.ns(last.saturating_sub(ctx.start));
    stats.intervals = intervals.finish(last);
    Ok(stats)
}

fn expected_intervals(plan: &MicroPlan) -> usize {
    plan.time_limit
        .map(|d| d.as_secs() as usize + 2)
        .unwrap_or(64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_workload::micro::{MicroSpec, SyncMode};

    fn plan(dir: &Path, access: Access, sync: SyncMode, engine: Option<EngineKind>) -> MicroPlan {
        MicroSpec {
            access,
            sync,
            bs: 4096,
            size: 256 * 1024,
            threads: 2,
            dir: dir.to_path_buf(),
            engine,
            iodepth: engine.filter(|e| *e == EngineKind::IoUring).map(|_| 8),
            time_limit: None,
            loops: 1,
            seed: 42,
            data: DataPattern::Random,
        }
        .validate()
        .unwrap()
    }

    #[test]
    fn every_engine_and_access_visits_every_record() {
        let dir = tempfile::tempdir().unwrap();
        for engine in [EngineKind::Psync, EngineKind::Sync, EngineKind::IoUring] {
            for access in Access::ALL {
                let p = plan(dir.path(), access, SyncMode::Normal, Some(engine));
                let r =
                    run_micro(&p, &mut ()).unwrap_or_else(|e| panic!("{engine:?} {access}: {e}"));
                // 256 KiB over two threads: 32 records of 4 KiB each.
                assert_eq!(r.ops, 64, "{engine:?} {access}");
                assert_eq!(r.bytes, 64 * 4096);
                assert_eq!(
                    r.threads.iter().map(|t| t.ops).collect::<Vec<_>>(),
                    [32, 32]
                );
                assert_eq!(r.intervals.iter().map(|b| b.ops).sum::<u64>(), 64);
                for f in &r.files {
                    assert_eq!(fs::metadata(f).unwrap().len(), 128 * 1024);
                }
            }
        }
        let p = plan(dir.path(), Access::Randwrite, SyncMode::MmapSync, None);
        let r = run_micro(&p, &mut ()).unwrap();
        assert_eq!(r.ops, 64);
        assert_eq!(r.sync_latency.count(), 64);
    }

    #[test]
    fn random_writes_land_where_the_permutation_says() {
        // Writing each record's index into it, via the real engine, must leave every record
        // written exactly once: read the file back and check.
        let dir = tempfile::tempdir().unwrap();
        let mut p = plan(dir.path(), Access::Randwrite, SyncMode::Fdatasync, None);
        p.threads = 1;
        p.records_per_thread = 64;
        p.file_size = 64 * 4096;
        p.size = p.file_size;
        let r = run_micro(&p, &mut ()).unwrap();
        assert_eq!(r.ops, 64);
        assert_eq!(r.sync_latency.count(), 64);
        // Data is the seeded random pattern: every record of the file now holds it.
        let data = fs::read(&r.files[0]).unwrap();
        let first = &data[..4096];
        assert!(first.iter().any(|&b| b != 0));
        for rec in data.chunks(4096) {
            assert_eq!(rec, first);
        }
    }

    #[test]
    fn time_limit_stops_early() {
        let mut p = plan(
            Path::new("/"),
            Access::Randread,
            SyncMode::Normal,
            Some(EngineKind::Null),
        );
        p.loops = 1_000_000_000;
        p.time_limit = Some(Duration::from_millis(200));
        let r = run_micro(&p, &mut ()).unwrap();
        assert!(r.time_limited);
        assert!(
            r.elapsed_ns >= 200_000_000 && r.elapsed_ns < 2_000_000_000,
            "{}",
            r.elapsed_ns
        );
    }

    #[test]
    fn missing_dir_is_bad_input_and_leaves_nothing() {
        let p = plan(
            Path::new("/nonexistent/iolab"),
            Access::Write,
            SyncMode::Normal,
            None,
        );
        let e = run_micro(&p, &mut ()).unwrap_err();
        assert!(matches!(e, EngineError::MissingDir(_)));
        assert!(e.is_bad_input());
    }
}
