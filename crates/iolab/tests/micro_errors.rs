//! Bad input gets a clear message, exit code 2 (usage) or 1 (run failed), no panic, and no
//! files left behind.

mod common;

use common::{assert_clean_failure, entries, require_root, run, stderr, Tmpfs};

#[test]
fn size_not_a_multiple_of_bs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let o = run(&["micro", "--dir", d, "--bs", "4k", "--size", "10000"]);
    assert_clean_failure(&o, 2, "not a multiple of --bs 4096");
    assert!(stderr(&o).contains("try --size 12288"));
    let o = run(&[
        "micro",
        "--dir",
        d,
        "--bs",
        "4k",
        "--size",
        "12k",
        "--threads",
        "2",
    ]);
    assert_clean_failure(&o, 2, "per thread");
    assert!(entries(dir.path()).is_empty());
}

#[test]
fn zero_and_malformed_values() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    assert_clean_failure(
        &run(&["micro", "--dir", d, "--bs", "0"]),
        2,
        "--bs must be at least 1 byte",
    );
    assert_clean_failure(
        &run(&["micro", "--dir", d, "--threads", "0"]),
        2,
        "'--threads <THREADS>': must be at least 1",
    );
    assert_clean_failure(
        &run(&["micro", "--dir", d, "--bs", "4q"]),
        2,
        "is not a size",
    );
    assert_clean_failure(
        &run(&["micro", "--dir", d, "--access", "sideways"]),
        2,
        "expected one of write, randwrite",
    );
    assert_clean_failure(
        &run(&["micro", "--dir", d, "--sync", "sometimes"]),
        2,
        "expected one of normal",
    );
    assert_clean_failure(
        &run(&["micro", "--dir", d, "--time", "soon"]),
        2,
        "is not a duration",
    );
    assert_clean_failure(
        &run(&["micro", "--dir", d, "--iodepth", "8"]),
        2,
        "needs --engine io_uring",
    );
    assert_clean_failure(
        &run(&[
            "micro", "--dir", d, "--sync", "mmap", "--engine", "io_uring",
        ]),
        2,
        "needs the mmap engine",
    );
    assert_clean_failure(&run(&["micro"]), 2, "--dir");
    assert!(entries(dir.path()).is_empty());
}

#[test]
fn missing_directory() {
    let o = run(&["micro", "--dir", "/nonexistent/iolab-test"]);
    assert_clean_failure(&o, 2, "directory /nonexistent/iolab-test does not exist");
    assert!(stderr(&o).contains("hint:"));
}

#[test]
fn a_file_instead_of_a_directory() {
    let f = tempfile::NamedTempFile::new().unwrap();
    let o = run(&["micro", "--dir", f.path().to_str().unwrap()]);
    assert_clean_failure(&o, 2, "is not a directory");
}

#[test]
#[ignore = "needs root: mounts a read-only tmpfs"]
fn read_only_directory() {
    require_root();
    let fs = Tmpfs::new("ro,size=16m");
    let o = run(&[
        "micro",
        "--dir",
        fs.path().to_str().unwrap(),
        "--size",
        "1m",
    ]);
    assert_clean_failure(&o, 2, "cannot write in");
    assert!(
        stderr(&o).contains("Read-only file system"),
        "{}",
        stderr(&o)
    );
}

#[test]
#[ignore = "needs root: mounts a small tmpfs"]
fn full_filesystem_fails_the_run_and_removes_its_files() {
    require_root();
    let fs = Tmpfs::new("size=64m");
    let dir = fs.path().to_str().unwrap();
    for access in ["write", "append"] {
        let o = run(&[
            "micro",
            "--dir",
            dir,
            "--access",
            access,
            "--size",
            "128m",
            "--threads",
            "2",
        ]);
        assert_clean_failure(&o, 1, "No space left on device");
        assert!(
            stderr(&o).contains("the filesystem is full"),
            "{}",
            stderr(&o)
        );
        assert!(
            entries(fs.path()).is_empty(),
            "{access}: left {:?}",
            entries(fs.path())
        );
    }
    // The filesystem is usable again: nothing leaked.
    let o = run(&["micro", "--dir", dir, "--size", "32m"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn ranges_name_what_is_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    // 0 is refused: the range must not claim it.
    assert_clean_failure(
        &run(&["micro", "--dir", d, "--threads", "5000000000"]),
        2,
        "must be between 1 and 4294967295",
    );
    assert_clean_failure(
        &run(&["micro", "--dir", d, "--loops", "0"]),
        2,
        "'--loops <LOOPS>': must be at least 1",
    );
    assert_clean_failure(
        &run(&[
            "micro",
            "--dir",
            d,
            "--iodepth",
            "0",
            "--engine",
            "io_uring",
        ]),
        2,
        "must be between 1 and 4096",
    );
    assert!(entries(dir.path()).is_empty());
}

#[test]
fn size_suggestion_for_a_huge_size() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let o = run(&["micro", "--dir", d, "--size", "18446744073709551615"]);
    assert_clean_failure(&o, 2, "not a multiple of --bs 4096");
    assert!(
        stderr(&o).contains("try --size 18446744073709547520"),
        "{}",
        stderr(&o)
    );
    assert!(entries(dir.path()).is_empty());
}

#[test]
fn durations_too_short_to_measure_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    for (flag, value, needle) in [
        ("--time", "0", "must be longer than zero"),
        ("--time", "1us", "is too short"),
        ("--monitor-interval", "0s", "must be longer than zero"),
        ("--monitor-interval", "10us", "is too short"),
    ] {
        let o = run(&["micro", "--dir", d, "--size", "64k", flag, value]);
        assert_clean_failure(&o, 2, needle);
        assert!(stderr(&o).contains(flag), "{}", stderr(&o));
    }
    assert!(entries(dir.path()).is_empty());
}

#[test]
fn a_bad_database_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("data");
    std::fs::create_dir(&d).unwrap();
    let junk = dir.path().join("junk.db");
    std::fs::write(&junk, "not a database\n").unwrap();
    for (db, needle) in [
        (
            "/nonexistent/iolab/x.db",
            "directory /nonexistent/iolab does not exist",
        ),
        (junk.to_str().unwrap(), "is not an SQLite database"),
    ] {
        let o = run(&[
            "micro",
            "--dir",
            d.to_str().unwrap(),
            "--size",
            "1m",
            "--db",
            db,
            "--no-monitor",
        ]);
        assert_clean_failure(&o, 2, needle);
        // Nothing ran: no data file was written.
        assert!(entries(&d).is_empty(), "{db}: {:?}", entries(&d));
    }
}
