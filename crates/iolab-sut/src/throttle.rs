//! An origin slowed down to behave like a disk: cgroup v1 blkio throttling
//! (`blkio.throttle.{read,write}_{bps,iops}_device`) of the run's block device, for the
//! threads of a cgroup iolab creates and the engine joins.
//!
//! What it throttles, measured on Linux 6.18 with a loop device (docs/experiments.md has the
//! numbers): a bio is charged to the blkio cgroup of the task that submits it. So the limits
//! hold for direct I/O, for reads that miss the page cache (the reader submits them and
//! its read-ahead), and for writeback the workload's own `fsync`/`fdatasync` starts. They
//! do **not** hold for buffered writes that the kernel's flusher threads write back
//! (background writeback, dirty expiry, `sync(2)`): cgroup v1 has no writeback
//! attribution, so those bios belong to the root cgroup and pass at full speed, and the
//! cgroup is charged nothing for them. [`ThrottleCgroup::charged`] reads what was charged,
//! so a run can say how much of its device traffic escaped the limits.
//!
//! The cgroup is created inside this process's own blkio cgroup, named `iolab-…`,
//! journalled before it is made, and removed at teardown (its limits go with it).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::cgroup;
use crate::error::{Error, Result};
use crate::util;
use iolab_sys::DevT;

/// Limits of a throttled origin (`None`: not limited).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Throttle {
    /// Read bandwidth, bytes per second.
    pub read_bps: Option<u64>,
    /// Write bandwidth, bytes per second.
    pub write_bps: Option<u64>,
    /// Read requests (bios) per second.
    pub read_iops: Option<u64>,
    /// Write requests (bios) per second.
    pub write_iops: Option<u64>,
}

impl Throttle {
    /// The limit files and their values.
    pub fn files(&self) -> Vec<(&'static str, u64)> {
        [
            ("blkio.throttle.read_bps_device", self.read_bps),
            ("blkio.throttle.write_bps_device", self.write_bps),
            ("blkio.throttle.read_iops_device", self.read_iops),
            ("blkio.throttle.write_iops_device", self.write_iops),
        ]
        .into_iter()
        .filter_map(|(f, v)| v.map(|v| (f, v)))
        .collect()
    }

    /// Whether writes are limited (the limits buffered writeback escapes).
    pub fn limits_writes(&self) -> bool {
        self.write_bps.is_some() || self.write_iops.is_some()
    }
}

/// Bytes and requests the throttled cgroup was charged on its device
/// (`blkio.throttle.io_service_bytes` / `io_serviced`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Charged {
    /// Bytes read.
    pub read_bytes: u64,
    /// Bytes written.
    pub write_bytes: u64,
    /// Read requests.
    pub reads: u64,
    /// Write requests.
    pub writes: u64,
}

/// The blkio cgroup of a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThrottleCgroup {
    /// Its directory.
    pub path: PathBuf,
    /// The device throttled (a partition's whole disk).
    pub dev: DevT,
    /// The limits set.
    pub limits: Throttle,
}

impl ThrottleCgroup {
    /// Move one thread in (by TID).
    pub fn add_thread(&self, tid: i32) -> Result<()> {
        cgroup::add_thread(&self.path, tid)
    }

    /// Move a whole process in (all its threads).
    pub fn add_process(&self, pid: u32) -> Result<()> {
        cgroup::add_process(&self.path, pid)
    }

    /// Move the calling thread in.
    pub fn add_current_thread(&self) -> Result<()> {
        cgroup::add_current_thread(&self.path)
    }

    /// TIDs in it.
    pub fn tasks(&self) -> Result<Vec<i32>> {
        cgroup::tasks_of(&self.path)
    }

    /// What the cgroup was charged on the device so far.
    pub fn charged(&self) -> Result<Charged> {
        charged_in(&self.path, self.dev)
    }
}

/// What the v1 blkio cgroup `dir` was charged on `dev` so far.
pub(crate) fn charged_in(dir: &Path, dev: DevT) -> Result<Charged> {
    let read = |f: &str| {
        let p = dir.join(f);
        std::fs::read_to_string(&p).map_err(|e| Error::io("read", p, e))
    };
    let bytes = parse_service(&read("blkio.throttle.io_service_bytes")?, dev);
    let ios = parse_service(&read("blkio.throttle.io_serviced")?, dev);
    Ok(Charged {
        read_bytes: bytes.0,
        write_bytes: bytes.1,
        reads: ios.0,
        writes: ios.1,
    })
}

/// `(Read, Write)` of `dev` in a `blkio.throttle.io_service*` file:
///
/// ```text
/// 7:1 Read 98062336
/// 7:1 Write 157306880
/// 7:1 Sync 255369216
/// 7:1 Async 0
/// 7:1 Discard 0
/// 7:1 Total 255369216
/// Total 255369216
/// ```
pub fn parse_service(text: &str, dev: DevT) -> (u64, u64) {
    let want = dev.to_string();
    let mut rw = (0, 0);
    for l in text.lines() {
        let mut it = l.split_whitespace();
        let (Some(d), Some(op), Some(n)) = (it.next(), it.next(), it.next()) else {
            continue;
        };
        if d != want {
            continue;
        }
        let n = n.parse().unwrap_or(0);
        match op {
            "Read" => rw.0 = n,
            "Write" => rw.1 = n,
            _ => {}
        }
    }
    rw
}

/// The directory in which iolab creates its blkio cgroup (this process's own).
pub fn parent_dir() -> Result<PathBuf> {
    cgroup::v1_parent_dir(
        "blkio",
        "blkio.throttle.read_bps_device",
        "throttling the origin (sut.throttle)",
    )
}

/// The device number to throttle for the block device `name`: the whole disk of a
/// partition (blk-throttle works per request queue).
pub(crate) fn throttle_dev(name: &str, queue_name: &str, dev: DevT) -> DevT {
    if name == queue_name {
        return dev;
    }
    std::fs::read_to_string(Path::new("/sys/class/block").join(queue_name).join("dev"))
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(dev)
}

/// Write the limits into a created cgroup and read them back.
pub(crate) fn set_limits(path: &Path, dev: DevT, t: &Throttle) -> Result<()> {
    for (file, value) in t.files() {
        let p = path.join(file);
        util::write_value(&p, &format!("{dev} {value}")).map_err(|e| Error::io("write", &p, e))?;
        let back = util::read_trimmed(&p).map_err(|e| Error::io("read", &p, e))?;
        let want = format!("{dev} {value}");
        if !back.lines().any(|l| l.trim() == want) {
            return Err(Error::Conflict {
                path: p,
                problem: format!("wrote {want:?} but the kernel shows {back:?}"),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn service_files_parse_per_device() {
        let text = "7:1 Read 98062336\n7:1 Write 157306880\n7:1 Sync 255369216\n\
                    7:1 Async 0\n7:1 Discard 0\n7:1 Total 255369216\n8:0 Read 5\nTotal 255369221\n";
        assert_eq!(parse_service(text, DevT::new(7, 1)), (98062336, 157306880));
        assert_eq!(parse_service(text, DevT::new(8, 0)), (5, 0));
        assert_eq!(parse_service("Total 0\n", DevT::new(7, 1)), (0, 0));
    }

    #[test]
    fn files_of_the_limits_set() {
        let t = Throttle {
            read_iops: Some(150),
            write_bps: Some(100 << 20),
            ..Throttle::default()
        };
        assert_eq!(
            t.files(),
            [
                ("blkio.throttle.write_bps_device", 100 << 20),
                ("blkio.throttle.read_iops_device", 150)
            ]
        );
        assert!(t.limits_writes());
        assert!(!Throttle::default().limits_writes());
    }
}
