//! The block tracer on real devices: loop devices this test attaches (and detaches), an ext4
//! filesystem on one of them. Needs root (the tests are ignored otherwise) and tracefs.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};

use iolab_blocktrace::{
    tracefs_root, BlockTracer, Pow2Histogram, TraceDevice, TraceError, TraceOptions,
    INSTANCE_PREFIX,
};

static N: AtomicU32 = AtomicU32::new(0);

fn unique(kind: &str) -> PathBuf {
    PathBuf::from(format!(
        "/var/tmp/iolab-blocktrace-test-{kind}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ))
}

/// Whether the test can run: it must be root (the tests are `#[ignore]`d for that); a
/// kernel without tracefs is a test that did not run (a failure under CI).
fn can_run() -> bool {
    iolab_testkit::require_root();
    match ensure_tracefs() {
        Ok(()) => true,
        Err(why) => {
            iolab_testkit::not_run(why);
            false
        }
    }
}

fn ensure_tracefs() -> Result<(), String> {
    match tracefs_root() {
        Ok(_) => Ok(()),
        Err(TraceError::TracefsMissing(_)) => {
            let ok = Command::new("mount")
                .args(["-t", "tracefs", "nodev", "/sys/kernel/tracing"])
                .status()
                .is_ok_and(|s| s.success());
            if ok && tracefs_root().is_ok() {
                Ok(())
            } else {
                Err("tracefs is not mounted and cannot be mounted".into())
            }
        }
        Err(e) => Err(e.to_string()),
    }
}

fn run(cmd: &mut Command) {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?}: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A loop device over a sparse image, both created here and removed on drop.
struct Loop {
    dev: String,
    image: PathBuf,
}

impl Loop {
    fn new(size: u64) -> Loop {
        let image = unique("img");
        File::create(&image)
            .and_then(|f| f.set_len(size))
            .unwrap_or_else(|e| panic!("{}: {e}", image.display()));
        let out = Command::new("losetup")
            .args(["-f", "--show", "--direct-io=on"])
            .arg(&image)
            .output();
        let dev = match out {
            Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().to_owned(),
            other => {
                let _ = std::fs::remove_file(&image);
                panic!("losetup -f --show {}: {other:?}", image.display());
            }
        };
        Loop { dev, image }
    }

    fn name(&self) -> &str {
        self.dev.trim_start_matches("/dev/")
    }

    fn queue(&self, file: &str) -> u64 {
        let p = format!("/sys/class/block/{}/queue/{file}", self.name());
        std::fs::read_to_string(&p)
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or_else(|| panic!("cannot read {p}"))
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.dev]).status();
        let _ = std::fs::remove_file(&self.image);
    }
}

/// A mount point created here, unmounted and removed on drop.
struct Mount(PathBuf);

impl Mount {
    fn new(dev: &str) -> Mount {
        let dir = unique("mnt");
        std::fs::create_dir(&dir).unwrap();
        let m = Mount(dir);
        run(Command::new("mount").arg(dev).arg(&m.0));
        m
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
        let _ = std::fs::remove_dir(&self.0);
    }
}

fn is_instance_of_this_process(p: &Path) -> bool {
    p.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with(&format!("{INSTANCE_PREFIX}{}-", std::process::id())))
}

#[test]
#[ignore = "needs root: loop devices and tracefs"]
fn direct_writes_to_a_loop_device() {
    let _hang = iolab_testkit::timeout(300);
    if !can_run() {
        return;
    }
    let lo = Loop::new(128 << 20);
    let max_sectors_kb = lo.queue("max_sectors_kb");
    let dev = TraceDevice::resolve(&lo.dev).unwrap();
    assert_eq!(TraceDevice::resolve(lo.name()).unwrap(), dev);
    let opts = TraceOptions {
        keep_records: true,
        ..Default::default()
    };
    let tracer = BlockTracer::start(&dev, &opts).unwrap();
    let status = Command::new("dd")
        .args(["if=/dev/zero", &format!("of={}", lo.dev)])
        .args(["bs=1M", "count=64", "oflag=direct"])
        .stderr(Stdio::null())
        .status()
        .unwrap();
    let t = tracer.stop().unwrap();
    assert!(status.success());

    let want = 64u64 << 20;
    let got = t.writes.bytes;
    eprintln!(
        "writes: {} requests, {got} bytes; sizes {:?}; max_sectors_kb {max_sectors_kb}; \
         latency {:?}; lost {}",
        t.writes.requests, t.writes.sizes, t.writes.latency, t.lost.total
    );
    assert!(
        got.abs_diff(want) * 100 <= want,
        "traced {got} bytes written, dd wrote {want}"
    );
    // Request sizes. The block layer splits a bio at max_sectors_kb, and also when it would
    // need more than max_segments segments: with a user buffer of scattered 4 KiB pages that
    // is max_segments × 4 KiB (on Linux 6.18 loop: 128 × 4 KiB = 512 KiB < 1 MiB <
    // max_sectors_kb = 1280, so a 1 MiB write becomes two requests of about 512 KiB, e.g.
    // 504 + 520 KiB, or one of 1 MiB when the buffer happens to be contiguous).
    let limit = (1u64 << 20).min(max_sectors_kb * 1024);
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as u64;
    let worst = limit.min(lo.queue("max_segments") * page);
    let pieces = (1u64 << 20).div_ceil(worst);
    // The size that carries most of the bytes (by count a split can tie: on the CI machine
    // each 1 MiB write once became 8–16 KiB + ~1 MiB, 64 of each).
    let mode = t
        .writes
        .sizes
        .buckets
        .iter()
        .max_by_key(|b| b.count * b.low.max(1))
        .unwrap()
        .low;
    eprintln!("limit {limit}, worst case {worst} ({pieces} requests per write), mode {mode}");
    assert!(
        (64..=64 * pieces).contains(&t.writes.requests),
        "{} write requests for 64 writes of 1 MiB",
        t.writes.requests
    );
    assert!(t.writes.sizes.buckets.iter().all(|b| b.low <= limit));
    assert!(t.writes.bytes / t.writes.requests >= (1 << 20) / pieces);
    if worst == limit {
        // Only max_sectors_kb splits: every request has the expected size.
        assert_eq!(mode, Pow2Histogram::bucket_of(limit));
    } else {
        assert!(mode <= limit && mode >= Pow2Histogram::bucket_of(worst) / 2);
    }
    assert_eq!(t.lost.total, 0);
    assert!(!t.lost.per_cpu.is_empty());
    assert!(t.writes.sequential_fraction().unwrap() > 0.95);
    let lat = t.writes.latency.expect("write latency");
    assert!(lat.count >= 64 && lat.p50_ns > 0 && lat.max_ns >= lat.p99_ns);
    assert_eq!(t.unmatched_completions, 0);
    assert_eq!(t.in_flight_at_end, 0);
    let per_interval: u64 = t.intervals.iter().map(|i| i.write_bytes).sum();
    assert_eq!(per_interval, got);
    assert!(t.max_inflight >= 1);
    assert!(t.duration_ns > 0);

    // blkparse lines for the kept records.
    let mut out = Vec::new();
    t.write_blkparse(&mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert_eq!(text.lines().count(), t.records.len());
    let issue = text
        .lines()
        .find(|l| l.contains("  D ") && l.ends_with("[dd]"))
        .expect("an issue line of dd");
    let minor = dev.dev.minor.to_string();
    assert!(issue.starts_with(&format!("  7,{minor:<3}")), "{issue:?}");
    assert!(issue.contains(" W"), "{issue:?}");
}

#[test]
#[ignore = "needs root: loop devices and tracefs"]
fn fdatasync_on_ext4_shows_flushes() {
    let _hang = iolab_testkit::timeout(300);
    if !can_run() {
        return;
    }
    let lo = Loop::new(256 << 20);
    run(Command::new("mkfs.ext4")
        .args(["-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0"])
        .arg(&lo.dev));
    let mnt = Mount::new(&lo.dev);
    // The device of a directory: the filesystem's.
    let dev = TraceDevice::resolve(mnt.0.to_str().unwrap()).unwrap();
    assert_eq!(dev.name, lo.name());
    let path = mnt.0.join("data");
    let f = File::create(&path).unwrap();
    f.set_len(4 << 20).unwrap();
    // SAFETY: fsync of a file we own.
    assert_eq!(unsafe { libc::fsync(f.as_raw_fd()) }, 0);

    let tracer = BlockTracer::start(&dev, &TraceOptions::default()).unwrap();
    let n = 32u64;
    let buf = vec![0x5au8; 4096];
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for _ in 0..n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let off = (x % 1024) * 4096;
        f.write_all_at(&buf, off).unwrap();
        // SAFETY: fdatasync of a file we own.
        assert_eq!(unsafe { libc::fdatasync(f.as_raw_fd()) }, 0);
    }
    let t = tracer.stop().unwrap();
    drop(f);
    let bios = t.bios.clone().unwrap();
    eprintln!(
        "{n} fdatasync: flush requests {}, FUA requests {}, preflush bios {}, FUA bios {}, \
         writes {} ({} bytes), device fua={}",
        t.flushes.requests,
        t.fua.requests,
        bios.preflush,
        bios.fua,
        t.writes.requests,
        t.writes.bytes,
        lo.queue("fua")
    );
    let durable = t.flushes.requests + t.fua.requests;
    assert!(durable > 0);
    // About one cache flush (or FUA write) per fdatasync: at least one each, and no more than
    // a preflush and a postflush of the journal commit each (plus a little background).
    assert!(
        durable >= n,
        "{durable} flush/FUA requests for {n} fdatasync"
    );
    assert!(
        durable <= 2 * n + 8,
        "{durable} flush/FUA requests for {n} fdatasync"
    );
    assert!(bios.preflush >= n, "{} preflush bios", bios.preflush);
    // The application's 4 KiB writes reached the device.
    assert!(t
        .writes
        .sizes
        .buckets
        .iter()
        .any(|b| b.low == 4096 && b.count >= n));
    assert_eq!(t.lost.total, 0);
}

#[test]
#[ignore = "needs root: loop devices and tracefs"]
fn instance_is_removed_after_stop_and_after_drop() {
    let _hang = iolab_testkit::timeout(300);
    if !can_run() {
        return;
    }
    let lo = Loop::new(16 << 20);
    let dev = TraceDevice::resolve(lo.name()).unwrap();

    let tracer = BlockTracer::start(&dev, &TraceOptions::default()).unwrap();
    let path = tracer.instance_path().to_owned();
    assert!(path.is_dir(), "{}", path.display());
    assert!(is_instance_of_this_process(&path), "{}", path.display());
    let clock = std::fs::read_to_string(path.join("trace_clock")).unwrap();
    assert!(clock.contains("[mono]"), "{clock}");
    let t = tracer.stop().unwrap();
    assert!(!path.exists(), "{} left behind by stop", path.display());
    assert!(t.events_enabled.iter().any(|e| e == "block_rq_issue"));
    assert!(t.events_enabled.iter().any(|e| e == "block_rq_complete"));

    let tracer = BlockTracer::start(&dev, &TraceOptions::default()).unwrap();
    let path = tracer.instance_path().to_owned();
    assert!(path.is_dir());
    // Dropped while I/O runs.
    let mut dd = Command::new("dd")
        .args(["if=/dev/zero", &format!("of={}", lo.dev)])
        .args(["bs=64k", "count=64", "oflag=direct"])
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    drop(tracer);
    assert!(!path.exists(), "{} left behind by drop", path.display());
    assert!(dd.wait().unwrap().success());
}

#[test]
fn devices_that_cannot_be_traced() {
    // No root needed: these fail before tracefs is touched.
    assert!(matches!(
        TraceDevice::resolve("no-such-device-iolab"),
        Err(TraceError::NoSuchDevice(_))
    ));
    assert!(matches!(
        TraceDevice::resolve("/proc"),
        Err(TraceError::NoBlockDevice { .. })
    ));
    if Path::new("/sys/class/block/zram0").exists()
        && !Path::new("/sys/class/block/zram0/mq").exists()
    {
        assert!(matches!(
            TraceDevice::resolve("zram0"),
            Err(TraceError::BioBased { .. })
        ));
    }
}
