//! Why a bonnie run could not start or did not finish.

use std::path::PathBuf;

use iolab_engine::EngineError;
use iolab_util::phrase;
use iolab_util::setting::{opt, Phrase, Setting, Worded};
use iolab_util::units::format_bytes;

#[derive(Debug, thiserror::Error)]
pub enum BonnieError {
    /// What the engine's own helpers report: a missing directory, an I/O error naming the
    /// file and the call, an interruption, a thread the OS refused…
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// The test file (or the file phases' files) do not fit in the free space.
    #[error("{}", self.phrase())]
    NoSpace {
        /// What does not fit, naming the options that decide it.
        what: Phrase,
        dir: PathBuf,
        needed: u64,
        free: u64,
    },
    /// More files than the filesystem has free inodes.
    #[error("{}", self.phrase())]
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

    /// What to do about it, in the command line's words.
    pub fn hint(&self) -> Option<String> {
        self.advice().map(|a| a.to_string())
    }
}

impl Worded for BonnieError {
    fn phrase(&self) -> Phrase {
        match self {
            BonnieError::Engine(e) => e.phrase(),
            BonnieError::TooManyFiles { dir, files, free } => phrase!(
                "{} files ({} × 1024, and their directories) do not fit: {} has {} free inodes",
                files,
                opt("files"),
                dir.display(),
                free
            ),
            BonnieError::NoSpace {
                what,
                dir,
                needed,
                free,
            } => what.clone().then(phrase!(
                " need {} but {} has {} free",
                format_bytes(*needed),
                dir.display(),
                format_bytes(*free)
            )),
            other => Phrase::text(other.to_string()),
        }
    }

    fn advice(&self) -> Option<Phrase> {
        Some(match self {
            BonnieError::Engine(e) => return e.advice(),
            BonnieError::NoSpace { .. } => phrase!(
                "use a smaller {} (or fewer, smaller files), or a larger filesystem",
                opt("size")
            ),
            BonnieError::TooManyFiles { .. } => phrase!(
                "use a smaller {}, or a filesystem with more inodes",
                opt("files")
            ),
            BonnieError::Leftover(_) => phrase!(
                "a killed run left it behind: remove it, or use another {}",
                Setting::Dir
            ),
            BonnieError::Miscounted { .. } => {
                Phrase::text("something else wrote into the run's directory while it ran")
            }
        })
    }
}
