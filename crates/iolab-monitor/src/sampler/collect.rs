//! Turning a sequence of [`Snapshot`]s into series and a whole-run summary. Pure: the
//! sampler thread feeds it real readings, the tests feed it captured text.
//!
//! Every source keeps its own last good reading (instant and values): an interval goes from
//! that reading to the current one, so a failed read merges two intervals instead of
//! inventing a value, and a device or process that is gone simply stops its series.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::diskstats::{DiskCounters, DiskDelta, DiskStat};
use crate::perf::Counter;
use crate::procstat::CpuTimes;

use super::perfset::PerfValues;
use super::source::{Proc, Snapshot, Vm};
use super::{Samples, Series};

/// Signed nanoseconds from `origin` to `at`.
pub(crate) fn offset_ns(at: Instant, origin: Instant) -> i64 {
    let clamp = |d: Duration| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX);
    match at.checked_duration_since(origin) {
        Some(d) => clamp(d),
        None => -clamp(origin.saturating_duration_since(at)),
    }
}

/// Series by name, created on their first point.
#[derive(Debug, Default)]
struct SeriesSet {
    series: Vec<Series>,
    index: HashMap<String, usize>,
}

impl SeriesSet {
    fn push(&mut self, metric: &str, unit: &str, t: i64, v: f64) {
        if !v.is_finite() {
            return;
        }
        let i = match self.index.get(metric) {
            Some(&i) => i,
            None => {
                self.series.push(Series {
                    metric: metric.to_owned(),
                    unit: unit.to_owned(),
                    points: Vec::new(),
                });
                self.index.insert(metric.to_owned(), self.series.len() - 1);
                self.series.len() - 1
            }
        };
        self.series[i].points.push((t, v));
    }
}

/// Mean and maximum of a gauge over the samples of the run window.
#[derive(Debug, Clone, Copy, Default)]
struct Gauge {
    n: u64,
    sum: f64,
    max: f64,
}

impl Gauge {
    fn add(&mut self, v: f64) {
        if v.is_finite() {
            self.max = if self.n == 0 { v } else { self.max.max(v) };
            self.n += 1;
            self.sum += v;
        }
    }
}

/// `iostat -x` per device: (suffix of `disk.D.`, unit).
const DISK_METRICS: [(&str, &str); 16] = [
    ("r_per_s", "1/s"),
    ("w_per_s", "1/s"),
    ("rkB_per_s", "kB/s"),
    ("wkB_per_s", "kB/s"),
    ("rrqm_per_s", "1/s"),
    ("wrqm_per_s", "1/s"),
    ("r_await_ms", "ms"),
    ("w_await_ms", "ms"),
    ("rareq_sz_kB", "kB"),
    ("wareq_sz_kB", "kB"),
    ("aqu_sz", "requests"),
    ("util_pct", "%"),
    ("d_per_s", "1/s"),
    ("dkB_per_s", "kB/s"),
    ("f_per_s", "1/s"),
    ("f_await_ms", "ms"),
];

/// The [`DISK_METRICS`] values of one interval (`None`: the kernel has no such counters).
fn disk_values(d: &DiskDelta) -> [Option<f64>; 16] {
    let io = d.iostat();
    [
        Some(io.r_s),
        Some(io.w_s),
        Some(io.rkb_s),
        Some(io.wkb_s),
        Some(io.rrqm_s),
        Some(io.wrqm_s),
        Some(io.r_await),
        Some(io.w_await),
        Some(io.rareq_sz),
        Some(io.wareq_sz),
        Some(io.aqu_sz),
        Some(io.util),
        io.discard.map(|x| x.d_s),
        io.discard.map(|x| x.dkb_s),
        io.flush.map(|x| x.f_s),
        io.flush.map(|x| x.f_await),
    ]
}

/// One watched device.
#[derive(Debug)]
struct DiskTrack {
    name: String,
    /// `disk.NAME.SUFFIX` for each of [`DISK_METRICS`], built once.
    names: Vec<String>,
    /// Last reading where the device existed.
    last: Option<(Instant, DiskStat)>,
    /// Sum of the deltas of the run's intervals.
    acc: Option<DiskCounters>,
}

/// `/proc/vmstat` series: (series name, unit, summary total name, total unit).
const VM_METRICS: [(&str, &str, &str, &str); 6] = [
    ("vm.pgfault_per_s", "1/s", "vm.pgfault", "count"),
    ("vm.pgmajfault_per_s", "1/s", "vm.pgmajfault", "count"),
    ("vm.pgpgin_kb_per_s", "kB/s", "vm.pgpgin_kb", "kB"),
    ("vm.pgpgout_kb_per_s", "kB/s", "vm.pgpgout_kb", "kB"),
    ("vm.pswpin_per_s", "pages/s", "vm.pswpin", "pages"),
    ("vm.pswpout_per_s", "pages/s", "vm.pswpout", "pages"),
];

/// Memory gauges: (name, unit).
const MEM_METRICS: [(&str, &str); 6] = [
    ("mem.used_bytes", "bytes"),
    ("mem.cached_bytes", "bytes"),
    ("mem.dirty_bytes", "bytes"),
    ("mem.writeback_bytes", "bytes"),
    ("mem.used_pct", "%"),
    ("mem.commit_pct", "%"),
];

/// PSI lines: (resource index in cpu/io/memory, `full` line, name prefix).
const PSI_LINES: [(usize, bool, &str); 5] = [
    (0, false, "psi.cpu_some"),
    (1, false, "psi.io_some"),
    (1, true, "psi.io_full"),
    (2, false, "psi.memory_some"),
    (2, true, "psi.memory_full"),
];

/// Per-process series: (name, unit).
const PROC_METRICS: [(&str, &str); 6] = [
    ("proc.ctx_voluntary_per_s", "1/s"),
    ("proc.ctx_involuntary_per_s", "1/s"),
    ("proc.minflt_per_s", "1/s"),
    ("proc.majflt_per_s", "1/s"),
    ("proc.usr_pct", "%"),
    ("proc.sys_pct", "%"),
];

/// perf series per [`Counter::ALL`]: (series name, unit, summary total name, total unit,
/// divisor of the raw count for the series and the total).
const PERF_METRICS: [(&str, &str, &str, &str, f64); 6] = [
    (
        "perf.task_clock_ms_per_s",
        "ms/s",
        "proc.task_clock_s",
        "s",
        1e6,
    ),
    (
        "perf.context_switches_per_s",
        "1/s",
        "perf.context_switches",
        "count",
        1.0,
    ),
    (
        "perf.cpu_migrations_per_s",
        "1/s",
        "perf.cpu_migrations",
        "count",
        1.0,
    ),
    (
        "perf.page_faults_per_s",
        "1/s",
        "perf.page_faults",
        "count",
        1.0,
    ),
    ("perf.cycles_per_s", "1/s", "perf.cycles", "count", 1.0),
    (
        "perf.instructions_per_s",
        "1/s",
        "perf.instructions",
        "count",
        1.0,
    ),
];
const _: () = assert!(Counter::ALL.len() == PERF_METRICS.len());

fn add_opt(acc: &mut Option<u64>, d: u64) {
    *acc = Some(acc.unwrap_or(0).saturating_add(d));
}

fn add_cpu(a: &mut CpuTimes, d: &CpuTimes) {
    a.user = a.user.saturating_add(d.user);
    a.nice = a.nice.saturating_add(d.nice);
    a.system = a.system.saturating_add(d.system);
    a.idle = a.idle.saturating_add(d.idle);
    a.iowait = a.iowait.saturating_add(d.iowait);
    a.irq = a.irq.saturating_add(d.irq);
    a.softirq = a.softirq.saturating_add(d.softirq);
    a.steal = a.steal.saturating_add(d.steal);
    a.guest = a.guest.saturating_add(d.guest);
    a.guest_nice = a.guest_nice.saturating_add(d.guest_nice);
}

/// Field-wise `later − earlier` of the process counters, `None` if one went backwards.
fn proc_delta(e: &Proc, l: &Proc) -> Option<Proc> {
    Some(Proc {
        utime: l.utime.checked_sub(e.utime)?,
        stime: l.stime.checked_sub(e.stime)?,
        minflt: l.minflt.checked_sub(e.minflt)?,
        majflt: l.majflt.checked_sub(e.majflt)?,
        voluntary: l.voluntary.checked_sub(e.voluntary)?,
        involuntary: l.involuntary.checked_sub(e.involuntary)?,
    })
}

/// Accumulates series and run totals from snapshots.
#[derive(Debug)]
pub(crate) struct Collector {
    origin: Instant,
    interval: Duration,
    clk_tck: f64,
    out: SeriesSet,
    samples: u64,
    win_start: Option<Instant>,
    win_end: Option<Instant>,
    cpu_last: Option<(Instant, CpuTimes)>,
    cpu_acc: Option<CpuTimes>,
    mem: [Gauge; 6],
    vm_last: Option<(Instant, Vm)>,
    vm_acc: [Option<u64>; 6],
    /// Last successful read of /proc/diskstats (where a device that appears next was absent).
    disk_read_at: Option<Instant>,
    disks: Vec<DiskTrack>,
    psi_last: [Option<(Instant, u64)>; 5],
    psi_acc: [Option<u64>; 5],
    psi_avg: [Gauge; 5],
    proc_last: Option<(Instant, Proc)>,
    proc_acc: Option<Proc>,
    perf_last: Option<(Instant, PerfValues)>,
    perf_acc: [Option<u64>; 6],
    notes: Vec<String>,
    noted: u32,
}

impl Collector {
    /// A collector for `devices` (kernel names), offsets relative to `origin`; `clk_tck` is
    /// `USER_HZ` for the per-process CPU times; `notes` are carried into the result.
    pub(crate) fn new(
        origin: Instant,
        interval: Duration,
        devices: &[String],
        clk_tck: u64,
        notes: Vec<String>,
    ) -> Collector {
        let mut seen = Vec::<&String>::new();
        let disks = devices
            .iter()
            .filter(|d| {
                let new = !seen.contains(d);
                seen.push(d);
                new
            })
            .map(|name| DiskTrack {
                name: name.clone(),
                names: DISK_METRICS
                    .iter()
                    .map(|(suffix, _)| format!("disk.{name}.{suffix}"))
                    .collect(),
                last: None,
                acc: None,
            })
            .collect();
        Collector {
            origin,
            interval,
            clk_tck: clk_tck.max(1) as f64,
            out: SeriesSet::default(),
            samples: 0,
            win_start: None,
            win_end: None,
            cpu_last: None,
            cpu_acc: None,
            mem: [Gauge::default(); 6],
            vm_last: None,
            vm_acc: [None; 6],
            disk_read_at: None,
            disks,
            psi_last: [None; 5],
            psi_acc: [None; 5],
            psi_avg: [Gauge::default(); 5],
            proc_last: None,
            proc_acc: None,
            perf_last: None,
            perf_acc: [None; 6],
            notes,
            noted: 0,
        }
    }

    /// Take one snapshot into account (snapshots in time order).
    pub(crate) fn push(&mut self, s: Snapshot) {
        self.samples += 1;
        for (src, e) in &s.errors {
            if self.noted & src.bit() == 0 {
                self.noted |= src.bit();
                self.notes.push(e.clone());
            }
        }
        let origin = self.origin;
        let t = offset_ns(s.at, origin);
        let now_in = s.at >= origin;
        if now_in {
            self.win_start.get_or_insert(s.at);
            self.win_end = Some(s.at);
        }
        // Interval length in seconds from an earlier reading; `None` if not positive.
        let secs = |from: Instant| {
            let d = s.at.saturating_duration_since(from).as_secs_f64();
            (d > 0.0).then_some(d)
        };
        let out = &mut self.out;

        if let Some(cur) = s.cpu {
            if let Some((pat, prev)) = self.cpu_last {
                // No tick elapsed (interval shorter than a jiffy): no percentages.
                if cur.total() > prev.total() {
                    let p = cur.percent_since(&prev);
                    out.push("cpu.usr_pct", "%", t, p.usr);
                    out.push("cpu.sys_pct", "%", t, p.sys);
                    out.push("cpu.iowait_pct", "%", t, p.iowait);
                    out.push("cpu.idle_pct", "%", t, p.idle);
                    out.push("cpu.steal_pct", "%", t, p.steal);
                    if pat >= origin {
                        add_cpu(
                            self.cpu_acc.get_or_insert_with(Default::default),
                            &cur.delta_since(&prev),
                        );
                    }
                }
            }
            self.cpu_last = Some((s.at, cur));
        }

        if let Some(m) = s.mem {
            let pct = |v: u64, of: u64| (of > 0).then(|| v as f64 / of as f64 * 100.0);
            let vals = [
                Some(m.used as f64),
                Some(m.cached as f64),
                Some(m.dirty as f64),
                Some(m.writeback as f64),
                pct(m.used, m.total),
                m.commit.and_then(|(c, of)| pct(c, of)),
            ];
            for (i, v) in vals.into_iter().enumerate() {
                if let Some(v) = v {
                    out.push(MEM_METRICS[i].0, MEM_METRICS[i].1, t, v);
                    if now_in {
                        self.mem[i].add(v);
                    }
                }
            }
        }

        if let Some(cur) = s.vm {
            if let Some((pat, prev)) = self.vm_last {
                if let Some(dt) = secs(pat) {
                    for (i, (e, l)) in prev.iter().zip(cur.iter()).enumerate() {
                        let (Some(e), Some(l)) = (e, l) else { continue };
                        // A counter going back (overflow, never seen on 64-bit): skip it.
                        let Some(d) = l.checked_sub(*e) else { continue };
                        out.push(VM_METRICS[i].0, VM_METRICS[i].1, t, d as f64 / dt);
                        if pat >= origin {
                            add_opt(&mut self.vm_acc[i], d);
                        }
                    }
                }
            }
            self.vm_last = Some((s.at, cur));
        }

        if let Some(list) = &s.disks {
            for track in &mut self.disks {
                let Some(cur) = list.iter().find(|d| d.name == track.name) else {
                    // Gone (or not there yet): its series stops here.
                    track.last = None;
                    continue;
                };
                let delta = match &track.last {
                    Some((pat, prev)) if prev.dev == cur.dev => secs(*pat).and_then(|_| {
                        let dt = s.at.saturating_duration_since(*pat);
                        DiskDelta::between_checked(prev, cur, dt).map(|d| (*pat, d))
                    }),
                    // New here (appeared, or its name now belongs to another device number):
                    // its counters started within the interval since the last read.
                    _ => self.disk_read_at.and_then(|pat| {
                        secs(pat).map(|_| {
                            (
                                pat,
                                DiskDelta::first_seen(cur, s.at.saturating_duration_since(pat)),
                            )
                        })
                    }),
                };
                if let Some((pat, d)) = delta {
                    for (i, v) in disk_values(&d).into_iter().enumerate() {
                        if let Some(v) = v {
                            out.push(&track.names[i], DISK_METRICS[i].1, t, v);
                        }
                    }
                    if pat >= origin {
                        track
                            .acc
                            .get_or_insert_with(Default::default)
                            .accumulate(&d.delta);
                    }
                }
                track.last = Some((s.at, cur.clone()));
            }
            self.disk_read_at = Some(s.at);
        }

        for (k, &(res, full, name)) in PSI_LINES.iter().enumerate() {
            let Some(p) = &s.psi[res] else { continue };
            let Some(line) = (if full { p.full } else { Some(p.some) }) else {
                continue;
            };
            let avg_name = [name, "_avg10"].concat();
            out.push(&avg_name, "%", t, line.avg10);
            if now_in {
                self.psi_avg[k].add(line.avg10);
            }
            if let Some((pat, prev)) = self.psi_last[k] {
                if let (Some(dt), Some(d)) = (secs(pat), line.total_us.checked_sub(prev)) {
                    out.push(&[name, "_us_per_s"].concat(), "us/s", t, d as f64 / dt);
                    if pat >= origin {
                        add_opt(&mut self.psi_acc[k], d);
                    }
                }
            }
            self.psi_last[k] = Some((s.at, line.total_us));
        }

        if let Some(cur) = s.proc_ {
            if let Some((pat, prev)) = self.proc_last {
                if let (Some(dt), Some(d)) = (secs(pat), proc_delta(&prev, &cur)) {
                    let hz = self.clk_tck;
                    let vals = [
                        d.voluntary as f64 / dt,
                        d.involuntary as f64 / dt,
                        d.minflt as f64 / dt,
                        d.majflt as f64 / dt,
                        d.utime as f64 / hz / dt * 100.0,
                        d.stime as f64 / hz / dt * 100.0,
                    ];
                    for (i, v) in vals.into_iter().enumerate() {
                        out.push(PROC_METRICS[i].0, PROC_METRICS[i].1, t, v);
                    }
                    if pat >= origin {
                        let a = self.proc_acc.get_or_insert_with(Default::default);
                        a.utime = a.utime.saturating_add(d.utime);
                        a.stime = a.stime.saturating_add(d.stime);
                        a.minflt = a.minflt.saturating_add(d.minflt);
                        a.majflt = a.majflt.saturating_add(d.majflt);
                        a.voluntary = a.voluntary.saturating_add(d.voluntary);
                        a.involuntary = a.involuntary.saturating_add(d.involuntary);
                    }
                }
            }
            self.proc_last = Some((s.at, cur));
        }

        if let Some(cur) = s.perf {
            if let Some((pat, prev)) = self.perf_last {
                if let Some(dt) = secs(pat) {
                    for (i, (e, l)) in prev.iter().zip(cur.iter()).enumerate() {
                        let (Some(e), Some(l)) = (e, l) else { continue };
                        let Some(d) = l.checked_sub(*e) else { continue };
                        let (name, unit, _, _, div) = PERF_METRICS[i];
                        out.push(name, unit, t, d as f64 / div / dt);
                        if pat >= origin {
                            add_opt(&mut self.perf_acc[i], d);
                        }
                    }
                }
            }
            self.perf_last = Some((s.at, cur));
        }
    }

    /// The series and the summary over the run window.
    pub(crate) fn finish(self) -> Samples {
        let mut sum: Vec<(String, f64, String)> = Vec::new();
        let mut put = |m: &str, v: f64, u: &str| {
            if v.is_finite() {
                sum.push((m.to_owned(), v, u.to_owned()));
            }
        };
        let window = match (self.win_start, self.win_end) {
            (Some(a), Some(b)) => b.saturating_duration_since(a),
            _ => Duration::ZERO,
        };
        let dur = window.as_secs_f64();
        put("sampler.samples", self.samples as f64, "count");
        put("sampler.interval_s", self.interval.as_secs_f64(), "s");
        put("sampler.window_s", dur, "s");
        // Whole-run rate of a total; only over a window of positive length.
        let rate = |n: f64| (dur > 0.0).then(|| n / dur);

        if let Some(c) = &self.cpu_acc {
            if c.total() > 0 {
                let p = c.percent_since(&CpuTimes::default());
                put("cpu.usr_pct", p.usr, "%");
                put("cpu.sys_pct", p.sys, "%");
                put("cpu.iowait_pct", p.iowait, "%");
                put("cpu.idle_pct", p.idle, "%");
                put("cpu.steal_pct", p.steal, "%");
                let hz = self.clk_tck;
                let busy = c.user + c.nice + c.system + c.irq + c.softirq;
                put("cpu.busy_s", busy as f64 / hz, "s");
                put("cpu.total_s", c.total() as f64 / hz, "s");
            }
        }

        for (i, g) in self.mem.iter().enumerate() {
            if g.n > 0 {
                let (name, unit) = MEM_METRICS[i];
                put(&[name, "_avg"].concat(), g.sum / g.n as f64, unit);
                put(&[name, "_max"].concat(), g.max, unit);
            }
        }

        for (i, acc) in self.vm_acc.iter().enumerate() {
            if let Some(n) = *acc {
                let (name, unit, total, tunit) = VM_METRICS[i];
                put(total, n as f64, tunit);
                if let Some(r) = rate(n as f64) {
                    put(name, r, unit);
                }
            }
        }

        for track in &self.disks {
            let Some(acc) = &track.acc else { continue };
            let p = |s: &str| format!("disk.{}.{s}", track.name);
            put(&p("reads"), acc.reads as f64, "count");
            put(&p("writes"), acc.writes as f64, "count");
            put(&p("reads_merged"), acc.reads_merged as f64, "count");
            put(&p("writes_merged"), acc.writes_merged as f64, "count");
            put(&p("read_bytes"), (acc.sectors_read * 512) as f64, "bytes");
            put(
                &p("write_bytes"),
                (acc.sectors_written * 512) as f64,
                "bytes",
            );
            put(&p("busy_ms"), acc.io_ms as f64, "ms");
            if let Some(d) = acc.discard {
                put(&p("discards"), d.discards as f64, "count");
                put(
                    &p("discard_bytes"),
                    (d.sectors_discarded * 512) as f64,
                    "bytes",
                );
            }
            if let Some(f) = acc.flush {
                put(&p("flushes"), f.flushes as f64, "count");
            }
            if dur > 0.0 {
                let d = DiskDelta {
                    dev: track
                        .last
                        .as_ref()
                        .map_or(iolab_sys::DevT::new(0, 0), |l| l.1.dev),
                    name: track.name.clone(),
                    dt: window,
                    baseline: crate::diskstats::Baseline::Previous,
                    delta: *acc,
                };
                for (i, v) in disk_values(&d).into_iter().enumerate() {
                    if let Some(v) = v {
                        put(&track.names[i], v, DISK_METRICS[i].1);
                    }
                }
                let ios = acc.reads + acc.writes + acc.discard.map_or(0, |d| d.discards);
                put(&p("tps"), ios as f64 / dur, "1/s");
            }
        }

        for (k, &(_, _, name)) in PSI_LINES.iter().enumerate() {
            let g = &self.psi_avg[k];
            if g.n > 0 {
                put(&[name, "_avg10"].concat(), g.sum / g.n as f64, "%");
                put(&[name, "_avg10_max"].concat(), g.max, "%");
            }
            if let Some(us) = self.psi_acc[k] {
                put(&[name, "_stall_s"].concat(), us as f64 / 1e6, "s");
                if let Some(r) = rate(us as f64) {
                    put(&[name, "_us_per_s"].concat(), r, "us/s");
                    put(&[name, "_pct"].concat(), r / 1e4, "%");
                }
            }
        }

        if let Some(a) = &self.proc_acc {
            let hz = self.clk_tck;
            put("proc.cpu_s", (a.utime + a.stime) as f64 / hz, "s");
            put("proc.usr_s", a.utime as f64 / hz, "s");
            put("proc.sys_s", a.stime as f64 / hz, "s");
            put("proc.ctx_voluntary", a.voluntary as f64, "count");
            put("proc.ctx_involuntary", a.involuntary as f64, "count");
            put("proc.minflt", a.minflt as f64, "count");
            put("proc.majflt", a.majflt as f64, "count");
            let vals = [
                a.voluntary as f64,
                a.involuntary as f64,
                a.minflt as f64,
                a.majflt as f64,
                a.utime as f64 / hz * 100.0,
                a.stime as f64 / hz * 100.0,
            ];
            for (i, v) in vals.into_iter().enumerate() {
                if let Some(r) = rate(v) {
                    put(PROC_METRICS[i].0, r, PROC_METRICS[i].1);
                }
            }
        }

        for (i, acc) in self.perf_acc.iter().enumerate() {
            let Some(n) = *acc else { continue };
            let (name, unit, total, tunit, div) = PERF_METRICS[i];
            // The total of task-clock is in seconds, the others are counts.
            let t = if i == 0 { n as f64 / 1e9 } else { n as f64 };
            put(total, t, tunit);
            if let Some(r) = rate(n as f64 / div) {
                put(name, r, unit);
            }
            if i == 0 {
                if let Some(r) = rate(n as f64 / 1e9) {
                    put("perf.cpus_utilized", r, "CPUs");
                }
            }
        }

        Samples {
            series: self.out.series,
            summary: sum,
            notes: self.notes,
        }
    }
}
