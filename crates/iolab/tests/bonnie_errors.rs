//! Bad input to `iolab bonnie` and to `bonnie = { … }` gets a located message, exit code 2,
//! no panic, and nothing left behind.

mod common;

use common::{assert_clean_failure, entries, require_root, run, stderr, Scratch, Tmpfs};

#[test]
fn bad_values_name_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let bonnie = |args: &[&str]| {
        let mut a = vec!["bonnie", "--dir", d, "--no-db"];
        a.extend_from_slice(args);
        run(&a)
    };
    // bonnie++'s CSV has no quoting: a comma in the machine name would shift every field.
    let o = bonnie(&["--size", "1m", "--machine", "ssd,ext4"]);
    assert_clean_failure(&o, 2, "--machine \"ssd,ext4\" holds a comma");
    assert!(stderr(&o).contains("without commas"), "{}", stderr(&o));
    assert_clean_failure(&bonnie(&["--machine", ""]), 2, "is empty");
    let o = bonnie(&["--size", "10000"]);
    assert_clean_failure(&o, 2, "--size 10000 is not a multiple of --chunk-size 8192");
    assert!(stderr(&o).contains("try --size 16384"), "{}", stderr(&o));
    assert_clean_failure(
        &bonnie(&["--size", "1m", "--char-size", "2m"]),
        2,
        "--char-size 2097152 is larger than --size 1048576",
    );
    assert_clean_failure(
        &bonnie(&["--size", "4m", "--direct"]),
        2,
        "--direct needs --char-size 0",
    );
    assert_clean_failure(
        &bonnie(&[
            "--size",
            "4000k",
            "--chunk-size",
            "1000",
            "--char-size",
            "0",
            "--direct",
        ]),
        2,
        "--direct needs --chunk-size to be a multiple of 512 bytes, not 1000",
    );
    assert_clean_failure(
        &bonnie(&[
            "--size",
            "4m",
            "--min-file-size",
            "2k",
            "--max-file-size",
            "1k",
        ]),
        2,
        "--min-file-size 2048 is larger than --max-file-size 1024",
    );
    assert_clean_failure(
        &bonnie(&["--phases", "files", "--files", "0"]),
        2,
        "--files 0 with --phases files runs nothing",
    );
    assert_clean_failure(
        &bonnie(&["--seekers", "0"]),
        2,
        "'--seekers <N>': must be between 1 and 1024",
    );
    assert_clean_failure(&bonnie(&["--chunk-size", "4q"]), 2, "is not a size");
    assert_clean_failure(
        &bonnie(&["--phases", "some"]),
        2,
        "expected one of all, io, files",
    );
    // More than the filesystem holds: refused before anything is written.
    assert_clean_failure(&bonnie(&["--size", "1000t"]), 2, "the test file (--size");
    assert!(entries(dir.path()).is_empty(), "{:?}", entries(dir.path()));
    assert_clean_failure(
        &run(&["bonnie", "--dir", "/nonexistent/iolab-test"]),
        2,
        "directory /nonexistent/iolab-test does not exist",
    );
}

#[test]
fn a_leftover_directory_is_refused_not_removed() {
    let dir = tempfile::tempdir().unwrap();
    let left = dir.path().join("iolab-bonnie.d");
    std::fs::create_dir(&left).unwrap();
    std::fs::write(left.join("keep"), "x").unwrap();
    let o = run(&[
        "bonnie",
        "--dir",
        dir.path().to_str().unwrap(),
        "--phases",
        "files",
        "--files",
        "1",
        "--no-db",
    ]);
    assert_clean_failure(&o, 2, "iolab-bonnie.d already exists");
    assert!(stderr(&o).contains("hint:"), "{}", stderr(&o));
    assert!(left.join("keep").exists());
}

#[test]
fn experiment_files_get_located_errors() {
    let s = Scratch::new();
    let target = s.path().join("target");
    std::fs::create_dir(&target).unwrap();
    for (line, needle) in [
        (
            r#"bonnie = { size = "10000" }"#,
            "`workload.bonnie.size` 10000 is not a multiple of `workload.bonnie.chunk_size` 8192",
        ),
        (
            r#"bonnie = { size = "1m", seekers = 0 }"#,
            "workload.bonnie.seekers",
        ),
        (
            r#"bonnie = { size = "1m", phases = "most" }"#,
            "workload.bonnie.phases",
        ),
        (r#"bonnie = { size = "1m", colour = "red" }"#, "colour"),
    ] {
        let file = s.write(
            "bonnie.toml",
            &format!(
                "name = \"bad\"\n[sut]\ntarget = {{ kind = \"directory\", path = \"{}\" }}\n\
                 [workload]\n{line}\n[procedure]\ndrop_caches = false\n",
                target.display()
            ),
        );
        let o = s.run(&["run", file.to_str().unwrap()]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{line}: {err}");
        assert!(err.contains(needle), "{line}: expected `{needle}` in {err}");
        assert!(err.contains("bonnie.toml:5:"), "{line}: located: {err}");
        assert!(entries(&target).is_empty());
    }
}

#[test]
#[ignore = "needs root: mounts a small tmpfs"]
fn too_many_files_or_too_big_a_file_for_the_disk() {
    require_root();
    let fs = Tmpfs::new("size=8m,nr_inodes=500");
    let d = fs.path().to_str().unwrap();
    let o = run(&[
        "bonnie", "--dir", d, "--phases", "files", "--files", "1", "--no-db",
    ]);
    assert_clean_failure(&o, 2, "free inodes");
    let o = run(&[
        "bonnie", "--dir", d, "--size", "16m", "--phases", "io", "--no-db",
    ]);
    assert_clean_failure(&o, 2, "the test file (--size 16777216) need");
    assert!(entries(fs.path()).is_empty(), "{:?}", entries(fs.path()));
}
