//! Block devices: numbers, names, and their relatives in sysfs.
//!
//! Files used (all under `/sys`):
//! - `dev/block/MAJ:MIN` → symlink to the device's directory (number → kernel name).
//! - `class/block/NAME/partition` exists for partitions; the directory above is the disk,
//!   which owns `queue/` (partitions have no queue of their own).
//! - `class/block/NAME/holders/`: devices built on NAME (dm, md, bcache).
//! - `class/block/NAME/slaves/`: devices NAME is built on.
//! - `block/loopN/loop/backing_file`: only while the loop device is attached.

use std::fmt;
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// A device number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct DevT {
    /// Major number.
    pub major: u32,
    /// Minor number.
    pub minor: u32,
}

impl DevT {
    /// Split a kernel `dev_t` (glibc's encoding, see sysmacros.h).
    pub fn from_raw(dev: u64) -> DevT {
        DevT {
            major: (((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff)) as u32,
            minor: ((dev & 0xff) | ((dev >> 12) & !0xff)) as u32,
        }
    }

    /// Parse `major:minor`.
    pub fn parse(s: &str) -> Option<DevT> {
        let (a, b) = s.trim().split_once(':')?;
        Some(DevT {
            major: a.parse().ok()?,
            minor: b.parse().ok()?,
        })
    }
}

impl From<(u32, u32)> for DevT {
    fn from((major, minor): (u32, u32)) -> Self {
        DevT { major, minor }
    }
}

impl fmt::Display for DevT {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.major, self.minor)
    }
}

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
    pub fn of_path(path: &Path) -> io::Result<DevInfo> {
        let dev = rdev_of(path)?;
        let name = name_of(dev).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                format!("{dev} has no entry in /sys/dev/block"),
            )
        })?;
        Ok(DevInfo {
            path: path.to_owned(),
            dev,
            queue_name: whole_disk(&name).unwrap_or_else(|| name.clone()),
            backing: loop_backing_file(&name).map(|(p, _)| p),
            name,
        })
    }

    /// The block device holding the filesystem that `path` is on, if it has one (tmpfs,
    /// overlayfs and btrfs's anonymous device numbers have none).
    pub fn of_file(path: &Path) -> Option<DevInfo> {
        let dev = DevT::from_raw(std::fs::metadata(path).ok()?.dev());
        let name = name_of(dev)?;
        Some(DevInfo {
            path: PathBuf::from("/dev").join(&name),
            dev,
            queue_name: whole_disk(&name).unwrap_or_else(|| name.clone()),
            backing: loop_backing_file(&name).map(|(p, _)| p),
            name,
        })
    }
}

/// `st_rdev` of a block device node; an error if `path` is not one.
pub fn rdev_of(path: &Path) -> io::Result<DevT> {
    let m = std::fs::metadata(path)?;
    if !m.file_type().is_block_device() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is not a block device", path.display()),
        ));
    }
    Ok(DevT::from_raw(m.rdev()))
}

/// Kernel name of a device number.
pub fn name_of(dev: DevT) -> Option<String> {
    let link = std::fs::read_link(format!("/sys/dev/block/{dev}")).ok()?;
    Some(link.file_name()?.to_string_lossy().into_owned())
}

fn class_dir(name: &str) -> PathBuf {
    Path::new("/sys/class/block").join(name)
}

/// For a partition, the disk it is on.
pub fn whole_disk(name: &str) -> Option<String> {
    let dir = class_dir(name);
    if !dir.join("partition").exists() {
        return None;
    }
    let real = std::fs::canonicalize(&dir).ok()?;
    Some(real.parent()?.file_name()?.to_string_lossy().into_owned())
}

fn list(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Partitions of a disk (`sda1`, `loop3p1`).
pub fn partitions(name: &str) -> Vec<String> {
    let dir = class_dir(name);
    list(&dir)
        .into_iter()
        .filter(|e| dir.join(e).join("partition").exists())
        .collect()
}

/// Devices built on `name` (dm, md).
pub fn holders(name: &str) -> Vec<String> {
    list(&class_dir(name).join("holders"))
}

/// Devices `name` is built on.
pub fn slaves(name: &str) -> Vec<String> {
    list(&class_dir(name).join("slaves"))
}

/// Device number of a device by kernel name.
pub fn dev_of_name(name: &str) -> Option<DevT> {
    DevT::parse(&std::fs::read_to_string(class_dir(name).join("dev")).ok()?)
}

/// Parse a loop `backing_file`: the path, and whether the kernel marked it `(deleted)`.
pub fn parse_backing_file(text: &str) -> (PathBuf, bool) {
    let line = text.strip_suffix('\n').unwrap_or(text);
    match line.strip_suffix(" (deleted)") {
        Some(p) => (PathBuf::from(p), true),
        None => (PathBuf::from(line), false),
    }
}

/// Backing file of an attached loop device (`None` if not a loop device or not attached).
pub fn loop_backing_file(name: &str) -> Option<(PathBuf, bool)> {
    let t = std::fs::read_to_string(Path::new("/sys/block").join(name).join("loop/backing_file"))
        .ok()?;
    Some(parse_backing_file(&t))
}

/// Every attached loop device: (kernel name, backing file, deleted).
pub fn attached_loops() -> Vec<(String, PathBuf, bool)> {
    list(Path::new("/sys/block"))
        .into_iter()
        .filter(|n| n.starts_with("loop"))
        .filter_map(|n| loop_backing_file(&n).map(|(p, d)| (n, p, d)))
        .collect()
}

/// `name`, its partitions, and everything built on any of them, recursively.
pub fn descendants(name: &str) -> Vec<String> {
    let mut out = vec![name.to_owned()];
    let mut i = 0;
    while i < out.len() {
        let n = out[i].clone();
        for d in partitions(&n).into_iter().chain(holders(&n)) {
            if !out.contains(&d) {
                out.push(d);
            }
        }
        i += 1;
    }
    out
}

/// `name`, the disk of a partition, and everything it is built on, recursively.
pub fn ancestors(name: &str) -> Vec<String> {
    let mut out = vec![name.to_owned()];
    let mut i = 0;
    while i < out.len() {
        let n = out[i].clone();
        for d in whole_disk(&n).into_iter().chain(slaves(&n)) {
            if !out.contains(&d) {
                out.push(d);
            }
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dev_t_round_trips_glibc_encoding() {
        // makedev(259, 65537) as glibc encodes it.
        let (maj, min) = (259u64, 65537u64);
        let raw =
            ((maj & 0xfff) << 8) | ((maj & !0xfff) << 32) | (min & 0xff) | ((min & !0xff) << 12);
        assert_eq!(
            DevT::from_raw(raw),
            DevT {
                major: 259,
                minor: 65537
            }
        );
        assert_eq!(DevT::from_raw(0x0803).to_string(), "8:3");
        assert_eq!(DevT::parse("7:3\n"), Some(DevT { major: 7, minor: 3 }));
        assert_eq!(DevT::parse("7"), None);
    }

    #[test]
    fn backing_file_deleted_marker() {
        assert_eq!(
            parse_backing_file("/var/tmp/iolab-1.img (deleted)\n"),
            (PathBuf::from("/var/tmp/iolab-1.img"), true)
        );
        assert_eq!(
            parse_backing_file("/var/tmp/a b.img\n"),
            (PathBuf::from("/var/tmp/a b.img"), false)
        );
    }
}
