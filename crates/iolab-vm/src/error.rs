//! Why a VM could not be prepared, started or waited for. Each error says what went wrong
//! and where; [`Error::hint`] says what to do.

use std::io;
use std::path::PathBuf;
use std::time::Duration;

/// The hint of [`Error::NoKernel`], also the advice in the docs.
pub const KERNEL_HINT: &str =
    "run scripts/vm-kernel.sh as root (downloads Debian's linux-image-amd64 into \
     /var/cache/iolab/vm), or give the path of a vmlinuz";

/// The hint of [`Error::QemuMissing`].
pub const QEMU_HINT: &str = "apt-get install qemu-system-x86";

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No kernel where iolab looks for one.
    #[error("no kernel for the virtual machine (looked in {searched})")]
    NoKernel { searched: String },
    /// A file given as the kernel is not one (or its version cannot be read).
    #[error("{}: not a usable kernel: {what}", path.display())]
    BadKernel { path: PathBuf, what: String },
    /// A kernel module the guest needs cannot be read or parsed.
    #[error("{}: cannot use the kernel module: {what}", path.display())]
    BadModule { path: PathBuf, what: String },
    /// A file or directory could not be read, written or created.
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        source: io::Error,
    },
    /// A helper program (ldd, xz, zstd, qemu --version) failed.
    #[error("`{command}` failed ({status}): {output}")]
    Command {
        command: String,
        status: String,
        output: String,
    },
    /// The qemu program is not on this machine.
    #[error("qemu ({program}) is not on this machine")]
    QemuMissing { program: String },
    /// KVM was asked for, but it does not work here.
    #[error("KVM cannot be used here: {why}")]
    KvmUnusable { why: String },
    /// The kernel command line (with the guest command in it) is over the kernel's limit.
    #[error("the guest's kernel command line is {len} bytes, over the limit of {max}")]
    CmdlineTooLong { len: usize, max: usize },
    /// Something in the configuration cannot be passed to qemu or the guest.
    #[error("bad VM configuration: {what}")]
    Config { what: String },
    /// qemu ended before the guest connected to its channel, or cannot be started.
    #[error("qemu {what}; the console's last lines:\n{console_tail}")]
    QemuFailed { what: String, console_tail: String },
    /// The guest did not power off within the bound; qemu was killed and reaped.
    #[error(
        "the guest did not power off within {} s; qemu (pid {pid}) was killed. The console's \
         last lines:\n{console_tail}",
        bound.as_secs_f64()
    )]
    Hung {
        bound: Duration,
        pid: u32,
        console_tail: String,
    },
}

impl Error {
    pub(crate) fn io(action: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Self {
        Error::Io {
            action,
            path: path.into(),
            source,
        }
    }

    /// What to do about it, when there is something to say beyond the message.
    pub fn hint(&self) -> Option<&'static str> {
        match self {
            Error::NoKernel { .. } => Some(KERNEL_HINT),
            Error::BadKernel { .. } => Some(
                "give a bzImage (vmlinuz) built for x86_64, or run scripts/vm-kernel.sh as root \
                 and leave the kernel unset",
            ),
            Error::BadModule { .. } => Some(
                "the kernel's modules directory is damaged: extract the kernel again \
                 (scripts/vm-kernel.sh does, after removing its directory)",
            ),
            Error::Io { .. } | Error::Command { .. } => None,
            Error::QemuMissing { .. } => Some(QEMU_HINT),
            Error::KvmUnusable { .. } => Some(
                "use the automatic accelerator (KVM where it works, else TCG) or TCG; KVM \
                 needs VT-x or AMD-V (cpuinfo flag vmx or svm), the kvm_intel or kvm_amd \
                 module and a /dev/kvm that can be opened",
            ),
            Error::CmdlineTooLong { .. } => {
                Some("shorten the guest command (or pass long arguments in a file the guest reads)")
            }
            Error::Config { .. } => None,
            Error::QemuFailed { .. } => {
                Some("the console's lines above (qemu's own messages are there too) say why")
            }
            Error::Hung { .. } => Some(
                "the guest command ran longer than allowed, or the guest hung while booting: \
                 see the console's last lines",
            ),
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
