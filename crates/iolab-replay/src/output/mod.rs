//! Formats for `iolab replay`: a table per day (human) and JSON.

pub mod human;
pub mod json;

use std::io::{self, Write};

use iolab_kind::cli::Format;
use iolab_kind::output::{Formatter, SingleReport};

use crate::kind::BetweenDays;
use crate::ReplayResult;

/// The stamp of `iolab replay --json` (docs/json.md).
pub const SCHEMA: &str = "iolab.replay/1";

/// `iolab replay`'s formats, the default first.
pub const FORMATS: &[Format] = &[
    Format {
        name: "human",
        help: "A table per day: time (mount to unmount), flush, and each phase's rates",
    },
    iolab_kind::cli::JSON,
];

/// A replay plus what was observed around it.
pub struct ReplayReport {
    /// How the days ended.
    pub between_days: BetweenDays,
    /// The replay, what was observed around it and its stored metrics: the formats print
    /// the figures the database holds, so a number on the terminal is the one `iolab show`
    /// gives.
    pub run: SingleReport<ReplayResult>,
}

/// Writes `report` in the format named `format` (one of [`FORMATS`]).
pub fn write(format: &str, report: &ReplayReport, out: &mut dyn Write) -> io::Result<()> {
    let f: &dyn Formatter<ReplayReport> = match format {
        "json" => &json::Json,
        _ => &human::Human,
    };
    f.write(report, out)
}
