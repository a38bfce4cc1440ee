//! Runs a [`Workload`]: lay out and populate its filesets, execute the master's prelude,
//! start every thread at once, run until the time is up or the quit mode says so, and merge
//! per-thread statistics by flowop name.

mod shared;
mod worker;

use iolab_kind::run::{Event, RunHooks};
use std::collections::HashMap;
use std::os::fd::AsFd;
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

use iolab_util::phrase;
use iolab_util::rng::Rng;
use iolab_util::setting::{opt, Phrase, Worded};
use iolab_workload::model::{FlowopKind, MasterAction, QuitMode, Workload};

use crate::backend::{check_iodepth, DepthError, EngineKind};
use crate::error::EngineError;
use crate::fileset::{Fileset, PopulateOpts, PopulateReport, Undo};
use crate::gate::{spawn_failed, worker_builder, AbortOnPanic, FinishLine, Gate};
use crate::stats::{merge_intervals, Bucket, LatencyHistogram};
use crate::usage::Usage;
use shared::{EventGen, GlobalCounts, Stop, SyncObjects};
use worker::{InstanceObjects, ThreadPlan};

pub use worker::AIO_DEPTH;

/// fd slots per thread (filebench's THREADFLOW_MAXFD).
pub const MAX_FD: usize = 128;
/// Width of the per-interval counters.
pub const INTERVAL: Duration = Duration::from_secs(1);

/// How to run: what the command line adds to the workload.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Overrides the workload's run time (required when the file has no `run`).
    pub duration: Option<Duration>,
    pub seed: u64,
    /// Pick files at random instead of filebench's round-robin.
    pub pick_random: bool,
    /// Threads for populating each fileset: 0 = one, or the CPUs for `paralloc` filesets.
    pub populate_threads: usize,
    /// Set from elsewhere (e.g. a signal handler) to end the run early; it then returns
    /// [`EngineError::Interrupted`] within about half a second.
    pub cancel: Option<Arc<AtomicBool>>,
    /// The backend every flowop's I/O goes through; `None` = psync.
    pub engine: Option<EngineKind>,
    /// Transfers in flight per thread on an engine that queues: the chunks of a whole-file
    /// flowop (otherwise one at a time) and the aiowrites before an aiowait (otherwise
    /// [`AIO_DEPTH`]). `None` = those defaults.
    pub iodepth: Option<u32>,
    /// Run the workload's `system` commands. `false` (for files one does not trust) skips
    /// each one and reports it through an [`Event::SystemSkipped`].
    pub run_system: bool,
}

/// An engine and options that do not go together; found before anything is created.
#[derive(Debug, thiserror::Error)]
pub enum OptionsError {
    /// An iodepth out of range, or above 1 on an engine that cannot queue.
    #[error(transparent)]
    Depth(#[from] DepthError),
    #[error(
        "flowop `{flowop}` asks for directio, which the {engine} engine cannot do: it copies \
         through the page cache"
    )]
    DirectThroughMapping { flowop: String, engine: EngineKind },
}

impl Worded for OptionsError {
    fn phrase(&self) -> Phrase {
        match self {
            OptionsError::Depth(d) => d.phrase(),
            other => Phrase::text(other.to_string()),
        }
    }

    fn advice(&self) -> Option<Phrase> {
        Some(match self {
            OptionsError::Depth(DepthError::OutOfRange(_)) => {
                Phrase::text("give an iodepth from 1 to 4096")
            }
            OptionsError::Depth(_) => phrase!(
                "add {} io_uring (the engine that queues), or drop {}",
                opt("engine"),
                opt("iodepth")
            ),
            OptionsError::DirectThroughMapping { .. } => Phrase::text(
                "use an engine that issues requests (psync, sync, io_uring), or set directio off",
            ),
        })
    }
}

/// Checks the engine options against the workload: the iodepth against the engine's
/// capabilities, and that no flowop asks for what the engine cannot do. [`run_workload`]
/// checks them first; callers may check earlier.
pub fn check_options(w: &Workload, opts: &RunOptions) -> Result<(), OptionsError> {
    let engine = opts.engine.unwrap_or_default();
    if let Some(d) = opts.iodepth {
        check_iodepth(d, engine)?;
    }
    // aiowrite goes to an io_uring on every engine that cannot queue, so it can bypass the
    // cache; everything else that names directio moves its data through the mapping.
    fn direct(ops: &[iolab_workload::model::FlowopSpec]) -> Option<&str> {
        ops.iter().find_map(|f| match &f.kind {
            FlowopKind::Composite(c) => direct(c),
            FlowopKind::AioWrite => None,
            _ => f.directio.then_some(f.name.as_str()),
        })
    }
    if engine.caps().mapped {
        let threads = w.processes.iter().flat_map(|p| &p.threads);
        if let Some(flowop) = threads.filter_map(|t| direct(&t.flowops)).next() {
            return Err(OptionsError::DirectThroughMapping {
                flowop: flowop.to_string(),
                engine,
            });
        }
    }
    Ok(())
}

/// One flowop's statistics over all threads that have it.
#[derive(Debug, Clone)]
pub struct FlowopResult {
    pub name: String,
    pub kind: &'static str,
    pub ops: u64,
    pub bytes: u64,
    pub latency: LatencyHistogram,
    /// Times no file (or directory) could be picked.
    pub ran_dry: u64,
    /// Counted in the IO summary (filebench's IO and AIO flowops).
    pub is_io: bool,
    /// A composite flowop: its ops are counted again in its steps'.
    pub is_composite: bool,
    pub is_read: bool,
    pub is_write: bool,
    /// testrandvar: samples, mean, standard deviation.
    pub samples: Option<(u64, f64, f64)>,
}

#[derive(Debug, Clone)]
pub struct WorkloadResult {
    /// From the release of the threads to the last one's end.
    pub elapsed_ns: u64,
    pub threads: usize,
    pub flowops: Vec<FlowopResult>,
    pub interval_ns: u64,
    /// Summary-counted ops and bytes per interval, all threads.
    pub intervals: Vec<Bucket>,
    pub usage: Usage,
    pub populate: Vec<(String, PopulateReport)>,
    /// Threads that ended through finishoncount/finishonbytes.
    pub finished_threads: usize,
    /// The backend the flowops ran on, and the iodepth it was given.
    pub engine: EngineKind,
    pub iodepth: Option<u32>,
}

/// What iolab itself costs per flowop: measured on an engine that does no I/O, where all the
/// time goes to picking files, drawing random numbers, timing and counting.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OwnCost {
    /// Flowops executed (composites count through their steps).
    pub flowops: u64,
    pub flowops_per_s: f64,
    /// Worker CPU time per flowop.
    pub cpu_ns_per_flowop: f64,
}

impl WorkloadResult {
    /// iolab's own cost per flowop, when the engine did no I/O (so that is all it measured).
    pub fn own_cost(&self) -> Option<OwnCost> {
        if !self.engine.caps().no_io {
            return None;
        }
        let flowops: u64 = self
            .flowops
            .iter()
            .filter(|f| !f.is_composite)
            .map(|f| f.ops)
            .sum();
        let secs = (self.elapsed_ns as f64 / 1e9).max(f64::MIN_POSITIVE);
        Some(OwnCost {
            flowops,
            flowops_per_s: flowops as f64 / secs,
            cpu_ns_per_flowop: if flowops > 0 {
                self.usage.cpu_ns() as f64 / flowops as f64
            } else {
                0.0
            },
        })
    }

    /// filebench's IO Summary figures: (ops, read ops, write ops, bytes, total latency ns).
    pub fn io_summary(&self) -> (u64, u64, u64, u64, f64) {
        let mut s = (0, 0, 0, 0, 0.0);
        for f in self.flowops.iter().filter(|f| f.is_io) {
            s.0 += f.ops;
            if f.is_read {
                s.1 += f.ops;
            }
            if f.is_write {
                s.2 += f.ops;
            }
            s.3 += f.bytes;
            s.4 += f.latency.summary().mean_ns * f.ops as f64;
        }
        s
    }
}

/// Shared, read-mostly state of a run.
pub(crate) struct Run<'a> {
    pub filesets: Vec<Fileset>,
    pub stop: Stop,
    pub global: Option<GlobalCounts>,
    /// The event generator, started with the run (`None` without `eventgen`).
    pub events: Option<OnceLock<EventGen>>,
    pub sync: SyncObjects,
    pub pick_random: bool,
    pub workload: &'a Workload,
    pub engine: EngineKind,
    pub iodepth: Option<u32>,
}

/// Whether some flowop needs run-wide op/byte totals (a limit or finishon* without target).
fn needs_global(w: &Workload) -> bool {
    fn any(ops: &[iolab_workload::model::FlowopSpec]) -> bool {
        ops.iter().any(|f| match &f.kind {
            FlowopKind::IopsLimit
            | FlowopKind::OpsLimit
            | FlowopKind::BwLimit
            | FlowopKind::FinishOnCount
            | FlowopKind::FinishOnBytes => f.target.is_none(),
            FlowopKind::Composite(c) => any(c),
            _ => false,
        })
    }
    w.processes
        .iter()
        .flat_map(|p| &p.threads)
        .any(|t| any(&t.flowops))
}

/// Runs `w`. Populated files are left in place (as filebench does), so a second run with
/// `reuse` filesets can start without populating.
pub fn run_workload(
    w: &Workload,
    opts: &RunOptions,
    hooks: &mut dyn RunHooks,
) -> Result<WorkloadResult, EngineError> {
    let duration = opts.duration.or(w.run.duration).ok_or_else(|| {
        EngineError::Workload(format!(
            "{} has no `run` command: give the run time with --time",
            w.source
        ))
    })?;
    if w.processes
        .iter()
        .all(|p| p.instances == 0 || p.threads.iter().all(|t| t.instances == 0))
    {
        return Err(EngineError::Workload(format!(
            "{} defines no threads",
            w.source
        )));
    }
    check_options(w, opts)?;
    // An engine without I/O needs no files: the filesets exist only as laid out in memory.
    let no_io = opts.engine.unwrap_or_default().caps().no_io;

    let filesets = w
        .filesets
        .iter()
        .enumerate()
        .map(|(i, f)| Fileset::layout(f, Rng::stream(opts.seed, 0x5e7 + i as u64).next_u64()))
        .collect::<Result<Vec<Fileset>, _>>()?;
    let mut populated = vec![false; filesets.len()];
    let mut populate_reports = Vec::new();
    let mut populate_all =
        |hooks: &mut dyn RunHooks, populated: &mut Vec<bool>| -> Result<(), EngineError> {
            if no_io {
                return Ok(());
            }
            // All of them together, before any is written: one that does not fit must not be
            // found out after the others have filled the filesystem.
            let pending: Vec<&Fileset> = filesets
                .iter()
                .zip(populated.iter())
                .filter(|(_, done)| !**done)
                .map(|(fs, _)| fs)
                .collect();
            crate::fileset::check_space(&pending)?;
            let mut made: Vec<(usize, Undo)> = Vec::new();
            for (i, fs) in filesets.iter().enumerate() {
                if populated[i] {
                    continue;
                }
                let name = &w.filesets[i].name;
                hooks.event(&Event::Populating { fileset: name });
                // The run must not start while population's dirty data is still being written
                // back (filebench does not wait): sync the filesystem at the end.
                let result = fs.populate_undoable(PopulateOpts {
                    threads: opts.populate_threads,
                    order: Default::default(),
                    progress: &|_, _| {},
                    sync: true,
                    cancel: opts.cancel.as_deref(),
                });
                let (report, undo) = match result {
                    Ok(r) => r,
                    Err(e) => {
                        // The failed fileset removed its own part; the ones before it go too,
                        // so that a refused run leaves nothing behind.
                        for (j, undo) in made.into_iter().rev() {
                            filesets[j].undo(undo);
                        }
                        return Err(e.into());
                    }
                };
                made.push((i, undo));
                hooks.event(&Event::Populated { fileset: name });
                populate_reports.push((name.clone(), report));
                populated[i] = true;
            }
            Ok(())
        };
    for action in &w.prelude {
        match action {
            MasterAction::CreateFiles => populate_all(hooks, &mut populated)?,
            MasterAction::Echo(t) => hooks.event(&Event::Echo(t)),
            MasterAction::System(cmd) if !opts.run_system => {
                hooks.event(&Event::SystemSkipped(cmd))
            }
            MasterAction::System(cmd) => {
                hooks.event(&Event::System(cmd));
                let mut child = Command::new("/bin/sh");
                child.arg("-c").arg(cmd);
                // The command's output is not iolab's: its stdout goes to stderr, so that a
                // result on stdout (`--json`) stays parseable.
                if let Ok(fd) = std::io::stderr().as_fd().try_clone_to_owned() {
                    child.stdout(std::process::Stdio::from(fd));
                }
                match child.status() {
                    Err(e) => return Err(EngineError::Workload(format!("system \"{cmd}\": {e}"))),
                    // As in filebench, a failed command does not stop the workload.
                    Ok(status) if !status.success() => hooks.event(&Event::SystemFailed {
                        command: cmd,
                        status,
                    }),
                    Ok(_) => {}
                }
            }
            // In slices, so that Ctrl-C is not held up by a long `sleep`.
            MasterAction::Sleep(d) => match opts.cancel.as_deref() {
                Some(c) if !shared::sleep_unless(c, *d) => return Err(EngineError::Interrupted),
                Some(_) => {}
                None => thread::sleep(*d),
            },
        }
    }
    populate_all(hooks, &mut populated)?;

    // Thread plans: processes × instances × threads × instances, in definition order.
    let mut objs = InstanceObjects::default();
    let mut plans = Vec::new();
    for p in &w.processes {
        for _ in 0..p.instances {
            for t in &p.threads {
                for _ in 0..t.instances {
                    plans.push(ThreadPlan::new(t, p.nice, &mut objs));
                }
            }
        }
    }
    let mut sync = SyncObjects::default();
    for (name, c) in objs.conds {
        sync.conds.entry(name).or_default().push(c);
    }
    for (name, s) in objs.sems {
        sync.sems.entry(name).or_default().push(s);
    }

    let n = plans.len();
    let run = Run {
        filesets,
        stop: Stop::default(),
        global: needs_global(w).then(GlobalCounts::default),
        events: w.event_rate.map(|_| OnceLock::new()),
        sync,
        pick_random: opts.pick_random,
        workload: w,
        engine: opts.engine.unwrap_or_default(),
        iodepth: opts.iodepth,
    };
    let start_cell: OnceLock<Instant> = OnceLock::new();
    // Abortable, so that a thread the OS refuses to start cannot leave the others waiting.
    let ready = Gate::new(n + 1);
    let go = Gate::new(n + 1);
    let progress: Vec<AtomicU64> = (0..n).map(|_| AtomicU64::new(0)).collect();
    let finished = AtomicU64::new(0);

    struct Out {
        stats: Vec<worker::OpStats>,
        intervals: Vec<Bucket>,
        usage: Usage,
        end: Instant,
        finished: bool,
    }

    let cancelled = || {
        opts.cancel
            .as_ref()
            .is_some_and(|c| c.load(Ordering::Relaxed))
    };
    let line = FinishLine::new(n);
    let outcomes: Vec<Result<Out, EngineError>> = thread::scope(|s| {
        let run = &run;
        let mut handles = Vec::with_capacity(n);
        for (i, plan) in plans.into_iter().enumerate() {
            let (ready, go, start_cell, progress, finished, line) =
                (&ready, &go, &start_cell, &progress[i], &finished, &line);
            let seed = Rng::stream(opts.seed, 0x7e_0000 + i as u64).next_u64();
            let h = worker_builder(format!("iolab-{}", plan.spec.name), i, Some(256 << 10))
                .spawn_scoped(s, move || {
                    let _signed = line.sign();
                    let _guard = AbortOnPanic([ready, go]);
                    let ThreadPlan {
                        spec,
                        nice,
                        mut nodes,
                        stats,
                        is_io,
                        ..
                    } = plan;
                    // Each thread's fd slots are its own (as in filebench), so its table can be.
                    crate::fdtable::make_private();
                    if !(ready.wait() && go.wait()) {
                        // Another thread could not be started (or panicked): the run is
                        // off, and that thread's error is the one reported.
                        return Ok(Out {
                            stats: Vec::new(),
                            intervals: Vec::new(),
                            usage: Usage::default(),
                            end: Instant::now(),
                            finished: false,
                        });
                    }
                    let start = *start_cell.get().expect("set before release");
                    let st = worker::Start {
                        run,
                        spec,
                        stats,
                        is_io,
                        seed,
                        start,
                        progress,
                    };
                    let ran = match worker::run_thread(st, &mut nodes, nice) {
                        Ok(ran) => ran,
                        Err(e) => {
                            run.stop.set();
                            return Err(e);
                        }
                    };
                    let done_early = ran.result.is_ok() && !run.stop.is_set();
                    if done_early {
                        finished.fetch_add(1, Ordering::Relaxed);
                    }
                    if ran.result.is_err() {
                        run.stop.set();
                    }
                    ran.result.map(|()| Out {
                        intervals: ran.intervals,
                        stats: ran.stats,
                        usage: ran.usage,
                        end: ran.end,
                        finished: done_early,
                    })
                });
            match h {
                Ok(h) => handles.push(h),
                Err(e) => return vec![Err(spawn_failed([ready, go], handles, n, e))],
            }
        }
        if !ready.wait() {
            // A thread panicked before the start; its panic is the error.
            go.abort();
            return join_all(handles);
        }
        hooks.timed_start();
        let start = Instant::now();
        let _ = start_cell.set(start);
        if let (Some(cell), Some(rate)) = (&run.events, w.event_rate) {
            let _ = cell.set(EventGen::new(rate, start));
        }
        if !go.wait() {
            return join_all(handles);
        }
        // A run time beyond the clock's range (`--time 9999999999s`) is no limit.
        let deadline = start.checked_add(duration);
        let mut next_report = w.run.report_every.map(|(p, _)| start + p);
        loop {
            let now = Instant::now();
            let done = finished.load(Ordering::Relaxed) as usize;
            let all_ended = line.all_done();
            let quit = match w.run.quit {
                QuitMode::Timeout => false,
                QuitMode::AllDone => done == n,
                QuitMode::FirstDone => done > 0,
            };
            if deadline.is_some_and(|d| now >= d)
                || quit
                || all_ended
                || run.stop.is_set()
                || cancelled()
            {
                break;
            }
            let ops = progress.iter().map(|p| p.load(Ordering::Relaxed)).sum();
            hooks.event(&Event::Operations {
                ops,
                elapsed: now - start,
                planned: duration,
            });
            if let Some(t) = next_report {
                if now >= t {
                    hooks.event(&Event::Report {
                        ops,
                        bytes: 0,
                        elapsed: now - start,
                    });
                    next_report = w.run.report_every.map(|(p, _)| t + p);
                }
            }
            let half = now + Duration::from_millis(500);
            let wake = deadline.map_or(half, |d| d.min(half));
            thread::park_timeout(wake.saturating_duration_since(Instant::now()));
        }
        run.stop.set();
        let out = join_all(handles);
        hooks.timed_end();
        out
    });

    if cancelled() {
        return Err(EngineError::Interrupted);
    }
    let mut outs = Vec::with_capacity(n);
    for o in outcomes {
        outs.push(o?);
    }
    // Every thread started (an error above otherwise), so the start was set.
    let start = start_cell.get().copied().ok_or_else(|| {
        EngineError::WorkerPanicked("a worker thread ended before the start".into())
    })?;

    // Merge by flowop name, in order of first appearance across threads.
    let mut order: Vec<String> = Vec::new();
    let mut merged: HashMap<String, FlowopResult> = HashMap::new();
    let mut threads_meta = Vec::new();
    for p in &w.processes {
        for _ in 0..p.instances {
            for t in &p.threads {
                for _ in 0..t.instances {
                    threads_meta.push(t);
                }
            }
        }
    }
    let mut usage = Usage::default();
    let mut series = Vec::with_capacity(n);
    for (out, t) in outs.iter().zip(&threads_meta) {
        usage = usage + out.usage;
        series.push(out.intervals.clone());
        let mut flat = Vec::new();
        flatten(&t.flowops, &mut flat);
        for (st, spec) in out.stats.iter().zip(flat) {
            let e = merged.entry(spec.name.clone()).or_insert_with(|| {
                order.push(spec.name.clone());
                FlowopResult {
                    name: spec.name.clone(),
                    kind: spec.kind.name(),
                    ops: 0,
                    bytes: 0,
                    latency: LatencyHistogram::coarse(),
                    ran_dry: 0,
                    is_io: worker::counts_as_io(&spec.kind),
                    is_composite: matches!(spec.kind, FlowopKind::Composite(_)),
                    is_read: spec.kind.is_read(),
                    is_write: spec.kind.is_write(),
                    samples: None,
                }
            });
            e.ops += st.ops;
            e.bytes += st.bytes;
            e.latency.merge(&st.latency);
            e.ran_dry += st.ran_dry;
            // Sums across threads here; mean and standard deviation once all are in.
            if let Some((k, sum, sq)) = st.samples {
                let (k0, sum0, sq0) = e.samples.unwrap_or((0, 0.0, 0.0));
                e.samples = Some((k0 + k, sum0 + sum, sq0 + sq));
            }
        }
    }
    let flowops = order
        .into_iter()
        .map(|n| {
            let mut f = merged.remove(&n).expect("present");
            if let Some((k, sum, sq)) = f.samples {
                let mean = sum / k.max(1) as f64;
                let var = (sq / k.max(1) as f64 - mean * mean).max(0.0);
                f.samples = Some((k, mean, var.sqrt()));
            }
            f
        })
        .collect();
    let end = outs.iter().map(|o| o.end).max().unwrap_or(start);
    Ok(WorkloadResult {
        elapsed_ns: (end - start).as_nanos() as u64,
        threads: n,
        flowops,
        interval_ns: INTERVAL.as_nanos() as u64,
        intervals: merge_intervals(&series),
        usage,
        populate: populate_reports,
        finished_threads: outs.iter().filter(|o| o.finished).count(),
        engine: run.engine,
        iodepth: run.iodepth,
    })
}

/// Joins every worker; a panic becomes that worker's error.
fn join_all<T>(
    handles: Vec<thread::ScopedJoinHandle<'_, Result<T, EngineError>>>,
) -> Vec<Result<T, EngineError>> {
    handles
        .into_iter()
        .map(|h| h.join().unwrap_or_else(|p| Err(EngineError::from_panic(p))))
        .collect()
}

/// Flowops of a thread in the pre-order its statistics slots were assigned.
fn flatten<'a>(
    ops: &'a [iolab_workload::model::FlowopSpec],
    out: &mut Vec<&'a iolab_workload::model::FlowopSpec>,
) {
    for f in ops {
        out.push(f);
        if let FlowopKind::Composite(c) = &f.kind {
            flatten(c, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fileset::FilesetError;
    use crate::gate::FAIL_SPAWN_FROM;
    use iolab_workload::model::{FilesetSpec, FlowopSpec, ProcessSpec, RunSpec, ThreadSpec};
    use iolab_workload::rv::Rv;
    use std::path::Path;
    use std::sync::mpsc;

    fn flowop(kind: FlowopKind, name: &str, iosize: u64) -> FlowopSpec {
        FlowopSpec {
            kind,
            name: name.into(),
            fileset: Some(0),
            fd: None,
            srcfd: None,
            iosize: Rv::Const(iosize),
            workingset: Rv::Const(0),
            random: false,
            dsync: false,
            directio: false,
            noreadahead: false,
            opennext: false,
            indexed: None,
            iters: 1,
            value: Rv::Const(0),
            target: None,
            blocking: false,
            highwater: 1,
            at: None,
        }
    }

    /// One fileset of four 8 KiB files in `dir`, and `threads` threads running `ops`.
    fn workload(dir: &Path, threads: u32, ops: Vec<FlowopSpec>) -> Workload {
        Workload {
            source: "test.f".into(),
            filesets: vec![FilesetSpec {
                name: "set".into(),
                path: dir.to_path_buf(),
                entries: 4,
                leafdirs: 0,
                size: Rv::Const(8192),
                dirwidth: Rv::Const(10),
                dirgamma: 0,
                dirdepth: None,
                prealloc_pct: 100,
                paralloc: false,
                reuse: false,
                trusttree: false,
                readonly: false,
                writeonly: false,
                single_file: false,
            }],
            processes: vec![ProcessSpec {
                name: "p".into(),
                instances: 1,
                nice: 0,
                threads: vec![ThreadSpec {
                    name: "t".into(),
                    instances: threads,
                    memsize: 0,
                    ioprio: None,
                    flowops: ops,
                }],
            }],
            run: RunSpec {
                duration: Some(Duration::from_millis(300)),
                quit: QuitMode::Timeout,
                report_every: None,
            },
            event_rate: None,
            prelude: Vec::new(),
            lathist: false,
        }
    }

    fn opts() -> RunOptions {
        RunOptions {
            duration: None,
            seed: 1,
            pick_random: false,
            populate_threads: 1,
            cancel: None,
            engine: None,
            iodepth: None,
            run_system: true,
        }
    }

    #[test]
    fn a_refused_thread_fails_the_run_without_a_panic_or_a_hang() {
        let dir = tempfile::tempdir().unwrap();
        let w = workload(dir.path(), 10, vec![flowop(FlowopKind::Read, "rd", 4096)]);
        let (tx, rx) = mpsc::channel();
        thread::spawn(move || {
            FAIL_SPAWN_FROM.with(|f| f.set(Some(6)));
            let _ = tx.send(run_workload(&w, &opts(), &mut ()).map(|_| ()));
        });
        let e = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("hung: the run never returned")
            .unwrap_err();
        assert!(
            matches!(&e, EngineError::Spawn { wanted: 10, started: 6, source }
                if source.raw_os_error() == Some(libc::EAGAIN)),
            "{e}"
        );
        assert!(!e.is_bad_input());
        assert!(e.hint().unwrap().contains("ulimit -u"));
    }

    #[test]
    fn an_iosize_too_large_to_allocate_is_an_error_not_an_abort() {
        let _hang = iolab_testkit::timeout(120);
        let dir = tempfile::tempdir().unwrap();
        // 2^62 bytes: more than any address space, whatever the overcommit policy.
        for kind in [FlowopKind::Read, FlowopKind::Write, FlowopKind::AppendFile] {
            let w = workload(dir.path(), 1, vec![flowop(kind, "big", 1 << 62)]);
            let e = run_workload(&w, &opts(), &mut ()).unwrap_err();
            assert!(
                matches!(e, EngineError::Alloc { len, .. } if len == 1 << 62),
                "{e}"
            );
            assert_eq!(
                e.to_string(),
                "cannot allocate a 4 EiB buffer for flowop `big`: out of memory"
            );
            assert!(e.is_bad_input());
            assert!(e.hint().unwrap().contains("iosize"));
        }
    }

    #[test]
    fn a_huge_run_time_is_no_panic() {
        let _hang = iolab_testkit::timeout(120);
        // `--time 9999999999999s`-like: `start + duration` would overflow an Instant.
        let dir = tempfile::tempdir().unwrap();
        let mut ops = vec![
            flowop(FlowopKind::Read, "rd", 4096),
            flowop(FlowopKind::FinishOnCount, "done", 0),
        ];
        ops[1].value = Rv::Const(50);
        let mut w = workload(dir.path(), 1, ops);
        w.run.quit = QuitMode::AllDone;
        let o = RunOptions {
            duration: Some(Duration::MAX),
            ..opts()
        };
        let r = run_workload(&w, &o, &mut ()).unwrap();
        assert_eq!(r.finished_threads, 1);
    }

    /// `run_system: false` (an untrusted file): each `system` command is reported as skipped
    /// and does not run; with `true` the same command runs.
    #[test]
    fn system_commands_can_be_skipped() {
        let _hang = iolab_testkit::timeout(120);
        #[derive(Default)]
        struct Seen {
            ran: Vec<String>,
            skipped: Vec<String>,
        }
        impl RunHooks for Seen {
            fn run_files(&mut self, _: Vec<std::path::PathBuf>) {}
            fn timed_start(&mut self) {}
            fn timed_end(&mut self) {}
            fn event(&mut self, event: &Event<'_>) {
                match *event {
                    Event::System(command) => self.ran.push(command.into()),
                    Event::SystemSkipped(command) => self.skipped.push(command.into()),
                    _ => {}
                }
            }
        }
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("MARKER");
        let cmd = format!("touch {}", marker.display());
        let mut w = workload(dir.path(), 1, vec![flowop(FlowopKind::Read, "rd", 4096)]);
        w.prelude = vec![MasterAction::System(cmd.clone())];
        let mut seen = Seen::default();
        let o = RunOptions {
            run_system: false,
            ..opts()
        };
        run_workload(&w, &o, &mut seen).unwrap();
        assert!(!marker.exists(), "a skipped command ran");
        assert_eq!((seen.ran.len(), &seen.skipped), (0, &vec![cmd.clone()]));
        let mut seen = Seen::default();
        run_workload(&w, &opts(), &mut seen).unwrap();
        assert!(marker.exists());
        assert_eq!((&seen.ran, seen.skipped.len()), (&vec![cmd], 0));
    }

    /// Issue 11: when a later fileset failed to populate, the earlier ones stayed on disk.
    /// Both kinds of failure: refused up front (all filesets together do not fit, though each
    /// would), and failing midway (ENOSPC from running out of inodes, which the space check
    /// does not count).
    #[test]
    #[ignore = "needs root: mounts a small tmpfs"]
    fn a_failed_population_leaves_no_fileset_behind() {
        let _hang = iolab_testkit::timeout(120);
        let small = iolab_testkit::Tmpfs::mount_inodes(4 << 20, 200);
        let mut w = workload(small.path(), 1, vec![flowop(FlowopKind::Read, "rd", 4096)]);
        let mut second = w.filesets[0].clone();
        second.name = "second".into();
        // Refused: 2.4 MiB + 2.4 MiB on 4 MiB.
        w.filesets[0].entries = 6;
        w.filesets[0].size = Rv::Const(400 << 10);
        second.entries = 6;
        second.size = Rv::Const(400 << 10);
        w.filesets.push(second.clone());
        let err = run_workload(&w, &opts(), &mut ()).unwrap_err();
        assert!(
            matches!(&err, EngineError::Fileset(FilesetError::NoSpace { filesets, .. }) if filesets.len() == 2),
            "{err}"
        );
        assert_eq!(std::fs::read_dir(small.path()).unwrap().count(), 0);
        // Failing midway: 300 files of 100 bytes pass the space check but not the inodes.
        w.filesets[0].size = Rv::Const(4096);
        w.filesets[1].entries = 300;
        w.filesets[1].size = Rv::Const(100);
        w.filesets[1].dirwidth = Rv::Const(20);
        let err = run_workload(&w, &opts(), &mut ()).unwrap_err();
        assert_eq!(err.os_error(), Some(libc::ENOSPC), "{err}");
        let left: Vec<_> = std::fs::read_dir(small.path()).unwrap().collect();
        assert!(left.is_empty(), "left behind: {left:?}");
        assert!(small.used() <= 4096, "{} bytes still used", small.used());
    }
}
