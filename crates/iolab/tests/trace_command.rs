//! `iolab trace -- CMD` on a real loop device: how the command's end becomes the exit code
//! (0, 1, 2, 130) and the report, and Ctrl-C / SIGTERM while it runs or while tracing
//! without a command. Commands that must still run when the signal comes wait for a file the
//! test creates, not for time to pass.

mod common;

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use common::{assert_clean_failure, require_root, run, stderr, stdout, LoopFs};
use serde_json::Value;

/// `iolab trace --dev DEV --format json -- CMD…`.
fn trace(dev: &str, cmd: &[&str]) -> Output {
    let mut args = vec!["trace", "--dev", dev, "--format", "json", "--"];
    args.extend_from_slice(cmd);
    run(&args)
}

/// Checks iolab's exit code and that `message` is in its stderr; returns its JSON report.
fn ended(o: &Output, code: i32, message: &str) -> Value {
    assert_eq!(o.status.code(), Some(code), "{}", stderr(o));
    assert!(stderr(o).contains(message), "{}", stderr(o));
    serde_json::from_str(&stdout(o)).unwrap_or_else(|e| panic!("{e}: {}", stdout(o)))
}

/// The binary itself (not under `timeout`, whose pid would get the signal), its JSON
/// report on stdout.
fn spawn_trace(dev: &str, cmd: &[&str]) -> Child {
    let mut c = Command::new(env!("CARGO_BIN_EXE_iolab"));
    c.args(["trace", "--dev", dev, "--format", "json"]);
    if !cmd.is_empty() {
        c.arg("--").args(cmd);
    }
    c.stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("iolab runs")
}

fn wait_for(what: &str, ready: impl Fn() -> bool, child: &mut Child) {
    while !ready() {
        assert!(
            child.try_wait().unwrap().is_none(),
            "iolab ended before {what}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Whether process `pid` runs (it is not gone, nor a zombie).
fn running(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        !stat
            .rsplit_once(')')
            .is_some_and(|(_, r)| r.starts_with(" Z"))
    })
}

fn signal(child: &Child, sig: i32) {
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(child.id() as i32, sig) };
}

#[test]
#[ignore = "needs root: loop devices and tracefs"]
fn the_commands_end_gives_the_exit_code() {
    require_root();
    let fs = LoopFs::ext4("64M");
    let r = ended(&trace(&fs.device, &["true"]), 0, "");
    assert_eq!(
        (&r["exit_status"], &r["interrupted"]),
        (&0.into(), &false.into())
    );

    let o = trace(&fs.device, &["sh", "-c", "exit 3"]);
    let r = ended(&o, 1, "sh exited with status 3");
    assert_eq!(r["exit_status"], 3);

    let o = trace(&fs.device, &["sh", "-c", "kill -9 $$"]);
    let r = ended(&o, 1, "sh was killed by signal 9");
    assert_eq!(
        (&r["exit_signal"], &r["interrupted"]),
        (&9.into(), &false.into())
    );

    // Ctrl-C reaches the terminal's whole process group: a command that died of SIGINT
    // was interrupted. (SIGINT's default action restored: a shell started in the
    // background ignores it.)
    let sigint = ["env", "--default-signal=INT", "sh", "-c", "kill -INT $$"];
    let r = ended(
        &trace(&fs.device, &sigint),
        130,
        "interrupted; the trace was stopped",
    );
    assert_eq!(
        (&r["exit_signal"], &r["interrupted"]),
        (&2.into(), &true.into())
    );
}

#[test]
#[ignore = "needs root: loop devices and tracefs"]
fn a_command_that_cannot_start_leaves_no_saved_trace() {
    require_root();
    let fs = LoopFs::ext4("64M");
    let d = tempfile::tempdir().unwrap();
    let saved = d.path().join("t.iolt");
    let o = run(&[
        "trace",
        "--dev",
        &fs.device,
        "--save",
        saved.to_str().unwrap(),
        "--",
        "iolab-no-such-program",
        "x",
    ]);
    assert_clean_failure(&o, 2, "cannot run iolab-no-such-program: ");
    assert!(
        stderr(&o).contains("hint: check the command after `--` and $PATH"),
        "{}",
        stderr(&o)
    );
    assert!(!saved.exists());
}

#[test]
#[ignore = "needs root: loop devices and tracefs"]
fn sigterm_stops_the_trace_and_leaves_the_command_running() {
    require_root();
    let _hang = iolab_testkit::timeout(300);
    let fs = LoopFs::ext4("64M");
    let d = tempfile::tempdir().unwrap();
    let ready = d.path().join("ready");
    // Runs until the test removes `ready` (or its directory goes). Off iolab's stdout and
    // stderr: the test reads them to their end while the command still runs.
    let script = format!(
        "exec >/dev/null 2>&1; touch '{0}'; while [ -e '{0}' ]; do sleep 0.05; done",
        ready.display()
    );
    let mut child = spawn_trace(&fs.device, &["sh", "-c", &script]);
    wait_for("the command started", || ready.exists(), &mut child);
    signal(&child, libc::SIGTERM);
    let o = child.wait_with_output().unwrap();
    let r = ended(&o, 130, "is still running and was not killed");
    // Not killed by iolab; ended here, not left behind by the test.
    std::fs::remove_file(&ready).unwrap();
    let err = stderr(&o);
    let pid = err
        .split("(pid ")
        .nth(1)
        .and_then(|s| s.split(')').next())
        .unwrap_or_else(|| panic!("no pid in {err}"));
    while running(pid) {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(r["interrupted"], true, "{r}");
    assert!(
        r["exit_status"].is_null() && r["exit_signal"].is_null(),
        "{r}"
    );
}

#[test]
#[ignore = "needs root: loop devices and tracefs"]
fn without_a_command_ctrl_c_ends_the_trace_with_success() {
    require_root();
    let _hang = iolab_testkit::timeout(300);
    let fs = LoopFs::ext4("64M");
    let instances = iolab_blocktrace::tracefs_root().unwrap().join("instances");
    let mut child = spawn_trace(&fs.device, &[]);
    let prefix = format!("{}{}-", iolab_blocktrace::INSTANCE_PREFIX, child.id());
    let tracing = |dir: &Path| {
        std::fs::read_dir(dir).is_ok_and(|mut es| {
            es.any(|e| e.is_ok_and(|e| e.file_name().to_string_lossy().starts_with(&prefix)))
        })
    };
    wait_for("tracing began", || tracing(&instances), &mut child);
    signal(&child, libc::SIGINT);
    let r = ended(&child.wait_with_output().unwrap(), 0, "");
    assert_eq!(r["command"], Value::Array(vec![]), "{r}");
    assert_eq!(r["interrupted"], true);
    assert!(!tracing(&instances), "the tracefs instance was removed");
}

/// A SIGKILLed iolab cannot remove its block tracer's tracefs instance, and nothing recorded
/// it: found by bench/soak.sh, `instances/iolab-<pid>-<n>` stayed, its ring buffer and block
/// events with it. `iolab recover` removes the instances whose iolab is gone, and only those.
#[test]
#[ignore = "needs root: tracefs"]
fn recover_removes_the_tracefs_instance_of_a_killed_iolab() {
    common::require_root();
    let root = Path::new(iolab_blocktrace::TRACEFS_PATHS[0]).join("instances");
    assert!(
        root.is_dir(),
        "tracefs is not mounted at {}",
        root.display()
    );
    // A pid that has certainly ended: a child of ours, waited for.
    let mut gone = std::process::Command::new("true").spawn().unwrap();
    gone.wait().unwrap();
    let stale = root.join(format!("iolab-{}-0", gone.id()));
    let live = root.join(format!("iolab-{}-0", std::process::id()));
    std::fs::create_dir(&stale).unwrap();
    std::fs::create_dir(&live).unwrap();
    let s = common::Scratch::new();
    let o = s.run(&["recover"]);
    let live_left = live.is_dir();
    let _ = std::fs::remove_dir(&live);
    let _ = std::fs::remove_dir(&stale);
    assert!(o.status.success(), "{}", common::stderr(&o));
    assert!(
        common::stderr(&o).contains(&format!("removed tracefs instance {}", stale.display())),
        "{}",
        common::stderr(&o)
    );
    assert!(live_left, "the instance of a live process was removed");
}
