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
    export["configs"][0]["runs"][0]["metrics"]
        .as_array()?
        .iter()
        .find(|m| m["name"] == name)?["value"]
        .as_f64()
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

/// How busy the whole machine is (all CPUs, % of their time not idle or in iowait), over one
/// second of /proc/stat.
fn machine_busy_pct() -> f64 {
    fn sample() -> (u64, u64) {
        let stat = std::fs::read_to_string("/proc/stat").unwrap();
        let v: Vec<u64> = stat
            .lines()
            .next()
            .unwrap()
            .split_whitespace()
            .skip(1)
            .map(|x| x.parse().unwrap())
            .collect();
        let total: u64 = v.iter().take(8).sum();
        (total - v[3] - v[4], total)
    }
    let (b0, t0) = sample();
    std::thread::sleep(std::time::Duration::from_secs(1));
    let (b1, t1) = sample();
    (b1 - b0) as f64 * 100.0 / (t1 - t0).max(1) as f64
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
    //    the page cache served them.
    let _ = micro(&db, data.path(), &["--access", "write", "--size", "64m"]);
    let e = micro(
        &db,
        data.path(),
        &["--access", "randread", "--size", "64m", "--remove-files"],
    );
    let c = checks(&e);
    assert!(c.contains(&"cache-served".to_string()), "{c:?}");
    assert!(!c.contains(&"noisy-neighbour".to_string()), "{c:?}");

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
    let busy_before = machine_busy_pct();
    let alone = checks(&micro(&db, data.path(), &args));
    if alone.contains(&"noisy-neighbour".to_string()) {
        // Right, unless the machine was not quiet: only a run alone on it can show that iolab's
        // own work is not counted as a neighbour's.
        let busy = busy_before.max(machine_busy_pct());
        let limit = iolab_check::checks::noisy_neighbour::OTHERS_CPU_PCT;
        assert!(busy >= limit, "{alone:?} on a machine {busy:.0}% busy");
        iolab_testkit::not_run(format!(
            "its \"alone\" half: the machine was {busy:.0}% busy without the run (≥ {limit}%)"
        ));
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
