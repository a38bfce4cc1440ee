//! Every command's output: one module per kind of result, one file per format behind the
//! one-method [`Formatter`] trait (hyperfine's `export/`), and the JSON stamp in [`json`].
//! Results go to stdout through [`emit`] only (pipe-safe); messages go to stderr through
//! `say!`.
//!
//! Adding a format: a file with a unit struct implementing `Formatter<TheResult>`, and a line
//! where the command picks it. JSON needs no file: implement [`json::Document`] for the result
//! (one line) and use [`json::Json`].

pub mod bonnie;
pub mod cachesim;
pub mod check;
pub mod compare;
pub mod context;
pub mod export;
pub mod iozone;
pub mod json;
pub mod list;
pub(crate) mod micro;
pub mod report;
pub mod run;
pub mod show;
mod sqlite;
pub mod trace;
pub mod workloads;

use std::io::{self, Write};
use std::time::SystemTime;

use iolab_engine::MicroResult;
use iolab_monitor::procstat::{CpuPercent, CpuTimes};

use crate::cli::Format;

/// A single run's engine result (`R`) plus what was observed around it.
pub struct SingleReport<R> {
    pub result: R,
    /// System-wide CPU times at the start and end of the timed region.
    pub system_cpu: Option<(CpuTimes, CpuTimes)>,
    pub host: Host,
    pub started_at: SystemTime,
    /// What the checks found about the run.
    pub findings: Vec<iolab_store::Finding>,
    /// The machine during the run (whole-run values of the monitors' summary metrics).
    pub system: serde_json::Map<String, serde_json::Value>,
}

/// Numbers every format derives the same way.
pub struct Derived {
    pub elapsed_s: f64,
    pub bytes_per_s: f64,
    pub iops: f64,
    /// Worker CPU time over elapsed time, in percent of one core.
    pub usr_pct: f64,
    pub sys_pct: f64,
    pub system: Option<CpuPercent>,
}

/// `iolab micro`'s result.
pub type MicroReport = SingleReport<MicroResult>;
/// `iolab sqlite`'s result.
pub type SqliteReport = SingleReport<iolab_sqlite::SqliteResult>;

impl MicroReport {
    pub fn derived(&self) -> Derived {
        let r = &self.result;
        let elapsed_s = r.elapsed_ns as f64 / 1e9;
        let per_s = |x: f64| if elapsed_s > 0.0 { x / elapsed_s } else { 0.0 };
        Derived {
            elapsed_s,
            bytes_per_s: per_s(r.bytes as f64),
            iops: per_s(r.ops as f64),
            usr_pct: per_s(r.usage.user_ns as f64 / 1e9) * 100.0,
            sys_pct: per_s(r.usage.sys_ns as f64 / 1e9) * 100.0,
            system: self.system_cpu.map(|(a, b)| b.percent_since(&a)),
        }
    }
}

/// The machine, as far as a single run needs to say.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Host {
    pub hostname: String,
    pub kernel: String,
    pub cpus: usize,
    pub mem_total_bytes: Option<u64>,
}

impl Host {
    pub fn probe() -> Host {
        let read = |p: &str| {
            std::fs::read_to_string(p)
                .map(|s| s.trim().to_string())
                .unwrap_or_default()
        };
        Host {
            hostname: read("/proc/sys/kernel/hostname"),
            kernel: read("/proc/sys/kernel/osrelease"),
            cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
            mem_total_bytes: iolab_sys::meminfo::read().ok().map(|m| m.mem_total),
        }
    }
}

/// Writes one result of kind `R` in one format.
pub trait Formatter<R: ?Sized> {
    fn write(&self, result: &R, out: &mut dyn Write) -> io::Result<()>;
}

/// Writes `result` to stdout in `format` (see [`emit`]).
/// Named durations in nanoseconds as one line: `mean 1.2 µs  p50 1.1 µs  …`.
pub fn durations(named: &[(&str, f64)]) -> String {
    named
        .iter()
        .map(|(name, ns)| format!("{name} {}", iolab_workload::units::format_ns(*ns)))
        .collect::<Vec<_>>()
        .join("  ")
}

/// A latency summary as one line: `mean …  p50 …  p90 …  p99 …  p99.9 …  max …`.
pub fn latency_line(l: &iolab_engine::stats::LatencySummary) -> String {
    durations(&[
        ("mean", l.mean_ns),
        ("p50", l.p50_ns as f64),
        ("p90", l.p90_ns as f64),
        ("p99", l.p99_ns as f64),
        ("p99.9", l.p999_ns as f64),
        ("max", l.max_ns as f64),
    ])
}

/// The last lines of a single run's human summary: all CPUs during the timed region (when
/// read) and the worker threads' context switches.
pub fn write_system_and_switches(
    out: &mut dyn Write,
    system: Option<CpuPercent>,
    usage: &iolab_engine::usage::Usage,
) -> io::Result<()> {
    if let Some(s) = system {
        writeln!(
            out,
            "  system      active {:.1}%  idle {:.1}%  iowait {:.1}%  (all CPUs)",
            s.active, s.idle, s.iowait
        )?;
    }
    writeln!(
        out,
        "  switches    {} voluntary, {} involuntary",
        crate::fmt::thousands(usage.voluntary_switches),
        crate::fmt::thousands(usage.involuntary_switches)
    )
}

pub fn print<R: ?Sized>(
    format: &dyn Formatter<R>,
    result: &R,
) -> Result<(), crate::error::CliError> {
    emit(|out| format.write(result, out))
}

/// Writes `result` to stdout as JSON when `json` (`--json`), else in `human`.
pub fn print_json_or<R: json::Document>(
    json: bool,
    human: &dyn Formatter<R>,
    result: &R,
) -> Result<(), crate::error::CliError> {
    if json {
        print(&json::Json, result)
    } else {
        print(human, result)
    }
}

/// Writes results to stdout through a buffer. A closed pipe (`| head`) means the reader has
/// what it wanted: not an error.
pub fn emit(
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> Result<(), crate::error::CliError> {
    let mut out = io::BufWriter::new(io::stdout().lock());
    match write(&mut out).and_then(|()| out.flush()) {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => Err(crate::error::CliError::failed(
            format!("cannot write the results: {e}"),
        )),
        _ => Ok(()),
    }
}

pub fn write_micro(format: Format, report: &MicroReport, out: &mut dyn Write) -> io::Result<()> {
    let f: &dyn Formatter<MicroReport> = match format {
        Format::Human => &micro::human::Human,
        Format::Json => &micro::json::Json,
        Format::Mobibench => &micro::mobibench::Mobibench,
    };
    f.write(report, out)
}

pub fn write_sqlite(format: Format, report: &SqliteReport, out: &mut dyn Write) -> io::Result<()> {
    let f: &dyn Formatter<SqliteReport> = match format {
        Format::Human => &sqlite::human::Human,
        Format::Json => &sqlite::json::Json,
        Format::Mobibench => &sqlite::mobibench::Mobibench,
    };
    f.write(report, out)
}
