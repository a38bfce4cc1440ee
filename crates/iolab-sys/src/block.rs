//! Block devices in sysfs: names and numbers, partitions, stacking (which devices a device
//! sits on, which sit on it), and the attributes of loop devices.
//!
//! Files used (under `/sys`, or another root for tests):
//! - `class/block/NAME/dev`: `major:minor\n`.
//! - `dev/block/MAJ:MIN`: symlink to the device's directory (number → name).
//! - `class/block/NAME/partition`: exists for partitions; the directory above is the disk,
//!   which owns `queue/` (partitions have no queue of their own).
//! - `class/block/NAME/slaves/`: one entry per device NAME is built on (dm, md, bcache);
//!   `holders/`: the devices built on NAME.
//! - `class/block/NAME/loop/` (= `/sys/block/loopN/loop/`): only while the loop device is
//!   attached. `backing_file` is the path as seen by whoever attached it, with `" (deleted)"`
//!   appended by the kernel if the file was unlinked since; `dio` (Linux 4.4+), `offset`,
//!   `sizelimit`, `autoclear`, `partscan` are `0`/`1` or numbers.
//!
//! A backing file's device is the `st_dev` of the file. Filesystems without a single block
//! device of their own (tmpfs, overlayfs, btrfs, which reports an anonymous 0:N) have no
//! entry in `dev/block`, so the device is `None` there.

use std::collections::BTreeSet;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::dev::DevT;
use crate::error::{Error, ParseError, ParseErrorKind};

/// File name used in [`parse_dev`] errors.
pub const DEV_FILE: &str = "/sys/class/block/NAME/dev";

/// Parse a sysfs `dev` file (`major:minor\n`).
pub fn parse_dev(text: &str) -> Result<DevT, ParseError> {
    let line = text.lines().next().unwrap_or("");
    line.parse::<DevT>().map_err(|_| {
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

/// Parse a sysfs boolean: `0`/`1`, or `N`/`Y` as module parameters write them.
pub fn parse_bool(text: &str) -> Option<bool> {
    match text.trim() {
        "0" | "N" | "n" => Some(false),
        "1" | "Y" | "y" => Some(true),
        _ => None,
    }
}

/// `loop/` of an attached loop device. An attribute this kernel lacks (or that cannot be
/// read) is `None`. The environment stores it as JSON (the backing file as text: it was read
/// as UTF-8).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct LoopAttrs {
    /// `backing_file`, without the ` (deleted)` mark.
    pub backing_file: Option<PathBuf>,
    /// The kernel marked the backing file `(deleted)`.
    pub backing_file_deleted: Option<bool>,
    /// `dio`: the backing file is accessed with direct I/O (`losetup --direct-io=on`), so the
    /// host's page cache does not hold it. The kernel may refuse it and fall back to
    /// buffered I/O without an error (e.g. a backing file on tmpfs), so read it back.
    pub dio: Option<bool>,
    /// `offset` into the backing file, bytes.
    pub offset: Option<u64>,
    /// `sizelimit`, bytes (0: up to the end of the file).
    pub sizelimit: Option<u64>,
    /// `autoclear`: detach on last close.
    pub autoclear: Option<bool>,
    /// `partscan`: partitions of the loop device are scanned.
    pub partscan: Option<bool>,
}

impl LoopAttrs {
    /// Read a `loop/` directory; `None` if it does not exist (not a loop device, or detached).
    pub fn read_dir(dir: &Path) -> Option<Self> {
        if !dir.is_dir() {
            return None;
        }
        let text = |f: &str| std::fs::read_to_string(dir.join(f)).ok();
        let num = |f: &str| text(f).and_then(|t| t.trim().parse().ok());
        let flag = |f: &str| text(f).and_then(|t| parse_bool(&t));
        let backing = text("backing_file")
            .filter(|t| !t.trim_end_matches('\n').is_empty())
            .map(|t| parse_backing_file(&t));
        Some(LoopAttrs {
            backing_file: backing.as_ref().map(|(p, _)| p.clone()),
            backing_file_deleted: backing.as_ref().map(|(_, d)| *d),
            dio: flag("dio"),
            offset: num("offset"),
            sizelimit: num("sizelimit"),
            autoclear: flag("autoclear"),
            partscan: flag("partscan"),
        })
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

fn read_err(path: &Path) -> impl FnOnce(io::Error) -> Error + '_ {
    move |source| Error::Read {
        path: path.to_owned(),
        source,
    }
}

fn not_found_is_none<T>(r: io::Result<T>) -> io::Result<Option<T>> {
    match r {
        Ok(v) => Ok(Some(v)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
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

    /// `class/block/NAME`: the device's directory (partitions included).
    pub fn class_dir(&self, name: &str) -> PathBuf {
        self.root.join("class/block").join(name)
    }

    /// Whether a block device of that name exists.
    pub fn exists(&self, name: &str) -> bool {
        self.class_dir(name).exists()
    }

    /// Device number of `name`.
    pub fn dev(&self, name: &str) -> Result<DevT, Error> {
        let path = self.class_dir(name).join("dev");
        let text = std::fs::read_to_string(&path).map_err(read_err(&path))?;
        Ok(parse_dev(&text)?)
    }

    /// Kernel name of the block device with this number, `None` if there is none.
    pub fn name_of(&self, dev: DevT) -> Result<Option<String>, Error> {
        let link = self.root.join("dev/block").join(dev.to_string());
        let target = not_found_is_none(std::fs::read_link(&link)).map_err(read_err(&link))?;
        Ok(target.and_then(|t| t.file_name().map(|n| n.to_string_lossy().into_owned())))
    }

    /// Devices `name` is built on (`slaves/`), sorted; empty if none.
    pub fn slaves(&self, name: &str) -> Result<Vec<String>, Error> {
        self.list(&self.class_dir(name).join("slaves"))
    }

    /// Devices built on `name` (`holders/`), sorted; empty if none.
    pub fn holders(&self, name: &str) -> Result<Vec<String>, Error> {
        self.list(&self.class_dir(name).join("holders"))
    }

    /// Partitions of a disk (`sda1`, `loop3p1`), sorted; empty if none.
    pub fn partitions(&self, name: &str) -> Result<Vec<String>, Error> {
        let dir = self.class_dir(name);
        Ok(self
            .list(&dir)?
            .into_iter()
            .filter(|e| dir.join(e).join("partition").exists())
            .collect())
    }

    fn list(&self, dir: &Path) -> Result<Vec<String>, Error> {
        let Some(entries) = not_found_is_none(std::fs::read_dir(dir)).map_err(read_err(dir))?
        else {
            return Ok(Vec::new());
        };
        let mut v = entries
            .map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned()))
            .collect::<io::Result<Vec<_>>>()
            .map_err(read_err(dir))?;
        v.sort();
        Ok(v)
    }

    /// For a partition, the whole disk it belongs to; `None` for a whole device.
    pub fn whole_disk(&self, name: &str) -> Result<Option<String>, Error> {
        let dir = self.class_dir(name);
        if !dir.join("partition").exists() {
            return Ok(None);
        }
        let real = std::fs::canonicalize(&dir).map_err(read_err(&dir))?;
        Ok(real
            .parent()
            .and_then(|p| p.file_name())
            .map(|n| n.to_string_lossy().into_owned()))
    }

    /// Backing file path of a loop device (`None` if not attached or not a loop device),
    /// and whether it was deleted.
    pub fn loop_backing_file(&self, name: &str) -> Result<Option<(PathBuf, bool)>, Error> {
        let path = self.class_dir(name).join("loop/backing_file");
        let text = not_found_is_none(std::fs::read_to_string(&path)).map_err(read_err(&path))?;
        Ok(text.map(|t| parse_backing_file(&t)))
    }

    /// `loop/` of a loop device; `None` if it is not an attached loop device.
    pub fn loop_attrs(&self, name: &str) -> Option<LoopAttrs> {
        LoopAttrs::read_dir(&self.class_dir(name).join("loop"))
    }

    /// Every attached loop device: (kernel name, backing file, deleted), by name.
    pub fn attached_loops(&self) -> Result<Vec<(String, PathBuf, bool)>, Error> {
        let mut out = Vec::new();
        for name in self.list(&self.root.join("class/block"))? {
            if !name.starts_with("loop") {
                continue;
            }
            if let Some((path, deleted)) = self.loop_backing_file(&name)? {
                out.push((name, path, deleted));
            }
        }
        Ok(out)
    }

    /// What `name` sits on: slaves, whole disk (for a partition), and for a loop device the
    /// device holding its backing file.
    pub fn parents(&self, name: &str) -> Result<Parents, Error> {
        let backing_file = match self.loop_backing_file(name)? {
            None => None,
            Some((path, deleted)) => {
                let dev = DevT::of_file(&path).ok();
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
    /// `nvme0n1p3` → `nvme0n1`), each once; `name` itself is not included.
    pub fn ancestors(&self, name: &str) -> Result<Vec<String>, Error> {
        self.closure(name, |n| self.parents(n).map(|p| p.names()))
    }

    /// Every device above `name`: its partitions, and whatever is built on it or on them
    /// (dm, md), recursively, nearest first; `name` itself is not included.
    pub fn descendants(&self, name: &str) -> Result<Vec<String>, Error> {
        self.closure(name, |n| {
            let mut v = self.partitions(n)?;
            v.extend(self.holders(n)?);
            Ok(v)
        })
    }

    /// Breadth-first closure of `next` from `name`, without `name`.
    fn closure(
        &self,
        name: &str,
        next: impl Fn(&str) -> Result<Vec<String>, Error>,
    ) -> Result<Vec<String>, Error> {
        let mut seen = BTreeSet::from([name.to_owned()]);
        let mut queue = vec![name.to_owned()];
        let mut i = 0;
        while i < queue.len() {
            for p in next(&queue[i])? {
                if seen.insert(p.clone()) {
                    queue.push(p);
                }
            }
            i += 1;
        }
        queue.remove(0);
        Ok(queue)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{write, FakeSys, TempDir};

    /// A fake sysfs: sda with partition sda2, dm-0 on sda2, loop0 backed by a file that lives
    /// on the real filesystem of the temp dir (whose st_dev is mapped to "realdisk").
    fn fake_tree(t: &TempDir) -> (SysBlock, PathBuf) {
        let fake = FakeSys::disk_partition_dm(t.0.join("sys"));
        let loop0 = fake.add("loop0", "loop0", "7:0");
        fake.add("loop1", "loop1", "7:1");
        let file = t.0.join("image.img");
        std::fs::write(&file, b"x").unwrap();
        write(
            &loop0.join("loop/backing_file"),
            &format!("{}\n", file.display()),
        );
        for (attr, v) in [
            ("dio", "1"),
            ("offset", "0"),
            ("sizelimit", "0"),
            ("autoclear", "1"),
        ] {
            write(&loop0.join("loop").join(attr), &format!("{v}\n"));
        }
        // Map the temp dir's real st_dev to a fake disk name.
        let real = DevT::of_file(&file).unwrap();
        fake.add("realdisk", "realdisk", &real.to_string());
        (SysBlock::new(fake.root), file)
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
        assert!(matches!(sys.dev("nosuch"), Err(Error::Read { .. })));

        assert_eq!(sys.partitions("sda").unwrap(), vec!["sda2"]);
        assert!(sys.partitions("dm-0").unwrap().is_empty());
        assert_eq!(sys.holders("sda2").unwrap(), vec!["dm-0"]);
        assert_eq!(sys.descendants("sda").unwrap(), vec!["sda2", "dm-0"]);
        assert!(sys.descendants("loop1").unwrap().is_empty());
        assert_eq!(
            sys.attached_loops().unwrap(),
            vec![("loop0".to_owned(), file.clone(), false)]
        );
    }

    #[test]
    fn loop_attributes() {
        let t = TempDir::new("loopattrs");
        let (sys, file) = fake_tree(&t);
        let a = sys.loop_attrs("loop0").unwrap();
        assert_eq!(a.backing_file, Some(file));
        assert_eq!(a.backing_file_deleted, Some(false));
        assert_eq!(a.dio, Some(true));
        assert_eq!(a.offset, Some(0));
        assert_eq!(a.autoclear, Some(true));
        assert_eq!(a.partscan, None, "an attribute the kernel lacks");
        assert_eq!(sys.loop_attrs("loop1"), None, "detached: no loop/");
        assert_eq!(sys.loop_attrs("sda"), None);
        assert_eq!(parse_bool("Y\n"), Some(true));
        assert_eq!(parse_bool("0"), Some(false));
        assert_eq!(parse_bool("2"), None);
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
        assert!(matches!(e.kind, ParseErrorKind::Malformed(_)));
    }

    /// Attach a real loop device to a file and find the disk holding the file.
    #[test]
    #[ignore = "needs root: attaches a loop device with losetup"]
    fn real_loop_device_parent() {
        let t = TempDir::new("loop");
        let img = t.0.join("loop.img");
        std::fs::write(&img, vec![0u8; 1 << 20]).unwrap();
        let out = std::process::Command::new("losetup")
            .args(["-f", "--show"])
            .arg(&img)
            .output()
            .expect("losetup runs");
        assert!(out.status.success(), "losetup -f --show: {out:?}");
        let dev = String::from_utf8(out.stdout).unwrap().trim().to_owned();
        let name = dev.trim_start_matches("/dev/").to_owned();
        let sys = SysBlock::system();
        let parents = sys.parents(&name);
        let attrs = sys.loop_attrs(&name);
        let listed = sys.attached_loops();
        let _ = std::process::Command::new("losetup")
            .args(["-d", &dev])
            .status();
        let b = parents
            .unwrap()
            .backing_file
            .expect("attached loop device has a backing file");
        let canonical = std::fs::canonicalize(&img).unwrap();
        assert_eq!(b.path, canonical);
        let want = DevT::of_file(&img).unwrap();
        assert_eq!(b.dev, Some(want));
        assert_eq!(b.device, sys.name_of(want).unwrap());
        let attrs = attrs.expect("loop/ exists while attached");
        assert_eq!(attrs.backing_file.as_ref(), Some(&canonical));
        assert_eq!(attrs.dio, Some(false), "losetup without --direct-io");
        assert!(listed
            .unwrap()
            .iter()
            .any(|(n, p, _)| *n == name && *p == canonical));
    }
}
