//! The system call tracer on real processes: dd, a process that forks and starts a thread,
//! a thread that execs, a busy process nobody asked to count, and what is left in the
//! kernel afterwards. Needs root (the tests are ignored otherwise); one test at a time (a
//! lock), since some count this process's BPF fds.

use std::os::unix::fs::FileExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Mutex, MutexGuard};

use iolab_systrace::{gettid, SysTraceError, SyscallCounts, SyscallTracer};

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn lock() -> MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

fn start() -> SyscallTracer {
    SyscallTracer::start().unwrap_or_else(|e| panic!("{e}"))
}

/// Runs `cmd` from this thread, which the tracer follows (not counts), and returns the
/// counts.
fn count_command(cmd: &mut Command) -> SyscallCounts {
    let t = start();
    t.follow_task(gettid()).unwrap();
    let status = cmd.status().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(status.success(), "{cmd:?}: {status}");
    t.stop().unwrap()
}

fn dd(out: &Path, extra: &[&str]) -> Command {
    let mut c = Command::new("dd");
    c.arg("if=/dev/zero")
        .arg(format!("of={}", out.display()))
        .args(["bs=1M", "count=64"])
        .args(extra)
        .stderr(Stdio::null());
    c
}

/// The count of `name`'s calls that returned between `low` and `2 * low` - 1.
fn of_size(c: &SyscallCounts, name: &str, low: u64) -> u64 {
    c.kind(name)
        .and_then(|k| k.sizes.as_ref())
        .and_then(|s| s.buckets.iter().find(|b| b.low == low))
        .map_or(0, |b| b.count)
}

#[test]
#[ignore = "needs root: bpf(2) and tracefs"]
fn dd_writes_64_mib_in_64_writes() {
    iolab_testkit::require_root();
    let _one = lock();
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("f");

    let c = count_command(&mut dd(&out, &["status=none"]));
    let w = c.kind("write").unwrap();
    assert_eq!((w.calls, w.bytes), (64, Some(64 << 20)), "{c:?}");
    assert_eq!(of_size(&c, "write", 1 << 20), 64);
    // dd's own reads of /dev/zero, and the loader's of the libraries.
    assert_eq!(of_size(&c, "read", 1 << 20), 64);
    assert!(c.calls("execve") >= 1 && c.calls("openat") >= 2, "{c:?}");
    assert_eq!(c.calls("exit_group"), 0, "never returns");
    assert_eq!((c.tasks, c.tasks_missed), (2, 0));
    assert_eq!(c.mechanism, "tp_btf");

    // With its statistics on stderr: three writes more, and still 64 of 1 MiB.
    let c = count_command(&mut dd(&out, &[]));
    assert_eq!(c.calls("write"), 67, "{c:?}");
    assert_eq!(of_size(&c, "write", 1 << 20), 64);
}

const PAGE: usize = 4096;

fn preads(file: &std::fs::File, n: u64) {
    let mut buf = [0u8; PAGE];
    for i in 0..n {
        assert_eq!(
            file.read_at(&mut buf, (i % 16) * PAGE as u64).unwrap(),
            PAGE
        );
    }
}

/// This thread does `own` preads; a child process it forks does `child` and a thread it
/// starts does `thread`, all on a 64 KiB file.
fn fork_and_thread(t: &SyscallTracer, count_me: bool, own: u64, child: u64, thread: u64) {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("f");
    std::fs::write(&path, vec![7u8; 16 * PAGE]).unwrap();
    let file = std::fs::File::open(&path).unwrap();
    let me = gettid();
    if count_me {
        t.count_task(me).unwrap();
    } else {
        t.follow_task(me).unwrap();
    }
    preads(&file, own);
    // SAFETY: the child only calls pread(2) and _exit(2), which are async-signal-safe.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0);
    if pid == 0 {
        let mut buf = [0u8; PAGE];
        let mut status = 0;
        for i in 0..child {
            // SAFETY: a valid fd and buffer.
            let n = unsafe {
                libc::pread(
                    std::os::fd::AsRawFd::as_raw_fd(&file),
                    buf.as_mut_ptr().cast(),
                    PAGE,
                    ((i % 16) * PAGE as u64) as libc::off_t,
                )
            };
            if n != PAGE as isize {
                status = 1;
            }
        }
        // SAFETY: ends the child without running the parent's destructors.
        unsafe { libc::_exit(status) };
    }
    let tid = std::thread::scope(|s| {
        s.spawn(|| {
            preads(&file, thread);
            gettid()
        })
        .join()
    })
    .unwrap();
    let mut status = 0;
    // SAFETY: waiting for the child forked above.
    assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);
    // Gone, and forgotten: the kernel may give their TIDs to other tasks.
    assert!(!t.is_counted(pid) && !t.is_counted(tid));
    assert_eq!(t.is_counted(me), count_me);
    t.forget_task(me).unwrap();
    assert!(!t.is_counted(me));
}

#[test]
#[ignore = "needs root: bpf(2) and tracefs"]
fn a_forked_child_and_a_thread_are_counted_exactly() {
    iolab_testkit::require_root();
    let _one = lock();
    let t = start();
    fork_and_thread(&t, true, 300, 1000, 700);
    let c = t.stop().unwrap();
    let p = c.kind("pread64").unwrap();
    assert_eq!(p.calls, 2000, "{c:?}");
    assert_eq!(p.bytes, Some(2000 * PAGE as u64));
    assert_eq!(of_size(&c, "pread64", PAGE as u64), 2000);
    assert_eq!((c.tasks, c.tasks_missed), (3, 0), "{c:?}");

    // Followed, not counted: the thread's own preads are not in.
    let t = start();
    fork_and_thread(&t, false, 300, 1000, 700);
    let c = t.stop().unwrap();
    assert_eq!(c.calls("pread64"), 1700, "{c:?}");
}

#[test]
#[ignore = "needs root: bpf(2) and tracefs"]
fn threads_one_after_another_are_all_counted() {
    iolab_testkit::require_root();
    let _one = lock();
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("f");
    std::fs::write(&path, vec![7u8; 16 * PAGE]).unwrap();
    let file = std::fs::File::open(&path).unwrap();
    let t = start();
    t.follow_task(gettid()).unwrap();
    // Each thread likely gets the kernel stack the one before left (the kernel keeps a
    // few freed stacks per CPU): its calls must not be taken for the dead one's.
    for _ in 0..50 {
        std::thread::scope(|s| s.spawn(|| preads(&file, 100)).join()).unwrap();
    }
    t.forget_task(gettid()).unwrap();
    let c = t.stop().unwrap();
    assert_eq!(c.calls("pread64"), 5000, "{c:?}");
    assert_eq!(c.tasks, 51);
}

#[test]
#[ignore = "needs root: bpf(2) and tracefs"]
fn a_busy_process_not_given_is_not_counted() {
    iolab_testkit::require_root();
    let _one = lock();
    // Writes a byte at a time until killed, from before the tracer starts.
    let mut busy = Command::new("dd")
        .args(["if=/dev/zero", "of=/dev/null", "bs=1"])
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let d = tempfile::tempdir().unwrap();
    let t = start();
    t.follow_task(gettid()).unwrap();
    let status = dd(&d.path().join("f"), &["status=none"]).status().unwrap();
    let still_busy = busy.try_wait().unwrap().is_none();
    let c = t.stop().unwrap();
    // SAFETY: a signal to our own child, not reaped yet.
    unsafe { libc::kill(busy.id() as i32, libc::SIGKILL) };
    busy.wait().unwrap();
    assert!(status.success() && still_busy);
    assert_eq!(c.calls("write"), 64, "{c:?}");
    assert_eq!(of_size(&c, "write", 1), 0);
}

/// The child half of the test below: a thread that is not the leader execs dd.
#[test]
#[ignore = "child half of a_thread_that_execs_keeps_being_counted, which runs it"]
fn exec_from_a_thread() {
    let Some(out) = std::env::var_os("IOLAB_SYSTRACE_EXEC_OUT") else {
        return;
    };
    let h = std::thread::spawn(move || {
        let e = Command::new("dd")
            .arg("if=/dev/zero")
            .arg(format!("of={}", Path::new(&out).display()))
            .args(["bs=1M", "count=64", "status=none"])
            .exec();
        panic!("exec dd: {e}");
    });
    let _ = h.join();
    panic!("the thread's exec did not replace the process");
}

#[test]
#[ignore = "needs root: bpf(2) and tracefs"]
fn a_thread_that_execs_keeps_being_counted() {
    iolab_testkit::require_root();
    let _one = lock();
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("f");
    let c = count_command(
        iolab_testkit::child_half("exec_from_a_thread")
            .env("IOLAB_SYSTRACE_EXEC_OUT", &out)
            .stdout(Stdio::null()),
    );
    assert_eq!(std::fs::metadata(&out).unwrap().len(), 64 << 20);
    // It took the leader's TID: without the exec program, dd's writes would be lost.
    assert_eq!(of_size(&c, "write", 1 << 20), 64, "{c:?}");
}

/// This process's fds and mappings of BPF objects and perf events.
fn bpf_fds_and_maps() -> (usize, usize) {
    let fds = std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .filter(|l| {
            let l = l.to_string_lossy();
            l.starts_with("anon_inode:bpf") || l.contains("perf_event")
        })
        .count();
    let maps = std::fs::read_to_string("/proc/self/maps")
        .unwrap()
        .lines()
        .filter(|l| l.contains("bpf"))
        .count();
    (fds, maps)
}

#[test]
#[ignore = "needs root: bpf(2) and tracefs"]
fn nothing_is_left_behind() {
    iolab_testkit::require_root();
    let _one = lock();
    let before = bpf_fds_and_maps();
    let gone = |objects: &[iolab_systrace::KernelObject]| {
        assert!(objects.len() >= 6, "{objects:?}");
        assert_eq!(bpf_fds_and_maps(), before);
        // The kernel frees a program detached from a syscall tracepoint after an RCU
        // grace period, not at once.
        let _hang = iolab_testkit::timeout(60);
        for o in objects {
            while o.exists().unwrap() {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
        }
    };

    let t = start();
    let objects = t.kernel_objects().unwrap();
    assert!(objects.iter().all(|o| o.exists().unwrap()));
    assert_ne!(bpf_fds_and_maps(), before);
    t.stop().unwrap();
    gone(&objects);

    let t = start();
    let objects = t.kernel_objects().unwrap();
    drop(t);
    gone(&objects);

    let objects = Mutex::new(Vec::new());
    let r = std::panic::catch_unwind(|| {
        let t = start();
        *objects.lock().unwrap() = t.kernel_objects().unwrap();
        panic!("on purpose, with a tracer running");
    });
    assert!(r.is_err());
    gone(&objects.lock().unwrap());
}

/// The child half of the test below: gives up root, then starts a tracer.
#[test]
#[ignore = "child half of without_root_it_says_so, which runs it"]
fn start_as_nobody() {
    if std::env::var_os("IOLAB_SYSTRACE_AS_NOBODY").is_none() {
        return;
    }
    // SAFETY: setuid has no memory-safety preconditions; glibc applies it to all threads.
    assert_eq!(unsafe { libc::setuid(65534) }, 0);
    let e = SyscallTracer::start().map(drop).unwrap_err();
    assert!(e.is_bad_input(), "{e:?}");
    assert!(
        e.to_string().contains("root") || e.hint().unwrap().contains("root"),
        "{e}"
    );
    assert!(matches!(
        e,
        SysTraceError::NeedsRoot { .. } | SysTraceError::Tracefs(_)
    ));
    println!("ERROR: {e}");
}

#[test]
#[ignore = "needs root: to give it up"]
fn without_root_it_says_so() {
    iolab_testkit::require_root();
    let o = iolab_testkit::child_half("start_as_nobody")
        .env("IOLAB_SYSTRACE_AS_NOBODY", "1")
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(out.contains("ERROR: "), "{out}");
}
