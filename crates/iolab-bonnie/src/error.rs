//! Why a bonnie run could not start or did not finish.

use std::path::PathBuf;

use iolab_engine::EngineError;
use iolab_workload::format_bytes;

#[derive(Debug, thiserror::Error)]
pub enum BonnieError {
    /// What the engine's own helpers report: a missing directory, an I/O error naming the
    /// file and the call, an interruption, a thread the OS refused…
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// The test file (or the file phases' files) do not fit in the free space.
    #[error("{what} need {} but {dir} has {} free", format_bytes(*.needed), format_bytes(*.free))]
    NoSpace {
        what: String,
        dir: PathBuf,
        needed: u64,
        free: u64,
    },
    /// More files than the filesystem has free inodes.
    #[error("{files} files (--files × 1024, and their directories) do not fit: {dir} has {free} free inodes")]
    TooManyFiles { dir: PathBuf, files: u64, free: u64 },
    /// A directory of a run that was killed before it could clean up.
    #[error("{0} already exists")]
    Leftover(PathBuf),
    /// The file phases found other files than their own in their directory.
    #[error("{dir}: found {found} files where the run created {expected}")]
    Miscounted {
        dir: PathBuf,
        expected: u64,
        found: u64,
    },
}

impl BonnieError {
    /// The input is at fault (exit code 2), not the machine.
    pub fn is_bad_input(&self) -> bool {
        match self {
            BonnieError::Engine(e) => e.is_bad_input(),
            BonnieError::NoSpace { .. }
            | BonnieError::TooManyFiles { .. }
            | BonnieError::Leftover(_) => true,
            BonnieError::Miscounted { .. } => false,
        }
    }

    pub fn is_interrupted(&self) -> bool {
        matches!(self, BonnieError::Engine(e) if e.is_interrupted())
    }

    /// What to do about it, naming the command line's flags (the kind rewrites them for
    /// experiment files).
    pub fn hint(&self) -> Option<&'static str> {
        match self {
            BonnieError::Engine(e) => e.hint(),
            BonnieError::NoSpace { .. } => {
                Some("use a smaller --size (or fewer, smaller files), or a larger filesystem")
            }
            BonnieError::TooManyFiles { .. } => {
                Some("use a smaller --files, or a filesystem with more inodes")
            }
            BonnieError::Leftover(_) => {
                Some("a killed run left it behind: remove it, or use another --dir")
            }
            BonnieError::Miscounted { .. } => {
                Some("something else wrote into the run's directory while it ran")
            }
        }
    }
}
