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
    // No readahead on this test's own device: what it reads is then exactly the pages the run
    // asks for and misses. With readahead, pages fetched ahead of the random pass can be
    // evicted before the pass reaches them (memory pressure, another process dropping caches
    // on a busy machine) and are read a second time: 1.4 × the file was seen.
    let _no_readahead = ReadAhead::set(&fs, 0);
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
    // Every record comes from the device once (a permutation of the records, each a page the
    // cache no longer holds); the file's metadata adds a little. A page-cache-served run would
    // read ~0 bytes.
    let ratio = device_bytes as f64 / size as f64;
    assert!(
        (0.98..1.10).contains(&ratio),
        "device read {device_bytes} bytes for a {size}-byte file (ratio {ratio:.3})"
    );
}

/// A loop device's readahead (`queue/read_ahead_kb`), set for the life of the guard and put
/// back on drop, before the device is detached: the device is left as it was found.
struct ReadAhead {
    path: std::path::PathBuf,
    old: String,
}

impl ReadAhead {
    fn set(fs: &LoopFs, kb: u32) -> ReadAhead {
        let path = std::path::Path::new("/sys/block")
            .join(fs.name())
            .join("queue/read_ahead_kb");
        let old = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, kb.to_string()).unwrap();
        ReadAhead { path, old }
    }
}

impl Drop for ReadAhead {
    fn drop(&mut self) {
        let _ = std::fs::write(&self.path, self.old.trim());
    }
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
