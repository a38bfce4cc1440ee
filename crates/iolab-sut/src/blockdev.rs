//! The block device a run uses, looked up in sysfs through [`iolab_sys::SysBlock`] (which
//! documents the files).

use std::io;
use std::path::{Path, PathBuf};

use iolab_sys::{DevT, SysBlock};
use serde::{Deserialize, Serialize};

/// A block device a run uses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DevInfo {
    /// Path (`/dev/loop3`).
    pub path: PathBuf,
    /// Device number.
    pub dev: DevT,
    /// Kernel name (`loop3`, `sda1`), as in /proc/diskstats.
    pub name: String,
    /// The disk owning the request queue (`sda` for `sda1`; the name itself for a disk).
    pub queue_name: String,
    /// For a loop device, its backing file.
    pub backing: Option<PathBuf>,
}

impl DevInfo {
    /// Look up a block device by path.
    pub fn of_path(path: &Path) -> Result<DevInfo, iolab_sys::Error> {
        let dev = DevT::of_block_device(path)?;
        let sys = SysBlock::system();
        let name = sys.name_of(dev)?.ok_or_else(|| iolab_sys::Error::Read {
            path: PathBuf::from(format!("/sys/dev/block/{dev}")),
            source: io::Error::new(io::ErrorKind::NotFound, "no such block device in sysfs"),
        })?;
        Ok(Self::named(&sys, path.to_owned(), dev, name))
    }

    /// The block device holding the filesystem that `path` is on, if it has one (tmpfs,
    /// overlayfs and btrfs's anonymous device numbers have none).
    pub fn of_file(path: &Path) -> Option<DevInfo> {
        let dev = DevT::of_file(path).ok()?;
        let sys = SysBlock::system();
        let name = sys.name_of(dev).ok()??;
        Some(Self::named(
            &sys,
            PathBuf::from("/dev").join(&name),
            dev,
            name,
        ))
    }

    fn named(sys: &SysBlock, path: PathBuf, dev: DevT, name: String) -> DevInfo {
        DevInfo {
            path,
            dev,
            queue_name: sys
                .whole_disk(&name)
                .ok()
                .flatten()
                .unwrap_or_else(|| name.clone()),
            backing: sys.loop_backing_file(&name).ok().flatten().map(|(p, _)| p),
            name,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_on_a_memory_filesystem_has_no_device() {
        assert_eq!(DevInfo::of_file(Path::new("/proc/self")), None);
        assert!(matches!(
            DevInfo::of_path(Path::new("/dev/null")),
            Err(iolab_sys::Error::NotBlockDevice { .. })
        ));
    }
}
