//! What can go wrong with the results database, each with what to do about it.

use std::path::PathBuf;

use crate::types::{ConfigId, ExperimentId, RunId};

/// An error from the results database. Messages name the database file and say what to do
/// next; the binary prints them as they are.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    #[error("no results database at {}: run an experiment first, or point --db at an existing one", path.display())]
    Missing { path: PathBuf },

    #[error("cannot open results database {}: {source}; check the path and its permissions", path.display())]
    Open {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },

    #[error("{} is not an SQLite database: give --db a results database written by iolab", path.display())]
    NotADatabase { path: PathBuf },

    #[error("{} is an SQLite database but not iolab's (application id {application_id:#x}): give --db another file", path.display())]
    NotIolab { path: PathBuf, application_id: i64 },

    #[error("{} was written by a newer iolab (schema {found}, this one knows {known}): upgrade iolab", path.display())]
    TooNew {
        path: PathBuf,
        found: u32,
        known: u32,
    },

    #[error("upgrading {} to schema {to} failed: {source}; the database was left at schema {} and is intact: report this as a bug", path.display(), to - 1)]
    Migration {
        path: PathBuf,
        to: u32,
        #[source]
        source: rusqlite::Error,
    },

    #[error("{} is busy: another process has held its write lock for too long; wait for it to finish or stop it", path.display())]
    Busy { path: PathBuf },

    #[error("{} is damaged: {details}; restore it from a copy or start a new one, and keep the damaged file for a bug report", path.display())]
    Corrupt { path: PathBuf, details: String },

    #[error("no experiment {id} in {}: `iolab list` shows the ids", path.display())]
    NoSuchExperiment { path: PathBuf, id: ExperimentId },

    #[error("no configuration {id} in {}", path.display())]
    NoSuchConfig { path: PathBuf, id: ConfigId },

    #[error("no run {id} in {}", path.display())]
    NoSuchRun { path: PathBuf, id: RunId },

    #[error("experiment {experiment} already has a configuration labelled {label:?}: give each configuration its own label")]
    DuplicateConfig {
        experiment: ExperimentId,
        label: String,
    },

    #[error("configuration {config} already has a successful run for repetition {repetition}: a resumed experiment must skip it")]
    DuplicateRun { config: ConfigId, repetition: u32 },

    /// The caller handed over something inconsistent; nothing was written.
    #[error("invalid record, nothing written: {0}")]
    InvalidRecord(String),

    #[error("{what} in {} is not valid JSON ({source}): the database is damaged or was edited by hand", path.display())]
    BadJson {
        path: PathBuf,
        what: String,
        #[source]
        source: serde_json::Error,
    },

    #[error("writing the export failed: {0}")]
    Io(#[from] std::io::Error),

    #[error("results database {}: {source}", path.display())]
    Sqlite {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;
