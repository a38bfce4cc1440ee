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
use iolab_util::suggest;

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

/// A tunable's file as a read-only look finds it ([`look_up`]).
#[derive(Debug)]
pub enum Found {
    /// It exists; its current value, as it would be written back.
    Value(String),
    /// It exists but this process cannot read it (a root-only file, and not root): only the
    /// run itself can tell more.
    Unreadable(std::io::Error),
}

/// Why a tunable cannot be used on this machine (whatever its value), and what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unusable {
    /// What is wrong (without the file's path, which callers show their own way).
    pub message: String,
    /// Advice: a close name that exists ("did you mean …?"), or where to look.
    pub hint: Option<String>,
}

impl Unusable {
    fn error(self, name: &TunableName, path: &Path) -> Error {
        Error::Tunable {
            name: name.to_string(),
            path: path.to_owned(),
            problem: match self.hint {
                Some(h) => format!("{}; {h}", self.message),
                None => self.message,
            },
        }
    }
}

/// Read-only: does `path`, the file `name` resolves to, exist as a tunable iolab can set and
/// restore? A missing one comes with the closest name this machine has, in the form written
/// (`vm.dirty_ratio`, `queue/scheduler`, or a path).
pub fn look_up(name: &TunableName, path: &Path) -> Result<Found, Unusable> {
    match util::read_trimmed(path) {
        Ok(t) => Ok(Found::Value(current_value(&t))),
        Err(e)
            if e.kind() == std::io::ErrorKind::NotFound
                || e.raw_os_error() == Some(libc::ENOTDIR) =>
        {
            Err(Unusable {
                message: "no such tunable on this kernel".into(),
                hint: Some(match closest_name(name, path) {
                    Some(c) => suggest::suggestion(&c),
                    None => match name {
                        TunableName::Sysctl(_) => {
                            "`sysctl -a` lists the tunables this kernel has".into()
                        }
                        _ => match path.ancestors().skip(1).find(|d| d.is_dir()) {
                            Some(d) => format!("`ls {}` lists what is there", d.display()),
                            None => "check the name".into(),
                        },
                    },
                }),
            })
        }
        Err(e) if e.raw_os_error() == Some(libc::EISDIR) => Err(Unusable {
            message: "this is a directory of tunables, not one tunable".into(),
            hint: example_in(name, path).map(|x| format!("name one of its files, e.g. {x:?}")),
        }),
        Err(_) if write_only(path) => Err(Unusable {
            message: "this file can be written but not read back: it is an action, not a \
                      setting, and iolab only changes what it can restore"
                .into(),
            hint: None,
        }),
        Err(e) => Ok(Found::Unreadable(e)),
    }
}

/// Read-only: would the kernel take `value` for the /proc/sys file `path` whose value is
/// `current` now, as written? A sysctl that holds a decimal integer (or several, separated
/// by white space) takes only the same shape; other files are not judged (their values are
/// names, lists or sizes the kernel parses its own way).
pub fn check_value(
    name: &TunableName,
    path: &Path,
    current: &str,
    value: &str,
) -> Result<(), Unusable> {
    if !path.starts_with("/proc/sys") || takes_masks_or_lists(path) {
        return Ok(());
    }
    let now: Vec<&str> = current.split_whitespace().collect();
    if now.is_empty() || !now.iter().all(|w| is_decimal(w)) {
        return Ok(());
    }
    let new: Vec<&str> = value.split_whitespace().collect();
    if new.len() == now.len() && new.iter().all(|w| is_decimal(w)) {
        return Ok(());
    }
    Err(if now.len() == 1 {
        Unusable {
            message: format!("{name} takes an integer (it is {current} now), not {value:?}"),
            hint: Some(format!("write a whole number in decimal, e.g. {current}")),
        }
    } else {
        Unusable {
            message: format!(
                "{name} takes {} integers separated by spaces (it is {current:?} now), not \
                 {value:?}",
                now.len()
            ),
            hint: Some(format!("write all {} numbers, e.g. {current:?}", now.len())),
        }
    })
}

/// `-12`, `300`: what /proc/sys prints for integers (and what it keeps as written).
fn is_decimal(w: &str) -> bool {
    let digits = w.strip_prefix('-').unwrap_or(w);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// Sysctls that print `0` but take hexadecimal CPU masks or range lists
/// (`net.core.rps_default_mask`, `kernel.watchdog_cpumask`, `net.ipv4.ip_local_reserved_ports`).
fn takes_masks_or_lists(path: &Path) -> bool {
    let file = path
        .file_name()
        .and_then(|f| f.to_str())
        .unwrap_or_default();
    file.contains("mask") || file.contains("bitmap") || file.ends_with("_ports")
}

/// Whether `path` exists with no read permission for anyone (vm.compact_memory): even root
/// cannot read such a /proc/sys file.
fn write_only(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o444 == 0)
}

/// How `name` names its path, split: the directory the name starts from and the components
/// written, joined back by [`render`].
fn split_name(name: &TunableName, path: &Path) -> (PathBuf, Vec<String>) {
    match name {
        TunableName::Sysctl(s) => (
            "/proc/sys".into(),
            s.split('.').map(str::to_owned).collect(),
        ),
        TunableName::Device(rel) => {
            let mut root = path.to_path_buf();
            for _ in rel.components() {
                root.pop();
            }
            (root, components(rel))
        }
        TunableName::Path(p) => ("/".into(), components(p)),
    }
}

fn components(p: &Path) -> Vec<String> {
    p.components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect()
}

/// The components as the name was written: dotted, relative, or absolute.
fn render(name: &TunableName, parts: &[String]) -> String {
    match name {
        TunableName::Sysctl(_) => parts.join("."),
        TunableName::Device(_) => parts.join("/"),
        TunableName::Path(_) => format!("/{}", parts.join("/")),
    }
}

/// The entries of `dir` a name of `name`'s kind can spell (a sysctl name cannot hold a dot).
fn entries(name: &TunableName, dir: &Path) -> Vec<String> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut v: Vec<String> = rd
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !(matches!(name, TunableName::Sysctl(_)) && n.contains('.')))
        .collect();
    v.sort();
    v
}

/// The existing tunable closest to a missing one: each component that does not exist is
/// replaced by the closest entry of its directory (`vm.dirty_ratoi` → `vm.dirty_ratio`,
/// `vmm.swappiness` → `vm.swappiness`); `None` unless that leads to a file.
fn closest_name(name: &TunableName, path: &Path) -> Option<String> {
    let (mut cur, parts) = split_name(name, path);
    let mut fixed = Vec::with_capacity(parts.len());
    for part in parts {
        let next = if cur.join(&part).exists() {
            part
        } else {
            let names = entries(name, &cur);
            suggest::closest(&part, names.iter().map(String::as_str))?.to_owned()
        };
        cur.push(&next);
        fixed.push(next);
    }
    cur.is_file().then(|| render(name, &fixed))
}

/// A tunable in the directory `path`, named as `name` is written, for a hint.
fn example_in(name: &TunableName, path: &Path) -> Option<String> {
    let file = entries(name, path)
        .into_iter()
        .find(|n| path.join(n).is_file() && !write_only(&path.join(n)))?;
    let (_, mut parts) = split_name(name, path);
    parts.push(file);
    Some(render(name, &parts))
}

/// Check that a tunable file exists and can be read, with a "did you mean" for typos; its
/// current value.
pub(crate) fn check_exists(name: &TunableName, path: &Path) -> Result<String> {
    match look_up(name, path) {
        Ok(Found::Value(v)) => Ok(v),
        Ok(Found::Unreadable(e)) => Err(Error::Tunable {
            name: name.to_string(),
            path: path.to_owned(),
            problem: format!(
                "cannot read its current value ({e}); iolab only changes what it can restore"
            ),
        }),
        Err(u) => Err(u.error(name, path)),
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

    fn sysctl(name: &str) -> (TunableName, PathBuf) {
        let t = TunableName::parse(name).unwrap();
        let p = t.resolve(None).unwrap();
        (t, p)
    }

    #[test]
    fn integer_sysctls_take_integers_of_the_same_shape() {
        let (t, p) = sysctl("vm.dirty_ratio");
        assert!(check_value(&t, &p, "20", "10").is_ok());
        assert!(check_value(&t, &p, "20", "-1").is_ok());
        let e = check_value(&t, &p, "20", "abc").unwrap_err();
        assert_eq!(
            e.message,
            "vm.dirty_ratio takes an integer (it is 20 now), not \"abc\""
        );
        assert_eq!(
            e.hint.as_deref(),
            Some("write a whole number in decimal, e.g. 20")
        );
        for bad in ["1.5", "0x10", "+3", "10 20", "-"] {
            assert!(check_value(&t, &p, "20", bad).is_err(), "{bad}");
        }
        let (t, p) = sysctl("net.ipv4.tcp_rmem");
        let now = "4096 131072 6291456";
        assert!(check_value(&t, &p, now, "4096 87380 6291456").is_ok());
        let e = check_value(&t, &p, now, "4096 87380").unwrap_err();
        assert!(e.message.contains("takes 3 integers"), "{e:?}");
        assert!(e.hint.unwrap().contains("all 3 numbers"));
    }

    #[test]
    fn other_values_are_left_to_the_kernel() {
        // Text now, or not a /proc/sys file, or a mask that prints as a plain 0.
        let (t, p) = sysctl("kernel.core_pattern");
        assert!(check_value(&t, &p, "core", "|/bin/x %p").is_ok());
        let t = TunableName::parse("queue/read_ahead_kb").unwrap();
        let p = t.resolve(Some(&dev("sda"))).unwrap();
        assert!(check_value(&t, &p, "128", "lots").is_ok());
        let t = TunableName::parse("/sys/fs/cgroup/x/memory.max").unwrap();
        assert!(check_value(&t, Path::new("/sys/fs/cgroup/x/memory.max"), "0", "1G").is_ok());
        for mask in [
            "net.core.rps_default_mask",
            "kernel.watchdog_cpumask",
            "net.core.flow_limit_cpu_bitmap",
            "net.ipv4.ip_local_reserved_ports",
        ] {
            let (t, p) = sysctl(mask);
            assert!(check_value(&t, &p, "0", "ff").is_ok(), "{mask}");
        }
    }

    #[test]
    fn look_up_finds_what_this_kernel_has() {
        if !Path::new("/proc/sys/vm/dirty_ratio").is_file() {
            return iolab_testkit::not_run("no /proc/sys here");
        }
        let (t, p) = sysctl("vm.dirty_ratio");
        assert!(matches!(look_up(&t, &p), Ok(Found::Value(v)) if is_decimal(&v)));
        // A typo in any component is corrected, in the form written.
        let hint = |name: &str| {
            let t = TunableName::parse(name).unwrap();
            let p = t.resolve(None).unwrap();
            look_up(&t, &p).unwrap_err().hint.unwrap()
        };
        assert_eq!(hint("vm.dirty_ratoi"), "did you mean `vm.dirty_ratio`?");
        assert_eq!(hint("vmm.dirty_ratio"), "did you mean `vm.dirty_ratio`?");
        assert_eq!(
            hint("/proc/sys/vm/dirty_ratoi"),
            "did you mean `/proc/sys/vm/dirty_ratio`?"
        );
        assert_eq!(
            hint("vm.zzzzzzzzzzzzzzzzzzzz"),
            "`sysctl -a` lists the tunables this kernel has"
        );
        assert_eq!(
            hint("/proc/sys/vm/zzzzzzzzzzzzzzzzzzzz"),
            "`ls /proc/sys/vm` lists what is there"
        );
        // Below a file.
        let (t, p) = sysctl("vm.dirty_ratio.x");
        let e = look_up(&t, &p).unwrap_err();
        assert_eq!(e.message, "no such tunable on this kernel");
        // A directory names no one tunable; the hint names one inside.
        let (t, p) = sysctl("net.ipv4");
        if p.is_dir() {
            let e = look_up(&t, &p).unwrap_err();
            assert!(e.message.contains("directory"), "{e:?}");
            assert!(
                e.hint.unwrap().contains("\"net.ipv4."),
                "name one of its files"
            );
        }
        // Write-only files cannot be restored.
        let (t, p) = sysctl("vm.compact_memory");
        if p.exists() {
            let e = look_up(&t, &p).unwrap_err();
            assert!(e.message.contains("not read back"), "{e:?}");
        }
    }

    #[test]
    fn check_exists_says_no_such_tunable_with_the_full_name() {
        if !Path::new("/proc/sys/vm/dirty_ratio").is_file() {
            return iolab_testkit::not_run("no /proc/sys here");
        }
        let (t, p) = sysctl("vm.dirty_ratoi");
        let e = check_exists(&t, &p).unwrap_err().to_string();
        assert_eq!(
            e,
            "tunable vm.dirty_ratoi (/proc/sys/vm/dirty_ratoi): no such tunable on this kernel; \
             did you mean `vm.dirty_ratio`?"
        );
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
