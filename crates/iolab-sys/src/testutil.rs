//! Helpers for tests that read fake /proc and /sys trees (this crate's, and those of the
//! crates that use it, through the `testutil` feature of a dev-dependency).

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

/// A throwaway directory removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    /// A new empty directory under the system's temp dir, named after `tag`, this process
    /// and this thread.
    pub fn new(tag: &str) -> Self {
        let p = std::env::temp_dir().join(format!(
            "iolab-{tag}-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Writes `text` to `path`, creating its directories.
pub fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A fake sysfs block tree: devices under `devices/virtual/block`, each linked from
/// `class/block/NAME` and `dev/block/MAJ:MIN` as the kernel does.
pub struct FakeSys {
    /// The tree's root (what `/sys` is for the real one).
    pub root: PathBuf,
}

impl FakeSys {
    /// An empty tree at `root`.
    pub fn new(root: PathBuf) -> Self {
        std::fs::create_dir_all(root.join("class/block")).unwrap();
        std::fs::create_dir_all(root.join("dev/block")).unwrap();
        FakeSys { root }
    }

    /// Adds device `name` (number `dev`, `major:minor`) at `devices/virtual/block/REL`
    /// (`sda/sda2` for a partition) and returns its directory.
    pub fn add(&self, rel: &str, name: &str, dev: &str) -> PathBuf {
        let dir = self.root.join("devices/virtual/block").join(rel);
        write(&dir.join("dev"), &format!("{dev}\n"));
        symlink(&dir, self.root.join("class/block").join(name)).unwrap();
        symlink(&dir, self.root.join("dev/block").join(dev)).unwrap();
        dir
    }

    /// A disk `sda` (8:0) with a partition `sda2` (8:2) and a device-mapper device `dm-0`
    /// (253:0) on the partition.
    pub fn disk_partition_dm(root: PathBuf) -> Self {
        let fake = FakeSys::new(root);
        fake.add("sda", "sda", "8:0");
        let sda2 = fake.add("sda/sda2", "sda2", "8:2");
        write(&sda2.join("partition"), "2\n");
        let dm = fake.add("dm-0", "dm-0", "253:0");
        fake.stack(&dm, &sda2);
        fake
    }

    /// Makes `upper` a device built on `lower` (`upper/slaves/lower`, `lower/holders/upper`).
    pub fn stack(&self, upper: &Path, lower: &Path) {
        for (dir, sub, target) in [(upper, "slaves", lower), (lower, "holders", upper)] {
            let d = dir.join(sub);
            std::fs::create_dir_all(&d).unwrap();
            symlink(target, d.join(target.file_name().unwrap())).unwrap();
        }
    }
}
