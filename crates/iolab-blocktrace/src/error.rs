//! Errors of the block tracer.

use std::io;
use std::path::PathBuf;

use iolab_sys::DevT;

/// What went wrong while resolving a device or tracing it.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// Neither /sys/kernel/tracing nor /sys/kernel/debug/tracing is a mounted tracefs.
    #[error("tracefs is not mounted (no {}/instances)", .0.display())]
    TracefsMissing(PathBuf),
    /// tracefs exists but this process may not use it.
    #[error("permission denied on {}: tracing needs root", .0.display())]
    NeedsRoot(PathBuf),
    /// A block trace event the tracer cannot do without is missing from this kernel.
    #[error("this kernel has no tracefs event block/{0}")]
    EventMissing(&'static str),
    /// A tracefs or sysfs file could not be created, written, read or removed.
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        /// What was attempted (`"create"`, `"write"`, `"read"`, `"remove"`, ...).
        action: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// The device given does not exist.
    #[error("no block device {0:?}")]
    NoSuchDevice(String),
    /// A device node that is not a block device (e.g. a character device).
    #[error("{} is not a block device", .0.display())]
    NotBlockDevice(PathBuf),
    /// A path whose filesystem has no block device of its own.
    #[error("{} is on device {dev}, which is not a block device", path.display())]
    NoBlockDevice {
        /// The path given.
        path: PathBuf,
        /// Its `st_dev`.
        dev: DevT,
    },
    /// A bio-based device (device-mapper, md, zram, ...): no request events fire for it.
    #[error("{name} is a bio-based device: the block layer issues no requests to it")]
    BioBased {
        /// Its kernel name.
        name: String,
        /// The devices it is built on (`slaves/`), which can be traced instead.
        below: Vec<String>,
    },
    /// An option of [`TraceOptions`](crate::TraceOptions) is out of range.
    #[error("invalid trace option: {0}")]
    BadOption(&'static str),
    /// A sysfs file did not have the expected shape.
    #[error(transparent)]
    Sys(iolab_sys::Error),
    /// The request-level trace could not be saved.
    #[error("cannot save the block trace: {0}")]
    Save(#[from] iolab_tracefile::Error),
    /// The thread reading `trace_pipe` panicked (a bug).
    #[error("the trace reader thread panicked")]
    ReaderPanicked,
}

impl TraceError {
    /// Whether the caller asked for something impossible (bad device, bad option, not root)
    /// rather than the trace failing midway.
    pub fn is_bad_input(&self) -> bool {
        matches!(
            self,
            TraceError::NoSuchDevice(_)
                | TraceError::NotBlockDevice(_)
                | TraceError::NoBlockDevice { .. }
                | TraceError::BioBased { .. }
                | TraceError::BadOption(_)
                | TraceError::NeedsRoot(_)
                | TraceError::TracefsMissing(_)
                | TraceError::EventMissing(_)
        ) || matches!(self, TraceError::Save(e) if e.is_bad_input())
    }

    /// What the user can do about it, if there is something.
    pub fn hint(&self) -> Option<String> {
        match self {
            TraceError::TracefsMissing(_) => {
                Some("mount it: mount -t tracefs nodev /sys/kernel/tracing".into())
            }
            TraceError::NeedsRoot(_) => Some("run as root (sudo)".into()),
            TraceError::EventMissing(_) => {
                Some("the kernel needs CONFIG_BLK_DEV_IO_TRACE / block tracepoints".into())
            }
            TraceError::NoSuchDevice(_) | TraceError::NotBlockDevice(_) => Some(
                "give a /dev path (/dev/vda), a kernel name (loop0, see lsblk), major:minor, or a \
                 file or directory on the filesystem to trace"
                    .into(),
            ),
            TraceError::NoBlockDevice { .. } => Some(
                "tmpfs, overlayfs, btrfs and network filesystems have no single block device; \
                 name the device instead (see lsblk)"
                    .into(),
            ),
            TraceError::BioBased { below, .. } if !below.is_empty() => Some(format!(
                "trace the device(s) below it: {}",
                below.join(", ")
            )),
            TraceError::BioBased { name, .. } => Some(format!(
                "bio-based devices have no requests of their own, and {name} sits on no other device"
            )),
            _ => None,
        }
    }

    pub(crate) fn io(action: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Self {
        let path = path.into();
        if source.kind() == io::ErrorKind::PermissionDenied {
            return TraceError::NeedsRoot(path);
        }
        TraceError::Io {
            action,
            path,
            source,
        }
    }
}

impl From<iolab_sys::Error> for TraceError {
    /// A failed read or stat keeps its path and OS error (and permission denied still says
    /// "needs root"); a parse error stays as it is.
    fn from(e: iolab_sys::Error) -> Self {
        match e {
            iolab_sys::Error::Read { path, source } => TraceError::io("read", path, source),
            iolab_sys::Error::Stat { path, source } => TraceError::io("stat", path, source),
            iolab_sys::Error::NotBlockDevice { path } => TraceError::NotBlockDevice(path),
            e @ iolab_sys::Error::Parse(_) => TraceError::Sys(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permission_denied_means_root() {
        let e = TraceError::io(
            "write",
            "/sys/kernel/tracing/x",
            io::Error::from(io::ErrorKind::PermissionDenied),
        );
        assert!(matches!(e, TraceError::NeedsRoot(_)));
        assert!(e.is_bad_input());
        assert_eq!(e.hint().as_deref(), Some("run as root (sudo)"));
        let e = TraceError::io("read", "/x", io::Error::from(io::ErrorKind::NotFound));
        assert!(!e.is_bad_input());
        assert!(e.to_string().starts_with("cannot read /x: "));
        let e = TraceError::BioBased {
            name: "dm-0".into(),
            below: vec!["vda2".into()],
        };
        assert_eq!(
            e.hint().as_deref(),
            Some("trace the device(s) below it: vda2")
        );
    }
}
