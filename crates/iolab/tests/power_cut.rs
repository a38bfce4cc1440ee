//! Power cuts under the results database and the journal: both live on the fault
//! filesystem in power-cut mode (crates/iolab-faultfs), which keeps what iolab wrote but did
//! not fsync in memory. At a cut point (the k-th fsync under it) iolab is killed with
//! SIGKILL, as a power cut stops it too, and the unsynced data is dropped. Mounted again, the
//! database holds every run iolab reported finished, whole, and `iolab run --resume`
//! completes the experiment.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{require_root, Scratch};
use iolab_faultfs::{Action, Fault, FaultFs, Op, Options};
use serde_json::Value;

const CONFIGS: usize = 4;
const REPS: usize = 2;

/// The machine-wide tunable the experiment sets (to the value it has: nothing changes, but
/// the session keeps a journal, which the cut must not break either).
const TUNABLE: &str = "vm.stat_interval";

struct Disk {
    backing: PathBuf,
    mnt: PathBuf,
}

impl Disk {
    fn new(s: &Scratch) -> Disk {
        let d = Disk {
            backing: s.path().join("backing"),
            mnt: s.path().join("disk"),
        };
        std::fs::create_dir(&d.backing).unwrap();
        std::fs::create_dir(&d.mnt).unwrap();
        d
    }

    fn mount(&self, power_cut: bool) -> FaultFs {
        let opts = Options {
            power_cut,
            ..Options::default()
        };
        FaultFs::mount_with(&self.backing, &self.mnt, opts).unwrap()
    }

    fn db(&self) -> PathBuf {
        self.mnt.join("results.db")
    }
}

fn experiment(s: &Scratch) -> PathBuf {
    let target = s.path().join("target");
    std::fs::create_dir_all(&target).unwrap();
    let value = std::fs::read_to_string("/proc/sys/vm/stat_interval").unwrap();
    s.write(
        "cut.toml",
        &format!(
            r#"
name = "power cut"
[factors]
bs = ["4k", "8k", "16k", "32k"]
[sut]
target = {{ kind = "directory", path = "{}" }}
tunables = {{ "{TUNABLE}" = {} }}
[workload]
micro = {{ access = "write", bs = "${{bs}}", size = "64k", engine = "null" }}
[repetitions]
min = {REPS}
max = {REPS}
[procedure]
drop_caches = false
"#,
            target.display(),
            value.trim()
        ),
    )
}

/// iolab itself (no `timeout` wrapper: SIGKILL must reach it), with the database and the
/// state directory (journal) on the disk.
fn iolab(disk: &Disk, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_iolab"));
    c.args(args)
        .env("IOLAB_DB", disk.db())
        .env("IOLAB_STATE_DIR", disk.mnt.join("state"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    c
}

/// The runs iolab reported finished: `config 2/4 bs=8k · run 1 of ≤2: ops_per_s …`.
fn reported(stderr: &str) -> BTreeSet<(String, u64)> {
    stderr
        .lines()
        .filter_map(|l| {
            let rest = l.strip_prefix("config ")?;
            let (_, rest) = rest.split_once(' ')?;
            let (label, rest) = rest.split_once(" · run ")?;
            let (rep, rest) = rest.split_once(" of ")?;
            rest.contains(": ops_per_s")
                .then(|| (label.to_string(), rep.parse().unwrap()))
        })
        .collect()
}

/// The stored ok runs, `(label, repetition from 1)`, every one whole (its metrics there);
/// `None` when the cut came before the experiment was stored.
fn stored(disk: &Disk) -> Option<BTreeSet<(String, u64)>> {
    let o = iolab(disk, &["export", "--format", "json"])
        .stdout(Stdio::piped())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    if err.contains("holds no experiment yet") || err.contains("no results database") {
        return None;
    }
    assert!(o.status.success(), "{err}");
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let mut out = BTreeSet::new();
    for c in v["configs"].as_array().unwrap() {
        for r in c["runs"].as_array().unwrap() {
            if r["status"] != "ok" {
                continue;
            }
            assert!(
                common::run_metric(r, "ops_per_s").is_some(),
                "a stored run without its metrics: {r}"
            );
            out.insert((
                c["label"].as_str().unwrap().to_string(),
                r["repetition"].as_u64().unwrap() + 1,
            ));
        }
    }
    Some(out)
}

/// Whether the stored experiment is done.
fn done(disk: &Disk) -> bool {
    let o = iolab(disk, &["export", "--format", "json"])
        .stdout(Stdio::piped())
        .output()
        .unwrap();
    serde_json::from_slice::<Value>(&o.stdout).is_ok_and(|v| v["experiment"]["status"] == "done")
}

fn integrity(db: &Path) {
    let conn = rusqlite::Connection::open(db).unwrap();
    let ok: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(ok, "ok");
}

/// One cut after the `k`-th fsync under the disk; returns whether iolab got there.
fn cut_at(k: u64) -> bool {
    let s = Scratch::new();
    let disk = Disk::new(&s);
    let f = experiment(&s);
    let file = f.to_str().unwrap();
    let mut fs = disk.mount(true);
    fs.set_fault(Fault::new(Op::Fsync, "", Action::Stall).after(k));
    let mut child = iolab(&disk, &["run", file]).spawn().unwrap();
    let mut pipe = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut pipe, &mut text);
        text
    });
    // The (k+1)-th fsync stalls: the power goes there. A hang guard, not a timing.
    let mut reached = false;
    for _ in 0..6000 {
        if fs.wait_stalled(Duration::from_millis(100)) {
            reached = true;
            break;
        }
        if child.try_wait().unwrap().is_some() {
            break;
        }
    }
    // SAFETY: a signal to the child this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    // Its stalled fsync waits in the kernel for the device: the cut fails it.
    fs.cut();
    child.wait().unwrap();
    let said = reader.join().unwrap();
    drop(fs);
    if !reached {
        return false;
    }

    let fs = disk.mount(false);
    integrity(&disk.db());
    let before = stored(&disk);
    let told = reported(&said);
    assert!(
        told.is_subset(before.as_ref().unwrap_or(&BTreeSet::new())),
        "cut after fsync {k}: reported finished {told:?}, stored {before:?}\n{said}"
    );
    // Cut before the experiment was stored: there is nothing to resume, and it starts anew;
    // cut after it was marked done (the last fsyncs): there is nothing left to do.
    if done(&disk) {
        assert_eq!(before.unwrap().len(), CONFIGS * REPS);
        drop(fs);
        return true;
    }
    let args: &[&str] = match before {
        Some(_) => &["run", file, "--resume"],
        None => &["run", file],
    };
    let o = iolab(&disk, args).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "cut after fsync {k}: --resume: {err}");
    let after = stored(&disk).unwrap();
    assert_eq!(
        after.len(),
        CONFIGS * REPS,
        "cut after fsync {k}: {after:?}\n{err}"
    );
    assert!(before.unwrap_or_default().is_subset(&after));
    integrity(&disk.db());
    drop(fs);
    true
}

#[test]
#[ignore = "needs root: FUSE mounts, tunables"]
fn every_finished_run_survives_a_power_cut_and_resume_completes() {
    require_root();
    // The experiment's fsyncs, from a run without a cut.
    let fsyncs = {
        let s = Scratch::new();
        let disk = Disk::new(&s);
        let f = experiment(&s);
        let fs = disk.mount(true);
        let o = iolab(&disk, &["run", f.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(stored(&disk).unwrap().len(), CONFIGS * REPS);
        fs.calls(Op::Fsync)
    };
    assert!(fsyncs >= 20, "only {fsyncs} fsyncs: too few cut points");
    // 20 cut points spread over the whole experiment, the first fsync to the last.
    let points: Vec<u64> = (0..20).map(|i| i * (fsyncs - 1) / 19).collect();
    let mut cut = 0;
    for k in points {
        if cut_at(k) {
            cut += 1;
        }
    }
    assert!(
        cut >= 18,
        "only {cut} of 20 cut points were reached ({fsyncs} fsyncs)"
    );
}
