//! Checks on real setups: each finding must be raised where the measurement lies and stay
//! silent where it does not. One test function, run case after case, so that no other test's
//! processes share the machine with the noisy-neighbour control case.

mod common;

use std::path::Path;
use std::process::{Child, Command, Stdio};

use common::{require_root, stderr, LoopFs, Scratch, Tmpfs};
use serde_json::Value;

/// Every run's findings' check ids, and every run metric by name (first run).
fn checks(export: &Value) -> Vec<String> {
    let mut ids = Vec::new();
    for c in export["configs"].as_array().unwrap() {
        for r in c["runs"].as_array().unwrap() {
            for f in r["findings"].as_array().unwrap() {
                ids.push(f["check"].as_str().unwrap().to_owned());
            }
        }
    }
    ids
}

fn metric(export: &Value, name: &str) -> Option<f64> {
    common::run_metric(&export["configs"][0]["runs"][0], name)
}

fn micro(db: &Scratch, dir: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["micro", "--dir", dir.to_str().unwrap(), "--bs", "4k"];
    args.extend_from_slice(extra);
    let o = db.run(&args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    db.latest()
}

struct Hogs(Vec<Child>);

impl Hogs {
    fn start(n: usize) -> Hogs {
        Hogs(
            (0..n)
                .map(|_| {
                    Command::new("sh")
                        .args(["-c", "while :; do :; done"])
                        .stdout(Stdio::null())
                        .spawn()
                        .unwrap()
                })
                .collect(),
        )
    }
}

impl Drop for Hogs {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// A file's pages held in the page cache while the guard lives: mapped, which keeps another
/// process's drop_caches from dropping them, and locked, which keeps reclaim from evicting them.
struct Resident {
    addr: *mut libc::c_void,
    len: usize,
}

impl Resident {
    fn hold(path: &Path) -> Resident {
        use std::os::fd::AsRawFd;
        let f = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let len = f.metadata().unwrap().len() as usize;
        // SAFETY: a new read-only shared mapping of an open file, its whole length; nothing
        // else refers to it, and drop unmaps it.
        let addr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_SHARED,
                f.as_raw_fd(),
                0,
            )
        };
        let err = std::io::Error::last_os_error;
        assert_ne!(addr, libc::MAP_FAILED, "mmap {}: {}", path.display(), err());
        // SAFETY: the mapping just made, whole.
        let locked = unsafe { libc::mlock(addr, len) };
        assert_eq!(locked, 0, "mlock {}: {}", path.display(), err());
        Resident { addr, len }
    }
}

impl Drop for Resident {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `hold`, unmapped once.
        unsafe { libc::munmap(self.addr, self.len) };
    }
}

/// Checks that `noisy-neighbour` is raised on the (first) run of `export` exactly when the CPU
/// the run itself sampled says so, and that the finding's evidence is those samples: the
/// machine's user time (`cpu.usr_pct`) less the run's own (`proc.usr_s` of `cpu.total_s`),
/// judged only over a window of at least `MIN_CPU_WINDOW_S`. Returns the share of the
/// machine other processes used, as the run measured it (`None`: too short a window to judge).
///
/// This is what can be asserted on any machine: whether others are busy is not the test's to
/// choose, but the verdict must follow from the run's own measurement of them, with the run's
/// own work subtracted, not counted as a neighbour's.
fn assert_neighbour_verdict_follows_the_runs_samples(export: &Value) -> Option<f64> {
    use iolab_check::checks::noisy_neighbour::OTHERS_CPU_PCT;
    use iolab_experiment::run::monitor::MIN_CPU_WINDOW_S;
    let stored = |name: &str| metric(export, name).unwrap_or_else(|| panic!("no {name} stored"));
    let busy = stored("cpu.usr_pct");
    let own = stored("proc.usr_s") / stored("cpu.total_s") * 100.0;
    let others = (busy - own).max(0.0);
    let decided = stored("sampler.window_s") >= MIN_CPU_WINDOW_S;
    let finding = export["configs"][0]["runs"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["check"] == "noisy-neighbour");
    assert_eq!(
        finding.is_some(),
        decided && others >= OTHERS_CPU_PCT,
        "the run measured others at {others:.1}% of the CPU (all {busy:.1}% busy in user \
         time, the run {own:.1}%; window judged: {decided}); finding: {finding:?}"
    );
    if let Some(f) = finding {
        let e = &f["evidence"];
        for (key, want) in [
            ("cpu_busy_pct", busy),
            ("engine_cpu_pct", own),
            ("others_cpu_pct", others),
        ] {
            let got = e[key].as_f64().unwrap_or(f64::NAN);
            assert!(
                (got - want).abs() <= 1e-9 * want.abs().max(1.0),
                "evidence {key} = {got}, the run's samples say {want}: {e}"
            );
        }
    }
    decided.then_some(others)
}

fn experiment(db: &Scratch, text: &str) -> Value {
    let f = db.path().join("exp.toml");
    std::fs::write(&f, text).unwrap();
    let o = db.run(&["run", f.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    db.latest()
}

#[test]
#[ignore = "needs root: loop devices, mounts and drop_caches"]
fn findings_fire_exactly_where_the_measurement_lies() {
    require_root();
    let db = Scratch::new();
    let data = tempfile::Builder::new()
        .prefix("iolab-findings-data")
        .tempdir_in("/var/tmp")
        .unwrap();

    // 1. Random reads of a file that was just written and fits in RAM, caches not dropped:
    //    the page cache served them. On a busy machine that premise needs holding: the file is
    //    on a device of the test's own (others' reads of a shared disk would count as the
    //    run's device reads), and its pages are held in the cache for the run (another process
    //    dropping caches, or memory pressure, would send the reads to the device, and then the
    //    finding is rightly absent).
    let own_disk = LoopFs::ext4("256M");
    let _ = micro(
        &db,
        own_disk.path(),
        &["--access", "write", "--size", "64m"],
    );
    let cached = Resident::hold(&own_disk.path().join("iolab-micro.0"));
    let e = micro(
        &db,
        own_disk.path(),
        &["--access", "randread", "--size", "64m", "--remove-files"],
    );
    drop(cached);
    drop(own_disk);
    let c = checks(&e);
    assert!(c.contains(&"cache-served".to_string()), "{c:?}");
    // Not `noisy-neighbour` unless the run saw other processes busy: on a machine others use,
    // it rightly is (see case 5).
    assert_neighbour_verdict_follows_the_runs_samples(&e);

    // 2. The same reads after dropping caches, with O_DIRECT, on a loop image with direct
    //    I/O: the device served them, nothing to say about caching.
    let e = experiment(
        &db,
        r#"
[sut]
target = { kind = "loop_image", size = "128M" }
fs = { kind = "ext4" }
[workload]
micro = { access = "randread", sync = "direct", size = "32m" }
[repetitions]
min = 2
max = 2
"#,
    );
    let c = checks(&e);
    for id in ["cache-served", "direct-not-direct", "loop-cached"] {
        assert!(!c.contains(&id.to_string()), "{id} in {c:?}");
    }
    let read = metric(&e, "dev.read_bytes").expect("device read bytes");
    assert!(read >= 32.0 * 1048576.0, "the device read {read} B");

    // 3. O_DIRECT on a loop device attached without direct I/O: the host's page cache sits
    //    under the "device".
    let e = experiment(
        &db,
        r#"
[sut]
target = { kind = "loop_image", size = "128M", direct_io = false }
fs = { kind = "ext4" }
[workload]
micro = { access = "randread", sync = "direct", size = "32m" }
[repetitions]
min = 2
max = 2
"#,
    );
    let c = checks(&e);
    assert!(c.contains(&"loop-cached".to_string()), "{c:?}");
    assert!(c.contains(&"direct-not-direct".to_string()), "{c:?}");

    // 4. O_DIRECT on tmpfs (where the kernel accepts it): no device at all.
    let tmp = Tmpfs::new("size=128m");
    let o = db.run(&[
        "micro",
        "--dir",
        tmp.path().to_str().unwrap(),
        "--access",
        "randread",
        "--sync",
        "direct",
        "--size",
        "16m",
    ]);
    if o.status.success() {
        let c = checks(&db.latest());
        assert!(c.contains(&"direct-not-direct".to_string()), "{c:?}");
    } else {
        assert!(stderr(&o).contains("O_DIRECT"), "{}", stderr(&o));
        eprintln!("NOTE: this kernel refuses O_DIRECT on tmpfs; iolab said so up front");
    }
    drop(tmp);

    // 5. A CPU hog on every core beside the run: noisy-neighbour; the same run alone: not.
    //    "Alone" is not the test's to choose: on a machine other work uses (a CI machine
    //    building other things), a run with no hog of ours does have neighbours, and the
    //    finding is right. What holds on any machine is that the verdict follows from what the
    //    run itself sampled: the machine's user time less the run's own. So that is asserted,
    //    which on a quiet machine is the plain "alone: silent" (others measured < the limit),
    //    and on a busy one still fails if the run's own work were counted as a neighbour's
    //    (its evidence must subtract the run's own CPU). Retrying until the machine is quiet
    //    would make the test's outcome depend on the other work; when it is not quiet, the
    //    silent direction is left to the check's unit tests, and the note below says so.
    let args = [
        "--access",
        "randread",
        "--size",
        "256m",
        "--loops",
        "24",
        "--monitor-interval",
        "200ms",
    ];
    let _ = micro(&db, data.path(), &["--access", "write", "--size", "256m"]);
    let alone = micro(&db, data.path(), &args);
    // Its own work was measured, so there is something to subtract.
    let own_cpu = metric(&alone, "proc.usr_s").expect("the run's own CPU time");
    assert!(
        own_cpu > 0.0,
        "the run measured no CPU of its own: {own_cpu} s"
    );
    let others = assert_neighbour_verdict_follows_the_runs_samples(&alone);
    let limit = iolab_check::checks::noisy_neighbour::OTHERS_CPU_PCT;
    match others {
        Some(p) if p < limit => {}
        Some(p) => eprintln!(
            "NOTE: the run without our CPU hogs was not alone: others used {p:.0}% of the CPU \
             (the limit is {limit}%); its verdict was checked against its own samples only"
        ),
        None => eprintln!("NOTE: the run without our CPU hogs was too short for a CPU verdict"),
    }
    let cpus = std::thread::available_parallelism().map_or(2, |n| n.get());
    let hogs = Hogs::start(cpus);
    let crowded = checks(&micro(&db, data.path(), &args));
    drop(hogs);
    assert!(
        crowded.contains(&"noisy-neighbour".to_string()),
        "{crowded:?}"
    );

    // 6. The block tracer sees the flushes of 4 KiB random writes + fdatasync.
    let fs = LoopFs::ext4("128M");
    let e = micro(
        &db,
        fs.path(),
        &[
            "--access",
            "randwrite",
            "--sync",
            "fdatasync",
            "--size",
            "1m",
            "--trace-blocks",
        ],
    );
    let flushes = metric(&e, "trace.flushes").unwrap() + metric(&e, "trace.fua").unwrap();
    assert!(
        flushes >= 256.0,
        "{flushes} flush/FUA requests for 256 fdatasyncs"
    );
    assert!(metric(&e, "trace.write_bytes").unwrap() >= 1048576.0);
    let c = checks(&e);
    assert!(!c.contains(&"sync-not-durable".to_string()), "{c:?}");
}
