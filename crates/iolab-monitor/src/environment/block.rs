//! One block device from sysfs: identity, size, queue settings (scheduler, read-ahead, …),
//! and what loop and device-mapper devices add.
//!
//! Files used, under `/sys/class/block/NAME/` (or a test root):
//! - `dev`, `size` (512-byte sectors), `ro`, `partition` (only for partitions), `slaves/`;
//! - of the whole disk (the partition's parent, or NAME itself): `device/model`,
//!   `device/vendor`, `queue/*` and `queue/iosched/*` (the active scheduler's tunables);
//! - `loop/` while a loop device is attached (read by [`iolab_sys::block::LoopAttrs`]);
//! - `dm/{name,uuid}` for device-mapper devices.

use std::collections::BTreeMap;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use iolab_sys::block::LoopAttrs;
use iolab_sys::{DevT, SysBlock};

use super::{read_bool, read_u64, read_value};

/// A block device, as sysfs describes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BlockEnv {
    /// Kernel name (`vda`, `sda2`, `nvme0n1p1`, `dm-0`, `loop3`).
    pub name: String,
    /// Device number, `major:minor`.
    pub dev: Option<String>,
    /// For a partition, its whole disk (whose model and queue are reported here).
    pub disk: Option<String>,
    /// `device/model` of the whole disk, trimmed (SCSI pads it with spaces).
    pub model: Option<String>,
    /// `device/vendor` of the whole disk (a name for SCSI/ATA, a PCI id for virtio).
    pub vendor: Option<String>,
    /// Size of this device (the partition, not the disk), bytes.
    pub size_bytes: Option<u64>,
    /// `ro`: the device is read-only.
    pub read_only: Option<bool>,
    /// `queue/rotational` of the whole disk: a spinning disk (or one that says so).
    pub rotational: Option<bool>,
    /// Request-queue settings of the whole disk.
    pub queue: QueueEnv,
    /// Devices this one is built on directly (`slaves/`: dm, md).
    pub slaves: Vec<String>,
    /// Every device below this one, nearest first (partition → disk, dm → its slaves, loop →
    /// the device holding its backing file).
    pub ancestors: Vec<String>,
    /// Loop device details, while attached.
    #[serde(rename = "loop")]
    pub loop_device: Option<LoopAttrs>,
    /// Device-mapper details.
    pub dm: Option<DmEnv>,
}

/// `queue/` of a block device.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct QueueEnv {
    /// The active I/O scheduler (the bracketed entry of `queue/scheduler`), e.g. `none`.
    pub scheduler: Option<String>,
    /// Every scheduler offered, e.g. `["none", "mq-deadline", "kyber", "bfq"]`.
    pub schedulers: Vec<String>,
    /// `read_ahead_kb`.
    pub read_ahead_kb: Option<u64>,
    /// `nr_requests`.
    pub nr_requests: Option<u64>,
    /// `max_sectors_kb`: largest request the kernel issues, KiB.
    pub max_sectors_kb: Option<u64>,
    /// `max_hw_sectors_kb`: largest request the device accepts, KiB.
    pub max_hw_sectors_kb: Option<u64>,
    /// `logical_block_size`, bytes.
    pub logical_block_size: Option<u64>,
    /// `physical_block_size`, bytes.
    pub physical_block_size: Option<u64>,
    /// `write_cache`: `write back` or `write through`.
    pub write_cache: Option<String>,
    /// Every readable one-line file of `queue/`, and of `queue/iosched/` prefixed `iosched/`
    /// (e.g. `iosched/fifo_batch`), as written.
    pub attributes: BTreeMap<String, String>,
}

/// `dm/` of a device-mapper device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DmEnv {
    /// `dm/name`, the name under `/dev/mapper/`.
    pub name: Option<String>,
    /// `dm/uuid` (LVM: `LVM-…`, LUKS: `CRYPT-…`).
    pub uuid: Option<String>,
}

/// Parse a sysfs "choice" file, where the active entry is bracketed:
/// `mq-deadline [none]` → (`Some("none")`, `["mq-deadline", "none"]`). A single entry without
/// brackets (`none`, on devices without a choice) is the active one.
pub fn parse_choice(text: &str) -> (Option<String>, Vec<String>) {
    let mut active = None;
    let mut all = Vec::new();
    for word in text.split_ascii_whitespace() {
        match word.strip_prefix('[').and_then(|w| w.strip_suffix(']')) {
            Some("") => {}
            Some(w) => {
                active = Some(w.to_owned());
                all.push(w.to_owned());
            }
            None => all.push(word.to_owned()),
        }
    }
    if active.is_none() && all.len() == 1 {
        active = all.first().cloned();
    }
    (active, all)
}

/// Every readable regular file of `dir` whose value is one line, keyed `prefix` + name.
fn one_line_files(dir: &Path, prefix: &str, out: &mut BTreeMap<String, String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let is_file = e.file_type().map(|t| t.is_file()).unwrap_or(false);
        if !is_file {
            continue;
        }
        let Some(text) = super::read_text(e.path()) else {
            continue;
        };
        let value = text.strip_suffix('\n').unwrap_or(&text);
        if !value.contains('\n') {
            let key = format!("{prefix}{}", e.file_name().to_string_lossy());
            out.insert(key, value.trim_end().to_owned());
        }
    }
}

impl QueueEnv {
    /// Read a `queue/` directory.
    pub fn read(queue: &Path) -> Self {
        let (scheduler, schedulers) = read_value(queue.join("scheduler"))
            .map(|t| parse_choice(&t))
            .unwrap_or_default();
        let mut attributes = BTreeMap::new();
        one_line_files(queue, "", &mut attributes);
        one_line_files(&queue.join("iosched"), "iosched/", &mut attributes);
        let num = |f: &str| read_u64(queue.join(f));
        QueueEnv {
            scheduler,
            schedulers,
            read_ahead_kb: num("read_ahead_kb"),
            nr_requests: num("nr_requests"),
            max_sectors_kb: num("max_sectors_kb"),
            max_hw_sectors_kb: num("max_hw_sectors_kb"),
            logical_block_size: num("logical_block_size"),
            physical_block_size: num("physical_block_size"),
            write_cache: read_value(queue.join("write_cache")),
            attributes,
        }
    }
}

impl BlockEnv {
    /// The device behind a device node or a symlink to one (`/dev/vda`, `/dev/mapper/x`,
    /// `/dev/loop3`); `None` if `dev_path` is not a block device or sysfs does not know it.
    pub fn probe_device(dev_path: &Path) -> Option<Self> {
        let m = std::fs::metadata(dev_path).ok()?;
        if !m.file_type().is_block_device() {
            return None;
        }
        Self::probe_dev(DevT::from_raw(m.rdev()))
    }

    /// The device with this number (`/sys/dev/block/MAJ:MIN`); `None` if there is none (tmpfs,
    /// overlayfs and btrfs report anonymous `0:N` numbers without a device).
    pub fn probe_dev(dev: DevT) -> Option<Self> {
        Self::probe_dev_in(Path::new("/sys"), dev)
    }

    /// The device of this kernel name (`vda`, `dm-0`); `None` if there is none.
    pub fn probe_name(name: &str) -> Option<Self> {
        Self::probe_name_in(Path::new("/sys"), name)
    }

    pub(crate) fn probe_dev_in(sys: &Path, dev: DevT) -> Option<Self> {
        let name = SysBlock::new(sys).name_of(dev).ok()??;
        Self::probe_name_in(sys, &name)
    }

    pub(crate) fn probe_name_in(sys: &Path, name: &str) -> Option<Self> {
        if name.is_empty() || name.contains('/') || name == "." || name == ".." {
            return None;
        }
        let sb = SysBlock::new(sys);
        let class = |n: &str| -> PathBuf { sys.join("class/block").join(n) };
        let dir = class(name);
        if !dir.is_dir() {
            return None;
        }
        let disk = sb.whole_disk(name).ok().flatten();
        let disk_dir = class(disk.as_deref().unwrap_or(name));
        let loop_device = LoopAttrs::read_dir(&dir.join("loop")).or_else(|| {
            disk.as_ref()
                .and_then(|_| LoopAttrs::read_dir(&disk_dir.join("loop")))
        });
        let dm = dir.join("dm").is_dir().then(|| DmEnv {
            name: read_value(dir.join("dm/name")),
            uuid: read_value(dir.join("dm/uuid")),
        });
        Some(BlockEnv {
            name: name.to_owned(),
            dev: read_value(dir.join("dev"))
                .and_then(|d| d.parse::<DevT>().ok().map(|d| d.to_string())),
            model: read_value(disk_dir.join("device/model")),
            vendor: read_value(disk_dir.join("device/vendor")),
            size_bytes: read_u64(dir.join("size")).and_then(|s| s.checked_mul(512)),
            read_only: read_bool(dir.join("ro")),
            rotational: read_bool(disk_dir.join("queue/rotational")),
            queue: QueueEnv::read(&disk_dir.join("queue")),
            slaves: sb.slaves(name).unwrap_or_default(),
            ancestors: sb.ancestors(name).unwrap_or_default(),
            disk,
            loop_device,
            dm,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scheduler_choice() {
        let (a, all) = parse_choice("mq-deadline [none]\n");
        assert_eq!(a.as_deref(), Some("none"));
        assert_eq!(all, vec!["mq-deadline", "none"]);
        let (a, all) = parse_choice("none [mq-deadline] kyber bfq \n");
        assert_eq!(a.as_deref(), Some("mq-deadline"));
        assert_eq!(all.len(), 4);
        assert_eq!(
            parse_choice("none\n"),
            (Some("none".into()), vec!["none".into()])
        );
        assert_eq!(parse_choice("noop deadline").0, None);
        assert_eq!(parse_choice(""), (None, vec![]));
        assert_eq!(parse_choice("[]").0, None);
        let (a, _) = parse_choice("always [madvise] never");
        assert_eq!(a.as_deref(), Some("madvise"));
    }

    use iolab_sys::testutil::{write, FakeSys, TempDir};

    /// Fake sysfs: disk sda (with model, queue, iosched), partition sda2, dm-0 on sda2,
    /// an attached loop0 and a detached loop1.
    fn fake_sys(t: &TempDir) -> PathBuf {
        let fake = FakeSys::new(t.0.join("sys"));
        let add = |rel: &str, name: &str, dev: &str, size: &str| {
            let dir = fake.add(rel, name, dev);
            write(&dir.join("size"), &format!("{size}\n"));
            write(&dir.join("ro"), "0\n");
            dir
        };
        let sda = add("sda", "sda", "8:0", "2048");
        write(&sda.join("device/model"), "Samsung SSD 870  \n");
        write(&sda.join("device/vendor"), "ATA     \n");
        write(
            &sda.join("queue/scheduler"),
            "none [mq-deadline] kyber bfq \n",
        );
        write(&sda.join("queue/rotational"), "0\n");
        write(&sda.join("queue/read_ahead_kb"), "128\n");
        write(&sda.join("queue/nr_requests"), "64\n");
        write(&sda.join("queue/logical_block_size"), "512\n");
        write(&sda.join("queue/physical_block_size"), "4096\n");
        write(&sda.join("queue/write_cache"), "write back\n");
        write(&sda.join("queue/two_lines"), "a\nb\n");
        write(&sda.join("queue/iosched/fifo_batch"), "16\n");
        let sda2 = add("sda/sda2", "sda2", "8:2", "1024");
        write(&sda2.join("partition"), "2\n");
        let dm = add("dm-0", "dm-0", "253:0", "1000");
        write(&dm.join("dm/name"), "vg-lv\n");
        write(&dm.join("dm/uuid"), "LVM-abc\n");
        write(&dm.join("queue/scheduler"), "none\n");
        fake.stack(&dm, &sda2);
        let l0 = add("loop0", "loop0", "7:0", "131072");
        write(&l0.join("queue/scheduler"), "[none] mq-deadline\n");
        write(
            &l0.join("loop/backing_file"),
            "/var/tmp/a b.img (deleted)\n",
        );
        write(&l0.join("loop/dio"), "1\n");
        write(&l0.join("loop/offset"), "4096\n");
        write(&l0.join("loop/autoclear"), "garbage\n");
        add("loop1", "loop1", "7:1", "0");
        fake.root
    }

    #[test]
    fn fake_partition_uses_disk_queue_and_model() {
        let t = TempDir::new("block");
        let sys = fake_sys(&t);
        let b = BlockEnv::probe_name_in(&sys, "sda2").unwrap();
        assert_eq!(b.name, "sda2");
        assert_eq!(b.dev.as_deref(), Some("8:2"));
        assert_eq!(b.disk.as_deref(), Some("sda"));
        assert_eq!(b.model.as_deref(), Some("Samsung SSD 870"));
        assert_eq!(b.vendor.as_deref(), Some("ATA"));
        assert_eq!(b.size_bytes, Some(1024 * 512));
        assert_eq!(b.read_only, Some(false));
        assert_eq!(b.rotational, Some(false));
        let q = &b.queue;
        assert_eq!(q.scheduler.as_deref(), Some("mq-deadline"));
        assert_eq!(q.schedulers, vec!["none", "mq-deadline", "kyber", "bfq"]);
        assert_eq!(q.read_ahead_kb, Some(128));
        assert_eq!(q.nr_requests, Some(64));
        assert_eq!(q.max_sectors_kb, None);
        assert_eq!(q.physical_block_size, Some(4096));
        assert_eq!(q.write_cache.as_deref(), Some("write back"));
        assert_eq!(
            q.attributes.get("iosched/fifo_batch").map(|s| s.as_str()),
            Some("16")
        );
        assert_eq!(
            q.attributes.get("read_ahead_kb").map(|s| s.as_str()),
            Some("128")
        );
        assert!(!q.attributes.contains_key("two_lines"));
        assert_eq!(b.ancestors, vec!["sda"]);
        assert!(b.loop_device.is_none() && b.dm.is_none());

        let d = BlockEnv::probe_dev_in(&sys, DevT::new(253, 0)).unwrap();
        assert_eq!(d.name, "dm-0");
        assert_eq!(d.disk, None);
        assert_eq!(d.dm.as_ref().unwrap().name.as_deref(), Some("vg-lv"));
        assert_eq!(d.queue.scheduler.as_deref(), Some("none"));
        assert_eq!(d.slaves, vec!["sda2"]);
        assert_eq!(d.ancestors, vec!["sda2", "sda"]);
        assert_eq!(d.model, None);
    }

    #[test]
    fn fake_loop_devices() {
        let t = TempDir::new("loop");
        let sys = fake_sys(&t);
        let l = BlockEnv::probe_name_in(&sys, "loop0").unwrap();
        let info = l.loop_device.unwrap();
        assert_eq!(
            info.backing_file.as_deref(),
            Some(Path::new("/var/tmp/a b.img"))
        );
        assert_eq!(info.backing_file_deleted, Some(true));
        assert_eq!(info.dio, Some(true));
        assert_eq!(info.offset, Some(4096));
        assert_eq!(info.sizelimit, None);
        assert_eq!(info.autoclear, None, "odd content is None");
        assert_eq!(l.size_bytes, Some(64 << 20));
        let detached = BlockEnv::probe_name_in(&sys, "loop1").unwrap();
        assert!(detached.loop_device.is_none());
        assert_eq!(detached.queue, QueueEnv::default());
        assert!(BlockEnv::probe_name_in(&sys, "nosuch").is_none());
        assert!(BlockEnv::probe_name_in(&sys, "../class").is_none());
        assert!(BlockEnv::probe_dev_in(&sys, DevT::new(0, 27)).is_none());
    }

    #[test]
    fn not_a_block_device() {
        assert!(BlockEnv::probe_device(Path::new("/dev/null")).is_none());
        assert!(BlockEnv::probe_device(Path::new("/nonexistent")).is_none());
        assert!(BlockEnv::probe_name("").is_none());
    }
}
