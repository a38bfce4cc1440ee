//! The collector on captured /proc text (tests/fixtures/sampler: five snapshots; loop20
//! appears between s0 and s1 and is removed between s2 and s3) and on hand-made edge cases.

use std::time::{Duration, Instant};

use super::collect::{offset_ns, Collector};
use super::source::{Snapshot, Texts};
use super::*;
use crate::diskstats::{self, DiskDelta};
use crate::{pressure, process, procstat, vmstat};
use iolab_sys::meminfo;

macro_rules! fx {
    ($i:literal, $f:literal) => {
        include_str!(concat!(
            "../../tests/fixtures/sampler/s",
            $i,
            "_",
            $f,
            ".txt"
        ))
    };
}

macro_rules! texts {
    ($i:literal) => {
        Texts {
            stat: Some(fx!($i, "stat")),
            meminfo: Some(fx!($i, "meminfo")),
            vmstat: Some(fx!($i, "vmstat")),
            diskstats: Some(fx!($i, "diskstats")),
            psi: [
                Some(fx!($i, "pressure_cpu")),
                Some(fx!($i, "pressure_io")),
                Some(fx!($i, "pressure_memory")),
            ],
            pid_stat: Some(fx!($i, "pid_stat")),
            pid_status: Some(fx!($i, "pid_status")),
        }
    };
}

fn all_texts() -> [Texts<'static>; 5] {
    [texts!(0), texts!(1), texts!(2), texts!(3), texts!(4)]
}

/// Monotonic offsets of the captures from the first one.
fn times() -> Vec<Duration> {
    include_str!("../../tests/fixtures/sampler/times_ns.txt")
        .lines()
        .map(|l| Duration::from_nanos(l.trim().parse().unwrap()))
        .collect()
}

fn devs() -> Vec<String> {
    vec!["vda".into(), "loop20".into()]
}

fn snaps(base: Instant) -> Vec<Snapshot> {
    let t = times();
    all_texts()
        .iter()
        .zip(&t)
        .map(|(x, dt)| Snapshot::parse(base + *dt, x, &devs()))
        .collect()
}

fn collect(origin: Instant, snaps: Vec<Snapshot>) -> Samples {
    let mut c = Collector::new(origin, Duration::from_millis(500), &devs(), 100, Vec::new());
    for s in snaps {
        c.push(s);
    }
    c.finish()
}

fn close(what: &str, got: f64, want: f64) {
    let tol = 1e-9 * want.abs().max(1.0);
    assert!((got - want).abs() <= tol, "{what}: got {got}, want {want}");
}

fn disk(i: usize, name: &str) -> diskstats::DiskStat {
    let d = diskstats::parse(all_texts()[i].diskstats.unwrap()).unwrap();
    d.get(name).unwrap().clone()
}

fn points(s: &Samples, m: &str) -> Vec<(i64, f64)> {
    s.series(m)
        .unwrap_or_else(|| panic!("no series {m}"))
        .points
        .clone()
}

fn ns(d: Duration) -> i64 {
    d.as_nanos() as i64
}

#[test]
fn captured_sequence_series() {
    let base = Instant::now();
    let t = times();
    let s = collect(base, snaps(base));
    assert!(s.notes.is_empty(), "{:?}", s.notes);

    // Rates: one point per interval, stamped at its end.
    for m in [
        "cpu.usr_pct",
        "vm.pgfault_per_s",
        "disk.vda.w_per_s",
        "psi.io_some_us_per_s",
        "proc.usr_pct",
    ] {
        let p = points(&s, m);
        let at: Vec<i64> = p.iter().map(|x| x.0).collect();
        assert_eq!(at, t[1..].iter().map(|d| ns(*d)).collect::<Vec<_>>(), "{m}");
    }
    // Gauges: every sample, the baseline included.
    assert_eq!(points(&s, "mem.dirty_bytes").len(), 5);
    assert_eq!(points(&s, "psi.io_some_avg10")[0].0, 0);

    // CPU percentages of each interval add up to 100.
    let cpu: Vec<Vec<(i64, f64)>> = [
        "cpu.usr_pct",
        "cpu.sys_pct",
        "cpu.iowait_pct",
        "cpu.idle_pct",
        "cpu.steal_pct",
    ]
    .iter()
    .map(|m| points(&s, m))
    .collect();
    for i in 0..4 {
        close("cpu sum", cpu.iter().map(|p| p[i].1).sum(), 100.0);
    }
    let c0 = procstat::parse(fx!(0, "stat")).unwrap().total;
    let c1 = procstat::parse(fx!(1, "stat")).unwrap().total;
    close("cpu.usr_pct[0]", cpu[0][0].1, c1.percent_since(&c0).usr);

    // vda: exactly the iostat columns of DiskDelta over the captured interval.
    let d = DiskDelta::between(&disk(1, "vda"), &disk(2, "vda"), t[2] - t[1]).iostat();
    close("vda w/s", points(&s, "disk.vda.w_per_s")[1].1, d.w_s);
    close("vda wkB/s", points(&s, "disk.vda.wkB_per_s")[1].1, d.wkb_s);
    close("vda aqu-sz", points(&s, "disk.vda.aqu_sz")[1].1, d.aqu_sz);
    close("vda %util", points(&s, "disk.vda.util_pct")[1].1, d.util);
    close(
        "vda w_await",
        points(&s, "disk.vda.w_await_ms")[1].1,
        d.w_await,
    );
    close(
        "vda f/s",
        points(&s, "disk.vda.f_per_s")[1].1,
        d.flush.unwrap().f_s,
    );

    // loop20 appears at s1: its counters are taken whole over s0→s1; removed before s3.
    let w = points(&s, "disk.loop20.w_per_s");
    assert_eq!(
        w.iter().map(|p| p.0).collect::<Vec<_>>(),
        [ns(t[1]), ns(t[2])]
    );
    let l1 = disk(1, "loop20");
    close(
        "loop20 w/s at s1",
        w[0].1,
        l1.counters.writes as f64 / (t[1] - t[0]).as_secs_f64(),
    );
    assert_eq!(l1.counters.writes, 16);
    let l2 = disk(2, "loop20");
    close(
        "loop20 w/s at s2",
        w[1].1,
        (l2.counters.writes - l1.counters.writes) as f64 / (t[2] - t[1]).as_secs_f64(),
    );
    let f = points(&s, "disk.loop20.f_per_s");
    assert_eq!(f.len(), 2);
    assert!(f[1].1 > 0.0, "the O_SYNC writes flushed");
}

#[test]
fn captured_sequence_summary() {
    let base = Instant::now();
    let t = times();
    let s = collect(base, snaps(base));
    let total = |m: &str| s.total(m).unwrap_or_else(|| panic!("no total {m}"));
    assert_eq!(total("sampler.samples"), 5.0);
    close("window", total("sampler.window_s"), t[4].as_secs_f64());

    // Totals are the sums of the intervals: for counters that only grew, last − first.
    let (v0, v4) = (disk(0, "vda").counters, disk(4, "vda").counters);
    assert_eq!(total("disk.vda.reads"), (v4.reads - v0.reads) as f64);
    assert_eq!(
        total("disk.vda.write_bytes"),
        ((v4.sectors_written - v0.sectors_written) * 512) as f64
    );
    assert_eq!(
        total("disk.vda.flushes"),
        (v4.flush.unwrap().flushes - v0.flush.unwrap().flushes) as f64
    );
    let whole = DiskDelta::between(&disk(0, "vda"), &disk(4, "vda"), t[4]).iostat();
    close("vda util", total("disk.vda.util_pct"), whole.util);
    close("vda rkB/s", total("disk.vda.rkB_per_s"), whole.rkb_s);
    close("vda w_await", total("disk.vda.w_await_ms"), whole.w_await);

    // loop20 lived from s1 to s2: its whole counters at s2, rates over the whole window.
    let l2 = disk(2, "loop20").counters;
    assert_eq!(total("disk.loop20.writes"), 528.0);
    assert_eq!(total("disk.loop20.writes"), l2.writes as f64);
    assert_eq!(total("disk.loop20.reads"), l2.reads as f64);
    assert_eq!(total("disk.loop20.read_bytes"), 64.0 * 64.0 * 1024.0);
    assert_eq!(
        total("disk.loop20.write_bytes"),
        (l2.sectors_written * 512) as f64
    );
    assert_eq!(total("disk.loop20.flushes"), 512.0);
    close(
        "loop20 util",
        total("disk.loop20.util_pct"),
        l2.io_ms as f64 / (t[4].as_secs_f64() * 1000.0) * 100.0,
    );

    let c0 = procstat::parse(fx!(0, "stat")).unwrap().total;
    let c4 = procstat::parse(fx!(4, "stat")).unwrap().total;
    let p = c4.percent_since(&c0);
    close("cpu.usr_pct", total("cpu.usr_pct"), p.usr);
    close("cpu.sys_pct", total("cpu.sys_pct"), p.sys);
    close("cpu.idle_pct", total("cpu.idle_pct"), p.idle);

    let p0 = process::parse_stat(fx!(0, "pid_stat")).unwrap();
    let p4 = process::parse_stat(fx!(4, "pid_stat")).unwrap();
    // The process's own CPU and that of the children it waited for (the capture script's
    // own children, as a tool the exec kind runs).
    let cpu = |p: &process::Stat| p.utime + p.stime + p.cutime + p.cstime;
    close(
        "proc.cpu_s",
        total("proc.cpu_s"),
        (cpu(&p4) - cpu(&p0)) as f64 / 100.0,
    );
    assert!(
        total("proc.cpu_s") > 0.5,
        "the capture script burned CPU for ~1.1 s"
    );
    assert_eq!(
        total("proc.minflt"),
        ((p4.minflt + p4.cminflt) - (p0.minflt + p0.cminflt)) as f64
    );
    let s0 = process::parse_status(fx!(0, "pid_status")).unwrap();
    let s4 = process::parse_status(fx!(4, "pid_status")).unwrap();
    assert_eq!(
        total("proc.ctx_voluntary"),
        (s4.voluntary_ctxt_switches - s0.voluntary_ctxt_switches) as f64
    );

    let vm0 = vmstat::parse(fx!(0, "vmstat")).unwrap();
    let vm4 = vmstat::parse(fx!(4, "vmstat")).unwrap();
    assert_eq!(
        total("vm.pgfault"),
        vm4.delta(&vm0, "pgfault").unwrap() as f64
    );

    let dirty = [
        fx!(0, "meminfo"),
        fx!(1, "meminfo"),
        fx!(2, "meminfo"),
        fx!(3, "meminfo"),
        fx!(4, "meminfo"),
    ]
    .map(|m| meminfo::parse(m).unwrap().dirty as f64);
    assert_eq!(
        total("mem.dirty_bytes_max"),
        dirty.iter().cloned().fold(0.0, f64::max)
    );

    let io0 = pressure::parse(fx!(0, "pressure_io"))
        .unwrap()
        .some
        .total_us;
    let io4 = pressure::parse(fx!(4, "pressure_io"))
        .unwrap()
        .some
        .total_us;
    close(
        "psi.io_some_stall_s",
        total("psi.io_some_stall_s"),
        (io4 - io0) as f64 / 1e6,
    );
    // No perf in captured text: absent, not 0.
    assert_eq!(s.total("proc.task_clock_s"), None);
    assert!(s.series("perf.task_clock_ms_per_s").is_none());
}

/// An origin after s1: s0 and s1 have negative offsets and stay out of the summary.
#[test]
fn origin_inside_the_sequence() {
    let base = Instant::now();
    let t = times();
    let origin = base + t[1] + Duration::from_nanos(1);
    let s = collect(origin, snaps(base));
    let p = points(&s, "mem.used_bytes");
    assert_eq!(p[0].0, -(ns(t[1]) + 1));
    assert!(p[1].0 < 0 && p[2].0 > 0);
    close(
        "window",
        s.total("sampler.window_s").unwrap(),
        (t[4] - t[2]).as_secs_f64(),
    );
    let (v2, v4) = (disk(2, "vda").counters, disk(4, "vda").counters);
    assert_eq!(
        s.total("disk.vda.writes"),
        Some((v4.writes - v2.writes) as f64)
    );
    // loop20's only intervals began before the origin.
    assert_eq!(s.total("disk.loop20.writes"), None);
}

fn disk_line(name: &str, dev: (u32, u32), f: [u64; 17]) -> diskstats::DiskStat {
    let line = format!(
        "{} {} {name} {}",
        dev.0,
        dev.1,
        f.iter().map(u64::to_string).collect::<Vec<_>>().join(" ")
    );
    diskstats::parse(&line).unwrap().disks.remove(0)
}

/// Snapshots with only diskstats, one device.
fn disk_only(base: Instant, seq: &[(u64, Option<diskstats::DiskStat>)]) -> Samples {
    let mut c = Collector::new(
        base,
        Duration::from_secs(1),
        &["sdx".to_owned()],
        100,
        Vec::new(),
    );
    for (ms, d) in seq {
        let mut s = Snapshot::parse(base + Duration::from_millis(*ms), &Texts::default(), &[]);
        s.disks = Some(d.iter().cloned().collect());
        c.push(s);
    }
    c.finish()
}

#[test]
fn wrapped_counters_are_undone_and_steps_back_skipped() {
    const W: u64 = 1 << 32;
    let f = |reads, sectors, read_ms, io_ms, rq_ms| {
        [
            reads, 0, sectors, read_ms, 10, 0, 80, 5, 0, io_ms, rq_ms, 0, 0, 0, 0, 0, 0,
        ]
    };
    let seq = [
        // 32-bit ms counters just below the wrap.
        (
            0,
            Some(disk_line(
                "sdx",
                (8, 16),
                f(100, 8000, W - 10, W - 100, W - 300),
            )),
        ),
        // +4 reads, read_ms +30 and io_ms +600, rq_ms +900 across the wrap.
        (
            1000,
            Some(disk_line("sdx", (8, 16), f(104, 8032, 20, 500, 600))),
        ),
        // A 64-bit counter (sectors ≥ 2^32) steps back: not a wrap, interval skipped.
        (
            2000,
            Some(disk_line(
                "sdx",
                (8, 16),
                f(110, 5_000_000_000, 30, 600, 700),
            )),
        ),
        (
            3000,
            Some(disk_line(
                "sdx",
                (8, 16),
                f(111, 4_999_999_000, 40, 700, 800),
            )),
        ),
        // Back to normal from there.
        (
            4000,
            Some(disk_line(
                "sdx",
                (8, 16),
                f(113, 4_999_999_016, 50, 900, 1000),
            )),
        ),
    ];
    let s = disk_only(Instant::now(), &seq);
    let r = points(&s, "disk.sdx.r_per_s");
    let at: Vec<i64> = r.iter().map(|p| p.0 / 1_000_000).collect();
    assert_eq!(
        at,
        [1000, 2000, 4000],
        "the step back at 3000 ms has no point"
    );
    assert_eq!(r[0].1, 4.0);
    assert_eq!(r[2].1, 2.0);
    let aw = points(&s, "disk.sdx.r_await_ms");
    assert_eq!(aw[0].1, 30.0 / 4.0);
    let util = points(&s, "disk.sdx.util_pct");
    assert_eq!(util[0].1, 60.0);
    let aqu = points(&s, "disk.sdx.aqu_sz");
    assert_eq!(aqu[0].1, 0.9);
    // Totals: the skipped interval adds nothing.
    assert_eq!(s.total("disk.sdx.reads"), Some((4 + 6 + 2) as f64));
    assert_eq!(s.total("disk.sdx.busy_ms"), Some((600 + 100 + 200) as f64));
}

#[test]
fn device_appears_disappears_reappears_and_renumbers() {
    let z = |reads: u64, rq: u64| {
        [
            reads,
            0,
            reads * 8,
            reads,
            0,
            0,
            0,
            0,
            0,
            reads,
            rq,
            0,
            0,
            0,
            0,
            0,
            0,
        ]
    };
    let seq = [
        (0, None),
        // Appears: counters taken whole over 0→500 ms.
        (500, Some(disk_line("sdx", (8, 16), z(50, 60)))),
        (1000, Some(disk_line("sdx", (8, 16), z(75, 80)))),
        (1500, None),
        // Comes back under another number: new device, taken whole since 1500 ms.
        (2000, Some(disk_line("sdx", (8, 32), z(10, 10)))),
        (2500, Some(disk_line("sdx", (8, 32), z(20, 20)))),
    ];
    let s = disk_only(Instant::now(), &seq);
    let r = points(&s, "disk.sdx.r_per_s");
    let got: Vec<(i64, f64)> = r.iter().map(|p| (p.0 / 1_000_000, p.1)).collect();
    assert_eq!(
        got,
        [(500, 100.0), (1000, 50.0), (2000, 20.0), (2500, 20.0)]
    );
    assert_eq!(s.total("disk.sdx.reads"), Some(50.0 + 25.0 + 10.0 + 10.0));
    // Whole-run r/s over the 2.5 s window.
    assert_eq!(s.total("disk.sdx.r_per_s"), Some(95.0 / 2.5));
}

/// A source that fails once: no point then, and the next interval spans the gap.
#[test]
fn failed_read_spans_the_gap() {
    let base = Instant::now();
    let t = times();
    let mut v = snaps(base);
    v[2].disks = None;
    v[2].cpu = None;
    v[2].errors
        .push((super::source::Source::Diskstats, "gone for a moment".into()));
    let s = collect(base, v);
    let w = points(&s, "disk.vda.w_per_s");
    assert_eq!(
        w.iter().map(|p| p.0).collect::<Vec<_>>(),
        [ns(t[1]), ns(t[3]), ns(t[4])]
    );
    let d = DiskDelta::between(&disk(1, "vda"), &disk(3, "vda"), t[3] - t[1]).iostat();
    close("w/s over s1→s3", w[1].1, d.w_s);
    assert_eq!(points(&s, "cpu.idle_pct").len(), 3);
    assert_eq!(s.notes, ["gone for a moment"]);
    // loop20 was last seen at s1 and is gone at s3: no s1→s3 point for it.
    assert_eq!(points(&s, "disk.loop20.w_per_s").len(), 1);
    let (v0, v4) = (disk(0, "vda").counters, disk(4, "vda").counters);
    assert_eq!(
        s.total("disk.vda.writes"),
        Some((v4.writes - v0.writes) as f64)
    );
}

/// Odd text anywhere: never a panic, a note per source, and what parsed is still used.
#[test]
fn odd_proc_text_never_panics() {
    let base = Instant::now();
    let odd = [
        "",
        "\n\n",
        "cpu 1 2\n",
        "garbage ((( ) 18446744073709551615 -1 x\n",
        "7 0 loop0 1 2 3\n",
        "some avg10=nan avg60=inf avg300=-1 total=5\n",
        "99999999999999999999999 (x) R",
        "MemTotal: 1 kB\n",
        "\u{0}\u{1}\u{ff}",
    ];
    let devices = devs();
    let mut c = Collector::new(base, Duration::from_millis(50), &devices, 100, Vec::new());
    let real = all_texts();
    let mut n = 0u64;
    for (i, o) in odd.iter().enumerate() {
        for k in 0..9 {
            let mut t = real[i % 5];
            match k {
                0 => t.stat = Some(o),
                1 => t.meminfo = Some(o),
                2 => t.vmstat = Some(o),
                3 => t.diskstats = Some(o),
                4..=6 => t.psi[k - 4] = Some(o),
                7 => t.pid_stat = Some(o),
                _ => t.pid_status = Some(o),
            }
            n += 1;
            c.push(Snapshot::parse(
                base + Duration::from_millis(n * 50),
                &t,
                &devices,
            ));
        }
    }
    // Truncated real files, at many cut points.
    for cut in (0..3000).step_by(97) {
        let mut t = real[(cut / 97) % 5];
        let trunc = |s: &'static str| &s[..cut.min(s.len())];
        t.stat = t.stat.map(trunc);
        t.diskstats = t.diskstats.map(trunc);
        t.meminfo = t.meminfo.map(trunc);
        t.pid_stat = t.pid_stat.map(trunc);
        n += 1;
        c.push(Snapshot::parse(
            base + Duration::from_millis(n * 50),
            &t,
            &devices,
        ));
    }
    let s = c.finish();
    assert!(s.notes.len() >= 5 && s.notes.len() <= 7, "{:#?}", s.notes);
    for ser in &s.series {
        assert!(ser.points.iter().all(|p| p.1.is_finite()), "{}", ser.metric);
        assert!(
            ser.points.windows(2).all(|w| w[0].0 < w[1].0),
            "{}",
            ser.metric
        );
    }
    assert!(s.summary.iter().all(|x| x.1.is_finite()));
}

#[test]
fn offsets_are_signed() {
    let o = Instant::now() + Duration::from_secs(5);
    assert_eq!(offset_ns(o, o), 0);
    assert_eq!(offset_ns(o + Duration::from_nanos(7), o), 7);
    assert_eq!(offset_ns(o - Duration::from_millis(2), o), -2_000_000);
}

#[test]
fn devices_for_follows_the_stack() {
    use iolab_sys::testutil::{FakeSys, TempDir};
    let t = TempDir::new("sampler-devs");
    let root = FakeSys::disk_partition_dm(t.0.join("sys")).root;
    let sys = SysBlock::new(&root);
    assert_eq!(devices_for_in(&sys, "dm-0"), ["dm-0", "sda2", "sda"]);
    assert_eq!(devices_for_in(&sys, "sda"), ["sda"]);
    assert_eq!(devices_for_in(&sys, "nosuch"), ["nosuch"]);
    assert_eq!(
        devices_for_in(&sys, "/dev/no/such/dm-0"),
        ["dm-0", "sda2", "sda"]
    );
}

#[test]
fn samples_lookup() {
    let s = Samples {
        series: vec![Series {
            metric: "a".into(),
            unit: "%".into(),
            points: vec![(0, 1.0)],
        }],
        summary: vec![("x".into(), 2.0, "s".into())],
        notes: vec![],
    };
    assert_eq!(s.total("x"), Some(2.0));
    assert_eq!(s.total("a"), None);
    assert_eq!(s.series("a").unwrap().unit, "%");
    let json = serde_json::to_string(&s).unwrap();
    assert_eq!(serde_json::from_str::<Samples>(&json).unwrap(), s);
}

/// The schedule behind the live sampler: tick k at start + k·interval whatever sampling
/// took, and late ticks skipped rather than bunched.
#[test]
fn ticks_stay_on_the_grid_and_late_ones_are_skipped() {
    let i = Duration::from_millis(20);
    let start = Instant::now();
    assert_eq!(
        tick_deadline(start, i, 50),
        Some(start + Duration::from_secs(1))
    );
    // A sample that took 3 ms does not move the next deadline.
    assert_eq!(next_tick(i + Duration::from_millis(3), i), 2);
    // Exactly on a grid point: that tick is being taken, the next one is ahead.
    assert_eq!(next_tick(2 * i, i), 3);
    // 3.5 intervals late: the ticks due meanwhile are skipped, not taken in a burst.
    assert_eq!(next_tick(i * 9 / 2, i), 5);
    assert_eq!(tick_deadline(start, Duration::MAX, 2), None);
    assert_eq!(next_tick(Duration::MAX, Duration::from_nanos(1)), u32::MAX);
}
