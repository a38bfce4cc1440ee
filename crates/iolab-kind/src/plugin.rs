//! Everything a kind's place gives the rest of iolab, in one value: its `[workload]` kinds,
//! its commands, its parts of the report and the JSON schemas its formats write. The
//! registry (the `iolab-kinds` crate) lists one [`Plugin`] per place; the loader, the
//! command line, the reports and the docs tests iterate it and never name a kind.

use iolab_report::section::Section;

use crate::cli::{FileRunner, Subcommand};
use crate::kind::Kind;

/// What one place contributes.
pub struct Plugin {
    /// The `[workload]` kinds it reads (most places have one; a language may have two keys,
    /// one for files and one for the workloads it ships).
    pub kinds: &'static [&'static dyn Kind],
    /// Its commands (`iolab KIND`, and its tools).
    pub commands: &'static [&'static dyn Subcommand],
    /// The workload files it runs for `iolab run FILE`.
    pub files: &'static [&'static dyn FileRunner],
    /// Its parts of the report, drawn in this order among the other places'.
    pub sections: &'static [&'static dyn Section],
    /// The JSON schemas its formats write (`iolab.KIND/1`); docs/json.md describes each.
    pub schemas: &'static [&'static str],
}
