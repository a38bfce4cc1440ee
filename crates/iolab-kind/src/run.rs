//! What a kind gets to run its workload once ([`RunCtx`]), the hooks through which it tells
//! the runner where the timed region is and how far it got ([`RunHooks`], [`Event`]), what it
//! may ask of the system under test in the middle of a run ([`SutControl`]), and how a run
//! fails ([`RunFailure`]). The runner implements the hooks (dropping caches and starting the
//! monitors where the timed region starts); the engine and every kind call them.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use iolab_store::RunRecord;

/// What a kind gets to run its workload once.
pub struct RunCtx<'a> {
    /// The prepared directory (the target's mount point, or the directory itself).
    pub dir: &'a Path,
    /// This run's seed.
    pub seed: u64,
    /// The runner's number for this run (unique within one runner session): a command that
    /// keeps its runs' outputs pairs them with the runs' ends by it.
    pub number: u64,
    /// Set on Ctrl-C: the run ends early.
    pub cancel: &'a Arc<AtomicBool>,
    /// Where the timed region starts and ends, progress, the run's files.
    pub hooks: &'a mut dyn RunHooks,
    /// The kind adds its measurements here (metrics, flowops, series, `run.elapsed_ns`); the
    /// runner adds the monitors', the findings and the run's own fields.
    pub record: &'a mut RunRecord,
    /// What the kind may ask of the system under test during its run.
    pub sut: &'a mut dyn SutControl,
    /// The ranks that run this workload together (under MPI), or this process alone
    /// ([`crate::Solo`]). A kind that ignores them runs its whole workload on every rank; the
    /// runner starts the timed region on all ranks at once and adds their records up.
    pub ranks: &'a dyn crate::Ranks,
}

/// How a run tells the runner what it is doing. Every kind calls `timed_start` and
/// `timed_end` around its timed region (the engine does it for the kinds that run on it).
pub trait RunHooks {
    /// The files (or directory trees) the run works on, told before the timed region:
    /// dropping caches checks that these left the page cache.
    fn run_files(&mut self, files: Vec<PathBuf>);
    /// The timed region starts now: the runner drops caches (if asked) and starts the
    /// monitors before this returns.
    fn timed_start(&mut self);
    /// The timed region has ended: the monitors stop.
    fn timed_end(&mut self);
    /// Progress and what the workload reports, for the display.
    fn event(&mut self, event: &Event<'_>);

    /// Between two phases of the timed region (IOR's write and the read after it): drops the
    /// page cache of the run's files when the run drops caches, so that the next phase
    /// starts cold. The monitors go on. Call it on every rank, between barriers.
    fn between_phases(&mut self) {}

    /// The calling thread only supervises another program (the exec kind): the syscall
    /// view counts the processes it starts, not its own waiting. Call before `timed_start`.
    fn supervising(&mut self) {}

    /// [`Event::Records`]: `done` of `planned` records, `elapsed` into the timed region.
    fn records(&mut self, done: u64, planned: u64, elapsed: Duration) {
        self.event(&Event::Records {
            done,
            planned,
            elapsed,
        });
    }

    /// [`Event::Filling`]: `done` of `total` bytes of the run's files written.
    fn filling(&mut self, done: u64, total: u64) {
        self.event(&Event::Filling { done, total });
    }
}

/// Hooks that do nothing: for running a kind's engine outside the runner (tests, tools).
impl RunHooks for () {
    fn run_files(&mut self, _files: Vec<PathBuf>) {}
    fn timed_start(&mut self) {}
    fn timed_end(&mut self) {}
    fn event(&mut self, _event: &Event<'_>) {}
}

/// What a workload reports while it runs, for the progress display.
#[derive(Debug, Clone, Copy)]
pub enum Event<'a> {
    /// Writing the run's files before the timed region: `done` of `total` bytes.
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
    /// Creating a fileset's files.
    Populating {
        fileset: &'a str,
    },
    Populated {
        fileset: &'a str,
    },
    /// A line the workload echoes.
    Echo(&'a str),
    /// A shell command of the workload is about to run.
    System(&'a str),
    /// A shell command of the workload was not run (the user said not to run them).
    SystemSkipped(&'a str),
    /// A shell command of the workload exited unsuccessfully (the workload goes on).
    SystemFailed {
        command: &'a str,
        status: std::process::ExitStatus,
    },
    /// The timed region starts (after caches were dropped). Sent by the runner.
    TimedStart,
    /// Records done of planned, `elapsed` into the timed region.
    Records {
        done: u64,
        planned: u64,
        elapsed: Duration,
    },
    /// Operations so far, `elapsed` of `planned`.
    Operations {
        ops: u64,
        elapsed: Duration,
        planned: Duration,
    },
    /// A statistics line: operations and bytes so far.
    Report {
        ops: u64,
        bytes: u64,
        elapsed: Duration,
    },
    /// The timed region has ended. Sent by the runner.
    TimedEnd,
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

/// The system under test as a kind sees it during its run.
pub trait SutControl {
    /// Unmounts the run's filesystem and mounts it again with the same options: its page
    /// cache, dentries and inodes are gone, its data stay. Fails, with the reason in the
    /// user's words, when iolab did not mount the target (a directory) or a remount would
    /// lose the files (tmpfs). No file of the filesystem may be open.
    fn remount(&mut self) -> Result<Remount, String>;

    /// Makes a directory the workload needs and its missing parents (a fileset's directory
    /// that the workload's language creates): `None` when it exists. Journalled when the
    /// session keeps a journal; remove it after the run, failed or not, with
    /// [`SutControl::remove_dir`].
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

    /// With a hint.
    pub fn hint(mut self, hint: Option<String>) -> RunFailure {
        self.hint = hint;
        self
    }

    /// The message with its hint, as stored with a failed run.
    pub fn text(&self) -> String {
        match &self.hint {
            Some(h) => format!("{} ({h})", self.message),
            None => self.message.clone(),
        }
    }
}
