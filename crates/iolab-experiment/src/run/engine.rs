//! The seam between the runner and a workload kind: what a kind gets to run once
//! ([`KindRun`]), what it gives back ([`Ran`], [`RunFailure`]), and the adapter that turns
//! the engine's observer hooks into the runner's ([`EngineEvent`]s for the display, dropping
//! caches and starting the monitors where the timed region starts).

use std::any::Any;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use iolab_engine::fileset::PopulateReport;
use iolab_engine::workload::WorkloadObserver;
use iolab_engine::EngineError;
use iolab_store::RunRecord;

use super::monitor::Watch;
use super::{Phase, RunnerObserver};

/// Both of the engine's observer traits (micro tests report through one, workloads through
/// the other); a kind passes this to whichever engine call it makes.
pub trait EngineObserver: iolab_engine::Observer + WorkloadObserver {
    /// The files (or directory trees) the run works on, told before the engine starts:
    /// dropping caches checks that these left the page cache.
    fn run_files(&mut self, files: Vec<PathBuf>);
}

/// What a kind gets to run its workload once.
pub struct KindRun<'a> {
    /// The prepared directory (the target's mount point, or the directory itself).
    pub dir: &'a Path,
    /// This run's seed.
    pub seed: u64,
    /// Set on Ctrl-C: the engine ends the run early.
    pub cancel: &'a Arc<AtomicBool>,
    /// Pass to the engine.
    pub obs: &'a mut dyn EngineObserver,
    /// The kind adds its measurements here (metrics, flowops, series, `run.elapsed_ns`); the
    /// runner adds the monitors', the findings and the run's own fields.
    pub record: &'a mut RunRecord,
    /// What the kind may ask of the system under test in the middle of its run.
    pub sut: &'a mut dyn SutControl,
}

/// How long a remount took.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Remount {
    /// The unmount, with the writeback it waits for.
    pub unmount: Duration,
    pub mount: Duration,
    /// The new mount's unique id (never reused while the system runs; Linux ≥ 6.8), else
    /// its id in /proc/self/mountinfo (which the kernel may give again to the next mount).
    pub mount_id: Option<u64>,
}

/// The system under test as a kind sees it during its run (the runner's `Sut` session and the
/// run's prepared target).
pub trait SutControl {
    /// Unmounts the run's filesystem and mounts it again with the same options: its page
    /// cache, dentries and inodes are gone, its data stay. Fails, with the reason in the
    /// user's words, when iolab did not mount the target (a directory) or a remount would
    /// lose the files (tmpfs). No file of the filesystem may be open.
    fn remount(&mut self) -> Result<Remount, String>;

    /// Makes a directory the workload needs and its missing parents (a WML fileset's `path`,
    /// which filebench creates): `None` when it exists. Journalled when the session keeps a
    /// journal; remove it after the run, failed or not, with [`SutControl::remove_dir`].
    fn make_dir(&mut self, path: &Path) -> Result<Option<iolab_sut::WorkDir>, String> {
        iolab_sut::workdir::make_work_dir(path).map_err(|e| e.to_string())
    }

    /// Removes a directory [`SutControl::make_dir`] made, with everything in it.
    fn remove_dir(&mut self, dir: iolab_sut::WorkDir) -> Result<(), String> {
        iolab_sut::workdir::remove_work_dir(dir)
            .map(drop)
            .map_err(|e| e.to_string())
    }
}

/// For a run with no system under test to control (tests of a kind's run).
pub struct NoSut;

impl SutControl for NoSut {
    fn remount(&mut self) -> Result<Remount, String> {
        Err("no filesystem of iolab's to remount".into())
    }
}

/// What a finished run gives back besides its record.
pub struct Ran {
    /// The engine's own result (`iolab_engine::MicroResult`,
    /// `iolab_engine::workload::WorkloadResult`, …), for the formats of the kind's command.
    pub output: Arc<dyn Any + Send + Sync>,
}

/// Why a run failed, in the user's words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunFailure {
    pub message: String,
    /// What to do about it, naming settings as the user wrote them.
    pub hint: Option<String>,
    /// The input is at fault (exit code 2), not the machine.
    pub bad_input: bool,
    /// Ended by Ctrl-C.
    pub interrupted: bool,
    /// The message is a diagnostic located in a workload file (`FILE:LINE:COL: error: …`).
    pub located: bool,
}

impl Ran {
    /// A run that gave `output`.
    pub fn new<T: Any + Send + Sync>(output: T) -> Ran {
        Ran {
            output: Arc::new(output),
        }
    }
}

impl RunFailure {
    /// A failure of the machine or the run (exit code 1).
    pub fn failed(message: impl Into<String>) -> RunFailure {
        RunFailure {
            message: message.into(),
            hint: None,
            bad_input: false,
            interrupted: false,
            located: false,
        }
    }

    /// The input is at fault (exit code 2).
    pub fn bad_input(message: impl Into<String>) -> RunFailure {
        RunFailure {
            bad_input: true,
            ..RunFailure::failed(message)
        }
    }

    /// An engine error, with the kind's hint.
    pub fn engine(e: &EngineError, hint: Option<String>) -> RunFailure {
        RunFailure {
            message: e.to_string(),
            hint,
            bad_input: e.is_bad_input(),
            interrupted: e.is_interrupted(),
            located: false,
        }
    }

    /// The message with its hint, as stored with a failed run.
    pub fn text(&self) -> String {
        match &self.hint {
            Some(h) => format!("{} ({h})", self.message),
            None => self.message.clone(),
        }
    }
}

/// What the engine reports while a workload runs, for the progress display. The events of
/// both engine observer traits, as they come.
#[derive(Debug, Clone, Copy)]
pub enum EngineEvent<'a> {
    /// Writing a micro test's files before the timed region: `done` of `total` bytes.
    Filling {
        done: u64,
        total: u64,
    },
    /// Workers setting up before the timed region: `done` of `total` `unit`s (singular).
    SettingUp {
        done: u64,
        total: u64,
        unit: &'static str,
    },
    /// Creating a WML fileset's files.
    Populating {
        fileset: &'a str,
    },
    Populated {
        fileset: &'a str,
    },
    /// An `echo` line of a WML workload.
    Echo(&'a str),
    /// A WML `system` command is about to run.
    System(&'a str),
    /// A WML `system` command was not run (`--no-system`, `workload.system = false`).
    SystemSkipped(&'a str),
    /// A WML `system` command exited unsuccessfully (the workload goes on).
    SystemFailed {
        command: &'a str,
        status: std::process::ExitStatus,
    },
    /// The timed region starts (after caches were dropped).
    TimedStart,
    /// A micro test's records done of planned, `elapsed` into the timed region.
    Records {
        done: u64,
        planned: u64,
        elapsed: Duration,
    },
    /// A WML workload's data operations so far, `elapsed` of `planned`.
    Operations {
        ops: u64,
        elapsed: Duration,
        planned: Duration,
    },
    /// A WML `psrun` statistics line: data operations and bytes so far.
    Report {
        ops: u64,
        bytes: u64,
        elapsed: Duration,
    },
    /// The timed region has ended.
    TimedEnd,
}

/// Adapts the engine's observers to the runner's, and drops caches where the timed region
/// is about to start (after population, so the run starts cold).
pub(crate) struct EngineObs<'a> {
    pub outer: &'a mut dyn RunnerObserver,
    pub drop_caches: bool,
    pub drop_error: Option<String>,
    pub drop_freed_kib: Option<u64>,
    /// The workload's planned run time (progress fractions).
    pub planned: Option<Duration>,
    pub watch: Watch,
    /// `system` commands the engine skipped, for the checks.
    pub skipped_system: Vec<String>,
    /// The run's files, whose leaving the page cache the drop checks.
    pub run_files: Vec<PathBuf>,
}

impl EngineObserver for EngineObs<'_> {
    fn run_files(&mut self, files: Vec<PathBuf>) {
        self.run_files = files;
    }
}

impl EngineObs<'_> {
    fn before_timed_region(&mut self) {
        if self.drop_caches {
            self.outer.phase(Phase::DroppingCaches);
            match iolab_sut::drop_caches(&self.run_files) {
                Ok(r) => {
                    self.drop_freed_kib = Some(r.freed_kib());
                    self.watch.caches_dropped(&r);
                }
                Err(e) => self.drop_error = Some(format!("dropping caches: {e}")),
            }
        }
        // The samplers' origin is the timed region's start, to within the barrier release.
        self.watch.start();
        self.outer.phase(Phase::Running);
        self.outer.engine(&EngineEvent::TimedStart);
    }

    fn after_timed_region(&mut self) {
        self.watch.stop();
        self.outer.engine(&EngineEvent::TimedEnd);
    }
}

impl iolab_engine::Observer for EngineObs<'_> {
    fn preparing(&mut self, done: u64, total: u64) {
        self.outer.engine(&EngineEvent::Filling { done, total });
    }

    fn setting_up(&mut self, done: u64, total: u64, unit: &'static str) {
        self.outer
            .engine(&EngineEvent::SettingUp { done, total, unit });
    }

    fn started(&mut self) {
        self.before_timed_region();
    }

    fn finished(&mut self) {
        self.after_timed_region();
    }

    fn progress(&mut self, done: u64, planned: u64, elapsed: Duration) {
        if planned > 0 {
            self.outer.progress(done as f64 / planned as f64, elapsed);
        }
        self.outer.engine(&EngineEvent::Records {
            done,
            planned,
            elapsed,
        });
    }
}

impl WorkloadObserver for EngineObs<'_> {
    fn populating(&mut self, fileset: &str) {
        self.outer.engine(&EngineEvent::Populating { fileset });
    }

    fn populated(&mut self, fileset: &str, _report: &PopulateReport) {
        self.outer.engine(&EngineEvent::Populated { fileset });
    }

    fn echo(&mut self, text: &str) {
        self.outer.engine(&EngineEvent::Echo(text));
    }

    fn system(&mut self, command: &str) {
        self.outer.engine(&EngineEvent::System(command));
    }

    fn system_skipped(&mut self, command: &str) {
        self.skipped_system.push(command.to_string());
        self.outer.engine(&EngineEvent::SystemSkipped(command));
    }

    fn system_failed(&mut self, command: &str, status: std::process::ExitStatus) {
        self.outer
            .engine(&EngineEvent::SystemFailed { command, status });
    }

    fn ready(&mut self) {
        self.before_timed_region();
    }

    fn finished(&mut self) {
        self.after_timed_region();
    }

    fn progress(&mut self, ops: u64, elapsed: Duration, planned: Duration) {
        let planned = self.planned.unwrap_or(planned);
        if !planned.is_zero() {
            self.outer
                .progress(elapsed.as_secs_f64() / planned.as_secs_f64(), elapsed);
        }
        self.outer.engine(&EngineEvent::Operations {
            ops,
            elapsed,
            planned,
        });
    }

    fn report(&mut self, ops: u64, bytes: u64, elapsed: Duration) {
        self.outer.engine(&EngineEvent::Report {
            ops,
            bytes,
            elapsed,
        });
    }
}
