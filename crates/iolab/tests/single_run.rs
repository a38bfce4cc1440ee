//! `iolab micro` and `iolab run FILE.f` are experiments with one configuration and one run:
//! they store exactly what the equivalent experiment file stores, and their `--json` carries
//! what the runner found (findings, the system summary). On an existing directory: no root.

mod common;

use std::path::Path;

use common::{stderr, Scratch};
use serde_json::{json, Value};

/// Keys whose values differ between two runs of the same thing: when, which row, how much
/// free space and uptime the machine had.
const VOLATILE: &[&str] = &[
    "uptime_secs",
    "available_bytes",
    "free_bytes",
    "free_inodes",
];

/// Checks whose verdict turns on timing that differs between any two runs of the same thing
/// (a CPU share near its threshold on a shared machine, steadiness, others' memory
/// pressure, a stall past the planned time): left out of the
/// comparison of findings. The others must agree.
const TIMING_CHECKS: &[&str] = &[
    "engine-cpu-bound",
    "noisy-neighbour",
    "not-steady",
    "memory-pressure",
    "overran",
];

/// Findings as (check, severity), without [`TIMING_CHECKS`].
fn findings(list: &Value) -> Value {
    Value::Array(
        list.as_array()
            .expect("findings")
            .iter()
            .filter(|f| !TIMING_CHECKS.iter().any(|c| f["check"] == *c))
            .map(|f| json!({ "check": f["check"], "severity": f["severity"] }))
            .collect(),
    )
}

/// Settings of the machine other processes may change between two runs (tests on the same
/// machine set tunables): compared by name only.
const NAMES_ONLY: &[&str] = &["sysctls"];

fn strip(v: &Value) -> Value {
    match v {
        Value::Object(o) => Value::Object(
            o.iter()
                .filter(|(k, _)| !VOLATILE.contains(&k.as_str()))
                .map(|(k, v)| match v {
                    Value::Object(inner) if NAMES_ONLY.contains(&k.as_str()) => {
                        (k.clone(), json!(inner.keys().collect::<Vec<_>>()))
                    }
                    _ => (k.clone(), strip(v)),
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(strip).collect()),
        other => other.clone(),
    }
}

/// What an exported one-run experiment stored, field by field, with ids, uuids, times and
/// measured values aside (names, units, flags and the environment kept; the flowops'
/// operation counts too when `counts`: a micro test's are fixed, a timed run's are not).
fn stored(export: &Value, counts: bool) -> Value {
    let configs = export["configs"].as_array().expect("configs");
    assert_eq!(configs.len(), 1, "one configuration");
    let c = &configs[0];
    let runs = c["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 1, "one run");
    let r = &runs[0];
    let pick = |list: &Value, keys: &[&str]| -> Value {
        Value::Array(
            list.as_array()
                .expect("a list")
                .iter()
                .map(|x| {
                    Value::Object(
                        keys.iter()
                            .map(|k| (k.to_string(), strip(&x[*k])))
                            .collect(),
                    )
                })
                .collect(),
        )
    };
    let flowops: Vec<Value> = r["flowops"]
        .as_array()
        .expect("flowops")
        .iter()
        .map(|f| {
            let mut row = json!({
                "name": f["name"], "kind": f["kind"], "errors": f["errors"],
                "in_io_summary": f["extra"]["in_io_summary"], "read": f["extra"]["read"],
                "write": f["extra"]["write"],
            });
            if counts {
                row["ops"] = f["ops"].clone();
                row["bytes"] = f["bytes"].clone();
                row["count"] = f["latency"]["count"].clone();
                row["extra"] = f["extra"].clone();
            }
            row
        })
        .collect();
    json!({
        "metric_definitions": export["metrics"],
        "status": export["experiment"]["status"],
        "host": strip(&export["experiment"]["host"]),
        "config": {
            "label": c["label"], "factors": c["factors"], "outcome": c["outcome"],
            "findings": findings(&c["findings"]),
        },
        "run": {
            "repetition": r["repetition"], "seed": r["seed"], "status": r["status"],
            "error": r["error"], "environment": strip(&r["environment"]),
            // The machine's CPU shares come from /proc/stat's 10 ms ticks: a run of a few
            // milliseconds may see none, and then has no `cpu.*` totals or series. Which
            // exist then depends on timing, not on how the run was started.
            "metrics": pick(&without_cpu_ticks(&r["metrics"]), &["name", "unit"]),
            "flowops": flowops,
            "series": pick(&r["series"], &["name", "width_ns"]),
            "monitor": pick(&without_cpu_ticks(&r["monitor"]), &["metric", "unit"]),
            "findings": findings(&r["findings"]),
        },
    })
}

fn without_cpu_ticks(metrics: &Value) -> Value {
    Value::Array(
        metrics
            .as_array()
            .expect("a list")
            .iter()
            .filter(|m| {
                let name = m["name"].as_str().or(m["metric"].as_str());
                !name.unwrap_or_default().starts_with("cpu.")
            })
            .cloned()
            .collect(),
    )
}

/// The first difference between two values, as a path.
fn first_difference(a: &Value, b: &Value, path: &str) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for k in x.keys().chain(y.keys()) {
                let p = format!("{path}/{k}");
                match (x.get(k), y.get(k)) {
                    (Some(p1), Some(p2)) => {
                        if let Some(d) = first_difference(p1, p2, &p) {
                            return Some(d);
                        }
                    }
                    _ => return Some(format!("{p}: only on one side")),
                }
            }
            None
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (p, q))| first_difference(p, q, &format!("{path}/{i}"))),
        _ if a == b => None,
        _ => Some(format!("{path}: {a} ≠ {b}")),
    }
}

fn assert_same_rows(single: &Value, experiment: &Value, counts: bool) {
    let (a, b) = (stored(single, counts), stored(experiment, counts));
    if let Some(d) = first_difference(&a, &b, "") {
        panic!(
            "the single run and the experiment stored different rows at {d}\n\
             single run: {a:#}\nexperiment: {b:#}"
        );
    }
}

fn ok(o: &std::process::Output) {
    assert!(o.status.success(), "{}", stderr(o));
}

/// Data on a disk filesystem (so that the device counters see what was not cached).
fn data_dir(s: &Scratch) -> std::path::PathBuf {
    let d = s.path().join("data");
    std::fs::create_dir(&d).unwrap();
    d
}

/// Data in memory (/dev/shm, a tmpfs every user may write): no block device under it, so
/// the checks that judge a device's counters — which other processes on a shared machine
/// move too — stay silent, and two runs of the same thing find the same.
fn memory_dir() -> tempfile::TempDir {
    let shm = Path::new("/dev/shm");
    let base = if shm.is_dir() {
        shm.to_path_buf()
    } else {
        std::env::temp_dir()
    };
    tempfile::Builder::new()
        .prefix("iolab-single-run")
        .tempdir_in(base)
        .unwrap()
}

/// Runs the experiment file equivalent to a single run in `dir` with the `[workload]` lines
/// `workload`, and exports it.
fn one_run_experiment(s: &Scratch, name: &str, dir: &str, workload: &str) -> Value {
    let f = s.write(
        name,
        &format!(
            "seed = 1\n[sut]\ntarget = {{ kind = \"directory\", path = {dir:?} }}\n\
             [workload]\n{workload}\n[repetitions]\nmin = 1\nmax = 1\n\
             [procedure]\ndrop_caches = false\n"
        ),
    );
    let o = s.run(&["run", f.to_str().unwrap()]);
    ok(&o);
    s.latest()
}

#[test]
fn micro_stores_what_its_one_run_experiment_stores() {
    let s = Scratch::new();
    let data = memory_dir();
    let d = data.path().to_str().unwrap();
    // The files both runs read, written first and kept.
    ok(&s.run(&[
        "micro",
        "--dir",
        d,
        "--size",
        "4m",
        "--threads",
        "2",
        "--no-db",
    ]));
    let args = [
        "--access",
        "randread",
        "--size",
        "4m",
        "--threads",
        "2",
        "--loops",
        "4",
    ];
    let mut cmd = vec!["micro", "--dir", d];
    cmd.extend(args);
    ok(&s.run(&cmd));
    let single = s.latest();
    let exp = one_run_experiment(
        &s,
        "micro.toml",
        d,
        r#"micro = { access = "randread", size = "4m", threads = 2, loops = 4 }"#,
    );
    assert_same_rows(&single, &exp, true);
    let findings = &single["configs"][0]["runs"][0]["findings"];
    assert!(
        findings
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["check"] == "short-run"),
        "the checks ran: {findings}"
    );
    assert_eq!(
        single["configs"][0]["findings"],
        json!([]),
        "no did-not-converge"
    );
    assert_eq!(single["experiment"]["status"], "done");
}

/// `iolab sqlite` and `sqlite = { … }`: the same rows, the same system-call counts (SQLite
/// makes the same calls for the same transactions), the SQLite library in both specs.
#[test]
fn sqlite_stores_what_its_one_run_experiment_stores() {
    let s = Scratch::new();
    let data = memory_dir();
    let d = data.path().to_str().unwrap();
    ok(&s.run(&[
        "sqlite",
        "--dir",
        d,
        "--journal",
        "wal",
        "--transactions",
        "40",
        "--tables",
        "2",
        // Over a second: the monitors sample at the start, after a second and at the end
        // whichever way the run was started (a run of a few milliseconds may end before the
        // sampler's first reading, and store fewer monitor series).
        "--sleep",
        "30ms",
    ]));
    let single = s.latest();
    let exp = one_run_experiment(
        &s,
        "sqlite.toml",
        d,
        r#"sqlite = { journal = "wal", transactions = 40, tables = 2, sleep = "30ms" }"#,
    );
    assert_same_rows(&single, &exp, true);
    for v in [&single, &exp] {
        let spec = &v["experiment"]["spec"]["configs"][0]["workload"];
        assert!(spec["sqlite_library"]["version"].is_string(), "{spec}");
        assert!(
            spec["sqlite_library"]["compile_options"].is_array(),
            "{spec}"
        );
        let run = &v["configs"][0]["runs"][0];
        let fsyncs = run["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == "fsyncs_per_tx")
            .expect("fsyncs_per_tx");
        assert!(fsyncs["value"].as_f64().unwrap() >= 1.0, "{fsyncs}");
    }
    assert!(
        common::entries(data.path()).is_empty(),
        "the databases are removed"
    );
}

#[test]
fn run_of_a_wml_file_stores_what_its_one_run_experiment_stores() {
    let s = Scratch::new();
    let data = memory_dir();
    let d = data.path().to_str().unwrap();
    let f = s.write(
        "small.f",
        "define fileset name=fs,path=$dir,entries=8,dirwidth=8,size=64k,prealloc\n\
         define process name=p { thread name=t {\n\
           flowop openfile name=open,filesetname=fs,fd=1\n\
           flowop read name=rd,fd=1,iosize=4k,random\n\
           flowop closefile name=close,fd=1 } }\n\
         run 10\n",
    );
    let fp = f.to_str().unwrap();
    ok(&s.run(&["run", fp, "--dir", d, "--time", "300ms", "-q"]));
    let single = s.latest();
    let exp = one_run_experiment(&s, "wml.toml", d, "wml = \"small.f\"\ntime = \"300ms\"");
    assert_same_rows(&single, &exp, false);
    let names: Vec<&str> = single["configs"][0]["runs"][0]["flowops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["open", "rd", "close"]);
}

/// The engine of a WML run: `--engine null` and `workload.engine = "null"` store the same
/// (iolab's own cost, no I/O, so no findings about any).
#[test]
fn run_on_an_engine_stores_what_its_experiment_stores() {
    let s = Scratch::new();
    let data = memory_dir();
    let d = data.path().to_str().unwrap();
    ok(&s.run(&[
        "run",
        "webserver",
        "--dir",
        d,
        "--set",
        "nfiles=20",
        "--time",
        "200ms",
        "--engine",
        "null",
        "-q",
    ]));
    let single = s.latest();
    let exp = one_run_experiment(
        &s,
        "null.toml",
        d,
        "builtin = \"webserver\"\nset = { nfiles = \"20\" }\ntime = \"200ms\"\nengine = \"null\"",
    );
    assert_same_rows(&single, &exp, false);
    assert_eq!(
        single["configs"][0]["runs"][0]["findings"],
        json!([]),
        "no I/O, nothing to judge"
    );
    assert!(common::entries(data.path()).is_empty(), "no files on null");
}

#[test]
fn the_comparison_itself_notices_a_different_run() {
    // Guards against a comparison that accepts anything: another access pattern differs.
    let s = Scratch::new();
    let data = data_dir(&s);
    let d = data.to_str().unwrap();
    ok(&s.run(&["micro", "--dir", d, "--size", "1m"]));
    let a = s.latest();
    ok(&s.run(&["micro", "--dir", d, "--size", "1m", "--access", "read"]));
    let b = s.latest();
    let d = first_difference(&stored(&a, true), &stored(&b, true), "").expect("a difference");
    assert!(!d.is_empty());
}

/// Regression (issue 11): `--json` of a single run had no findings, so a cached read said
/// nothing about the cache anywhere in its output.
#[test]
fn json_of_a_cached_micro_read_carries_the_cache_served_finding() {
    let s = Scratch::new();
    let data = data_dir(&s);
    let d = data.to_str().unwrap();
    // Many passes over a file just written: the device's counters (which other processes
    // move too) stay far below the half of the reads that the check allows it.
    ok(&s.run(&["micro", "--dir", d, "--size", "16m", "--no-db"]));
    let o = s.run(&[
        "micro", "--dir", d, "--size", "16m", "--access", "randread", "--loops", "32", "--json",
        "--no-db",
    ]);
    ok(&o);
    let v: Value = serde_json::from_slice(&o.stdout).expect("JSON on stdout");
    let checks: Vec<&str> = v["findings"]
        .as_array()
        .expect("findings in the JSON")
        .iter()
        .map(|f| f["check"].as_str().unwrap())
        .collect();
    assert!(checks.contains(&"cache-served"), "{checks:?}");
    assert!(
        v["system"]["cpu.usr_pct"].is_number(),
        "system summary: {}",
        v["system"]
    );
    // Nothing was stored: --no-db.
    assert!(!s.db().exists());
}

#[test]
fn json_of_a_wml_run_carries_findings_and_the_system_summary() {
    let s = Scratch::new();
    let data = data_dir(&s);
    let o = s.run(&[
        "run",
        "webserver",
        "--dir",
        data.to_str().unwrap(),
        "--set",
        "nfiles=20",
        "--time",
        "200ms",
        "--json",
        "-q",
    ]);
    ok(&o);
    let v: Value = serde_json::from_slice(&o.stdout).expect("JSON on stdout");
    assert!(v["findings"].is_array(), "{v:#}");
    assert!(
        v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["check"] == "short-run"),
        "{}",
        v["findings"]
    );
    assert!(v["system"].is_object(), "{v:#}");
    assert!(Path::new(&s.db()).exists(), "stored");
}

/// `workload.system = false` in an experiment and `--no-system` on the command line: the
/// workload's `system` commands do not run, stderr says so, and each run stores a
/// `system-skipped` finding naming them.
#[test]
fn skipped_system_commands_are_warned_about_and_stored() {
    let s = Scratch::new();
    let data = memory_dir();
    let d = data.path().to_str().unwrap();
    let marker = s.path().join("MARKER");
    s.write(
        "sys.f",
        &format!(
            "define file name=f,path=$dir,size=4k,prealloc\n\
             define process name=p {{ thread name=t {{ flowop statfile name=s,filesetname=f }} }}\n\
             system \"touch {}\"\n\
             run 1\n",
            marker.display()
        ),
    );
    let skipped = |export: &Value| -> Vec<String> {
        let f = export["configs"][0]["runs"][0]["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["check"] == "system-skipped")
            .unwrap_or_else(|| panic!("no system-skipped finding: {export:#}"));
        f["evidence"]["skipped"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_str().unwrap().to_string())
            .collect()
    };
    let want = vec![format!("touch {}", marker.display())];

    let f = s.path().join("sys.f");
    let o = s.run(&[
        "run",
        f.to_str().unwrap(),
        "--dir",
        d,
        "--time",
        "200ms",
        "--no-system",
    ]);
    ok(&o);
    assert!(
        stderr(&o).contains("not run (--no-system)"),
        "{}",
        stderr(&o)
    );
    assert_eq!(skipped(&s.latest()), want);

    let t = s.write(
        "sys.toml",
        &format!(
            "[sut]\ntarget = {{ kind = \"directory\", path = {d:?} }}\n[workload]\n\
             wml = \"sys.f\"\ntime = \"200ms\"\nsystem = false\n[repetitions]\nmin = 2\nmax = 2\n\
             [procedure]\ndrop_caches = false\n"
        ),
    );
    let o = s.run(&["run", t.to_str().unwrap()]);
    ok(&o);
    let err = stderr(&o);
    assert_eq!(
        err.matches("not run (workload.system = false)").count(),
        1,
        "once per configuration: {err}"
    );
    let e = s.latest();
    assert_eq!(skipped(&e), want);
    assert!(!marker.exists(), "a skipped command ran");
}

#[test]
fn bonnie_stores_what_its_one_run_experiment_stores() {
    let s = Scratch::new();
    let data = memory_dir();
    let d = data.path().to_str().unwrap();
    ok(&s.run(&[
        "bonnie",
        "--dir",
        d,
        "--size",
        "1m",
        "--char-size",
        "64k",
        "--files",
        "1",
        "--seeks",
        "100",
    ]));
    let single = s.latest();
    let exp = one_run_experiment(
        &s,
        "bonnie.toml",
        d,
        r#"bonnie = { size = "1m", char_size = "64k", files = 1, seeks = 100 }"#,
    );
    assert_same_rows(&single, &exp, false);
    let flowops = single["configs"][0]["runs"][0]["flowops"]
        .as_array()
        .unwrap();
    assert_eq!(flowops.len(), 12, "a row per phase");
    assert_eq!(single["experiment"]["status"], "done");
}

#[test]
fn iozone_stores_what_its_one_run_experiment_stores() {
    let s = Scratch::new();
    let data = memory_dir();
    let d = data.path().to_str().unwrap();
    let mut cmd = vec!["iozone", "--dir", d];
    cmd.extend([
        "--tests",
        "write,read,random",
        "--size",
        "1m",
        "--threads",
        "2",
    ]);
    ok(&s.run(&cmd));
    let single = s.latest();
    let exp = one_run_experiment(
        &s,
        "iozone.toml",
        d,
        r#"iozone = { tests = "write,read,random", size = "1m", threads = 2 }"#,
    );
    // Extras hold each pass's times: compare names and kinds only.
    assert_same_rows(&single, &exp, false);
    let metrics = single["configs"][0]["runs"][0]["metrics"]
        .as_array()
        .unwrap();
    for name in [
        "write_mib_per_s",
        "random_write_children_mib_per_s",
        "read_min_xfer_mib",
    ] {
        assert!(metrics.iter().any(|m| m["name"] == name), "{name}");
    }
    assert!(
        common::entries(data.path()).is_empty(),
        "the files are removed"
    );
}

#[test]
fn iozone_prints_the_rates_the_database_holds() {
    // The rates `iolab iozone --json` prints are the metrics the database holds for the run.
    let s = Scratch::new();
    let data = memory_dir();
    let d = data.path().to_str().unwrap();
    let o = s.run(&[
        "iozone",
        "--dir",
        d,
        "--tests",
        "write,read",
        "--size",
        "1m",
        "--threads",
        "2",
        "--json",
    ]);
    ok(&o);
    let printed: Value = serde_json::from_slice(&o.stdout).unwrap();
    let single = s.latest();
    let run = &single["configs"][0]["runs"][0];
    let stored = |name: String| {
        run["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == name.as_str())
            .unwrap_or_else(|| panic!("no {name} in {run:#}"))["value"]
            .clone()
    };
    let figures = printed["runs"][0]["figures"].as_array().unwrap();
    assert_eq!(figures.len(), 4, "{printed:#}");
    for f in figures {
        let fig = f["figure"].as_str().unwrap();
        assert_eq!(f["mib_per_s"], stored(format!("{fig}_mib_per_s")), "{fig}");
        assert_eq!(
            f["children_see_mib_per_s"],
            stored(format!("{fig}_children_mib_per_s")),
            "{fig}"
        );
        assert_eq!(
            f["parent_sees_mib_per_s"],
            stored(format!("{fig}_parent_mib_per_s")),
            "{fig}"
        );
    }
}

#[test]
fn replay_stores_what_its_one_run_experiment_stores() {
    let s = Scratch::new();
    let data = memory_dir();
    let d = data.path().to_str().unwrap();
    let install = s.write("install.list", "a/b, 100000, c\nc, 5, c\n");
    let boot = s.write("boot.list", "a/b, 100000, s\n");
    let days = s.write("days.list", "[day 1]\nd, 10, c\n[day 2]\nd, 10, d\n");
    ok(&s.run(&[
        "replay",
        "--dir",
        d,
        "--install",
        install.to_str().unwrap(),
        "--boot",
        boot.to_str().unwrap(),
        "--days",
        days.to_str().unwrap(),
    ]));
    let single = s.latest();
    // The lists' paths are relative to the experiment file's directory.
    let exp = one_run_experiment(
        &s,
        "replay.toml",
        d,
        r#"replay = { install = "install.list", boot = "boot.list", days = "days.list", between_days = "none" }"#,
    );
    assert_same_rows(&single, &exp, false);
    let flowops = single["configs"][0]["runs"][0]["flowops"]
        .as_array()
        .unwrap();
    // A row per day (the install, two days) and per phase (install; boot and work twice).
    assert_eq!(flowops.len(), 3 + 1 + 4);
    assert!(std::fs::read_dir(d).unwrap().next().is_none(), "files left");
}

#[test]
fn a_replay_without_days_prints_the_time_per_day_the_database_holds() {
    let s = Scratch::new();
    let data = memory_dir();
    let install = s.write("install.list", "a/b, 100000, c\n");
    let o = s.run(&[
        "replay",
        "--dir",
        data.path().to_str().unwrap(),
        "--install",
        install.to_str().unwrap(),
    ]);
    ok(&o);
    let printed = String::from_utf8_lossy(&o.stdout);
    assert!(
        printed.contains("days: 0.000 s in all, – per day"),
        "{printed}"
    );
    let run = &s.latest()["configs"][0]["runs"][0];
    let metric = |name: &str| {
        run["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == name)
            .unwrap_or_else(|| panic!("no {name} in {run:#}"))["value"]
            .clone()
    };
    assert_eq!(metric("day_s"), Value::Null);
    assert_eq!(metric("days_total_s"), json!(0.0));
}
