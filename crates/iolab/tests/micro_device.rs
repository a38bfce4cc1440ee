//! What the device sees: real ext4 on a real loop device (attached with direct I/O so the
//! host's page cache cannot absorb it), counted by the kernel in /proc/diskstats.

mod common;

use common::{drop_caches, require_root, run, stderr, LoopFs};

#[test]
#[ignore = "needs root: loop devices, mounts and drop_caches"]
fn randwrite_fdatasync_reaches_the_device_record_by_record() {
    require_root();
    let fs = LoopFs::ext4("512M");
    let dir = fs.path().to_str().unwrap();
    let before = fs.counters();
    let o = run(&[
        "micro",
        "--access",
        "randwrite",
        "--sync",
        "fdatasync",
        "--bs",
        "4k",
        "--size",
        "64m",
        "--dir",
        dir,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let after = fs.counters();
    let writes = after.writes - before.writes;
    let flush = |c: &iolab_monitor::diskstats::DiskCounters| {
        c.flush
            .expect("kernel reports flush counters (Linux ≥ 5.5)")
            .flushes
    };
    let flushes = flush(&after) - flush(&before);
    assert!(writes >= 16384, "device writes {writes} < 16384 records");
    assert!(
        flushes >= 16384,
        "device flushes {flushes} < 16384 fdatasyncs"
    );
}

#[test]
#[ignore = "needs root: loop devices, mounts and drop_caches"]
fn cold_randread_reads_the_whole_file_from_the_device() {
    require_root();
    let fs = LoopFs::ext4("512M");
    let dir = fs.path().to_str().unwrap();
    let size: u64 = 64 << 20;
    let o = run(&["micro", "--access", "write", "--size", "64m", "--dir", dir]);
    assert!(o.status.success(), "{}", stderr(&o));
    drop_caches();
    let before = fs.counters();
    let o = run(&[
        "micro", "--access", "randread", "--size", "64m", "--dir", dir, "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let after = fs.counters();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        v["result"]["reused_files"], true,
        "the read run reuses the written file"
    );
    let device_bytes = (after.sectors_read - before.sectors_read) * 512;
    // Every record comes from the device once; metadata and readahead at the edges add a
    // little. A page-cache-served run would read ~0 bytes.
    let ratio = device_bytes as f64 / size as f64;
    assert!(
        (0.98..1.10).contains(&ratio),
        "device read {device_bytes} bytes for a {size}-byte file (ratio {ratio:.3})"
    );
}

#[test]
#[ignore = "needs root: loop devices, mounts and drop_caches"]
fn direct_io_with_unaligned_records_is_refused_before_running() {
    require_root();
    let fs = LoopFs::ext4("64M");
    let dir = fs.path().to_str().unwrap();
    let o = run(&[
        "micro", "--access", "write", "--sync", "direct", "--bs", "1000", "--size", "100000",
        "--dir", dir,
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("O_DIRECT alignment"), "{}", stderr(&o));
    assert!(
        common::entries(fs.path())
            .iter()
            .all(|e| !e.starts_with("iolab-micro")),
        "files left behind"
    );
}
