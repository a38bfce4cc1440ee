//! Acceptance: the sampler's disk columns are sysstat's `iostat -x`, checked against the
//! real `iostat` binary on a loop device this test attaches itself.
//!
//! Needs root (losetup, a private mount namespace) and `iostat` (Debian's sysstat, installed
//! by scripts/test.sh). Without root it says why and passes, except under CI (env `CI` set),
//! where it fails.
//!
//! # Why the comparison is deterministic
//!
//! Running `iostat -x -y DEV 2 1` next to the sampler gives two windows that never match
//! exactly, so their numbers cannot be compared for equality. Instead iostat is made to
//! compute from exactly the input the sampler's formulas get:
//!
//! 1. Counters: `iostat -f DIR` (sysstat ≥ 12.5) reads `DIR/block/DEV/stat` instead of
//!    `/sys/block/DEV/stat`. The test copies the loop device's line of `/proc/diskstats`,
//!    verbatim as the kernel wrote it (minus major, minor and name), into that file after
//!    real I/O: 64 MiB of O_DIRECT writes and 64 MiB of O_DIRECT reads issued concurrently (so
//!    several requests are in flight and f11 ≠ f10), then 64 O_DSYNC writes (flushes).
//! 2. Interval: without `-y`, iostat's first report is "since boot": the counters divided by
//!    the uptime from `/proc/uptime` (iostat.c `write_stats`: `itv = uptime_cs[curr] −
//!    uptime_cs[prev]` with `prev` = 0; `S_VALUE(m,n,p) = (n−m)/p·100` with p in 1/100 s).
//!    iostat runs in a private mount namespace (`unshare -m`) where a file saying
//!    `1.37 0.00` is bind-mounted over `/proc/uptime`: Δt = 1.37 s exactly, seen by no other
//!    process.
//!
//! Our side is `DiskDelta::first_seen(line, 1.37 s).iostat()` — counters taken whole, the
//! same thing — parsed from the same line by our parser. Every column iostat prints (r/s,
//! w/s, d/s, f/s, rkB/s, wkB/s, dkB/s, rrqm/s, wrqm/s, drqm/s, %rrqm, %wrqm, %drqm, r_await,
//! w_await, d_await, f_await, rareq-sz, wareq-sz, dareq-sz, aqu-sz, %util) must equal ours
//! within iostat's rounding to 2 decimals. Negative controls prove the data can tell wrong
//! formulas apart: rkB/s without the /2, aqu-sz from f10 instead of f11, %util from f11.
//!
//! The sampler itself ran during the I/O (100 ms ticks, on `devices_for(loopN)`); its totals
//! for the loop device must equal the counter differences around the I/O, and it must have
//! followed the backing file's disk too.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use iolab_monitor::diskstats::{self, DiskDelta, DiskStat, Iostat};
use iolab_monitor::sampler::{devices_for, Sampler, SamplerConfig};
use iolab_sys::{DevT, SysBlock};

/// A loop device attached by this test to its own image; detached and deleted on drop.
struct LoopDev {
    dev: String,
    img: PathBuf,
}

impl LoopDev {
    fn attach(tag: &str, size: &str) -> LoopDev {
        let img = PathBuf::from(format!(
            "/var/tmp/iolab-monitor-{tag}-{}.img",
            std::process::id()
        ));
        let ok = Command::new("truncate")
            .args(["-s", size])
            .arg(&img)
            .status()
            .unwrap()
            .success();
        assert!(ok, "truncate {}", img.display());
        let out = Command::new("losetup")
            .args(["-f", "--show", "--direct-io=on"])
            .arg(&img)
            .output()
            .unwrap();
        if !out.status.success() {
            let _ = std::fs::remove_file(&img);
            panic!("losetup: {}", String::from_utf8_lossy(&out.stderr).trim());
        }
        let dev = String::from_utf8(out.stdout).unwrap().trim().to_owned();
        LoopDev { dev, img }
    }

    fn name(&self) -> &str {
        self.dev.trim_start_matches("/dev/")
    }
}

impl Drop for LoopDev {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.dev]).status();
        let _ = std::fs::remove_file(&self.img);
    }
}

/// A directory removed on drop.
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn dd(args: &[&str]) -> std::process::Child {
    Command::new("dd")
        .arg("status=none")
        .args(args)
        .spawn()
        .unwrap()
}

fn wait_ok(mut c: std::process::Child) {
    assert!(c.wait().unwrap().success(), "dd failed");
}

/// The raw line of `name` in /proc/diskstats, and its parse.
fn diskstats_line(name: &str) -> (String, DiskStat) {
    let text = std::fs::read_to_string(diskstats::PATH).unwrap();
    let line = text
        .lines()
        .find(|l| l.split_ascii_whitespace().nth(2) == Some(name))
        .unwrap_or_else(|| panic!("{name} not in /proc/diskstats"))
        .to_owned();
    let parsed = diskstats::parse(&line).unwrap().disks.remove(0);
    (line, parsed)
}

/// `iostat -x -d -o JSON -f ALT DEV` (since boot) with `/proc/uptime` replaced by `uptime`.
fn iostat_since_boot(alt: &Path, uptime: &Path, dev: &str) -> serde_json::Value {
    let script = format!(
        "mount --bind '{}' /proc/uptime && exec iostat -x -d -o JSON -f '{}' '{}'",
        uptime.display(),
        alt.display(),
        dev
    );
    let out = Command::new("unshare")
        .args(["-m", "--propagation", "private", "sh", "-c", &script])
        .env("LC_ALL", "C")
        .env_remove("S_COLORS")
        .output()
        .expect("unshare");
    assert!(
        out.status.success(),
        "iostat in a private mount namespace failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("iostat JSON: {e}: {}", String::from_utf8_lossy(&out.stdout)));
    json["sysstat"]["hosts"][0]["statistics"][0]["disk"]
        .as_array()
        .and_then(|a| a.iter().find(|d| d["disk_device"] == dev))
        .unwrap_or_else(|| panic!("no {dev} in iostat output: {json}"))
        .clone()
}

/// iostat's JSON keys with our value for each.
fn ours(io: &Iostat) -> Vec<(&'static str, f64)> {
    let d = io.discard.expect("kernel ≥ 4.18 has discard counters");
    let f = io.flush.expect("kernel ≥ 5.5 has flush counters");
    vec![
        ("r/s", io.r_s),
        ("w/s", io.w_s),
        ("d/s", d.d_s),
        ("f/s", f.f_s),
        ("rkB/s", io.rkb_s),
        ("wkB/s", io.wkb_s),
        ("dkB/s", d.dkb_s),
        ("rrqm/s", io.rrqm_s),
        ("wrqm/s", io.wrqm_s),
        ("drqm/s", d.drqm_s),
        ("rrqm", io.rrqm_pct),
        ("wrqm", io.wrqm_pct),
        ("drqm", d.drqm_pct),
        ("r_await", io.r_await),
        ("w_await", io.w_await),
        ("d_await", d.d_await),
        ("f_await", f.f_await),
        ("rareq-sz", io.rareq_sz),
        ("wareq-sz", io.wareq_sz),
        ("dareq-sz", d.dareq_sz),
        ("aqu-sz", io.aqu_sz),
        ("util", io.util),
    ]
}

/// Equal within iostat's rounding to two decimals.
fn same(printed: f64, exact: f64) -> bool {
    (printed - exact).abs() <= 0.005 + 1e-9 * exact.abs()
}

#[test]
#[ignore = "needs root: a loop device; iostat (scripts/test.sh installs sysstat as root)"]
fn disk_columns_equal_iostat_x() {
    let _hang = iolab_testkit::timeout(300);
    iolab_testkit::require_root();
    iolab_testkit::require_tool("iostat");
    let lo = LoopDev::attach("sampler-iostat", "256M");
    let name = lo.name().to_owned();
    let dev = lo.dev.clone();

    // The sampler follows the loop device and the disk under its image.
    let devices = devices_for(&name);
    let backing = SysBlock::system()
        .name_of(DevT::of_file(&lo.img).unwrap())
        .unwrap();
    if let Some(b) = &backing {
        assert!(devices.contains(b), "{devices:?} lacks {b}");
    }
    let origin = Instant::now();
    let sampler = Sampler::start(
        SamplerConfig {
            interval: Duration::from_millis(100),
            devices,
            perf: false,
            ..SamplerConfig::default()
        },
        origin,
    )
    .unwrap();
    let (_, before) = diskstats_line(&name);

    let of = format!("of={dev}");
    let iff = format!("if={dev}");
    let w = dd(&["if=/dev/zero", &of, "bs=1M", "count=64", "oflag=direct"]);
    let r = dd(&[
        &iff,
        "of=/dev/null",
        "bs=256k",
        "count=256",
        "skip=512",
        "iflag=direct",
    ]);
    wait_ok(w);
    wait_ok(r);
    wait_ok(dd(&[
        "if=/dev/zero",
        &of,
        "bs=4k",
        "count=64",
        "seek=50000",
        "oflag=direct,dsync",
    ]));

    let (line, after) = diskstats_line(&name);
    std::thread::sleep(Duration::from_millis(150));
    let samples = sampler.stop();

    // 1. Our columns against iostat's, from the same counters and the same Δt.
    let tmp = TempDir(PathBuf::from(format!(
        "/var/tmp/iolab-monitor-iostat-{}",
        std::process::id()
    )));
    let alt = tmp.0.join("alt");
    std::fs::create_dir_all(alt.join("block").join(&name)).unwrap();
    let fields: Vec<&str> = line.split_ascii_whitespace().skip(3).collect();
    std::fs::write(
        alt.join("block").join(&name).join("stat"),
        format!("{}\n", fields.join(" ")),
    )
    .unwrap();
    let uptime = tmp.0.join("uptime");
    std::fs::write(&uptime, "1.37 0.00\n").unwrap();
    let dt = Duration::from_millis(1370);
    let theirs = iostat_since_boot(&alt, &uptime, &name);
    let io = DiskDelta::first_seen(&after, dt).iostat();
    let mut wrong = Vec::new();
    for (key, v) in ours(&io) {
        let t = theirs[key]
            .as_f64()
            .unwrap_or_else(|| panic!("iostat has no {key}: {theirs}"));
        if !same(t, v) {
            wrong.push(format!("{key}: iostat {t}, ours {v}"));
        }
    }
    assert!(
        wrong.is_empty(),
        "columns differ from iostat -x:\n{}\ncounters: {line}",
        wrong.join("\n")
    );

    // 2. The data tells wrong formulas apart (else the equality above would prove little).
    let c = &after.counters;
    let ms = dt.as_secs_f64() * 1000.0;
    let col = |k: &str| theirs[k].as_f64().unwrap();
    assert!(c.reads > 0 && c.writes > 0, "no I/O reached {name}: {line}");
    assert!(
        !same(col("rkB/s"), c.sectors_read as f64 / dt.as_secs_f64()),
        "rkB/s cannot tell sectors from kB"
    );
    assert!(
        !same(col("aqu-sz"), c.io_ms as f64 / ms),
        "aqu-sz cannot tell f10 from f11 (f10 {}, f11 {})",
        c.io_ms,
        c.weighted_io_ms
    );
    assert!(
        !same(col("util"), c.weighted_io_ms as f64 / ms * 100.0),
        "%util cannot tell f11 from f10"
    );
    assert!(
        c.flush.unwrap().flushes > 0,
        "O_DSYNC writes should have flushed"
    );

    // 3. The sampler saw exactly the I/O between the two reads (nothing else uses this
    // device), and followed the backing disk.
    let d = DiskDelta::between(&before, &after, Duration::from_secs(1)).delta;
    let total = |m: &str| {
        samples
            .total(&format!("disk.{name}.{m}"))
            .unwrap_or_else(|| panic!("no total disk.{name}.{m}: {:?}", samples.notes))
    };
    assert_eq!(total("writes"), d.writes as f64);
    assert_eq!(total("write_bytes"), (d.sectors_written * 512) as f64);
    assert_eq!(total("reads"), d.reads as f64);
    assert_eq!(total("read_bytes"), (d.sectors_read * 512) as f64);
    assert_eq!(total("read_bytes"), (64u64 << 20) as f64);
    assert_eq!(total("write_bytes"), ((64u64 << 20) + 64 * 4096) as f64);
    assert_eq!(total("flushes"), d.flush.unwrap().flushes as f64);
    assert_eq!(total("busy_ms"), d.io_ms as f64);
    let util = samples
        .series(&format!("disk.{name}.util_pct"))
        .expect("util series");
    assert!(util.points.iter().any(|p| p.1 > 0.0));
    assert!(util.points.windows(2).all(|w| w[0].0 < w[1].0));
    if let Some(b) = backing {
        assert!(
            samples.series(&format!("disk.{b}.w_per_s")).is_some(),
            "no series for the backing disk {b}"
        );
    }
}
