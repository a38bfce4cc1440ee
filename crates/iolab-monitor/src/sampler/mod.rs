//! The periodic sampler: watches the machine on its own thread while a run goes on, and
//! returns time series and whole-run summaries.
//!
//! ```no_run
//! use std::time::{Duration, Instant};
//! use iolab_monitor::sampler::{devices_for, Sampler, SamplerConfig};
//!
//! let origin = Instant::now(); // the run's start, on the engine's clock
//! let cfg = SamplerConfig {
//!     interval: Duration::from_millis(100),
//!     devices: devices_for("loop3"), // loop3 and the disk holding its backing file
//!     ..SamplerConfig::default()
//! };
//! let sampler = Sampler::start(cfg, origin)?;
//! // ... run the workload ...
//! let samples = sampler.stop();
//! let read = samples.total("disk.loop3.read_bytes");
//! # Ok::<(), iolab_monitor::sampler::SamplerError>(())
//! ```
//!
//! # Timing
//!
//! [`Sampler::start`] spawns the thread, which takes a baseline sample at once, then one at
//! every `start + k·interval` (a deadline schedule: no drift; a tick that is late by more
//! than an interval is skipped, not made up in a burst). [`Sampler::stop`] takes a final
//! sample (its interval is shorter; unless a tick was taken less than a millisecond before,
//! which then is the final sample), so the totals cover everything up to the stop, and joins. `start` returns after the baseline, so
//! everything the caller does afterwards is inside the sampled period. Timestamps come from
//! [`Instant`] (`CLOCK_MONOTONIC`, the engine's clock), taken just before each sample is
//! read, as signed nanoseconds from the caller's `origin` (samples before it are negative).
//!
//! # Series
//!
//! A point of a rate series is the interval from the previous reading to this one, stamped
//! at its end; gauges (`mem.*`, `psi.*_avg10`) are stamped at every sample, the baseline
//! included. A series exists only once it has a point: a source the machine does not have
//! (PSI off, hardware perf counters in a VM) is absent, never a row of zeros.
//!
//! | metric | unit | from |
//! |---|---|---|
//! | `cpu.usr_pct`, `cpu.sys_pct` (system+irq+softirq), `cpu.iowait_pct`, `cpu.idle_pct`, `cpu.steal_pct` | % | `/proc/stat`, as iostat ([`crate::procstat::CpuTimes::percent_since`]) |
//! | `mem.used_bytes` (`free`'s used), `mem.cached_bytes`, `mem.dirty_bytes`, `mem.writeback_bytes` | bytes | `/proc/meminfo` |
//! | `mem.used_pct`, `mem.commit_pct` (Committed_AS / (MemTotal+SwapTotal), sar's %commit) | % | `/proc/meminfo` |
//! | `vm.pgfault_per_s`, `vm.pgmajfault_per_s` | 1/s | `/proc/vmstat` |
//! | `vm.pgpgin_kb_per_s`, `vm.pgpgout_kb_per_s` | kB/s | `/proc/vmstat` |
//! | `vm.pswpin_per_s`, `vm.pswpout_per_s` | pages/s | `/proc/vmstat` |
//! | `disk.D.r_per_s`, `w_per_s`, `rrqm_per_s`, `wrqm_per_s`, `d_per_s`, `f_per_s` | 1/s | `/proc/diskstats`, `iostat -x` ([`crate::diskstats::Iostat`]) |
//! | `disk.D.rkB_per_s`, `wkB_per_s`, `dkB_per_s` | kB/s | 〃 |
//! | `disk.D.r_await_ms`, `w_await_ms`, `f_await_ms` | ms | 〃 |
//! | `disk.D.rareq_sz_kB`, `wareq_sz_kB` | kB | 〃 |
//! | `disk.D.aqu_sz` | requests | 〃 |
//! | `disk.D.util_pct` | % | 〃 |
//! | `psi.{cpu_some,io_some,io_full,memory_some,memory_full}_avg10` | % | `/proc/pressure/*` |
//! | `psi.…_us_per_s` (stall time from the `total=` difference) | us/s | 〃 |
//! | `proc.ctx_voluntary_per_s`, `proc.ctx_involuntary_per_s`, `proc.minflt_per_s`, `proc.majflt_per_s` | 1/s | `/proc/PID/{status,stat}` |
//! | `proc.usr_pct`, `proc.sys_pct` (of one CPU, as pidstat: a process can exceed 100) | % | `/proc/PID/stat` |
//! | `perf.task_clock_ms_per_s` | ms/s | perf software counters, whole process |
//! | `perf.context_switches_per_s`, `perf.cpu_migrations_per_s`, `perf.page_faults_per_s` | 1/s | 〃 |
//! | `perf.cycles_per_s`, `perf.instructions_per_s` (only where the machine has a PMU) | 1/s | 〃 |
//!
//! # Summary
//!
//! Over the run window: from the first sample at or after `origin` to the last sample; only
//! intervals that start inside the window count. Whole-run rates and percentages carry the
//! same names as the series (`cpu.usr_pct`, `disk.vda.util_pct`, `disk.vda.r_await_ms`, …,
//! each computed from the summed counters over the window, not as a mean of interval
//! values); gauges give `NAME_avg` (mean of the window's samples) and `NAME_max`
//! (`mem.dirty_bytes_max`). Totals: `disk.D.{reads,writes,reads_merged,writes_merged,
//! read_bytes,write_bytes,discards,discard_bytes,flushes,busy_ms,tps}`, `cpu.busy_s` (CPU
//! seconds not idle, waiting or stolen, all CPUs) and `cpu.total_s`, `vm.{pgfault,pgmajfault,
//! pgpgin_kb,pgpgout_kb,pswpin,pswpout}`, `psi.…_stall_s` and `psi.…_pct`, `proc.{cpu_s,
//! usr_s,sys_s,ctx_voluntary,ctx_involuntary,minflt,majflt}`, `proc.task_clock_s`,
//! `perf.cpus_utilized`, `perf.{context_switches,cpu_migrations,page_faults}`, and
//! `sampler.{samples,interval_s,window_s}`. [`Samples::total`] looks one up.
//!
//! # Robustness
//!
//! - Disk counters: a 32-bit counter that wrapped is undone; a counter that went backwards
//!   otherwise makes the device's interval unusable, and it is skipped (no point, nothing
//!   added to the totals), except when the whole device looks removed and re-added, which
//!   counts from zero as iostat does ([`crate::diskstats::DiskDelta::between_checked`]).
//! - A watched device absent at start starts its series when it appears: its counters
//!   began within that interval and are taken whole. A device that disappears stops its
//!   series; a name that comes back with another device number counts as new.
//! - A file that cannot be read or parsed leaves that source out of that sample; its next
//!   interval then spans from the last good reading. The first problem of each source is
//!   kept in [`Samples::notes`]. Nothing is printed, nothing panics on odd /proc text.
//!
//! # Cost
//!
//! Each tick reads nine small files (`/proc/stat`, `meminfo`, `vmstat`, `diskstats`, three
//! pressure files, `/proc/PID/stat` and `status`) through file handles kept open and
//! buffers reused, plus one `read(2)` per perf counter and thread that existed at start.
//! Memory grows only with the series.
//!
//! # perf
//!
//! With `perf: true` the software counters (and hardware ones where present) are opened for
//! every thread of the process that exists at start (except the sampler's own thread), with
//! `inherit = 1`, so threads created later are counted too (see `perfset.rs`). Counting
//! another process needs the right to trace it; a counter the kernel refuses is reported
//! in the notes and left out.

/// See the final sample in [`run`].
const FINAL_SAMPLE_MIN_GAP: Duration = Duration::from_millis(1);

mod collect;
mod perfset;
mod source;

#[cfg(test)]
mod tests;

use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use iolab_sys::DevT;
use iolab_sys::SysBlock;

use collect::Collector;
use perfset::ProcessPerf;
use source::Reader;

/// What to watch and how often.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SamplerConfig {
    /// Time between samples (default 1 s). Tens of milliseconds work; CPU percentages then
    /// rest on few `USER_HZ` ticks per interval and are coarse (an interval without a tick
    /// has no CPU point).
    pub interval: Duration,
    /// Kernel names of the block devices to watch, as in `/proc/diskstats` (`loop3`, `vda`,
    /// `dm-0`); [`devices_for`] adds what a device sits on. Empty: no disk series.
    pub devices: Vec<String>,
    /// The process whose counters to follow; `None`: this process.
    pub pid: Option<u32>,
    /// Open perf counters for that process (default true).
    pub perf: bool,
}

impl Default for SamplerConfig {
    fn default() -> Self {
        SamplerConfig {
            interval: Duration::from_secs(1),
            devices: Vec::new(),
            pid: None,
            perf: true,
        }
    }
}

/// Why a sampler did not start.
#[derive(Debug, thiserror::Error)]
pub enum SamplerError {
    /// The interval was zero.
    #[error("sampler interval must be longer than 0")]
    ZeroInterval,
    /// `/proc/PID` does not exist.
    #[error("no process {0} to watch (/proc/{0} does not exist)")]
    NoSuchProcess(u32),
    /// The thread could not be created.
    #[error("cannot start the sampler thread: {0}")]
    Spawn(#[source] std::io::Error),
    /// The thread ended before its first sample.
    #[error("the sampler thread ended before its first sample")]
    ThreadDied,
}

/// One time series.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Series {
    /// Metric name (see the module documentation).
    pub metric: String,
    /// Unit of the values.
    pub unit: String,
    /// (nanoseconds from the origin, value), in time order.
    pub points: Vec<(i64, f64)>,
}

/// What a sampler saw.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Samples {
    /// The series, in order of first appearance.
    pub series: Vec<Series>,
    /// Whole-run values: (metric, value, unit).
    pub summary: Vec<(String, f64, String)>,
    /// Sources that were missing or unreadable, and why (one note per source).
    pub notes: Vec<String>,
}

impl Samples {
    /// The whole-run value of `metric`.
    pub fn total(&self, metric: &str) -> Option<f64> {
        self.summary
            .iter()
            .find(|(m, _, _)| m == metric)
            .map(|&(_, v, _)| v)
    }

    /// The series of `metric`.
    pub fn series(&self, metric: &str) -> Option<&Series> {
        self.series.iter().find(|s| s.metric == metric)
    }
}

/// A running sampler; [`stop`](Self::stop) it to get the [`Samples`]. Dropping it stops the
/// thread and discards the samples.
#[derive(Debug)]
pub struct Sampler {
    stop_tx: Option<mpsc::Sender<()>>,
    handle: Option<JoinHandle<Samples>>,
}

impl Sampler {
    /// Start sampling; offsets are relative to `origin` (the run's start). Returns after
    /// the baseline sample has been taken.
    pub fn start(cfg: SamplerConfig, origin: Instant) -> Result<Sampler, SamplerError> {
        if cfg.interval.is_zero() {
            return Err(SamplerError::ZeroInterval);
        }
        let pid = cfg.pid.unwrap_or_else(std::process::id);
        if !Path::new(&format!("/proc/{pid}")).exists() {
            return Err(SamplerError::NoSuchProcess(pid));
        }
        let (stop_tx, stop_rx) = mpsc::channel::<()>();
        let (ready_tx, ready_rx) = mpsc::sync_channel::<()>(1);
        let handle = std::thread::Builder::new()
            .name("iolab-sampler".into())
            .spawn(move || run(cfg, pid, origin, stop_rx, ready_tx))
            .map_err(SamplerError::Spawn)?;
        if ready_rx.recv().is_err() {
            let _ = handle.join();
            return Err(SamplerError::ThreadDied);
        }
        Ok(Sampler {
            stop_tx: Some(stop_tx),
            handle: Some(handle),
        })
    }

    /// Take a final sample, end the thread, and return everything.
    pub fn stop(mut self) -> Samples {
        self.finish()
    }

    fn finish(&mut self) -> Samples {
        if let Some(tx) = self.stop_tx.take() {
            let _ = tx.send(());
        }
        match self.handle.take().map(JoinHandle::join) {
            Some(Ok(s)) => s,
            Some(Err(_)) => Samples {
                notes: vec!["the sampler thread panicked; no samples".into()],
                ..Samples::default()
            },
            None => Samples::default(),
        }
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        if self.handle.is_some() {
            self.finish();
        }
    }
}

/// The sampler thread.
fn run(
    cfg: SamplerConfig,
    pid: u32,
    origin: Instant,
    stop: mpsc::Receiver<()>,
    ready: mpsc::SyncSender<()>,
) -> Samples {
    let mut notes = Vec::new();
    let perf = if cfg.perf {
        let (p, n) = ProcessPerf::open(pid, crate::process::gettid());
        notes.extend(n);
        p
    } else {
        None
    };
    let mut reader = Reader::new(pid, cfg.devices.clone(), perf);
    let mut col = Collector::new(
        origin,
        cfg.interval,
        &cfg.devices,
        crate::process::clock_ticks(),
        notes,
    );
    let start = Instant::now();
    let mut last = start;
    col.push(reader.sample());
    let _ = ready.send(());
    let mut k: u32 = 1;
    loop {
        let wait = tick_deadline(start, cfg.interval, k).map_or(Duration::MAX, |deadline| {
            deadline.saturating_duration_since(Instant::now())
        });
        match stop.recv_timeout(wait) {
            Err(RecvTimeoutError::Timeout) => {
                last = Instant::now();
                col.push(reader.sample());
                k = next_tick(start.elapsed(), cfg.interval);
            }
            Ok(()) | Err(RecvTimeoutError::Disconnected) => {
                // The final sample is what makes the totals whole: everything done since
                // the last tick counts. Only a tick taken within the last millisecond
                // stands in for it (an interval that short has no meaningful rates).
                if k == 1 || last.elapsed() >= FINAL_SAMPLE_MIN_GAP {
                    col.push(reader.sample());
                }
                break;
            }
        }
    }
    col.finish()
}

/// Tick `k` is due at `start + k·interval`: on a fixed grid, so the ticks do not drift by
/// the time each sample takes. `None` beyond what an `Instant` can hold.
fn tick_deadline(start: Instant, interval: Duration, k: u32) -> Option<Instant> {
    interval.checked_mul(k).and_then(|d| start.checked_add(d))
}

/// The tick to wait for `elapsed` after the start: the first grid point still ahead, so late
/// ticks are skipped, not taken in a burst.
fn next_tick(elapsed: Duration, interval: Duration) -> u32 {
    let n = elapsed.as_nanos() / interval.as_nanos().max(1);
    u32::try_from(n.saturating_add(1)).unwrap_or(u32::MAX)
}

/// `name` and every device below it: slaves (dm, md), the whole disk of a partition, and
/// for a loop device the device holding its backing file (`st_dev`), recursively (e.g.
/// `loop3` → `vda`). `name` may also be a path such as `/dev/mapper/x`. Whatever sysfs
/// cannot tell is left out; `name` itself is always first.
pub fn devices_for(name: &str) -> Vec<String> {
    devices_for_in(&SysBlock::system(), name)
}

/// [`devices_for`] of the device holding the filesystem at `path` (empty when that
/// filesystem has no block device of its own: tmpfs, overlayfs, btrfs).
pub fn devices_for_path(path: impl AsRef<Path>) -> Vec<String> {
    let sys = SysBlock::system();
    match DevT::of_file(path.as_ref())
        .ok()
        .and_then(|d| sys.name_of(d).ok().flatten())
    {
        Some(name) => devices_for_in(&sys, &name),
        None => Vec::new(),
    }
}

fn devices_for_in(sys: &SysBlock, name: &str) -> Vec<String> {
    let name = kernel_name(sys, name);
    let mut out = vec![name.clone()];
    for p in sys.ancestors(&name).unwrap_or_default() {
        if !out.contains(&p) {
            out.push(p);
        }
    }
    out
}

/// `/dev/...` paths (including symlinks such as `/dev/mapper/x`) to the kernel name.
fn kernel_name(sys: &SysBlock, name: &str) -> String {
    if name.starts_with('/') {
        if let Ok(m) = std::fs::metadata(name) {
            if m.file_type().is_block_device() {
                if let Ok(Some(n)) = sys.name_of(DevT::from_raw(m.rdev())) {
                    return n;
                }
            }
        }
        return name.rsplit('/').next().unwrap_or(name).to_owned();
    }
    name.to_owned()
}
