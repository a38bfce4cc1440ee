//! The sampler on this machine: timing, plausibility, perf inheritance, another process.

use std::process::Command;
use std::time::{Duration, Instant};

use iolab_monitor::process::{rusage, Who};
use iolab_monitor::sampler::{devices_for_path, Sampler, SamplerConfig, SamplerError, Samples};

fn spin(d: Duration) {
    let t0 = Instant::now();
    let mut x = 1u64;
    while t0.elapsed() < d {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
    }
    std::hint::black_box(x);
}

fn check_series_shape(s: &Samples) {
    for ser in &s.series {
        assert!(
            ser.points.windows(2).all(|w| w[0].0 < w[1].0),
            "{}: offsets not increasing",
            ser.metric
        );
        assert!(ser.points.iter().all(|p| p.1.is_finite()), "{}", ser.metric);
    }
}

/// 50 ms for 0.5 s: points on the grid (never more than the window holds), increasing
/// offsets, CPU percentages that add up to 100, and perf counting a thread created after
/// start. The counts are bounded by what the window allows, not by wall-clock thresholds: a
/// loaded machine may make the sampler skip ticks.
#[test]
fn fifty_ms_for_half_a_second() {
    let _hang = iolab_testkit::timeout(120);
    let origin = Instant::now();
    let cfg = SamplerConfig {
        interval: Duration::from_millis(50),
        devices: devices_for_path("/"),
        ..SamplerConfig::default()
    };
    let sampler = Sampler::start(cfg, origin).unwrap();
    let started = Instant::now();
    // Created after start: counted by perf through inheritance. Its own CPU time (tests run
    // in parallel: less than its 0.2 s of wall time on a busy machine).
    let worker = std::thread::spawn(|| {
        let r0 = rusage(Who::Thread).unwrap();
        spin(Duration::from_millis(200));
        let r1 = rusage(Who::Thread).unwrap();
        ((r1.utime + r1.stime) - (r0.utime + r0.stime)).as_secs_f64()
    });
    let worker_cpu = worker.join().unwrap();
    let end = origin + Duration::from_millis(500);
    std::thread::sleep(end.saturating_duration_since(Instant::now()));
    let stopping = Instant::now();
    let s = sampler.stop();
    let stopped = origin.elapsed();
    check_series_shape(&s);

    // The window runs from the first sample (before start returned) to the last (after
    // stop was called).
    let window = s.total("sampler.window_s").unwrap();
    let (lo, hi) = ((stopping - started).as_secs_f64(), stopped.as_secs_f64());
    assert!(
        lo <= window && window <= hi,
        "window {window} s, not in [{lo}, {hi}]"
    );
    // Rate points: a tick per 50 ms of the window at most (one more when the first sample
    // came just after the grid's start), plus the final sample. Gauges add the first sample.
    let most = (window / 0.05) as usize + 2;
    let usr = s.series("cpu.usr_pct").expect("cpu series");
    let n = usr.points.len();
    assert!((1..=most).contains(&n), "{n} points of cpu.usr_pct");
    assert!(usr.points[0].0 > 0, "first point after the origin");
    for m in [
        "mem.used_bytes",
        "mem.dirty_bytes",
        "vm.pgfault_per_s",
        "proc.ctx_voluntary_per_s",
        "proc.usr_pct",
    ] {
        let k = s.series(m).unwrap_or_else(|| panic!("no {m}")).points.len();
        assert!((1..=most + 1).contains(&k), "{k} points of {m}");
    }
    // Every interval's CPU shares add up to 100 %.
    let parts: Vec<_> = [
        "cpu.usr_pct",
        "cpu.sys_pct",
        "cpu.iowait_pct",
        "cpu.idle_pct",
        "cpu.steal_pct",
    ]
    .iter()
    .map(|m| s.series(m).unwrap().points.clone())
    .collect();
    for i in 0..n {
        let sum: f64 = parts.iter().map(|p| p[i].1).sum();
        assert!((sum - 100.0).abs() < 1e-6, "point {i}: sum {sum}");
    }
    let mem = s.series("mem.used_bytes").unwrap();
    assert!(mem.points.iter().all(|p| p.1 > 0.0));

    let proc_cpu = s.total("proc.cpu_s").unwrap();
    // /proc/PID/stat counts in 10 ms ticks.
    assert!(
        proc_cpu + 0.02 >= worker_cpu,
        "process CPU {proc_cpu} s < the worker's {worker_cpu} s"
    );
    // The machine was at least as busy as this process (stolen time counts for the
    // process but not as busy).
    let busy = s.total("cpu.busy_s").unwrap();
    let steal = s.total("cpu.steal_pct").unwrap() / 100.0 * s.total("cpu.total_s").unwrap();
    assert!(
        busy + steal + 0.05 >= proc_cpu,
        "machine busy {busy} s (+{steal} s stolen) < own {proc_cpu} s"
    );

    match s.total("proc.task_clock_s") {
        Some(tc) => {
            assert!(
                tc >= 0.95 * worker_cpu,
                "task-clock {tc} s misses the spawned thread ({worker_cpu} s)"
            );
            assert!(s.series("perf.context_switches_per_s").is_some());
            assert!(s.series("perf.page_faults_per_s").is_some());
        }
        None => {
            assert!(
                s.notes.iter().any(|n| n.contains("perf")),
                "perf absent without a note: {:?}",
                s.notes
            );
            eprintln!("perf counters unavailable here: {:?}", s.notes);
        }
    }
    // Hardware counters: a series where the machine has a PMU, else absent with a note.
    if s.series("perf.cycles_per_s").is_none() && s.total("proc.task_clock_s").is_some() {
        assert!(
            s.notes.iter().any(|n| n.contains("cycles")),
            "{:?}",
            s.notes
        );
        assert_eq!(s.total("perf.cycles"), None);
    }
}

/// The deadline schedule live (its arithmetic is unit-tested in the sampler): offsets
/// increase, ticks are never bunched (no more points than grid slots in the window), and the
/// last point comes when stop was called.
#[test]
fn ticks_are_never_bunched() {
    let _hang = iolab_testkit::timeout(120);
    let interval = Duration::from_millis(20);
    let origin = Instant::now();
    let cfg = SamplerConfig {
        interval,
        perf: false,
        ..SamplerConfig::default()
    };
    let sampler = Sampler::start(cfg, origin).unwrap();
    std::thread::sleep(Duration::from_millis(1010));
    let stopping = origin.elapsed();
    let s = sampler.stop();
    check_series_shape(&s);
    // A gauge has a point at every sample; a CPU share only where the kernel's counters
    // (10 ms jiffies) moved, so a final sample a few ms after a late tick has none.
    let pts = &s.series("mem.used_bytes").unwrap().points;
    let window = s.total("sampler.window_s").unwrap();
    // A tick per interval of the window (one more when the first sample came just after the
    // grid's start), plus the final sample.
    let most = (window / interval.as_secs_f64()) as usize + 2;
    assert!(
        (1..=most).contains(&pts.len()),
        "{} points in a window of {window} s",
        pts.len()
    );
    // The final sample, or a tick less than 1 ms before stop that stands in for it.
    let last = pts.last().unwrap().0;
    assert!(
        last + 1_000_000 >= stopping.as_nanos() as i64,
        "final sample at {last} ns"
    );
}

/// Another process: its counters while it lives, a note once it is gone.
#[test]
fn another_process() {
    let _hang = iolab_testkit::timeout(120);
    let mut child = Command::new("sh")
        .args(["-c", "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done"])
        .spawn()
        .unwrap();
    let origin = Instant::now();
    let cfg = SamplerConfig {
        interval: Duration::from_millis(50),
        pid: Some(child.id()),
        ..SamplerConfig::default()
    };
    let sampler = Sampler::start(cfg, origin).unwrap();
    child.wait().unwrap();
    std::thread::sleep(Duration::from_millis(150));
    let s = sampler.stop();
    check_series_shape(&s);
    let cpu = s.total("proc.cpu_s").unwrap();
    assert!(cpu > 0.0, "child used {cpu} s of CPU");
    let pid = format!("/proc/{}/", child.id());
    assert!(
        s.notes.iter().any(|n| n.contains(&pid)),
        "exit of the watched process not noted: {:?}",
        s.notes
    );
    if let Some(tc) = s.total("proc.task_clock_s") {
        assert!(tc > 0.0, "task-clock of the child {tc} s");
    }
}

#[test]
fn start_errors_and_drop() {
    let _hang = iolab_testkit::timeout(120);
    let cfg = SamplerConfig {
        interval: Duration::ZERO,
        ..SamplerConfig::default()
    };
    assert!(matches!(
        Sampler::start(cfg, Instant::now()),
        Err(SamplerError::ZeroInterval)
    ));
    let cfg = SamplerConfig {
        pid: Some(0x7fff_fff0),
        ..SamplerConfig::default()
    };
    assert!(matches!(
        Sampler::start(cfg, Instant::now()),
        Err(SamplerError::NoSuchProcess(_))
    ));
    // Dropped without stop: the thread ends, nothing hangs.
    let s = Sampler::start(SamplerConfig::default(), Instant::now()).unwrap();
    drop(s);
}

/// iolab's own process: the software counts come from the kernel's accounting and include a
/// thread that was created after start and has exited (its 40 sleeps are 40 context
/// switches); CPU migrations, which would need a perf event on every thread, are left out
/// with a note.
#[test]
fn own_process_counts_exited_threads_from_the_kernels_accounting() {
    let _hang = iolab_testkit::timeout(120);
    let cfg = SamplerConfig {
        interval: Duration::from_millis(50),
        devices: Vec::new(),
        ..SamplerConfig::default()
    };
    let sampler = Sampler::start(cfg, Instant::now()).unwrap();
    let switches = std::thread::spawn(|| {
        let r0 = rusage(Who::Thread).unwrap();
        for _ in 0..40 {
            std::thread::sleep(Duration::from_millis(2));
        }
        let r1 = rusage(Who::Thread).unwrap();
        (r1.nvcsw + r1.nivcsw) - (r0.nvcsw + r0.nivcsw)
    })
    .join()
    .unwrap();
    assert!(switches >= 40, "{switches}");
    std::thread::sleep(Duration::from_millis(120));
    let s = sampler.stop();
    let cs = s
        .total("perf.context_switches")
        .expect("context switches counted");
    assert!(
        cs >= switches as f64,
        "{cs} context switches counted, the exited thread alone made {switches}"
    );
    assert!(s.total("perf.page_faults").is_some());
    assert!(s.total("proc.task_clock_s").is_some());
    assert_eq!(s.total("perf.cpu_migrations"), None);
    assert!(
        s.notes.iter().any(|n| n.contains("cpu-migrations")),
        "{:?}",
        s.notes
    );
}
