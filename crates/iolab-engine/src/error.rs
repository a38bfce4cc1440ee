//! Why a run could not start or did not finish. Every variant names the file and the
//! operation; [`EngineError::hint`] says what to do next.

use std::io;
use std::path::PathBuf;

use iolab_util::errno;
use iolab_util::phrase;
use iolab_util::setting::{opt, Phrase, Setting, Worded};

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("directory {0} does not exist")]
    MissingDir(PathBuf),
    #[error("{0} is not a directory")]
    NotADirectory(PathBuf),
    #[error("cannot write in {path}: {}", errno::describe(.source))]
    DirNotWritable { path: PathBuf, source: io::Error },
    #[error("the filesystem of {path} does not support O_DIRECT")]
    NoDirectIo { path: PathBuf },
    #[error("{}", self.phrase())]
    DirectIoUnaligned { bs: u64, align: u32, path: PathBuf },
    #[error("{op} {path}: {}", errno::describe(.source))]
    Io {
        op: &'static str,
        path: PathBuf,
        source: io::Error,
    },
    #[error("{op} {path} at offset {offset}: {}", errno::describe(.source))]
    IoAt {
        op: &'static str,
        path: PathBuf,
        offset: u64,
        source: io::Error,
    },
    /// The workload cannot run as written (an fd used before it is opened, an I/O size
    /// larger than the file, no run time…).
    #[error("{0}")]
    Workload(String),
    #[error(transparent)]
    Fileset(#[from] crate::fileset::FilesetError),
    /// The engine options do not go together, or not with the workload.
    #[error(transparent)]
    Options(#[from] crate::workload::OptionsError),
    #[error("a worker thread panicked: {0}")]
    WorkerPanicked(String),
    /// The OS refused a worker thread (`EAGAIN`: `ulimit -u`, `kernel.threads-max`, a
    /// cgroup's `pids.max`). The threads already started were released and joined.
    #[error(
        "cannot start worker thread {} of {wanted} ({started} started): {}",
        started + 1,
        errno::describe(.source)
    )]
    Spawn {
        wanted: usize,
        started: usize,
        source: io::Error,
    },
    /// A buffer could not be allocated (too large for the machine's memory).
    #[error("cannot allocate a {} buffer for {what}: out of memory", crate::buffer::human(.len))]
    Alloc { what: String, len: u64 },
    /// A data file's name is taken by something iolab did not make (a symbolic link, a
    /// directory, a device…): iolab neither follows nor replaces it.
    #[error("{path} is {what}, not a file iolab made")]
    NotOurFile { path: PathBuf, what: &'static str },
    /// The caller's cancel flag was set (Ctrl-C): the run ended early and has no result.
    #[error("interrupted")]
    Interrupted,
    /// A flowop's I/O failed during the run: which flowop, where the workload defines it
    /// (`FILE:LINE:COL`, when known), and the error, which names the file.
    #[error("{}", flowop_message(.flowop, .at.as_deref(), .error))]
    Flowop {
        flowop: String,
        at: Option<String>,
        error: Box<EngineError>,
    },
}

/// "w.f:4:5: flowop `app`: append /d/big/00000001/00000001: No space left on device".
fn flowop_message(flowop: &str, at: Option<&str>, error: &EngineError) -> String {
    match at {
        Some(at) => format!("{at}: flowop `{flowop}`: {error}"),
        None => format!("flowop `{flowop}`: {error}"),
    }
}

impl EngineError {
    /// The run's failure, with the kind's hint (in the words of where its settings came
    /// from).
    pub fn failure(&self, hint: Option<String>) -> iolab_kind::RunFailure {
        iolab_kind::RunFailure {
            message: self.to_string(),
            hint,
            bad_input: self.is_bad_input(),
            interrupted: self.is_interrupted(),
            located: false,
        }
    }

    /// This error as one of flowop `flowop`, written at `at`: an I/O error gets the flowop
    /// named; the others name it already, or are not its own.
    pub fn in_flowop(self, flowop: &str, at: Option<&str>) -> EngineError {
        match self {
            EngineError::Io { .. } | EngineError::IoAt { .. } => EngineError::Flowop {
                flowop: flowop.to_string(),
                at: at.map(str::to_string),
                error: Box::new(self),
            },
            other => other,
        }
    }

    /// A buffer for `what` could not be allocated.
    pub fn alloc(what: impl Into<String>, e: crate::buffer::AllocError) -> EngineError {
        EngineError::Alloc {
            what: what.into(),
            len: e.len,
        }
    }

    /// A worker thread's panic, with its message when it has one.
    pub fn from_panic(payload: Box<dyn std::any::Any + Send>) -> EngineError {
        let msg = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        EngineError::WorkerPanicked(msg)
    }

    /// True when the run ended because the caller's cancel flag was set.
    pub fn is_interrupted(&self) -> bool {
        matches!(
            self,
            EngineError::Interrupted
                | EngineError::Fileset(crate::fileset::FilesetError::Interrupted)
        )
    }

    /// True when the user's input is at fault (exit code 2), false when the run failed (1).
    pub fn is_bad_input(&self) -> bool {
        match self {
            EngineError::Fileset(f) => return f.is_bad_input(),
            EngineError::Flowop { error, .. } => return error.is_bad_input(),
            _ => {}
        }
        matches!(
            self,
            EngineError::MissingDir(_)
                | EngineError::Workload(_)
                | EngineError::Options(_)
                | EngineError::NotADirectory(_)
                | EngineError::DirNotWritable { .. }
                | EngineError::NoDirectIo { .. }
                | EngineError::DirectIoUnaligned { .. }
                | EngineError::Alloc { .. }
                | EngineError::NotOurFile { .. }
        )
    }

    /// The OS error behind the failure, if any.
    pub fn os_error(&self) -> Option<i32> {
        match self {
            EngineError::Fileset(f) => f.os_error(),
            EngineError::Flowop { error, .. } => error.os_error(),
            EngineError::Io { source, .. }
            | EngineError::IoAt { source, .. }
            | EngineError::DirNotWritable { source, .. }
            | EngineError::Spawn { source, .. } => source.raw_os_error(),
            _ => None,
        }
    }

    /// What to do about it, in the command line's words.
    pub fn hint(&self) -> Option<String> {
        self.advice().map(|a| a.to_string())
    }
}

impl Worded for EngineError {
    fn phrase(&self) -> Phrase {
        match self {
            EngineError::DirectIoUnaligned { bs, align, path } => phrase!(
                "{} {} is not a multiple of {}, the O_DIRECT alignment of {}",
                opt("bs"),
                bs,
                align,
                path.display()
            ),
            EngineError::Options(o) => o.phrase(),
            other => Phrase::text(other.to_string()),
        }
    }

    /// What the user can do about it. The hints that name a setting name those of a
    /// single-pattern workload (`bs`, `size`, `sync`).
    fn advice(&self) -> Option<Phrase> {
        match self {
            EngineError::Fileset(f) => return f.advice(),
            EngineError::Options(o) => return o.advice(),
            EngineError::Flowop { error, .. } => return error.advice(),
            _ => {}
        }
        let dir = Setting::Dir;
        Some(match self {
            EngineError::MissingDir(_) => phrase!("create it first, or pass an existing {}", dir),
            EngineError::NotADirectory(_) => {
                phrase!("{} takes a directory; iolab creates its files there", dir)
            }
            EngineError::DirNotWritable { .. } => phrase!(
                "pass a {} on a writable filesystem (read-only mounts refuse even root)",
                dir
            ),
            EngineError::NoDirectIo { .. } => phrase!(
                "use a filesystem that supports O_DIRECT (ext4, xfs, btrfs; tmpfs since Linux \
                 6.6), or another {} mode",
                opt("sync")
            ),
            EngineError::DirectIoUnaligned { .. } => phrase!(
                "O_DIRECT transfers must be multiples of the device's logical block size: use \
                 {} 4k",
                opt("bs")
            ),
            EngineError::Spawn { .. } => Phrase::text(
                "the system limits threads: raise the per-user limit (ulimit -u) or \
                 kernel.threads-max, or use fewer threads",
            ),
            EngineError::Alloc { .. } => phrase!(
                "each I/O is done from one buffer held in memory: use a smaller I/O size ({}, \
                 iosize)",
                opt("bs")
            ),
            EngineError::NotOurFile { .. } => phrase!("remove it, or use another {}", dir),
            _ => match self.os_error() {
                Some(libc::ENOSPC) => phrase!(
                    "the filesystem is full: use a smaller {} or another {}",
                    opt("size"),
                    dir
                ),
                Some(libc::EDQUOT) => {
                    phrase!("a disk quota is exhausted: use a smaller {}", opt("size"))
                }
                Some(libc::EIO) => Phrase::text("the device reported an I/O error: check dmesg"),
                Some(libc::EACCES) | Some(libc::EPERM) => Phrase::text(
                    "permission denied: check the files' owner and mode, or run as root",
                ),
                Some(libc::EROFS) => {
                    phrase!("the filesystem is read-only: pass another {}", dir)
                }
                Some(libc::EINVAL) => phrase!(
                    "the kernel rejected the request: with O_DIRECT, check {} against the \
                     device's block size",
                    opt("bs")
                ),
                _ => return None,
            },
        })
    }
}
