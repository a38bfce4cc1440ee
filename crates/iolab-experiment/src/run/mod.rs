//! Executes an [`ExperimentPlan`]: for each run, prepare the system under test, run the
//! workload with the engine, store the run, and decide with the stopping rule whether the
//! configuration needs another repetition.
//!
//! Scheduling is by rounds. In round `r` every configuration that has not stopped runs its
//! repetition `r`; with [`Order::Random`] the configurations of a round are shuffled with a
//! seed derived from the experiment seed and `r` (so drift spreads over all of them, and the
//! order is reproducible), with [`Order::Sequential`] a configuration runs all its
//! repetitions before the next one starts.
//!
//! Every run is written in one transaction when it ends (ok, failed or interrupted), so a
//! crash loses at most the run in flight; `resume` continues an unfinished experiment from
//! the database, never repeating a repetition that has an ok run.

pub mod engine;
pub mod monitor;
pub use iolab_kind::record;
pub mod saved_trace;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use iolab_stats::{Decision, StopReason, Welford};
use iolab_store::{
    ConfigId, ConfigOutcome, ExperimentId, ExperimentStatus, Metric, NewConfig, NewExperiment,
    NewRun, RunRecord, RunStatus, Store, StoreError, Timestamp,
};
use iolab_sut::{Prepared, Sut, SutOptions};
use iolab_workload::rng::{mix64, Rng};
use serde_json::{json, Value};

use engine::Hooks;
pub use iolab_kind::run::{Event, NoSut, Remount, RunCtx, RunFailure, RunHooks, SutControl};
use monitor::{DeviceInfo, MonitorOptions, Watch};

use crate::plan::{ConfigPlan, ExperimentPlan, Order};

/// How to run.
#[derive(Debug, Clone)]
pub struct RunnerOptions {
    /// Journal, mount points and images of the SUT session.
    pub sut: SutOptions,
    /// Set (e.g. by a SIGINT handler) to stop: the run in flight ends within about a
    /// second, is stored as interrupted, and everything is put back.
    pub cancel: Arc<AtomicBool>,
    /// Continue the newest unfinished experiment of the same file instead of starting one.
    pub resume: bool,
    /// Stored with the experiment.
    pub iolab_version: String,
    /// Samplers and block tracing during each run.
    pub monitor: MonitorOptions,
}

/// Why an experiment could not run at all (a failed *run* is stored, not an error).
#[derive(Debug, thiserror::Error)]
pub enum RunnerError {
    #[error("{0}")]
    Store(#[from] StoreError),
    #[error("system under test: {0}")]
    Sut(#[from] iolab_sut::Error),
    #[error("nothing to resume: the database has no unfinished experiment from {0}")]
    NothingToResume(String),
    #[error(
        "experiment {id} was started from a different version of {source_file}: its \
         configurations or settings changed"
    )]
    ResumeMismatch { id: i64, source_file: String },
    #[error("{0}")]
    NeedsRoot(String),
}

impl RunnerError {
    /// What to do about it.
    pub fn hint(&self) -> Option<String> {
        match self {
            RunnerError::NothingToResume(_) => {
                Some("run it without --resume to start the experiment".into())
            }
            RunnerError::ResumeMismatch { .. } => Some(
                "run without --resume to start a new experiment, or restore the file as it was"
                    .into(),
            ),
            RunnerError::NeedsRoot(_) => Some("run iolab as root (sudo)".into()),
            RunnerError::Sut(_) | RunnerError::Store(_) => None,
        }
    }

    /// True when the input (or how iolab was invoked) is at fault: exit code 2.
    pub fn is_bad_input(&self) -> bool {
        match self {
            RunnerError::NothingToResume(_)
            | RunnerError::ResumeMismatch { .. }
            | RunnerError::NeedsRoot(_) => true,
            RunnerError::Sut(e) => e.is_bad_input(),
            RunnerError::Store(_) => false,
        }
    }
}

/// Where a run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Creating and mounting the filesystem, setting tunables.
    Preparing,
    /// The engine is populating filesets / filling files.
    Populating,
    /// Dropping the page cache before the timed region.
    DroppingCaches,
    /// The timed region.
    Running,
    /// Unmounting and restoring.
    TearingDown,
}

/// A run as the progress display sees it.
#[derive(Debug, Clone)]
pub struct RunInfo {
    pub config: String,
    /// 0-based index of the configuration in the plan.
    pub config_index: usize,
    pub configs: usize,
    /// 0-based repetition; for a warm-up run, the warm-up number.
    pub repetition: u32,
    pub warmup: bool,
    /// Most repetitions a configuration may get.
    pub max: u32,
    /// Measured runs finished in the whole experiment (this session and before).
    pub runs_done: u64,
    /// Upper bound of measured runs left (configurations × max, minus what is done or
    /// stopped).
    pub runs_left_max: u64,
    /// This configuration's metric so far: (n, mean, relative CI half-width).
    pub ci: Option<(u64, f64, f64)>,
    /// Mean duration of this session's runs so far, including preparation.
    pub mean_run_time: Option<Duration>,
}

/// How one run ended.
#[derive(Debug, Clone)]
pub struct RunEnd {
    pub status: RunStatus,
    /// Why it failed (with the hint, as stored).
    pub error: Option<String>,
    /// For a failed run: what failed, what to do, and whose fault it was.
    pub failure: Option<RunFailure>,
    /// The stopping rule's metric, for an ok run.
    pub metric: Option<f64>,
    /// The configuration's decision after this run (ok runs only).
    pub decision: Option<Decision>,
    /// What the checks found.
    pub findings: Vec<iolab_store::Finding>,
    /// Every metric the run recorded (the engine's and the monitors' whole-run values).
    pub metrics: Vec<Metric>,
    /// The run's number ([`RunCtx::number`]): a command that kept its runs' outputs finds
    /// this run's by it.
    pub number: u64,
}

/// Callbacks for progress display, called from the runner's thread.
pub trait RunnerObserver {
    /// The experiment is in the database (new or resumed, with how many ok runs it had).
    fn experiment(&mut self, _id: ExperimentId, _resumed_runs: Option<u64>) {}
    fn run_started(&mut self, _run: &RunInfo) {}
    fn phase(&mut self, _phase: Phase) {}
    /// During the timed region: fraction done (0..1, by time or by records), elapsed.
    fn progress(&mut self, _fraction: f64, _elapsed: Duration) {}
    fn run_ended(&mut self, _run: &RunInfo, _end: &RunEnd) {}
    fn config_finished(&mut self, _label: &str, _outcome: &ConfigOutcome) {}
    /// What the workload reports during a run: files being made, its `echo` and `system`
    /// lines, progress in its own units, the timed region's edges.
    fn event(&mut self, _event: &Event<'_>) {}
    /// Something worth telling that is not an error (e.g. a teardown step that failed
    /// and stays in the journal).
    fn warn(&mut self, _message: &str) {}
    /// About monitoring itself (a source missing, tracing off); by default a warning.
    fn note(&mut self, message: &str) {
        self.warn(message)
    }
}

impl RunnerObserver for () {}

/// What an experiment run did.
#[derive(Debug, Clone)]
pub struct ExperimentOutcome {
    pub id: ExperimentId,
    pub status: ExperimentStatus,
    pub configs: Vec<(String, Option<ConfigOutcome>)>,
    /// Runs of this session, by status.
    pub ok: u64,
    pub failed: u64,
    pub interrupted: u64,
}

/// Reasons this plan needs root, if any (checked before anything is touched).
pub fn root_requirements(plan: &ExperimentPlan) -> Vec<String> {
    use iolab_sut::Target;
    let mut why = Vec::new();
    if plan.procedure.drop_caches {
        why.push("dropping the page cache (procedure.drop_caches = true)".to_string());
    }
    if let Some(c) = plan.configs.first() {
        match &c.sut.target {
            Target::Directory(_) => {}
            Target::Tmpfs(_) => why.push("mounting a tmpfs".into()),
            Target::LoopImage(_) => why.push("attaching a loop device and mounting it".into()),
            Target::BlockDevice(_) => why.push("formatting and mounting a block device".into()),
        }
    }
    if plan.configs.iter().any(|c| !c.sut.tunables.is_empty()) {
        why.push("setting kernel tunables".into());
    }
    if plan.configs.iter().any(|c| c.sut.cache_limit.is_some()) {
        why.push("creating a memory cgroup (sut.cache_limit)".into());
    }
    if plan.procedure.save_block_trace {
        why.push("tracing the block layer (procedure.save_block_trace = true)".into());
    }
    for w in plan.configs.iter().filter_map(|c| c.workload.needs_root()) {
        if !why.contains(&w) {
            why.push(w);
        }
    }
    why
}

fn is_root() -> bool {
    // SAFETY: geteuid has no failure mode.
    unsafe { libc::geteuid() == 0 }
}

/// The seed of one run: a function of the experiment seed, the configuration and the
/// repetition only, so a resumed or repeated experiment gives each run the same seed. The
/// first measured run of the first configuration uses the experiment seed itself, so a
/// one-run experiment and `iolab micro --seed N` run with the same seed.
pub fn run_seed(experiment_seed: u64, config_index: usize, repetition: u32, warmup: bool) -> u64 {
    if (config_index, repetition, warmup) == (0, 0, false) {
        return experiment_seed;
    }
    mix64(
        experiment_seed
            ^ mix64(((config_index as u64) << 32) | u64::from(repetition))
            ^ if warmup { 0x5741_524d } else { 0 },
    )
}

/// The order of configurations in round `round` (indices into the plan).
pub fn round_order(order: Order, seed: u64, round: u32, configs: usize) -> Vec<usize> {
    let mut v: Vec<usize> = (0..configs).collect();
    if order == Order::Random {
        let mut rng = Rng::stream(seed, 0x0a7d_0000 + u64::from(round));
        for i in (1..v.len()).rev() {
            let j = (rng.next_u64() % (i as u64 + 1)) as usize;
            v.swap(i, j);
        }
    }
    v
}

struct ConfigState {
    id: ConfigId,
    acc: Welford,
    /// Repetitions with an ok run.
    ok: Vec<u32>,
    /// Time spent on this configuration's runs (this session and stored ones).
    spent: Duration,
    stopped: bool,
    warmed_up: bool,
    outcome: Option<ConfigOutcome>,
}

/// The unfinished experiment `--resume` continues: the latest from the same file with this
/// very plan (a file with stages has several experiments); failing that, the latest from the
/// file, whose differing plan says that the file changed; `None` if there is none.
pub fn unfinished(
    plan: &ExperimentPlan,
    store: &Store,
) -> Result<Option<iolab_store::Experiment>, RunnerError> {
    let mut latest = None;
    for e in store.list_experiments()?.into_iter().rev() {
        if !names_same_file(&e.source, &plan.source)
            || !matches!(
                e.status,
                ExperimentStatus::Running | ExperimentStatus::Interrupted
            )
        {
            continue;
        }
        let e = store.experiment(e.id)?;
        if e.spec == plan.resolved {
            return Ok(Some(e));
        }
        latest.get_or_insert(e);
    }
    Ok(latest)
}

/// The latest experiment stored from the same file with this very plan that completed: a
/// stage `iolab run --resume` need not run again.
pub fn completed(
    plan: &ExperimentPlan,
    store: &Store,
) -> Result<Option<ExperimentId>, RunnerError> {
    for e in store.list_experiments()?.into_iter().rev() {
        if e.status == ExperimentStatus::Done
            && names_same_file(&e.source, &plan.source)
            && store.experiment(e.id)?.spec == plan.resolved
        {
            return Ok(Some(e.id));
        }
    }
    Ok(None)
}

/// Runs (or resumes) the experiment, storing every run in `store`.
pub fn run_experiment(
    plan: &ExperimentPlan,
    store: &mut Store,
    opts: &RunnerOptions,
    obs: &mut dyn RunnerObserver,
) -> Result<ExperimentOutcome, RunnerError> {
    let need = root_requirements(plan);
    if !need.is_empty() && !is_root() {
        return Err(RunnerError::NeedsRoot(format!(
            "this experiment needs root for {}",
            need.join(", ")
        )));
    }
    preflight(plan)?;
    // Stored absolute, so that `--resume` finds it from any directory.
    let source = plan
        .source
        .canonicalize()
        .unwrap_or_else(|_| plan.source.clone())
        .display()
        .to_string();
    let rule = plan.repetitions.rule;
    let max = u32::try_from(rule.max).unwrap_or(u32::MAX);

    // The journal lock first: while another iolab holds it, nothing is stored (a new
    // experiment would stay "running" for ever). A plan that changes nothing on the machine
    // (existing directories as they are) needs no journal, and so runs beside other iolabs.
    let sut = if plan.configs.iter().any(|c| c.sut.changes_machine()) {
        Sut::open(opts.sut.clone())?
    } else {
        Sut::in_place(opts.sut.clone())
    };
    if let Some(r) = sut.startup_recovery() {
        for a in &r.actions {
            obs.warn(&format!(
                "recovered from an earlier crash: {}{}",
                a.entry.describe(),
                match &a.result {
                    Ok(_) => String::new(),
                    Err(e) => format!(" (failed: {e})"),
                }
            ));
        }
    }

    // The experiment and its configurations, new or from the database.
    let (exp, mut states) = if opts.resume {
        let (exp, states) = resume(plan, store, &source)?;
        store.set_metric_defs(exp, &plan.metrics())?;
        let done = states.iter().map(|s| s.ok.len() as u64).sum();
        obs.experiment(exp, Some(done));
        (exp, states)
    } else {
        let exp = store.create_experiment(&NewExperiment {
            name: plan.name.clone(),
            source: source.clone(),
            spec: plan.resolved.clone(),
            seed: plan.seed,
            created_at: Timestamp::now(),
            iolab_version: opts.iolab_version.clone(),
            host: host_environment(),
        })?;
        store.set_metric_defs(exp, &plan.metrics())?;
        let ids = store.add_configs(
            &plan
                .configs
                .iter()
                .map(|c| NewConfig {
                    experiment: exp,
                    label: c.label.clone(),
                    factors: c.factors.clone(),
                })
                .collect::<Vec<_>>(),
        )?;
        obs.experiment(exp, None);
        let states = ids
            .into_iter()
            .map(|id| ConfigState {
                id,
                acc: Welford::new(),
                ok: Vec::new(),
                spent: Duration::ZERO,
                stopped: false,
                warmed_up: false,
                outcome: None,
            })
            .collect();
        (exp, states)
    };

    let mut session = Session {
        plan,
        store,
        sut: &sut,
        opts,
        obs,
        kept: None,
        run_times: Vec::new(),
        ok: 0,
        failed: 0,
        interrupted: 0,
        traces: 0,
        runs: 0,
        pending_trace: None,
    };
    let result = session.rounds(&mut states, max);
    // Whatever happened, a kept filesystem goes and everything is restored.
    session.release_kept();
    let (ok, failed, interrupted) = (session.ok, session.failed, session.interrupted);
    drop(session);
    let report = sut.handle().teardown_all();
    for a in report.failures() {
        if let Err(e) = &a.result {
            obs.warn(&format!(
                "could not undo {}: {e}; `iolab recover` will retry",
                a.entry.describe()
            ));
        }
    }
    let interrupted_now = opts.cancel.load(Ordering::Relaxed);
    let status = match &result {
        Err(_) => ExperimentStatus::Failed,
        Ok(()) if interrupted_now => ExperimentStatus::Interrupted,
        Ok(()) if failed > 0 => ExperimentStatus::Failed,
        Ok(()) => ExperimentStatus::Done,
    };
    store.set_experiment_status(exp, status, Timestamp::now())?;
    result?;
    Ok(ExperimentOutcome {
        id: exp,
        status,
        configs: plan
            .configs
            .iter()
            .zip(&states)
            .map(|(c, s)| (c.label.clone(), s.outcome.clone()))
            .collect(),
        ok,
        failed,
        interrupted,
    })
}

/// Refuses, before the experiment is stored or anything is changed, a filesystem this
/// machine cannot make or mount (no mkfs.xfs, no f2fs in the kernel), and a named block device
/// that may not be formatted (mounted, backs `/`, in use, not allowed, or signed). The same
/// checks run again at each `prepare`, since the device could change in between.
fn preflight(plan: &ExperimentPlan) -> Result<(), RunnerError> {
    let mut kinds = std::collections::BTreeSet::new();
    for c in &plan.configs {
        if let Some(f) = &c.sut.fs {
            if kinds.insert(f.kind.name()) {
                iolab_sut::availability(f.kind).require()?;
            }
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    for c in &plan.configs {
        if let iolab_sut::Target::BlockDevice(b) = &c.sut.target {
            if seen.insert(b.path.clone()) {
                iolab_sut::safety::check_block_device(&b.path, b.allow_destroy, b.force, |_| {
                    false
                })?;
            }
        }
    }
    Ok(())
}

/// Whether a stored source path names `file`: as typed, or the same file after resolving
/// (sources stored before they were made absolute are relative to where iolab ran).
fn names_same_file(stored: &str, file: &Path) -> bool {
    let stored = Path::new(stored);
    stored == file
        || matches!(
            (stored.canonicalize(), file.canonicalize()),
            (Ok(a), Ok(b)) if a == b
        )
}

fn resume(
    plan: &ExperimentPlan,
    store: &mut Store,
    source: &str,
) -> Result<(ExperimentId, Vec<ConfigState>), RunnerError> {
    let exp =
        unfinished(plan, store)?.ok_or_else(|| RunnerError::NothingToResume(source.to_owned()))?;
    if exp.spec != plan.resolved {
        return Err(RunnerError::ResumeMismatch {
            id: exp.id.0,
            source_file: source.to_owned(),
        });
    }
    let progress = store.resume_state(exp.id)?;
    let runs = store.runs(exp.id)?;
    let mut states = Vec::with_capacity(plan.configs.len());
    for c in &plan.configs {
        let p = progress
            .iter()
            .find(|p| p.label == c.label)
            .ok_or_else(|| RunnerError::ResumeMismatch {
                id: exp.id.0,
                source_file: source.to_owned(),
            })?;
        let values = store.ok_metric_values(p.config, &plan.repetitions.metric)?;
        let mut acc = Welford::new();
        for v in values.iter().filter(|v| v.is_finite()) {
            let _ = acc.push(*v);
        }
        let spent = runs
            .iter()
            .filter(|r| r.config == p.config)
            .map(|r| Duration::from_nanos((r.ended_at.0 - r.started_at.0).max(0) as u64))
            .sum();
        states.push(ConfigState {
            id: p.config,
            acc,
            ok: p.ok.clone(),
            spent,
            stopped: p.outcome.is_some(),
            warmed_up: !p.ok.is_empty(),
            outcome: p.outcome.clone(),
        });
    }
    store.set_experiment_status(exp.id, ExperimentStatus::Running, Timestamp::now())?;
    Ok((exp.id, states))
}

/// The host as stored with the experiment.
fn host_environment() -> Value {
    serde_json::to_value(iolab_monitor::environment::HostEnv::probe()).unwrap_or(Value::Null)
}

struct Session<'a> {
    plan: &'a ExperimentPlan,
    store: &'a mut Store,
    sut: &'a Sut,
    opts: &'a RunnerOptions,
    obs: &'a mut dyn RunnerObserver,
    /// With `fresh_fs = false`: the prepared SUT of the configuration that ran last.
    kept: Option<(usize, Prepared)>,
    run_times: Vec<Duration>,
    ok: u64,
    failed: u64,
    interrupted: u64,
    /// Runs whose block trace this session saved (names the pending files).
    traces: u64,
    /// Runs started in this session, warm-ups included: the number of the run in flight.
    runs: u64,
    /// The block trace of the run in flight, until it is stored or discarded.
    pending_trace: Option<std::path::PathBuf>,
}

impl Session<'_> {
    fn cancelled(&self) -> bool {
        self.opts.cancel.load(Ordering::Relaxed)
    }

    fn rounds(&mut self, states: &mut [ConfigState], max: u32) -> Result<(), RunnerError> {
        let n = self.plan.configs.len();
        match self.plan.procedure.order {
            Order::Random => {
                for round in 0..max {
                    for i in round_order(Order::Random, self.plan.seed, round, n) {
                        if self.cancelled() {
                            return Ok(());
                        }
                        self.step(states, i, round)?;
                    }
                    if states.iter().all(|s| s.stopped) {
                        break;
                    }
                }
            }
            Order::Sequential => {
                for i in 0..n {
                    for round in 0..max {
                        if self.cancelled() {
                            return Ok(());
                        }
                        if states[i].stopped {
                            break;
                        }
                        self.step(states, i, round)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Repetition `rep` of configuration `i`, unless it is stopped or already done.
    fn step(&mut self, states: &mut [ConfigState], i: usize, rep: u32) -> Result<(), RunnerError> {
        if states[i].stopped || states[i].ok.binary_search(&rep).is_ok() {
            return Ok(());
        }
        if !states[i].warmed_up {
            for w in 0..self.plan.procedure.warmup {
                let info = self.info(states, i, w, true);
                self.obs.run_started(&info);
                let (end, _) = self.one_run(i, w, true, None)?;
                self.obs.run_ended(&info, &end);
                if end.status != RunStatus::Ok {
                    return self.stop_failed(states, i, &end);
                }
            }
            states[i].warmed_up = true;
        }
        let info = self.info(states, i, rep, false);
        self.obs.run_started(&info);
        let t0 = Instant::now();
        let (mut end, _) = self.one_run(i, rep, false, Some(states[i].id))?;
        states[i].spent += t0.elapsed();
        match end.status {
            RunStatus::Ok => {
                self.ok += 1;
                let s = &mut states[i];
                s.ok.push(rep);
                s.ok.sort_unstable();
                if let Some(v) = end.metric.filter(|v| v.is_finite()) {
                    let _ = s.acc.push(v);
                }
                let deterministic = self.deterministic(i);
                let d = self.decide(s, deterministic);
                end.decision = Some(d);
                self.obs.run_ended(&info, &end);
                if d.is_stop() {
                    let single = self.plan.repetitions.is_single();
                    let outcome = if deterministic && matches!(d, Decision::Converged { .. }) {
                        deterministic_outcome(&d, &self.plan.repetitions.metric)
                    } else if single {
                        single_outcome()
                    } else {
                        outcome_of(&d, &self.plan.repetitions.metric, &s.acc)
                    };
                    self.store.set_config_outcome(s.id, &outcome)?;
                    // One run asked for is not a run that failed to converge.
                    let verdict = if single {
                        Vec::new()
                    } else {
                        config_findings(&d, &self.plan.repetitions)
                    };
                    if !verdict.is_empty() {
                        self.store.add_config_findings(s.id, &verdict)?;
                    }
                    s.stopped = true;
                    self.obs.config_finished(&info.config, &outcome);
                    s.outcome = Some(outcome);
                }
                Ok(())
            }
            RunStatus::Interrupted => {
                self.interrupted += 1;
                self.obs.run_ended(&info, &end);
                Ok(())
            }
            RunStatus::Failed => {
                self.failed += 1;
                self.obs.run_ended(&info, &end);
                self.stop_failed(states, i, &end)
            }
        }
    }

    fn deterministic(&self, i: usize) -> bool {
        self.plan.deterministic(i)
    }

    fn decide(&self, s: &ConfigState, deterministic: bool) -> Decision {
        let rule = self.plan.repetitions.rule;
        if deterministic {
            return rule.decide_deterministic(&s.acc, s.spent, self.plan.repetitions.time_budget);
        }
        // Count runs, not finite values, toward `max`: a metric that is NaN in every run
        // (no latency samples, say) must still stop.
        if s.acc.count() < s.ok.len() as u64 && s.ok.len() as u64 >= rule.max {
            return Decision::NotConverged {
                reason: StopReason::MaxRuns,
                runs: s.ok.len() as u64,
                rel_half_width: s.acc.relative_half_width(rule.level),
            };
        }
        rule.decide(&s.acc, s.spent, self.plan.repetitions.time_budget)
    }

    fn stop_failed(
        &mut self,
        states: &mut [ConfigState],
        i: usize,
        end: &RunEnd,
    ) -> Result<(), RunnerError> {
        if end.status == RunStatus::Interrupted {
            return Ok(());
        }
        let s = &mut states[i];
        let outcome = ConfigOutcome {
            converged: false,
            note: format!(
                "stopped: a run failed ({})",
                end.error.as_deref().unwrap_or("unknown error")
            ),
        };
        self.store.set_config_outcome(s.id, &outcome)?;
        s.stopped = true;
        self.obs
            .config_finished(&self.plan.configs[i].label, &outcome);
        s.outcome = Some(outcome);
        Ok(())
    }

    fn info(&self, states: &[ConfigState], i: usize, rep: u32, warmup: bool) -> RunInfo {
        let max = self.plan.repetitions.rule.max;
        let done: u64 = states.iter().map(|s| s.ok.len() as u64).sum();
        let left: u64 = states
            .iter()
            .filter(|s| !s.stopped)
            .map(|s| max.saturating_sub(s.ok.len() as u64))
            .sum();
        let s = &states[i];
        let level = self.plan.repetitions.rule.level;
        let ci = s
            .acc
            .mean()
            .zip(s.acc.relative_half_width(level))
            .map(|(m, r)| (s.acc.count(), m, r));
        RunInfo {
            config: self.plan.configs[i].label.clone(),
            config_index: i,
            configs: self.plan.configs.len(),
            repetition: rep,
            warmup,
            max: u32::try_from(max).unwrap_or(u32::MAX),
            runs_done: done,
            runs_left_max: left,
            ci,
            mean_run_time: (!self.run_times.is_empty())
                .then(|| self.run_times.iter().sum::<Duration>() / self.run_times.len() as u32),
        }
    }

    fn release_kept(&mut self) {
        if let Some((_, p)) = self.kept.take() {
            self.obs.phase(Phase::TearingDown);
            self.teardown(p);
        }
    }

    fn teardown(&mut self, p: Prepared) {
        let report = self.sut.teardown(p);
        for a in report.failures() {
            if let Err(e) = &a.result {
                self.obs.warn(&format!(
                    "could not undo {}: {e}; it stays in the journal",
                    a.entry.describe()
                ));
            }
        }
    }

    /// One run: prepare (or reuse) the SUT, run, store (measured runs only), tear down.
    fn one_run(
        &mut self,
        i: usize,
        rep: u32,
        warmup: bool,
        config_id: Option<ConfigId>,
    ) -> Result<(RunEnd, Option<RunRecord>), RunnerError> {
        let wall = Instant::now();
        self.runs += 1;
        let number = self.runs;
        let config = &self.plan.configs[i];
        let seed = run_seed(self.plan.seed, i, rep, warmup);
        let started_at = Timestamp::now();
        self.obs.phase(Phase::Preparing);
        let fresh = self.plan.procedure.fresh_fs;
        if self.kept.as_ref().is_some_and(|(k, _)| *k != i || fresh) {
            self.release_kept();
        }
        let prepared = match self.kept.take() {
            Some((_, p)) => Ok(p),
            None => self.sut.prepare(&config.sut),
        };
        let (outcome, environment) = match prepared {
            Err(e) => (
                Err(RunFailure {
                    bad_input: e.is_bad_input(),
                    ..RunFailure::failed(format!("preparing the system under test: {e}"))
                }),
                Value::Null,
            ),
            Ok(mut p) => {
                let environment = run_environment(config, &p);
                let r = self.execute(config, &mut p, seed, number);
                if fresh || r.is_err() {
                    self.obs.phase(Phase::TearingDown);
                    self.teardown(p);
                } else {
                    self.kept = Some((i, p));
                }
                (r, environment)
            }
        };
        let ended_at = Timestamp::now();
        let interrupted = self.cancelled();
        let (status, failure, mut record) = match outcome {
            Ok(rec) => (RunStatus::Ok, None, Some(rec)),
            Err(mut f) if interrupted || f.interrupted => {
                f.interrupted = true;
                f.message = "interrupted (SIGINT/SIGTERM)".into();
                (RunStatus::Interrupted, Some(f), None)
            }
            Err(f) => (RunStatus::Failed, Some(f), None),
        };
        let error = failure.as_ref().map(RunFailure::text);
        let elapsed_ns = record.as_ref().map_or(0, |r| r.run.elapsed_ns);
        let metric = record.as_ref().and_then(|r| {
            r.metrics
                .iter()
                .find(|m| m.name == self.plan.repetitions.metric)
                .map(|m| m.value)
        });
        if let (false, Some(config)) = (warmup, config_id) {
            let run = NewRun {
                config,
                repetition: rep,
                seed,
                status,
                error: error.clone(),
                started_at,
                ended_at,
                elapsed_ns,
                environment,
            };
            let mut rec = match record.take() {
                Some(mut r) => {
                    r.run = run;
                    r
                }
                None => RunRecord::new(run),
            };
            if let Some(pending) = &self.pending_trace {
                if saved_trace::was_saved(&rec) {
                    if let Err(e) = saved_trace::add_mrc(&mut rec, pending) {
                        self.obs.warn(&e);
                    }
                }
            }
            let id = self.store.record_run(&rec)?;
            if let Some(pending) = self.pending_trace.take() {
                if saved_trace::was_saved(&rec) {
                    if let Err(e) = saved_trace::keep(self.store, &pending, id) {
                        self.obs.warn(&e);
                    }
                }
            }
            record = Some(rec);
        }
        if let Some(pending) = self.pending_trace.take() {
            // Not stored (warm-up, failed, interrupted): no trace either.
            let _ = std::fs::remove_file(pending);
        }
        if status == RunStatus::Ok {
            self.run_times.push(wall.elapsed());
        }
        Ok((
            RunEnd {
                status,
                error,
                failure,
                metric,
                decision: None,
                findings: record
                    .as_ref()
                    .map(|r| r.findings.clone())
                    .unwrap_or_default(),
                metrics: record
                    .as_ref()
                    .map(|r| r.metrics.clone())
                    .unwrap_or_default(),
                number,
            },
            record,
        ))
    }

    /// The monitor options of the next run: with `save_block_trace`, a trace file of its own.
    fn monitor_options(&mut self) -> Result<MonitorOptions, RunFailure> {
        let mut m = self.opts.monitor.clone();
        if !self.plan.procedure.save_block_trace {
            return Ok(m);
        }
        let Some(dir) = saved_trace::traces_dir(self.store.path()) else {
            self.obs
                .note("block trace not saved: there is no results database (--no-db)");
            return Ok(m);
        };
        std::fs::create_dir_all(&dir).map_err(|e| {
            RunFailure::failed(format!("creating {} for block traces: {e}", dir.display()))
        })?;
        self.traces += 1;
        let path = saved_trace::pending_path(&dir, self.traces);
        self.pending_trace = Some(path.clone());
        m.save_trace = Some(path);
        Ok(m)
    }

    /// The workload part of a run, in the prepared directory: its kind runs it on the engine;
    /// the runner drops caches and watches the timed region, then runs the checks.
    fn execute(
        &mut self,
        config: &ConfigPlan,
        p: &mut Prepared,
        seed: u64,
        number: u64,
    ) -> Result<RunRecord, RunFailure> {
        if let Some(cg) = &p.cgroup {
            // Threads inherit the cgroup of the thread that creates them: the engine's
            // workers are charged to it; teardown moves this thread back out.
            cg.add_current_thread()
                .map_err(|e| RunFailure::failed(format!("joining the cache cgroup: {e}")))?;
        }
        if let Some(cg) = &p.throttle {
            // The same for the blkio cgroup: the limits apply to the I/O these threads
            // submit themselves.
            cg.add_current_thread()
                .map_err(|e| RunFailure::failed(format!("joining the throttle cgroup: {e}")))?;
        }
        let device_name = p.device.as_ref().map(|d| d.name.clone());
        let workload = &config.workload;
        let monitor_opts = self.monitor_options()?;
        let mut obs = Hooks {
            outer: &mut *self.obs,
            drop_caches: self.plan.procedure.drop_caches,
            drop_error: None,
            drop_freed_kib: None,
            planned: workload.planned_duration(),
            skipped_system: Vec::new(),
            run_files: Vec::new(),
            watch: Watch::new(
                monitor_opts,
                monitor::run_devices(device_name.as_deref(), &p.mountpoint),
            ),
        };
        if let Some(cg) = &p.throttle {
            obs.watch.throttled(cg.clone());
        }
        let mut rec = RunRecord::new(NewRun {
            config: ConfigId(0),
            repetition: 0,
            seed,
            status: RunStatus::Ok,
            error: None,
            started_at: Timestamp::now(),
            ended_at: Timestamp::now(),
            elapsed_ns: 0,
            environment: Value::Null,
        });
        obs.outer.phase(Phase::Populating);
        let dir = p.mountpoint.clone();
        let result = workload.run(&mut RunCtx {
            dir: &dir,
            seed,
            number,
            cancel: &self.opts.cancel,
            hooks: &mut obs,
            record: &mut rec,
            sut: &mut SessionSut {
                sut: self.sut,
                prepared: &mut *p,
            },
        });
        obs.watch.stop();
        if let Some(e) = obs.drop_error.take() {
            return Err(RunFailure::failed(e));
        }
        let drop_freed_kib = obs.drop_freed_kib;
        let skipped_system = std::mem::take(&mut obs.skipped_system);
        let mut watch = obs.watch;
        for n in watch.notes() {
            self.obs.note(n);
        }
        if let Some(kib) = drop_freed_kib {
            rec.metrics
                .push(Metric::new("cache_dropped_kib", kib as f64, "KiB"));
        }
        result?;
        let mut device = DeviceInfo::probe(&p.mountpoint);
        if let Some(d) = &p.device {
            device.name = Some(d.name.clone());
            device.is_loop = Some(d.name.starts_with("loop"));
        }
        if p.direct_io.is_some() {
            device.loop_direct_io = p.direct_io;
        }
        let mut intent = self.plan.intent(config);
        if !skipped_system.is_empty() {
            intent.skipped_system = Some(skipped_system);
        }
        watch.finish(&mut rec, &intent, &device);
        Ok(rec)
    }
}

/// The runner's session and the run's prepared target, for a kind's [`SutControl`] requests.
struct SessionSut<'a> {
    sut: &'a Sut,
    prepared: &'a mut Prepared,
}

impl SutControl for SessionSut<'_> {
    fn remount(&mut self) -> Result<Remount, String> {
        if self.prepared.fs == Some(iolab_sut::FsKind::Tmpfs) {
            return Err("a tmpfs target keeps nothing across a remount".into());
        }
        let r = self
            .sut
            .remount(self.prepared)
            .map_err(|e| format!("remounting {}: {e}", self.prepared.mountpoint.display()))?;
        Ok(Remount {
            unmount: r.unmount,
            mount: r.mount,
            mount_id: iolab_sut::mount::unique_mount_id(&self.prepared.mountpoint)
                .or_else(|| self.prepared.mount.as_ref().map(|m| u64::from(m.id))),
        })
    }

    fn make_dir(&mut self, path: &Path) -> Result<Option<iolab_sut::WorkDir>, String> {
        self.sut.make_work_dir(path).map_err(|e| e.to_string())
    }

    fn remove_dir(&mut self, dir: iolab_sut::WorkDir) -> Result<(), String> {
        self.sut
            .remove_work_dir(dir)
            .map(drop)
            .map_err(|e| e.to_string())
    }
}

/// The configuration-level checks (did-not-converge) on the stopping rule's decision.
fn config_findings(d: &Decision, reps: &crate::plan::Repetitions) -> Vec<iolab_store::Finding> {
    let (converged, runs, rel) = match *d {
        Decision::Converged {
            runs,
            rel_half_width,
        } => (true, runs, Some(rel_half_width)),
        Decision::NotConverged {
            runs,
            rel_half_width,
            ..
        } => (false, runs, rel_half_width),
        Decision::Continue => return Vec::new(),
    };
    let facts = iolab_check::RunFacts {
        stopping: Some(iolab_check::StoppingOutcome {
            converged,
            runs: u32::try_from(runs).unwrap_or(u32::MAX),
            rel_half_width: rel,
            target: Some(reps.rule.target),
            metric: Some(reps.metric.clone()),
        }),
        ..iolab_check::RunFacts::default()
    };
    iolab_check::run_checks(&facts)
        .into_iter()
        .map(monitor::to_store)
        .collect()
}

/// The outcome of a configuration run once on purpose (`repetitions.max = 1`, `iolab
/// micro`, `iolab run FILE.f`).
pub const SINGLE_RUN_NOTE: &str = "single run: no repetitions, so no confidence interval";

fn single_outcome() -> ConfigOutcome {
    ConfigOutcome {
        converged: false,
        note: SINGLE_RUN_NOTE.into(),
    }
}

/// The outcome of a deterministic configuration (a simulation) whose runs agree.
fn deterministic_outcome(d: &Decision, metric: &str) -> ConfigOutcome {
    let runs = match *d {
        Decision::Converged { runs, .. } => runs,
        _ => 0,
    };
    let runs = if runs == 1 {
        "one run".to_string()
    } else {
        format!("{runs} runs agree")
    };
    ConfigOutcome {
        converged: true,
        note: format!(
            "{}{metric} is exact ({runs}; 95% CI ±0.0%)",
            ConfigOutcome::DETERMINISTIC
        ),
    }
}

fn outcome_of(d: &Decision, metric: &str, acc: &Welford) -> ConfigOutcome {
    let pct = |r: f64| format!("±{:.1}%", r * 100.0);
    match *d {
        Decision::Converged {
            runs,
            rel_half_width,
        } => ConfigOutcome {
            converged: true,
            note: format!(
                "converged: 95% CI of {metric} {} after {runs} runs",
                pct(rel_half_width)
            ),
        },
        Decision::NotConverged {
            reason,
            runs,
            rel_half_width,
        } => {
            let why = match reason {
                StopReason::MaxRuns => format!("the maximum of {runs} runs was reached"),
                StopReason::TimeBudget => format!("the time budget ran out after {runs} runs"),
            };
            let achieved = match rel_half_width {
                Some(r) => format!("; the 95% CI of {metric} is {}", pct(r)),
                None if acc.count() < 2 => "; fewer than 2 values, no interval".into(),
                None => String::new(),
            };
            ConfigOutcome {
                converged: false,
                note: format!("did not converge: {why}{achieved}"),
            }
        }
        Decision::Continue => ConfigOutcome {
            converged: false,
            note: "still running".into(),
        },
    }
}

/// What a run stores as its environment: the machine and the storage under the run
/// directory as probed, plus what iolab set up.
fn run_environment(config: &ConfigPlan, p: &Prepared) -> Value {
    let env = iolab_monitor::environment::Environment::probe(Some(&p.mountpoint));
    let machine = serde_json::to_value(&env).unwrap_or(Value::Null);
    let tunables: BTreeMap<String, Value> = p
        .tunables
        .iter()
        .map(|t| {
            (
                t.name.clone(),
                json!({ "value": t.value, "original": t.original }),
            )
        })
        .collect();
    json!({
        "machine": machine,
        "sut": {
            "mountpoint": p.mountpoint,
            "fs": p.fs.map(|f| f.to_string()),
            "mount_options": p.mount.as_ref().map(|m| format!("{},{}", m.mount_options, m.super_options)),
            "device": p.device.as_ref().map(|d| d.name.clone()),
            // Which filesystem instance: a fresh mkfs gives a new UUID. Only for a
            // filesystem iolab made; a directory's device is not iolab's to probe.
            "fs_uuid": p.device.as_ref().filter(|_| p.fs.is_some()).and_then(|d| fs_uuid(&d.path)),
            "direct_io": p.direct_io,
            "tunables": tunables,
            "cache_limit_bytes": p.cgroup.as_ref().map(|c| c.limit_bytes),
            // The device the blkio limits are on (a partition's disk) and the limits.
            "throttle": p.throttle.as_ref().map(|t| json!({ "device": t.dev, "limits": t.limits })),
            "spec": serde_json::to_value(&config.sut_spec).unwrap_or(Value::Null),
        },
    })
}

/// The filesystem UUID on `dev` (blkid), if it has one.
fn fs_uuid(dev: &Path) -> Option<String> {
    let out = std::process::Command::new("blkid")
        .args(["-p", "-o", "value", "-s", "UUID"])
        .arg(dev)
        .output()
        .ok()?;
    let s = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (out.status.success() && !s.is_empty()).then_some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_round_orders_are_permutations_and_differ_between_rounds() {
        let a = round_order(Order::Random, 7, 0, 6);
        let b = round_order(Order::Random, 7, 1, 6);
        let mut s = a.clone();
        s.sort_unstable();
        assert_eq!(s, (0..6).collect::<Vec<_>>());
        assert_ne!(a, b, "rounds are shuffled independently");
        assert_eq!(a, round_order(Order::Random, 7, 0, 6), "and reproducibly");
        assert_eq!(round_order(Order::Sequential, 7, 3, 4), [0, 1, 2, 3]);
    }

    #[test]
    fn a_workload_that_drops_caches_needs_root_even_in_a_directory() {
        let dir = tempfile::tempdir().unwrap();
        let plan = |workload: &str| {
            let text = format!(
                "[sut]\ntarget = {{ kind = \"directory\", path = \"{}\" }}\n\
                 [procedure]\ndrop_caches = false\n[workload]\n{workload}\n",
                dir.path().display()
            );
            crate::plan::load::load_str(&dir.path().join("x.toml"), &text).unwrap()
        };
        assert!(root_requirements(&plan("iozone = { size = \"1m\" }")).is_empty());
        let need = root_requirements(&plan("iozone = { size = \"1m\", purge = \"drop_caches\" }"));
        assert_eq!(
            need,
            ["dropping the page cache between passes (workload.iozone.purge = \"drop_caches\")"]
        );
        assert!(
            root_requirements(&plan("iozone = { size = \"1m\", purge = \"fadvise\" }")).is_empty()
        );
    }

    #[test]
    fn run_seeds_depend_on_config_and_repetition_only() {
        assert_eq!(run_seed(1, 2, 3, false), run_seed(1, 2, 3, false));
        assert_ne!(run_seed(1, 2, 3, false), run_seed(1, 3, 2, false));
        assert_ne!(run_seed(1, 2, 3, false), run_seed(1, 2, 3, true));
        assert_ne!(run_seed(1, 2, 3, false), run_seed(2, 2, 3, false));
    }
}
