//! Formats for `iolab replay`: a table per day (human) and JSON.

pub mod human;
pub mod json;

use std::io::{self, Write};

use iolab_replay::ReplayResult;

use super::Formatter;
use crate::cli::ReplayFormat;
use iolab_kind::cli::Machine as Host;

/// A replay plus what was observed around it.
pub struct ReplayReport {
    pub result: ReplayResult,
    /// How the days ended (`remount`, `drop_caches`, `none`).
    pub between_days: String,
    pub host: Host,
    /// What the checks found about the run.
    pub findings: Vec<iolab_store::Finding>,
    /// The machine during the run (whole-run values of the monitors' summary metrics).
    pub system: serde_json::Map<String, serde_json::Value>,
}

pub fn write(format: ReplayFormat, report: &ReplayReport, out: &mut dyn Write) -> io::Result<()> {
    let f: &dyn Formatter<ReplayReport> = match format {
        ReplayFormat::Human => &human::Human,
        ReplayFormat::Json => &json::Json,
    };
    f.write(report, out)
}
