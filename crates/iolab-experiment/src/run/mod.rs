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
//!
//! One concern per file: `preflight.rs` (root and the machine, before anything is touched),
//! `resume.rs` (continuing an experiment), `schedule.rs` (rounds, seeds, the stopping rule),
//! `one_run.rs` (one run on the system under test), `outcome.rs` (how configurations ended),
//! `environment.rs` (what is stored about the machine), `engine.rs` (the hooks a run calls),
//! `monitor.rs` (the samplers and the checks' facts), `saved_trace.rs` (block traces kept),
//! `watchdog.rs` (a run whose I/O stalls).

pub mod engine;
mod environment;
pub mod monitor;
mod one_run;
mod outcome;
mod place;
mod preflight;
pub mod ranks;
mod resume;
mod schedule;
pub mod syscalls;
pub mod watchdog;
pub mod worker;
pub use iolab_kind::record;
pub mod saved_trace;

pub use outcome::SINGLE_RUN_NOTE;
pub use preflight::root_requirements;
pub use resume::{completed, unfinished};
pub use schedule::{round_order, run_seed};

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use iolab_stats::{Decision, StopReason, Welford};
use iolab_store::{
    ConfigId, ConfigOutcome, ExperimentId, ExperimentStatus, Metric, NewRun, RunRecord, RunStatus,
    Store, StoreError, Timestamp,
};
use iolab_sut::{Prepared, Sut, SutOptions};
use iolab_util::rng::{mix64, Rng};
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
    /// Under MPI with more than one rank: the ranks (`ranks.rs`); `None` runs alone.
    pub group: Option<ranks::Ranked>,
    /// When a run's I/O counts as stalled, and what ends an abandoned one (`watchdog.rs`).
    pub stall: watchdog::StallOptions,
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
    /// Under MPI: a rank could not start, or the ranks disagree.
    #[error("{0}")]
    Ranks(String),
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
            RunnerError::Sut(_) | RunnerError::Store(_) | RunnerError::Ranks(_) => None,
        }
    }

    /// True when the input (or how iolab was invoked) is at fault: exit code 2.
    pub fn is_bad_input(&self) -> bool {
        match self {
            RunnerError::NothingToResume(_)
            | RunnerError::ResumeMismatch { .. }
            | RunnerError::NeedsRoot(_) => true,
            RunnerError::Sut(e) => e.is_bad_input(),
            RunnerError::Store(_) | RunnerError::Ranks(_) => false,
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
    /// Measured runs left of the planned budget: each configuration the stopping rule has not
    /// ended plans `max` runs (one when deterministic), minus its ok runs. The budget
    /// (`runs_done + runs_left_max`) shrinks as configurations stop early.
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

/// Runs (or resumes) the experiment, storing every run in `store`.
pub fn run_experiment(
    plan: &ExperimentPlan,
    store: &mut Store,
    opts: &RunnerOptions,
    obs: &mut dyn RunnerObserver,
) -> Result<ExperimentOutcome, RunnerError> {
    // Under MPI every rank sets up, then all say whether they could: one rank's error ends
    // every rank's experiment before anything runs.
    let setup = set_up(plan, opts, obs);
    let hosts = match &opts.group {
        Some(g) => Some(ranks::handshake(g, setup.as_ref().map(drop))?),
        None => None,
    };
    let sut = setup?;
    let follower = opts.group.as_ref().is_some_and(|g| g.0.rank() > 0);
    // Rank 0 tells the others to stop however this function ends.
    let _stop = ranks::StopOnDrop(opts.group.as_ref().filter(|_| !follower));
    // Stored absolute, so that `--resume` finds it from any directory.
    let source = plan
        .source
        .canonicalize()
        .unwrap_or_else(|_| plan.source.clone())
        .display()
        .to_string();
    let rule = plan.repetitions.rule;
    let max = u32::try_from(rule.max).unwrap_or(u32::MAX);
    let mut host = environment::host_environment();
    if let (Some(hosts), Some(g), Value::Object(m)) = (hosts, &opts.group, &mut host) {
        m.insert("mpi".into(), json!({ "ranks": g.0.size(), "hosts": hosts }));
    }

    // The experiment and its configurations, new or from the database.
    // A follower keeps nothing: it runs what rank 0 orders into an experiment of its own.
    let (exp, mut states) = if opts.resume && !follower {
        let (exp, states) = resume::resume(plan, store, &source)?;
        store.set_metric_defs(exp, &metric_defs(plan, opts))?;
        let done = states.iter().map(|s| s.ok.len() as u64).sum();
        obs.experiment(exp, Some(done));
        (exp, states)
    } else {
        // All in one transaction: an experiment stored without its configurations (the
        // disk failing in between) could not be resumed.
        let (exp, ids) = store.start_experiment(
            &plan.new_experiment(
                source.clone(),
                Timestamp::now(),
                opts.iolab_version.clone(),
                host,
            ),
            &metric_defs(plan, opts),
            &plan
                .configs
                .iter()
                .map(|c| (c.label.clone(), c.factors.clone()))
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
        experiment: (!follower).then_some(exp),
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
        cap_use: None,
        failed_outputs: Vec::new(),
        placed: None,
        timed: None,
    };
    let result = if follower {
        session.follow(&mut states)
    } else {
        session.rounds(&mut states, max)
    };
    // Whatever happened, a kept filesystem goes and everything is restored.
    session.release_kept();
    let (ok, failed, interrupted) = (session.ok, session.failed, session.interrupted);
    drop(session);
    let report = sut.handle().teardown_all();
    for warning in report.failures().filter_map(|a| a.failure()) {
        obs.warn(&warning);
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

/// The metrics the experiment's runs record: the plan's, and under MPI the ranks'.
fn metric_defs(plan: &ExperimentPlan, opts: &RunnerOptions) -> Vec<iolab_metrics::MetricDef> {
    let mut defs = plan.metrics();
    if opts.group.is_some() {
        defs.extend(iolab_metrics::RANKS.iter().cloned());
    }
    defs
}

/// Everything before the experiment is stored: root, the machine, the journal (and its
/// recovery from a crashed run), and under MPI whether the ranks can share their nodes.
fn set_up(
    plan: &ExperimentPlan,
    opts: &RunnerOptions,
    obs: &mut dyn RunnerObserver,
) -> Result<Sut, RunnerError> {
    let need = root_requirements(plan);
    if !need.is_empty() && !preflight::is_root() {
        return Err(RunnerError::NeedsRoot(format!(
            "this experiment needs root for {}",
            need.join(", ")
        )));
    }
    preflight::preflight(plan)?;
    if opts.group.is_some() {
        ranks::check_ranks(plan)?;
    }
    // The journal lock first: while another iolab holds it, nothing is stored (a new
    // experiment would stay "running" for ever). A plan that changes nothing on the machine
    // (existing directories as they are) needs no journal, and so runs beside other iolabs.
    // Under MPI only the first rank of each node prepares (ranks.rs): it alone needs the lock.
    let preparer = opts
        .group
        .as_ref()
        .is_none_or(|g| g.0.leader() == g.0.rank());
    let sut = if preparer && plan.configs.iter().any(|c| c.sut.changes_machine()) {
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
    Ok(sut)
}

struct Session<'a> {
    plan: &'a ExperimentPlan,
    /// The experiment the runs are stored in (none on an MPI rank that follows).
    experiment: Option<ExperimentId>,
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
    /// What the last run's tasks used besides the page cache under `sut.cache_limit`.
    cap_use: Option<iolab_sut::cgroup::CapUse>,
    /// What another tool printed in a run that failed (the `exec` kind): stored with the
    /// failed run, so its reason can be read in the tool's own words and parsed again.
    failed_outputs: Vec<iolab_store::RunOutput>,
    /// Where the run in flight executed (its environment's record), once it has.
    placed: Option<Value>,
    /// Under MPI: the run in flight's timed region on this rank's clock (Unix ns).
    timed: Option<[u64; 2]>,
}

impl Session<'_> {
    fn cancelled(&self) -> bool {
        self.opts.cancel.load(Ordering::Relaxed)
    }
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
    fn run_seeds_depend_on_config_and_repetition_only() {
        assert_eq!(run_seed(1, 2, 3, false), run_seed(1, 2, 3, false));
        assert_ne!(run_seed(1, 2, 3, false), run_seed(1, 3, 2, false));
        assert_ne!(run_seed(1, 2, 3, false), run_seed(1, 2, 3, true));
        assert_ne!(run_seed(1, 2, 3, false), run_seed(2, 2, 3, false));
    }
}
