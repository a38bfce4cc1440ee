//! Typed errors. Every message says what went wrong, on what, and what to do next.

use std::fmt;
use std::io;
use std::path::PathBuf;

/// Result with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong while preparing, changing or restoring the system under test.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The specification is malformed or inconsistent (found before touching the machine).
    #[error("{field}: {message}")]
    InvalidSpec {
        /// Dotted path of the offending field (`target.size`, `tunables."vm.dirty_ratio"`).
        field: String,
        /// What is wrong and what to write instead.
        message: String,
    },

    /// A block device failed the safety checks; nothing was written to it.
    #[error("refusing to use {}: {}", device.display(), Refusals(reasons))]
    Refused {
        /// The device as named in the experiment.
        device: PathBuf,
        /// Every reason that applies (each says which setting, if any, overrides it).
        reasons: Vec<Refusal>,
    },

    /// A filesystem cannot be used on this machine (kernel or mkfs program missing).
    #[error("{fs} is not available on this machine: {reason}")]
    FsUnavailable {
        /// Filesystem name.
        fs: &'static str,
        /// Why, and how to fix it where it can be fixed.
        reason: String,
    },

    /// An external program (mkfs.*) failed.
    #[error("`{command}` failed ({status}): {stderr}{}", hint_suffix(hint))]
    Command {
        /// The command line.
        command: String,
        /// Exit status as text.
        status: String,
        /// Its standard error, trimmed (last lines).
        stderr: String,
        /// What to try next, when known.
        hint: Option<String>,
    },

    /// mount(2) failed.
    #[error(transparent)]
    Mount(Box<MountFailure>),

    /// A loop-device operation failed.
    #[error("loop device: cannot {op} {}: {error}{}", path.display(), hint_suffix(hint))]
    Loop {
        /// What was attempted (`attach`, `detach`, `enable direct I/O on`).
        op: &'static str,
        /// Image or device path.
        path: PathBuf,
        /// The OS error.
        error: io::Error,
        /// What to try next.
        hint: Option<String>,
    },

    /// A kernel tunable could not be read, set, or did not take the value.
    #[error("tunable {name} ({}): {problem}", path.display())]
    Tunable {
        /// Name as given (`vm.dirty_ratio`, `queue/scheduler`).
        name: String,
        /// File it maps to.
        path: PathBuf,
        /// What went wrong, with advice.
        problem: String,
    },

    /// The run's files were still in the page cache after `sync` and drop_caches: the run
    /// would not start cold.
    #[error(
        "drop_caches did not evict the run's files: {} of the run's {} ({files} files{}) still \
         in the page cache after sync and drop; another process may hold them mapped or be \
         reading them",
        iolab_util::format_bytes(*resident_bytes),
        iolab_util::format_bytes(*bytes),
        sampled_note(*files, *sampled_files)
    )]
    CachesNotDropped {
        /// Resident bytes of the run's files after the drop (estimated from a sample when
        /// there are many files).
        resident_bytes: u64,
        /// Their total size.
        bytes: u64,
        /// Regular files of the run.
        files: u64,
        /// Files measured.
        sampled_files: u64,
    },

    /// A v1 cgroup controller iolab needs (memory for `cache_limit`, blkio for `throttle`)
    /// is not usable; the reason names which.
    #[error("cgroup unavailable: {reason}")]
    CgroupUnavailable {
        /// Why, with advice.
        reason: String,
    },

    /// A program could not be started in a container: the step that failed (joining a
    /// cgroup, unsharing the namespaces, mounting proc, …) and the OS error.
    #[error(
        "cannot start the container's program: {step}: {error}{}",
        permission_hint(error)
    )]
    ContainerStart {
        /// What was being done.
        step: String,
        /// The OS error.
        error: io::Error,
    },

    /// Another process holds the journal (a live iolab session).
    #[error(
        "journal {} is in use by {}; that iolab restores its own changes when it exits \
         (wait for it, or stop it with Ctrl-C), then run `iolab recover` if it was killed",
        path.display(),
        holder.map(|p| format!("process {p}")).unwrap_or_else(|| "another process".into())
    )]
    JournalBusy {
        /// Journal file.
        path: PathBuf,
        /// PID holding the lock, when /proc/locks tells.
        holder: Option<u32>,
    },

    /// Another iolab has changed this machine's tunables and not yet put them back.
    #[error(
        "another iolab ({}) has changed this machine's tunables and has not put them back \
         after {waited:?} of waiting (lock {}); changing them at the same time would make each \
         restore the other's values. Run this after it ends, or without `tunables`",
        holder.map(|p| format!("process {p}")).unwrap_or_else(|| "another process".into()),
        path.display()
    )]
    TunablesBusy {
        /// The lock file.
        path: PathBuf,
        /// PID holding the lock, when /proc/locks tells.
        holder: Option<u32>,
        /// How long this session waited.
        waited: std::time::Duration,
    },

    /// A journal line that is not the last one does not parse: the file was edited or damaged.
    #[error(
        "journal {}:{line}: {message}; fix or remove that line (it lists what iolab changed; \
         undo those changes by hand if you remove it)",
        path.display()
    )]
    JournalCorrupt {
        /// Journal file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// Parser message.
        message: String,
    },

    /// A journal entry asks for something iolab never records (a path outside its own names).
    #[error("journal entry {seq} is not something iolab records ({why}); it was not acted on")]
    ForeignEntry {
        /// Sequence number.
        seq: u64,
        /// Which check failed.
        why: String,
    },

    /// A change was undone, but the journal could not record that: it stays listed, and
    /// `iolab recover` finds it already undone.
    #[error("{done}, but the journal could not record that ({source}); `iolab recover` will find it already undone")]
    UndoneNotRecorded {
        /// What undoing it did.
        done: String,
        /// Why the journal could not be written.
        source: Box<Error>,
    },

    /// A file system operation on `path` failed.
    #[error("cannot {op} {}: {error}{}", path.display(), permission_hint(error))]
    Io {
        /// What was attempted (`create`, `read`, `write`, `remove`).
        op: &'static str,
        /// Which file.
        path: PathBuf,
        /// The OS error.
        error: io::Error,
    },

    /// A mount point is not in the state iolab left it in; it was not touched.
    #[error("{}: {problem}", path.display())]
    Conflict {
        /// The path concerned.
        path: PathBuf,
        /// What is in the way.
        problem: String,
    },

    /// A /proc or /sys file could not be read or parsed.
    #[error(transparent)]
    Sys(#[from] iolab_sys::Error),

    /// The session was already torn down (e.g. by a signal handler).
    #[error("the SUT session was torn down (interrupted); start a new one")]
    TornDown,
}

fn sampled_note(files: u64, sampled: u64) -> String {
    if sampled < files {
        format!(", {sampled} of them measured")
    } else {
        String::new()
    }
}

impl Error {
    pub(crate) fn io(op: &'static str, path: impl Into<PathBuf>, error: io::Error) -> Self {
        Error::Io {
            op,
            path: path.into(),
            error,
        }
    }

    pub(crate) fn spec(field: impl Into<String>, message: impl Into<String>) -> Self {
        Error::InvalidSpec {
            field: field.into(),
            message: message.into(),
        }
    }

    /// True for errors found before anything on the machine was changed because the
    /// specification is wrong (exit code 2 territory for the binary).
    pub fn is_bad_input(&self) -> bool {
        matches!(
            self,
            Error::InvalidSpec { .. } | Error::Refused { .. } | Error::FsUnavailable { .. }
        )
    }
}

/// Which part of a `key = value` entry a [`SpecError`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum At {
    /// The value (for a table: the table as a whole).
    Value,
    /// The key: the name itself is the problem, e.g. a tunable this kernel does not have.
    Key,
}

/// One mistake in a [`crate::SutSpec`], found before anything on the machine is changed
/// ([`crate::SutSpec::validate_all`], [`crate::SutSpec::validate_here`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {message}{}", hint_suffix(hint))]
pub struct SpecError {
    /// Dotted path of the offending field (`target.size`, `tunables."vm.dirty_ratio"`).
    pub field: String,
    /// Whether the field's key or its value is wrong.
    pub at: At,
    /// What is wrong.
    pub message: String,
    /// What to do about it, when there is advice.
    pub hint: Option<String>,
}

impl SpecError {
    pub(crate) fn value(field: impl Into<String>, message: impl Into<String>) -> Self {
        SpecError {
            field: field.into(),
            at: At::Value,
            message: message.into(),
            hint: None,
        }
    }

    pub(crate) fn key(field: impl Into<String>, message: impl Into<String>) -> Self {
        SpecError {
            at: At::Key,
            ..SpecError::value(field, message)
        }
    }

    pub(crate) fn hint(mut self, hint: Option<String>) -> Self {
        self.hint = hint;
        self
    }
}

impl From<SpecError> for Error {
    fn from(e: SpecError) -> Self {
        Error::InvalidSpec {
            message: match e.hint {
                Some(h) => format!("{} ({h})", e.message),
                None => e.message,
            },
            field: e.field,
        }
    }
}

/// Details of a failed mount(2).
#[derive(Debug, thiserror::Error)]
#[error("cannot mount {source_} on {} as {fstype} with options {options:?}: {error}{}{}",
    target.display(), kernel_suffix(kernel), hint_suffix(hint))]
pub struct MountFailure {
    /// Device or pseudo source.
    pub source_: String,
    /// Mount point.
    pub target: PathBuf,
    /// Filesystem type.
    pub fstype: String,
    /// Options as given.
    pub options: String,
    /// The OS error.
    pub error: io::Error,
    /// Kernel log lines printed while mounting (the kernel's own reason, e.g. a bad option).
    pub kernel: Vec<String>,
    /// What to try next.
    pub hint: Option<String>,
}

/// Why a block device was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The path is not a block device.
    NotBlockDevice,
    /// It (or a partition of it, or a device built on it) is mounted.
    Mounted {
        /// Mount points found.
        at: Vec<PathBuf>,
    },
    /// It holds the root filesystem (directly, as a partition's disk, or under dm/md).
    BacksRoot,
    /// Something else has it open exclusively or is built on it (swap, dm, md, a mount).
    InUse {
        /// What holds it.
        by: String,
    },
    /// It is not a loop device iolab created, and `allow_destroy` is not set.
    NotOurs,
    /// It carries a filesystem or partition-table signature, and `force` is not set.
    Signature {
        /// What was recognised (`ext4`, `xfs`, `MBR partition table`, …).
        kind: &'static str,
    },
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::NotBlockDevice => write!(f, "it is not a block device"),
            Refusal::Mounted { at } => {
                let at: Vec<String> = at.iter().map(|p| p.display().to_string()).collect();
                write!(
                    f,
                    "it is mounted (at {}); iolab never formats a mounted device, unmount it first",
                    at.join(", ")
                )
            }
            Refusal::BacksRoot => write!(
                f,
                "it holds the root filesystem; iolab never formats it, whatever the settings"
            ),
            Refusal::InUse { by } => write!(f, "it is in use by {by}"),
            Refusal::NotOurs => write!(
                f,
                "iolab did not create it; set `allow_destroy = true` on the target to let \
                 iolab format it (its data will be destroyed)"
            ),
            Refusal::Signature { kind } => write!(
                f,
                "it carries a {kind} signature; set `force = true` on the target to \
                 overwrite it"
            ),
        }
    }
}

struct Refusals<'a>(&'a [Refusal]);

impl fmt::Display for Refusals<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, r) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("; and ")?;
            }
            write!(f, "{r}")?;
        }
        Ok(())
    }
}

fn hint_suffix(hint: &Option<String>) -> String {
    match hint {
        Some(h) => format!(" ({h})"),
        None => String::new(),
    }
}

fn kernel_suffix(kernel: &[String]) -> String {
    if kernel.is_empty() {
        String::new()
    } else {
        format!("; kernel says: {}", kernel.join(" / "))
    }
}

fn permission_hint(e: &io::Error) -> &'static str {
    match e.raw_os_error() {
        Some(libc::EACCES) | Some(libc::EPERM) => " (this needs root)",
        Some(libc::EROFS) => " (read-only filesystem: inside a container?)",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refused_lists_every_reason_with_its_override() {
        let e = Error::Refused {
            device: "/dev/loop7".into(),
            reasons: vec![Refusal::NotOurs, Refusal::Signature { kind: "ext4" }],
        };
        let s = e.to_string();
        assert!(s.starts_with("refusing to use /dev/loop7: iolab did not create it"));
        assert!(s.contains("allow_destroy = true"));
        assert!(s.contains("ext4 signature; set `force = true`"));
    }

    #[test]
    fn io_error_on_permission_says_root() {
        let e = Error::io(
            "write",
            "/proc/sys/vm/x",
            io::Error::from_raw_os_error(libc::EACCES),
        );
        assert!(e.to_string().ends_with("(this needs root)"));
    }
}
