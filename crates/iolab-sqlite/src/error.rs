//! Why a SQLite run could not start or did not finish. Its advice ([`Worded`]) says what to
//! do next, naming the settings to change ([`Worded`]), which each front end words its way.

use std::path::PathBuf;

use iolab_engine::EngineError;
use iolab_util::phrase;
use iolab_util::setting::{opt, Phrase, Setting, Worded};
use rusqlite::ffi;

#[derive(Debug, thiserror::Error)]
pub enum SqliteError {
    /// The directory or a file in it (missing, not writable, not iolab's), a thread the OS
    /// refused, a worker that panicked.
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// SQLite refused a statement or could not open a database.
    #[error("{during} {}: {message}", .path.display())]
    Sqlite {
        /// What was being done: `opening`, `creating the tables of`, `a transaction on`…
        during: &'static str,
        path: PathBuf,
        /// SQLite's extended result code.
        code: i32,
        message: String,
    },
    /// `PRAGMA journal_mode` answered with another mode: SQLite cannot use the one asked
    /// for here (WAL needs shared memory that the filesystem can map).
    #[error("{}", self.phrase())]
    JournalRefused {
        wanted: &'static str,
        got: String,
        path: PathBuf,
    },
    /// The counting hooks could not be installed into SQLite's unix VFS.
    #[error("cannot count SQLite's system calls: {0}")]
    Hooks(String),
    /// The caller's cancel flag was set: the run ended early and has no result.
    #[error("interrupted")]
    Interrupted,
}

impl SqliteError {
    /// A failed SQLite call on `path`.
    pub fn sqlite(during: &'static str, path: impl Into<PathBuf>, e: &rusqlite::Error) -> Self {
        let code = match e {
            rusqlite::Error::SqliteFailure(f, _) => f.extended_code,
            _ => ffi::SQLITE_ERROR,
        };
        SqliteError::Sqlite {
            during,
            path: path.into(),
            code,
            message: e.to_string(),
        }
    }

    /// The primary SQLite result code (`SQLITE_FULL`, …), if SQLite failed.
    fn primary(&self) -> Option<i32> {
        match self {
            SqliteError::Sqlite { code, .. } => Some(code & 0xff),
            _ => None,
        }
    }

    pub fn is_interrupted(&self) -> bool {
        matches!(self, SqliteError::Interrupted)
            || matches!(self, SqliteError::Engine(e) if e.is_interrupted())
            || self.primary() == Some(ffi::SQLITE_INTERRUPT)
    }

    /// True when the user's input is at fault (exit code 2), false when the run failed (1).
    pub fn is_bad_input(&self) -> bool {
        match self {
            SqliteError::Engine(e) => e.is_bad_input(),
            SqliteError::JournalRefused { .. } => true,
            _ => matches!(
                self.primary(),
                Some(ffi::SQLITE_CANTOPEN | ffi::SQLITE_READONLY | ffi::SQLITE_PERM)
            ),
        }
    }

    /// What the user can do about it, in the command line's words.
    pub fn hint(&self) -> Option<String> {
        self.advice().map(|a| a.to_string())
    }
}

impl Worded for SqliteError {
    fn phrase(&self) -> Phrase {
        match self {
            SqliteError::Engine(e) => e.phrase(),
            SqliteError::JournalRefused { wanted, got, path } => phrase!(
                "SQLite kept journal mode {} on {} instead of {} {}",
                got,
                path.display(),
                opt("journal"),
                wanted
            ),
            other => Phrase::text(other.to_string()),
        }
    }

    fn advice(&self) -> Option<Phrase> {
        let dir = Setting::Dir;
        if let SqliteError::Engine(e) = self {
            return e.advice();
        }
        if let SqliteError::JournalRefused { .. } = self {
            return Some(phrase!(
                "WAL needs a filesystem that can map SQLite's shared-memory file: use another \
                 {}, or another {}",
                dir,
                opt("journal")
            ));
        }
        Some(match self.primary()? {
            ffi::SQLITE_FULL => phrase!(
                "the filesystem is full: use fewer {} or another {}",
                opt("transactions"),
                dir
            ),
            ffi::SQLITE_CANTOPEN | ffi::SQLITE_PERM => phrase!(
                "pass a {} on a writable filesystem where iolab may create files",
                dir
            ),
            ffi::SQLITE_READONLY => phrase!("the filesystem is read-only: pass another {}", dir),
            ffi::SQLITE_IOERR => Phrase::text("the device reported an I/O error: check dmesg"),
            ffi::SQLITE_BUSY | ffi::SQLITE_LOCKED => phrase!(
                "another process holds a lock on the database files: use another {}",
                dir
            ),
            _ => return None,
        })
    }
}
