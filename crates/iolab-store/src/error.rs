//! What can go wrong with the results database, each with what to do about it.

use std::path::PathBuf;

use iolab_util::phrase;
use iolab_util::setting::{Phrase, Setting};

use crate::types::{ConfigId, ExperimentId, RunId};

/// An error from the results database. Messages name the database file and say what to do
/// next; the binary prints them as they are.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    #[error("no results database at {}", path.display())]
    Missing { path: PathBuf },

    #[error("cannot open results database {}: {source}; check the path and its permissions", path.display())]
    Open {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },

    #[error("{} is not an SQLite database", path.display())]
    NotADatabase { path: PathBuf },

    #[error("{} is an SQLite database but not iolab's (application id {application_id:#x})", path.display())]
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

    /// The disk under the database failed or is full (SQLite's I/O and full errors): the
    /// operation's transaction was rolled back, the database holds what it held before.
    #[error("results database {}: {source}: the disk failed or is full, and what was being written was not stored (the database keeps what it held before); check the disk (dmesg) and its free space, then try again", path.display())]
    Disk {
        path: PathBuf,
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

    /// A run's record carried from the process that ran it (a container, a VM) could not be
    /// written or read through its scratch file.
    #[error("carrying a run's record through {}: {source}", path.display())]
    Transfer {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("results database {}: {source}", path.display())]
    Sqlite {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
}

impl StoreError {
    /// What to do about it, when that is to give the database setting another file (the
    /// front end words [`Setting::Db`]: `--db`, or the file `iolab import` reads).
    pub fn advice(&self) -> Option<Phrase> {
        match self {
            StoreError::Missing { .. } => Some(phrase!(
                "run an experiment first, or give {} an existing one",
                Setting::Db
            )),
            StoreError::NotADatabase { .. } | StoreError::NotIolab { .. } => Some(phrase!(
                "{} takes a results database written by iolab",
                Setting::Db
            )),
            _ => None,
        }
    }
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;
