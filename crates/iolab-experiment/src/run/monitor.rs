//! Watching a run: the samplers (CPU, memory, vmstat, the target's disks, pressure, the
//! engine's own counters) on their own thread over the timed region, and what the checks
//! need from them. Every run goes through it: experiments and every command's runs.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use iolab_blocktrace::{BlockTrace, BlockTracer, TraceDevice, TraceOptions};
use iolab_check::{CacheDropFacts, DeviceFacts, FlowopCount, RunFacts, TimedPass};
use iolab_monitor::sampler::{devices_for, devices_for_path, Sampler, SamplerConfig, Samples};
use iolab_store::{Metric, MonitorSeries, RunRecord};

/// What to watch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MonitorOptions {
    /// Sample the machine during runs (default on).
    pub enabled: bool,
    /// Time between samples (default 1 s).
    pub interval: Duration,
    /// Trace the block layer of the run's device (tracefs; root).
    pub trace_blocks: bool,
    /// Also save the request-level trace to this file (implies `trace_blocks`).
    pub save_trace: Option<PathBuf>,
    /// Count the workload's system calls and what they moved (the syscall view; root).
    pub trace_syscalls: bool,
}

impl Default for MonitorOptions {
    fn default() -> Self {
        MonitorOptions {
            enabled: true,
            interval: Duration::from_secs(1),
            trace_blocks: false,
            save_trace: None,
            trace_syscalls: false,
        }
    }
}

/// The block devices of a run directory: `device` (a kernel name such as `loop3`) and what it
/// sits on, or the device of the filesystem holding `dir`.
pub fn run_devices(device: Option<&str>, dir: &Path) -> Vec<String> {
    match device {
        Some(d) => devices_for(d),
        None => devices_for_path(dir),
    }
}

/// The samplers and the block tracer over one timed region.
#[derive(Default)]
pub struct RunMonitor {
    device: Option<String>,
    sampler: Option<Sampler>,
    tracer: Option<BlockTracer>,
    /// Why monitoring or tracing is off or partial.
    pub notes: Vec<String>,
}

/// What a [`RunMonitor`] saw.
#[derive(Default)]
pub struct Observed {
    /// The run's own device (kernel name), whose metrics are also stored as `dev.*`.
    pub device: Option<String>,
    pub samples: Option<Samples>,
    pub trace: Option<BlockTrace>,
    pub notes: Vec<String>,
}

impl RunMonitor {
    /// Starts sampling (and tracing the first of `devices`) now; offsets count from
    /// `origin` (the timed region's start).
    /// `pid`: the process whose counters to follow (a worker's, a VM's qemu); `None`: this
    /// one.
    pub fn start(
        opts: &MonitorOptions,
        devices: Vec<String>,
        pid: Option<u32>,
        origin: Instant,
    ) -> RunMonitor {
        let mut m = RunMonitor {
            device: devices.first().cloned(),
            ..RunMonitor::default()
        };
        if opts.trace_blocks || opts.save_trace.is_some() {
            let dev = devices.first().cloned();
            match dev.as_deref().map(TraceDevice::resolve) {
                None => m
                    .notes
                    .push("block tracing is off: the run's files are on no block device".into()),
                Some(Err(e)) => m.notes.push(format!("block tracing is off: {e}")),
                Some(Ok(d)) => {
                    let topts = TraceOptions {
                        interval: opts.interval,
                        save: opts.save_trace.clone(),
                        ..TraceOptions::default()
                    };
                    match BlockTracer::start(&d, &topts) {
                        Ok(t) => m.tracer = Some(t),
                        Err(e) => m.notes.push(format!("block tracing is off: {e}")),
                    }
                }
            }
        }
        if opts.enabled {
            let cfg = SamplerConfig {
                interval: opts.interval,
                devices,
                pid,
                perf: true,
            };
            match Sampler::start(cfg, origin) {
                Ok(s) => m.sampler = Some(s),
                Err(e) => m.notes.push(format!("monitoring is off for this run: {e}")),
            }
        }
        m
    }

    /// Stops sampling and tracing.
    pub fn stop(mut self) -> Observed {
        let samples = self.sampler.take().map(Sampler::stop);
        let trace = match self.tracer.take().map(BlockTracer::stop) {
            Some(Ok(t)) => Some(t),
            Some(Err(e)) => {
                self.notes.push(format!("block trace lost: {e}"));
                None
            }
            None => None,
        };
        let mut notes = self.notes;
        if let Some(s) = &samples {
            // Absent hardware counters are expected on VMs, not news for the user; the
            // samples keep the note.
            notes.extend(
                s.notes
                    .iter()
                    .filter(|n| !n.contains("not reported as 0"))
                    .cloned(),
            );
        }
        Observed {
            device: self.device,
            samples,
            trace,
            notes,
        }
    }
}

/// A run's monitoring: started where the timed region starts, stopped where it ends (from
/// the engine's observer hooks), then folded into the run record with the checks' verdicts.
pub struct Watch {
    opts: MonitorOptions,
    devices: Vec<String>,
    running: Option<RunMonitor>,
    observed: Option<Observed>,
    cache_drop: Option<CacheDropFacts>,
    /// The run's blkio throttle, and what it was charged when the timed region started.
    throttle: Option<(iolab_sut::ThrottleCgroup, Option<iolab_sut::Charged>)>,
    /// What the engine used besides the page cache under a cache cap.
    cap_use: Option<iolab_sut::cgroup::CapUse>,
    /// What the throttle was charged over the timed region.
    charged: Option<iolab_sut::Charged>,
    /// How long the timed region was planned to last (the `overran` check).
    planned: Option<Duration>,
    /// The syscall view, when asked for.
    syscalls: Option<super::syscalls::SyscallView>,
    /// Where the workload ran (a container's or a VM's facts), for the checks.
    environment: Option<iolab_check::EnvFacts>,
    /// The process the workload runs in, when not this one (a container's worker, a VM).
    process: Option<u32>,
}

impl Watch {
    /// Watches `devices` (see [`run_devices`]; the first is the run's own).
    pub fn new(opts: MonitorOptions, devices: Vec<String>) -> Watch {
        Watch {
            syscalls: opts
                .trace_syscalls
                .then(super::syscalls::SyscallView::start),
            opts,
            devices,
            running: None,
            observed: None,
            cache_drop: None,
            throttle: None,
            cap_use: None,
            charged: None,
            planned: None,
            environment: None,
            process: None,
        }
    }

    /// The syscall view cannot see this run's workload (a VM's runs in its own kernel): it is
    /// off, and the run's notes say why.
    pub fn syscalls_off(&mut self, why: &str) {
        if self.syscalls.take().is_some() {
            self.syscalls = Some(super::syscalls::SyscallView::off(format!(
                "the syscall view is off: {why}"
            )));
        }
    }

    /// The workload runs in process `pid` (a VM's qemu): the process counters follow it.
    pub fn process(&mut self, pid: u32) {
        self.process = Some(pid);
    }

    /// Where the workload ran, for the checks.
    pub fn environment(&mut self, facts: iolab_check::EnvFacts) {
        self.environment = Some(facts);
    }

    /// The thread that starts the timed region only supervises another program (see
    /// [`super::syscalls::SyscallView::supervising`]).
    pub fn supervising(&mut self) {
        if let Some(v) = &mut self.syscalls {
            v.supervising();
        }
    }

    /// The workload runs in the worker process `pid` (see
    /// [`super::syscalls::SyscallView::worker`]).
    pub fn worker(&mut self, pid: u32) {
        self.process = Some(pid);
        if let Some(v) = &mut self.syscalls {
            v.worker(pid);
        }
    }

    /// Runs `f` (iolab's own output during the timed region) outside the syscall view.
    pub fn quiet<R>(&self, f: impl FnOnce() -> R) -> R {
        match &self.syscalls {
            Some(v) => v.quiet(f),
            None => f(),
        }
    }

    /// The timed region is planned to last `d` (the workload's `time`; `None`: until its work
    /// is done).
    pub fn planned(&mut self, d: Option<Duration>) {
        self.planned = d;
    }

    /// The run's device is throttled by this cgroup: count what it is charged over the
    /// timed region (`throttle.*` metrics, the `throttle-bypassed` check).
    pub fn throttled(&mut self, cg: iolab_sut::ThrottleCgroup) {
        self.throttle = Some((cg, None));
    }

    /// The cache cap's watcher stopped: what the engine used besides the page cache.
    pub fn cap_used(&mut self, u: iolab_sut::cgroup::CapUse) {
        self.cap_use = Some(u);
    }

    /// Caches were dropped before the timed region: what the drop saw, for the checks.
    pub fn caches_dropped(&mut self, r: &iolab_sut::DropReport) {
        self.cache_drop = Some(CacheDropFacts {
            cached_before_bytes: r.before.cached,
            cached_after_bytes: r.after.cached,
            shmem_before_bytes: r.before.shmem,
            shmem_after_bytes: r.after.shmem,
            run_files: r.run_after.files,
            run_bytes: r.run_after.bytes,
            run_resident_before_bytes: r.run_before.resident_bytes(),
            run_resident_after_bytes: r.run_after.resident_bytes(),
        });
    }

    /// The timed region starts now (the samplers' origin).
    pub fn start(&mut self) {
        if let Some((cg, at_start)) = &mut self.throttle {
            *at_start = cg.charged().ok();
        }
        self.running = Some(RunMonitor::start(
            &self.opts,
            std::mem::take(&mut self.devices),
            self.process,
            Instant::now(),
        ));
        // After the monitors: their threads are iolab's, not the workload's.
        if let Some(v) = &mut self.syscalls {
            v.begin();
        }
    }

    /// The timed region has ended.
    pub fn stop(&mut self) {
        if let Some(v) = &mut self.syscalls {
            v.end();
        }
        if let Some(m) = self.running.take() {
            self.observed = Some(m.stop());
        }
        if let Some((cg, Some(a))) = &self.throttle {
            self.charged = cg.charged().ok().map(|b| iolab_sut::Charged {
                read_bytes: b.read_bytes.saturating_sub(a.read_bytes),
                write_bytes: b.write_bytes.saturating_sub(a.write_bytes),
                reads: b.reads.saturating_sub(a.reads),
                writes: b.writes.saturating_sub(a.writes),
            });
        }
    }

    /// Notes about monitoring itself (sources missing, tracing off), for the user.
    pub fn notes(&self) -> Vec<String> {
        let mut notes: Vec<String> = self
            .observed
            .as_ref()
            .map_or(Vec::new(), |o| o.notes.clone());
        notes.extend(self.syscalls.as_ref().and_then(|v| v.note.clone()));
        notes
    }

    /// Adds what was observed to `rec` and sets its findings from the checks.
    pub fn finish(&mut self, rec: &mut RunRecord, intent: &Intent, device: &DeviceInfo) {
        let facts = self.finish_facts(rec, intent, device);
        rec.findings = findings(intent, &facts);
    }

    /// [`Watch::finish`] without the checks: the record gets the monitors' metrics, and the
    /// facts the checks would judge are returned (the runner may add to them first).
    pub fn finish_facts(
        &mut self,
        rec: &mut RunRecord,
        intent: &Intent,
        device: &DeviceInfo,
    ) -> RunFacts {
        let observed = self.observed.take().unwrap_or_default();
        if let Some(s) = &observed.samples {
            add_samples(rec, s, observed.device.as_deref());
        }
        if let Some(t) = &observed.trace {
            add_trace(rec, t);
        }
        if let Some(c) = self.charged.take() {
            add_charged(rec, &c);
        }
        if let Some(v) = &self.syscalls {
            v.add_metrics(rec);
        }
        let mut facts = RunFacts {
            planned_ns: self
                .planned
                .map(|d| d.as_nanos().try_into().unwrap_or(u64::MAX)),
            cache_drop: self.cache_drop.take(),
            cache_cap_own_peak_bytes: self.cap_use.map(|u| u.own_peak_bytes),
            cache_cap_waits: self.cap_use.map(|u| u.oom_waits),
            throttle_limits_writes: self
                .throttle
                .as_ref()
                .map(|(cg, _)| cg.limits.limits_writes()),
            environment: self.environment.take(),
            ..run_facts(rec, intent, device, &observed)
        };
        // The memory that could cache the run's files: a VM's own (what its kernel
        // reported), a container's limit.
        if let Some(env) = &facts.environment {
            match env.kind.as_str() {
                "vm" => facts.mem_total_bytes = env.memory_limit_bytes.or(facts.mem_total_bytes),
                "container" if env.memory_limit_bytes.is_some() => {
                    facts.cgroup_cache_limit_bytes = env.memory_limit_bytes
                }
                _ => {}
            }
        }
        facts
    }
}

/// Adds what the blkio throttle was charged over the timed region: `throttle.*` run
/// metrics (the I/O the limits applied to; see iolab_sut::throttle for what escapes them).
pub fn add_charged(record: &mut RunRecord, c: &iolab_sut::Charged) {
    let m = &mut record.metrics;
    let mut put =
        |n: &str, v: u64, u: &str| m.push(Metric::new(format!("throttle.{n}"), v as f64, u));
    put("charged_read_bytes", c.read_bytes, "B");
    put("charged_write_bytes", c.write_bytes, "B");
    put("charged_reads", c.reads, "");
    put("charged_writes", c.writes, "");
}

/// Adds a block trace to a run record: `trace.*` run metrics, a row of the flowop table
/// named `block trace` (kind `trace`: requests, bytes, the request-size histogram as
/// `(largest size in the bucket, count)`, the issue→complete latency, and the whole summary
/// in its extra JSON), and per-interval series.
pub fn add_trace(record: &mut RunRecord, t: &BlockTrace) {
    let m = &mut record.metrics;
    let mut put = |n: &str, v: f64, u: &str| m.push(Metric::new(format!("trace.{n}"), v, u));
    put("reads", t.reads.requests as f64, "");
    put("writes", t.writes.requests as f64, "");
    put("read_bytes", t.reads.bytes as f64, "B");
    put("write_bytes", t.writes.bytes as f64, "B");
    put("flushes", t.flushes.requests as f64, "");
    put("fua", t.fua.requests as f64, "");
    put("discards", t.discards.requests as f64, "");
    put("max_inflight", f64::from(t.max_inflight), "");
    put("lost_events", t.lost.total as f64, "");
    let requests = t.reads.requests + t.writes.requests;
    let sequential = t.reads.sequential + t.writes.sequential;
    if requests > 0 {
        put(
            "sequential_pct",
            sequential as f64 / requests as f64 * 100.0,
            "%",
        );
    }
    let lat = t.latency.as_ref();
    let mut summary = serde_json::to_value(t).unwrap_or_default();
    if let Some(o) = summary.as_object_mut() {
        o.remove("records");
    }
    record.flowops.push(iolab_store::FlowopStats {
        name: "block trace".into(),
        kind: "trace".into(),
        ops: requests,
        bytes: t.reads.bytes + t.writes.bytes,
        errors: t.errors,
        latency: iolab_store::LatencyStats {
            count: lat.map_or(0, |l| l.count),
            mean_ns: lat.map_or(f64::NAN, |l| l.mean_ns),
            stdev_ns: f64::NAN,
            min_ns: lat.map_or(0, |l| l.min_ns),
            p50_ns: lat.map_or(0, |l| l.p50_ns),
            p90_ns: lat.map_or(0, |l| l.p90_ns),
            p99_ns: lat.map_or(0, |l| l.p99_ns),
            p999_ns: lat.map_or(0, |l| l.p999_ns),
            max_ns: lat.map_or(0, |l| l.max_ns),
        },
        histogram: t
            .sizes
            .buckets
            .iter()
            .map(|b| ((b.low * 2).max(1) - 1, b.count))
            .collect(),
        extra: summary,
    });
    let secs = t.interval_ns as f64 / 1e9;
    if secs > 0.0 {
        let at = |i: usize| (i as i64 + 1) * t.interval_ns as i64;
        let series =
            |metric: &str, unit: &str, f: &dyn Fn(&iolab_blocktrace::IntervalStats) -> f64| {
                MonitorSeries {
                    metric: metric.into(),
                    unit: unit.into(),
                    points: t
                        .intervals
                        .iter()
                        .enumerate()
                        .map(|(i, x)| (at(i), f(x)))
                        .collect(),
                }
            };
        record
            .monitor
            .push(series("trace.read_bytes_per_s", "B/s", &|x| {
                x.read_bytes as f64 / secs
            }));
        record
            .monitor
            .push(series("trace.write_bytes_per_s", "B/s", &|x| {
                x.write_bytes as f64 / secs
            }));
        record
            .monitor
            .push(series("trace.flushes_per_s", "1/s", &|x| {
                x.flushes as f64 / secs
            }));
        record
            .monitor
            .push(series("trace.mean_inflight", "", &|x| x.mean_inflight));
    }
}

/// Adds the samples to a run record: every series, and the whole-run values as run metrics
/// (their names have a dot, the engine's do not). The run's own device (`device`, the first
/// of [`run_devices`]) is also stored as `dev.*`, so that runs whose loop device numbers
/// differ can be compared.
pub fn add_samples(record: &mut RunRecord, samples: &Samples, device: Option<&str>) {
    let prefix = device.map(|d| format!("disk.{d}."));
    let alias = |name: &str| {
        prefix
            .as_ref()
            .and_then(|p| name.strip_prefix(p.as_str()))
            .map(|rest| format!("dev.{rest}"))
    };
    for s in &samples.series {
        let names = std::iter::once(s.metric.clone()).chain(alias(&s.metric));
        for metric in names {
            record.monitor.push(MonitorSeries {
                metric,
                unit: s.unit.clone(),
                points: s.points.clone(),
            });
        }
    }
    for (name, value, unit) in &samples.summary {
        for name in std::iter::once(name.clone()).chain(alias(name)) {
            if record.metrics.iter().all(|m| m.name != name) {
                record.metrics.push(Metric::new(name, *value, unit.clone()));
            }
        }
    }
}

pub use iolab_kind::intent::Intent;

/// The device the run's files are on, for the checks.
#[derive(Debug, Clone, Default)]
pub struct DeviceInfo {
    /// Kernel name (`loop3`, `vda`).
    pub name: Option<String>,
    pub is_loop: Option<bool>,
    pub loop_direct_io: Option<bool>,
    pub volatile_write_cache: Option<bool>,
    pub fs_type: Option<String>,
}

impl DeviceInfo {
    /// From the environment probe of the run directory.
    pub fn probe(dir: &Path) -> DeviceInfo {
        let env = iolab_monitor::environment::StorageEnv::probe(dir);
        let v = serde_json::to_value(&env).unwrap_or_default();
        let dev = &v["device"];
        let name = dev["name"].as_str().map(str::to_owned);
        let is_loop = name.as_ref().map(|n| n.starts_with("loop"));
        DeviceInfo {
            loop_direct_io: dev["loop"]["dio"].as_bool(),
            volatile_write_cache: dev["queue"]["write_cache"]
                .as_str()
                .map(|w| w.contains("back")),
            fs_type: v["mount"]["fs_type"].as_str().map(str::to_owned),
            name,
            is_loop,
        }
    }
}

fn read_u64(path: &str) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// Shortest sampled window over which CPU shares are judged (100 ticks per CPU).
pub const MIN_CPU_WINDOW_S: f64 = 1.0;

/// The facts of a finished run, from what the engine did (`record`'s metrics, flowops and
/// series), what was meant, and what the samplers saw.
pub fn run_facts(
    record: &RunRecord,
    intent: &Intent,
    device: &DeviceInfo,
    observed: &Observed,
) -> RunFacts {
    let samples = observed.samples.as_ref();
    let metric = |n: &str| record.metrics.iter().find(|m| m.name == n).map(|m| m.value);
    let total = |n: &str| samples.and_then(|s| s.total(n));
    let (mut read, mut write) = (0u64, 0u64);
    let mut ran_dry = Vec::new();
    // Kinds that time each test on its own (iozone, bonnie) say so in the row's extra.
    let passes: Vec<TimedPass> = record
        .flowops
        .iter()
        .filter_map(|f| {
            Some(TimedPass {
                name: f.name.clone(),
                elapsed_ns: f.extra.get("elapsed_ns")?.as_u64()?,
            })
        })
        .collect();
    for f in &record.flowops {
        let is_read = f.extra["read"].as_bool().unwrap_or(f.kind == "read");
        let is_write = f.extra["write"].as_bool().unwrap_or(f.kind == "write");
        if is_read {
            read += f.bytes;
        }
        if is_write {
            write += f.bytes;
        }
        if let Some(n) = f.extra["ran_dry"].as_u64().filter(|n| *n > 0) {
            ran_dry.push(FlowopCount {
                flowop: f.name.clone(),
                count: n,
            });
        }
    }
    let io = record.series.iter().find(|s| s.name == "io");
    let dev_name = device.name.clone();
    let dev = |suffix: &str| {
        dev_name
            .as_ref()
            .and_then(|d| total(&format!("disk.{d}.{suffix}")))
    };
    let util_series = dev_name.as_ref().and_then(|d| {
        samples
            .and_then(|s| s.series(&format!("disk.{d}.util_pct")))
            .map(|s| s.points.iter().map(|p| p.1).collect())
    });
    // /proc/stat counts CPU time in ticks of 10 ms: under a second of run, another
    // process's share is rounding noise, so the neighbour check gets no CPU facts.
    let long_enough = total("sampler.window_s").is_some_and(|w| w >= MIN_CPU_WINDOW_S);
    let cpu_total = total("cpu.total_s").filter(|t| *t > 0.0 && long_enough);
    let usr_pct = total("cpu.usr_pct").filter(|_| long_enough);
    let meant = intent.facts();
    // Whether the write figures' timed windows include their flush: another tool's claims
    // say it in their rows (`flush_timed`), iozone's figures in theirs (`flush`).
    let writes = record.flowops.iter().filter(|f| f.kind == "write");
    let flush_timed = writes
        .filter_map(|f| {
            f.extra["flush_timed"]
                .as_bool()
                .or_else(|| f.extra["flush"].as_str().map(|m| m != "excluded"))
        })
        .reduce(|a, b| a && b);
    // iolab's iozone flushes outside its figure but inside the run: how long that took.
    let untimed_flush = record
        .flowops
        .iter()
        .filter(|f| f.kind == "write" && f.extra["flush"] == "excluded")
        .filter_map(|f| {
            Some((
                f.extra["elapsed_ns"].as_u64()?,
                f.extra["flush_ns"].as_u64()?,
            ))
        })
        .fold(None, |acc: Option<iolab_check::UntimedFlush>, (t, fl)| {
            let a = acc.unwrap_or_default();
            Some(iolab_check::UntimedFlush {
                timed_ns: a.timed_ns + t,
                flush_ns: a.flush_ns + fl,
            })
        });
    let claimed: Vec<_> = record
        .flowops
        .iter()
        .filter(|f| f.extra["view"] == "claimed")
        .collect();
    let claimed_direct = claimed.iter().find_map(|f| f.extra["direct"].as_bool());
    let claimed_seconds = claimed
        .iter()
        .find_map(|f| f.extra["seconds"].as_f64())
        .filter(|s| *s > 0.0);
    let bytes = |n: &str| metric(n).filter(|v| v.is_finite()).map(|v| v as u64);
    RunFacts {
        dataset_advice: meant.dataset_advice,
        access: meant.access,
        reads_cold: meant.reads_cold,
        o_direct: meant.o_direct.or(claimed_direct),
        cache_purged_each_pass: meant.cache_purged_each_pass,
        sync_requested: meant.sync_requested,
        sync_scope: meant.sync_scope,
        writes_in_flight_per_file: intent.writes_in_flight_per_file,
        app_read_bytes: Some(read),
        app_write_bytes: Some(write),
        app_ops: metric("ops").map(|v| v as u64),
        app_claimed: Some(!claimed.is_empty()),
        flush_timed,
        untimed_flush,
        claimed_seconds,
        syscall_read_bytes: bytes("sys.read_bytes"),
        syscall_write_bytes: bytes("sys.write_bytes"),
        syscall_async_io: metric("sys.async_calls").map(|n| n > 0.0),
        elapsed_ns: Some(record.run.elapsed_ns),
        planned_ns: None,
        passes: (!passes.is_empty()).then_some(passes),
        engine_threads: intent.threads,
        // The worker threads' own rusage: the process's task-clock also counts the main and
        // sampler threads, and thread start-up, which dominate short runs.
        engine_task_clock_ns: None,
        engine_usr_sys_ns: metric("cpu_usr_s")
            .zip(metric("cpu_sys_s"))
            .map(|(u, s)| ((u + s) * 1e9) as u64),
        dataset_bytes: meant.dataset_bytes,
        mem_total_bytes: iolab_sys::meminfo::read().ok().map(|m| m.mem_total),
        cgroup_cache_limit_bytes: meant.cgroup_cache_limit_bytes,
        cache_cap_own_peak_bytes: None,
        cache_cap_waits: None,
        // A plan's estimate: after the run, what the cap did is in its environment.
        engine_memory_bytes: None,
        cached_at_start_bytes: None,
        caches_dropped: Some(intent.caches_dropped),
        cache_drop: None,
        device: DeviceFacts {
            name: dev_name.clone(),
            read_bytes: dev("read_bytes").map(|v| v as u64),
            write_bytes: dev("write_bytes").map(|v| v as u64),
            reads: dev("reads").map(|v| v as u64),
            writes: dev("writes").map(|v| v as u64),
            flushes: dev("flushes").map(|v| v as u64),
            fua_writes: observed.trace.as_ref().map(|t| t.fua.requests),
            util_avg_pct: dev("util_pct"),
            util_series_pct: util_series,
            volatile_write_cache: device.volatile_write_cache,
            is_loop: device.is_loop,
            loop_direct_io: device.loop_direct_io,
        },
        fs_type: device.fs_type.clone(),
        // Neighbours are judged on user time: the kernel's own work for the run (loop and
        // writeback threads, interrupts) is system time and is not a neighbour.
        cpu_busy_pct: usr_pct,
        engine_cpu_pct: total("proc.usr_s")
            .zip(cpu_total)
            .map(|(u, t)| u / t * 100.0),
        other_io_bytes: None,
        dirty_expire_centisecs: read_u64("/proc/sys/vm/dirty_expire_centisecs"),
        dirty_writeback_centisecs: read_u64("/proc/sys/vm/dirty_writeback_centisecs"),
        psi_memory_full_pct: total("psi.memory_full_pct"),
        psi_memory_some_pct: total("psi.memory_some_pct"),
        interval_ops: io.map(|s| s.ops.iter().map(|&o| o as f64).collect()),
        interval_ns: io.map(|s| s.width_ns),
        ran_dry: Some(ran_dry),
        ran_dry_ends_thread: None,
        skipped_system: intent.skipped_system.clone(),
        throttle_limits_writes: None,
        throttle_charged_write_bytes: metric("throttle.charged_write_bytes").map(|v| v as u64),
        environment: None,
        ranks: None,
        stopping: None,
    }
}

/// The checks' findings about a run, as the database stores them.
pub fn findings(intent: &Intent, facts: &RunFacts) -> Vec<iolab_store::Finding> {
    if intent.no_io {
        return Vec::new();
    }
    iolab_check::run_checks(facts)
        .into_iter()
        .map(to_store)
        .collect()
}

/// A check's finding as the database stores it.
pub fn to_store(f: iolab_check::Finding) -> iolab_store::Finding {
    iolab_store::Finding {
        check: f.id.to_string(),
        severity: match f.severity {
            iolab_check::Severity::Info => iolab_store::Severity::Info,
            iolab_check::Severity::Warning => iolab_store::Severity::Warning,
            iolab_check::Severity::Error => iolab_store::Severity::Error,
        },
        evidence: f.evidence,
        explanation: f.explanation,
        fix: f.fix,
    }
}
