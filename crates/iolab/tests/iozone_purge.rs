//! iozone's `purge` (iozone `-U`, docs/iozone.md): before every pass the files' page cache is
//! emptied, and each figure says how much of the files the cache held as its pass began —
//! all of them without a purge (the read passes read memory), none after one. The remount
//! and the cache drop go through the system under test of an experiment; nothing is left
//! mounted or attached.

mod common;

use common::{require_root, stderr, stdout, Scratch};
use serde_json::Value;

const SIZE: u64 = 4 << 20;

/// The tests that look at the page cache run one at a time: a `drop_caches` of one would
/// empty the other's cache.
static PAGE_CACHE: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Whether `dir` is on a filesystem whose page cache can be emptied (not tmpfs or ramfs).
fn on_disk(dir: &std::path::Path) -> bool {
    iolab_sut::residency::is_memory_fs(dir) == Some(false)
}

/// `(figure, cached_bytes)` of every figure of `iolab iozone --json` output.
fn cached(json: &Value) -> Vec<(String, Option<u64>)> {
    json["runs"][0]["figures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["figure"].as_str().unwrap().to_string(),
                f["cached_bytes"].as_u64(),
            )
        })
        .collect()
}

#[test]
fn fadvise_empties_the_files_cache_before_every_pass() {
    let _hang = iolab_testkit::timeout(300);
    let _alone = PAGE_CACHE.lock().unwrap_or_else(|e| e.into_inner());
    // On the root filesystem: a tmpfs cannot drop its pages.
    let dir = tempfile::Builder::new()
        .prefix("iolab-test-purge")
        .tempdir_in("/var/tmp")
        .unwrap();
    if !on_disk(dir.path()) {
        iolab_testkit::not_run("/var/tmp is a memory filesystem: no page cache to empty");
        return;
    }
    let run = |purge: &str| {
        let o = common::run(&[
            "iozone",
            "--dir",
            dir.path().to_str().unwrap(),
            "--tests",
            "write,read",
            "--size",
            "4m",
            "--flush",
            "excluded",
            "--purge",
            purge,
            "--json",
            "--no-db",
            "--no-monitor",
        ]);
        assert!(o.status.success(), "--purge {purge}: {}", stderr(&o));
        let json: Value = serde_json::from_str(&stdout(&o)).unwrap();
        assert_eq!(json["runs"][0]["plan"]["purge"], purge);
        cached(&json)
    };
    let names = ["write", "rewrite", "read", "reread"];
    // Without a purge, every pass after the write finds the whole file cached: the reads
    // measure memory.
    let none = run("none");
    assert_eq!(
        none,
        names.map(|n| (n.to_string(), Some(if n == "write" { 0 } else { SIZE })))
    );
    // With one, no pass finds any of it.
    let fadvise = run("fadvise");
    assert_eq!(fadvise, names.map(|n| (n.to_string(), Some(0))));
    assert!(common::entries(dir.path()).is_empty());
}

#[test]
fn the_command_line_refuses_what_it_cannot_purge() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let o = common::run(&["iozone", "--dir", d, "--purge", "remount", "--no-db"]);
    common::assert_clean_failure(
        &o,
        2,
        "--purge remount: iolab does not remount a --dir it did not mount",
    );
    assert!(stderr(&o).contains("loop_image"), "{}", stderr(&o));
    let o = common::run(&["iozone", "--dir", d, "--purge", "sometimes", "--no-db"]);
    common::assert_clean_failure(&o, 2, "expected one of none, fadvise, drop_caches, remount");
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        let o = common::run(&["iozone", "--dir", d, "--purge", "drop_caches", "--no-db"]);
        common::assert_clean_failure(&o, 2, "--purge drop_caches needs root");
    }
    assert!(common::entries(dir.path()).is_empty());
}

#[test]
fn a_remount_needs_a_filesystem_iolab_mounts() {
    let s = Scratch::new();
    let target = s.path().join("target");
    std::fs::create_dir_all(&target).unwrap();
    let f = s.write(
        "dir.toml",
        &format!(
            "[sut]\ntarget = {{ kind = \"directory\", path = \"{}\" }}\n[workload]\n\
             iozone = {{ size = \"1m\",\n  purge = \"remount\" }}\n",
            target.display()
        ),
    );
    let o = s.run(&["check", f.to_str().unwrap()]);
    common::assert_clean_failure(&o, 2, "dir.toml:5:");
    assert!(
        stderr(&o)
            .contains("`workload.iozone.purge` = \"remount\" needs a filesystem iolab mounts"),
        "{}",
        stderr(&o)
    );
    // A tmpfs keeps its files in the page cache: no purge empties it.
    let f = s.write(
        "tmpfs.toml",
        "[sut]\ntarget = { kind = \"tmpfs\", size = \"64M\" }\n[workload]\n\
         iozone = { size = \"1m\",\n  purge = \"fadvise\" }\n",
    );
    let o = s.run(&["check", f.to_str().unwrap()]);
    common::assert_clean_failure(&o, 2, "tmpfs.toml:5:");
    assert!(
        stderr(&o).contains("`workload.iozone.purge` = \"fadvise\" cannot empty a tmpfs"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_purge_on_a_tmpfs_directory_is_refused() {
    let shm = std::path::Path::new("/dev/shm");
    if !shm.is_dir() || on_disk(shm) {
        iolab_testkit::not_run("/dev/shm is not a tmpfs here");
        return;
    }
    let dir = tempfile::tempdir_in(shm).unwrap();
    let d = dir.path().to_str().unwrap();
    for purge in ["fadvise", "drop_caches"] {
        let o = common::run(&["iozone", "--dir", d, "--purge", purge, "--no-db"]);
        common::assert_clean_failure(&o, 2, "the directory is on a tmpfs");
    }
    assert!(common::entries(dir.path()).is_empty());
}

#[test]
#[ignore = "needs root: loop device, mkfs, mount, drop_caches"]
fn every_purge_empties_the_cache_in_an_experiment_and_none_keeps_it() {
    require_root();
    iolab_testkit::require_tool("mkfs.ext4");
    let _hang = iolab_testkit::timeout(600);
    let _alone = PAGE_CACHE.lock().unwrap_or_else(|e| e.into_inner());
    let s = Scratch::new();
    let f = s.write(
        "purge.toml",
        r#"
name = "iozone purge"
[factors]
purge = ["none", "fadvise", "drop_caches", "remount"]
[sut]
target = { kind = "loop_image", size = "128M" }
fs = { kind = "ext4" }
[workload]
iozone = { tests = "write,read", size = "4m", flush = "excluded", purge = "${purge}" }
[repetitions]
min = 1
max = 1
[procedure]
drop_caches = false
"#,
    );
    let configs = s.run_ok_once(&f);
    assert_eq!(configs.len(), 4);
    for (label, run) in &configs {
        let got: Vec<(String, u64, u64)> = run["flowops"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                (
                    f["name"].as_str().unwrap().to_string(),
                    f["extra"]["cached_bytes"].as_u64().expect("measured"),
                    f["extra"]["purge_ns"].as_u64().unwrap(),
                )
            })
            .collect();
        let names: Vec<&str> = got.iter().map(|g| g.0.as_str()).collect();
        assert_eq!(names, ["write", "rewrite", "read", "reread"], "{label}");
        let none = label.contains("none");
        for (name, cached, purge_ns) in &got {
            let want = if none && name != "write" { SIZE } else { 0 };
            assert_eq!(
                *cached, want,
                "{label}: {name} began with {cached} bytes cached"
            );
            assert_eq!(
                *purge_ns == 0,
                none,
                "{label}: {name}'s purge took {purge_ns} ns"
            );
        }
        // The cache check knows that a purged run reads cold whatever the cache can hold, and
        // the device shows it: only without a purge did the page cache serve the reads.
        let fired = |id: &str| {
            run["findings"]
                .as_array()
                .unwrap()
                .iter()
                .any(|f| f["check"] == id)
        };
        assert_eq!(fired("cache-fit"), none, "{label}: {}", run["findings"]);
        assert_eq!(fired("cache-served"), none, "{label}: {}", run["findings"]);
    }
}
