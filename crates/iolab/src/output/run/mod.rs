//! Formats for `iolab run FILE.f`.

mod filebench;
mod human;
mod json;

use std::io::{self, Write};
use std::time::SystemTime;

use iolab_engine::workload::WorkloadResult;
use iolab_monitor::procstat::CpuTimes;

use super::Formatter;
use iolab_kind::cli::Machine as Host;

/// A workload run plus what was observed around it.
pub struct RunReport {
    pub source: String,
    pub seed: u64,
    pub result: WorkloadResult,
    pub system_cpu: Option<(CpuTimes, CpuTimes)>,
    pub host: Host,
    pub started_at: SystemTime,
    pub warnings: Vec<String>,
    /// The workload said `enable lathist` (filebench's format then adds histograms).
    pub lathist: bool,
    /// What the checks found about the run.
    pub findings: Vec<iolab_store::Finding>,
    /// The machine during the run (whole-run values of the monitors' summary metrics).
    pub system: serde_json::Map<String, serde_json::Value>,
}

/// Output format of `iolab run`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum RunFormat {
    /// A per-flowop table with percentiles, and the summary
    Human,
    /// Everything, machine-readable and versioned
    Json,
    /// filebench's Per-Operation Breakdown and IO Summary lines, byte for byte
    Filebench,
}

pub fn write_run(format: RunFormat, report: &RunReport, out: &mut dyn Write) -> io::Result<()> {
    let f: &dyn Formatter<RunReport> = match format {
        RunFormat::Human => &human::Human,
        RunFormat::Json => &json::Json,
        RunFormat::Filebench => &filebench::Filebench,
    };
    f.write(report, out)
}

/// Seconds of the measured interval.
fn secs(r: &WorkloadResult) -> f64 {
    (r.elapsed_ns as f64 / 1e9).max(f64::MIN_POSITIVE)
}
