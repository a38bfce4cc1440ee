//! iolab's SQLite workload: Mobibench's DB mode (`-d 0|1|2`), with real SQLite.
//!
//! Each thread owns one or more database files of a few tables and runs transactions on
//! them — one row inserted, updated or deleted per table — under a journal mode and a
//! synchronous level; the first database has the others attached, so a transaction spans
//! them all. The set-up is untimed; the timed region is the transactions (and the WAL
//! checkpoint after the last one). Besides transactions per second and per-transaction
//! latency, iolab counts the system calls SQLite makes per transaction (fsyncs, unlinks,
//! truncations, writes) with hooks into SQLite's own unix VFS ([`count`]).
//!
//! Parse ([`OPTIONS`] into a [`SqliteSpec`]), validate ([`SqlitePlan`]), run
//! ([`run_sqlite`]); the library never prints. `iolab sqlite` is [`command`], its formats
//! [`output`]. docs/sqlite.md has the semantics.

pub mod command;
pub mod count;
mod error;
pub mod kind;
pub mod output;
pub mod report;
pub mod run;
pub mod spec;

pub use count::Calls;
pub use error::SqliteError;
pub use run::{library, run_sqlite, Library, Settings, SqliteResult, ThreadSummary};
pub use spec::{
    option, AutoVacuum, Journal, Mode, SqliteOption, SqlitePlan, SqliteSpec, SqliteSpecError,
    Synchronous, TempStore, OPTIONS,
};

/// What this place gives the rest of iolab (see [`iolab_kind::Plugin`]); its one line in the
/// registry is `&iolab_sqlite::PLUGIN`.
pub static PLUGIN: iolab_kind::Plugin = iolab_kind::Plugin {
    kinds: &[&kind::SQLITE],
    commands: &[&command::SqliteCommand],
    files: &[],
    sections: &[&report::SqliteSection],
    schemas: &[output::SCHEMA],
};
