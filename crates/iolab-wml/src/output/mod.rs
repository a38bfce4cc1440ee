//! Formats for `iolab run FILE.f`, and the list of built-in workloads.

mod filebench;
mod human;
mod json;
pub mod workloads;

use std::io::{self, Write};
use std::time::SystemTime;

use iolab_engine::workload::WorkloadResult;
use iolab_kind::cli::{Format, Machine as Host};
use iolab_kind::output::Formatter;
use iolab_monitor::procstat::CpuTimes;

/// The stamp of `iolab run FILE.f --json` (docs/json.md).
pub const SCHEMA: &str = "iolab.run/1";

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

/// The formats of `iolab run FILE.f`, the default first.
pub const FORMATS: &[Format] = &[
    Format {
        name: "human",
        help: "A per-flowop table with percentiles, and the summary",
    },
    iolab_kind::cli::JSON,
    Format {
        name: "filebench",
        help: "filebench's Per-Operation Breakdown and IO Summary lines, byte for byte",
    },
];

/// Writes `report` in the format named `format` (one of [`FORMATS`]).
pub fn write_run(format: &str, report: &RunReport, out: &mut dyn Write) -> io::Result<()> {
    let f: &dyn Formatter<RunReport> = match format {
        "json" => &json::Json,
        "filebench" => &filebench::Filebench,
        _ => &human::Human,
    };
    f.write(report, out)
}

/// Seconds of the measured interval.
fn secs(r: &WorkloadResult) -> f64 {
    (r.elapsed_ns as f64 / 1e9).max(f64::MIN_POSITIVE)
}
