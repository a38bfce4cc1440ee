//! Formats for `iolab replay`: a table per day (human) and JSON.

pub mod human;
pub mod json;

use std::io::{self, Write};

use iolab_kind::cli::{Format, Machine as Host, Single};
use iolab_kind::output::{system_summary, Formatter};
use iolab_store::Metric;

use crate::kind::BetweenDays;
use crate::ReplayResult;

/// The stamp of `iolab replay --json` (docs/json.md).
pub const SCHEMA: &str = "iolab.replay/1";

/// `iolab replay`'s formats, the default first.
pub const FORMATS: &[Format] = &[
    Format {
        name: "human",
        help: "A table per day: time (mount to unmount), flush, and each phase's rates",
    },
    iolab_kind::cli::JSON,
];

/// A replay plus what was observed around it.
pub struct ReplayReport {
    pub result: ReplayResult,
    /// How the days ended.
    pub between_days: BetweenDays,
    pub host: Host,
    /// What the checks found about the run.
    pub findings: Vec<iolab_store::Finding>,
    /// The machine during the run (whole-run values of the monitors' summary metrics).
    pub system: serde_json::Map<String, serde_json::Value>,
    /// The run's metrics as stored: what the formats print of the figures the database
    /// holds, so that a number on the terminal is the number `iolab show` gives.
    pub metrics: Vec<Metric>,
}

impl ReplayReport {
    /// The report of `run`, a replay on `host` whose days ended as `between_days` says.
    pub fn of(run: Single<ReplayResult>, between_days: BetweenDays, host: &Host) -> ReplayReport {
        ReplayReport {
            result: run.output,
            between_days,
            host: host.clone(),
            system: system_summary(&run.end.metrics),
            findings: run.end.findings,
            metrics: run.end.metrics,
        }
    }

    /// The stored value of metric `name` (NaN where nothing was measured: stored as NULL).
    pub fn metric(&self, name: &str) -> f64 {
        self.metrics
            .iter()
            .find(|m| m.name == name)
            .map_or(f64::NAN, |m| m.value)
    }
}

/// Writes `report` in the format named `format` (one of [`FORMATS`]).
pub fn write(format: &str, report: &ReplayReport, out: &mut dyn Write) -> io::Result<()> {
    let f: &dyn Formatter<ReplayReport> = match format {
        "json" => &json::Json,
        _ => &human::Human,
    };
    f.write(report, out)
}
