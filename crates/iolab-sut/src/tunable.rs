//! Kernel tunables by name.
//!
//! Three ways to name one:
//! - a sysctl name, `vm.dirty_expire_centisecs` → `/proc/sys/vm/dirty_expire_centisecs`;
//! - a path relative to the target's block device, `queue/scheduler` →
//!   `/sys/block/DISK/queue/scheduler` (for a partition, DISK is its disk: partitions
//!   share the disk's request queue);
//! - an absolute path under `/proc/sys/` or `/sys/`.
//!
//! Files such as `queue/scheduler` or `transparent_hugepage/enabled` list the choices and
//! mark the current one: `none [mq-deadline] kyber bfq`. Their value is the bracketed word,
//! which is also what is written back.
//!
//! A value is checked after writing: the kernel may round (`read_ahead_kb` is kept in pages)
//! or ignore a value, and a run that claims a setting it did not have is worse than a failed
//! run.

use std::path::{Component, Path, PathBuf};

use crate::blockdev::DevInfo;
use crate::error::{Error, Result};
use crate::util;

/// A tunable's name, parsed.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TunableName {
    /// `vm.dirty_ratio`.
    Sysctl(String),
    /// Relative to the target's device: `queue/scheduler`.
    Device(PathBuf),
    /// `/sys/kernel/mm/transparent_hugepage/enabled`.
    Path(PathBuf),
}

impl TunableName {
    /// Parse a name as written in an experiment.
    pub fn parse(name: &str) -> Result<TunableName, String> {
        let n = name.trim();
        if n.is_empty() {
            return Err("empty tunable name".into());
        }
        if n.starts_with('/') {
            let p = PathBuf::from(n);
            if !(p.starts_with("/proc/sys") || p.starts_with("/sys")) || !plain(&p) {
                return Err(format!(
                    "{n:?}: a tunable path must be under /proc/sys/ or /sys/ (without `..`)"
                ));
            }
            if p == Path::new("/proc/sys/vm/drop_caches") {
                return Err(drop_caches_msg());
            }
            return Ok(TunableName::Path(p));
        }
        if n.contains('/') {
            let p = PathBuf::from(n);
            if !plain(&p) {
                return Err(format!("{n:?}: a device tunable path cannot contain `..`"));
            }
            return Ok(TunableName::Device(p));
        }
        let ok = n.split('.').count() >= 2
            && n.split('.').all(|c| {
                !c.is_empty()
                    && c.chars()
                        .all(|ch| ch.is_ascii_alphanumeric() || ch == '_' || ch == '-')
            });
        if !ok {
            return Err(format!(
                "{n:?} is not a tunable name; write a sysctl name (vm.dirty_ratio), a device \
                 path (queue/scheduler) or a path under /proc/sys or /sys"
            ));
        }
        if n == "vm.drop_caches" {
            return Err(drop_caches_msg());
        }
        Ok(TunableName::Sysctl(n.to_owned()))
    }

    /// Whether it names a file of the target's device.
    pub fn needs_device(&self) -> bool {
        matches!(self, TunableName::Device(_))
    }

    /// The file it names, given the target's device.
    pub fn resolve(&self, device: Option<&DevInfo>) -> Result<PathBuf, String> {
        match self {
            TunableName::Sysctl(s) => Ok(Path::new("/proc/sys").join(s.replace('.', "/"))),
            TunableName::Path(p) => Ok(p.clone()),
            TunableName::Device(rel) => match device {
                Some(d) => Ok(Path::new("/sys/block").join(&d.queue_name).join(rel)),
                None => Err(format!(
                    "{} is a block-device setting, but this target has no block device \
                     (a directory on tmpfs/overlayfs, or tmpfs): use a loop_image or \
                     block_device target",
                    rel.display()
                )),
            },
        }
    }
}

impl std::fmt::Display for TunableName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TunableName::Sysctl(s) => f.write_str(s),
            TunableName::Device(p) | TunableName::Path(p) => write!(f, "{}", p.display()),
        }
    }
}

fn drop_caches_msg() -> String {
    "vm.drop_caches is an action, not a setting: iolab drops caches before each run itself \
     (and checks it worked)"
        .into()
}

fn plain(p: &Path) -> bool {
    p.components()
        .all(|c| matches!(c, Component::Normal(_) | Component::RootDir))
}

/// The current value as written back: the bracketed choice of `a [b] c` files, else the
/// text with runs of white space made single spaces.
pub fn current_value(text: &str) -> String {
    let t = text.trim();
    if let (Some(open), Some(close)) = (t.find('['), t.find(']')) {
        if open < close && !t.contains('\n') {
            return t[open + 1..close].to_owned();
        }
    }
    t.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Read a tunable's current value.
pub fn read(path: &Path) -> Result<String> {
    util::read_trimmed(path)
        .map(|t| current_value(&t))
        .map_err(|e| Error::io("read", path, e))
}

/// A tunable iolab changed in a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppliedTunable {
    /// As named in the experiment.
    pub name: String,
    /// The file.
    pub path: PathBuf,
    /// Value before the run (restored afterwards).
    pub original: String,
    /// Value during the run, as read back.
    pub value: String,
}

/// For the coupled dirty-limit files, the (bytes, ratio) pair `path` belongs to.
pub(crate) fn dirty_pair(path: &Path) -> Option<(PathBuf, PathBuf)> {
    let vm = Path::new("/proc/sys/vm");
    let name = path.strip_prefix(vm).ok()?.to_str()?;
    let stem = match name {
        "dirty_bytes" | "dirty_ratio" => "dirty",
        "dirty_background_bytes" | "dirty_background_ratio" => "dirty_background",
        _ => return None,
    };
    Some((
        vm.join(format!("{stem}_bytes")),
        vm.join(format!("{stem}_ratio")),
    ))
}

/// Write `value` and check that it took; `name` is for messages.
pub(crate) fn write_checked(name: &str, path: &Path, value: &str) -> Result<String> {
    let err = |problem: String| Error::Tunable {
        name: name.to_owned(),
        path: path.to_owned(),
        problem,
    };
    if let Err(e) = util::write_value(path, value) {
        return Err(err(match e.raw_os_error() {
            Some(libc::EINVAL) | Some(libc::ERANGE) => match choices(path) {
                Some(c) => format!("the kernel rejected {value:?} ({e}); choices: {c}"),
                None => format!("the kernel rejected {value:?} ({e}); check the allowed range"),
            },
            Some(libc::EACCES) | Some(libc::EPERM) => format!("cannot write: {e} (needs root)"),
            Some(libc::EROFS) => format!("cannot write: {e} (/proc/sys or /sys read-only here)"),
            _ => format!("cannot write {value:?}: {e}"),
        }));
    }
    let got = read(path)?;
    let want = current_value(value);
    if got != want {
        return Err(err(format!(
            "wrote {want:?} but the kernel kept {got:?}; use a value it stores as is"
        )));
    }
    Ok(got)
}

/// The choices of an `a [b] c` file, without the brackets.
fn choices(path: &Path) -> Option<String> {
    let t = util::read_trimmed(path).ok()?;
    t.contains('[')
        .then(|| t.replace(['[', ']'], "").trim().to_owned())
}

/// Check that a tunable file exists and can be read, with a "did you mean" for typos.
pub(crate) fn check_exists(name: &str, path: &Path) -> Result<String> {
    match util::read_trimmed(path) {
        Ok(t) => Ok(current_value(&t)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let suggestion = path.parent().and_then(|dir| {
                let siblings: Vec<String> = std::fs::read_dir(dir)
                    .ok()?
                    .filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect();
                let file = path.file_name()?.to_str()?;
                util::closest(file, siblings.iter().map(String::as_str)).map(str::to_owned)
            });
            Err(Error::Tunable {
                name: name.to_owned(),
                path: path.to_owned(),
                problem: match suggestion {
                    Some(s) => format!("no such tunable; did you mean {s:?}?"),
                    None => "no such tunable on this kernel".into(),
                },
            })
        }
        Err(e) => Err(Error::Tunable {
            name: name.to_owned(),
            path: path.to_owned(),
            problem: format!(
                "cannot read its current value ({e}); iolab only changes what it can restore"
            ),
        }),
    }
}

/// Is `path` a place iolab may write a tunable to? (Recovery checks journal entries.)
pub(crate) fn is_tunable_path(path: &Path) -> bool {
    (path.starts_with("/proc/sys/") || path.starts_with("/sys/"))
        && plain(path)
        && path != Path::new("/proc/sys/vm/drop_caches")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dev(queue: &str) -> DevInfo {
        DevInfo {
            path: PathBuf::from(format!("/dev/{queue}1")),
            dev: (8, 1).into(),
            name: format!("{queue}1"),
            queue_name: queue.into(),
            backing: None,
        }
    }

    #[test]
    fn names_resolve_to_files() {
        let t = TunableName::parse("vm.dirty_expire_centisecs").unwrap();
        assert_eq!(
            t.resolve(None).unwrap(),
            PathBuf::from("/proc/sys/vm/dirty_expire_centisecs")
        );
        let t = TunableName::parse("queue/scheduler").unwrap();
        assert!(t.needs_device());
        assert_eq!(
            t.resolve(Some(&dev("sda"))).unwrap(),
            PathBuf::from("/sys/block/sda/queue/scheduler")
        );
        assert!(t.resolve(None).unwrap_err().contains("loop_image"));
        let t = TunableName::parse("/sys/kernel/mm/transparent_hugepage/enabled").unwrap();
        assert_eq!(t.to_string(), "/sys/kernel/mm/transparent_hugepage/enabled");
    }

    #[test]
    fn bad_names_are_refused() {
        for bad in [
            "",
            "dirty_ratio",
            "vm..x",
            "/etc/passwd",
            "/sys/../etc/passwd",
            "queue/../../x",
            "vm.drop_caches",
            "/proc/sys/vm/drop_caches",
        ] {
            assert!(TunableName::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn bracketed_choice_is_the_value() {
        assert_eq!(
            current_value("none [mq-deadline] kyber bfq\n"),
            "mq-deadline"
        );
        assert_eq!(current_value("[none] mq-deadline"), "none");
        assert_eq!(current_value("always [madvise] never"), "madvise");
        assert_eq!(current_value("3000\n"), "3000");
        assert_eq!(
            current_value("4096\t131072\t6291456"),
            "4096 131072 6291456"
        );
        assert_eq!(current_value("mq-deadline"), "mq-deadline");
    }

    #[test]
    fn dirty_pairs() {
        let (b, r) = dirty_pair(Path::new("/proc/sys/vm/dirty_ratio")).unwrap();
        assert_eq!(b, PathBuf::from("/proc/sys/vm/dirty_bytes"));
        assert_eq!(r, PathBuf::from("/proc/sys/vm/dirty_ratio"));
        let (b, _) = dirty_pair(Path::new("/proc/sys/vm/dirty_background_bytes")).unwrap();
        assert_eq!(b, PathBuf::from("/proc/sys/vm/dirty_background_bytes"));
        assert!(dirty_pair(Path::new("/proc/sys/vm/dirty_expire_centisecs")).is_none());
    }

    #[test]
    fn recovery_only_writes_tunable_paths() {
        assert!(is_tunable_path(Path::new("/proc/sys/vm/dirty_ratio")));
        assert!(is_tunable_path(Path::new(
            "/sys/block/loop3/queue/scheduler"
        )));
        assert!(!is_tunable_path(Path::new("/etc/fstab")));
        assert!(!is_tunable_path(Path::new("/sys/../etc/fstab")));
        assert!(!is_tunable_path(Path::new("/proc/sys/vm/drop_caches")));
    }
}
