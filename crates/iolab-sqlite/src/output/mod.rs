//! Formats for `iolab sqlite`: human (a readable summary), JSON, and Mobibench's DB-mode
//! report.

pub mod human;
pub mod json;
pub mod mobibench;

use std::io::{self, Write};

use iolab_kind::cli::Format;
use iolab_kind::output::{Formatter, SingleReport};

use crate::SqliteResult;

/// A SQLite run as its formats see it.
pub type SqliteReport = SingleReport<SqliteResult>;

/// The stamp of `iolab sqlite --json` (docs/json.md).
pub const SCHEMA: &str = "iolab.sqlite/1";

/// `iolab sqlite`'s formats, the default first.
pub const FORMATS: &[Format] = &[
    iolab_kind::cli::HUMAN,
    iolab_kind::cli::JSON,
    Format {
        name: "mobibench",
        help: "Mobibench's result lines ([CPU], [TIME], [CON SWITCHES]; DB mode's blocks for \
               sqlite)",
    },
];

/// Writes `report` in the format named `format` (one of [`FORMATS`]).
pub fn write(format: &str, report: &SqliteReport, out: &mut dyn Write) -> io::Result<()> {
    let f: &dyn Formatter<SqliteReport> = match format {
        "json" => &json::Json,
        "mobibench" => &mobibench::Mobibench,
        _ => &human::Human,
    };
    f.write(report, out)
}
