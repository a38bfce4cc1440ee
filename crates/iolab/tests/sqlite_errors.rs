//! Bad input to `iolab sqlite` and to `[workload] sqlite = { … }`: a message at the flag or
//! located at the key, exit code 2, no panic, and nothing left in the directory.

mod common;

use common::{assert_clean_failure, entries, require_root, run, stderr, Scratch, Tmpfs};

#[test]
fn bad_flags_are_refused_at_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let sqlite = |args: &[&str]| {
        let mut a = vec!["sqlite", "--dir", d, "--no-db"];
        a.extend(args);
        run(&a)
    };
    assert_clean_failure(
        &sqlite(&["--transactions", "0"]),
        2,
        "'--transactions <N>': must be at least 1",
    );
    assert_clean_failure(
        &sqlite(&["--journal", "wall"]),
        2,
        "expected one of delete, truncate, persist, wal, memory, off",
    );
    assert_clean_failure(
        &sqlite(&["--synchronous", "sometimes"]),
        2,
        "expected one of off, normal, full, extra",
    );
    assert_clean_failure(
        &sqlite(&["--threads", "0"]),
        2,
        "'--threads <THREADS>': must be between 1 and 1024",
    );
    assert_clean_failure(
        &sqlite(&["--databases", "12"]),
        2,
        "must be between 1 and 11",
    );
    assert_clean_failure(&sqlite(&["--sleep", "soon"]), 2, "is not a duration");
    assert_clean_failure(&sqlite(&["--time", "soon"]), 2, "is not a duration");
    assert_clean_failure(&sqlite(&["--time", "0s"]), 2, "must be longer than zero");
    assert_clean_failure(
        &sqlite(&["--transactions", "3", "--threads", "4"]),
        2,
        "--transactions 3 split over --threads 4",
    );
    assert_clean_failure(
        &sqlite(&["--mode", "update", "--random"]),
        2,
        "--mode update always picks its rows at random",
    );
    assert!(entries(dir.path()).is_empty(), "{:?}", entries(dir.path()));
}

#[test]
fn a_missing_directory() {
    let o = run(&["sqlite", "--dir", "/nonexistent/iolab-test", "--no-db"]);
    assert_clean_failure(&o, 2, "directory /nonexistent/iolab-test does not exist");
    assert!(stderr(&o).contains("hint:"));
}

/// The experiment file's mistakes, each located at its key.
#[test]
fn bad_keys_are_located_in_the_file() {
    let s = Scratch::new();
    let data = tempfile::tempdir().unwrap();
    let d = data.path().to_str().unwrap();
    for (workload, line_col, needle) in [
        (
            "sqlite = { transactions = 0 }",
            "5:27",
            "`workload.sqlite.transactions` must be at least 1, not 0",
        ),
        (
            "sqlite = { journal = \"wall\" }",
            "5:22",
            "`workload.sqlite.journal`: unknown value \"wall\"",
        ),
        (
            "sqlite = { synchronous = \"sometimes\" }",
            "5:26",
            "`workload.sqlite.synchronous`: unknown value \"sometimes\"",
        ),
        (
            "sqlite = { threads = 0 }",
            "5:22",
            "`workload.sqlite.threads` must be between 1 and 1024, not 0",
        ),
        (
            "sqlite = { transactions = 2, threads = 4 }",
            "5:27",
            ":5:27: `workload.sqlite.transactions` 2 split over `workload.sqlite.threads` 4",
        ),
        (
            "sqlite = { time = \"10 parsecs\" }",
            "5:19",
            "`workload.sqlite.time`",
        ),
        (
            "sqlite = { journal = \"wal\" }\ntime = \"6s\"",
            "6:1",
            "hint: give a SQLite run's time limit inside it",
        ),
        (
            "sqlite = { journl = \"wal\" }",
            "5:12",
            "unknown key `journl` in `workload.sqlite`",
        ),
    ] {
        let f = s.write(
            "bad.toml",
            &format!(
                "seed = 1\n[sut]\ntarget = {{ kind = \"directory\", path = {d:?} }}\n\
                 [workload]\n{workload}\n"
            ),
        );
        let o = s.run(&["run", f.to_str().unwrap()]);
        assert_clean_failure(&o, 2, needle);
        let at = format!("bad.toml:{line_col}");
        assert!(
            stderr(&o).contains(&at),
            "{workload}: expected {at} in {}",
            stderr(&o)
        );
    }
    assert!(entries(data.path()).is_empty());
    assert!(!s.db().exists(), "nothing stored");
}

#[test]
#[ignore = "needs root: mounts a read-only tmpfs"]
fn a_read_only_directory() {
    require_root();
    let fs = Tmpfs::new("ro,size=16m");
    let o = run(&["sqlite", "--dir", fs.path().to_str().unwrap(), "--no-db"]);
    assert_clean_failure(&o, 2, "Read-only file system");
    assert!(stderr(&o).contains("hint:"), "{}", stderr(&o));
}

#[test]
#[ignore = "needs root: mounts a small tmpfs"]
fn a_full_filesystem_fails_the_run_and_leaves_nothing() {
    require_root();
    let fs = Tmpfs::new("size=1m");
    let o = run(&[
        "sqlite",
        "--dir",
        fs.path().to_str().unwrap(),
        "--transactions",
        "20000",
        "--journal",
        "wal",
        "--synchronous",
        "off",
        "--no-db",
    ]);
    assert_clean_failure(&o, 1, "full");
    assert!(
        stderr(&o).contains("the filesystem is full"),
        "{}",
        stderr(&o)
    );
    assert!(
        entries(fs.path()).is_empty(),
        "left {:?}",
        entries(fs.path())
    );
}
