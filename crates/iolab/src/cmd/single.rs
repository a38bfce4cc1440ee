//! A single run from the command line (`iolab micro`, `iolab run FILE.f`): its one-run plan
//! goes through the experiment runner like any experiment — environment probe, monitors,
//! checks, storage. `--no-db` stores into a database in memory that is dropped afterwards,
//! so there is no second path. What the command prints comes from its own display (a
//! [`RunnerObserver`]) and from the run's end ([`RunEnd`]: the kind's engine result, the
//! findings, the metrics).

use std::io::IsTerminal;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use iolab_experiment::plan::single::single;
use iolab_experiment::run::monitor::MonitorOptions;
use iolab_experiment::run::{
    run_experiment, Event, Phase, RunEnd, RunInfo, RunnerObserver, RunnerOptions,
};
use iolab_kind::Runs;
use iolab_monitor::procstat::{self, CpuTimes};
use iolab_store::{ConfigOutcome, ExperimentId, Metric, RunStatus, Store};
use serde_json::{Map, Value};

use crate::cli::{KindFormat, KindRunArgs};
use crate::error::CliError;
use crate::fmt::thousands;
use crate::output::{Host, SingleReport};
use crate::term::StatusLine;

/// Where a single run is stored.
pub enum Storage {
    /// The results database (already opened, so a bad one is refused before anything runs).
    Db(Store),
    /// Nowhere (`--no-db`).
    Nowhere,
}

impl Storage {
    /// `--no-db`, or the results database `db`, opened now: a database that cannot take the
    /// result is refused (exit 2) before anything runs, not after the run when its result
    /// would be lost.
    pub fn from_args(no_db: bool, db: &std::path::Path) -> Result<Storage, CliError> {
        Ok(if no_db {
            Storage::Nowhere
        } else {
            Storage::Db(crate::cmd::db::open(db)?)
        })
    }
}

/// How a single run ended, when it ran.
pub struct Single<T> {
    /// The kind's own result, for the command's formats.
    pub output: T,
    pub end: RunEnd,
    /// The experiment it is stored as (`None` with `--no-db`).
    pub stored: Option<ExperimentId>,
    /// System-wide CPU times at the start and end of the timed region.
    pub system_cpu: Option<(CpuTimes, CpuTimes)>,
}

/// Runs `runs` (one configuration, one run) through the runner, showing progress through
/// `display`, and gives back the kind's result `T`. A run that failed is an error: exit 2
/// when the input was at fault, 1 when the run failed, 130 with `interrupted` when Ctrl-C
/// ended it.
pub fn run<T: Send + 'static>(
    runs: Runs<T>,
    storage: Storage,
    monitor: MonitorOptions,
    cancel: &Arc<AtomicBool>,
    display: &mut dyn RunnerObserver,
    interrupted: &str,
) -> Result<Single<T>, CliError> {
    run_each(runs, storage, monitor, cancel, display, interrupted)?
        .pop()
        .ok_or_else(|| CliError::interrupted(interrupted))
}

/// A run's end as the command's result, or its failure as the command's error.
fn finished<T: Send + 'static>(
    end: RunEnd,
    output: Option<T>,
    stored: Option<ExperimentId>,
    system_cpu: Option<(CpuTimes, CpuTimes)>,
    interrupted: &str,
) -> Result<Single<T>, CliError> {
    match end.status {
        RunStatus::Ok => Ok(Single {
            output: output
                .ok_or_else(|| CliError::failed("internal error: the run gave no result"))?,
            end,
            stored,
            system_cpu,
        }),
        RunStatus::Interrupted => Err(CliError::interrupted(interrupted)),
        RunStatus::Failed => {
            let f = end.failure.unwrap_or_else(|| {
                iolab_experiment::run::RunFailure::failed(
                    end.error.unwrap_or_else(|| "unknown error".into()),
                )
            });
            let err = if f.located {
                CliError::located(&f.message)
            } else if f.bad_input {
                CliError::usage(&f.message)
            } else {
                CliError::failed(format!("run failed: {}", f.message))
            };
            Err(match f.hint {
                Some(h) => err.with_hint(h),
                None => err,
            })
        }
    }
}

/// Runs a plan of several configurations, each once (`iolab iozone --auto`), like [`run`],
/// and gives back every run's result in order. The first failed run is the error.
pub fn run_each<T: Send + 'static>(
    runs: Runs<T>,
    storage: Storage,
    monitor: MonitorOptions,
    cancel: &Arc<AtomicBool>,
    display: &mut dyn RunnerObserver,
    interrupted: &str,
) -> Result<Vec<Single<T>>, CliError> {
    let plan = &single(runs.plan).map_err(crate::cmd::usage)?;
    let (mut store, stored) = match storage {
        Storage::Db(store) => (store, true),
        Storage::Nowhere => (Store::open_in_memory().map_err(CliError::failed)?, false),
    };
    let opts = RunnerOptions {
        sut: crate::state::sut_options(),
        cancel: Arc::clone(cancel),
        resume: false,
        iolab_version: env!("CARGO_PKG_VERSION").into(),
        monitor,
    };
    let mut obs = Capture {
        display,
        ends: Vec::new(),
        cpu_start: None,
        cpu_end: None,
    };
    let outcome = run_experiment(plan, &mut store, &opts, &mut obs)
        .map_err(crate::cmd::experiment::runner_error)?;
    if obs.ends.is_empty() {
        // Ctrl-C before the first run started.
        return Err(CliError::interrupted(interrupted));
    }
    let mut out = Vec::with_capacity(obs.ends.len());
    for (end, system_cpu) in obs.ends {
        let output = runs.outputs.take(end.number);
        out.push(finished(
            end,
            output,
            stored.then_some(outcome.id),
            system_cpu,
            interrupted,
        )?);
    }
    Ok(out)
}

/// What a command shows of the engine's events, on the progress line it is given.
pub trait EngineView {
    fn engine(&mut self, status: &mut StatusLine, event: &Event<'_>);
}

/// A command's display: its [`EngineView`] plus the runner's warnings and notes, each as
/// `iolab: KIND: message` on stderr below the progress line.
pub struct Shown<V> {
    pub status: StatusLine,
    pub view: V,
}

impl<V: EngineView> RunnerObserver for Shown<V> {
    fn event(&mut self, event: &Event<'_>) {
        self.view.engine(&mut self.status, event);
    }

    fn warn(&mut self, message: &str) {
        self.status.clear();
        say!("iolab: warning: {message}");
    }

    fn note(&mut self, message: &str) {
        self.status.clear();
        say!("iolab: note: {message}");
    }
}

/// The run's system summary: the whole-run values of the monitor metrics that describe the
/// machine ([`iolab_metrics::SYSTEM_SUMMARY`]), those that were measured.
pub fn system_summary(metrics: &[Metric]) -> Map<String, Value> {
    iolab_metrics::SYSTEM_SUMMARY
        .iter()
        .filter_map(|(name, _)| {
            let m = metrics.iter().find(|m| m.name == *name)?;
            let n = serde_json::Number::from_f64(m.value)?;
            Some((name.to_string(), Value::Number(n)))
        })
        .collect()
}

/// Keeps every run's end and the CPU times around its timed region; passes everything on.
struct Capture<'a> {
    display: &'a mut dyn RunnerObserver,
    ends: Vec<(RunEnd, Option<(CpuTimes, CpuTimes)>)>,
    cpu_start: Option<CpuTimes>,
    cpu_end: Option<CpuTimes>,
}

impl RunnerObserver for Capture<'_> {
    fn experiment(&mut self, id: ExperimentId, resumed: Option<u64>) {
        self.display.experiment(id, resumed);
    }

    fn run_started(&mut self, run: &RunInfo) {
        self.display.run_started(run);
    }

    fn phase(&mut self, phase: Phase) {
        self.display.phase(phase);
    }

    fn progress(&mut self, fraction: f64, elapsed: std::time::Duration) {
        self.display.progress(fraction, elapsed);
    }

    fn run_ended(&mut self, run: &RunInfo, end: &RunEnd) {
        self.display.run_ended(run, end);
        let cpu = self.cpu_start.take().zip(self.cpu_end.take());
        self.ends.push((end.clone(), cpu));
    }

    fn config_finished(&mut self, label: &str, outcome: &ConfigOutcome) {
        self.display.config_finished(label, outcome);
    }

    fn event(&mut self, event: &Event<'_>) {
        match event {
            Event::TimedStart => self.cpu_start = procstat::read().ok().map(|s| s.total),
            Event::TimedEnd => self.cpu_end = procstat::read().ok().map(|s| s.total),
            _ => {}
        }
        self.display.event(event);
    }

    fn warn(&mut self, message: &str) {
        self.display.warn(message);
    }

    fn note(&mut self, message: &str) {
        self.display.note(message);
    }
}

/// `iolab micro` and `iolab sqlite`: opens the storage (a database that cannot take the result
/// is refused before anything runs, exit 2, not after the run when its result would be lost),
/// runs the kind's one-run plan with a progress line counting `unit`s, and gives back the
/// report for the kind's formats and the experiment it is stored as.
pub fn run_kind<T: Send + 'static, F: KindFormat>(
    runs: Runs<T>,
    args: &KindRunArgs<F>,
    cancel: &Arc<AtomicBool>,
    unit: &'static str,
    interrupted: &str,
) -> Result<(SingleReport<T>, Option<ExperimentId>), CliError> {
    let started_at = SystemTime::now();
    let run = run_viewed::<T>(
        runs,
        Storage::from_args(args.no_db, &args.db.db)?,
        args.monitor.options(),
        cancel,
        Counting { unit },
        interrupted,
    )?;
    let report = SingleReport {
        result: run.output,
        system_cpu: run.system_cpu,
        host: Host::probe(),
        started_at,
        findings: run.end.findings.clone(),
        system: system_summary(&run.end.metrics),
    };
    Ok((report, run.stored))
}

/// [`run`] with `view` showing the engine's events on the status line (on a terminal),
/// which is cleared before the result is given back.
pub fn run_viewed<T: Send + 'static>(
    runs: Runs<T>,
    storage: Storage,
    monitor: MonitorOptions,
    cancel: &Arc<AtomicBool>,
    view: impl EngineView,
    interrupted: &str,
) -> Result<Single<T>, CliError> {
    let mut display = Shown {
        status: StatusLine::new(std::io::stderr().is_terminal()),
        view,
    };
    let r = run::<T>(runs, storage, monitor, cancel, &mut display, interrupted);
    display.status.clear();
    r
}

/// After a kind's result, in the human format: the findings and where the run is stored.
pub fn epilogue<F: KindFormat>(
    args: &KindRunArgs<F>,
    findings: &[iolab_store::Finding],
    stored: Option<ExperimentId>,
) {
    if args.format() == F::HUMAN {
        crate::cmd::watch::print_findings(findings, "");
        if let Some(id) = stored {
            say!("stored as experiment {} in {}", id.0, args.db.db.display());
        }
    }
}

/// Fill progress and the progress of the operations (`unit`s: records, transactions) on a
/// terminal.
pub struct Counting {
    pub unit: &'static str,
}

impl EngineView for Counting {
    fn engine(&mut self, line: &mut StatusLine, event: &Event<'_>) {
        match *event {
            Event::Filling { done, total } => {
                if !line.enabled() || total < 64 << 20 {
                    return;
                }
                // One update per 64 MiB keeps the terminal quiet and the cost invisible.
                if done.is_multiple_of(64 << 20) || done == total {
                    line.show(format_args!(
                        "preparing files: {} of {} MiB ({}%)",
                        done >> 20,
                        total >> 20,
                        done * 100 / total
                    ));
                }
            }
            // Called every progress period while the workers set up; shown from the first.
            Event::SettingUp { done, total, unit } if line.enabled() && total > 0 => {
                line.show(format_args!(
                    "setting up: {} of {} {unit}{} ({}%)",
                    thousands(done),
                    thousands(total),
                    if total == 1 { "" } else { "s" },
                    done * 100 / total
                ));
            }
            Event::TimedStart => line.keep(),
            Event::Records {
                done,
                planned,
                elapsed,
            } => {
                // Short runs finish before anyone could read a progress line.
                if !line.enabled() || elapsed < Duration::from_secs(1) || planned == 0 {
                    return;
                }
                let rate = done as f64 / elapsed.as_secs_f64();
                let left = if rate > 0.0 {
                    format!(
                        ", ~{:.0} s left",
                        (planned - done.min(planned)) as f64 / rate
                    )
                } else {
                    String::new()
                };
                line.show(format_args!(
                    "running: {}% ({} of {} {}{}), {} {}s/s{left}",
                    done * 100 / planned,
                    thousands(done),
                    thousands(planned),
                    self.unit,
                    if planned == 1 { "" } else { "s" },
                    thousands(rate as u64),
                    self.unit
                ));
            }
            Event::TimedEnd => line.clear(),
            _ => {}
        }
    }
}
