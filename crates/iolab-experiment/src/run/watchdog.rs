//! The stall watchdog: a device that stops answering leaves a thread of the run in a system
//! call that never returns, and a run that waits for that thread never ends. While a run
//! executes, a thread watches this process's threads (/proc/self/task): one that sits in the
//! same file-I/O system call (read, write, fsync, open, io_uring_enter, …) without being
//! scheduled once (its context-switch counts unchanged) for [`DEFAULT_STALL_BOUND`] (or
//! `--stall-timeout`) is stalled. The run is then told to stop; if it ends within
//! [`GRACE`], it is stored failed with the stall's message and the experiment goes on.
//! If not (the runner itself waits on the stuck thread), the watchdog stores the run as
//! failed (interrupted after Ctrl-C) through a connection of its own, marks the experiment,
//! restores the system under test, and hands over to the command ([`StallOptions::abandon`]),
//! which ends the process: a thread stuck in the kernel can only be abandoned.
//!
//! Only this process's threads are watched: a run in a container or VM worker, or an
//! external tool's process, is not.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use iolab_store::{ConfigId, ExperimentId, ExperimentStatus, NewRun, RunRecord, RunStatus};
use iolab_store::{Store, Timestamp};

/// How long a thread of the run may wait in one file-I/O system call before the run counts
/// as stalled: the kernel's own hung-task warning fires after 120 s too, and an fsync of
/// gigabytes of dirty data on a slow disk stays well under it.
pub const DEFAULT_STALL_BOUND: Duration = Duration::from_secs(120);

/// After a stall is found, how long the run has to end by itself before it is abandoned.
pub const GRACE: Duration = Duration::from_secs(5);

/// Called on the watchdog's thread once a stalled run is stored and the system restored:
/// the message, and whether Ctrl-C had been pressed. It should end the process.
pub type Abandon = Arc<dyn Fn(&str, bool) + Send + Sync>;

/// The watchdog's settings.
#[derive(Clone)]
pub struct StallOptions {
    /// No I/O completed for this long: the run is stalled.
    pub bound: Duration,
    /// What ends the process after an abandoned run; `None` leaves the runner waiting.
    pub abandon: Option<Abandon>,
}

impl Default for StallOptions {
    fn default() -> Self {
        StallOptions {
            bound: DEFAULT_STALL_BOUND,
            abandon: None,
        }
    }
}

impl std::fmt::Debug for StallOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StallOptions")
            .field("bound", &self.bound)
            .field("abandon", &self.abandon.is_some())
            .finish()
    }
}

/// What the watchdog stores for a run it abandons.
pub(super) struct RunToStore {
    pub db: Option<PathBuf>,
    pub experiment: Option<ExperimentId>,
    pub config: Option<ConfigId>,
    pub repetition: u32,
    pub seed: u64,
    pub started_at: Timestamp,
    pub sut: iolab_sut::SutHandle,
    /// Ctrl-C (the runner's flag).
    pub interrupted: Arc<AtomicBool>,
}

#[derive(Default)]
struct Shared {
    /// The stall found, if any.
    stall: Option<String>,
    /// The run came back (`stop`).
    returned: bool,
    /// The watchdog is storing the run itself: the runner must not.
    abandoning: bool,
}

/// Watches one run; [`Watchdog::stop`] when the run returns.
pub(super) struct Watchdog {
    shared: Arc<(Mutex<Shared>, Condvar)>,
    thread: Option<JoinHandle<()>>,
}

impl Watchdog {
    /// Starts watching; a stall sets `run_cancel` (the run's own flag, not the
    /// experiment's).
    pub(super) fn start(
        opts: &StallOptions,
        run_cancel: Arc<AtomicBool>,
        run: RunToStore,
    ) -> Watchdog {
        let shared = Arc::new((Mutex::new(Shared::default()), Condvar::new()));
        let s = Arc::clone(&shared);
        let bound = opts.bound;
        let abandon = opts.abandon.clone();
        let thread = std::thread::Builder::new()
            .name("iolab-watchdog".into())
            .spawn(move || watch(bound, &s, &run_cancel, run, abandon))
            .ok();
        Watchdog { shared, thread }
    }

    /// The run returned: the stall's message if one was found. Never returns while the
    /// watchdog is storing the run itself (the process is about to end).
    pub(super) fn stop(mut self) -> Option<String> {
        let (m, cv) = &*self.shared;
        let mut s = m.lock().unwrap_or_else(|e| e.into_inner());
        s.returned = true;
        cv.notify_all();
        while s.abandoning {
            s = cv.wait(s).unwrap_or_else(|e| e.into_inner());
        }
        let stall = s.stall.take();
        drop(s);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        stall
    }
}

fn watch(
    bound: Duration,
    shared: &(Mutex<Shared>, Condvar),
    run_cancel: &AtomicBool,
    run: RunToStore,
    abandon: Option<Abandon>,
) {
    let (m, cv) = shared;
    let me = current_tid();
    let mut seen: HashMap<u32, (Blocked, Instant)> = HashMap::new();
    let tick = (bound / 4).clamp(Duration::from_millis(50), Duration::from_secs(1));
    let stall = loop {
        {
            let s = m.lock().unwrap_or_else(|e| e.into_inner());
            let (s, _) = cv
                .wait_timeout_while(s, tick, |s| !s.returned)
                .unwrap_or_else(|e| e.into_inner());
            if s.returned {
                return;
            }
        }
        let now = Instant::now();
        let blocked = blocked_threads(me);
        seen.retain(|tid, _| blocked.iter().any(|(t, _)| t == tid));
        let mut found = None;
        for (tid, b) in blocked {
            let since = match seen.get(&tid) {
                Some((prev, since)) if *prev == b => *since,
                _ => now,
            };
            if now.duration_since(since) >= bound && found.is_none() {
                found = Some(b.describe(bound));
            }
            seen.insert(tid, (b, since));
        }
        if let Some(f) = found {
            break f;
        }
    };
    run_cancel.store(true, Ordering::Relaxed);
    let mut s = m.lock().unwrap_or_else(|e| e.into_inner());
    s.stall = Some(stall.clone());
    let (mut s, _) = cv
        .wait_timeout_while(s, GRACE, |s| !s.returned)
        .unwrap_or_else(|e| e.into_inner());
    if s.returned {
        return;
    }
    let Some(abandon) = abandon else { return };
    s.abandoning = true;
    drop(s);
    let interrupted = run.interrupted.load(Ordering::Relaxed);
    let message = format!(
        "{stall}; the run was abandoned (its thread cannot be stopped while the device does \
         not answer)"
    );
    let stored = store_abandoned(&run, &message, interrupted);
    let report = run.sut.teardown_all();
    let mut told = message;
    if let Err(e) = stored {
        told.push_str(&format!("; storing the run failed: {e}"));
    }
    if report.failures().next().is_some() {
        told.push_str("; some of the system under test could not be restored: run `iolab recover`");
    }
    abandon(&told, interrupted);
}

fn store_abandoned(run: &RunToStore, message: &str, interrupted: bool) -> Result<(), String> {
    let (Some(db), Some(config), Some(exp)) = (&run.db, run.config, run.experiment) else {
        return Ok(());
    };
    let mut store = Store::open(db).map_err(|e| e.to_string())?;
    let status = if interrupted {
        RunStatus::Interrupted
    } else {
        RunStatus::Failed
    };
    let now = Timestamp::now();
    store
        .record_run(&RunRecord::new(NewRun {
            config,
            repetition: run.repetition,
            seed: run.seed,
            status,
            error: Some(message.to_string()),
            started_at: run.started_at,
            ended_at: now,
            elapsed_ns: 0,
            environment: serde_json::Value::Null,
        }))
        .map_err(|e| e.to_string())?;
    let exp_status = if interrupted {
        ExperimentStatus::Interrupted
    } else {
        ExperimentStatus::Failed
    };
    store
        .set_experiment_status(exp, exp_status, now)
        .map_err(|e| e.to_string())
}

fn current_tid() -> u32 {
    // SAFETY: gettid has no failure mode.
    unsafe { libc::syscall(libc::SYS_gettid) as u32 }
}

/// A thread in a file-I/O system call, as /proc shows it; equal twice in a row means the
/// thread was not scheduled in between.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Blocked {
    name: String,
    /// The `syscall` file's line: number and arguments.
    syscall: String,
    switches: String,
    call: &'static str,
    file: Option<String>,
}

impl Blocked {
    fn describe(&self, bound: Duration) -> String {
        let secs = bound.as_secs_f64();
        let what = match &self.file {
            Some(f) => format!("{} on {f}", self.call),
            None => self.call.to_string(),
        };
        format!(
            "no I/O completed for {secs} s: thread `{}` has waited in {what} all that time \
             (the device stalled; the bound is --stall-timeout)",
            self.name
        )
    }
}

/// The threads of this process (but `me`) that are in a file-I/O system call now.
fn blocked_threads(me: u32) -> Vec<(u32, Blocked)> {
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in dir.flatten() {
        let Some(tid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        if tid == me {
            continue;
        }
        let task = e.path();
        if let Some(b) = blocked(&task) {
            out.push((tid, b));
        }
    }
    out
}

fn blocked(task: &Path) -> Option<Blocked> {
    let syscall = std::fs::read_to_string(task.join("syscall")).ok()?;
    let mut fields = syscall.split_whitespace();
    let nr: i64 = fields.next()?.parse().ok()?;
    let (call, fd_arg) = file_io_call(nr)?;
    let arg0 = fields
        .next()
        .and_then(|a| i64::from_str_radix(a.trim_start_matches("0x"), 16).ok());
    let file = match (fd_arg, arg0) {
        (true, Some(fd)) => Some(fd_target(task, fd)?),
        _ => None,
    };
    let status = std::fs::read_to_string(task.join("status")).ok()?;
    let switches = status
        .lines()
        .filter(|l| l.contains("ctxt_switches"))
        .collect::<Vec<_>>()
        .join(" ");
    let name = std::fs::read_to_string(task.join("comm"))
        .map(|s| s.trim().to_string())
        .unwrap_or_default();
    Some(Blocked {
        name,
        syscall: syscall.trim().to_string(),
        switches,
        call,
        file,
    })
}

/// What descriptor `fd` of thread `task` is, when it is a file or a block device (a pipe, a
/// socket, a terminal or a tracefs pipe may wait for ever by design). The thread's own table:
/// the engine's workers unshare theirs. Only names are read: a stat of a file on the stalled
/// device would stall the watchdog too.
fn fd_target(task: &Path, fd: i64) -> Option<String> {
    let target = std::fs::read_link(task.join("fd").join(fd.to_string())).ok()?;
    let text = target.to_string_lossy().into_owned();
    // /proc and /sys files (a block trace's trace_pipe) wait for events, not a device.
    if !text.starts_with('/') || text.starts_with("/proc/") || text.starts_with("/sys/") {
        return None;
    }
    if text.starts_with("/dev/") {
        use std::os::unix::fs::FileTypeExt;
        return std::fs::metadata(&target)
            .ok()
            .filter(|m| m.file_type().is_block_device())
            .map(|_| text);
    }
    Some(text)
}

/// The system calls that wait for a file or a device: the call's name, and whether its
/// first argument is the descriptor.
fn file_io_call(nr: i64) -> Option<(&'static str, bool)> {
    const FD: &[(i64, &str)] = &[
        (libc::SYS_read, "read"),
        (libc::SYS_write, "write"),
        (libc::SYS_pread64, "pread"),
        (libc::SYS_pwrite64, "pwrite"),
        (libc::SYS_readv, "readv"),
        (libc::SYS_writev, "writev"),
        (libc::SYS_preadv, "preadv"),
        (libc::SYS_pwritev, "pwritev"),
        (libc::SYS_preadv2, "preadv2"),
        (libc::SYS_pwritev2, "pwritev2"),
        (libc::SYS_fsync, "fsync"),
        (libc::SYS_fdatasync, "fdatasync"),
        (libc::SYS_sync_file_range, "sync_file_range"),
        (libc::SYS_ftruncate, "ftruncate"),
        (libc::SYS_fallocate, "fallocate"),
        (libc::SYS_getdents64, "getdents64"),
        (libc::SYS_close, "close"),
    ];
    const OTHER: &[(i64, &str)] = &[
        (libc::SYS_openat, "openat"),
        (libc::SYS_newfstatat, "stat"),
        (libc::SYS_statx, "statx"),
        (libc::SYS_unlinkat, "unlink"),
        (libc::SYS_renameat2, "rename"),
        (libc::SYS_mkdirat, "mkdir"),
        (libc::SYS_sync, "sync"),
        (libc::SYS_syncfs, "syncfs"),
        (libc::SYS_msync, "msync"),
        (libc::SYS_io_uring_enter, "io_uring_enter"),
    ];
    if let Some((_, n)) = FD.iter().find(|(c, _)| *c == nr) {
        return Some((n, true));
    }
    OTHER
        .iter()
        .find(|(c, _)| *c == nr)
        .map(|(_, n)| (*n, false))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::io::AsRawFd;

    #[test]
    fn a_file_descriptor_is_named_and_a_pipe_or_terminal_is_not() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("data");
        let f = std::fs::File::create(&path).unwrap();
        let me = PathBuf::from(format!("/proc/self/task/{}", current_tid()));
        assert_eq!(
            fd_target(&me, i64::from(f.as_raw_fd())),
            Some(path.to_string_lossy().into_owned())
        );
        let mut fds = [0; 2];
        // SAFETY: pipe fills two descriptors, closed below.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        assert_eq!(
            fd_target(&me, i64::from(fds[0])),
            None,
            "a pipe waits by design"
        );
        // SAFETY: the two descriptors pipe made.
        unsafe {
            libc::close(fds[0]);
            libc::close(fds[1]);
        }
        let null = std::fs::File::open("/dev/null").unwrap();
        assert_eq!(
            fd_target(&me, i64::from(null.as_raw_fd())),
            None,
            "a character device"
        );
        assert_eq!(file_io_call(libc::SYS_fsync), Some(("fsync", true)));
        assert_eq!(file_io_call(libc::SYS_openat), Some(("openat", false)));
        assert_eq!(file_io_call(libc::SYS_futex), None);
    }

    #[test]
    fn a_run_that_returns_in_time_has_no_stall() {
        let d = tempfile::tempdir().unwrap();
        let sut = iolab_sut::Sut::in_place(iolab_sut::SutOptions::under(d.path()));
        let dog = Watchdog::start(
            &StallOptions::default(),
            Arc::new(AtomicBool::new(false)),
            RunToStore {
                db: None,
                experiment: None,
                config: None,
                repetition: 0,
                seed: 0,
                started_at: Timestamp::now(),
                sut: sut.handle(),
                interrupted: Arc::new(AtomicBool::new(false)),
            },
        );
        assert_eq!(dog.stop(), None);
    }
}
