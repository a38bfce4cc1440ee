//! The device under test fails: iolab runs an experiment on a directory of the fault
//! filesystem (crates/iolab-faultfs, FUSE), whose first configuration's files meet EIO or
//! ENOSPC on read, write or fsync. The failed run is stored with the errno and the file (and
//! the flowop, for WML), the next configuration runs, iolab exits 1, and nothing stays
//! mounted or attached.

mod common;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use common::{require_root, stderr, Scratch};
use iolab_faultfs::{Action, Fault, FaultFs, Op};
use serde_json::Value;

/// A WML workload whose reads and whose writes and fsyncs touch different filesets, so that a
/// fault on one fileset's files names the flowop that met it.
const WML: &str = "\
define fileset name=src,path=$dir,entries=4,dirwidth=4,size=64k,prealloc
define fileset name=dst,path=$dir,entries=4,dirwidth=4,size=64k
define process name=p { thread name=t {
  flowop openfile name=open-src,filesetname=src,fd=1
  flowop read name=read-src,fd=1,iosize=4k
  flowop closefile name=close-src,fd=1
  flowop createfile name=create-dst,filesetname=dst,fd=2
  flowop write name=write-dst,fd=2,iosize=4k
  flowop fsync name=fsync-dst,fd=2
  flowop closefile name=close-dst,fd=2
  flowop deletefile name=delete-dst,filesetname=dst
} }
run 1
";

/// The fault filesystem over a backing directory of the scratch space, with the two
/// configurations' directories.
struct Device {
    fs: FaultFs,
}

impl Device {
    fn new(s: &Scratch) -> Device {
        let backing = s.path().join("backing");
        let mnt = s.path().join("device");
        std::fs::create_dir(&backing).unwrap();
        std::fs::create_dir(&mnt).unwrap();
        let fs = FaultFs::mount(&backing, &mnt).unwrap();
        for d in ["faulty", "healthy"] {
            std::fs::create_dir(mnt.join(d)).unwrap();
        }
        Device { fs }
    }

    fn path(&self) -> PathBuf {
        self.fs.path().to_path_buf()
    }
}

/// An experiment of two configurations, `dir=faulty` then `dir=healthy`, one run each.
fn experiment(s: &Scratch, dev: &Path, workload: &str) -> PathBuf {
    std::fs::write(s.path().join("w.f"), WML).unwrap();
    s.write(
        "faults.toml",
        &format!(
            r#"
name = "device faults"
[factors]
dir = ["faulty", "healthy"]
[sut]
target = {{ kind = "directory", path = "{}/${{dir}}" }}
[workload]
{workload}
[repetitions]
min = 1
max = 1
[procedure]
order = "sequential"
"#,
            dev.display()
        ),
    )
}

/// Runs the experiment with `fault` armed and checks what every device fault must give;
/// returns the failed run's stored error.
fn fails_cleanly(workload: &str, fault: Fault) -> String {
    require_root();
    let s = Scratch::new();
    let dev = Device::new(&s);
    let f = experiment(&s, &dev.path(), workload);
    dev.fs.set_fault(fault.clone());
    let o = s.run(&["run", f.to_str().unwrap()]);
    let err = stderr(&o);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(o.status.code(), Some(1), "exit code; stderr: {err}");
    assert!(
        !dev.fs.hits().is_empty(),
        "the fault {fault:?} was never hit; stderr: {err}"
    );
    assert!(s.mounts().is_empty(), "left mounted: {:?}", s.mounts());
    assert!(s.loops().is_empty(), "left attached: {:?}", s.loops());

    let latest = s.latest();
    let configs = latest["configs"].as_array().unwrap();
    let run_of = |label: &str| -> Value {
        let c = configs
            .iter()
            .find(|c| c["label"].as_str().unwrap().contains(label))
            .unwrap_or_else(|| panic!("no configuration {label}: {latest}"));
        let runs = c["runs"].as_array().unwrap();
        assert_eq!(runs.len(), 1, "{label}: {c}");
        runs[0].clone()
    };
    let failed = run_of("faulty");
    assert_eq!(failed["status"], "failed", "{failed}");
    let ok = run_of("healthy");
    assert_eq!(
        ok["status"], "ok",
        "the next configuration runs: {}",
        ok["error"]
    );
    assert_eq!(
        latest["experiment"]["status"], "failed",
        "{}",
        latest["experiment"]
    );
    let error = failed["error"].as_str().unwrap().to_string();
    assert!(
        err.contains(&error) || err.contains(error.lines().next().unwrap()),
        "stderr tells the stored error: {error}\nstderr: {err}"
    );
    drop(dev);
    assert!(
        common::mounts_under(s.path()).is_empty(),
        "{:?}",
        common::mounts_under(s.path())
    );
    error
}

fn assert_names(error: &str, words: &[&str]) {
    for w in words {
        assert!(
            error.contains(w),
            "`{w}` missing from the stored error: {error}"
        );
    }
}

const MICRO_READ: &str = r#"micro = { access = "read", size = "256k", bs = "4k" }"#;
const MICRO_APPEND: &str = r#"micro = { access = "append", size = "256k", bs = "4k" }"#;
const WORKLOAD_WML: &str = r#"wml = "w.f""#;

#[test]
#[ignore = "needs root: FUSE mounts, drop_caches"]
fn micro_eio_on_read() {
    let e = fails_cleanly(
        MICRO_READ,
        Fault::new(Op::Read, "faulty/", Action::Fail(libc::EIO)),
    );
    assert_names(
        &e,
        &[
            "(os error 5, EIO)",
            "read ",
            "faulty/iolab-micro.0 at offset ",
        ],
    );
}

#[test]
#[ignore = "needs root: FUSE mounts, drop_caches"]
fn micro_eio_on_write() {
    let e = fails_cleanly(
        MICRO_APPEND,
        Fault::new(Op::Write, "faulty/", Action::Fail(libc::EIO)),
    );
    assert_names(
        &e,
        &[
            "(os error 5, EIO)",
            "write ",
            "faulty/iolab-micro.0 at offset ",
        ],
    );
}

#[test]
#[ignore = "needs root: FUSE mounts, drop_caches"]
fn micro_enospc_on_write() {
    let e = fails_cleanly(
        MICRO_APPEND,
        Fault::new(Op::Write, "faulty/", Action::Fail(libc::ENOSPC)),
    );
    assert_names(
        &e,
        &[
            "(os error 28, ENOSPC)",
            "write ",
            "faulty/iolab-micro.0 at offset ",
        ],
    );
}

#[test]
#[ignore = "needs root: FUSE mounts, drop_caches"]
fn micro_eio_on_fsync() {
    let e = fails_cleanly(
        MICRO_APPEND,
        Fault::new(Op::Fsync, "faulty/", Action::Fail(libc::EIO)),
    );
    assert_names(&e, &["(os error 5, EIO)", "fsync ", "faulty/iolab-micro.0"]);
}

#[test]
#[ignore = "needs root: FUSE mounts, drop_caches"]
fn wml_eio_on_read() {
    let e = fails_cleanly(
        WORKLOAD_WML,
        Fault::new(Op::Read, "faulty/src/", Action::Fail(libc::EIO)),
    );
    assert_names(
        &e,
        &[
            "(os error 5, EIO)",
            "flowop `read-src`: read ",
            "faulty/src/",
        ],
    );
}

#[test]
#[ignore = "needs root: FUSE mounts, drop_caches"]
fn wml_eio_on_write() {
    let e = fails_cleanly(
        WORKLOAD_WML,
        Fault::new(Op::Write, "faulty/dst/", Action::Fail(libc::EIO)),
    );
    assert_names(
        &e,
        &[
            "(os error 5, EIO)",
            "flowop `write-dst`: write ",
            "faulty/dst/",
        ],
    );
}

#[test]
#[ignore = "needs root: FUSE mounts, drop_caches"]
fn wml_enospc_on_write() {
    let e = fails_cleanly(
        WORKLOAD_WML,
        Fault::new(Op::Write, "faulty/dst/", Action::Fail(libc::ENOSPC)),
    );
    assert_names(
        &e,
        &[
            "(os error 28, ENOSPC)",
            "flowop `write-dst`: write ",
            "faulty/dst/",
        ],
    );
}

#[test]
#[ignore = "needs root: FUSE mounts, drop_caches"]
fn wml_eio_on_fsync() {
    let e = fails_cleanly(
        WORKLOAD_WML,
        Fault::new(Op::Fsync, "faulty/dst/", Action::Fail(libc::EIO)),
    );
    assert_names(
        &e,
        &[
            "(os error 5, EIO)",
            "flowop `fsync-dst`: fsync ",
            "faulty/dst/",
        ],
    );
}

/// Runs the experiment with every write of the faulty configuration stalled and a short
/// stall bound; after the stall is seen, `interrupt` sends SIGINT. Returns iolab's exit code,
/// its stderr, and the stored experiment.
fn stalled(interrupt: bool) -> (Option<i32>, String, Value) {
    require_root();
    let s = Scratch::new();
    let dev = Device::new(&s);
    let f = experiment(&s, &dev.path(), MICRO_APPEND);
    dev.fs
        .set_fault(Fault::new(Op::Write, "faulty/", Action::Stall));
    let mut child = s
        .cmd()
        .args(["run", f.to_str().unwrap(), "--stall-timeout", "2s"])
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    assert!(
        dev.fs.wait_stalled(Duration::from_secs(600)),
        "the run's write never reached the device"
    );
    if interrupt {
        // SAFETY: a signal to the child this test started.
        unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    }
    // The stalled write stays stalled: only iolab's watchdog can end the run. Once iolab has
    // said so (stored the run and restored the system), its stuck thread still waits in the
    // kernel for the device, as it would for a dead disk: the test releases the device, and
    // the process ends. A reader thread, so that a watchdog that never fires fails the test.
    let mut pipe = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let mut buf = [0u8; 4096];
        loop {
            match pipe.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    text.push_str(&String::from_utf8_lossy(&buf[..n]));
                    if text.contains("no I/O completed") {
                        let _ = tx.send(());
                    }
                }
            }
        }
        text
    });
    let said = rx.recv_timeout(Duration::from_secs(common::HUNG));
    dev.fs.clear_faults();
    let status = child.wait().unwrap();
    let err = reader.join().unwrap();
    assert!(said.is_ok(), "iolab never reported the stall: {err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(s.mounts().is_empty(), "left mounted: {:?}", s.mounts());
    let latest = s.latest();
    drop(dev);
    (status.code(), err, latest)
}

#[test]
#[ignore = "needs root: FUSE mounts, drop_caches"]
fn a_stalled_device_fails_the_run_within_the_bound() {
    let (code, err, latest) = stalled(false);
    assert_eq!(code, Some(1), "{err}");
    for w in [
        "no I/O completed for 2 s",
        "write on ",
        "faulty/iolab-micro.0",
    ] {
        assert!(err.contains(w), "`{w}` missing: {err}");
    }
    assert_eq!(latest["experiment"]["status"], "failed", "{latest}");
    let faulty = latest["configs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["label"].as_str().unwrap().contains("faulty"))
        .unwrap();
    let run = &faulty["runs"][0];
    assert_eq!(run["status"], "failed", "{faulty}");
    let error = run["error"].as_str().unwrap();
    assert!(
        error.contains("no I/O completed for 2 s") && error.contains("faulty/iolab-micro.0"),
        "{error}"
    );
}

#[test]
#[ignore = "needs root: FUSE mounts, drop_caches"]
fn ctrl_c_ends_a_stalled_run() {
    let (code, err, latest) = stalled(true);
    assert_eq!(code, Some(130), "{err}");
    assert!(err.contains("no I/O completed for 2 s"), "{err}");
    assert_eq!(latest["experiment"]["status"], "interrupted", "{latest}");
    let runs: Vec<&Value> = latest["configs"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["runs"].as_array().unwrap())
        .collect();
    assert_eq!(runs.len(), 1, "{latest}");
    assert_eq!(runs[0]["status"], "interrupted", "{latest}");
}
