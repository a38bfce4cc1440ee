//! Bad input to the iozone kind — on the command line and in an experiment file — gets a
//! located message, exit code 2, no panic, and nothing left behind.

mod common;

use common::{entries, run, stderr, Scratch};

fn assert_usage(o: &std::process::Output, needle: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "exit code; stderr: {err}");
    assert!(err.contains(needle), "expected `{needle}` in: {err}");
    assert!(!err.contains("panicked"), "panic: {err}");
    assert!(o.stdout.is_empty(), "no results on failure");
}

#[test]
fn bad_command_lines_name_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let iozone = |extra: &[&str]| {
        let mut a = vec!["iozone", "--dir", d, "--no-db"];
        a.extend_from_slice(extra);
        run(&a)
    };
    assert_usage(
        &iozone(&["--size", "64k", "--record", "128k"]),
        "--record 131072 is larger than the file (--size 65536)",
    );
    let o = iozone(&["--size", "10000", "--record", "4k"]);
    assert_usage(&o, "--size 10000 is not a multiple of --record 4096");
    assert!(stderr(&o).contains("try --size 12288"), "{}", stderr(&o));
    assert_usage(
        &iozone(&["--tests", "write,sideways"]),
        "unknown test `sideways`",
    );
    assert_usage(&iozone(&["--tests", "11"]), "unknown test `11`");
    assert_usage(
        &iozone(&["--direct", "--record", "1000", "--size", "8000"]),
        "--direct needs --record to be a multiple of 512 bytes",
    );
    assert_usage(&iozone(&["--threads", "0"]), "--threads");
    assert_usage(
        &iozone(&["--flush", "sometimes"]),
        "expected one of included, fsync, excluded",
    );
    assert_usage(&iozone(&["--record", "4q"]), "is not a size");
    assert_usage(
        &iozone(&["--auto", "--auto-min-size", "1m", "--auto-max-size", "256k"]),
        "--auto-min-size 1MiB is above --auto-max-size 256KiB",
    );
    assert_usage(
        &iozone(&[
            "--auto",
            "--auto-min-record",
            "64k",
            "--auto-max-record",
            "8k",
        ]),
        "--auto-min-record 64KiB is above --auto-max-record 8KiB",
    );
    assert_usage(
        &iozone(&["--auto", "--auto-min-record", "0"]),
        "--auto-min-record must be at least 1 byte",
    );
    assert_usage(
        &iozone(&["--auto", "--auto-min-record", "2m", "--auto-max-size", "1m"]),
        "the auto matrix is empty: no record size from 2MiB to 16MiB fits",
    );
    assert_usage(
        &iozone(&[
            "--auto",
            "--auto-min-size",
            "96k",
            "--auto-max-size",
            "192k",
        ]),
        "the auto matrix has files of 96KiB in records of 64KiB, which is not whole records",
    );
    // iozone -N refuses throughput mode ("Microsecond mode not supported in throughput
    // mode"), and so does iolab, before anything runs.
    let o = iozone(&["--threads", "2", "--us-per-op", "--format", "iozone"]);
    assert_usage(&o, "--us-per-op is single-stream only");
    assert!(stderr(&o).contains("--ops"), "{}", stderr(&o));
    for extra in [&["--throughput"][..], &["--threads-max", "2"][..]] {
        let mut a = vec!["--us-per-op"];
        a.extend_from_slice(extra);
        assert_usage(&iozone(&a), "--us-per-op is single-stream only");
    }
    // A range of thread counts (iozone -l/-u) that is empty, or beside auto mode.
    assert_usage(
        &iozone(&["--threads", "3", "--threads-max", "2"]),
        "--threads-max 2 is below --threads 3",
    );
    assert_eq!(
        iozone(&["--threads-max", "0"]).status.code(),
        Some(2),
        "at least one thread"
    );
    assert_eq!(
        iozone(&["--auto", "--threads-max", "2"]).status.code(),
        Some(2),
        "auto mode is single stream"
    );
    assert_eq!(
        iozone(&["--ops", "--us-per-op"]).status.code(),
        Some(2),
        "one unit at a time"
    );
    // The matrix bounds belong to auto mode.
    assert_eq!(iozone(&["--auto-min-record", "8k"]).status.code(), Some(2));
    assert!(entries(dir.path()).is_empty(), "{:?}", entries(dir.path()));
    let o = run(&["iozone", "--dir", "/nonexistent/iolab-iozone", "--no-db"]);
    assert_usage(&o, "does not exist");
}

#[test]
fn bad_experiment_files_point_at_the_key() {
    let s = Scratch::new();
    let target = s.path().join("target");
    std::fs::create_dir_all(&target).unwrap();
    let head = format!(
        "[sut]\ntarget = {{ kind = \"directory\", path = \"{}\" }}\n[procedure]\ndrop_caches = false\n[workload]\n",
        target.display()
    );
    let cases = [
        // Record larger than the file: located at `record`.
        (
            "iozone = { size = \"64k\",\n  record = \"128k\" }\n",
            "7:",
            "is larger than the file",
        ),
        // Size not a multiple of the record: at `size`.
        (
            "iozone = { size = 10000, record = \"4k\" }\n",
            "6:",
            "`workload.iozone.size` 10000 is not a multiple of `workload.iozone.record` 4096",
        ),
        // Unknown test.
        (
            "iozone = { tests = \"write,sideways\" }\n",
            "6:",
            "unknown test `sideways`",
        ),
        // Unknown key.
        (
            "iozone = { tests = \"write\", colour = \"red\" }\n",
            "6:",
            "colour",
        ),
        // Wrong type.
        ("iozone = { direct = \"yes\" }\n", "6:", "must be a boolean"),
    ];
    for (i, (workload, loc, needle)) in cases.iter().enumerate() {
        let f = s.write(&format!("bad{i}.toml"), &format!("{head}{workload}"));
        for cmd in ["run", "check"] {
            let o = s.run(&[cmd, f.to_str().unwrap()]);
            let err = stderr(&o);
            assert_eq!(o.status.code(), Some(2), "case {i} ({cmd}): {err}");
            let located = format!("{}:{loc}", f.display());
            assert!(
                err.contains(&located),
                "case {i} ({cmd}): expected {located} in {err}"
            );
            assert!(err.contains(needle), "case {i} ({cmd}): {needle} in {err}");
            assert!(!err.contains("panicked"), "{err}");
        }
    }
    assert!(entries(&target).is_empty(), "{:?}", entries(&target));
}

#[test]
#[ignore = "needs root: mounts a small tmpfs"]
fn a_full_filesystem_fails_the_run_with_a_hint_and_removes_the_files() {
    common::require_root();
    let fs = common::Tmpfs::new("size=4m");
    let d = fs.path().to_str().unwrap();
    // Two threads of 4 MiB on 4 MiB: one of them meets ENOSPC mid-pass; the other is
    // stopped, and the failure (not the stop) is what the run reports.
    let o = run(&[
        "iozone",
        "--dir",
        d,
        "--no-db",
        "--threads",
        "2",
        "--size",
        "4m",
        "--tests",
        "write",
    ]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("No space left on device"), "{err}");
    assert!(err.contains("the filesystem is full"), "{err}");
    assert!(!err.contains("interrupted"), "{err}");
    assert!(entries(fs.path()).is_empty(), "{:?}", entries(fs.path()));
}
