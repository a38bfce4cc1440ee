//! Errors of the system call tracer.

use std::io;
use std::path::PathBuf;

use iolab_blocktrace::TraceError;

/// What went wrong while starting, steering or stopping the tracer.
#[derive(Debug, thiserror::Error)]
pub enum SysTraceError {
    /// bpf(2) or perf_event_open(2) refused: not root (no CAP_BPF and CAP_PERFMON).
    #[error("cannot {action}: {source}: tracing system calls needs root")]
    NeedsRoot {
        /// What was attempted.
        action: String,
        #[source]
        source: io::Error,
    },
    /// A bpf(2) or perf_event_open(2) call failed for another reason.
    #[error("cannot {action}: {source}")]
    Bpf {
        /// What was attempted (`"create the map tasks"`, `"attach to ..."`).
        action: String,
        #[source]
        source: io::Error,
    },
    /// The kernel's verifier refused a program (a bug in this crate, or a kernel it was not
    /// written for).
    #[error("the kernel refused the BPF program {program}: {source}\n{log}")]
    Verifier {
        program: String,
        #[source]
        source: io::Error,
        /// The end of the verifier's log.
        log: String,
    },
    /// tracefs, where the tracepoints' ids and record formats are read, is missing or
    /// closed.
    #[error(transparent)]
    Tracefs(TraceError),
    /// A tracepoint the tracer needs is not in this kernel, or its format is not the
    /// expected one.
    #[error("{}: {what}", path.display())]
    Tracepoint {
        /// Its `id` or `format` file.
        path: PathBuf,
        what: String,
    },
    /// The task given does not exist.
    #[error("no task {0}")]
    NoSuchTask(i32),
}

impl SysTraceError {
    /// Whether the caller asked for something impossible here (not root, a kernel without
    /// the mechanism, a task that does not exist) rather than tracing failing midway.
    pub fn is_bad_input(&self) -> bool {
        match self {
            SysTraceError::NeedsRoot { .. }
            | SysTraceError::Tracepoint { .. }
            | SysTraceError::NoSuchTask(_) => true,
            SysTraceError::Tracefs(e) => e.is_bad_input(),
            _ => false,
        }
    }

    /// What the user can do about it, if there is something.
    pub fn hint(&self) -> Option<String> {
        match self {
            SysTraceError::NeedsRoot { .. } => Some("run it as root (sudo)".into()),
            SysTraceError::Tracefs(e) => e.hint(),
            SysTraceError::Tracepoint { .. } => Some(
                "the system call view needs a kernel with CONFIG_BPF_SYSCALL, CONFIG_BPF_EVENTS \
                 and the raw_syscalls and sched tracepoints"
                    .into(),
            ),
            SysTraceError::Verifier { .. } => {
                Some("report it with the log above and `uname -r`".into())
            }
            _ => None,
        }
    }

    pub(crate) fn bpf(action: impl Into<String>, source: io::Error) -> Self {
        let action = action.into();
        if matches!(source.raw_os_error(), Some(libc::EPERM | libc::EACCES)) {
            SysTraceError::NeedsRoot { action, source }
        } else {
            SysTraceError::Bpf { action, source }
        }
    }
}

impl From<TraceError> for SysTraceError {
    fn from(e: TraceError) -> Self {
        SysTraceError::Tracefs(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permission_denied_means_root() {
        let e = SysTraceError::bpf("load the program x", io::Error::from_raw_os_error(1));
        assert!(matches!(e, SysTraceError::NeedsRoot { .. }));
        assert!(e.is_bad_input());
        assert!(
            e.to_string()
                .starts_with("cannot load the program x: Operation not permitted"),
            "{e}"
        );
        assert_eq!(e.hint().as_deref(), Some("run it as root (sudo)"));
        let e = SysTraceError::bpf("x", io::Error::from_raw_os_error(libc::EINVAL));
        assert!(!e.is_bad_input());
        assert_eq!(e.hint(), None);
    }
}
