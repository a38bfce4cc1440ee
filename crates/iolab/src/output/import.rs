//! What `iolab import` copied: a line per experiment (human), or the report (JSON,
//! `iolab.import/1`).

use std::io::{self, Write};
use std::path::Path;

use iolab_store::ImportReport;
use serde::Serialize;

use super::json::{Document, Kind};
use super::Formatter;

/// An import's report, as its formats see it.
#[derive(Serialize)]
#[serde(transparent)]
pub struct Imported(pub ImportReport);

impl Document for Imported {
    const KIND: Kind = Kind::Import;
}

/// A line per experiment copied or skipped, then the totals.
pub struct Human<'a> {
    /// The database imported from.
    pub other: &'a Path,
}

impl Formatter<Imported> for Human<'_> {
    fn write(&self, r: &Imported, out: &mut dyn Write) -> io::Result<()> {
        let report = &r.0;
        for (uuid, old, new) in &report.imported {
            writeln!(
                out,
                "imported #{new} (was #{old} in {}, {uuid})",
                self.other.display()
            )?;
        }
        for (uuid, old, here) in &report.skipped {
            writeln!(
                out,
                "skipped #{old} of {}: already here as #{here} ({uuid})",
                self.other.display()
            )?;
        }
        writeln!(
            out,
            "imported {} experiment(s) ({} runs), skipped {}",
            report.imported.len(),
            report.runs,
            report.skipped.len()
        )
    }
}
