//! Why a command could not be run or watched. `E` is the error of the recorder's `begin`
//! hook ([`Infallible`] without a recorder).

use std::convert::Infallible;
use std::io;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum Error<E = Infallible> {
    /// The command line is empty.
    #[error("no command to run")]
    NoCommand,
    /// The working directory is missing or not a directory. Nothing was started.
    #[error("cannot run the command in {}: {source}", path.display())]
    Cwd { path: PathBuf, source: io::Error },
    /// An output file cannot be created. Nothing was started.
    #[error("cannot create {} for the command's {stream}: {source}", path.display())]
    Capture {
        path: PathBuf,
        stream: &'static str,
        source: io::Error,
    },
    /// The recorder's `begin` hook failed. The command was not started.
    #[error(transparent)]
    Begin(E),
    /// The command could not be started (no such program, not executable, …). The recorder
    /// had begun; it was dropped without its `end` hook.
    #[error("cannot run {program}: {source}")]
    Spawn { program: String, source: io::Error },
    /// Waiting for the started command failed. The recorder was dropped without its `end`
    /// hook; the command may still run.
    #[error("cannot wait for {program} (pid {pid}): {source}")]
    Wait {
        program: String,
        pid: u32,
        source: io::Error,
    },
}

impl<E> Error<E> {
    /// What to do about it, when there is something to say beyond the message (`None` for
    /// [`Error::Begin`]: the recorder's error knows better).
    pub fn hint(&self) -> Option<&'static str> {
        match self {
            Error::NoCommand => Some("give the program to run and its arguments"),
            Error::Cwd { .. } => Some("create the directory or run the command in another one"),
            Error::Capture { .. } => Some("check that the file's directory exists and is writable"),
            Error::Begin(_) => None,
            Error::Spawn { source, .. } => spawn_hint(source),
            Error::Wait { .. } => None,
        }
    }

    /// True when the job as given cannot run (fix the command line, the directory or the
    /// output files); false when running or watching failed on the machine's side.
    pub fn is_bad_input(&self) -> bool {
        matches!(
            self,
            Error::NoCommand | Error::Cwd { .. } | Error::Capture { .. } | Error::Spawn { .. }
        )
    }
}

fn spawn_hint(e: &io::Error) -> Option<&'static str> {
    match e.raw_os_error() {
        Some(libc::ENOENT) => Some("check the program's name and $PATH"),
        Some(libc::EACCES) => {
            Some("check that the program is executable (chmod +x) and its directories searchable")
        }
        Some(libc::ENOEXEC) => Some(
            "the file is not a program this system can run: give a script a #! line or run it \
             through its interpreter",
        ),
        _ => None,
    }
}
