//! Runs a bonnie plan: one worker thread (with a private descriptor table, as the engine's
//! other workers) runs the phases in bonnie++'s order; the calling thread reports progress
//! and passes on Ctrl-C. Each phase is timed from its first call to the `fsync` + `close`
//! (or the global `sync()`) that ends it, as bonnie++ times it; what bonnie++ does
//! untimed between phases (re-creating or re-opening the file, making directories, naming
//! and shuffling files) is untimed here too.

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use iolab_engine::clock::Clock;
use iolab_engine::files::{check_dir, existing_file};
use iolab_engine::gate::{worker_builder, AbortOnPanic, FinishLine, Gate, PROGRESS_PERIOD};
use iolab_engine::stats::LatencyHistogram;
use iolab_engine::usage::{CpuMark, Usage};
use iolab_engine::EngineError;
use iolab_kind::RunHooks;
use iolab_util::phrase;
use iolab_util::setting::opt;
use serde::Serialize;

use crate::error::BonnieError;
use crate::options::BonniePlan;
use crate::phase::{Phase, RateUnit};

/// bonnie++'s `MinTime`: a phase shorter than this gets `+++++` instead of a number there.
/// iolab measures it anyway and says how precise the figure is.
pub const MIN_TIME: Duration = Duration::from_millis(500);

/// The test file in `dir` (bonnie++: `Bonnie.<pid>`).
pub fn data_file(dir: &Path) -> PathBuf {
    dir.join("iolab-bonnie")
}

/// The directory of the file phases in `dir`.
pub fn file_dir(dir: &Path) -> PathBuf {
    dir.join("iolab-bonnie.d")
}

/// What one phase measured.
#[derive(Debug, Clone)]
pub struct PhaseResult {
    pub phase: Phase,
    /// From its first call to the end of its closing `fsync`/`close` or `sync()`.
    pub elapsed_ns: u64,
    /// Timed operations: chunks (per-char: chunks of 1-byte calls), seeks or files.
    pub ops: u64,
    /// Bytes of the phase: the per-char size, the file (the rewrite, which reads and
    /// writes it, counts it once, as bonnie++ does), the seeks' chunks read and rewritten,
    /// the files' data.
    pub bytes: u64,
    /// CPU time of the threads that did the phase, over the phase, from
    /// `CLOCK_THREAD_CPUTIME_ID` (exact to the nanosecond, where getrusage's user/system
    /// split is only as fine as the scheduler tick: a few milliseconds).
    pub cpu_ns: u64,
    /// getrusage of those threads over the phase: the user/system split, context switches.
    pub usage: Usage,
    /// Per operation.
    pub latency: LatencyHistogram,
    /// How far the elapsed time may be off: two reads of iolab's clock (when the phase
    /// starts and when it ends).
    pub timing_error_ns: u64,
    /// Threads that did it (the seekers; 1 otherwise).
    pub threads: u32,
}

/// The figures of a phase, as the formats and the JSON show them.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PhaseFigures {
    /// MiB/s, seeks/s or files/s.
    pub rate: f64,
    /// CPU time over elapsed time, in percent (above 100 with several seekers).
    pub cpu_pct: f64,
    pub max_latency_ns: u64,
    /// Shorter than bonnie++'s 0.5 s.
    pub short: bool,
    /// The rate's relative uncertainty from timing alone (± fraction).
    pub rel_error: f64,
}

impl PhaseResult {
    fn per_s(&self, x: f64) -> f64 {
        if self.elapsed_ns == 0 {
            f64::NAN
        } else {
            x * 1e9 / self.elapsed_ns as f64
        }
    }

    /// MiB/s for the I/O phases, seeks or files per second for the others.
    pub fn rate(&self) -> f64 {
        match self.phase.unit() {
            RateUnit::Bytes => self.per_s(self.bytes as f64) / 1048576.0,
            RateUnit::Seeks | RateUnit::Files => self.ops_per_s(),
        }
    }

    pub fn ops_per_s(&self) -> f64 {
        self.per_s(self.ops as f64)
    }

    /// bonnie++'s own unit for the I/O phases (K/sec; 1 K = 1024 bytes).
    pub fn kib_per_s(&self) -> f64 {
        self.per_s(self.bytes as f64) / 1024.0
    }

    /// CPU time over elapsed time, in percent, as bonnie++ computes `%CP`.
    pub fn cpu_pct(&self) -> f64 {
        self.per_s(self.cpu_ns as f64 / 1e9) * 100.0
    }

    /// Shorter than bonnie++'s [`MIN_TIME`]: bonnie++ would print `+++++`.
    pub fn short(&self) -> bool {
        self.elapsed_ns < MIN_TIME.as_nanos() as u64
    }

    /// The relative uncertainty of the rate from timing alone.
    pub fn rel_error(&self) -> f64 {
        if self.elapsed_ns == 0 {
            f64::INFINITY
        } else {
            self.timing_error_ns as f64 / self.elapsed_ns as f64
        }
    }

    pub fn figures(&self) -> PhaseFigures {
        PhaseFigures {
            rate: self.rate(),
            cpu_pct: self.cpu_pct(),
            max_latency_ns: self.latency.summary().max_ns,
            short: self.short(),
            rel_error: self.rel_error(),
        }
    }
}

/// What a bonnie run measured.
#[derive(Debug, Clone)]
pub struct BonnieResult {
    pub plan: BonniePlan,
    /// The phases that ran, in order.
    pub phases: Vec<PhaseResult>,
    /// From the start of the first phase to the end of the last (untimed steps between
    /// phases included).
    pub elapsed_ns: u64,
    /// The cost of one read of iolab's clock, measured before the run.
    pub clock_read_ns: u64,
    pub clock_tsc: bool,
    pub file: PathBuf,
    pub file_dir: PathBuf,
}

impl BonnieResult {
    pub fn phase(&self, phase: Phase) -> Option<&PhaseResult> {
        self.phases.iter().find(|p| p.phase == phase)
    }

    /// CPU time of all phases (`CLOCK_THREAD_CPUTIME_ID`).
    pub fn cpu_ns(&self) -> u64 {
        self.phases.iter().map(|p| p.cpu_ns).sum()
    }

    /// getrusage of all phases.
    pub fn usage(&self) -> Usage {
        self.phases
            .iter()
            .fold(Usage::default(), |a, p| a + p.usage)
    }
}

/// State the worker thread shares with the calling thread.
pub(crate) struct Shared<'a> {
    pub plan: &'a BonniePlan,
    pub clock: Clock,
    pub cancel: &'a AtomicBool,
    /// Timed operations finished, as the worker counts them.
    pub progress: AtomicU64,
    /// Seeks claimed so far in the seek phase (the seekers' shared counter).
    pub seeks_claimed: AtomicU64,
    pub ready: Gate,
    pub go: Gate,
    pub path: PathBuf,
    pub cpath: CString,
    pub dir: PathBuf,
}

/// The worker's running state.
pub(crate) struct Worker<'a, 's> {
    pub shared: &'a Shared<'s>,
    pub done: u64,
    pub results: Vec<PhaseResult>,
    pub timing_error_ns: u64,
    /// What this run made, for the clean-up after a failure.
    pub made_file: bool,
    pub made_dir: bool,
}

/// The start of a timed phase.
pub(crate) struct Started {
    ticks: u64,
    cpu: CpuMark,
}

impl Worker<'_, '_> {
    pub fn plan(&self) -> &BonniePlan {
        self.shared.plan
    }

    pub fn clock(&self) -> Clock {
        self.shared.clock
    }

    /// One timed operation finished: publishes the count, and stops on Ctrl-C.
    #[inline]
    pub fn tick(&mut self) -> Result<(), BonnieError> {
        self.done += 1;
        self.shared.progress.store(self.done, Ordering::Relaxed);
        if self.shared.cancel.load(Ordering::Relaxed) {
            return Err(EngineError::Interrupted.into());
        }
        Ok(())
    }

    pub fn start(&self) -> Started {
        let cpu = CpuMark::now();
        Started {
            ticks: self.shared.clock.ticks(),
            cpu,
        }
    }

    /// Ends the timed phase begun at `s`.
    pub fn finish(
        &mut self,
        phase: Phase,
        s: Started,
        ops: u64,
        bytes: u64,
        latency: LatencyHistogram,
    ) {
        let end = self.shared.clock.ticks();
        let (usage, cpu_ns) = s.cpu.since();
        self.results.push(PhaseResult {
            phase,
            elapsed_ns: self.shared.clock.ns(end.saturating_sub(s.ticks)),
            ops,
            bytes,
            cpu_ns,
            usage,
            latency,
            timing_error_ns: self.timing_error_ns,
            threads: 1,
        });
    }
}

/// An error of `op` on `path`.
pub(crate) fn io_err(op: &'static str, path: &Path, e: io::Error) -> BonnieError {
    EngineError::Io {
        op,
        path: path.to_path_buf(),
        source: e,
    }
    .into()
}

/// Runs `plan`. On failure, what the run created is removed.
pub fn run_bonnie(
    plan: &BonniePlan,
    hooks: &mut dyn RunHooks,
) -> Result<BonnieResult, BonnieError> {
    run_bonnie_cancellable(plan, hooks, &AtomicBool::new(false))
}

/// [`run_bonnie`] that ends early with an interruption once `cancel` is set: within a timed
/// operation (a chunk, a seek, a file). What the run created is removed.
pub fn run_bonnie_cancellable(
    plan: &BonniePlan,
    hooks: &mut dyn RunHooks,
    cancel: &AtomicBool,
) -> Result<BonnieResult, BonnieError> {
    prepare(plan)?;
    let path = data_file(&plan.dir);
    let shared = Shared {
        plan,
        clock: Clock::new(),
        cancel,
        progress: AtomicU64::new(0),
        seeks_claimed: AtomicU64::new(0),
        ready: Gate::new(2),
        go: Gate::new(2),
        cpath: CString::new(path.as_os_str().as_bytes()).map_err(|_| {
            EngineError::Workload(format!("{} has a NUL byte in its name", path.display()))
        })?,
        path,
        dir: file_dir(&plan.dir),
    };
    let clock_read_ns = clock_read_ns(&shared.clock);
    let planned = plan.planned_ops();
    let line = FinishLine::new(1);
    let (outcome, elapsed_ns) = thread::scope(|s| {
        let shared = &shared;
        let line = &line;
        let h = worker_builder("iolab-bonnie".into(), 0, None).spawn_scoped(s, move || {
            let _signed = line.sign();
            worker(shared, clock_read_ns)
        });
        let h = match h {
            Ok(h) => h,
            Err(e) => {
                return (
                    Err(EngineError::Spawn {
                        wanted: 1,
                        started: 0,
                        source: e,
                    }
                    .into()),
                    0,
                )
            }
        };
        if !shared.ready.wait() {
            shared.go.abort();
            return (join(h), 0);
        }
        hooks.timed_start();
        let start = Instant::now();
        if !shared.go.wait() {
            return (join(h), 0);
        }
        line.wait(PROGRESS_PERIOD, || {
            let claimed = shared
                .seeks_claimed
                .load(Ordering::Relaxed)
                .min(u64::from(plan.seeks));
            let done = shared.progress.load(Ordering::Relaxed) + claimed;
            hooks.records(done.min(planned), planned, start.elapsed());
        });
        let out = join(h);
        let elapsed = start.elapsed().as_nanos() as u64;
        hooks.timed_end();
        (out, elapsed)
    });
    let phases = outcome?;
    Ok(BonnieResult {
        plan: plan.clone(),
        phases,
        elapsed_ns,
        clock_read_ns,
        clock_tsc: shared.clock.uses_tsc(),
        file: shared.path.clone(),
        file_dir: shared.dir.clone(),
    })
}

fn join(
    h: thread::ScopedJoinHandle<'_, Result<Vec<PhaseResult>, BonnieError>>,
) -> Result<Vec<PhaseResult>, BonnieError> {
    h.join()
        .unwrap_or_else(|p| Err(EngineError::from_panic(p).into()))
}

/// The cheapest of a few back-to-back clock reads, in nanoseconds (at least 1).
fn clock_read_ns(clock: &Clock) -> u64 {
    (0..64)
        .map(|_| {
            let a = clock.ticks();
            let b = clock.ticks();
            clock.ns(b.saturating_sub(a))
        })
        .min()
        .unwrap_or(0)
        .max(1)
}

/// Checks the directory, that the run's names are free (or a file iolab may replace), and
/// that the test file and the files of the file phases fit: before anything is created.
fn prepare(plan: &BonniePlan) -> Result<(), BonnieError> {
    check_dir(&plan.dir)?;
    if plan.size > 0 {
        existing_file(&data_file(&plan.dir))?;
    }
    let dir = file_dir(&plan.dir);
    if plan.files > 0 && std::fs::symlink_metadata(&dir).is_ok() {
        return Err(BonnieError::Leftover(dir));
    }
    let Some(fs) = statvfs(&plan.dir) else {
        return Ok(());
    };
    let block = fs.block.max(1);
    let round = |n: u64| n.div_ceil(block).saturating_mul(block);
    // A replaced test file gives its space back.
    let reclaim = std::fs::symlink_metadata(data_file(&plan.dir))
        .map(|m| std::os::unix::fs::MetadataExt::blocks(&m) * 512)
        .unwrap_or(0);
    let free = fs.free_bytes.saturating_add(reclaim);
    if plan.size > 0 && round(plan.size) > free {
        return Err(BonnieError::NoSpace {
            what: phrase!("the test file ({} {})", opt("size"), plan.size),
            dir: plan.dir.clone(),
            needed: round(plan.size),
            free,
        });
    }
    if plan.files > 0 {
        let needed = plan.files.saturating_mul(round(plan.max_file_size));
        if needed > free {
            return Err(BonnieError::NoSpace {
                what: phrase!(
                    "{} files of up to {} bytes ({}, {})",
                    plan.files,
                    plan.max_file_size,
                    opt("files"),
                    opt("max_file_size")
                ),
                dir: plan.dir.clone(),
                needed,
                free,
            });
        }
        let inodes = plan.files + u64::from(plan.dirs) + 1;
        if let Some(free) = fs.free_inodes.filter(|&f| inodes > f) {
            return Err(BonnieError::TooManyFiles {
                dir: plan.dir.clone(),
                files: inodes,
                free,
            });
        }
    }
    Ok(())
}

struct FsSpace {
    block: u64,
    free_bytes: u64,
    /// `None` where the filesystem has no fixed number of inodes (btrfs reports 0).
    free_inodes: Option<u64>,
}

fn statvfs(dir: &Path) -> Option<FsSpace> {
    let c = CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: statvfs fills the zeroed struct; the path is NUL-terminated.
    let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut s) } != 0 {
        return None;
    }
    let frsize = s.f_frsize as u64;
    Some(FsSpace {
        block: frsize,
        free_bytes: (s.f_bavail as u64).saturating_mul(frsize),
        free_inodes: (s.f_files > 0).then_some(s.f_favail as u64),
    })
}

/// The worker thread: waits for the start, runs the phases, cleans up after a failure.
fn worker(shared: &Shared<'_>, clock_read_ns: u64) -> Result<Vec<PhaseResult>, BonnieError> {
    let _guard = AbortOnPanic([&shared.ready, &shared.go]);
    iolab_engine::fdtable::make_private();
    if !(shared.ready.wait() && shared.go.wait()) {
        return Ok(Vec::new());
    }
    let mut w = Worker {
        shared,
        done: 0,
        results: Vec::new(),
        timing_error_ns: 2 * clock_read_ns,
        made_file: false,
        made_dir: false,
    };
    let r = phases(&mut w);
    if r.is_err() {
        if w.made_file {
            let _ = std::fs::remove_file(&shared.path);
        }
        if w.made_dir {
            let _ = std::fs::remove_dir_all(&shared.dir);
        }
    }
    r.map(|()| w.results)
}

fn phases(w: &mut Worker<'_, '_>) -> Result<(), BonnieError> {
    let plan = w.plan().clone();
    if plan.size > 0 {
        crate::io::run(w)?;
        // bonnie++ removes its file when the I/O phases end, before the file phases.
        std::fs::remove_file(&w.shared.path).map_err(|e| io_err("unlink", &w.shared.path, e))?;
        w.made_file = false;
    }
    if plan.files > 0 {
        crate::files::run(w)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::{BonnieSpec, Phases};

    fn small(dir: &Path) -> BonnieSpec {
        let mut s = BonnieSpec::with_defaults(dir.to_path_buf(), 7);
        s.size = Some(1 << 20);
        s.chunk_size = 4096;
        s.char_size = 64 << 10;
        s.files = 1;
        s.max_file_size = 2000;
        s.min_file_size = 100;
        s.dirs = 3;
        s.file_chunk_size = 512;
        s.seekers = 3;
        s.seeks = 500;
        s
    }

    #[test]
    fn every_phase_runs_measures_and_cleans_up() {
        let _hang = iolab_testkit::timeout(300);
        let dir = tempfile::tempdir().unwrap();
        let plan = small(dir.path()).validate().unwrap();
        let r = run_bonnie(&plan, &mut ()).unwrap();
        let names: Vec<Phase> = r.phases.iter().map(|p| p.phase).collect();
        assert_eq!(names, Phase::ALL.to_vec());
        for p in &r.phases {
            assert_eq!(p.ops, plan.ops(p.phase), "{:?}", p.phase);
            assert_eq!(p.latency.count(), p.ops, "{:?}", p.phase);
            assert!(p.elapsed_ns > 0 && p.rate() > 0.0, "{:?}", p.phase);
            assert!(p.rel_error() < 0.01, "{:?}: {}", p.phase, p.rel_error());
        }
        assert!(
            r.phase(Phase::Putc).unwrap().short(),
            "64 KiB a byte at a time"
        );
        assert_eq!(r.phase(Phase::Putc).unwrap().bytes, 64 << 10);
        assert_eq!(r.phase(Phase::PutBlock).unwrap().bytes, 1 << 20);
        assert_eq!(r.phase(Phase::Rewrite).unwrap().bytes, 1 << 20);
        assert_eq!(r.phase(Phase::Seeks).unwrap().threads, 3);
        let created = r.phase(Phase::SeqCreate).unwrap().bytes;
        assert!((1024 * 100..=1024 * 2000).contains(&created), "{created}");
        assert_eq!(r.phase(Phase::SeqStat).unwrap().bytes, created);
        // Nothing is left behind.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn an_interrupted_run_removes_what_it_made() {
        let _hang = iolab_testkit::timeout(300);
        let dir = tempfile::tempdir().unwrap();
        let mut s = small(dir.path());
        s.phases = Phases::Files;
        let plan = s.validate().unwrap();
        let cancel = AtomicBool::new(true);
        let e = run_bonnie_cancellable(&plan, &mut (), &cancel).unwrap_err();
        assert!(e.is_interrupted(), "{e}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn files_that_do_not_fit_are_refused_before_anything_is_made() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = small(dir.path());
        s.size = Some(1 << 60);
        let e = run_bonnie(&s.validate().unwrap(), &mut ()).unwrap_err();
        assert!(matches!(e, BonnieError::NoSpace { .. }), "{e}");
        assert!(e.is_bad_input());
        std::fs::create_dir(file_dir(dir.path())).unwrap();
        let e = run_bonnie(&small(dir.path()).validate().unwrap(), &mut ()).unwrap_err();
        assert!(matches!(e, BonnieError::Leftover(_)), "{e}");
        std::fs::remove_dir(file_dir(dir.path())).unwrap();
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
