//! Helpers for iolab's own tests, so that no test passes without having run.
//!
//! - A test that needs root, or a tool that `scripts/test.sh` installs when it runs as root
//!   (strace, chromium, mkfs.xfs…), is `#[ignore = "needs root: …"]`: `cargo test` lists it
//!   as ignored with that reason, and `scripts/test.sh` runs it (`--include-ignored`) when it
//!   is root. It starts with [`require_root`] (and [`require_tool`]), so that running it
//!   anyway as another user fails with the reason instead of with some later error.
//! - What a test only finds out while it runs (the filebench corpus is not there, `/` is not
//!   on a block device) goes through [`not_run`]: under CI (`CI` set) the test fails;
//!   elsewhere it says why on stderr, adds a line to the file named by `$IOLAB_TEST_NOT_RUN`
//!   (`scripts/test.sh` lists those lines at the end) and returns.
//! - A test whose threads could hang starts a [`timeout`]; a child process that could hang
//!   is a [`bounded`] command. Either fails the test after a time limit instead of hanging
//!   the suite.
//! - A test that fills a filesystem up mounts a small [`Tmpfs`] of its own (root only).

use std::ffi::OsStr;
use std::fmt::Display;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread;
use std::time::Duration;

mod tmpfs;
pub use tmpfs::Tmpfs;

/// The file `scripts/test.sh` collects [`not_run`] lines in.
pub const NOT_RUN_VAR: &str = "IOLAB_TEST_NOT_RUN";

/// Where the filebench corpus is: a directory, absolute or relative to the repository root.
pub const CORPUS_VAR: &str = "IOLAB_FILEBENCH_CORPUS";

/// The corpus's place when [`CORPUS_VAR`] is not set, in the directory that holds the
/// repository (`../shared/corpus/filebench` from its root): the project's shared material.
const DEFAULT_CORPUS: &str = "shared/corpus/filebench";

/// The name of the running test (libtest names each test's thread after it).
pub fn test_name() -> String {
    thread::current().name().unwrap_or("a test").to_owned()
}

/// The test binary's name without cargo's hash (`structure`, `iolab_wml`).
fn test_binary() -> String {
    let exe = std::env::current_exe().unwrap_or_default();
    let name = exe.file_name().unwrap_or_default().to_string_lossy();
    name.rsplit_once('-')
        .map_or(name.as_ref(), |(stem, _)| stem)
        .to_owned()
}

pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Fails the test unless it runs as root. For tests marked `#[ignore = "needs root: …"]`.
pub fn require_root() {
    assert!(
        is_root(),
        "{}: needs root, which is why it is marked #[ignore]: run it as root (scripts/test.sh \
         does), or without --include-ignored",
        test_name()
    );
}

/// Whether an executable `name` is on `PATH`.
pub fn has_tool(name: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|dir| {
            std::fs::metadata(dir.join(name))
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
    })
}

/// Fails the test unless `name` is on `PATH`. For tests marked `#[ignore = "needs …"]`.
pub fn require_tool(name: &str) {
    assert!(
        has_tool(name),
        "{}: needs `{name}` on PATH, which is why it is marked #[ignore] (scripts/test.sh \
         installs it when it runs as root)",
        test_name()
    );
}

/// The running test (or a part of it) cannot run here, for a reason only found out now.
/// Under CI every test must run: this panics. Elsewhere it says why on stderr, adds the line
/// to the file `$IOLAB_TEST_NOT_RUN` when that is set, and the caller returns.
pub fn not_run(why: impl Display) {
    let line = format!("{} {}: {why}", test_binary(), test_name());
    if std::env::var_os("CI").is_some() {
        panic!("{line}\n(CI is set: every test must run there)");
    }
    eprintln!("NOT RUN {line}");
    if let Some(path) = std::env::var_os(NOT_RUN_VAR) {
        // One write of one line with O_APPEND: lines of parallel tests do not interleave.
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .and_then(|mut f| f.write_all(format!("{line}\n").as_bytes()))
            .unwrap_or_else(|e| panic!("{NOT_RUN_VAR}={}: {e}", Path::new(&path).display()));
    }
}

/// A test (or a part of it) needs a tool that no package registry has (iozone, UnixBench,
/// filebench: built from source) and it is not on this machine. Unlike [`not_run`], not a
/// failure under CI, where nothing can install it: the line goes to `$IOLAB_TEST_NOT_RUN`
/// (scripts/test.sh lists them at the end) and to stderr, and the caller skips the part.
pub fn tool_absent(tool: &str, how_to_get_it: &str) {
    let line = format!(
        "{} {}: {tool} is not on this machine ({how_to_get_it})",
        test_binary(),
        test_name()
    );
    eprintln!("NOT RUN {line}");
    if let Some(path) = std::env::var_os(NOT_RUN_VAR) {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .and_then(|mut f| f.write_all(format!("{line}\n").as_bytes()))
            .unwrap_or_else(|e| panic!("{NOT_RUN_VAR}={}: {e}", Path::new(&path).display()));
    }
}

/// The repository this crate belongs to.
fn repo_root() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    here.ancestors()
        .nth(2)
        .expect("tests/testkit lies two levels below the repository root")
        .to_path_buf()
}

fn has_workloads(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries
            .filter_map(Result::ok)
            .any(|e| e.path().extension().is_some_and(|x| x == "f"))
    })
}

/// The directory of filebench's own workload files (`*.f`, the 47 files of its
/// `workloads/` directory), which iolab's tests read but the repository does not hold:
/// `$IOLAB_FILEBENCH_CORPUS` (relative to the repository root), by default
/// `../shared/corpus/filebench` beside the repository. A set variable that names no such
/// directory fails the test; without the variable and the default directory the test does
/// not run ([`not_run`]: it fails under CI) and this returns `None`.
pub fn filebench_corpus() -> Option<PathBuf> {
    let root = repo_root();
    if let Some(dir) = std::env::var_os(CORPUS_VAR).filter(|v| !v.is_empty()) {
        let dir = root.join(dir);
        assert!(
            has_workloads(&dir),
            "{CORPUS_VAR}={}: no filebench workload files (*.f) there",
            dir.display()
        );
        return Some(dir);
    }
    let default = root.parent().unwrap_or(&root).join(DEFAULT_CORPUS);
    if has_workloads(&default) {
        return Some(default);
    }
    not_run(format!(
        "the filebench corpus is not at {}: put filebench's workload files there (the .f \
         files of its workloads/ directory) or set {CORPUS_VAR}=DIR",
        default.display()
    ));
    None
}

/// Fails a test that hangs: unless the returned guard is dropped (the test returned or
/// panicked) within `secs` seconds, this says which test hung and aborts the test binary — a
/// hung thread cannot be unwound from outside, and a suite that never ends reports nothing.
/// Put `let _hang = iolab_testkit::timeout(N);` first in tests whose threads could deadlock.
#[must_use = "the timeout ends when the guard is dropped"]
pub fn timeout(secs: u64) -> Timeout {
    let (tx, rx) = mpsc::channel::<()>();
    let test = test_name();
    thread::Builder::new()
        .name(format!("{test} (timeout)"))
        .spawn(move || {
            if let Err(RecvTimeoutError::Timeout) = rx.recv_timeout(Duration::from_secs(secs)) {
                // Straight to fd 2: the test's captured output would be lost with the process.
                let _ = writeln!(
                    std::io::stderr(),
                    "{test}: hung: still running after {secs} s; aborting the test binary"
                );
                std::process::abort();
            }
        })
        .expect("a thread for the timeout");
    Timeout { _armed: tx }
}

/// The guard of [`timeout`]: dropping it disarms the timeout.
pub struct Timeout {
    _armed: mpsc::Sender<()>,
}

/// This test binary, running only the test `name`: the child half of a test that needs a
/// process of its own (to kill it, or to run it as another user). The child half is marked
/// `#[ignore = "child half of …"]` and does nothing unless the parent set the environment
/// variable it looks for, so a plain or an `--include-ignored` run passes it as a no-op.
pub fn child_half(name: &str) -> Command {
    let mut c = Command::new(std::env::current_exe().expect("the test binary's path"));
    c.args([
        "--exact",
        name,
        "--include-ignored",
        "--nocapture",
        "--test-threads=1",
    ]);
    c
}

/// A command for `program` that fails instead of hanging: it runs under coreutils' `timeout`,
/// which sends SIGTERM after `secs` seconds (iolab then restores the system and exits) and
/// SIGKILL 30 s after that; the command then ends with status 124 (137 after SIGKILL).
/// A signal sent to the command (SIGINT, SIGTERM) reaches `program` exactly once:
/// `--foreground` keeps `timeout` from sending it to its whole process group as well, which
/// iolab would take as a second Ctrl-C (give up the clean-up).
pub fn bounded(program: impl AsRef<OsStr>, secs: u64) -> Command {
    let mut c = Command::new("timeout");
    c.args(["--foreground", "--kill-after=30", &format!("{secs}s")])
        .arg(program);
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timeout_is_disarmed_when_the_test_ends() {
        for _ in 0..100 {
            let _hang = timeout(1);
        }
        // Each guard's thread has ended or ends now; none aborts the binary later.
        thread::sleep(Duration::from_millis(1500));
    }

    /// The child half of the test below, which runs it in a process of its own.
    #[test]
    #[ignore = "child half of a_hung_test_aborts_with_its_name, which runs it"]
    fn hung_child() {
        if std::env::var_os("IOLAB_TESTKIT_HUNG_CHILD").is_none() {
            return;
        }
        let _hang = timeout(1);
        thread::sleep(Duration::from_secs(600));
    }

    #[test]
    fn a_hung_test_aborts_with_its_name() {
        let o = child_half("tests::hung_child")
            .env("IOLAB_TESTKIT_HUNG_CHILD", "1")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{err}");
        assert!(
            err.contains("tests::hung_child: hung: still running after 1 s"),
            "{err}"
        );
    }

    #[test]
    fn a_bounded_command_ends_and_passes_signals_on() {
        let o = bounded("sh", 30)
            .args(["-c", "echo out; echo err >&2; exit 3"])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(3));
        assert_eq!(
            (&o.stdout[..], &o.stderr[..]),
            (&b"out\n"[..], &b"err\n"[..])
        );
        let hung = bounded("sleep", 1).arg("600").status().unwrap();
        assert_eq!(hung.code(), Some(124));
        // The signal reaches the command only, not its own children too: the shell catches
        // it, and its `sleep` must run to the end (a signal sent to the whole group would
        // end it, and the shell with its status, 130).
        let mut child = bounded("sh", 30)
            .args(["-c", "trap : INT; echo ready; sleep 2; exit $?"])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut ready = [0u8; 6];
        std::io::Read::read_exact(child.stdout.as_mut().unwrap(), &mut ready).unwrap();
        thread::sleep(Duration::from_millis(200));
        // SAFETY: a signal to our own child, which has not been reaped yet.
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
        assert_eq!(
            child.wait().unwrap().code(),
            Some(0),
            "SIGINT sent to the group too"
        );
    }

    #[test]
    fn tools_on_the_path_are_found() {
        assert!(has_tool("sh"));
        assert!(!has_tool("iolab-no-such-tool"));
    }
}
