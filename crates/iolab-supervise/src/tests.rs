//! Real processes: `true`, `false`, `sh`, `sleep`, `dd`, `env`. Commands that must still be
//! running when supervision stops wait for a file the test creates, not for time to pass.

use std::ffi::OsString;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use super::*;

fn flag() -> Arc<AtomicBool> {
    Arc::new(AtomicBool::new(false))
}

/// `w` with each way of waiting: pidfd, and the fallback for kernels without it. Each has a
/// cancel flag of its own.
fn both(w: Watch) -> [Watch; 2] {
    let mut fallback = w.clone();
    fallback.cancel = flag();
    fallback.use_pidfd = false;
    [w, fallback]
}

fn sh(script: &str) -> Job {
    Job::new(["sh", "-c", script])
}

/// Sets `cancel` once `file` exists (the command is ready for it), or after a minute (the
/// command never got ready: the test fails instead of hanging).
fn cancel_when(file: &Path, cancel: &Arc<AtomicBool>) -> thread::JoinHandle<()> {
    let (file, cancel) = (file.to_owned(), Arc::clone(cancel));
    thread::spawn(move || {
        for _ in 0..12_000 {
            if file.exists() {
                break;
            }
            thread::sleep(Duration::from_millis(5));
        }
        cancel.store(true, Ordering::Relaxed);
    })
}

fn is_running(pid: u32) -> bool {
    // Gone, or a zombie waiting for its parent: not running.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit_once(')')
            .is_some_and(|(_, r)| r.starts_with(" Z")),
        Err(_) => false,
    }
}

/// Kills and reaps a child the test left running.
fn kill_and_reap(pid: u32) {
    // SAFETY: our own unreaped child; plain syscalls.
    unsafe {
        libc::kill(pid as libc::pid_t, libc::SIGKILL);
        libc::waitpid(pid as libc::pid_t, std::ptr::null_mut(), 0);
    }
}

#[test]
fn true_exits_successfully_and_the_recorder_brackets_it() {
    for w in both(Watch::new(flag())) {
        let (begun, ended) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let o = run_recorded(
            &Job::new(["true"]),
            &w,
            || {
                begun.fetch_add(1, Ordering::Relaxed);
                Ok::<_, Infallible>("recorder")
            },
            |r| {
                ended.fetch_add(1, Ordering::Relaxed);
                format!("{r} stopped")
            },
        )
        .unwrap();
        assert!(matches!(o.end, End::Exited(s) if s.success()), "{o:?}");
        assert_eq!(o.recorded, "recorder stopped");
        assert_eq!((begun.into_inner(), ended.into_inner()), (1, 1));
        assert!(!o.interrupted());
        assert!(o.usage.is_some_and(|u| u.max_rss_kib > 0), "{o:?}");
    }
}

#[test]
fn false_exits_with_status_1() {
    for w in both(Watch::new(flag())) {
        let o = run(&Job::new(["false"]), &w).unwrap();
        assert_eq!(o.end.status().and_then(|s| s.code()), Some(1), "{o:?}");
        assert!(matches!(o.end, End::Exited(_)));
    }
}

#[test]
fn a_command_killed_by_a_signal_ends_with_it() {
    let w = Watch::new(flag());
    let o = run(&sh("kill -9 $$"), &w).unwrap();
    assert!(
        matches!(o.end, End::Exited(s) if s.signal() == Some(9)),
        "{o:?}"
    );
    assert!(!o.interrupted());
    // Ctrl-C reaches the terminal's whole process group: a command that died of SIGINT was
    // interrupted even if the flag was not seen yet.
    let o = run(&sh("kill -INT $$"), &w).unwrap();
    assert!(
        matches!(o.end, End::Exited(s) if s.signal() == Some(libc::SIGINT)),
        "{o:?}"
    );
    assert!(o.interrupted());
}

/// A background job of a non-interactive shell starts with SIGINT and SIGQUIT ignored; the
/// command still gets them as from a terminal.
#[test]
fn a_command_gets_the_signals_that_stop_it_even_when_iolab_ignores_them() {
    // SAFETY: setting a disposition; no handler runs.
    let before = unsafe { libc::signal(libc::SIGQUIT, libc::SIG_IGN) };
    let w = Watch::new(flag());
    let o = run(&sh("kill -QUIT $$"), &w);
    // SAFETY: as above, putting back what was there.
    unsafe { libc::signal(libc::SIGQUIT, before) };
    let o = o.unwrap();
    assert!(
        matches!(o.end, End::Exited(s) if s.signal() == Some(libc::SIGQUIT)),
        "{o:?}"
    );
}

#[test]
fn the_cancel_flag_terminates_a_sleeping_command() {
    for w in both(Watch::new(flag())) {
        let d = tempfile::tempdir().unwrap();
        let ready = d.path().join("ready");
        let setter = cancel_when(&ready, &w.cancel);
        let job = sh(&format!("touch '{}'; exec sleep 30", ready.display()));
        let o = run(&job, &w).unwrap();
        setter.join().unwrap();
        let End::Stopped {
            reason,
            status,
            sent,
        } = o.end
        else {
            panic!("not stopped: {o:?}");
        };
        assert_eq!(reason, Reason::Cancelled);
        assert_eq!(status.and_then(|s| s.signal()), Some(libc::SIGTERM));
        assert_eq!(sent, Some(libc::SIGTERM));
        assert!(o.interrupted());
        assert!(o.usage.is_some());
    }
}

#[test]
fn terminate_kills_a_command_that_ignores_sigterm() {
    let w = Watch::new(flag()).grace(Duration::from_millis(100));
    let d = tempfile::tempdir().unwrap();
    let ready = d.path().join("ready");
    let setter = cancel_when(&ready, &w.cancel);
    // An ignored signal stays ignored across exec.
    let job = sh(&format!(
        "trap '' TERM; touch '{}'; exec sleep 30",
        ready.display()
    ));
    let o = run(&job, &w).unwrap();
    setter.join().unwrap();
    assert!(
        matches!(o.end, End::Stopped { status: Some(s), sent: Some(libc::SIGKILL), .. }
            if s.signal() == Some(libc::SIGKILL)),
        "{o:?}"
    );
}

#[test]
fn a_timeout_terminates_a_command() {
    for w in both(Watch::new(flag()).timeout(Some(Duration::from_millis(50)))) {
        let o = run(&Job::new(["sleep", "30"]), &w).unwrap();
        assert!(
            matches!(o.end, End::Stopped { reason: Reason::TimedOut, status: Some(s), .. }
                if s.signal() == Some(libc::SIGTERM)),
            "{o:?}"
        );
        assert!(!o.interrupted());
    }
}

#[test]
fn leave_stops_the_recorder_at_once_and_waits_the_grace_period() {
    for w in both(
        Watch::new(flag())
            .on_stop(OnStop::Leave)
            .grace(Duration::from_secs(30)),
    ) {
        w.cancel.store(true, Ordering::Relaxed);
        let d = tempfile::tempdir().unwrap();
        let (go, done) = (d.path().join("go"), d.path().join("done"));
        // It cannot end before the recorder's end hook creates `go`.
        let job = sh(&format!(
            "while [ ! -e '{0}' ]; do sleep 0.01; done; touch '{1}'",
            go.display(),
            done.display()
        ));
        let o = run_recorded(
            &job,
            &w,
            || Ok::<_, Infallible>(()),
            |()| {
                std::fs::write(&go, "").unwrap();
                done.exists()
            },
        )
        .unwrap();
        assert!(!o.recorded, "the recorder stopped after the command ended");
        assert!(
            matches!(o.end, End::Stopped { reason: Reason::Cancelled, status: Some(s), sent: None }
                if s.success()),
            "{o:?}"
        );
        assert!(done.exists());
    }
}

#[test]
fn leave_leaves_a_command_running_after_the_grace_period() {
    for w in both(
        Watch::new(flag())
            .on_stop(OnStop::Leave)
            .grace(Duration::ZERO),
    ) {
        w.cancel.store(true, Ordering::Relaxed);
        let o = run(&Job::new(["sleep", "30"]), &w).unwrap();
        let running = is_running(o.pid);
        kill_and_reap(o.pid);
        assert!(
            matches!(
                o.end,
                End::Stopped {
                    reason: Reason::Cancelled,
                    status: None,
                    sent: None
                }
            ),
            "{o:?}"
        );
        assert!(o.usage.is_none());
        assert!(running, "pid {} was not left running", o.pid);
    }
}

#[test]
fn terminate_signals_the_commands_own_process_group() {
    let w = Watch::new(flag());
    let d = tempfile::tempdir().unwrap();
    let (pidfile, ready) = (d.path().join("pid"), d.path().join("ready"));
    let setter = cancel_when(&ready, &w.cancel);
    let job = sh(&format!(
        "sleep 30 & echo $! > '{}'; touch '{}'; wait",
        pidfile.display(),
        ready.display()
    ))
    .own_process_group();
    let o = run(&job, &w).unwrap();
    setter.join().unwrap();
    assert!(
        matches!(o.end, End::Stopped { status: Some(s), .. } if s.signal() == Some(libc::SIGTERM)),
        "{o:?}"
    );
    // The shell's own child got SIGTERM too; orphaned, init reaps it. Bounded: a sleep that
    // survived would run 30 s.
    let sleep: u32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let mut tries = 0;
    while is_running(sleep) && tries < 1000 {
        thread::sleep(Duration::from_millis(10));
        tries += 1;
    }
    assert!(
        !is_running(sleep),
        "the group's sleep (pid {sleep}) survived"
    );
}

#[test]
fn a_missing_program_is_a_spawn_error_after_begin_without_end() {
    let (begun, ended) = (AtomicUsize::new(0), AtomicUsize::new(0));
    let e = run_recorded(
        &Job::new(["iolab-no-such-program", "-x"]),
        &Watch::new(flag()),
        || {
            begun.fetch_add(1, Ordering::Relaxed);
            Ok::<_, Infallible>(())
        },
        |()| {
            ended.fetch_add(1, Ordering::Relaxed);
        },
    )
    .unwrap_err();
    assert!(
        matches!(&e, Error::Spawn { program, source }
            if program == "iolab-no-such-program" && source.kind() == std::io::ErrorKind::NotFound),
        "{e:?}"
    );
    assert!(e
        .to_string()
        .starts_with("cannot run iolab-no-such-program: "));
    assert!(e.hint().is_some_and(|h| h.contains("$PATH")));
    assert!(e.is_bad_input());
    assert_eq!((begun.into_inner(), ended.into_inner()), (1, 0));
}

#[test]
fn a_program_that_is_not_executable_says_so() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("script");
    std::fs::write(&p, "echo hi\n").unwrap();
    let e = run(&Job::new([&p]), &Watch::new(flag())).unwrap_err();
    assert!(
        e.hint().is_some_and(|h| h.contains("chmod +x")),
        "{e:?}: {:?}",
        e.hint()
    );
}

#[test]
fn a_failing_begin_starts_nothing() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("ran");
    let e = run_recorded(
        &Job::new([std::ffi::OsStr::new("touch"), f.as_os_str()]),
        &Watch::new(flag()),
        || Err::<(), _>("no tracer"),
        |()| (),
    )
    .unwrap_err();
    assert!(matches!(e, Error::Begin("no tracer")), "{e:?}");
    assert!(!f.exists());
}

#[test]
fn output_files_working_directory_and_environment() {
    let d = tempfile::tempdir().unwrap();
    let (out, err) = (d.path().join("out"), d.path().join("err"));
    let job = sh("pwd; echo \"$IOLAB_SUPERVISE_TEST\"; echo oops >&2")
        .cwd(d.path())
        .env("IOLAB_SUPERVISE_TEST", "42")
        .stdout(Output::File(out.clone()))
        .stderr(Output::File(err.clone()));
    let o = run(&job, &Watch::new(flag())).unwrap();
    assert!(o.end.status().is_some_and(|s| s.success()), "{o:?}");
    let cwd = d.path().canonicalize().unwrap();
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        format!("{}\n42\n", cwd.display())
    );
    assert_eq!(std::fs::read_to_string(&err).unwrap(), "oops\n");

    // One file for both: nothing overwritten.
    let both = d.path().join("both");
    let job = sh("echo one; echo two >&2; echo three")
        .stdout(Output::File(both.clone()))
        .stderr(Output::File(both.clone()));
    run(&job, &Watch::new(flag())).unwrap();
    assert_eq!(std::fs::read_to_string(&both).unwrap(), "one\ntwo\nthree\n");

    // Only the given variables; the program is still found through iolab's $PATH.
    let job = Job::new(["env"])
        .env_clear()
        .env("IOLAB_SUPERVISE_TEST", "x y")
        .stdout(Output::File(out.clone()))
        .stderr(Output::Null);
    run(&job, &Watch::new(flag())).unwrap();
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        "IOLAB_SUPERVISE_TEST=x y\n"
    );
}

#[test]
fn bad_directories_and_empty_command_lines_start_nothing() {
    let d = tempfile::tempdir().unwrap();
    let begun = AtomicUsize::new(0);
    let begin = || {
        begun.fetch_add(1, Ordering::Relaxed);
        Ok::<_, Infallible>(())
    };
    let w = Watch::new(flag());
    let missing = d.path().join("missing");
    let e = run_recorded(&Job::new(["true"]).cwd(&missing), &w, begin, |()| ()).unwrap_err();
    assert!(
        matches!(&e, Error::Cwd { path, .. } if *path == missing),
        "{e:?}"
    );
    assert!(e.hint().is_some());
    let file = d.path().join("file");
    std::fs::write(&file, "").unwrap();
    let e = run_recorded(&Job::new(["true"]).cwd(&file), &w, begin, |()| ()).unwrap_err();
    assert!(e.to_string().contains("Not a directory"), "{e}");
    let out = missing.join("out");
    let e = run_recorded(
        &Job::new(["true"]).stderr(Output::File(out.clone())),
        &w,
        begin,
        |()| (),
    )
    .unwrap_err();
    assert!(
        matches!(&e, Error::Capture { path, stream: "stderr", .. } if *path == out),
        "{e:?}"
    );
    let e = run_recorded(&Job::new(Vec::<OsString>::new()), &w, begin, |()| ()).unwrap_err();
    assert!(matches!(e, Error::NoCommand), "{e:?}");
    assert!(e.is_bad_input());
    assert_eq!(begun.into_inner(), 0);
}

#[test]
fn usage_is_the_commands() {
    // dd's one 64 MiB buffer, filled from /dev/zero: resident at its peak.
    let job =
        Job::new(["dd", "if=/dev/zero", "of=/dev/null", "bs=64M", "count=1"]).stderr(Output::Null);
    let o = run(&job, &Watch::new(flag())).unwrap();
    let u = o.usage.unwrap();
    assert!(u.max_rss_kib >= 64 * 1024, "{u:?}");
    assert!(u.user + u.system > Duration::ZERO, "{u:?}");
}

#[test]
fn recording_without_a_command_ends_on_the_flag_or_the_timeout() {
    let w = Watch::new(flag());
    w.cancel.store(true, Ordering::Relaxed);
    let r = record_until_stopped(&w, || Ok::<_, Infallible>(7), |n| n + 1).unwrap();
    assert_eq!((r.reason, r.recorded), (Reason::Cancelled, 8));
    let w = Watch::new(flag()).timeout(Some(Duration::from_millis(30)));
    let r = record_until_stopped(&w, || Ok::<_, Infallible>(()), |()| ()).unwrap();
    assert_eq!(r.reason, Reason::TimedOut);
    assert!(!w.cancel.load(Ordering::Relaxed));
    let e = record_until_stopped(&w, || Err::<(), _>("no"), |()| ()).unwrap_err();
    assert_eq!(e, "no");
}
