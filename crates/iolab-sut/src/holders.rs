//! The processes a crashed iolab's workload left on a filesystem iolab mounted.
//!
//! A workload's processes can outlive a SIGKILLed iolab: a tool run by the exec kind and the
//! processes it forks (fio puts each job in a session of its own, out of reach of a signal to
//! the tool's process group). They keep the filesystem busy, so it could only be unmounted
//! lazily and its loop device could not be detached until they ended. Recovery kills them
//! first: on a mount point iolab made for a run (named `iolab-…` under its state directory),
//! the processes that iolab started — marked by [`SESSION_ENV`] in their environment, which
//! they and their children inherit — are killed. Anything else using it (a person's shell
//! that went to look at the crashed run's files) is left alone: the unmount is then lazy and
//! says so.

/// Set by iolab to its PID in its own environment at start ([`mark_children`]), so that
/// every process it starts, and theirs, carries it.
pub const SESSION_ENV: &str = "IOLAB_SESSION_PID";

/// Marks this process's future children as this iolab session's. Call at the start of
/// `main`, before any thread exists (the environment is process-wide).
pub fn mark_children() {
    std::env::set_var(SESSION_ENV, std::process::id().to_string());
}

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::{Duration, Instant};

/// How long recovery waits for the killed processes to let go of the filesystem.
const WAIT: Duration = Duration::from_secs(5);

/// Kills (SIGKILL) every process of iolab session `session` (its PID) using the filesystem
/// mounted on `target` — its working directory, root, executable, an open file or a mapping
/// on it — and waits, up to [`WAIT`], for them to be gone. Returns them as `PID (COMMAND)`.
/// Nothing when nothing is mounted there (the target's device is its parent's).
pub(crate) fn kill_users(target: &Path, session: u32) -> Vec<String> {
    let (Ok(m), Some(parent)) = (std::fs::metadata(target), target.parent()) else {
        return Vec::new();
    };
    match std::fs::metadata(parent) {
        Ok(p) if p.dev() != m.dev() => {}
        _ => return Vec::new(),
    }
    let dev = m.dev();
    let mut killed = Vec::new();
    let deadline = Instant::now() + WAIT;
    loop {
        let users = users_of(dev, session);
        if users.is_empty() || Instant::now() >= deadline {
            return killed;
        }
        for (pid, name) in users {
            // SAFETY: kill(2) with a pid read from /proc; a process that just ended is ESRCH.
            if unsafe { libc::kill(pid, libc::SIGKILL) } == 0 {
                let who = format!("{pid} ({name})");
                if !killed.contains(&who) {
                    killed.push(who);
                }
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The processes of iolab session `session` (but this one) with anything on the filesystem
/// of device `dev`.
fn users_of(dev: u64, session: u32) -> Vec<(i32, String)> {
    let mark = format!("{SESSION_ENV}={session}");
    let me = std::process::id();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut users = Vec::new();
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        if pid == me {
            continue;
        }
        let p = e.path();
        if uses(&p, dev) && started_by(&p, &mark) {
            let name = std::fs::read_to_string(p.join("comm")).unwrap_or_default();
            users.push((pid as i32, name.trim().to_owned()));
        }
    }
    users
}

/// Whether the process's environment holds `mark` (`IOLAB_SESSION_PID=N`).
fn started_by(proc_pid: &Path, mark: &str) -> bool {
    std::fs::read(proc_pid.join("environ"))
        .is_ok_and(|env| env.split(|b| *b == 0).any(|v| v == mark.as_bytes()))
}

fn uses(proc_pid: &Path, dev: u64) -> bool {
    let on = |p: &Path| std::fs::metadata(p).is_ok_and(|m| m.dev() == dev);
    if ["cwd", "root", "exe"].iter().any(|l| on(&proc_pid.join(l))) {
        return true;
    }
    if let Ok(fds) = std::fs::read_dir(proc_pid.join("fd")) {
        if fds.flatten().any(|f| on(&f.path())) {
            return true;
        }
    }
    // Mappings: `maps` gives each one's device as MAJOR:MINOR in hex.
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    std::fs::read_to_string(proc_pid.join("maps")).is_ok_and(|maps| {
        maps.lines().any(|l| {
            l.split_whitespace()
                .nth(3)
                .and_then(|d| d.split_once(':'))
                .is_some_and(|(a, b)| {
                    u32::from_str_radix(a, 16).ok() == Some(major)
                        && u32::from_str_radix(b, 16).ok() == Some(minor)
                        && l.split_whitespace()
                            .nth(4)
                            .is_some_and(|inode| inode != "0")
                })
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_that_is_not_a_mount_point_has_no_users_to_kill() {
        let d = std::env::temp_dir().join(format!("iolab-holders-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        // This process has its cwd and files on that filesystem: none of them may be killed.
        assert!(kill_users(&d, std::process::id()).is_empty());
        std::fs::remove_dir(&d).unwrap();
        assert!(
            kill_users(&d, std::process::id()).is_empty(),
            "a missing directory"
        );
    }

    #[test]
    fn only_processes_carrying_the_sessions_mark_are_its_own() {
        let spawn = |mark: Option<&str>| {
            let mut c = std::process::Command::new("sleep");
            c.arg("30").env_remove(SESSION_ENV);
            if let Some(m) = mark {
                c.env(SESSION_ENV, m);
            }
            c.spawn().unwrap()
        };
        let mut ours = spawn(Some("4242"));
        let mut other = spawn(Some("42"));
        let mut person = spawn(None);
        let at = |c: &std::process::Child| Path::new("/proc").join(c.id().to_string());
        let mark = format!("{SESSION_ENV}=4242");
        // Right after exec the kernel has not set up the new environment yet (the parent of
        // a vfork-style spawn resumes at the switch of address space): wait until it has.
        for c in [&ours, &other, &person] {
            let t0 = std::time::Instant::now();
            while std::fs::read(at(c).join("environ")).is_ok_and(|e| e.is_empty())
                && t0.elapsed() < Duration::from_secs(10)
            {
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        assert!(started_by(&at(&ours), &mark));
        assert!(!started_by(&at(&other), &mark), "another session's");
        assert!(!started_by(&at(&person), &mark), "nobody's");
        for c in [&mut ours, &mut other, &mut person] {
            c.kill().unwrap();
            c.wait().unwrap();
        }
    }
}
