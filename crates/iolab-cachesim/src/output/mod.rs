//! Formats for `iolab cachesim`: a table for people ([`human`]) and JSON ([`json`],
//! `iolab.cachesim/1`); and for `iolab cachesim mrc`, the curve as a table, CSV or JSON
//! ([`mrc`], `iolab.mrc/1`). docs/json.md describes both documents.

pub mod human;
pub mod json;
pub mod mrc;

use std::io::{self, Write};

use iolab_kind::cli::Machine;
use iolab_kind::output::Formatter;

use crate::Outcome;

/// The stamp of `iolab cachesim --json` (docs/json.md).
pub const SCHEMA: &str = "iolab.cachesim/1";

/// The simulation's outcome and what was observed around it.
pub struct CachesimReport {
    pub result: Outcome,
    pub host: Machine,
    pub findings: Vec<iolab_store::Finding>,
}

/// Writes `report` as JSON when `json` (`--json`), else as the table.
pub fn write(json: bool, report: &CachesimReport, out: &mut dyn Write) -> io::Result<()> {
    let f: &dyn Formatter<CachesimReport> = if json { &json::Json } else { &human::Human };
    f.write(report, out)
}
