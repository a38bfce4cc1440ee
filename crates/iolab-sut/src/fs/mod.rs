//! Filesystems, one file each behind [`Filesystem`]: how to make one (mkfs program and
//! arguments), which mount options make sense, and whether this machine can use it.
//!
//! Availability is checked before anything is changed: the mkfs program must be installed
//! and the kernel must list the type in /proc/filesystems (after a `modprobe` attempt where a
//! module loader exists). A filesystem that fails either check is reported with the reason
//! and the fix, e.g. "f2fs is not available on this machine: the running kernel does not
//! support it ...".

mod btrfs;
mod ext4;
mod f2fs;
mod tmpfs;
mod xfs;

use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use iolab_util::suggest;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::mount::MountOptions;
use crate::util;

/// Filesystem types iolab can create.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FsKind {
    /// ext4.
    Ext4,
    /// XFS.
    Xfs,
    /// Btrfs.
    Btrfs,
    /// F2FS (where the kernel has it).
    F2fs,
    /// tmpfs (memory only; the `tmpfs` target).
    Tmpfs,
}

impl FsKind {
    /// All kinds.
    pub const ALL: [FsKind; 5] = [
        FsKind::Ext4,
        FsKind::Xfs,
        FsKind::Btrfs,
        FsKind::F2fs,
        FsKind::Tmpfs,
    ];

    /// The kernel's name for it (/proc/filesystems, mount -t).
    pub fn name(self) -> &'static str {
        self.imp().name()
    }

    /// Its implementation.
    pub fn imp(self) -> &'static dyn Filesystem {
        match self {
            FsKind::Ext4 => &ext4::Ext4,
            FsKind::Xfs => &xfs::Xfs,
            FsKind::Btrfs => &btrfs::Btrfs,
            FsKind::F2fs => &f2fs::F2fs,
            FsKind::Tmpfs => &tmpfs::Tmpfs,
        }
    }
}

impl fmt::Display for FsKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for FsKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        FsKind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = FsKind::ALL.iter().map(|k| k.name()).collect();
                match suggest::did_you_mean(s, names.iter().copied()) {
                    Some(hint) => format!("unknown filesystem {s:?}; {hint}"),
                    None => format!("unknown filesystem {s:?}; known: {}", names.join(", ")),
                }
            })
    }
}

/// What makes and mounts one filesystem type.
pub trait Filesystem: Sync {
    /// Kernel name (`ext4`).
    fn name(&self) -> &'static str;

    /// The mkfs program, `None` for filesystems that need none (tmpfs).
    fn mkfs_program(&self) -> Option<&'static str>;

    /// Debian package providing the mkfs program.
    fn package(&self) -> &'static str;

    /// mkfs arguments: force and quiet flags, the user's options, and the device last.
    /// `nodiscard` asks mkfs not to discard the device (to keep a preallocated image
    /// allocated).
    fn mkfs_args(&self, device: &Path, user: &[String], nodiscard: bool) -> Vec<OsString>;

    /// Check mount options against what the filesystem accepts (cheap, before acting).
    fn check_mount_options(&self, _opts: &MountOptions) -> Result<(), String> {
        Ok(())
    }

    /// Smallest device mkfs accepts with default options, bytes (0: no known minimum).
    fn min_size(&self) -> u64 {
        0
    }

    /// Advice for a failed mkfs, from its error output.
    fn mkfs_hint(&self, stderr: &str) -> Option<String> {
        let s = stderr.to_ascii_lowercase();
        (s.contains("too small") || s.contains("size") && s.contains("minimum"))
            .then(|| "make the image larger".to_string())
    }
}

/// Whether a filesystem can be used here, and why not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Availability {
    /// Which.
    pub kind: FsKind,
    /// The mkfs program found (`None` also when none is needed).
    pub mkfs: Option<PathBuf>,
    /// Listed in /proc/filesystems (after a modprobe attempt).
    pub in_kernel: bool,
    /// Everything missing, each with the fix; empty when available.
    pub problems: Vec<String>,
}

impl Availability {
    /// Usable.
    pub fn is_available(&self) -> bool {
        self.problems.is_empty()
    }

    /// `Ok` if usable, else [`Error::FsUnavailable`] saying why.
    pub fn require(&self) -> Result<()> {
        if self.is_available() {
            Ok(())
        } else {
            Err(Error::FsUnavailable {
                fs: self.kind.name(),
                reason: self.problems.join("; and "),
            })
        }
    }
}

/// Kernel filesystem names from /proc/filesystems text (`nodev\ttmpfs`, `\text4`).
pub fn parse_proc_filesystems(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.split_whitespace().last())
        .map(str::to_owned)
        .collect()
}

fn kernel_has(name: &str) -> bool {
    std::fs::read_to_string("/proc/filesystems")
        .map(|t| parse_proc_filesystems(&t).iter().any(|n| n == name))
        .unwrap_or(false)
}

/// Check whether `kind` can be used on this machine. May load its kernel module.
pub fn availability(kind: FsKind) -> Availability {
    let imp = kind.imp();
    let mut problems = Vec::new();
    let mkfs = match imp.mkfs_program() {
        None => None,
        Some(prog) => {
            let found = util::find_program(prog);
            if found.is_none() {
                problems.push(format!(
                    "{prog} is not installed (apt-get install {})",
                    imp.package()
                ));
            }
            found
        }
    };
    let mut in_kernel = kernel_has(imp.name());
    if !in_kernel {
        let loader = util::find_program("modprobe");
        if let Some(modprobe) = &loader {
            let _ = std::process::Command::new(modprobe)
                .args(["-q", imp.name()])
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .status();
            in_kernel = kernel_has(imp.name());
        }
        if !in_kernel {
            let release = std::fs::read_to_string("/proc/sys/kernel/osrelease")
                .map(|s| s.trim().to_owned())
                .unwrap_or_else(|_| "?".into());
            problems.push(format!(
                "the running kernel ({release}) does not support it: it is not in \
                 /proc/filesystems and {}; use a kernel built with {} \
                 (CONFIG_{}_FS) or another filesystem",
                if loader.is_some() {
                    format!("`modprobe {}` did not load it", imp.name())
                } else {
                    "there is no module loader (modprobe) to load it".to_string()
                },
                imp.name(),
                imp.name().to_ascii_uppercase()
            ));
        }
    }
    Availability {
        kind,
        mkfs,
        in_kernel,
        problems,
    }
}

/// Run mkfs for `kind` on `device`.
pub(crate) fn mkfs(
    kind: FsKind,
    mkfs_program: &Path,
    device: &Path,
    user: &[String],
    nodiscard: bool,
) -> Result<()> {
    let imp = kind.imp();
    let args = imp.mkfs_args(device, user, nodiscard);
    util::run(mkfs_program, &args, |stderr| imp.mkfs_hint(stderr))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_typos_get_suggestions() {
        for k in FsKind::ALL {
            assert_eq!(k.name().parse::<FsKind>(), Ok(k));
        }
        let e = "ext5".parse::<FsKind>().unwrap_err();
        assert!(e.contains("did you mean `ext4`"), "{e}");
        let e = "zfs-on-something".parse::<FsKind>().unwrap_err();
        assert!(e.contains("known: ext4, xfs, btrfs, f2fs, tmpfs"), "{e}");
    }

    #[test]
    fn proc_filesystems_names() {
        let t = "nodev\tsysfs\nnodev\ttmpfs\n\text4\n\txfs\n";
        assert_eq!(
            parse_proc_filesystems(t),
            vec!["sysfs", "tmpfs", "ext4", "xfs"]
        );
    }

    #[test]
    fn device_is_the_last_mkfs_argument() {
        for k in [FsKind::Ext4, FsKind::Xfs, FsKind::Btrfs, FsKind::F2fs] {
            let args =
                k.imp()
                    .mkfs_args(Path::new("/dev/loop9"), &["-L".into(), "x".into()], false);
            assert_eq!(args.last().unwrap(), "/dev/loop9", "{k}");
            assert!(args.iter().any(|a| a == "-L"), "{k}");
        }
    }
}
