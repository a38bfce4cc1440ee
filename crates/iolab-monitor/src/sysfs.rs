//! Block-device stacking from sysfs: which devices a device sits on, so that I/O seen on a
//! loop or dm device can be followed to the disk that really served it.
//!
//! Files used (under `/sys`, or another root for tests):
//! - `class/block/NAME/dev`: `major:minor\n`.
//! - `class/block/NAME/slaves/`: one entry per device NAME is built on (dm, md, bcache).
//! - `class/block/NAME/partition`: exists for partitions; the directory above is the disk.
//! - `class/block/NAME/loop/backing_file` (= `/sys/block/loopN/loop/backing_file`): only
//!   while the loop device is attached; the path as seen by whoever attached it, with
//!   `" (deleted)"` appended by the kernel if the file was unlinked since.
//! - `dev/block/MAJ:MIN`: symlink to the device's directory (number → name).
//!
//! A backing file's device is the `st_dev` of the file. Filesystems without a single block
//! device of their own (tmpfs, overlayfs, btrfs, which reports an anonymous 0:N) have no
//! entry in `dev/block`, so the device is `None` there.

use std::collections::BTreeSet;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::diskstats::DevT;
use crate::error::{ParseError, ParseErrorKind};

/// File name used in [`parse_dev`] errors.
pub const DEV_FILE: &str = "/sys/class/block/NAME/dev";

/// Parse a sysfs `dev` file (`major:minor\n`).
pub fn parse_dev(text: &str) -> Result<DevT, ParseError> {
    let line = text.lines().next().unwrap_or("");
    line.parse::<DevT>().map_err(|()| {
        ParseError::at(
            DEV_FILE,
            0,
            ParseErrorKind::Malformed("expected major:minor"),
            line,
        )
    })
}

/// Parse a loop device's `backing_file`: the path, and whether the kernel marked it deleted.
pub fn parse_backing_file(text: &str) -> (PathBuf, bool) {
    let line = text.strip_suffix('\n').unwrap_or(text);
    match line.strip_suffix(" (deleted)") {
        Some(p) => (PathBuf::from(p), true),
        None => (PathBuf::from(line), false),
    }
}

/// The file behind a loop device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackingFile {
    /// Its path as the kernel reports it.
    pub path: PathBuf,
    /// The kernel marked it `(deleted)`.
    pub deleted: bool,
    /// `st_dev` of the file; `None` when it cannot be stat'ed from here (deleted, or in
    /// another mount namespace).
    pub dev: Option<DevT>,
    /// Kernel name of the block device holding the file; `None` for filesystems without one.
    pub device: Option<String>,
}

/// What a block device sits on.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Parents {
    /// Entries of `slaves/` (sorted).
    pub slaves: Vec<String>,
    /// For a partition, its whole disk.
    pub whole_disk: Option<String>,
    /// For an attached loop device, its backing file.
    pub backing_file: Option<BackingFile>,
}

impl Parents {
    /// All parent device names: slaves, whole disk, backing file's device.
    pub fn names(&self) -> Vec<String> {
        let mut v = self.slaves.clone();
        v.extend(self.whole_disk.clone());
        if let Some(d) = self.backing_file.as_ref().and_then(|b| b.device.clone()) {
            v.push(d);
        }
        v
    }
}

/// Reader of the block part of sysfs, rooted at `/sys` or at a test tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SysBlock {
    root: PathBuf,
}

fn not_found_is_none<T>(r: io::Result<T>) -> io::Result<Option<T>> {
    match r {
        Ok(v) => Ok(Some(v)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

fn with_path(e: io::Error, path: &Path) -> io::Error {
    io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

impl Default for SysBlock {
    fn default() -> Self {
        Self::system()
    }
}

impl SysBlock {
    /// The real `/sys`.
    pub fn system() -> Self {
        Self::new("/sys")
    }

    /// A sysfs tree at `root` (for tests).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        SysBlock { root: root.into() }
    }

    fn class(&self, name: &str) -> PathBuf {
        self.root.join("class/block").join(name)
    }

    /// Whether a block device of that name exists.
    pub fn exists(&self, name: &str) -> bool {
        self.class(name).exists()
    }

    /// Device number of `name`.
    pub fn dev(&self, name: &str) -> io::Result<DevT> {
        let path = self.class(name).join("dev");
        let text = std::fs::read_to_string(&path).map_err(|e| with_path(e, &path))?;
        parse_dev(&text).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
    }

    /// Kernel name of the block device with this number, `None` if there is none.
    pub fn name_of(&self, dev: DevT) -> io::Result<Option<String>> {
        let link = self.root.join("dev/block").join(dev.to_string());
        let target = not_found_is_none(std::fs::read_link(&link))?;
        Ok(target.and_then(|t| t.file_name().map(|n| n.to_string_lossy().into_owned())))
    }

    /// Devices `name` is built on (`slaves/`), sorted; empty if none.
    pub fn slaves(&self, name: &str) -> io::Result<Vec<String>> {
        self.list(name, "slaves")
    }

    /// Devices built on `name` (`holders/`), sorted; empty if none.
    pub fn holders(&self, name: &str) -> io::Result<Vec<String>> {
        self.list(name, "holders")
    }

    fn list(&self, name: &str, sub: &str) -> io::Result<Vec<String>> {
        let dir = self.class(name).join(sub);
        let Some(entries) = not_found_is_none(std::fs::read_dir(&dir))? else {
            return Ok(Vec::new());
        };
        let mut v = entries
            .map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned()))
            .collect::<io::Result<Vec<_>>>()
            .map_err(|e| with_path(e, &dir))?;
        v.sort();
        Ok(v)
    }

    /// For a partition, the whole disk it belongs to; `None` for a whole device.
    pub fn whole_disk(&self, name: &str) -> io::Result<Option<String>> {
        let dir = self.class(name);
        if !dir.join("partition").exists() {
            return Ok(None);
        }
        let real = std::fs::canonicalize(&dir).map_err(|e| with_path(e, &dir))?;
        Ok(real
            .parent()
            .and_then(|p| p.file_name())
            .map(|n| n.to_string_lossy().into_owned()))
    }

    /// Backing file path of a loop device (`None` if not attached or not a loop device),
    /// and whether it was deleted.
    pub fn loop_backing_file(&self, name: &str) -> io::Result<Option<(PathBuf, bool)>> {
        let path = self.class(name).join("loop/backing_file");
        let text =
            not_found_is_none(std::fs::read_to_string(&path)).map_err(|e| with_path(e, &path))?;
        Ok(text.map(|t| parse_backing_file(&t)))
    }

    /// What `name` sits on: slaves, whole disk (for a partition), and for a loop device the
    /// device holding its backing file.
    pub fn parents(&self, name: &str) -> io::Result<Parents> {
        let backing_file = match self.loop_backing_file(name)? {
            None => None,
            Some((path, deleted)) => {
                let dev = std::fs::metadata(&path)
                    .ok()
                    .map(|m| DevT::from_raw(m.dev()));
                let device = match dev {
                    Some(d) => self.name_of(d)?,
                    None => None,
                };
                Some(BackingFile {
                    path,
                    deleted,
                    dev,
                    device,
                })
            }
        };
        Ok(Parents {
            slaves: self.slaves(name)?,
            whole_disk: self.whole_disk(name)?,
            backing_file,
        })
    }

    /// Every device below `name` in the stack, nearest first (e.g. `loop0` → `dm-1` →
    /// `nvme0n1p3` → `nvme0n1`), each once.
    pub fn ancestors(&self, name: &str) -> io::Result<Vec<String>> {
        let mut seen = BTreeSet::from([name.to_owned()]);
        let mut out = Vec::new();
        let mut i = 0;
        let mut queue = vec![name.to_owned()];
        while i < queue.len() {
            for p in self.parents(&queue[i])?.names() {
                if seen.insert(p.clone()) {
                    out.push(p.clone());
                    queue.push(p);
                }
            }
            i += 1;
        }
        Ok(out)
    }
}

/// Device number of the filesystem holding `path` (`st_dev`), as fio does to find the disk
/// a job file lives on.
pub fn dev_of_path(path: impl AsRef<Path>) -> io::Result<DevT> {
    let path = path.as_ref();
    let m = std::fs::metadata(path).map_err(|e| with_path(e, path))?;
    Ok(DevT::from_raw(m.dev()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    use crate::testutil::{write, TempDir};

    /// A fake sysfs: sda with partition sda2, dm-0 on sda2, loop0 backed by a file that lives
    /// on the real filesystem of the temp dir (whose st_dev is mapped to "realdisk").
    fn fake_tree(t: &TempDir) -> (SysBlock, PathBuf) {
        let root = t.0.join("sys");
        let devices = root.join("devices/virtual/block");
        let class = root.join("class/block");
        let devblock = root.join("dev/block");
        std::fs::create_dir_all(&class).unwrap();
        std::fs::create_dir_all(&devblock).unwrap();
        let add = |rel: &str, name: &str, dev: &str| {
            let dir = devices.join(rel);
            write(&dir.join("dev"), &format!("{dev}\n"));
            symlink(&dir, class.join(name)).unwrap();
            symlink(&dir, devblock.join(dev)).unwrap();
        };
        add("sda", "sda", "8:0");
        add("sda/sda2", "sda2", "8:2");
        write(&devices.join("sda/sda2/partition"), "2\n");
        add("dm-0", "dm-0", "253:0");
        std::fs::create_dir_all(devices.join("dm-0/slaves")).unwrap();
        symlink(devices.join("sda/sda2"), devices.join("dm-0/slaves/sda2")).unwrap();
        add("loop0", "loop0", "7:0");
        add("loop1", "loop1", "7:1");
        let file = t.0.join("image.img");
        std::fs::write(&file, b"x").unwrap();
        write(
            &devices.join("loop0/loop/backing_file"),
            &format!("{}\n", file.display()),
        );
        // Map the temp dir's real st_dev to a fake disk name.
        let real = dev_of_path(&file).unwrap();
        add("realdisk", "realdisk", &real.to_string());
        (SysBlock::new(root), file)
    }

    #[test]
    fn fake_tree_parents() {
        let t = TempDir::new("sysfs");
        let (sys, file) = fake_tree(&t);
        assert_eq!(sys.dev("sda2").unwrap(), DevT::new(8, 2));
        assert_eq!(
            sys.name_of(DevT::new(253, 0)).unwrap().as_deref(),
            Some("dm-0")
        );
        assert_eq!(sys.name_of(DevT::new(9, 9)).unwrap(), None);
        assert_eq!(sys.slaves("dm-0").unwrap(), vec!["sda2".to_owned()]);
        assert!(sys.slaves("sda").unwrap().is_empty());
        assert_eq!(sys.whole_disk("sda2").unwrap().as_deref(), Some("sda"));
        assert_eq!(sys.whole_disk("sda").unwrap(), None);
        assert_eq!(sys.loop_backing_file("loop1").unwrap(), None);

        let p = sys.parents("loop0").unwrap();
        let b = p.backing_file.clone().unwrap();
        assert_eq!(b.path, file);
        assert!(!b.deleted);
        assert_eq!(b.device.as_deref(), Some("realdisk"));
        assert_eq!(p.names(), vec!["realdisk".to_owned()]);

        assert_eq!(sys.ancestors("dm-0").unwrap(), vec!["sda2", "sda"]);
        assert!(sys.ancestors("loop1").unwrap().is_empty());
        assert!(sys.parents("nosuch").unwrap().names().is_empty());
        assert!(sys.dev("nosuch").is_err());
    }

    #[test]
    fn deleted_backing_file() {
        let (p, deleted) = parse_backing_file("/var/tmp/img (deleted)\n");
        assert_eq!(p, PathBuf::from("/var/tmp/img"));
        assert!(deleted);
        let (p, deleted) = parse_backing_file("/a b/c.img\n");
        assert_eq!(p, PathBuf::from("/a b/c.img"));
        assert!(!deleted);
    }

    #[test]
    fn dev_file() {
        assert_eq!(parse_dev("254:0\n").unwrap(), DevT::new(254, 0));
        let e = parse_dev("254\n").unwrap_err();
        assert_eq!(e.line, Some(1));
    }

    #[test]
    fn real_sysfs_agrees_with_diskstats() {
        let sys = SysBlock::system();
        let ds = crate::diskstats::read().unwrap();
        for d in ds.iter().take(20) {
            if sys.exists(&d.name) {
                assert_eq!(sys.dev(&d.name).unwrap(), d.dev, "{}", d.name);
                assert_eq!(
                    sys.name_of(d.dev).unwrap().as_deref(),
                    Some(d.name.as_str())
                );
            }
        }
    }

    /// Attach a real loop device to a file and find the disk holding the file.
    #[test]
    #[ignore = "needs root: attaches a loop device"]
    fn real_loop_device_parent() {
        iolab_testkit::require_root();
        let t = TempDir::new("loop");
        let img = t.0.join("loop.img");
        std::fs::write(&img, vec![0u8; 1 << 20]).unwrap();
        let out = std::process::Command::new("losetup")
            .args(["-f", "--show"])
            .arg(&img)
            .output();
        let dev = match out {
            Ok(o) if o.status.success() => String::from_utf8(o.stdout).unwrap().trim().to_owned(),
            other => panic!("cannot attach a loop device: {other:?}"),
        };
        let name = dev.trim_start_matches("/dev/").to_owned();
        let sys = SysBlock::system();
        let result = sys.parents(&name);
        let _ = std::process::Command::new("losetup")
            .args(["-d", &dev])
            .status();
        let parents = result.unwrap();
        let b = parents
            .backing_file
            .expect("attached loop device has a backing file");
        assert_eq!(b.path, std::fs::canonicalize(&img).unwrap());
        let want = dev_of_path(&img).unwrap();
        assert_eq!(b.dev, Some(want));
        assert_eq!(b.device, sys.name_of(want).unwrap());
    }
}
