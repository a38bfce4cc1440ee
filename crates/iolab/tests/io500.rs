//! `iolab io500` runs IO500's phases in IO500's order and prints IO500's result list with
//! the score and why the run is not a valid IO500 result; `[workload] io500 = { … }` runs
//! as any kind and stores every phase's rate and the scores; examples/io500-mini.toml runs
//! as shipped; bad input gets a message naming the flag or key, with a hint.

mod common;

use std::path::Path;

use common::{assert_clean_failure, entries, run, stderr, stdout, Scratch};

/// IO500's phases, in its order.
const PHASES: [&str; 12] = [
    "ior-easy-write",
    "mdtest-easy-write",
    "ior-hard-write",
    "mdtest-hard-write",
    "find",
    "ior-easy-read",
    "mdtest-easy-stat",
    "ior-hard-read",
    "mdtest-hard-stat",
    "mdtest-easy-delete",
    "mdtest-hard-read",
    "mdtest-hard-delete",
];

const SMALL: [&str; 8] = [
    "--ior-easy-block",
    "4m",
    "--ior-hard-segments",
    "10",
    "--mdtest-easy-items",
    "150",
    "--mdtest-hard-items",
    "150",
];

/// `iolab io500` of the small sizes in `d` with a 5 s stonewall, and `more`.
fn small_run(d: &str, more: &[&str]) -> std::process::Output {
    let mut args = vec![
        "io500",
        "--dir",
        d,
        "--stonewall",
        "5s",
        "--no-db",
        "--no-monitor",
    ];
    args.extend(SMALL);
    args.extend(more);
    run(&args)
}

#[test]
fn the_command_prints_io500s_result_list() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let o = small_run(d, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let results: Vec<&str> = out.lines().filter(|l| l.starts_with("[RESULT]")).collect();
    let names: Vec<&str> = results
        .iter()
        .map(|l| l.split_whitespace().nth(1).unwrap())
        .collect();
    assert_eq!(names, PHASES, "{out}");
    for l in &results {
        let unit = if l.contains(" ior-") {
            "GiB/s"
        } else {
            "kIOPS"
        };
        assert!(l.contains(unit) && l.contains(": time "), "{l}");
    }
    // The writes ran out of work before the 5 s stonewall, itself shorter than IO500's.
    let score = out.lines().find(|l| l.starts_with("[SCORE ]")).unwrap();
    assert!(
        score.contains("Bandwidth") && score.ends_with("[INVALID]"),
        "{score}"
    );
    assert!(out.contains("shorter than IO500's 300 s"), "{out}");
    assert!(out.contains("ior-easy-write needed"), "{out}");
    assert!(entries(dir.path()).is_empty(), "the data are removed");

    // JSON: every phase and the scores.
    let o = small_run(d, &["--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["schema"], "iolab.io500/1");
    let phases = v["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 12);
    assert_eq!(phases[0]["bytes"], (4 << 20) as f64);
    assert_eq!(phases[11]["items"], 150.0);
    assert_eq!(phases[4]["phase"], "find");
    assert_eq!(phases[4]["items"], 1.0 + 1.0 + 150.0 + 150.0);
    assert!(v["score"].as_f64().unwrap() > 0.0);
    assert_eq!(v["valid"], false);
    assert!(entries(dir.path()).is_empty());
}

#[test]
fn an_experiment_runs_io500_and_stores_its_phases_and_score() {
    let s = Scratch::new();
    let f = s.directory_experiment(
        "io500.toml",
        r#"
name = "io500 on a directory"
[sut]
target = { kind = "directory", path = "{target}" }
[workload]
io500 = { stonewall = "2s", ior_easy_block = "4m", ior_hard_segments = 10, mdtest_easy_items = 120, mdtest_hard_items = 120 }
[repetitions]
min = 1
max = 1
metric = "io500.score"
[procedure]
drop_caches = false
"#,
    );
    let o = s.run(&["run", "-q", f.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let e = s.latest();
    let run = &e["configs"][0]["runs"][0];
    assert_eq!(run["status"], "ok", "{run}");
    let m = |n: &str| common::run_metric(run, n).unwrap_or_else(|| panic!("{n}: {run}"));
    assert_eq!(m("ior_easy_write.bytes"), (4 << 20) as f64);
    assert_eq!(m("ior_hard_read.bytes"), 10.0 * 47008.0);
    assert_eq!(m("mdtest_hard_delete.items"), 120.0);
    // Of mdtest-hard's file.mdtest.0.0 … 119 only file.mdtest.0.101 is named *01*.
    assert_eq!(m("find.found"), 1.0);
    assert_eq!(m("find.items"), 1.0 + 1.0 + 120.0 + 120.0);
    assert!(m("io500.score") > 0.0);
    let bw = m("io500.bw_gib_per_s");
    let md = m("io500.md_kiops");
    assert!((m("io500.score") - (bw * md).sqrt()).abs() < 1e-9 * m("io500.score"));
    assert_eq!(m("io500.valid"), 0.0);
    assert!(
        entries(&s.path().join("target")).is_empty(),
        "files removed"
    );
}

#[test]
fn bad_io500_input_names_the_flag_or_key() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let o = run(&["io500", "--dir", d, "--ior-easy-block", "3m", "--no-db"]);
    assert_clean_failure(
        &o,
        2,
        "--ior-easy-block 3145728 is not a multiple of ior-easy's 2 MiB transfer",
    );
    let s = Scratch::new();
    let f = s.directory_experiment(
        "bad.toml",
        "[sut]\ntarget = { kind = \"directory\", path = \"{target}\" }\n\
         [workload]\nio500 = { ior_easy_block = \"3m\" }\n",
    );
    let o = s.run(&["run", f.to_str().unwrap()]);
    assert_clean_failure(&o, 2, "bad.toml:4:");
    let err = stderr(&o);
    assert!(
        err.contains("`workload.io500.ior_easy_block` 3145728 is not a multiple"),
        "{err}"
    );
    assert!(err.contains("whole number of 2 MiB"), "{err}");
    assert!(entries(dir.path()).is_empty());
}

#[test]
#[ignore = "needs root: the example mounts a tmpfs and drops caches"]
fn the_mini_example_runs_as_shipped() {
    common::require_root();
    let s = Scratch::new();
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/io500-mini.toml");
    let o = s.run(&["run", example.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = s.latest();
    let runs = v["configs"][0]["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    for r in runs {
        assert_eq!(r["status"], "ok", "{r}");
        let m = |n: &str| common::run_metric(r, n).unwrap_or_else(|| panic!("{n}: {r}"));
        assert!(m("io500.score") > 0.0);
        assert_eq!(m("ior_easy_read.bytes"), (64 << 20) as f64);
        assert_eq!(m("mdtest_easy_delete.items"), 1000.0);
        assert_eq!(m("io500.valid"), 0.0, "a 10 s stonewall");
    }
}
