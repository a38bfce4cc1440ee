//! Bad input gets a clear message, exit code 2 (usage) or 1 (run failed), no panic, and no
//! files left behind.

mod common;

use common::{entries, need_root, run, stderr, Tmpfs};

fn assert_clean_failure(o: &std::process::Output, code: i32, needle: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(code), "exit code; stderr: {err}");
    assert!(err.contains(needle), "expected `{needle}` in: {err}");
    assert!(!err.contains("panicked"), "panic: {err}");
    assert!(o.stdout.is_empty(), "no results on failure");
}

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
        "--threads must be at least 1",
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
fn read_only_directory() {
    if !need_root("read_only_directory") {
        return;
    }
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
fn full_filesystem_fails_the_run_and_removes_its_files() {
    if !need_root("full_filesystem_fails_the_run_and_removes_its_files") {
        return;
    }
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
