//! The storage under a path: the mount holding it (from `/proc/self/mountinfo`), that mount's
//! block device (from `/sys/dev/block`), and the filesystem's size (`statvfs(3)`).

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::block::BlockEnv;
use iolab_sys::mountinfo::{self, find_mount, Mount};
use iolab_sys::DevT;

use super::path_string;

/// The filesystem and device holding a path.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StorageEnv {
    /// The path as given.
    pub path: String,
    /// The path with symlinks resolved; `None` if it does not exist.
    pub canonical_path: Option<String>,
    /// `st_dev` of the path, `major:minor` (differs from the mount's for btrfs subvolumes).
    pub path_dev: Option<String>,
    /// The mount holding the path.
    pub mount: Option<MountEnv>,
    /// The block device of that mount; `None` for filesystems without one (tmpfs, overlayfs,
    /// NFS, …).
    pub device: Option<BlockEnv>,
    /// Size and free space of the filesystem.
    pub fs: Option<FsStats>,
}

/// A mount, from one line of `/proc/self/mountinfo`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MountEnv {
    /// Mount id.
    pub mount_id: u32,
    /// Where it is mounted.
    pub mount_point: String,
    /// Root of the mount within its filesystem (`/` unless a bind mount or subvolume).
    pub root: String,
    /// Filesystem type, e.g. `ext4`.
    pub fs_type: String,
    /// Source, e.g. `/dev/vda`, `tmpfs`.
    pub source: String,
    /// Per-mount options, e.g. `rw,relatime`.
    pub mount_options: String,
    /// Per-superblock (filesystem) options, e.g. `rw,discard,data=ordered`.
    pub super_options: String,
    /// Device number of the superblock, `major:minor` (`0:N` for filesystems without a block
    /// device).
    pub dev: String,
}

impl From<&Mount> for MountEnv {
    fn from(m: &Mount) -> Self {
        MountEnv {
            mount_id: m.id,
            mount_point: path_string(&m.mount_point),
            root: path_string(&m.root),
            fs_type: m.fs_type.clone(),
            source: m.source.clone(),
            mount_options: m.mount_options.clone(),
            super_options: m.super_options.clone(),
            dev: m.dev.to_string(),
        }
    }
}

/// `statvfs(3)` of a filesystem. Bytes are block counts × fragment size.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FsStats {
    /// Fragment size (`f_frsize`), the unit of the block counts.
    pub block_size: u64,
    /// Size of the filesystem.
    pub total_bytes: u64,
    /// Free space (`f_bfree`), including blocks reserved for root.
    pub free_bytes: u64,
    /// Free space available to unprivileged users (`f_bavail`).
    pub available_bytes: u64,
    /// Inodes (`f_files`; 0 for filesystems without a fixed count).
    pub total_inodes: u64,
    /// Free inodes (`f_ffree`).
    pub free_inodes: u64,
}

impl FsStats {
    /// `statvfs(3)` of the filesystem holding `path`; `None` on error.
    pub fn probe(path: &Path) -> Option<Self> {
        let c = CString::new(path.as_os_str().as_bytes()).ok()?;
        // SAFETY: all-zero bytes are a valid `statvfs` (plain integers).
        let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
        // SAFETY: `c` is a NUL-terminated path and `s` a valid, writable statvfs.
        if unsafe { libc::statvfs(c.as_ptr(), &mut s) } != 0 {
            return None;
        }
        let frsize = if s.f_frsize > 0 {
            s.f_frsize as u64
        } else {
            s.f_bsize as u64
        };
        let bytes = |blocks: u64| blocks.saturating_mul(frsize);
        Some(FsStats {
            block_size: frsize,
            total_bytes: bytes(s.f_blocks as u64),
            free_bytes: bytes(s.f_bfree as u64),
            available_bytes: bytes(s.f_bavail as u64),
            total_inodes: s.f_files as u64,
            free_inodes: s.f_ffree as u64,
        })
    }
}

impl StorageEnv {
    /// Probe the filesystem holding `path` (which should exist; a path that does not is
    /// looked up as written, and its mount found lexically).
    pub fn probe(path: &Path) -> Self {
        Self::probe_with_mounts(path, &mountinfo::read().unwrap_or_default())
    }

    /// [`StorageEnv::probe`] with an already-read mount table.
    pub fn probe_with_mounts(path: &Path, mounts: &[Mount]) -> Self {
        let canonical = std::fs::canonicalize(path).ok();
        let lookup = match &canonical {
            Some(c) => c.clone(),
            None if path.is_absolute() => path.to_path_buf(),
            None => std::env::current_dir()
                .map(|d| d.join(path))
                .unwrap_or_else(|_| path.to_path_buf()),
        };
        let mount = find_mount(mounts, &lookup);
        let device = mount.and_then(|m| {
            BlockEnv::probe_dev(m.dev).or_else(|| {
                // btrfs (and others) report an anonymous 0:N; the source may still be a device.
                let src = Path::new(&m.source);
                if src.is_absolute() {
                    BlockEnv::probe_device(src)
                } else {
                    None
                }
            })
        });
        let meta = std::fs::metadata(&lookup).ok();
        StorageEnv {
            path: path_string(path),
            canonical_path: canonical.as_deref().map(path_string),
            path_dev: meta.map(|m| DevT::from_raw(m.dev()).to_string()),
            mount: mount.map(MountEnv::from),
            device,
            fs: FsStats::probe(&lookup),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;
    use std::process::Command;

    #[test]
    fn root_is_mounted_on_a_device_with_a_scheduler() {
        let s = StorageEnv::probe(Path::new("/"));
        assert_eq!(s.canonical_path.as_deref(), Some("/"));
        let m = s.mount.as_ref().expect("/ is mounted");
        assert_eq!(m.mount_point, "/");
        assert!(!m.fs_type.is_empty());
        assert!(m.mount_options.starts_with("r"), "{m:?}");
        let fs = s.fs.as_ref().unwrap();
        assert!(fs.total_bytes > 0 && fs.free_bytes <= fs.total_bytes);
        // On the development VM / is ext4 on /dev/vda; elsewhere it may be an overlay.
        if m.source.starts_with("/dev/") && Path::new(&m.source).exists() {
            let d = s.device.as_ref().expect("a /dev source has a device");
            if !m.dev.starts_with("0:") {
                assert_eq!(d.dev.as_ref(), Some(&m.dev));
            }
            assert!(d.queue.scheduler.is_some(), "{d:?}");
            assert!(!d.queue.schedulers.is_empty());
            assert!(d.size_bytes.unwrap() > 0);
            assert!(d.queue.logical_block_size.unwrap() >= 512);
        }
        if m.source == "/dev/vda" {
            assert_eq!(s.device.as_ref().unwrap().name, "vda");
        }
    }

    #[test]
    fn tmpfs_has_no_device() {
        let shm = Path::new("/dev/shm");
        let s = StorageEnv::probe(shm);
        let Some(m) = &s.mount else {
            return iolab_testkit::not_run("/dev/shm is not mounted here");
        };
        if m.fs_type != "tmpfs" {
            return iolab_testkit::not_run(format!("/dev/shm is {} here, not tmpfs", m.fs_type));
        }
        assert_eq!(m.mount_point, "/dev/shm");
        assert!(s.device.is_none(), "{s:?}");
        assert!(s.fs.is_some());
    }

    #[test]
    fn proc_and_missing_paths() {
        let p = StorageEnv::probe(Path::new("/proc/self"));
        assert_eq!(p.mount.unwrap().fs_type, "proc");
        assert!(p.device.is_none());
        let missing = StorageEnv::probe(Path::new("/nonexistent-iolab/x"));
        assert_eq!(missing.canonical_path, None);
        assert_eq!(missing.mount.unwrap().mount_point, "/");
        assert_eq!(missing.fs, None);
        assert_eq!(missing.path_dev, None);
        let none = StorageEnv::probe_with_mounts(Path::new("/"), &[]);
        assert!(none.mount.is_none() && none.device.is_none());
    }

    /// A loop device attached (and, if possible, formatted and mounted) by this test, undone
    /// on drop whatever happens: unmount, detach, remove the mount point and the image.
    struct LoopGuard {
        img: PathBuf,
        dev: Option<String>,
        mnt: Option<PathBuf>,
        mounted: bool,
    }

    impl Drop for LoopGuard {
        fn drop(&mut self) {
            if let (true, Some(mnt)) = (self.mounted, &self.mnt) {
                let _ = Command::new("umount").arg(mnt).status();
            }
            if let Some(dev) = &self.dev {
                let _ = Command::new("losetup").arg("-d").arg(dev).status();
            }
            if let Some(mnt) = &self.mnt {
                let _ = std::fs::remove_dir(mnt);
            }
            let _ = std::fs::remove_file(&self.img);
        }
    }

    fn run(cmd: &mut Command) -> Result<String, String> {
        match cmd.output() {
            Ok(o) if o.status.success() => Ok(String::from_utf8_lossy(&o.stdout).trim().to_owned()),
            Ok(o) => Err(format!(
                "{cmd:?}: {}",
                String::from_utf8_lossy(&o.stderr).trim()
            )),
            Err(e) => Err(format!("{cmd:?}: {e}")),
        }
    }

    /// Attach a 64 MiB image with `losetup --direct-io=on` and probe the loop device; then
    /// make an ext4 on it, mount it on a temporary directory and probe that directory.
    /// Touches only the device it attached.
    #[test]
    #[ignore = "needs root: attaches a loop device, mkfs and mount"]
    fn real_loop_device() {
        iolab_testkit::require_root();
        let tag = format!(
            "iolab-monitor-env-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        )
        .replace(|c: char| !c.is_ascii_alphanumeric() && c != '-', "");
        // A disk filesystem: tmpfs has no O_DIRECT for the loop device to use.
        let tmp = std::fs::canonicalize("/var/tmp").unwrap();
        let mut g = LoopGuard {
            img: tmp.join(format!("{tag}.img")),
            dev: None,
            mnt: None,
            mounted: false,
        };
        let f = std::fs::File::create(&g.img).unwrap();
        f.set_len(64 << 20).unwrap();
        drop(f);
        let dev = run(Command::new("losetup")
            .args(["-f", "--show", "--direct-io=on"])
            .arg(&g.img))
        .unwrap();
        g.dev = Some(dev.clone());

        let b = BlockEnv::probe_device(Path::new(&dev)).expect("attached loop device");
        assert_eq!(Some(b.name.as_str()), dev.strip_prefix("/dev/"));
        assert_eq!(b.size_bytes, Some(64 << 20));
        assert_eq!(b.disk, None);
        let l = b.loop_device.as_ref().expect("loop details");
        assert_eq!(l.backing_file.as_deref(), Some(g.img.as_path()));
        assert_eq!(l.backing_file_deleted, Some(false));
        assert_eq!(l.offset, Some(0));
        assert_eq!(l.dio, Some(true), "{b:?}");
        assert!(b.queue.scheduler.is_some(), "{b:?}");
        assert!(!b.ancestors.is_empty(), "{b:?}");

        run(Command::new("mkfs.ext4").args(["-q", "-F", &dev])).unwrap();
        let mnt = tmp.join(format!("{tag} mnt"));
        std::fs::create_dir(&mnt).unwrap();
        g.mnt = Some(mnt.clone());
        run(Command::new("mount")
            .args(["-o", "noatime"])
            .arg(&dev)
            .arg(&mnt))
        .unwrap();
        g.mounted = true;
        let s = StorageEnv::probe(&mnt);
        let m = s.mount.as_ref().unwrap();
        assert_eq!(
            m.mount_point,
            mnt.to_str().unwrap(),
            "escaped space in mountinfo"
        );
        assert_eq!(m.fs_type, "ext4");
        assert_eq!(m.source, dev);
        assert!(m.mount_options.contains("noatime"), "{m:?}");
        let d = s.device.as_ref().unwrap();
        assert_eq!(d.name, b.name);
        assert_eq!(d.loop_device, b.loop_device);
        let fs = s.fs.unwrap();
        assert!(
            fs.total_bytes > 32 << 20 && fs.total_bytes <= 64 << 20,
            "{fs:?}"
        );
    }
}
