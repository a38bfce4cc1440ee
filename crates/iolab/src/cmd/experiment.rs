//! `iolab run EXPERIMENT.toml`: load and validate the whole file, then run it with a progress
//! line, storing every run; print the per-configuration summary at the end.

use std::io::IsTerminal;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use iolab_experiment::run::{
    completed, run_experiment, unfinished, Event, Phase, RunEnd, RunInfo, RunnerError,
    RunnerObserver, RunnerOptions,
};
use iolab_store::{ConfigOutcome, ExperimentId, ExperimentStatus, RunStatus};

use crate::cli::RunArgs;
use crate::cmd::show;
use crate::error::CliError;
use crate::term::StatusLine;
use iolab_util::units::thousands;

pub fn run(args: RunArgs, m: &clap::ArgMatches, cancel: Arc<AtomicBool>) -> Result<(), CliError> {
    reject_workload_options(&args, m)?;
    let path = Path::new(&args.file);
    let plan = iolab_experiment::load(path).map_err(|errs| {
        let n = errs.len();
        let mut e = CliError::usage(errs.to_string().trim_end());
        if n > 1 {
            e = e.with_hint(format!("{n} errors; nothing was run or changed"));
        }
        e
    })?;
    // Under MPI the other ranks follow rank 0, which alone has the database: what to resume
    // and which stages are done are its to decide.
    let follower = !crate::state::speaks();
    if args.resume && !follower && !args.db.db.exists() {
        // Opening would create an empty database just to find nothing in it.
        return Err(CliError::usage(format!(
            "nothing to resume: there is no results database at {}",
            args.db.db.display()
        ))
        .with_hint("give the --db the experiment was started with, or run it without --resume"));
    }
    let mut store = super::db::open(&args.db.db)?;
    // `-q` (declared with a workload file's flags, which an experiment shares): no progress.
    let quiet = matches!(m.try_get_one::<bool>("quiet"), Ok(Some(true)));
    let stages = 1 + plan.then.len();
    let mut previous: Option<ExperimentId> = None;
    let mut resumed = false;
    for k in 0..stages {
        let stage_plan;
        let plan = if k == 0 {
            &plan
        } else {
            let trace = match (plan.then[k - 1].uses_previous_trace, previous) {
                (true, Some(id)) => Some(
                    iolab_experiment::run::saved_trace::latest(&store, id).map_err(|e| {
                        CliError::failed(format!("stage {}: {e}", k + 1)).with_hint(
                            "the stage before ran without saving a block trace (did its \
                             tracer fail to start? `iolab show` has its runs)",
                        )
                    })?,
                ),
                _ => None,
            };
            stage_plan = iolab_experiment::stage(&plan, k, trace.as_deref())
                .map_err(|errs| CliError::usage(errs.to_string().trim_end()))?;
            &stage_plan
        };
        if stages > 1 {
            say!("stage {} of {stages}: {}", k + 1, plan.name);
        }
        if args.resume && stages > 1 {
            let done = completed(plan, &store).map_err(runner_error)?;
            if stage_done_everywhere(done.is_some()) {
                if let Some(id) = done {
                    say!("  done before, as experiment {}; not run again", id.0);
                    previous = Some(id);
                }
                continue;
            }
        }
        // A stage that never started is started, not resumed; a file without stages resumes
        // or says that there is nothing to resume.
        let resume = args.resume
            && (stages == 1
                || unfinished(plan, &store)
                    .map_err(runner_error)?
                    .is_some_and(|e| e.spec == plan.resolved));
        resumed |= resume;
        let later = k + 1 < stages;
        previous = Some(run_one(
            plan, &args, quiet, resume, later, &mut store, &cancel,
        )?);
    }
    if args.resume && !resumed && !follower {
        return Err(CliError::usage(format!(
            "nothing to resume: every stage of {} is done",
            args.file
        ))
        .with_hint("run it without --resume to start it again"));
    }
    Ok(())
}

/// Runs (or resumes) one experiment of the file and prints its summary; the experiment's id
/// when it completed, an error otherwise (later stages do not run then).
fn run_one(
    plan: &iolab_experiment::ExperimentPlan,
    args: &RunArgs,
    quiet: bool,
    resume: bool,
    later_stages: bool,
    store: &mut iolab_store::Store,
    cancel: &Arc<AtomicBool>,
) -> Result<ExperimentId, CliError> {
    let opts = RunnerOptions {
        sut: crate::state::sut_options(),
        cancel: Arc::clone(cancel),
        resume,
        iolab_version: env!("CARGO_PKG_VERSION").into(),
        monitor: args.monitor.options(),
        group: crate::state::group(),
        stall: crate::signals::stall_options(args.stall_timeout),
    };
    let configs = plan.configs.len();
    let s = if configs == 1 { "" } else { "s" };
    if (0..configs).all(|i| plan.deterministic(i)) {
        say!(
            "{}: {configs} configuration{s}, one run each: deterministic, {} is exact",
            plan.name,
            plan.repetitions.metric
        );
    } else {
        say!(
            "{}: {configs} configuration{s}, {}–{} runs each until the 95% CI of {} is within ±{}%",
            plan.name,
            plan.repetitions.rule.min,
            plan.repetitions.rule.max,
            plan.repetitions.metric,
            plan.repetitions.rule.target * 100.0
        );
    }
    let terminal = std::io::stderr().is_terminal();
    let rule = plan.repetitions.rule;
    let mut obs = Progress {
        status: StatusLine::new(terminal && !quiet),
        plain: !terminal && !quiet,
        quiet,
        bounded: (rule.min < rule.max || plan.repetitions.time_budget.is_some())
            && !(0..configs).all(|i| plan.deterministic(i)),
        told_tenth: 0,
        run_started: Instant::now(),
        metric: plan.repetitions.metric.clone(),
        current: None,
        phase: Phase::Preparing,
        setting_up: None,
        db: args.db.db.display().to_string(),
        told: Default::default(),
    };
    let outcome = run_experiment(plan, store, &opts, &mut obs);
    obs.status.clear();
    let outcome = outcome.map_err(runner_error)?;
    let metric = plan.repetitions.metric.clone();
    crate::output::emit_human(|out| {
        show::write_experiment(store, outcome.id, out)?;
        crate::cmd::compare::write_summary(store, outcome.id, &metric, out)
    })?;
    let later = if later_stages {
        "; the stages after it did not run"
    } else {
        ""
    };
    match outcome.status {
        ExperimentStatus::Interrupted => Err(CliError::interrupted(format!(
            "interrupted; the system is restored and the finished runs are stored{later}"
        ))
        .with_hint(format!(
            "continue with: iolab run {} --resume{}",
            args.file,
            db_flag(&args.db.db)
        ))),
        ExperimentStatus::Failed => Err(CliError::failed(format!(
            "{} run{} failed (see the table above; `iolab show {}` has the errors){later}",
            outcome.failed,
            if outcome.failed == 1 { "" } else { "s" },
            outcome.id.0
        ))
        .with_hint(format!(
            "once the cause is fixed, run the failed repetitions again (the finished runs are \
             kept): iolab run {} --resume{}",
            args.file,
            db_flag(&args.db.db)
        ))),
        _ => {
            if cancel.load(Ordering::Relaxed) {
                return Err(CliError::interrupted("interrupted"));
            }
            Ok(outcome.id)
        }
    }
}

/// Why the runner could not run a plan at all, as the command's error.
pub fn runner_error(e: RunnerError) -> CliError {
    let hint = e.hint();
    let mut err = if e.is_bad_input() {
        CliError::usage(&e)
    } else {
        CliError::failed(&e)
    };
    if let Some(h) = hint {
        err = err.with_hint(h);
    }
    err
}

fn db_flag(db: &Path) -> String {
    if db == Path::new("iolab.db") {
        String::new()
    } else {
        format!(" --db {}", db.display())
    }
}

/// Options that only make sense for a single workload run.
/// A workload file's flags (its kind's runner says which `m` gives) given with an experiment
/// file: an error that says where the file sets each.
fn reject_workload_options(args: &RunArgs, m: &clap::ArgMatches) -> Result<(), CliError> {
    let mut given: Vec<String> = Vec::new();
    for g in iolab_kinds::files().flat_map(|f| f.given(m)) {
        if !given.contains(&g) {
            given.push(g);
        }
    }
    if given.is_empty() {
        return Ok(());
    }
    Err(CliError::usage(format!(
        "{} is an experiment file; these options are for single workloads: {}",
        args.file,
        given.join(", ")
    ))
    .with_hint("experiment settings live in the file: see docs/experiments.md"))
}

/// What `iolab run` shows while an experiment runs: runs done of the planned budget and the
/// time left, on a terminal as a status line redrawn in place, otherwise as a plain line at
/// each tenth of the budget (a log gets about ten lines, not one per redraw); nothing with `-q`.
struct Progress {
    status: StatusLine,
    /// Plain progress lines (stderr is not a terminal, and not `-q`).
    plain: bool,
    /// `-q`: no progress, and no line for a run that went well.
    quiet: bool,
    /// The budget is what the stopping rule may use, not what it will (`≤` before the ETA).
    bounded: bool,
    /// The tenth of the budget the last plain line told.
    told_tenth: u64,
    /// When the current run started: its part of the time left is already spent.
    run_started: Instant,
    metric: String,
    current: Option<RunInfo>,
    phase: Phase,
    /// The workers' set-up of the current run while it prepares: (done, total, unit).
    setting_up: Option<(u64, u64, &'static str)>,
    db: String,
    /// (configuration, check) pairs already printed.
    told: std::collections::BTreeSet<(String, String)>,
}

fn human_duration(d: Duration) -> String {
    let s = d.as_secs();
    if s < 90 {
        format!("{s} s")
    } else if s < 90 * 60 {
        format!("{} min", (s + 30) / 60)
    } else {
        format!("{:.1} h", s as f64 / 3600.0)
    }
}

impl Progress {
    /// The configuration (which of how many) and the run of it.
    fn prefix(&self, r: &RunInfo) -> String {
        let what = if r.warmup {
            format!("warm-up {}", r.repetition + 1)
        } else {
            format!("run {} of ≤{}", r.repetition + 1, r.max)
        };
        format!(
            "config {}/{} {} · {what}",
            r.config_index + 1,
            r.configs,
            r.config
        )
    }

    /// The time left, once a run of this session has given its duration: `ETA ≤3 min`.
    fn eta(&self, r: &RunInfo) -> Option<String> {
        let per_run = r.mean_run_time?;
        let left = per_run.saturating_mul(u32::try_from(r.runs_left_max).unwrap_or(u32::MAX));
        // The run in flight is one of those left: what it has taken is no longer ahead.
        let spent = if r.warmup {
            Duration::ZERO
        } else {
            self.run_started.elapsed().min(per_run)
        };
        let left = left.saturating_sub(spent);
        Some(if left < Duration::from_secs(1) {
            "ETA <1 s".into()
        } else {
            let bound = if self.bounded { "≤" } else { "" };
            format!("ETA {bound}{}", human_duration(left))
        })
    }

    /// A plain line each time the runs done reach a further tenth of the budget.
    fn tell(&mut self, r: &RunInfo) {
        let budget = r.runs_done + r.runs_left_max;
        let tenth = (r.runs_done * 10).checked_div(budget).unwrap_or(0);
        if self.plain && tenth > self.told_tenth {
            self.told_tenth = tenth;
            let eta = self.eta(r).map(|e| format!(" · {e}")).unwrap_or_default();
            say!("progress: {} of {budget} runs done{eta}", r.runs_done);
        }
    }

    fn draw(&mut self, fraction: Option<f64>) {
        let Some(r) = &self.current else { return };
        if !self.status.enabled() {
            return;
        }
        // Runs done of the planned budget first: what the experiment as a whole has done.
        let mut line = format!("{}/{} runs", r.runs_done, r.runs_done + r.runs_left_max);
        if let Some(eta) = self.eta(r) {
            line.push_str(&format!(" · {eta}"));
        }
        line.push_str(&format!(" · {}", self.prefix(r)));
        if let Some((n, mean, rel)) = r.ci {
            line.push_str(&format!(
                " · {} {} ±{:.1}% (n={n})",
                self.metric,
                sig(mean),
                rel * 100.0
            ));
        }
        line.push_str(&format!(
            " · {}",
            match self.phase {
                // A workload's own set-up (filling tables) comes while it creates its files.
                Phase::Preparing | Phase::Populating if self.setting_up.is_some() => {
                    let (done, total, unit) = self.setting_up.unwrap_or_default();
                    format!(
                        "setting up {}% of {} {unit}s",
                        done * 100 / total.max(1),
                        thousands(total)
                    )
                }
                Phase::Preparing => "preparing".to_string(),
                Phase::Populating => "creating files".into(),
                Phase::DroppingCaches => "dropping caches".into(),
                Phase::Running => match fraction {
                    Some(f) => format!("running {:.0}%", (f * 100.0).min(100.0)),
                    None => "running".into(),
                },
                Phase::TearingDown => "cleaning up".into(),
            }
        ));
        self.status.show(format_args!("{line}"));
    }
}

/// A value with about four significant digits.
fn sig(v: f64) -> String {
    let a = v.abs();
    if a >= 1000.0 || a == 0.0 {
        format!("{v:.0}")
    } else if a >= 100.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.4}")
    }
}

impl RunnerObserver for Progress {
    fn experiment(&mut self, id: ExperimentId, resumed: Option<u64>) {
        match resumed {
            Some(n) => say!(
                "resuming experiment {} in {} ({n} finished runs kept)",
                id.0,
                self.db
            ),
            None => say!("experiment {} in {}", id.0, self.db),
        }
    }

    fn run_started(&mut self, run: &RunInfo) {
        self.run_started = Instant::now();
        self.tell(run);
        self.current = Some(run.clone());
        self.phase = Phase::Preparing;
        self.setting_up = None;
        self.draw(None);
    }

    fn phase(&mut self, phase: Phase) {
        self.phase = phase;
        self.draw(None);
    }

    fn progress(&mut self, fraction: f64, _elapsed: Duration) {
        self.draw(Some(fraction));
    }

    fn run_ended(&mut self, run: &RunInfo, end: &RunEnd) {
        self.status.clear();
        let mut line = self.prefix(run);
        match end.status {
            RunStatus::Ok => {
                if let Some(v) = end.metric {
                    line.push_str(&format!(": {} {}", self.metric, sig(v)));
                }
            }
            RunStatus::Failed => line.push_str(&format!(
                ": FAILED: {}",
                end.error.as_deref().unwrap_or("unknown error")
            )),
            RunStatus::Interrupted => line.push_str(": interrupted"),
        }
        if !(self.quiet && end.status == RunStatus::Ok) {
            say!("{line}");
        }
        // A finding is told once per configuration; `iolab show` counts them all.
        let new: Vec<_> = end
            .findings
            .iter()
            .filter(|f| self.told.insert((run.config.clone(), f.check.clone())))
            .cloned()
            .collect();
        crate::cmd::watch::print_findings(&new, "    ");
    }

    fn config_finished(&mut self, label: &str, outcome: &ConfigOutcome) {
        self.status.clear();
        say!("  {label}: {}", outcome.note);
    }

    fn event(&mut self, event: &Event<'_>) {
        if let Event::SettingUp { done, total, unit } = *event {
            self.setting_up = Some((done, total, unit));
            self.draw(None);
        }
        // Told once per configuration; the `system-skipped` finding is stored with each run.
        if let (Event::SystemSkipped(command), Some(run)) = (event, &self.current) {
            if self
                .told
                .insert((run.config.clone(), format!("system {command}")))
            {
                self.status.clear();
                say!(
                    "iolab: warning: [{}] `system \"{command}\"` not run (workload.system = false)",
                    run.config
                );
            }
        }
    }

    fn warn(&mut self, message: &str) {
        self.status.clear();
        say!("iolab: warning: {message}");
    }
}

/// Whether a stage is done and not run again: rank 0's answer on every rank under MPI (the
/// others have no database to ask), this process's otherwise.
fn stage_done_everywhere(done_here: bool) -> bool {
    match crate::state::group() {
        Some(g) => {
            let mine = [u8::from(done_here)];
            let root = (g.0.rank() == 0).then_some(&mine[..]);
            // A broadcast cut short by Ctrl-C: the stage runs, and sees the interruption.
            g.0.broadcast(root).is_ok_and(|b| b.first() == Some(&1))
        }
        None => done_here,
    }
}
