//! The binary's side of a kind's command ([`iolab_kind::cli::Host`]): a command's runs go
//! through the experiment runner like any experiment — environment probe, monitors, checks,
//! storage. `--no-db` stores into a database in memory that is dropped afterwards, so there
//! is no second path. What the command prints comes from its own view (progress) and its own
//! formats; the runs' ends come back as [`Ended`].

use std::io::IsTerminal;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use iolab_experiment::plan::single::single;
use iolab_experiment::run::monitor::MonitorOptions;
use iolab_experiment::run::{
    run_experiment, Event, Phase, RunEnd, RunInfo, RunnerObserver, RunnerOptions,
};
use iolab_kind::cli::{Ended, Host, Machine, RunArgs, Status, SystemCpu, View};
use iolab_kind::CommandPlan;
use iolab_monitor::procstat;
use iolab_store::{ConfigOutcome, ExperimentId, Finding, Store};

use crate::error::CliError;
use crate::term::StatusLine;

/// Where a command's runs are stored.
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
    pub fn from_args(no_db: bool, db: &Path) -> Result<Storage, CliError> {
        Ok(if no_db {
            Storage::Nowhere
        } else {
            Storage::Db(crate::cmd::db::open(db)?)
        })
    }
}

/// The machine, as the runner probed it for the experiment (once per process).
pub fn machine() -> &'static Machine {
    static MACHINE: OnceLock<Machine> = OnceLock::new();
    MACHINE.get_or_init(|| {
        let h = iolab_monitor::environment::HostEnv::once();
        Machine {
            hostname: h.hostname.clone().unwrap_or_default(),
            kernel: h.kernel_release.clone().unwrap_or_default(),
            cpus: h.available_parallelism.map_or_else(
                || std::thread::available_parallelism().map_or(1, |n| n.get()),
                |n| n as usize,
            ),
            mem_total_bytes: h.mem_total_bytes,
        }
    })
}

/// The binary as the kinds' commands see it.
pub struct CliHost {
    pub cancel: Arc<AtomicBool>,
}

impl Host for CliHost {
    fn run(
        &mut self,
        plan: CommandPlan,
        args: &RunArgs,
        view: &mut dyn View,
    ) -> Result<Vec<Ended>, CliError> {
        let storage = Storage::from_args(args.no_db, &args.db)?;
        let monitor = MonitorOptions {
            enabled: args.monitor,
            interval: args.monitor_interval,
            trace_blocks: args.trace_blocks,
            save_trace: None,
            trace_syscalls: args.trace_syscalls,
        };
        let mut display = Shown {
            status: StatusLine::new(std::io::stderr().is_terminal()),
            view,
        };
        let r = run_plan(plan, storage, monitor, &self.cancel, &mut display);
        display.status.clear();
        r
    }

    fn emit(
        &mut self,
        write: &mut dyn FnMut(&mut dyn std::io::Write) -> std::io::Result<()>,
    ) -> Result<(), CliError> {
        crate::output::emit(write)
    }

    fn check_store(&mut self, args: &RunArgs) -> Result<(), CliError> {
        Storage::from_args(args.no_db, &args.db).map(drop)
    }

    fn warn(&mut self, message: &str) {
        say!("iolab: warning: {message}");
    }

    fn say(&mut self, line: &str) {
        say!("{line}");
    }

    fn cancel(&self) -> &Arc<AtomicBool> {
        &self.cancel
    }

    fn machine(&self) -> &Machine {
        machine()
    }

    fn epilogue(&mut self, findings: &[Finding], stored: Option<ExperimentId>, db: &Path) {
        crate::cmd::watch::print_findings(findings, "");
        if let Some(id) = stored {
            say!("stored as experiment {} in {}", id.0, db.display());
        }
    }
}

/// Runs the plan of a command's runs through the runner and gives back each run's end, in
/// order (none when Ctrl-C came before the first run).
pub fn run_plan(
    plan: CommandPlan,
    storage: Storage,
    monitor: MonitorOptions,
    cancel: &Arc<AtomicBool>,
    display: &mut dyn RunnerObserver,
) -> Result<Vec<Ended>, CliError> {
    let plan = &single(plan)?;
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
        group: crate::state::group(),
        stall: crate::signals::stall_options(None),
    };
    let mut obs = Capture {
        display,
        ends: Vec::new(),
        cpu_start: None,
        cpu_end: None,
    };
    let outcome = run_experiment(plan, &mut store, &opts, &mut obs)
        .map_err(crate::cmd::experiment::runner_error)?;
    Ok(obs
        .ends
        .into_iter()
        .map(|(end, system_cpu)| Ended {
            number: end.number,
            status: end.status,
            failure: end
                .failure
                .or_else(|| end.error.map(iolab_experiment::run::RunFailure::failed)),
            findings: end.findings,
            metrics: end.metrics,
            system_cpu,
            stored: stored.then_some(outcome.id),
        })
        .collect())
}

/// A command's display: its [`View`] on the status line, plus the runner's warnings and
/// notes, each as `iolab: KIND: message` on stderr below the progress line.
pub struct Shown<'a> {
    pub status: StatusLine,
    pub view: &'a mut dyn View,
}

impl RunnerObserver for Shown<'_> {
    fn event(&mut self, event: &Event<'_>) {
        self.view.event(&mut self.status, event);
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

impl Status for StatusLine {
    fn enabled(&self) -> bool {
        StatusLine::enabled(self)
    }

    fn show(&mut self, text: std::fmt::Arguments<'_>) {
        StatusLine::show(self, text);
    }

    fn clear(&mut self) {
        StatusLine::clear(self);
    }

    fn keep(&mut self) {
        StatusLine::keep(self);
    }

    fn line(&mut self, text: &str) {
        StatusLine::clear(self);
        say!("{text}");
    }
}

/// Keeps every run's end and the CPU times around its timed region; passes everything on.
struct Capture<'a> {
    display: &'a mut dyn RunnerObserver,
    ends: Vec<(RunEnd, Option<SystemCpu>)>,
    cpu_start: Option<procstat::CpuTimes>,
    cpu_end: Option<procstat::CpuTimes>,
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

    fn progress(&mut self, fraction: f64, elapsed: Duration) {
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
