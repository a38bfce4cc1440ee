//! Where a run's workload executes (`[sut] environment`, iolab_sut::env): in this process
//! (`host`), pinned to the environment's CPU set if it has one; or in a worker process
//! (`iolab __worker`, [`super::worker`]) that a container or a VM starts, driven over its
//! channel so that the runner's hooks (dropping caches, the monitors) run here exactly where
//! they would for a run on the host.

use std::io::{BufRead, BufReader};

use iolab_sut::{ContainerStats, EnvKind};

use super::one_run::SessionSut;
use super::worker::{self, Request, RunOf, WorkerSide};
use super::*;

/// The calling thread pinned to a CPU set until dropped (its threads, made meanwhile, keep
/// the set: the engine's workers are the run's).
pub(super) struct Pinned {
    before: Vec<u32>,
}

impl Pinned {
    pub(super) fn to(cpus: &[u32]) -> Result<Pinned, RunFailure> {
        let before = iolab_sys::cpus::affinity()
            .map_err(|e| RunFailure::failed(format!("reading this thread's CPUs: {e}")))?;
        iolab_sys::cpus::set_affinity(cpus).map_err(|e| {
            RunFailure::failed(format!(
                "pinning the workload to CPUs {}: {e}",
                iolab_sys::cpus::format_cpu_list(cpus)
            ))
        })?;
        Ok(Pinned { before })
    }
}

impl Drop for Pinned {
    fn drop(&mut self) {
        let _ = iolab_sys::cpus::set_affinity(&self.before);
    }
}

/// What placing a run needs of the runner's session (its shared parts: the session's
/// observer is lent to the run's hooks meanwhile).
#[derive(Clone, Copy)]
pub(super) struct Runner<'a> {
    pub plan: &'a ExperimentPlan,
    pub opts: &'a RunnerOptions,
    pub sut: &'a Sut,
    /// The run's cancel flag: the runner's, or under MPI one that another rank's failure
    /// sets too.
    pub cancel: &'a Arc<AtomicBool>,
    pub ranks: &'a dyn iolab_kind::Ranks,
}

impl Runner<'_> {
    /// Runs `run`'s workload once where its configuration's environment says, with the
    /// runner's hooks `obs`, into `rec`; and what the environment was, for the run's record
    /// (`{kind, cpuset, …}` and what the worker saw).
    pub(super) fn run_placed(
        self,
        run: RunOf,
        p: &mut Prepared,
        obs: &mut Hooks<'_>,
        rec: &mut RunRecord,
    ) -> (Result<(), RunFailure>, Value) {
        let config = &self.plan.configs[run.config];
        let env = &config.sut.environment;
        let mut placed = json!({
            "kind": env.name(),
            "cpuset": env.cpuset.as_deref().map(iolab_sys::cpus::format_cpu_list),
        });
        let result = match &env.kind {
            EnvKind::Host => {
                let seen = worker::facts();
                obs.watch.environment(env_facts(
                    self.plan.planned_environment(config),
                    None,
                    &seen,
                ));
                let pinned = match env.cpuset.as_deref().map(Pinned::to).transpose() {
                    Ok(p) => p,
                    Err(f) => return (Err(f), placed),
                };
                let dir = match rank_dir(&p.mountpoint, self.ranks, config) {
                    Ok(d) => d,
                    Err(f) => return (Err(f), placed),
                };
                let r = config.workload.run(&mut RunCtx {
                    dir: &dir,
                    seed: run.seed,
                    number: run.number,
                    cancel: self.cancel,
                    hooks: obs,
                    record: rec,
                    sut: &mut SessionSut {
                        sut: self.sut,
                        prepared: &mut *p,
                    },
                    ranks: self.ranks,
                });
                drop(pinned);
                if dir != p.mountpoint {
                    let _ = std::fs::remove_dir_all(&dir);
                }
                r
            }
            EnvKind::Container(_) | EnvKind::Vm(_) => {
                self.run_in_worker(run, p, obs, rec, &mut placed)
            }
        };
        (result, placed)
    }

    /// The request for a worker: bad input when the plan has no experiment file to read
    /// again.
    fn request(
        self,
        run: RunOf,
        dir: &Path,
        mount: Option<worker::DiskMount>,
        drop_caches: bool,
    ) -> Result<Request, RunFailure> {
        Request::new(self.plan, run, dir, mount, drop_caches).ok_or_else(|| {
            RunFailure::bad_input(
                "a run in a container or a VM needs an experiment file (its worker reads the \
                 workload from it)",
            )
        })
    }

    /// Runs the workload in a worker process of the run's environment.
    fn run_in_worker(
        self,
        run: RunOf,
        p: &mut Prepared,
        obs: &mut Hooks<'_>,
        rec: &mut RunRecord,
        placed: &mut Value,
    ) -> Result<(), RunFailure> {
        let config = &self.plan.configs[run.config];
        match &config.sut.environment.kind {
            EnvKind::Container(_) => {
                let request = self.request(run, &p.mountpoint, None, false)?;
                let planned = self.plan.planned_environment(config);
                in_container(p, &request, planned, self.opts, obs, rec, placed)
            }
            EnvKind::Vm(v) => {
                let handed = self.sut.hand_over(p).map_err(|e| {
                    RunFailure::failed(format!("handing the target to the VM: {e}"))
                })?;
                let request = self.request(
                    run,
                    Path::new(GUEST_TARGET),
                    Some(worker::DiskMount {
                        device: GUEST_DISK.into(),
                        fstype: handed.fstype.clone(),
                        options: handed.options.clone(),
                    }),
                    self.plan.procedure.drop_caches,
                )?;
                let vm = Guest {
                    plan: v,
                    cpuset: config.sut.environment.cpuset.clone(),
                    disk: handed.device,
                    planned: config.workload.planned_duration(),
                };
                let facts = self.plan.planned_environment(config);
                vm.run(&request, facts, self.opts, obs, rec, placed)
            }
            EnvKind::Host => unreachable!("a host run is not a worker's"),
        }
    }
}

/// Where a rank runs a workload that does not divide itself among the ranks: a directory of
/// its own under the target (`rank-N`, made empty: a rank killed in an earlier run may have
/// left its files), so that ranks sharing a filesystem do not write each other's files. The
/// target itself for a kind that names its ranks' files, and without MPI.
fn rank_dir(
    target: &Path,
    ranks: &dyn iolab_kind::Ranks,
    config: &ConfigPlan,
) -> Result<std::path::PathBuf, RunFailure> {
    if ranks.size() <= 1 || config.workload.divides_among_ranks() {
        return Ok(target.to_path_buf());
    }
    let dir = target.join(format!("rank-{}", ranks.rank()));
    let made = match std::fs::remove_dir_all(&dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
    .and_then(|()| std::fs::create_dir(&dir));
    made.map_err(|e| {
        RunFailure::failed(format!(
            "making this rank's directory {}: {e}",
            dir.display()
        ))
    })?;
    Ok(dir)
}

/// Where the guest mounts the run's filesystem (a tmpfs of the guest's).
const GUEST_TARGET: &str = "/run/iolab-target";
/// The run's device as the guest sees it: the first virtio disk.
const GUEST_DISK: &str = "/dev/vda";

/// A VM for one run: its settings, the host CPUs it is held to, the disk it gets.
struct Guest<'a> {
    plan: &'a iolab_sut::env::VmPlan,
    cpuset: Option<Vec<u32>>,
    disk: std::path::PathBuf,
    planned: Option<Duration>,
}

impl Guest<'_> {
    /// Boots the guest with the run's device as its disk, runs `request` in its worker, and
    /// waits for it to power off.
    fn run(
        &self,
        request: &Request,
        planned: iolab_check::EnvFacts,
        opts: &RunnerOptions,
        obs: &mut Hooks<'_>,
        rec: &mut RunRecord,
        placed: &mut Value,
    ) -> Result<(), RunFailure> {
        let vm_error = |what: &str, e: iolab_vm::Error| {
            let hint = e.hint().map(str::to_owned);
            RunFailure::failed(format!("{what}: {e}")).hint(hint)
        };
        let exe = std::env::current_exe()
            .map_err(|e| RunFailure::failed(format!("finding iolab's own binary: {e}")))?;
        let kernel = iolab_vm::kernel::find(self.plan.kernel.as_deref())
            .map_err(|e| vm_error("the VM's kernel", e))?;
        let image = iolab_vm::image::build(&kernel, &exe, Path::new(iolab_vm::image::IMAGE_DIR))
            .map_err(|e| vm_error("building the VM's initramfs", e))?;
        let console = std::env::temp_dir().join(format!(
            "iolab-vm-{}-{}.console",
            std::process::id(),
            request.number
        ));
        let mut cfg = iolab_vm::VmConfig::new(
            image,
            vec![
                exe.to_string_lossy().into_owned(),
                worker::SUBCOMMAND.to_owned(),
            ],
            &console,
        );
        cfg.vcpus = self.plan.vcpus;
        cfg.memory_mib = (self.plan.memory >> 20).max(1);
        cfg.accel = match self.plan.accel {
            iolab_sut::env::VmAccel::Auto => iolab_vm::Accel::Auto,
            iolab_sut::env::VmAccel::Kvm => iolab_vm::Accel::Kvm,
            iolab_sut::env::VmAccel::Tcg => iolab_vm::Accel::Tcg,
        };
        cfg.disk = Some(iolab_vm::Disk {
            cache: match self.plan.cache {
                iolab_sut::env::VmCache::None => iolab_vm::CacheMode::None,
                iolab_sut::env::VmCache::Writeback => iolab_vm::CacheMode::Writeback,
                iolab_sut::env::VmCache::Unsafe => iolab_vm::CacheMode::Unsafe,
                iolab_sut::env::VmCache::Directsync => iolab_vm::CacheMode::Directsync,
            },
            ..iolab_vm::Disk::new(&self.disk)
        });
        cfg.cpuset = self.cpuset.clone();
        // The console's last lines are kept with the run's end (and its failure).
        let remove_console = || {
            let _ = std::fs::remove_file(&console);
        };
        let mut vm = match iolab_vm::Vm::start(&cfg) {
            Ok(vm) => vm,
            Err(e) => {
                remove_console();
                return Err(vm_error("starting the VM", e));
            }
        };
        placed["vm"] = vm.describe();
        // The host's monitors follow qemu: the guest's CPUs are its threads.
        obs.watch.process(vm.pid());
        obs.watch.syscalls_off(
            "it counts this kernel's system calls, and a VM's workload makes them in the \
             guest's kernel",
        );
        // Booting and powering off take seconds under TCG; the workload its planned time.
        // Past the bound the guest is killed, wherever it is (booting, running, hung): the
        // channel then closes and the run fails with the reason.
        let bound = self.plan.timeout + self.planned.unwrap_or_default();
        let watchdog = Watchdog::start(vm.pid(), bound);
        let (from, to) = vm.channel().map_err(|e| vm_error("the VM's channel", e))?;
        let (result, side) = drive(
            worker::Link {
                from_worker: Box::new(from),
                to_worker: Box::new(to),
            },
            request,
            opts,
            obs,
            rec,
        );
        let accel = vm.accel();
        let end = vm.wait(bound);
        let killed = watchdog.stop();
        remove_console();
        placed["worker"] = side.facts.clone();
        obs.watch.environment(env_facts(
            iolab_check::EnvFacts {
                vm_accel: Some(accel.as_str().into()),
                // What the guest's kernel has (MemTotal), rather than what qemu was given.
                memory_limit_bytes: side.facts["mem_total_bytes"]
                    .as_u64()
                    .or(planned.memory_limit_bytes),
                ..planned
            },
            None,
            &side.facts,
        ));
        if killed {
            let tail = match &end {
                Ok(end) => readable(&end.console_tail.join(" / ")),
                Err(e) => readable(&e.to_string()),
            };
            return Err(RunFailure::failed(format!(
                "the guest did not power off within {} (environment.timeout, {}, plus the \
                 workload's planned time) and was killed; its console: {tail}",
                iolab_util::units::duration_text(bound),
                iolab_util::units::duration_text(self.plan.timeout),
            ))
            .hint(Some(
                "raise environment.timeout if the guest is slow (TCG), else see the console \
                 lines"
                    .into(),
            )));
        }
        match end {
            Err(e) => Err(match result {
                Err(f) => RunFailure::failed(format!("{}; then {e}", f.message)),
                Ok(()) => vm_error("the VM", e),
            }),
            Ok(end) => {
                placed["power_off"] = json!({
                    "clean": end.powered_off,
                    "command_exit": end.command_exit,
                    "wall_s": end.wall.as_secs_f64(),
                });
                let tail = || readable(&end.console_tail.join(" / "));
                match result {
                    Err(mut f) => {
                        if !side.timed || f.message.contains("without a result") {
                            f.message = format!("{}; the guest's console: {}", f.message, tail());
                        }
                        Err(f)
                    }
                    Ok(()) if !end.powered_off => Err(RunFailure::failed(format!(
                        "the guest did not power off cleanly (qemu {}); its console: {}",
                        end.qemu_status,
                        tail()
                    ))),
                    Ok(()) => Ok(()),
                }
            }
        }
    }
}

/// A console's text without its terminal escape sequences (the firmware clears the screen)
/// and control characters.
fn readable(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            // CSI: ESC [ parameters… final byte (a letter); else ESC and one character.
            if chars.next_if_eq(&'[').is_some() {
                while chars.next().is_some_and(|c| !c.is_ascii_alphabetic()) {}
            } else {
                chars.next();
            }
        } else if !c.is_control() {
            out.push(c);
        }
    }
    out.trim().to_string()
}

/// Kills a process (a VM's qemu, this process's child, so its PID cannot be reused before it
/// is reaped) once its bound has passed, unless stopped first.
struct Watchdog {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    fired: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Watchdog {
    fn start(pid: u32, bound: Duration) -> Watchdog {
        use std::sync::atomic::Ordering::Relaxed;
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let fired = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (s, f) = (stop.clone(), fired.clone());
        let t0 = Instant::now();
        let thread = std::thread::Builder::new()
            .name("iolab-watchdog".into())
            .spawn(move || {
                while !s.load(Relaxed) {
                    if t0.elapsed() >= bound {
                        f.store(true, Relaxed);
                        // SAFETY: kill(2) on our own unreaped child.
                        unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
            })
            .ok();
        Watchdog {
            stop,
            fired,
            thread,
        }
    }

    /// Stops it; whether it had fired.
    fn stop(mut self) -> bool {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        self.fired.load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// Runs `request` in the prepared container: `iolab __worker` as its PID 1.
fn in_container(
    p: &mut Prepared,
    request: &Request,
    planned: iolab_check::EnvFacts,
    opts: &RunnerOptions,
    obs: &mut Hooks<'_>,
    rec: &mut RunRecord,
    placed: &mut Value,
) -> Result<(), RunFailure> {
    let ctr = p.container.as_ref().ok_or_else(|| {
        RunFailure::failed("internal error: the container was not prepared".to_string())
    })?;
    // A kept container (`fresh_fs = false`) ran earlier runs: this run's use is the change.
    let _ = ctr.reset_peaks();
    let before = ctr.stats();
    if let Some(cg) = ctr.blkio() {
        // What the container's blkio cgroup is charged over the timed region: the
        // `throttle.*` metrics and `throttle-bypassed`, as for a throttled run on the host.
        obs.watch.throttled(cg);
    }
    let mut cmd = worker_command()?;
    let mut child = Spawned::of(
        ctr.spawn(&mut cmd)
            .map_err(|e| RunFailure::failed(format!("starting the container: {e}")))?,
    );
    // The monitors and the syscall view follow the worker itself (PID 1 inside), not the
    // process that waits for it.
    let pid = ctr.program_pid(child.pid()).unwrap_or(child.pid());
    obs.watch.worker(pid);
    let (result, side) = drive(child.link(), request, opts, obs, rec);
    let status = child.finish(Duration::from_secs(10));
    let stats = used(&before, &ctr.stats());
    add_container_metrics(rec, &stats);
    obs.watch.environment(env_facts(
        iolab_check::EnvFacts {
            // What the kernel holds, rather than what was asked for.
            memory_limit_bytes: ctr.memory_limit(),
            ..planned
        },
        Some(&stats),
        &side.facts,
    ));
    placed["container"] = ctr.describe();
    placed["usage"] = serde_json::to_value(&stats).unwrap_or(Value::Null);
    placed["worker"] = side.facts;
    result.map_err(|mut f| {
        if let Some(oom) = ctr.oom_message() {
            f.message = format!("{oom} ({})", f.message);
        } else if let Some(why) = status.why(&child.stderr_tail()) {
            f.message = format!("{}: {why}", f.message);
        }
        f
    })
}

/// Runs `request` in the worker at the other end of `link` with the runner's hooks: its
/// result, and what it said about where it ran.
fn drive(
    link: worker::Link,
    request: &Request,
    opts: &RunnerOptions,
    obs: &mut Hooks<'_>,
    rec: &mut RunRecord,
) -> (Result<(), RunFailure>, WorkerSide) {
    let mut side = WorkerSide::default();
    let result = worker::drive(
        link,
        request,
        &mut RunCtx {
            dir: &request.dir,
            seed: request.seed,
            number: request.number,
            cancel: &opts.cancel,
            hooks: obs,
            record: rec,
            sut: &mut NoSut,
            ranks: &iolab_kind::Solo,
        },
        &mut side,
    );
    (result, side)
}

/// `iolab __worker`, this very binary.
fn worker_command() -> Result<std::process::Command, RunFailure> {
    let exe = std::env::current_exe()
        .map_err(|e| RunFailure::failed(format!("finding iolab's own binary: {e}")))?;
    let mut cmd = std::process::Command::new(exe);
    cmd.arg(worker::SUBCOMMAND)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    Ok(cmd)
}

/// A worker process started here, its standard error kept (the last lines) for the reason
/// of a failure.
struct Spawned {
    child: std::process::Child,
    stderr: std::sync::Arc<std::sync::Mutex<std::collections::VecDeque<String>>>,
    reader: Option<std::thread::JoinHandle<()>>,
}

/// How a worker process ended.
struct Ended(Option<std::process::ExitStatus>);

impl Ended {
    /// Why it failed, in words, with what it wrote last; `None` if it exited 0.
    fn why(&self, stderr: &str) -> Option<String> {
        use std::os::unix::process::ExitStatusExt;
        let how = match self.0 {
            Some(s) if s.success() => return None,
            Some(s) => match (s.code(), s.signal()) {
                (Some(c), _) => format!("the worker exited with status {c}"),
                (None, Some(sig)) => format!("the worker was killed by signal {sig}"),
                _ => "the worker ended".into(),
            },
            None => "the worker did not end and was killed".into(),
        };
        Some(if stderr.is_empty() {
            how
        } else {
            format!("{how}; it said: {stderr}")
        })
    }
}

impl Spawned {
    fn of(mut child: std::process::Child) -> Spawned {
        let stderr = std::sync::Arc::new(std::sync::Mutex::new(std::collections::VecDeque::new()));
        let reader = child.stderr.take().map(|err| {
            let keep = std::sync::Arc::clone(&stderr);
            std::thread::spawn(move || {
                for line in BufReader::new(err).lines().map_while(Result::ok) {
                    let mut k = keep
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                    if k.len() == 20 {
                        k.pop_front();
                    }
                    k.push_back(line);
                }
            })
        });
        Spawned {
            child,
            stderr,
            reader,
        }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The channel over its standard input and output (taken once).
    fn link(&mut self) -> worker::Link {
        let from: Box<dyn std::io::BufRead + Send> = match self.child.stdout.take() {
            Some(o) => Box::new(BufReader::new(o)),
            None => Box::new(std::io::empty()),
        };
        let to: Box<dyn std::io::Write + Send> = match self.child.stdin.take() {
            Some(i) => Box::new(i),
            None => Box::new(std::io::sink()),
        };
        worker::Link {
            from_worker: from,
            to_worker: to,
        }
    }

    /// Waits up to `grace` for it to exit, then kills it.
    fn finish(&mut self, grace: Duration) -> Ended {
        let t0 = Instant::now();
        loop {
            match self.child.try_wait() {
                Ok(Some(s)) => break Ended(Some(s)),
                Ok(None) if t0.elapsed() < grace => std::thread::sleep(Duration::from_millis(20)),
                _ => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    break Ended(None);
                }
            }
        }
    }

    fn stderr_tail(&mut self) -> String {
        if let Some(r) = self.reader.take() {
            let _ = r.join();
        }
        let k = self
            .stderr
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        k.iter().cloned().collect::<Vec<_>>().join(" / ")
    }
}

impl Drop for Spawned {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// What the container used over one run: the counters' change, the peaks as they are (reset
/// before the run).
fn used(before: &ContainerStats, after: &ContainerStats) -> ContainerStats {
    let d = |b: Option<u64>, a: Option<u64>| match (b, a) {
        (Some(b), Some(a)) => Some(a.saturating_sub(b)),
        (None, a) => a,
        (Some(_), None) => None,
    };
    ContainerStats {
        cpu_usage_ns: d(before.cpu_usage_ns, after.cpu_usage_ns),
        nr_periods: d(before.nr_periods, after.nr_periods),
        nr_throttled: d(before.nr_throttled, after.nr_throttled),
        throttled_ns: d(before.throttled_ns, after.throttled_ns),
        memory_max_usage_bytes: after.memory_max_usage_bytes,
        memory_failcnt: after.memory_failcnt,
        oom_kills: d(before.oom_kills, after.oom_kills),
        pids_peak: after.pids_peak,
        pids_max_events: d(before.pids_max_events, after.pids_max_events),
        io: match (before.io, after.io) {
            (Some(b), Some(a)) => Some(iolab_sut::Charged {
                read_bytes: a.read_bytes.saturating_sub(b.read_bytes),
                write_bytes: a.write_bytes.saturating_sub(b.write_bytes),
                reads: a.reads.saturating_sub(b.reads),
                writes: a.writes.saturating_sub(b.writes),
            }),
            (_, a) => a,
        },
    }
}

/// `container.*` run metrics: what the container used over the run.
fn add_container_metrics(rec: &mut RunRecord, s: &ContainerStats) {
    let secs = |ns: Option<u64>| ns.map(|n| n as f64 / 1e9);
    for (name, v, unit) in [
        ("container.cpu_s", secs(s.cpu_usage_ns), "s"),
        ("container.cpu_periods", s.nr_periods.map(|v| v as f64), ""),
        (
            "container.cpu_throttled_periods",
            s.nr_throttled.map(|v| v as f64),
            "",
        ),
        ("container.cpu_throttled_s", secs(s.throttled_ns), "s"),
        (
            "container.memory_peak_bytes",
            s.memory_max_usage_bytes.map(|v| v as f64),
            "B",
        ),
        (
            "container.memory_failcnt",
            s.memory_failcnt.map(|v| v as f64),
            "",
        ),
        ("container.oom_kills", s.oom_kills.map(|v| v as f64), ""),
        ("container.pids_peak", s.pids_peak.map(|v| v as f64), ""),
    ] {
        if let Some(v) = v {
            rec.metrics.push(Metric::new(name, v, unit));
        }
    }
}

/// The checks' facts of where a run executed: the environment's settings, what it used
/// (`stats`, a container's) and what the workload saw there (`seen`, a worker's `hello`, or
/// this host's).
fn env_facts(
    mut f: iolab_check::EnvFacts,
    stats: Option<&ContainerStats>,
    seen: &Value,
) -> iolab_check::EnvFacts {
    if let Some(s) = stats {
        f.cpu_periods = s.nr_periods;
        f.cpu_throttled_periods = s.nr_throttled;
        f.cpu_throttled_ns = s.throttled_ns;
        f.memory_failcnt = s.memory_failcnt;
        f.memory_peak_bytes = s.memory_max_usage_bytes;
        f.oom_kills = s.oom_kills;
    }
    f.clocksource = seen["clocksource"].as_str().map(str::to_owned);
    f.available_clocksources = seen["available_clocksources"]
        .as_str()
        .map(|s| s.split_whitespace().map(str::to_owned).collect());
    f
}

#[cfg(test)]
mod tests {
    #[test]
    fn console_text_loses_its_escapes() {
        assert_eq!(
            super::readable(
                "\u{1b}c\u{1b}[?7l\u{1b}[2J\u{1b}[0mSeaBIOS (version 1.16) / Booting\r"
            ),
            "SeaBIOS (version 1.16) / Booting"
        );
    }
}
