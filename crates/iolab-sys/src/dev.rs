//! Device numbers (`dev_t`): `major:minor` as sysfs and mountinfo write them, and the raw
//! `st_dev` / `st_rdev` of `stat(2)`.

use std::fmt;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::Error;

/// A device number split into major and minor. In JSON it is the text `"major:minor"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DevT {
    /// Major number (driver).
    pub major: u32,
    /// Minor number (device of that driver).
    pub minor: u32,
}

/// Text that is not `major:minor`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a device number (expected major:minor, e.g. 8:0)")]
pub struct BadDevT(pub String);

impl DevT {
    /// From major and minor.
    pub fn new(major: u32, minor: u32) -> Self {
        DevT { major, minor }
    }

    /// From a raw `dev_t` as in `stat.st_dev` / `st_rdev`. The encoding is glibc's
    /// (sysmacros.h: 12 bits of major and 20 of minor, split around the low byte), not the
    /// kernel-internal `MKDEV` (`major << 20 | minor`) that trace events print.
    pub fn from_raw(dev: u64) -> Self {
        DevT {
            major: libc::major(dev as libc::dev_t),
            minor: libc::minor(dev as libc::dev_t),
        }
    }

    /// `st_dev` of `path`: the device of the filesystem holding it (as fio finds the disk a
    /// job file lives on). tmpfs, overlayfs and btrfs give anonymous `0:N` numbers that no
    /// block device has.
    pub fn of_file(path: &Path) -> Result<Self, Error> {
        let m = std::fs::metadata(path).map_err(|source| Error::Stat {
            path: path.to_owned(),
            source,
        })?;
        Ok(DevT::from_raw(m.dev()))
    }

    /// `st_rdev` of a block device node (`/dev/loop3`, or a symlink to one).
    pub fn of_block_device(path: &Path) -> Result<Self, Error> {
        let m = std::fs::metadata(path).map_err(|source| Error::Stat {
            path: path.to_owned(),
            source,
        })?;
        if !m.file_type().is_block_device() {
            return Err(Error::NotBlockDevice {
                path: path.to_owned(),
            });
        }
        Ok(DevT::from_raw(m.rdev()))
    }
}

impl From<(u32, u32)> for DevT {
    fn from((major, minor): (u32, u32)) -> Self {
        DevT { major, minor }
    }
}

impl fmt::Display for DevT {
    /// `major:minor`, as in `/sys/class/block/*/dev` and `/sys/dev/block/`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.major, self.minor)
    }
}

impl FromStr for DevT {
    type Err = BadDevT;

    /// Parse `major:minor`; surrounding whitespace (a sysfs file's newline) is allowed.
    fn from_str(s: &str) -> Result<Self, BadDevT> {
        let bad = || BadDevT(s.to_owned());
        let (ma, mi) = s.trim().split_once(':').ok_or_else(bad)?;
        Ok(DevT {
            major: ma.parse().map_err(|_| bad())?,
            minor: mi.parse().map_err(|_| bad())?,
        })
    }
}

impl Serialize for DevT {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for DevT {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints_major_minor() {
        assert_eq!("254:0\n".parse::<DevT>(), Ok(DevT::new(254, 0)));
        assert_eq!("7:3".parse::<DevT>(), Ok(DevT::new(7, 3)));
        assert!("254".parse::<DevT>().is_err());
        assert!("x:1".parse::<DevT>().is_err());
        assert!("1:".parse::<DevT>().is_err());
        assert_eq!(DevT::new(7, 3).to_string(), "7:3");
        assert_eq!(DevT::from((8, 1)), DevT::new(8, 1));
        let e = "7".parse::<DevT>().unwrap_err().to_string();
        assert!(e.contains("expected major:minor"), "{e}");
    }

    #[test]
    fn raw_dev_t_uses_the_glibc_encoding() {
        // makedev(259, 65537) and makedev(259, 70000) as glibc encodes them.
        let enc = |maj: u64, min: u64| {
            ((maj & 0xfff) << 8) | ((maj & !0xfff) << 32) | (min & 0xff) | ((min & !0xff) << 12)
        };
        assert_eq!(DevT::from_raw(enc(259, 65537)), DevT::new(259, 65537));
        assert_eq!(DevT::from_raw(enc(259, 70000)), DevT::new(259, 70000));
        assert_eq!(DevT::from_raw(0x0803).to_string(), "8:3");
    }

    #[test]
    fn of_paths() {
        let here = DevT::of_file(Path::new("/proc/self")).unwrap();
        assert_eq!(here.major, 0, "procfs has an anonymous device");
        assert!(matches!(
            DevT::of_block_device(Path::new("/proc/self")),
            Err(Error::NotBlockDevice { .. })
        ));
        assert!(matches!(
            DevT::of_file(Path::new("/nonexistent/iolab")),
            Err(Error::Stat { .. })
        ));
        // /dev/null is a character device, not a block device.
        assert!(DevT::of_block_device(Path::new("/dev/null")).is_err());
    }

    #[test]
    fn json_is_the_text_form() {
        let j = serde_json::to_string(&DevT::new(7, 1)).unwrap();
        assert_eq!(j, "\"7:1\"");
        assert_eq!(serde_json::from_str::<DevT>(&j).unwrap(), DevT::new(7, 1));
        assert!(serde_json::from_str::<DevT>("\"7\"").is_err());
    }
}
