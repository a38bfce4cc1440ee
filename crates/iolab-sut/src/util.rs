//! Small helpers: unique names, finding programs, running them, reading /proc and /sys files.

use std::ffi::{CString, OsStr, OsString};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::error::{Error, Result};

/// Prefix of every name iolab gives to something it creates (images, mount points, cgroups,
/// tmpfs sources). Recovery refuses journal entries whose names lack it.
pub const NAME_PREFIX: &str = "iolab-";

/// A name unique on this machine for this boot: `iolab-PID-N-RANDOM`.
pub(crate) fn unique_name() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let r = (nanos ^ (std::process::id().rotate_left(16))) & 0xff_ffff;
    format!("{NAME_PREFIX}{}-{n}-{r:06x}", std::process::id())
}

/// Seconds since the epoch (journal timestamps).
pub(crate) fn unix_time() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Find `name` on PATH, then in the sbin directories (a non-login root shell may lack them).
pub(crate) fn find_program(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin", "/usr/bin", "/bin"].map(PathBuf::from))
        .map(|d| d.join(name))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// Run a program to completion; a non-zero exit becomes [`Error::Command`] with the last
/// lines of its stderr and `hint(stderr)`.
pub(crate) fn run(
    program: &Path,
    args: &[OsString],
    hint: impl Fn(&str) -> Option<String>,
) -> Result<()> {
    let command = std::iter::once(program.as_os_str())
        .chain(args.iter().map(OsString::as_os_str))
        .map(|a| a.to_string_lossy())
        .collect::<Vec<_>>()
        .join(" ");
    let mut cmd = Command::new(program);
    cmd.args(args).stdin(std::process::Stdio::null());
    // If iolab dies (kill -9), a still-running mkfs must die too: it holds the device open,
    // which would keep the loop device attached after recovery. If iolab died before the
    // death signal was armed (getppid changed), do not start at all.
    // SAFETY: getpid has no failure mode.
    let parent = unsafe { libc::getpid() };
    // SAFETY: the hook only calls prctl(2) and getppid(2), which are async-signal-safe.
    unsafe {
        use std::os::unix::process::CommandExt;
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) != 0 {
                return Err(io::Error::last_os_error());
            }
            if libc::getppid() != parent {
                return Err(io::Error::from_raw_os_error(libc::ESRCH));
            }
            Ok(())
        });
    }
    let out = cmd.output().map_err(|e| Error::io("run", program, e))?;
    if out.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let text = if stderr.trim().is_empty() {
        stdout
    } else {
        stderr
    };
    Err(Error::Command {
        command,
        status: out.status.to_string(),
        stderr: last_lines(&text, 6),
        hint: hint(&text),
    })
}

/// The last `n` non-empty lines of `text`, joined with " / ".
pub(crate) fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    lines[lines.len().saturating_sub(n)..].join(" / ")
}

/// Read a small text file, trimmed of the trailing newline.
pub(crate) fn read_trimmed(path: &Path) -> io::Result<String> {
    let s = std::fs::read_to_string(path)?;
    Ok(s.trim_end_matches('\n').to_owned())
}

/// Write a value to a /proc or /sys file in one write(2) (these files act per write call).
pub(crate) fn write_value(path: &Path, value: &str) -> io::Result<()> {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new().write(true).open(path)?;
    f.write_all(value.as_bytes())
}

pub(crate) fn cstring(p: &Path) -> io::Result<CString> {
    CString::new(p.as_os_str().as_bytes()).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))
}

/// statx(2) of `path` with `flags`, when the call succeeds and the kernel filled every field
/// of `mask` (a filesystem or kernel without them leaves them out).
pub(crate) fn statx(path: &Path, flags: i32, mask: u32) -> Option<libc::statx> {
    let c = cstring(path).ok()?;
    // SAFETY: an all-zero statx is a valid buffer for the kernel to fill.
    let mut st: libc::statx = unsafe { std::mem::zeroed() };
    // SAFETY: valid C string and buffer.
    let r = unsafe { libc::statx(libc::AT_FDCWD, c.as_ptr(), flags, mask, &mut st) };
    (r == 0 && st.stx_mask & mask == mask).then_some(st)
}

pub(crate) fn cstr(s: &str) -> io::Result<CString> {
    CString::new(s).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))
}

/// True if the file name of `p` starts with [`NAME_PREFIX`].
pub(crate) fn has_our_prefix(p: &Path) -> bool {
    p.file_name()
        .map(|n| n.as_bytes().starts_with(NAME_PREFIX.as_bytes()))
        .unwrap_or(false)
}

/// Path as UTF-8, or an [`Error::InvalidSpec`] naming the field.
pub(crate) fn utf8_path<'a>(field: &str, p: &'a Path) -> Result<&'a str> {
    p.to_str()
        .ok_or_else(|| Error::spec(field, format!("path {:?} is not UTF-8", p.as_os_str())))
}

/// `OsString` helper for argument lists.
pub(crate) fn os(s: impl AsRef<OsStr>) -> OsString {
    s.as_ref().to_owned()
}

/// Opens (creating it, 0600, never truncating) a file this process will hold a lock on.
pub(crate) fn open_lock_file(path: &Path) -> Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| Error::io("open", path, e))
}

/// `flock(LOCK_EX | LOCK_NB)`: `Ok(false)` when another open file description holds it.
pub(crate) fn try_flock(file: &std::fs::File) -> io::Result<bool> {
    use std::os::fd::AsRawFd;
    // SAFETY: valid fd.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
        return Ok(true);
    }
    let e = io::Error::last_os_error();
    if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
        Ok(false)
    } else {
        Err(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unique_names_differ_and_carry_the_prefix() {
        let a = unique_name();
        let b = unique_name();
        assert_ne!(a, b);
        assert!(a.starts_with(NAME_PREFIX));
        assert!(has_our_prefix(Path::new(&format!("/x/{a}.img"))));
        assert!(!has_our_prefix(Path::new("/etc/passwd")));
    }

    #[test]
    fn last_lines_keeps_the_tail() {
        assert_eq!(last_lines("a\n\nb\nc\n", 2), "b / c");
    }
}
