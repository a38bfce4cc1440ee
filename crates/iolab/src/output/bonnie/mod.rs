//! Formats for `iolab bonnie`: human (bonnie++'s tables, with the file phases' rates, and
//! iolab's figures per phase), JSON, and bonnie++'s CSV line.

pub mod csv;
pub mod human;
pub mod json;

use std::io::{self, Write};

use iolab_bonnie::BonnieResult;

use super::{Formatter, Host};
use crate::cli::BonnieFormat;

/// A bonnie run plus what was observed around it.
pub struct BonnieReport {
    pub result: BonnieResult,
    pub host: Host,
    /// What the checks found about the run.
    pub findings: Vec<iolab_store::Finding>,
    /// The machine during the run (whole-run values of the monitors' summary metrics).
    pub system: serde_json::Map<String, serde_json::Value>,
}

pub fn write(format: BonnieFormat, report: &BonnieReport, out: &mut dyn Write) -> io::Result<()> {
    let f: &dyn Formatter<BonnieReport> = match format {
        BonnieFormat::Human => &human::Human,
        BonnieFormat::Json => &json::Json,
        BonnieFormat::Bonnie => &csv::Csv,
    };
    f.write(report, out)
}
