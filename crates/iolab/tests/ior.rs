//! `iolab ior` reads IOR's command line, runs through the runner, prints IOR's summary and
//! removes its files unless `-k`; `[workload] ior = { … }` runs as any kind; bad input gets a
//! located message with a hint, exit code 2, and no panic.

mod common;

use common::{assert_clean_failure, entries, run, stderr, stdout, Scratch};

#[test]
fn iors_command_line_runs_and_prints_iors_summary() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("testFile");
    let f = file.to_str().unwrap();
    let o = run(&[
        "ior",
        "-a",
        "POSIX",
        "-t",
        "64k",
        "-b",
        "256k",
        "-s",
        "2",
        "-F",
        "-e",
        "-o",
        f,
        "-i",
        "2",
        "--no-db",
        "--no-monitor",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("Summary of all tests:"), "{out}");
    assert!(
        out.contains("access              : file-per-process"),
        "{out}"
    );
    // One line per phase and repetition, then one per phase in the summary.
    assert_eq!(
        out.lines().filter(|l| l.starts_with("write ")).count(),
        4,
        "{out}"
    );
    assert_eq!(
        out.lines().filter(|l| l.starts_with("read ")).count(),
        4,
        "{out}"
    );
    assert!(entries(dir.path()).is_empty(), "files removed without -k");

    // -k keeps IOR's file, of IOR's size; JSON says what moved.
    let o = run(&[
        "ior",
        "-t",
        "64k",
        "-b",
        "256k",
        "-s",
        "2",
        "-k",
        "-w",
        "-o",
        f,
        "--no-db",
        "--no-monitor",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(entries(dir.path()), ["testFile"]);
    assert_eq!(std::fs::metadata(&file).unwrap().len(), 512 << 10);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["schema"], "iolab.ior/1");
    let w = &v["iterations"][0]["phases"]["write"];
    assert_eq!(w["bytes"], 524288.0);
    assert_eq!(w["ops"], 8.0);
    assert!(
        v["iterations"][0]["phases"].get("read").is_none(),
        "-w alone"
    );
    // Read back what the kept file holds.
    let o = run(&[
        "ior",
        "-t",
        "64k",
        "-b",
        "256k",
        "-s",
        "2",
        "-r",
        "-o",
        f,
        "--no-db",
        "--no-monitor",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let r = &v["iterations"][0]["phases"]["read"];
    assert_eq!(r["bytes"], 524288.0);
    assert_eq!(r["stamp_errors"], 0.0);
}

#[test]
fn iors_flags_iolab_does_not_take_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let ior = |args: &[&str]| {
        let mut a = vec!["ior", "--dir", d, "--no-db", "--no-monitor"];
        a.extend_from_slice(args);
        run(&a)
    };
    assert_clean_failure(&ior(&["-g"]), 2, "IOR's -g (barriers between open");
    assert_clean_failure(&ior(&["-a", "HDF5"]), 2, "runs the POSIX API only");
    assert_clean_failure(
        &ior(&["-O", "summaryFormat=JSON"]),
        2,
        "IOR's -O summaryFormat",
    );
    let o = ior(&["-t", "1m", "-b", "1500k"]);
    assert_clean_failure(
        &o,
        2,
        "--block 1536000 is not a multiple of --transfer 1048576",
    );
    assert!(
        stderr(&o).contains("whole number of transfers"),
        "{}",
        stderr(&o)
    );
    assert_clean_failure(
        &ior(&["-O", "stoneWallingWearOut=1"]),
        2,
        "--wear-out needs --stonewall",
    );
    assert!(entries(dir.path()).is_empty());
}

#[test]
fn an_experiment_runs_ior_and_stores_its_phases() {
    let s = Scratch::new();
    let f = s.directory_experiment(
        "ior.toml",
        r#"
name = "ior on a directory"
[sut]
target = { kind = "directory", path = "{target}" }
[workload]
ior = { transfer = "32k", block = "128k", segments = 4, reorder = true, fsync = true }
[repetitions]
min = 1
max = 1
metric = "write.mib_per_s"
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
    assert_eq!(m("write.bytes"), (512 << 10) as f64);
    assert_eq!(m("read.bytes"), (512 << 10) as f64);
    assert_eq!(m("bytes"), (1 << 20) as f64);
    assert!(m("write.mib_per_s") > 0.0);
    assert!(
        entries(&s.path().join("target")).is_empty(),
        "files removed"
    );
}

#[test]
fn bad_ior_keys_are_located_with_a_hint() {
    let s = Scratch::new();
    let f = s.directory_experiment(
        "bad.toml",
        r#"[sut]
target = { kind = "directory", path = "{target}" }
[workload]
ior = { transfer = "1m", block = "1500k" }
"#,
    );
    let o = s.run(&["run", f.to_str().unwrap()]);
    assert_clean_failure(&o, 2, "bad.toml:4:");
    let err = stderr(&o);
    assert!(
        err.contains("`workload.ior.block` 1536000 is not a multiple of `workload.ior.transfer`"),
        "{err}"
    );
    assert!(err.contains("whole number of transfers"), "{err}");
    let f = s.directory_experiment(
        "preset.toml",
        r#"[sut]
target = { kind = "directory", path = "{target}" }
[workload]
ior = { preset = "ior-hard", file_per_process = true }
"#,
    );
    let o = s.run(&["run", f.to_str().unwrap()]);
    assert_clean_failure(&o, 2, "preset.toml:4:");
    assert!(stderr(&o).contains("ior-hard fixes"), "{}", stderr(&o));
}
