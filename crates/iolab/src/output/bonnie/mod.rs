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

/// Writes `report` in `format`; `machine` is the name bonnie++'s tables and CSV line show
/// (bonnie++ `-m`), the host name when not given.
pub fn write(
    format: BonnieFormat,
    report: &BonnieReport,
    machine: Option<&str>,
    out: &mut dyn Write,
) -> io::Result<()> {
    let f: &dyn Formatter<BonnieReport> = match format {
        BonnieFormat::Human => &human::Human { machine },
        BonnieFormat::Json => &json::Json,
        BonnieFormat::Bonnie => &csv::Csv { machine },
    };
    f.write(report, out)
}

/// The machine's name in bonnie++'s tables and CSV: the one given (bonnie++ `-m`), else the
/// host name, else `localhost`.
fn machine_name<'a>(report: &'a BonnieReport, given: Option<&'a str>) -> &'a str {
    match given {
        Some(m) => m,
        None if report.host.hostname.is_empty() => "localhost",
        None => &report.host.hostname,
    }
}

/// Why `name` cannot be a machine name in bonnie++'s CSV line (which has no quoting).
pub fn bad_machine_name(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        Some("is empty")
    } else if name.contains(',') {
        Some("holds a comma, which would split bonnie++'s CSV line")
    } else if name.chars().any(char::is_control) {
        Some("holds a control character")
    } else {
        None
    }
}
