//! Mount options and mount(2)/umount2(2).
//!
//! Options are written as for mount(8): `noatime,data=journal`. The generic ones (ro,
//! noatime, nodev, …) become MS_* flags, the rest go to the filesystem as its data string,
//! which is what libmount does. iolab always mounts afresh and never uses MS_REMOUNT to
//! change options: some cannot change on a remount (ext4 refuses `data=` there,
//! fs/ext4/super.c, "Cannot change data mode on remount").
//!
//! When mount(2) fails, the kernel's reason is usually only in its log (`EXT4-fs (loop3):
//! Unrecognized mount option ...`); the lines logged meanwhile are read from /dev/kmsg and
//! put in the error.

use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::{Error, MountFailure, Result};
use crate::util;

/// Parsed mount options.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MountOptions {
    /// MS_* flags for mount(2).
    pub flags: u64,
    /// Filesystem-specific options, in order (`data=journal`, `size=1073741824`).
    pub data: Vec<String>,
    /// The options as written.
    pub text: String,
}

/// Generic options: (name, flag to set, flag to clear).
const FLAG_OPTIONS: &[(&str, u64, u64)] = &[
    ("defaults", 0, 0),
    ("rw", 0, libc::MS_RDONLY),
    ("ro", libc::MS_RDONLY, 0),
    ("suid", 0, libc::MS_NOSUID),
    ("nosuid", libc::MS_NOSUID, 0),
    ("dev", 0, libc::MS_NODEV),
    ("nodev", libc::MS_NODEV, 0),
    ("exec", 0, libc::MS_NOEXEC),
    ("noexec", libc::MS_NOEXEC, 0),
    ("async", 0, libc::MS_SYNCHRONOUS),
    ("sync", libc::MS_SYNCHRONOUS, 0),
    ("dirsync", libc::MS_DIRSYNC, 0),
    ("atime", 0, libc::MS_NOATIME),
    ("noatime", libc::MS_NOATIME, 0),
    ("diratime", 0, libc::MS_NODIRATIME),
    ("nodiratime", libc::MS_NODIRATIME, 0),
    ("relatime", libc::MS_RELATIME, 0),
    ("norelatime", 0, libc::MS_RELATIME),
    ("strictatime", libc::MS_STRICTATIME, 0),
    ("lazytime", libc::MS_LAZYTIME, 0),
    ("nolazytime", 0, libc::MS_LAZYTIME),
    ("silent", libc::MS_SILENT, 0),
    ("loud", 0, libc::MS_SILENT),
];

impl MountOptions {
    /// Parse `a,b=c,...`. Options that would change what kind of mount this is (remount,
    /// bind, move, propagation) are refused.
    pub fn parse(text: &str) -> Result<MountOptions, String> {
        let mut o = MountOptions {
            text: text.trim().to_owned(),
            ..MountOptions::default()
        };
        for opt in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            if let Some(&(_, set, clear)) = FLAG_OPTIONS.iter().find(|(n, _, _)| *n == opt) {
                o.flags = (o.flags & !clear) | set;
                continue;
            }
            if matches!(
                opt,
                "remount"
                    | "bind"
                    | "rbind"
                    | "move"
                    | "shared"
                    | "private"
                    | "slave"
                    | "unbindable"
                    | "loop"
            ) || opt.starts_with("loop=")
            {
                return Err(format!(
                    "mount option `{opt}` is not allowed: iolab makes a fresh mount of the \
                     target itself"
                ));
            }
            o.data.push(opt.to_owned());
        }
        Ok(o)
    }

    /// Value of a filesystem option `key=value` (the last one wins, as in the kernel).
    pub fn get(&self, key: &str) -> Option<&str> {
        self.data
            .iter()
            .rev()
            .find_map(|d| d.strip_prefix(key).and_then(|r| r.strip_prefix('=')))
    }

    /// Whether a filesystem option `key` or `key=…` is present.
    pub fn has(&self, key: &str) -> bool {
        self.data
            .iter()
            .any(|d| d == key || d.strip_prefix(key).is_some_and(|r| r.starts_with('=')))
    }

    /// Add a filesystem option unless the user gave one with the same key.
    pub fn with_default(mut self, key: &str, value: &str) -> Self {
        if !self.has(key) {
            self.data.push(format!("{key}={value}"));
        }
        self
    }

    /// The data string for mount(2).
    pub fn data_string(&self) -> String {
        self.data.join(",")
    }
}

/// Mount `source` on `target`.
pub fn mount(source: &str, target: &Path, fstype: &str, opts: &MountOptions) -> Result<()> {
    let mk_err = |error: io::Error, kernel: Vec<String>| {
        let hint = match error.raw_os_error() {
            Some(libc::EINVAL) if kernel.is_empty() => Some(
                "an option is not valid for this filesystem; the kernel log (dmesg) says which"
                    .to_string(),
            ),
            Some(libc::ENODEV) => Some(format!("the kernel does not support {fstype}")),
            Some(libc::EPERM) | Some(libc::EACCES) => Some("mounting needs root".into()),
            _ => None,
        };
        Error::Mount(Box::new(MountFailure {
            source_: source.to_owned(),
            target: target.to_owned(),
            fstype: fstype.to_owned(),
            options: opts.text.clone(),
            error,
            kernel,
            hint,
        }))
    };
    let c = |s: &str| util::cstr(s).map_err(|e| mk_err(e, vec![]));
    let csource = c(source)?;
    let ctype = c(fstype)?;
    let cdata = c(&opts.data_string())?;
    let ctarget = util::cstring(target).map_err(|e| mk_err(e, vec![]))?;
    let log = Kmsg::open_at_end();
    // SAFETY: all pointers are valid NUL-terminated strings alive for the call.
    let r = unsafe {
        libc::mount(
            csource.as_ptr(),
            ctarget.as_ptr(),
            ctype.as_ptr(),
            opts.flags as libc::c_ulong,
            cdata.as_ptr().cast(),
        )
    };
    if r == 0 {
        return Ok(());
    }
    let e = io::Error::last_os_error();
    let kernel = log.map(|k| k.new_lines()).unwrap_or_default();
    Err(mk_err(e, kernel))
}

/// How an unmount went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unmounted {
    /// A normal unmount.
    Clean,
    /// The filesystem was busy; it was detached lazily (MNT_DETACH) and goes away when its
    /// last open file closes.
    Lazy,
}

/// Unmount `target`: retry a busy filesystem briefly (a just-killed child may still hold a
/// file), then detach lazily so that the name space is clean either way.
pub fn unmount(target: &Path) -> Result<Unmounted> {
    let c = util::cstring(target).map_err(|e| Error::io("unmount", target, e))?;
    for attempt in 0..5 {
        // SAFETY: valid C string.
        if unsafe { libc::umount2(c.as_ptr(), 0) } == 0 {
            return Ok(Unmounted::Clean);
        }
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EBUSY) {
            return Err(Error::io("unmount", target, e));
        }
        std::thread::sleep(Duration::from_millis(20 << attempt));
    }
    // SAFETY: valid C string.
    if unsafe { libc::umount2(c.as_ptr(), libc::MNT_DETACH) } == 0 {
        return Ok(Unmounted::Lazy);
    }
    Err(Error::io("unmount", target, io::Error::last_os_error()))
}

/// Reader of new kernel log records (/dev/kmsg), positioned at the end when opened.
struct Kmsg {
    file: std::fs::File,
}

impl Kmsg {
    fn open_at_end() -> Option<Kmsg> {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
            .open("/dev/kmsg")
            .ok()?;
        // SAFETY: valid fd; SEEK_END on /dev/kmsg moves past all existing records.
        unsafe { libc::lseek(file.as_raw_fd(), 0, libc::SEEK_END) };
        Some(Kmsg { file })
    }

    /// Messages logged since opening (each read(2) returns one record:
    /// `prio,seq,usec,flags;text\n` followed by continuation lines).
    fn new_lines(mut self) -> Vec<String> {
        use std::io::Read;
        let mut out = Vec::new();
        let mut buf = vec![0u8; 8192];
        for _ in 0..64 {
            match self.file.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    let rec = String::from_utf8_lossy(&buf[..n]);
                    let first = rec.lines().next().unwrap_or("");
                    if let Some((_, text)) = first.split_once(';') {
                        out.push(text.trim().to_owned());
                    }
                }
                // EPIPE: records were overwritten; keep reading from the next one.
                Err(e) if e.raw_os_error() == Some(libc::EPIPE) => continue,
                Err(_) => break,
            }
        }
        out.truncate(8);
        out
    }
}

/// Create a directory (not its parents), failing if it exists.
pub(crate) fn make_dir(path: &Path) -> Result<()> {
    std::fs::create_dir(path).map_err(|e| Error::io("create directory", path, e))
}

/// Canonical form of `dir`, created (with parents) if missing.
pub(crate) fn ensure_dir(dir: &Path) -> Result<PathBuf> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io("create directory", dir, e))?;
    std::fs::canonicalize(dir).map_err(|e| Error::io("resolve", dir, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_flags_from_data() {
        let o = MountOptions::parse("noatime,data=journal,ro,rw,nodev,barrier=0").unwrap();
        assert_eq!(o.flags, libc::MS_NOATIME | libc::MS_NODEV);
        assert_eq!(o.data, vec!["data=journal", "barrier=0"]);
        assert_eq!(o.get("data"), Some("journal"));
        assert_eq!(o.get("dat"), None);
        assert!(o.has("barrier"));
        assert_eq!(o.data_string(), "data=journal,barrier=0");
    }

    #[test]
    fn empty_and_defaults() {
        let o = MountOptions::parse("").unwrap();
        assert_eq!((o.flags, o.data.len()), (0, 0));
        let o = MountOptions::parse("defaults").unwrap();
        assert_eq!((o.flags, o.data.len()), (0, 0));
    }

    #[test]
    fn refuses_mount_kind_changes() {
        for bad in ["remount", "bind", "loop", "loop=/dev/loop0", "shared"] {
            let e = MountOptions::parse(&format!("noatime,{bad}")).unwrap_err();
            assert!(e.contains("not allowed"), "{bad}: {e}");
        }
    }

    #[test]
    fn with_default_keeps_user_value() {
        let o = MountOptions::parse("size=1G")
            .unwrap()
            .with_default("size", "2G");
        assert_eq!(o.data, vec!["size=1G"]);
        let o = MountOptions::parse("").unwrap().with_default("size", "2G");
        assert_eq!(o.data, vec!["size=2G"]);
    }
}

/// `STATX_MNT_ID_UNIQUE` (Linux 6.8, include/uapi/linux/stat.h): a mount id never reused
/// while the system runs (the plain mount id of /proc/self/mountinfo is reused as soon as
/// the mount is gone, so an unmount and a mount of the same device often get the same one).
const STATX_MNT_ID_UNIQUE: u32 = 0x4000;

/// The unique id of the mount `path` is on, when the kernel has one (Linux ≥ 6.8).
pub fn unique_mount_id(path: &Path) -> Option<u64> {
    util::statx(path, libc::AT_STATX_SYNC_AS_STAT, STATX_MNT_ID_UNIQUE).map(|st| st.stx_mnt_id)
}

#[cfg(test)]
mod unique_id_tests {
    use super::*;

    #[test]
    fn the_root_has_a_unique_mount_id_on_new_kernels() {
        // Older kernels have none; where there is one, it is stable.
        let a = unique_mount_id(Path::new("/"));
        assert_eq!(a, unique_mount_id(Path::new("/")));
        assert_eq!(unique_mount_id(Path::new("/nonexistent/iolab")), None);
    }
}
