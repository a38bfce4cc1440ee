//! Formats for `iolab iozone`: one [`IozoneReport`] (one result per file size × record size)
//! in each of [`IozoneFormat`]'s formats.

pub mod excel;
pub mod human;
pub mod json;
pub mod xls;

use std::io::{self, Write};
use std::time::SystemTime;

use iolab_iozone::IozoneResult;

use super::Formatter;
use crate::cli::IozoneFormat;
use iolab_kind::cli::Machine as Host;

/// The runs of one `iolab iozone` command and what was observed around them.
pub struct IozoneReport {
    /// One per cell, in the matrix's order (one without `--auto`).
    pub results: Vec<IozoneResult>,
    /// The record sizes of auto mode's matrix, which iozone's `-R` header lists whether or
    /// not a file ran them; empty: the record sizes of the results.
    pub matrix_records: Vec<u64>,
    /// iozone's `-+u`: `--format iozone` adds its CPU utilization blocks.
    pub cpu_utilization: bool,
    /// iozone's `-O`: `--format iozone` gives operations per second instead of kB/s.
    pub ops: bool,
    /// iozone's `-N`: `--format iozone` gives microseconds per operation (single stream).
    pub us_per_op: bool,
    pub host: Host,
    pub started_at: SystemTime,
    /// What the checks found, per run (same order as `results`).
    pub findings: Vec<Vec<iolab_store::Finding>>,
    /// The machine during each run (whole-run values of the monitors' summary metrics).
    pub system: Vec<serde_json::Map<String, serde_json::Value>>,
}

pub fn write_iozone(
    format: IozoneFormat,
    report: &IozoneReport,
    out: &mut dyn Write,
) -> io::Result<()> {
    let f: &dyn Formatter<IozoneReport> = match format {
        IozoneFormat::Human => &human::Human,
        IozoneFormat::Json => &json::Json,
        IozoneFormat::Iozone => &excel::Iozone,
    };
    f.write(report, out)
}

/// iozone's unit: kB/s, 1 kB = 1024 bytes, truncated to an integer as iozone does.
pub fn kib_per_s(bytes_per_s: f64) -> u64 {
    if bytes_per_s.is_finite() && bytes_per_s > 0.0 {
        (bytes_per_s / 1024.0) as u64
    } else {
        0
    }
}
