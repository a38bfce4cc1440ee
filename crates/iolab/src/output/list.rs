//! `iolab list`: the experiments in the results database.

use std::io::{self, Write};
use std::path::PathBuf;

use iolab_store::ExperimentSummary;
use serde::Serialize;

use super::json::{Document, Kind};
use super::Formatter;

#[derive(Debug, Serialize)]
pub struct ListReport {
    /// The database they are in.
    pub database: PathBuf,
    /// Oldest first.
    pub experiments: Vec<ExperimentSummary>,
}

impl Document for ListReport {
    const KIND: Kind = Kind::List;
}

/// One line per experiment.
pub struct Human;

impl Formatter<ListReport> for Human {
    fn write(&self, r: &ListReport, out: &mut dyn Write) -> io::Result<()> {
        if r.experiments.is_empty() {
            return writeln!(out, "no experiments in {}", r.database.display());
        }
        writeln!(
            out,
            "{:>4}  {:<20}  {:<11}  {:>7}  {:>14}  name (source)",
            "id", "started (UTC)", "status", "configs", "runs ok/fail/int"
        )?;
        for e in &r.experiments {
            let started = e.created_at.to_rfc3339();
            writeln!(
                out,
                "{:>4}  {:<20}  {:<11}  {:>7}  {:>14}  {} ({})",
                e.id.0,
                started.get(..19).unwrap_or(&started).replace('T', " "),
                e.status.as_str(),
                e.configs,
                format!("{}/{}/{}", e.runs.ok, e.runs.failed, e.runs.interrupted),
                e.name,
                e.source
            )?;
        }
        Ok(())
    }
}
