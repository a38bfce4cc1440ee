//! A run executed by another process: `iolab __worker`, started by the runner inside a
//! container or a VM ([`super::place`]), runs one run's workload with the same kind code as a
//! run on the host, and talks to the runner over its standard input and output — a pipe for
//! a container, a virtio-serial port for a VM — one JSON message per line:
//!
//! - the runner sends a [`Request`]: the experiment file's text, the configuration, the run's
//!   seed and number, the directory (and for a VM, the disk to mount there);
//! - the worker answers `hello` (what it sees: kernel, clock source, CPUs, hostname, PID), then
//!   `run_files`, `timed_start` (and waits for `go`: the runner drops caches and starts the
//!   monitors first), progress `event`s, `timed_end`, and `done` (the run's record) or
//!   `failed` (the reason);
//! - the runner may send `cancel` at any time (Ctrl-C).
//!
//! The record travels as a one-run results database ([`iolab_store::transfer`]), so it arrives
//! exactly as the kind wrote it. The worker writes its messages from a thread of its own
//! (`iolab-link`), which the syscall view does not count.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use iolab_kind::run::{Event, RunCtx, RunFailure, RunHooks, SutControl};
use iolab_store::{NewRun, RunRecord, RunStatus, Timestamp};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::plan::ExperimentPlan;

/// The protocol's version: a runner and a worker of different iolab builds refuse each other.
pub const PROTOCOL: u32 = 1;

/// The hidden subcommand that runs a worker.
pub const SUBCOMMAND: &str = "__worker";

/// The names of the worker's own threads, which the syscall view leaves out.
pub const LINK_THREADS: &[&str] = &["iolab-link", "iolab-link-in"];

/// What the runner asks of a worker: one run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Request {
    pub protocol: u32,
    /// The experiment file (relative workload paths start at its directory).
    pub source: PathBuf,
    /// Its text, as the runner read it.
    pub text: String,
    /// A `[[then]]` stage: its index and the previous stage's trace.
    pub stage: Option<(usize, Option<PathBuf>)>,
    /// The configuration's index in the plan.
    pub config: usize,
    pub seed: u64,
    pub number: u64,
    pub repetition: u32,
    /// Where the run's files go.
    pub dir: PathBuf,
    /// A VM's disk: mount it on `dir` first, unmount it after.
    pub mount: Option<DiskMount>,
    /// Drop the page cache of the worker's own kernel (a VM's) where the timed region starts.
    pub drop_caches: bool,
}

/// A filesystem the worker mounts itself.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DiskMount {
    pub device: PathBuf,
    pub fstype: String,
    pub options: String,
}

/// Worker → runner.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Up {
    Hello(Value),
    RunFiles(Vec<PathBuf>),
    TimedStart,
    TimedEnd,
    Event(WireEvent),
    Done { record: String },
    Failed(WireFailure),
}

/// Runner → worker, after the request.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Down {
    Go,
    Cancel,
}

#[derive(Debug, Serialize, Deserialize)]
struct WireFailure {
    message: String,
    hint: Option<String>,
    bad_input: bool,
    interrupted: bool,
    located: bool,
}

impl From<&RunFailure> for WireFailure {
    fn from(f: &RunFailure) -> Self {
        WireFailure {
            message: f.message.clone(),
            hint: f.hint.clone(),
            bad_input: f.bad_input,
            interrupted: f.interrupted,
            located: f.located,
        }
    }
}

impl From<WireFailure> for RunFailure {
    fn from(f: WireFailure) -> Self {
        RunFailure {
            message: f.message,
            hint: f.hint,
            bad_input: f.bad_input,
            interrupted: f.interrupted,
            located: f.located,
        }
    }
}

/// The events the runner's display uses, owned.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum WireEvent {
    Filling {
        done: u64,
        total: u64,
    },
    SettingUp {
        done: u64,
        total: u64,
        unit: String,
    },
    Populating(String),
    Populated(String),
    Echo(String),
    System(String),
    SystemSkipped(String),
    SystemFailed {
        command: String,
        status: String,
    },
    Records {
        done: u64,
        planned: u64,
        elapsed_ns: u64,
    },
    Operations {
        ops: u64,
        elapsed_ns: u64,
        planned_ns: u64,
    },
    Report {
        ops: u64,
        bytes: u64,
        elapsed_ns: u64,
    },
}

/// A unit's name for [`Event::SettingUp`], which holds `'static` names: each distinct name
/// (a kind has one or two) is kept once for the life of the process.
fn intern(unit: &str) -> &'static str {
    static UNITS: std::sync::Mutex<Vec<&'static str>> = std::sync::Mutex::new(Vec::new());
    let mut units = UNITS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(u) = units.iter().find(|u| **u == unit) {
        return u;
    }
    let u: &'static str = Box::leak(unit.to_owned().into_boxed_str());
    units.push(u);
    u
}

fn ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

impl WireEvent {
    fn of(e: &Event<'_>) -> Option<WireEvent> {
        Some(match *e {
            Event::Filling { done, total } => WireEvent::Filling { done, total },
            Event::SettingUp { done, total, unit } => WireEvent::SettingUp {
                done,
                total,
                unit: unit.into(),
            },
            Event::Populating { fileset } => WireEvent::Populating(fileset.into()),
            Event::Populated { fileset } => WireEvent::Populated(fileset.into()),
            Event::Echo(s) => WireEvent::Echo(s.into()),
            Event::System(s) => WireEvent::System(s.into()),
            Event::SystemSkipped(s) => WireEvent::SystemSkipped(s.into()),
            Event::SystemFailed { command, status } => WireEvent::SystemFailed {
                command: command.into(),
                status: status.to_string(),
            },
            Event::Records {
                done,
                planned,
                elapsed,
            } => WireEvent::Records {
                done,
                planned,
                elapsed_ns: ns(elapsed),
            },
            Event::Operations {
                ops,
                elapsed,
                planned,
            } => WireEvent::Operations {
                ops,
                elapsed_ns: ns(elapsed),
                planned_ns: ns(planned),
            },
            Event::Report {
                ops,
                bytes,
                elapsed,
            } => WireEvent::Report {
                ops,
                bytes,
                elapsed_ns: ns(elapsed),
            },
            // The runner's own.
            Event::TimedStart | Event::TimedEnd => return None,
        })
    }

    /// Hands the event to `hooks` as the kind would have.
    fn deliver(&self, hooks: &mut dyn RunHooks) {
        let d = Duration::from_nanos;
        match self {
            WireEvent::Filling { done, total } => hooks.filling(*done, *total),
            WireEvent::SettingUp { done, total, unit } => hooks.event(&Event::SettingUp {
                done: *done,
                total: *total,
                unit: intern(unit),
            }),
            WireEvent::Populating(f) => hooks.event(&Event::Populating { fileset: f }),
            WireEvent::Populated(f) => hooks.event(&Event::Populated { fileset: f }),
            WireEvent::Echo(s) => hooks.event(&Event::Echo(s)),
            WireEvent::System(s) => hooks.event(&Event::System(s)),
            WireEvent::SystemSkipped(s) => hooks.event(&Event::SystemSkipped(s)),
            WireEvent::SystemFailed { command, status } => {
                hooks.event(&Event::Echo(&format!("{command}: {status}")))
            }
            WireEvent::Records {
                done,
                planned,
                elapsed_ns,
            } => hooks.records(*done, *planned, d(*elapsed_ns)),
            WireEvent::Operations {
                ops,
                elapsed_ns,
                planned_ns,
            } => hooks.event(&Event::Operations {
                ops: *ops,
                elapsed: d(*elapsed_ns),
                planned: d(*planned_ns),
            }),
            WireEvent::Report {
                ops,
                bytes,
                elapsed_ns,
            } => hooks.event(&Event::Report {
                ops: *ops,
                bytes: *bytes,
                elapsed: d(*elapsed_ns),
            }),
        }
    }
}

/// Which run a worker is asked for: configuration `config`'s repetition `repetition`, with
/// its seed and the runner's number for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunOf {
    pub config: usize,
    pub seed: u64,
    pub number: u64,
    pub repetition: u32,
}

impl Request {
    /// The request for `run` of `plan`; `None` for a plan that was not read from an
    /// experiment file (a command's single run).
    pub fn new(
        plan: &ExperimentPlan,
        run: RunOf,
        dir: &Path,
        mount: Option<DiskMount>,
        drop_caches: bool,
    ) -> Option<Request> {
        Some(Request {
            protocol: PROTOCOL,
            // Absolute: a VM's worker starts in another directory (relative workload paths
            // start at the file's).
            source: std::path::absolute(&plan.source).unwrap_or_else(|_| plan.source.clone()),
            text: plan.text.as_deref()?.to_owned(),
            stage: plan.stage_at.clone(),
            config: run.config,
            seed: run.seed,
            number: run.number,
            repetition: run.repetition,
            dir: dir.to_path_buf(),
            mount,
            drop_caches,
        })
    }
}

// ---------------------------------------------------------------------------------------
// The runner's side.

/// The two ends of a worker's channel, as its environment gives them.
pub struct Link {
    pub from_worker: Box<dyn BufRead + Send>,
    pub to_worker: Box<dyn Write + Send>,
}

/// What the worker said about where it ran.
#[derive(Debug, Clone, Default)]
pub struct WorkerSide {
    /// Its `hello`: kernel, clock source, CPUs, hostname, PID as it sees them.
    pub facts: Value,
    /// Whether it reached the timed region.
    pub timed: bool,
}

/// Runs `request` in the worker at the other end of `link`: the worker's hooks become calls of
/// `run.hooks` in this process, its record is added to `run.record`. `to_worker` is shared
/// with a thread that sends `cancel` when `run.cancel` is set. An end of the channel without
/// `done` or `failed` is an error whose text the caller completes with what the environment
/// knows (an OOM kill, the guest's console).
pub fn drive(
    link: Link,
    request: &Request,
    run: &mut RunCtx<'_>,
    side: &mut WorkerSide,
) -> Result<(), RunFailure> {
    let Link {
        mut from_worker,
        to_worker,
    } = link;
    let to_worker = Arc::new(std::sync::Mutex::new(to_worker));
    let lost = |e: std::io::Error| RunFailure::failed(format!("the worker's channel: {e}"));
    send(&to_worker, request).map_err(lost)?;
    let done = Arc::new(AtomicBool::new(false));
    let canceller = {
        let (to, done, cancel) = (
            Arc::clone(&to_worker),
            Arc::clone(&done),
            Arc::clone(run.cancel),
        );
        std::thread::Builder::new()
            .name("iolab-link".into())
            .spawn(move || {
                while !done.load(Ordering::Relaxed) {
                    if cancel.load(Ordering::Relaxed) {
                        let _ = send(&to, &Down::Cancel);
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(50));
                }
            })
            .map_err(|e| RunFailure::failed(format!("starting the worker's link: {e}")))?
    };
    let result = (|| {
        let mut line = String::new();
        loop {
            line.clear();
            if from_worker.read_line(&mut line).map_err(lost)? == 0 {
                return Err(RunFailure::failed(
                    "the worker ended without a result".to_string(),
                ));
            }
            let msg: Up = match serde_json::from_str(line.trim_end()) {
                Ok(m) => m,
                // Not ours (a guest's stray output): not the protocol, so skipped.
                Err(_) => continue,
            };
            match msg {
                Up::Hello(facts) => side.facts = facts,
                // A guest's files are its own kernel's to drop from its cache (the worker
                // does); the paths mean nothing here.
                Up::RunFiles(files) if request.mount.is_none() => run.hooks.run_files(files),
                Up::RunFiles(_) => {}
                Up::TimedStart => {
                    side.timed = true;
                    run.hooks.timed_start();
                    send(&to_worker, &Down::Go).map_err(lost)?;
                }
                Up::TimedEnd => run.hooks.timed_end(),
                Up::Event(e) => e.deliver(run.hooks),
                Up::Failed(f) => return Err(f.into()),
                Up::Done { record } => {
                    let bytes = iolab_store::transfer::from_hex(&record).ok_or_else(|| {
                        RunFailure::failed("the worker's record is not hex".to_string())
                    })?;
                    let rec = iolab_store::transfer::run_from_bytes(&bytes, &std::env::temp_dir())
                        .map_err(|e| RunFailure::failed(format!("the worker's record: {e}")))?;
                    merge(run.record, rec);
                    return Ok(());
                }
            }
        }
    })();
    done.store(true, Ordering::Relaxed);
    let _ = canceller.join();
    result
}

/// The worker's measurements into the runner's record of the run.
fn merge(into: &mut RunRecord, from: RunRecord) {
    into.run.elapsed_ns = from.run.elapsed_ns;
    into.metrics.extend(from.metrics);
    into.flowops.extend(from.flowops);
    into.series.extend(from.series);
    into.monitor.extend(from.monitor);
    into.findings.extend(from.findings);
    into.outputs.extend(from.outputs);
}

fn send<T: Serialize>(
    to: &std::sync::Mutex<Box<dyn Write + Send>>,
    msg: &T,
) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(msg).map_err(std::io::Error::other)?;
    line.push(b'\n');
    let mut w = to.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    w.write_all(&line)?;
    w.flush()
}

// ---------------------------------------------------------------------------------------
// The worker's side.

/// `iolab __worker`: one run, requested on standard input, answered on standard output.
/// Returns the process's exit code (0 when the answer was delivered, failed run or not).
pub fn serve() -> i32 {
    // The protocol keeps the real standard output; anything else that writes to fd 1 (a
    // library, a tool that inherits it) goes to standard error instead.
    // SAFETY: dup/dup2 on the process's own standard descriptors.
    let out_fd = unsafe { libc::dup(1) };
    if out_fd < 0 || unsafe { libc::dup2(2, 1) } < 0 {
        eprintln!("iolab __worker: {}", std::io::Error::last_os_error());
        return 1;
    }
    // SAFETY: out_fd is a fresh descriptor this File now owns.
    let out: std::fs::File = unsafe { std::os::fd::FromRawFd::from_raw_fd(out_fd) };
    let stdin = BufReader::new(std::io::stdin());
    serve_on(stdin, out)
}

/// [`serve`] over any pair of streams.
pub fn serve_on(
    mut input: impl BufRead + Send + 'static,
    output: impl Write + Send + 'static,
) -> i32 {
    let (up, up_rx) = mpsc::channel::<Up>();
    let writer = std::thread::Builder::new()
        .name("iolab-link".into())
        .spawn(move || {
            let mut output = output;
            for msg in up_rx {
                let ok = serde_json::to_vec(&msg).is_ok_and(|mut l| {
                    l.push(b'\n');
                    output.write_all(&l).and_then(|()| output.flush()).is_ok()
                });
                if !ok {
                    return;
                }
            }
        });
    let Ok(writer) = writer else {
        return 1;
    };
    let mut line = String::new();
    let request = match input.read_line(&mut line) {
        Ok(0) | Err(_) => None,
        Ok(_) => serde_json::from_str::<Request>(line.trim_end()).ok(),
    };
    let code = match request {
        None => {
            let _ = up.send(Up::Failed(
                (&RunFailure::failed(
                    "the worker's request was not readable (a different iolab build?)",
                ))
                    .into(),
            ));
            1
        }
        Some(r) if r.protocol != PROTOCOL => {
            let _ = up.send(Up::Failed(
                (&RunFailure::failed(format!(
                    "the worker speaks protocol {PROTOCOL}, the runner {}: run the same iolab \
                     build in both",
                    r.protocol
                )))
                    .into(),
            ));
            1
        }
        Some(r) => {
            let cancel = Arc::new(AtomicBool::new(false));
            let (go, go_rx) = mpsc::channel::<()>();
            let flag = Arc::clone(&cancel);
            let _ = std::thread::Builder::new()
                .name("iolab-link-in".into())
                .spawn(move || {
                    let mut line = String::new();
                    loop {
                        line.clear();
                        match input.read_line(&mut line) {
                            Ok(0) | Err(_) => {
                                // The runner is gone: nobody will read the result.
                                flag.store(true, Ordering::Relaxed);
                                return;
                            }
                            Ok(_) => match serde_json::from_str::<Down>(line.trim_end()) {
                                Ok(Down::Go) => {
                                    let _ = go.send(());
                                }
                                Ok(Down::Cancel) => flag.store(true, Ordering::Relaxed),
                                Err(_) => {}
                            },
                        }
                    }
                });
            let _ = up.send(Up::Hello(facts()));
            let answer = match run_request(&r, &cancel, &up, &go_rx) {
                Ok(rec) => match iolab_store::transfer::run_to_bytes(&rec, &std::env::temp_dir()) {
                    Ok(bytes) => Up::Done {
                        record: iolab_store::transfer::to_hex(&bytes),
                    },
                    Err(e) => Up::Failed(
                        (&RunFailure::failed(format!("writing the run's record: {e}"))).into(),
                    ),
                },
                Err(f) => Up::Failed((&f).into()),
            };
            let _ = up.send(answer);
            0
        }
    };
    drop(up);
    let _ = writer.join();
    code
}

/// Loads the plan, mounts the disk if asked, runs the workload.
fn run_request(
    r: &Request,
    cancel: &Arc<AtomicBool>,
    up: &mpsc::Sender<Up>,
    go: &mpsc::Receiver<()>,
) -> Result<RunRecord, RunFailure> {
    let plan = crate::load_str(&r.source, &r.text)
        .and_then(|p| match &r.stage {
            Some((i, trace)) => crate::stage(&p, *i, trace.as_deref()),
            None => Ok(p),
        })
        .map_err(|e| {
            RunFailure::failed(format!("reading the experiment again in the worker: {e}"))
        })?;
    let config = plan.configs.get(r.config).ok_or_else(|| {
        RunFailure::failed(format!(
            "the worker's experiment has no configuration {}",
            r.config
        ))
    })?;
    let mounted = match &r.mount {
        Some(m) => Some(mount_disk(m, &r.dir)?),
        None => None,
    };
    let mut record = RunRecord::new(NewRun {
        config: iolab_store::ConfigId(0),
        repetition: r.repetition,
        seed: r.seed,
        status: RunStatus::Ok,
        error: None,
        started_at: Timestamp::now(),
        ended_at: Timestamp::now(),
        elapsed_ns: 0,
        environment: Value::Null,
    });
    let mut hooks = WorkerHooks {
        up,
        go,
        cancel,
        drop_caches: r.drop_caches,
        files: Vec::new(),
        drop_error: None,
    };
    let result = config.workload.run(&mut RunCtx {
        dir: &r.dir,
        seed: r.seed,
        number: r.number,
        cancel,
        hooks: &mut hooks,
        record: &mut record,
        sut: &mut WorkerSut,
        ranks: &iolab_kind::Solo,
    });
    if let Some(dir) = mounted {
        // SAFETY: sync(2) takes no arguments.
        unsafe { libc::sync() };
        iolab_sut::mount::unmount(&dir)
            .map_err(|e| RunFailure::failed(format!("unmounting the disk: {e}")))?;
    }
    result?;
    if let Some(e) = hooks.drop_error {
        return Err(RunFailure::failed(e));
    }
    Ok(record)
}

fn mount_disk(m: &DiskMount, dir: &Path) -> Result<PathBuf, RunFailure> {
    let failed = |what: &str, e: &dyn std::fmt::Display| {
        RunFailure::failed(format!(
            "{what} {} on {}: {e}",
            m.device.display(),
            dir.display()
        ))
    };
    std::fs::create_dir_all(dir).map_err(|e| failed("making a mount point for", &e))?;
    let opts = iolab_sut::mount::MountOptions::parse(&m.options)
        .map_err(|e| failed("reading the mount options of", &e))?;
    iolab_sut::mount::mount(&m.device.to_string_lossy(), dir, &m.fstype, &opts)
        .map_err(|e| failed("mounting", &e))?;
    Ok(dir.to_path_buf())
}

/// What a workload sees of where it runs (a worker's `hello`; the runner's own for a run on
/// the host): the facts an environment is judged by.
pub fn facts() -> Value {
    let read = |p: &str| {
        std::fs::read_to_string(p)
            .ok()
            .map(|s| s.trim().to_string())
    };
    let mem_total_kib = read("/proc/meminfo").and_then(|m| {
        m.lines()
            .find_map(|l| l.strip_prefix("MemTotal:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
    });
    let cpus = iolab_sys::cpus::affinity().ok();
    json!({
        "kernel": read("/proc/sys/kernel/osrelease"),
        "hostname": read("/proc/sys/kernel/hostname"),
        "pid": std::process::id(),
        "clocksource": read("/sys/devices/system/clocksource/clocksource0/current_clocksource"),
        "available_clocksources": read("/sys/devices/system/clocksource/clocksource0/available_clocksource"),
        "cpus": cpus.as_deref().map(iolab_sys::cpus::format_cpu_list),
        "online_cpus": read("/sys/devices/system/cpu/online"),
        "mem_total_bytes": mem_total_kib.map(|k| k * 1024),
        // The network namespace's interfaces (/sys is the host's in a container).
        "net": read("/proc/net/dev").map(|t| {
            let mut v: Vec<String> = t
                .lines()
                .skip(2)
                .filter_map(|l| Some(l.split_once(':')?.0.trim().to_owned()))
                .collect();
            v.sort_unstable();
            v
        }),
    })
}

/// The worker's hooks: each becomes a message to the runner.
struct WorkerHooks<'a> {
    up: &'a mpsc::Sender<Up>,
    go: &'a mpsc::Receiver<()>,
    cancel: &'a Arc<AtomicBool>,
    drop_caches: bool,
    files: Vec<PathBuf>,
    drop_error: Option<String>,
}

impl RunHooks for WorkerHooks<'_> {
    fn run_files(&mut self, files: Vec<PathBuf>) {
        self.files = files.clone();
        let _ = self.up.send(Up::RunFiles(files));
    }

    fn timed_start(&mut self) {
        if self.drop_caches {
            if let Err(e) = iolab_sut::drop_caches(&self.files) {
                self.drop_error = Some(format!("dropping the guest's caches: {e}"));
            }
        }
        let _ = self.up.send(Up::TimedStart);
        // The runner answers once its monitors run; a runner that is gone cancels the run.
        while self.go.recv_timeout(Duration::from_millis(100)).is_err() {
            if self.cancel.load(Ordering::Relaxed) {
                return;
            }
        }
    }

    fn timed_end(&mut self) {
        let _ = self.up.send(Up::TimedEnd);
    }

    fn event(&mut self, event: &Event<'_>) {
        if let Some(e) = WireEvent::of(event) {
            let _ = self.up.send(Up::Event(e));
        }
    }
}

/// What a worker's run may ask of its system under test: directories, not remounts (the
/// filesystem was mounted by the runner's kernel, or by the worker for this run only).
struct WorkerSut;

impl SutControl for WorkerSut {
    fn remount(&mut self) -> Result<iolab_kind::run::Remount, String> {
        Err(
            "a run in a container or a VM cannot remount its filesystem (yet): run it on the \
             host"
                .into(),
        )
    }
}
