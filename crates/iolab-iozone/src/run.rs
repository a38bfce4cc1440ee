//! Runs an iozone plan: one file per thread, the plan's figures in iozone's order, each a
//! timed pass of every thread released together (docs/iozone.md has the test → syscalls
//! table).
//!
//! Each pass: untimed set-up (open, `fsync` of the file, the buffer, the visiting order),
//! then the timed region — bracketed by `getrusage(RUSAGE_THREAD)`, which measures its CPU
//! time and marks it in an strace — with one syscall (or an `lseek` and one) per record,
//! then the flush (`fsync`, `close`) inside the region or after it. The files are removed
//! at the end, as iozone does.
//!
//! Throughput mode keeps iozone's two figures next to iolab's own: when the first thread
//! finishes its records it raises the stone-wall flag; every other thread notes its bytes
//! and time so far at its next record and carries on.
//!
//! Before every pass, untimed, the caller ([`BetweenPasses`], which controls the system under
//! test) empties the files' page cache as the plan's purge says (iozone `-U` remounts) and
//! measures how much of them is still cached.

use std::fs::{self, File};
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::os::fd::{AsRawFd, IntoRawFd, RawFd};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::thread;
use std::time::Duration;

use iolab_engine::buffer::AlignedBuf;
use iolab_engine::clock::Clock;
use iolab_engine::files::check_dir;
use iolab_engine::gate::{spawn_failed, worker_builder, AbortOnPanic, FinishLine, Gate};
use iolab_engine::nocancel;
use iolab_engine::order::Order;
use iolab_engine::stats::LatencyHistogram;
use iolab_engine::usage::{CpuMark, Usage};
use iolab_engine::EngineError;
use iolab_kind::RunHooks;
use iolab_util::rng::Rng;
use serde::Serialize;

use crate::options::{stride_next, Figure, Flush, IozonePlan, Purge, Test};

/// How often [`RunHooks::records`] is called.
pub const PROGRESS_PERIOD: Duration = Duration::from_millis(500);
/// Chunk size for writing files that a run reads before it writes them.
const FILL_CHUNK: u64 = 1 << 20;

/// The state word every thread reads once per record.
const STONEWALL: u8 = 1;
const ABORT: u8 = 2;

/// What one thread did in one pass.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct ChildResult {
    pub ops: u64,
    pub bytes: u64,
    /// Its own timed window: from its release to its last record, or to the end of its fsync
    /// (`flush = "fsync"`) or of its close (`flush = "included"`).
    pub elapsed_ns: u64,
    /// The flush (fsync + close), inside the window, partly or after it.
    pub flush_ns: u64,
    /// Bytes done and time taken when the stone-wall flag reached it (`None`: it finished
    /// its records first, or stone-walling is off).
    pub stonewall: Option<(u64, u64)>,
    /// Whether it read (random mix: its role).
    pub reads: bool,
    /// CPU time of its timed window (getrusage: user and system apart, tick-sampled).
    pub usage: Usage,
    /// CPU time of its timed window from the scheduler's clock (`CLOCK_THREAD_CPUTIME_ID`):
    /// exact also for passes of a few milliseconds.
    pub cpu_ns: u64,
}

impl ChildResult {
    /// iozone's per-child throughput in bytes/s: over its window, or up to the stone-wall.
    pub fn iozone_rate(&self) -> f64 {
        let (bytes, ns) = self.stonewall.unwrap_or((self.bytes, self.elapsed_ns));
        rate(bytes, ns)
    }

    /// iozone's "xfer count": the bytes it had done at the stone-wall (all of them when it
    /// finished first).
    pub fn xfer(&self) -> u64 {
        self.stonewall.map_or(self.bytes, |(b, _)| b)
    }
}

fn rate(bytes: u64, ns: u64) -> f64 {
    if ns == 0 {
        f64::NAN
    } else {
        bytes as f64 / (ns as f64 / 1e9)
    }
}

/// One measured figure.
#[derive(Debug, Clone, Serialize)]
pub struct FigureResult {
    pub figure: Figure,
    pub children: Vec<ChildResult>,
    /// The whole timed region: from the first thread's release to the last thread's end of
    /// timing.
    pub elapsed_ns: u64,
    /// iozone's parent time: from the release until every thread has ended, untimed flush
    /// included.
    pub parent_ns: u64,
    #[serde(skip)]
    pub latency: LatencyHistogram,
    pub usage: Usage,
    /// The purge before the pass (untimed; 0 without one).
    pub purge_ns: u64,
    /// Bytes of the data files in the page cache when the pass started (after the purge):
    /// what a read pass may find in memory instead of on the device. `None`: not measured.
    pub cached_bytes: Option<u64>,
}

impl FigureResult {
    pub fn ops(&self) -> u64 {
        self.children.iter().map(|c| c.ops).sum()
    }

    pub fn bytes(&self) -> u64 {
        self.children.iter().map(|c| c.bytes).sum()
    }

    /// iolab's figure: every byte over the whole timed region, in bytes/s.
    pub fn rate(&self) -> f64 {
        rate(self.bytes(), self.elapsed_ns)
    }

    /// iozone's "children see": the sum of the threads' own rates, each up to the stone-wall.
    pub fn children_see(&self) -> f64 {
        self.children.iter().map(ChildResult::iozone_rate).sum()
    }

    /// iozone's "parent sees": the bytes done at the stone-wall over the parent's time.
    pub fn parent_sees(&self) -> f64 {
        rate(
            self.children.iter().map(ChildResult::xfer).sum(),
            self.parent_ns,
        )
    }

    /// iozone's "min xfer": the fewest bytes any thread had done at the stone-wall.
    pub fn min_xfer(&self) -> u64 {
        self.children
            .iter()
            .map(ChildResult::xfer)
            .min()
            .unwrap_or(0)
    }

    /// The longest flush of a thread.
    pub fn flush_ns(&self) -> u64 {
        self.children.iter().map(|c| c.flush_ns).max().unwrap_or(0)
    }

    /// iozone's CPU utilization (`-+u`), in percent: the threads' CPU time over the longest
    /// thread's timed window, each window taken as at least its thread's CPU time, as iozone
    /// does. Above 100 with more than one thread; 0 when nothing was timed. The CPU time is
    /// the scheduler's (`cpu_ns`), not getrusage's ticks, which iozone uses and which make
    /// its figure for a short pass 0 or far above the truth.
    pub fn cpu_utilization(&self) -> f64 {
        let cpu: u64 = self.children.iter().map(|c| c.cpu_ns).sum();
        let wall = self
            .children
            .iter()
            .map(|c| c.elapsed_ns.max(c.cpu_ns))
            .max()
            .unwrap_or(0);
        if wall == 0 {
            0.0
        } else {
            100.0 * cpu as f64 / wall as f64
        }
    }
}

/// What a run measured.
#[derive(Debug, Clone, Serialize)]
pub struct IozoneResult {
    pub plan: IozonePlan,
    pub figures: Vec<FigureResult>,
    /// The data files (removed at the end of the run).
    pub files: Vec<PathBuf>,
}

impl IozoneResult {
    pub fn figure(&self, f: Figure) -> Option<&FigureResult> {
        self.figures.iter().find(|r| r.figure == f)
    }

    /// The timed regions together.
    pub fn elapsed_ns(&self) -> u64 {
        self.figures.iter().map(|f| f.elapsed_ns).sum()
    }
}

/// The name of thread `t`'s data file in `dir`.
pub fn data_file(dir: &Path, thread: u32) -> PathBuf {
    dir.join(format!("iolab-iozone.{thread}"))
}

/// What the caller does between passes, untimed, with no data file open: it controls the
/// system under test and measures the page cache (iolab-sut), which this crate does not.
pub trait BetweenPasses {
    /// Empties the page cache of `files` as `how` says (never [`Purge::None`]); the error
    /// is in the user's words.
    fn purge(&mut self, how: Purge, files: &[PathBuf]) -> Result<(), String>;
    /// The bytes of `files` in the page cache now; `None` when not measured.
    fn cached_bytes(&mut self, files: &[PathBuf]) -> Option<u64>;
}

/// No purge and no measurement: for runs whose plan has `purge = none`.
impl BetweenPasses for () {
    fn purge(&mut self, how: Purge, _files: &[PathBuf]) -> Result<(), String> {
        Err(format!(
            "purge = \"{}\" needs the system under test, which this run does not control",
            how.name()
        ))
    }

    fn cached_bytes(&mut self, _files: &[PathBuf]) -> Option<u64> {
        None
    }
}

/// Runs `plan`; ends early with [`EngineError::Interrupted`] once `cancel` is set. The data
/// files are removed at the end, whatever happened.
pub fn run_iozone(
    plan: &IozonePlan,
    hooks: &mut dyn RunHooks,
    between: &mut dyn BetweenPasses,
    cancel: &AtomicBool,
) -> Result<IozoneResult, EngineError> {
    check_dir(&plan.dir)?;
    let files: Vec<PathBuf> = (0..plan.threads).map(|t| data_file(&plan.dir, t)).collect();
    for f in &files {
        refuse_foreign(f)?;
    }
    let result = run_figures(plan, &files, hooks, between, cancel);
    for f in &files {
        let _ = fs::remove_file(f);
    }
    result
}

fn run_figures(
    plan: &IozonePlan,
    files: &[PathBuf],
    hooks: &mut dyn RunHooks,
    between: &mut dyn BetweenPasses,
    cancel: &AtomicBool,
) -> Result<IozoneResult, EngineError> {
    // Tests that do not create the files read (or overwrite) what an earlier run would have
    // written: write it first, outside the timed region.
    let creates = matches!(
        plan.tests.first(),
        Some(Test::Write | Test::Fwrite | Test::Pwrite)
    );
    if !creates {
        fill(files, plan.size, hooks, cancel)?;
    }
    let clock = Clock::new();
    let figures: Vec<Figure> = plan.figures().collect();
    let planned = figures.len() as u64 * u64::from(plan.threads) * plan.records;
    hooks.timed_start();
    let mut out = Vec::with_capacity(figures.len());
    let mut done = 0;
    for fig in figures {
        if cancel.load(Ordering::Relaxed) {
            return Err(EngineError::Interrupted);
        }
        let mut purge_ns = 0;
        if plan.purge != Purge::None {
            let t0 = clock.ticks();
            between.purge(plan.purge, files).map_err(|e| {
                EngineError::Workload(format!("purge = \"{}\": {e}", plan.purge.name()))
            })?;
            purge_ns = clock.ns(clock.ticks().saturating_sub(t0)).max(1);
        }
        let cached_bytes = between.cached_bytes(files);
        let mut r = run_figure(plan, fig, files, clock, hooks, cancel, done, planned)?;
        r.purge_ns = purge_ns;
        r.cached_bytes = cached_bytes;
        done += r.ops();
        out.push(r);
    }
    hooks.timed_end();
    Ok(IozoneResult {
        plan: plan.clone(),
        figures: out,
        files: files.to_vec(),
    })
}

/// A data file's name taken by something that is not a regular file: iolab neither follows
/// nor removes it.
fn refuse_foreign(path: &Path) -> Result<(), EngineError> {
    match fs::symlink_metadata(path) {
        Ok(m) if !m.file_type().is_file() => Err(EngineError::NotOurFile {
            path: path.to_path_buf(),
            what: if m.file_type().is_symlink() {
                "a symbolic link"
            } else if m.is_dir() {
                "a directory"
            } else {
                "a special file (device, FIFO or socket)"
            },
        }),
        _ => Ok(()),
    }
}

fn io_err(op: &'static str, path: &Path, e: io::Error) -> EngineError {
    match e.raw_os_error() {
        Some(libc::EACCES) | Some(libc::EPERM) | Some(libc::EROFS) if op == "create" => {
            EngineError::DirNotWritable {
                path: path.parent().unwrap_or(path).to_path_buf(),
                source: e,
            }
        }
        Some(libc::ELOOP) => EngineError::NotOurFile {
            path: path.to_path_buf(),
            what: "a symbolic link",
        },
        _ => EngineError::Io {
            op,
            path: path.to_path_buf(),
            source: e,
        },
    }
}

/// Writes every file whole (zeros) and syncs it.
fn fill(
    files: &[PathBuf],
    size: u64,
    hooks: &mut dyn RunHooks,
    cancel: &AtomicBool,
) -> Result<(), EngineError> {
    let total = size * files.len() as u64;
    let mut done = 0;
    let buf = AlignedBuf::zeroed(FILL_CHUNK.min(size))
        .map_err(|e| EngineError::alloc("filling the data files", e))?;
    for path in files {
        let f = File::options()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o644)
            .custom_flags(libc::O_NOFOLLOW)
            .open(path)
            .map_err(|e| io_err("create", path, e))?;
        let mut off = 0;
        while off < size {
            let n = (size - off).min(FILL_CHUNK) as usize;
            f.write_all_at(&buf.as_slice()[..n], off)
                .map_err(|e| io_err("write", path, e))?;
            off += n as u64;
            done += n as u64;
            hooks.filling(done, total);
            if cancel.load(Ordering::Relaxed) {
                return Err(EngineError::Interrupted);
            }
        }
        f.sync_all().map_err(|e| io_err("fsync", path, e))?;
    }
    Ok(())
}

/// A thread's progress counter, alone on its cache line.
#[repr(align(64))]
#[derive(Default)]
struct Progress(AtomicU64);

struct Shared<'a> {
    plan: &'a IozonePlan,
    figure: Figure,
    clock: Clock,
    ready: Gate,
    go: Gate,
    /// [`STONEWALL`] | [`ABORT`].
    state: AtomicU8,
    /// A thread's set-up failed: nobody runs.
    failed: AtomicBool,
    progress: Vec<Progress>,
}

#[allow(clippy::too_many_arguments)]
fn run_figure(
    plan: &IozonePlan,
    figure: Figure,
    files: &[PathBuf],
    clock: Clock,
    hooks: &mut dyn RunHooks,
    cancel: &AtomicBool,
    done_before: u64,
    planned: u64,
) -> Result<FigureResult, EngineError> {
    let n = plan.threads as usize;
    let shared = Shared {
        plan,
        figure,
        clock,
        ready: Gate::new(n + 1),
        go: Gate::new(n + 1),
        state: AtomicU8::new(0),
        failed: AtomicBool::new(false),
        progress: (0..n).map(|_| Progress::default()).collect(),
    };
    let line = FinishLine::new(n);
    let (outcomes, release, end) = thread::scope(|s| {
        let mut handles = Vec::with_capacity(n);
        for (t, path) in files.iter().enumerate() {
            let shared = &shared;
            let line = &line;
            let h =
                worker_builder(format!("iolab-iozone{t}"), t, None).spawn_scoped(s, move || {
                    let _signed = line.sign();
                    child(t as u32, path, shared)
                });
            match h {
                Ok(h) => handles.push(h),
                Err(e) => {
                    let err = spawn_failed([&shared.ready, &shared.go], handles, n, e);
                    return (vec![Err(err)], 0, 0);
                }
            }
        }
        if !shared.ready.wait() {
            shared.go.abort();
            return (handles.into_iter().map(join).collect(), 0, 0);
        }
        shared.go.wait();
        let release = clock.ticks();
        line.wait(PROGRESS_PERIOD, || {
            if cancel.load(Ordering::Relaxed) {
                shared.state.fetch_or(ABORT, Ordering::Relaxed);
            }
            let done: u64 = shared
                .progress
                .iter()
                .map(|p| p.0.load(Ordering::Relaxed))
                .sum();
            hooks.records(
                done_before + done,
                planned,
                Duration::from_nanos(clock.ns(clock.ticks().saturating_sub(release))),
            );
        });
        // The parent's clock stops when the last child is done, before the joins.
        let end = clock.ticks();
        let out: Vec<_> = handles.into_iter().map(join).collect();
        (out, release, end)
    });
    if cancel.load(Ordering::Relaxed) {
        return Err(EngineError::Interrupted);
    }
    // A thread that failed stops the others, which then report an interruption: the failure
    // is the error.
    let mut ok = Vec::with_capacity(n);
    let mut interrupted = None;
    for o in outcomes {
        match o {
            Ok(c) => ok.push(c),
            Err(e) if e.is_interrupted() => interrupted = Some(e),
            Err(e) => return Err(e),
        }
    }
    if let Some(e) = interrupted {
        return Err(e);
    }
    let mut children = Vec::with_capacity(n);
    let mut latency = LatencyHistogram::default();
    let mut usage = Usage::default();
    let (mut first, mut last) = (u64::MAX, 0u64);
    for c in ok {
        latency.merge(&c.latency);
        usage = usage + c.result.usage;
        first = first.min(c.start);
        last = last.max(c.end);
        children.push(c.result);
    }
    let start = first.min(release);
    Ok(FigureResult {
        figure,
        children,
        elapsed_ns: clock.ns(last.saturating_sub(first)),
        parent_ns: clock.ns(end.saturating_sub(start)),
        latency,
        usage,
        purge_ns: 0,
        cached_bytes: None,
    })
}

fn join(h: thread::ScopedJoinHandle<'_, Result<Child, EngineError>>) -> Result<Child, EngineError> {
    h.join().unwrap_or_else(|p| Err(EngineError::from_panic(p)))
}

/// A thread's pass, with its clock readings for the figure's totals.
struct Child {
    result: ChildResult,
    latency: LatencyHistogram,
    start: u64,
    end: u64,
}

/// How a pass moves through the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pattern {
    /// `write` after `write`: the file offset advances.
    SeqWrite,
    /// `read` after `read`.
    SeqRead,
    /// `lseek` + `read`/`write` over a permutation of all records.
    RandRead,
    RandWrite,
    /// `lseek` + `read`, last record first.
    Backward,
    /// `write`, then `lseek` back to 0.
    RecordRewrite,
    /// `lseek` + `read` every stride records.
    Stride,
    /// Buffered standard I/O with a buffer of one record.
    StdioWrite,
    StdioRead,
    Pwrite,
    Pread,
}

fn pattern(f: Figure, reader: bool) -> Pattern {
    match f {
        Figure::Write | Figure::Rewrite => Pattern::SeqWrite,
        Figure::Read | Figure::Reread => Pattern::SeqRead,
        Figure::RandomRead => Pattern::RandRead,
        Figure::RandomWrite => Pattern::RandWrite,
        Figure::RandomMix if reader => Pattern::RandRead,
        Figure::RandomMix => Pattern::RandWrite,
        Figure::BackwardRead => Pattern::Backward,
        Figure::RecordRewrite => Pattern::RecordRewrite,
        Figure::StrideRead => Pattern::Stride,
        Figure::Fwrite | Figure::Refwrite => Pattern::StdioWrite,
        Figure::Fread | Figure::Refread => Pattern::StdioRead,
        Figure::Pwrite | Figure::Repwrite => Pattern::Pwrite,
        Figure::Pread | Figure::Repread => Pattern::Pread,
    }
}

impl Pattern {
    fn writes(self) -> bool {
        matches!(
            self,
            Pattern::SeqWrite
                | Pattern::RandWrite
                | Pattern::RecordRewrite
                | Pattern::StdioWrite
                | Pattern::Pwrite
        )
    }
}

/// The open file of a pass.
enum Handle {
    Fd(File),
    Writer(BufWriter<File>),
    Reader(BufReader<File>),
}

impl Handle {
    fn fd(&self) -> RawFd {
        match self {
            Handle::Fd(f) => f.as_raw_fd(),
            Handle::Writer(w) => w.get_ref().as_raw_fd(),
            Handle::Reader(r) => r.get_ref().as_raw_fd(),
        }
    }
}

/// Opens thread `t`'s file for a pass, untimed: iozone's sequence for the figure.
fn open(plan: &IozonePlan, figure: Figure, p: Pattern, path: &Path) -> Result<Handle, EngineError> {
    let mut flags = libc::O_NOFOLLOW;
    let stdio = matches!(p, Pattern::StdioWrite | Pattern::StdioRead);
    // The stdio tests open with fopen(3), which takes no O_DIRECT or O_SYNC (as iozone's).
    if plan.direct && !stdio {
        flags |= libc::O_DIRECT;
    }
    if plan.osync && p.writes() && !stdio {
        flags |= libc::O_SYNC;
    }
    let mut o = File::options();
    o.mode(0o644);
    match p {
        Pattern::SeqRead | Pattern::Backward | Pattern::Stride | Pattern::Pread => {
            o.read(true);
        }
        Pattern::StdioRead => {
            o.read(true);
        }
        _ => {
            o.read(true).write(true);
        }
    }
    if figure == Figure::Write {
        // The write test measures allocating writes: a fresh, empty file.
        match fs::remove_file(path) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(io_err("unlink", path, e)),
        }
        o.create_new(true);
    } else if matches!(figure, Figure::Pwrite | Figure::Fwrite) {
        o.create(true);
    }
    let op = if figure == Figure::Write {
        "create"
    } else {
        "open"
    };
    let file = o
        .custom_flags(flags)
        .open(path)
        .map_err(|e| io_err(op, path, e))?;
    file.sync_all().map_err(|e| io_err("fsync", path, e))?;
    let len = plan.record as usize;
    Ok(match p {
        Pattern::StdioWrite => Handle::Writer(BufWriter::with_capacity(len, file)),
        Pattern::StdioRead => Handle::Reader(BufReader::with_capacity(len, file)),
        _ => Handle::Fd(file),
    })
}

/// A pass's file as a plain descriptor, its buffered writes written.
fn unbuffer(h: Handle, path: &Path) -> Result<File, EngineError> {
    Ok(match h {
        Handle::Fd(f) => f,
        Handle::Writer(w) => w
            .into_inner()
            .map_err(|e| io_err("write", path, e.into_error()))?,
        Handle::Reader(r) => r.into_inner(),
    })
}

/// Closes a pass's file, reporting the error (as iozone does).
fn close(file: File, path: &Path) -> Result<(), EngineError> {
    let fd = file.into_raw_fd();
    // SAFETY: we own the descriptor and close it once.
    if unsafe { libc::close(fd) } != 0 {
        return Err(io_err("close", path, io::Error::last_os_error()));
    }
    Ok(())
}

/// A failed record: the call, the offset, the error.
struct Fail {
    op: &'static str,
    offset: u64,
    source: io::Error,
}

#[inline(always)]
fn check_len(r: isize, len: usize, op: &'static str, offset: u64) -> Result<(), Fail> {
    if r == len as isize {
        return Ok(());
    }
    let source = if r < 0 {
        io::Error::last_os_error()
    } else if op == "read" || op == "pread" {
        io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "short read: the file is too short",
        )
    } else {
        io::Error::new(
            io::ErrorKind::WriteZero,
            format!("short write ({r} of {len} bytes)"),
        )
    };
    Err(Fail { op, offset, source })
}

#[inline(always)]
fn seek(fd: RawFd, offset: u64) -> Result<(), Fail> {
    // SAFETY: a plain syscall on a descriptor the pass owns.
    let r = unsafe { nocancel::lseek(fd, offset as libc::off_t, libc::SEEK_SET) };
    if r < 0 {
        return Err(Fail {
            op: "lseek",
            offset,
            source: io::Error::last_os_error(),
        });
    }
    Ok(())
}

/// The timed loop's bookkeeping.
struct Timing<'a> {
    clock: Clock,
    state: &'a AtomicU8,
    progress: &'a AtomicU64,
    record: u64,
    t0: u64,
    latency: LatencyHistogram,
    stonewall: Option<(u64, u64)>,
    ops: u64,
}

/// Runs `op` for records `0..n`, noting the stone-wall when it comes and, with `LAT`, one
/// clock reading per record (each record's latency is the time since the previous one's
/// end). Nothing else happens per record: no allocation, no lock.
#[inline(always)]
fn records<const LAT: bool>(
    tm: &mut Timing<'_>,
    n: u64,
    mut op: impl FnMut(u64) -> Result<(), Fail>,
) -> Result<(), Fail> {
    let mut prev = tm.t0;
    for i in 0..n {
        let s = tm.state.load(Ordering::Relaxed);
        if s != 0 {
            if s & ABORT != 0 {
                return Err(Fail {
                    op: "interrupted",
                    offset: 0,
                    source: io::Error::from(io::ErrorKind::Interrupted),
                });
            }
            if tm.stonewall.is_none() {
                let now = tm.clock.ticks();
                tm.stonewall = Some((i * tm.record, tm.clock.ns(now - tm.t0)));
            }
        }
        op(i)?;
        if LAT {
            let t = tm.clock.ticks();
            tm.latency.record(tm.clock.ns(t - prev));
            prev = t;
        }
        tm.ops = i + 1;
        tm.progress.store(i + 1, Ordering::Relaxed);
    }
    Ok(())
}

/// Both instances of the loop: with and without per-record latency.
macro_rules! each_record {
    ($lat:expr, $tm:expr, $n:expr, $op:expr) => {
        if $lat {
            records::<true>($tm, $n, $op)
        } else {
            records::<false>($tm, $n, $op)
        }
    };
}

fn child(t: u32, path: &Path, shared: &Shared<'_>) -> Result<Child, EngineError> {
    let _guard = AbortOnPanic([&shared.ready, &shared.go]);
    // A single-threaded program's cheap fd lookups for the pass's calls (iolab-engine's
    // fdtable: a shared table costs every read and write two atomics and a lock). The pass
    // opens and closes its file in this table.
    iolab_engine::fdtable::make_private();
    let plan = shared.plan;
    let reader = plan.mix_reader(t);
    let p = pattern(shared.figure, reader);
    let setup: Result<_, EngineError> = (|| {
        let h = open(plan, shared.figure, p, path)?;
        let buf = AlignedBuf::zeroed(plan.record)
            .map_err(|e| EngineError::alloc(format!("thread {t}'s record"), e))?;
        // One permutation per thread, the same for its random reads and writes (iozone
        // shuffles once with a fixed seed).
        let order = matches!(p, Pattern::RandRead | Pattern::RandWrite)
            .then(|| Order::random(plan.records, &mut Rng::stream(plan.seed, u64::from(t))));
        Ok((h, buf, order))
    })();
    if setup.is_err() {
        shared.failed.store(true, Ordering::Relaxed);
    }
    let released = shared.ready.wait() && shared.go.wait();
    let (mut h, mut buf, order) = setup?;
    if !released || shared.failed.load(Ordering::Relaxed) {
        // Another thread's set-up failed: that is the error reported.
        return Ok(Child {
            result: ChildResult::default(),
            latency: LatencyHistogram::default(),
            start: u64::MAX,
            end: 0,
        });
    }
    let clock = shared.clock;
    let rec = plan.record;
    let len = rec as usize;
    let n = plan.records;
    let fd = h.fd();
    // Priming: iozone's read test reads the first record and seeks back before its timer.
    if p == Pattern::SeqRead {
        // SAFETY: the buffer holds `len` bytes; the descriptor is the pass's own.
        let r = unsafe { nocancel::read(fd, buf.as_mut_ptr().cast::<libc::c_void>(), len) };
        check_len(r, len, "read", 0)
            .and_then(|()| seek(fd, 0))
            .map_err(|f| fail(path, f))?;
    }
    let ptr = buf.as_mut_ptr();
    // The timed region starts here: getrusage marks it.
    let cpu0 = CpuMark::now();
    let t0 = clock.ticks();
    let mut tm = Timing {
        clock,
        state: &shared.state,
        progress: &shared.progress[t as usize].0,
        record: rec,
        t0,
        latency: LatencyHistogram::default(),
        stonewall: None,
        ops: 0,
    };
    let lat = plan.latency;
    // SAFETY (all arms): `ptr` is valid for `len` bytes for the whole pass; `fd` is the
    // pass's own open descriptor.
    let r = match p {
        Pattern::SeqWrite => each_record!(lat, &mut tm, n, |i| {
            check_len(
                unsafe { nocancel::write(fd, ptr.cast::<libc::c_void>(), len) },
                len,
                "write",
                i * rec,
            )
        }),
        Pattern::SeqRead => each_record!(lat, &mut tm, n, |i| {
            check_len(
                unsafe { nocancel::read(fd, ptr.cast::<libc::c_void>(), len) },
                len,
                "read",
                i * rec,
            )
        }),
        Pattern::RandRead | Pattern::RandWrite => {
            let order = order.as_ref().expect("made for random patterns");
            let write = p == Pattern::RandWrite;
            each_record!(lat, &mut tm, n, |i| {
                let off = order.get(i) * rec;
                seek(fd, off)?;
                if write {
                    check_len(
                        unsafe { nocancel::write(fd, ptr.cast::<libc::c_void>(), len) },
                        len,
                        "write",
                        off,
                    )
                } else {
                    check_len(
                        unsafe { nocancel::read(fd, ptr.cast::<libc::c_void>(), len) },
                        len,
                        "read",
                        off,
                    )
                }
            })
        }
        Pattern::Backward => each_record!(lat, &mut tm, n, |i| {
            let off = (n - 1 - i) * rec;
            seek(fd, off)?;
            check_len(
                unsafe { nocancel::read(fd, ptr.cast::<libc::c_void>(), len) },
                len,
                "read",
                off,
            )
        }),
        Pattern::RecordRewrite => each_record!(lat, &mut tm, n, |_| {
            check_len(
                unsafe { nocancel::write(fd, ptr.cast::<libc::c_void>(), len) },
                len,
                "write",
                0,
            )?;
            seek(fd, 0)
        }),
        Pattern::Stride => {
            let (mut at, mut wraps) = (0u64, 0u64);
            each_record!(lat, &mut tm, n, |i| {
                if i > 0 {
                    at = stride_next(at, &mut wraps, n, plan.stride);
                }
                let off = at * rec;
                seek(fd, off)?;
                check_len(
                    unsafe { nocancel::read(fd, ptr.cast::<libc::c_void>(), len) },
                    len,
                    "read",
                    off,
                )
            })
        }
        Pattern::StdioWrite => {
            let Handle::Writer(w) = &mut h else {
                unreachable!("opened as a writer")
            };
            let data = &buf.as_slice()[..len];
            each_record!(lat, &mut tm, n, |i| {
                w.write_all(data).map_err(|source| Fail {
                    op: "fwrite",
                    offset: i * rec,
                    source,
                })
            })
        }
        Pattern::StdioRead => {
            let Handle::Reader(r) = &mut h else {
                unreachable!("opened as a reader")
            };
            let data = &mut buf.as_mut_slice()[..len];
            each_record!(lat, &mut tm, n, |i| {
                r.read_exact(data).map_err(|source| Fail {
                    op: "fread",
                    offset: i * rec,
                    source,
                })
            })
        }
        Pattern::Pwrite => each_record!(lat, &mut tm, n, |i| {
            let off = i * rec;
            check_len(
                unsafe {
                    nocancel::pwrite(fd, ptr.cast::<libc::c_void>(), len, off as libc::off_t)
                },
                len,
                "pwrite",
                off,
            )
        }),
        Pattern::Pread => each_record!(lat, &mut tm, n, |i| {
            let off = i * rec;
            check_len(
                unsafe { nocancel::pread(fd, ptr.cast::<libc::c_void>(), len, off as libc::off_t) },
                len,
                "pread",
                off,
            )
        }),
    };
    if let Err(f) = r {
        shared.state.fetch_or(ABORT, Ordering::Relaxed);
        if f.op == "interrupted" {
            return Err(EngineError::Interrupted);
        }
        return Err(fail(path, f));
    }
    // The first thread to finish its records raises the stone-wall (before its flush, as
    // iozone's children do).
    if plan.stonewall {
        shared.state.fetch_or(STONEWALL, Ordering::Relaxed);
    }
    // The flush: fsync, then close. The timer (and the CPU reading) stops before both
    // (excluded), between them (fsync) or after both (included).
    let f0 = clock.ticks();
    let mut stop = (plan.flush == Flush::Excluded).then(|| (f0, cpu0.since()));
    let file = unbuffer(h, path)?;
    file.sync_all().map_err(|e| io_err("fsync", path, e))?;
    if plan.flush == Flush::Fsync {
        stop = Some((clock.ticks(), cpu0.since()));
    }
    close(file, path)?;
    let f1 = clock.ticks();
    let (end, (usage, cpu_ns)) = stop.unwrap_or_else(|| (f1, cpu0.since()));
    let flush_ns = clock.ns(f1 - f0);
    Ok(Child {
        result: ChildResult {
            ops: tm.ops,
            bytes: tm.ops * rec,
            elapsed_ns: clock.ns(end - t0),
            flush_ns,
            stonewall: tm.stonewall,
            reads: !p.writes(),
            usage,
            cpu_ns,
        },
        latency: tm.latency,
        start: t0,
        end,
    })
}

fn fail(path: &Path, f: Fail) -> EngineError {
    EngineError::IoAt {
        op: f.op,
        path: path.to_path_buf(),
        offset: f.offset,
        source: f.source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::IozoneSpec;

    fn plan(dir: &Path, tests: &[Test], threads: u32) -> IozonePlan {
        let mut s = IozoneSpec::with_defaults(dir.to_path_buf(), 3);
        s.tests = tests.to_vec();
        s.size = 64 << 10;
        s.record = 4 << 10;
        s.threads = threads;
        s.validate().unwrap()
    }

    #[test]
    fn cpu_utilization_is_cpu_over_the_longest_window_as_iozone_computes_it() {
        // getrusage's figures are not used: only the scheduler's CPU time counts.
        let child = |elapsed_ms: u64, user_ms: u64, sys_ms: u64| ChildResult {
            elapsed_ns: elapsed_ms * 1_000_000,
            usage: Usage {
                user_ns: 999_000_000,
                ..Usage::default()
            },
            cpu_ns: (user_ms + sys_ms) * 1_000_000,
            ..ChildResult::default()
        };
        let figure = |children: Vec<ChildResult>| FigureResult {
            figure: Figure::Write,
            children,
            elapsed_ns: 0,
            parent_ns: 0,
            latency: LatencyHistogram::default(),
            usage: Usage::default(),
            purge_ns: 0,
            cached_bytes: None,
        };
        // One thread: 30 ms of user + 50 ms of system time in a 100 ms window.
        assert_eq!(figure(vec![child(100, 30, 50)]).cpu_utilization(), 80.0);
        // Two threads: their CPU adds up, over the longer window (100 ms): 150 %.
        let two = figure(vec![child(100, 10, 80), child(80, 0, 60)]);
        assert_eq!(two.cpu_utilization(), 150.0);
        // A window shorter than its thread's CPU time (clock granularity) counts as the CPU
        // time, so one thread never exceeds 100 %.
        assert_eq!(figure(vec![child(10, 8, 4)]).cpu_utilization(), 100.0);
        // Nothing timed: 0, not NaN.
        assert_eq!(figure(vec![child(0, 0, 0)]).cpu_utilization(), 0.0);
        assert_eq!(figure(Vec::new()).cpu_utilization(), 0.0);
    }

    #[test]
    fn without_retests_only_the_first_pass_of_each_test_runs() {
        let _hang = iolab_testkit::timeout(120);
        let dir = tempfile::tempdir().unwrap();
        let mut p = plan(dir.path(), &Test::ALL, 1);
        p.retests = false;
        let r = run_iozone(&p, &mut (), &mut (), &AtomicBool::new(false)).unwrap();
        let got: Vec<Figure> = r.figures.iter().map(|f| f.figure).collect();
        let want: Vec<Figure> = Figure::ALL.into_iter().filter(|f| !f.is_retest()).collect();
        assert_eq!(got, want);
        assert_eq!(p.test_figures().count(), Figure::ALL.len());
        // Every pass that ran did all its records, its CPU measured on the scheduler's clock.
        for f in &r.figures {
            assert_eq!(f.ops(), 16, "{}", f.figure);
            assert!(f.children[0].cpu_ns > 0, "{}", f.figure);
        }
        assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());
    }

    /// Records what the run asks between passes: the purge, and which data files exist and
    /// are open (through /proc/self/fd) at that moment.
    #[derive(Default)]
    struct Probe {
        purges: Vec<(Purge, usize, usize)>,
        /// Fail the purge with this number (1 = the first).
        fail_at: Option<usize>,
    }

    impl BetweenPasses for Probe {
        fn purge(&mut self, how: Purge, files: &[PathBuf]) -> Result<(), String> {
            let open = fs::read_dir("/proc/self/fd")
                .unwrap()
                .filter_map(|e| fs::read_link(e.ok()?.path()).ok())
                .filter(|target| files.contains(target))
                .count();
            let exist = files.iter().filter(|f| f.exists()).count();
            self.purges.push((how, exist, open));
            if self.fail_at == Some(self.purges.len()) {
                Err("the device went away".into())
            } else {
                Ok(())
            }
        }

        fn cached_bytes(&mut self, files: &[PathBuf]) -> Option<u64> {
            Some(files.len() as u64)
        }
    }

    #[test]
    fn the_purge_comes_before_every_pass_with_no_file_open() {
        let _hang = iolab_testkit::timeout(120);
        let dir = tempfile::tempdir().unwrap();
        let mut p = plan(dir.path(), &[Test::Write, Test::Read], 2);
        p.purge = Purge::Fadvise;
        let mut probe = Probe::default();
        let r = run_iozone(&p, &mut (), &mut probe, &AtomicBool::new(false)).unwrap();
        // write, rewrite, read, re-read: a purge before each; the write pass finds no file.
        assert_eq!(
            probe.purges,
            [
                (Purge::Fadvise, 0, 0),
                (Purge::Fadvise, 2, 0),
                (Purge::Fadvise, 2, 0),
                (Purge::Fadvise, 2, 0)
            ]
        );
        for f in &r.figures {
            assert!(f.purge_ns > 0, "{}", f.figure);
            assert_eq!(f.cached_bytes, Some(2), "{}", f.figure);
        }
        // Without a purge nothing is asked but the cache's contents.
        p.purge = Purge::None;
        let mut probe = Probe::default();
        let r = run_iozone(&p, &mut (), &mut probe, &AtomicBool::new(false)).unwrap();
        assert!(probe.purges.is_empty());
        assert!(r.figures.iter().all(|f| f.purge_ns == 0));
        // A purge that fails ends the run with its reason (here the third, with the files
        // written), and the files go.
        p.purge = Purge::Remount;
        let mut probe = Probe {
            fail_at: Some(3),
            ..Probe::default()
        };
        let e = run_iozone(&p, &mut (), &mut probe, &AtomicBool::new(false)).unwrap_err();
        assert_eq!(probe.purges.len(), 3);
        assert_eq!(probe.purges[2].1, 2, "the files existed when it failed");
        assert_eq!(e.to_string(), "purge = \"remount\": the device went away");
        // Without a system under test, a purge cannot be done.
        let e = run_iozone(&p, &mut (), &mut (), &AtomicBool::new(false)).unwrap_err();
        assert!(e.to_string().contains("needs the system under test"), "{e}");
        assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());
    }

    #[test]
    fn every_test_runs_every_record_and_leaves_nothing_behind() {
        let _hang = iolab_testkit::timeout(120);
        let dir = tempfile::tempdir().unwrap();
        let p = plan(dir.path(), &Test::ALL, 2);
        let r = run_iozone(&p, &mut (), &mut (), &AtomicBool::new(false)).unwrap();
        assert_eq!(r.figures.len(), Figure::ALL.len());
        for f in &r.figures {
            assert_eq!(f.ops(), 2 * 16, "{}", f.figure);
            assert_eq!(f.bytes(), 2 * (64 << 10), "{}", f.figure);
            assert_eq!(f.latency.count(), 32, "{}", f.figure);
            assert!(
                f.elapsed_ns > 0 && f.parent_ns >= f.elapsed_ns / 2,
                "{}",
                f.figure
            );
            // With two threads, at least one finished first: its bytes are all there.
            assert!(f.children.iter().any(|c| c.stonewall.is_none()));
            assert!(f.min_xfer() <= 64 << 10);
        }
        // Random mix without a percentage: thread 0 reads, thread 1 writes.
        let mix = r.figure(Figure::RandomMix).unwrap();
        assert!(mix.children[0].reads && !mix.children[1].reads);
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_read_only_run_writes_its_files_first() {
        let _hang = iolab_testkit::timeout(120);
        let dir = tempfile::tempdir().unwrap();
        let mut p = plan(dir.path(), &[Test::Backward], 1);
        p.latency = false;
        let r = run_iozone(&p, &mut (), &mut (), &AtomicBool::new(false)).unwrap();
        let f = &r.figures[0];
        assert_eq!(f.ops(), 16);
        assert_eq!(f.latency.count(), 0);
        // One thread: iozone's children figure is iolab's.
        assert!((f.children_see() - f.rate()).abs() <= 1e-9 * f.rate());
    }

    #[test]
    fn foreign_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("iolab-iozone.0")).unwrap();
        let p = plan(dir.path(), &[Test::Write], 1);
        let e = run_iozone(&p, &mut (), &mut (), &AtomicBool::new(false)).unwrap_err();
        assert!(matches!(e, EngineError::NotOurFile { .. }), "{e}");
        assert!(dir.path().join("iolab-iozone.0").is_dir());
    }
}
