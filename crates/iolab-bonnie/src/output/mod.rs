//! Formats for `iolab bonnie`: human (bonnie++'s tables, with the file phases' rates, and
//! iolab's figures per phase), JSON, and bonnie++'s CSV line.

pub mod csv;
pub mod human;
pub mod json;

use std::io::{self, Write};

use iolab_kind::cli::Format;
use iolab_kind::output::{Formatter, SingleReport};

use crate::BonnieResult;

/// A bonnie run as its formats see it.
pub type BonnieReport = SingleReport<BonnieResult>;

/// The stamp of `iolab bonnie --json` (docs/json.md).
pub const SCHEMA: &str = "iolab.bonnie/1";

/// `iolab bonnie`'s formats, the default first.
pub const FORMATS: &[Format] = &[
    Format {
        name: "human",
        help: "bonnie++'s tables (with the file phases' rates) and iolab's figures per phase",
    },
    iolab_kind::cli::JSON,
    Format {
        name: "bonnie",
        help: "bonnie++'s CSV line (format 1.98, 50 fields)",
    },
];

/// Writes `report` in the format named `format` (one of [`FORMATS`]); `machine` is the name
/// bonnie++'s tables and CSV line show (bonnie++ `-m`), the host name when not given.
pub fn write(
    format: &str,
    report: &BonnieReport,
    machine: Option<&str>,
    out: &mut dyn Write,
) -> io::Result<()> {
    let f: &dyn Formatter<BonnieReport> = match format {
        "json" => &json::Json,
        "bonnie" => &csv::Csv { machine },
        _ => &human::Human { machine },
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
