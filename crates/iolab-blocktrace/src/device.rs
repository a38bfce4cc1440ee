//! Which device to trace: from a `/dev` path, a kernel name, `major:minor`, or a file or
//! directory (the device of its filesystem).
//!
//! Request events (`block_rq_*`) carry the number of the *whole disk* and absolute sectors,
//! also for I/O to a partition; `block_bio_queue` carries the partition's number. Tracing a
//! partition therefore means tracing its disk, restricted to the partition's sectors (plus
//! flush requests, which have none and cannot be attributed to a partition).
//!
//! Only request-based (blk-mq) devices issue requests: `sysfs` shows an `mq/` directory for
//! them. Bio-based devices (device-mapper, md, zram, ...) pass bios on to the devices below
//! them, so tracing one would show nothing; [`TraceDevice::resolve`] refuses them and names
//! the devices below.

use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::TraceError;
use iolab_sys::DevT;
use iolab_sys::SysBlock;

/// A range of 512-byte sectors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SectorRange {
    /// First sector.
    pub start: u64,
    /// Number of sectors.
    pub sectors: u64,
}

/// A device to trace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceDevice {
    /// Kernel name of the device asked for (`loop1`, `vda2`).
    pub name: String,
    /// Its number.
    pub dev: DevT,
    /// The whole disk whose requests are traced (= `name` unless it is a partition).
    pub disk: String,
    /// Its number: the `dev` of request events.
    pub disk_dev: DevT,
    /// For a partition, its sectors on the disk.
    pub partition: Option<SectorRange>,
}

fn read_u64(path: &Path) -> Result<u64, TraceError> {
    let text = std::fs::read_to_string(path).map_err(|e| TraceError::io("read", path, e))?;
    text.trim().parse().map_err(|_| TraceError::Io {
        action: "parse",
        path: path.to_owned(),
        source: io::Error::new(io::ErrorKind::InvalidData, "not a number"),
    })
}

impl TraceDevice {
    /// A whole (request-based) disk, without looking at sysfs.
    pub fn whole(name: &str, dev: DevT) -> Self {
        TraceDevice {
            name: name.to_owned(),
            dev,
            disk: name.to_owned(),
            disk_dev: dev,
            partition: None,
        }
    }

    /// Resolve what the user typed: `/dev/loop0`, `loop0`, `7:0`, or a file or directory
    /// (the device its filesystem is on).
    pub fn resolve(spec: &str) -> Result<Self, TraceError> {
        Self::resolve_in(Path::new("/sys"), spec)
    }

    /// [`TraceDevice::resolve`] against a sysfs tree at `sys` (for tests). Paths are still
    /// looked up in the real filesystem.
    pub fn resolve_in(sys: &Path, spec: &str) -> Result<Self, TraceError> {
        let spec_t = spec.trim();
        if spec_t.is_empty() {
            return Err(TraceError::NoSuchDevice(spec.to_owned()));
        }
        if let Ok(dev) = spec_t.parse::<DevT>() {
            return Self::from_dev_in(sys, dev);
        }
        if !spec_t.contains('/') && sys.join("class/block").join(spec_t).exists() {
            return Self::from_name_in(sys, spec_t);
        }
        let mut path = PathBuf::from(spec_t);
        if !path.exists() && !spec_t.starts_with('/') && !spec_t.starts_with('.') {
            path = Path::new("/dev").join(spec_t);
        }
        let meta = match std::fs::metadata(&path) {
            Ok(m) => m,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(TraceError::NoSuchDevice(spec.to_owned()))
            }
            Err(e) => return Err(TraceError::io("stat", path, e)),
        };
        let ft = meta.file_type();
        if ft.is_char_device() || ft.is_fifo() || ft.is_socket() {
            return Err(TraceError::NotBlockDevice(path));
        }
        let (dev, is_node) = if ft.is_block_device() {
            (DevT::from_raw(meta.rdev()), true)
        } else {
            (DevT::from_raw(meta.dev()), false)
        };
        match SysBlock::new(sys).name_of(dev) {
            Ok(Some(name)) => Self::from_name_in(sys, &name),
            Ok(None) if is_node => Err(TraceError::NoSuchDevice(spec.to_owned())),
            Ok(None) => Err(TraceError::NoBlockDevice { path, dev }),
            Err(e) => Err(e.into()),
        }
    }

    /// The device with this number.
    pub fn from_dev(dev: DevT) -> Result<Self, TraceError> {
        Self::from_dev_in(Path::new("/sys"), dev)
    }

    fn from_dev_in(sys: &Path, dev: DevT) -> Result<Self, TraceError> {
        match SysBlock::new(sys).name_of(dev) {
            Ok(Some(name)) => Self::from_name_in(sys, &name),
            Ok(None) => Err(TraceError::NoSuchDevice(dev.to_string())),
            Err(e) => Err(e.into()),
        }
    }

    /// The device with this kernel name, against a sysfs tree at `sys`.
    pub fn from_name_in(sys: &Path, name: &str) -> Result<Self, TraceError> {
        let sb = SysBlock::new(sys);
        let class = sys.join("class/block").join(name);
        if name.is_empty() || name.contains('/') || !class.exists() {
            return Err(TraceError::NoSuchDevice(name.to_owned()));
        }
        let dev = sb.dev(name)?;
        let (disk, partition) = match sb.whole_disk(name)? {
            Some(disk) => {
                let range = SectorRange {
                    start: read_u64(&class.join("start"))?,
                    sectors: read_u64(&class.join("size"))?,
                };
                (disk, Some(range))
            }
            None => (name.to_owned(), None),
        };
        let disk_class = sys.join("class/block").join(&disk);
        if !disk_class.join("mq").exists() {
            return Err(TraceError::BioBased {
                below: sb.slaves(&disk).unwrap_or_default(),
                name: disk,
            });
        }
        let disk_dev = if partition.is_some() {
            sb.dev(&disk)?
        } else {
            dev
        };
        Ok(TraceDevice {
            name: name.to_owned(),
            dev,
            disk,
            disk_dev,
            partition,
        })
    }

    /// `dev_t` as the block trace events encode it: `major << 20 | minor` (the kernel's
    /// `MKDEV`, not glibc's `makedev`), for event filters.
    pub fn kernel_dev(dev: DevT) -> u64 {
        (u64::from(dev.major) << 20) | u64::from(dev.minor & 0xf_ffff)
    }

    /// The tracefs filter for request events (`block_rq_*`).
    pub fn request_filter(&self) -> String {
        let d = Self::kernel_dev(self.disk_dev);
        match self.partition {
            None => format!("dev == {d}"),
            Some(p) => format!(
                "dev == {d} && ((sector >= {} && sector < {}) || nr_sector == 0)",
                p.start,
                p.start.saturating_add(p.sectors)
            ),
        }
    }

    /// The tracefs filter for `block_bio_queue`, whose `dev` is the partition's own.
    pub fn bio_filter(&self) -> String {
        format!("dev == {}", Self::kernel_dev(self.dev))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_sys::testutil::{write, FakeSys, TempDir};

    /// vda (blk-mq) with partition vda2, dm-0 (bio-based) on vda2, loop3 (blk-mq).
    fn fake_sys(t: &TempDir) -> PathBuf {
        let fake = FakeSys::new(t.0.join("sys"));
        let vda = fake.add("vda", "vda", "254:0");
        std::fs::create_dir_all(vda.join("mq/0")).unwrap();
        let vda2 = fake.add("vda/vda2", "vda2", "254:2");
        write(&vda2.join("partition"), "2\n");
        write(&vda2.join("start"), "2048\n");
        write(&vda2.join("size"), "40960\n");
        let dm = fake.add("dm-0", "dm-0", "252:0");
        fake.stack(&dm, &vda2);
        let loop3 = fake.add("loop3", "loop3", "7:3");
        std::fs::create_dir_all(loop3.join("mq")).unwrap();
        fake.root
    }

    #[test]
    fn names_numbers_and_partitions() {
        let t = TempDir::new("blocktrace-dev");
        let sys = fake_sys(&t);
        let l = TraceDevice::resolve_in(&sys, "loop3").unwrap();
        assert_eq!(l, TraceDevice::whole("loop3", DevT::new(7, 3)));
        assert_eq!(l.request_filter(), "dev == 7340035");
        assert_eq!(TraceDevice::resolve_in(&sys, " 7:3 ").unwrap(), l);
        let p = TraceDevice::resolve_in(&sys, "vda2").unwrap();
        assert_eq!(p.disk, "vda");
        assert_eq!(p.disk_dev, DevT::new(254, 0));
        assert_eq!(
            p.partition,
            Some(SectorRange {
                start: 2048,
                sectors: 40960
            })
        );
        assert_eq!(
            p.request_filter(),
            "dev == 266338304 && ((sector >= 2048 && sector < 43008) || nr_sector == 0)"
        );
        assert_eq!(p.bio_filter(), "dev == 266338306");
        let json = serde_json::to_string(&p).unwrap();
        assert!(json.contains("\"disk_dev\":\"254:0\""), "{json}");
        assert_eq!(serde_json::from_str::<TraceDevice>(&json).unwrap(), p);
    }

    #[test]
    fn refusals() {
        let t = TempDir::new("blocktrace-dev-bad");
        let sys = fake_sys(&t);
        match TraceDevice::resolve_in(&sys, "dm-0") {
            Err(TraceError::BioBased { name, below }) => {
                assert_eq!(name, "dm-0");
                assert_eq!(below, ["vda2"]);
            }
            other => panic!("{other:?}"),
        }
        for bad in ["", "nosuchdev", "9:9", "/no/such/path", "../x/y"] {
            assert!(
                matches!(
                    TraceDevice::resolve_in(&sys, bad),
                    Err(TraceError::NoSuchDevice(_))
                ),
                "{bad}"
            );
        }
        assert!(matches!(
            TraceDevice::resolve_in(&sys, "/dev/null"),
            Err(TraceError::NotBlockDevice(_))
        ));
        // A directory whose filesystem has no block device (procfs: 0:N).
        assert!(matches!(
            TraceDevice::resolve_in(&sys, "/proc/self"),
            Err(TraceError::NoBlockDevice { .. })
        ));
    }

    #[test]
    fn kernel_encoding() {
        assert_eq!(TraceDevice::kernel_dev(DevT::new(7, 1)), 7340033);
        assert_eq!(
            TraceDevice::kernel_dev(DevT::new(259, 0x12345)),
            (259 << 20) | 0x12345
        );
    }
}
