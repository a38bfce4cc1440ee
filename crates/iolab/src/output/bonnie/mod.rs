//! Formats for `iolab bonnie`: human (bonnie++'s tables, with the file phases' rates, and
//! iolab's figures per phase), JSON, and bonnie++'s CSV line.

pub mod csv;
pub mod human;
pub mod json;

use std::io::{self, Write};

use iolab_bonnie::BonnieResult;

use super::Formatter;
use crate::cli::BonnieFormat;

/// A bonnie run as its formats see it.
pub type BonnieReport = crate::output::SingleReport<BonnieResult>;

pub fn write(format: BonnieFormat, report: &BonnieReport, out: &mut dyn Write) -> io::Result<()> {
    let f: &dyn Formatter<BonnieReport> = match format {
        BonnieFormat::Human => &human::Human,
        BonnieFormat::Json => &json::Json,
        BonnieFormat::Bonnie => &csv::Csv,
    };
    f.write(report, out)
}
