//! One run: prepare (or reuse) the system under test, run the workload with the runner's
//! hooks (caches dropped and monitors started where the timed region starts), check, store,
//! tear down; and what a workload may ask of the system under test meanwhile.

use super::environment::run_environment;
use super::place::Runner;
use super::worker::RunOf;
use super::*;

impl Session<'_> {
    pub(super) fn release_kept(&mut self) {
        if let Some((_, p)) = self.kept.take() {
            self.obs.phase(Phase::TearingDown);
            self.teardown(p);
        }
    }

    pub(super) fn teardown(&mut self, p: Prepared) {
        let report = self.sut.teardown(p);
        for warning in report.failures().filter_map(|a| a.failure()) {
            self.obs.warn(&warning);
        }
    }

    /// One run: prepare (or reuse) the SUT, run, store (measured runs only), tear down.
    pub(super) fn one_run(
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
        self.failed_outputs.clear();
        self.rank_order(i, rep, warmup, number);
        self.obs.phase(Phase::Preparing);
        let fresh = self.plan.procedure.fresh_fs;
        if self.kept.as_ref().is_some_and(|(k, _)| *k != i || fresh) {
            self.release_kept();
        }
        let prepared = match self.kept.take() {
            Some((_, p)) => Ok(p),
            None => self.prepare(config),
        };
        let (mut outcome, mut environment) = match prepared {
            Err(f) => {
                self.rank_end(true);
                (Err(f), Value::Null)
            }
            Ok(mut p) => {
                let mut environment = run_environment(config, &p);
                let r = self.execute(
                    i,
                    config,
                    &mut p,
                    (seed, number, rep),
                    (config_id, started_at),
                );
                // Under MPI every rank is done with the target before any tears it down.
                self.rank_end(r.is_err());
                if let (Some(placed), Value::Object(o)) = (self.placed.take(), &mut environment) {
                    o.insert("environment".into(), placed);
                }
                if let (Some(u), Some(sut)) = (self.cap_use.take(), environment.get_mut("sut")) {
                    sut["cache_cap"] = json!({
                        "cap_bytes": u.cap_bytes,
                        "own_peak_bytes": u.own_peak_bytes,
                        "limit_peak_bytes": u.limit_peak_bytes,
                        "oom_waits": u.oom_waits,
                        "shmem_peak_bytes": u.shmem_peak_bytes,
                        "overrun": u.overrun,
                    });
                }
                if fresh || r.is_err() {
                    self.obs.phase(Phase::TearingDown);
                    self.teardown(p);
                } else {
                    self.kept = Some((i, p));
                }
                (r, environment)
            }
        };
        self.rank_gather(config, &mut outcome, &mut environment);
        let ended_at = Timestamp::now();
        let interrupted = self.cancelled();
        let (status, failure, mut record) = match outcome {
            Ok(rec) => (RunStatus::Ok, None, Some(rec)),
            Err(mut f) if interrupted || f.interrupted => {
                f.interrupted = true;
                f.message = if self.opts.group.is_some() {
                    "interrupted (SIGINT/SIGTERM; under MPI, mpirun ends every rank so when one \
                     of them dies, and its message names that rank)"
                        .into()
                } else {
                    "interrupted (SIGINT/SIGTERM)".into()
                };
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
                None => {
                    let mut r = RunRecord::new(run);
                    r.outputs = std::mem::take(&mut self.failed_outputs);
                    r
                }
            };
            if let Some(pending) = &self.pending_trace {
                if saved_trace::was_saved(&rec) {
                    if let Err(e) = saved_trace::add_mrc(&mut rec, pending) {
                        self.obs.warn(&e);
                    }
                }
            }
            let id = match self.store.record_run(&rec) {
                Ok(id) => id,
                Err(e) => {
                    // Not stored: its trace goes too.
                    if let Some(pending) = self.pending_trace.take() {
                        let _ = std::fs::remove_file(pending);
                    }
                    return Err(e.into());
                }
            };
            if let Some(pending) = self.pending_trace.take() {
                if saved_trace::was_saved(&rec) {
                    if let Err(e) = saved_trace::keep(self.store, &pending, id) {
                        self.obs.warn(&e);
                    }
                } else {
                    // A failed or interrupted run keeps no trace.
                    let _ = std::fs::remove_file(pending);
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
    pub(super) fn monitor_options(&mut self) -> Result<MonitorOptions, RunFailure> {
        let mut m = self.opts.monitor.clone();
        m.trace_syscalls |= self.plan.procedure.trace_syscalls;
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
    pub(super) fn execute(
        &mut self,
        i: usize,
        config: &ConfigPlan,
        p: &mut Prepared,
        (seed, number, repetition): (u64, u64, u32),
        (config_id, started_at): (Option<ConfigId>, Timestamp),
    ) -> Result<RunRecord, RunFailure> {
        let monitor_opts = self.monitor_options()?;
        if let Some(cg) = &p.throttle {
            // Threads inherit the cgroups of the thread that creates them: the blkio limits
            // apply to the I/O the engine's threads submit themselves.
            cg.add_current_thread()
                .map_err(|e| RunFailure::failed(format!("joining the throttle cgroup: {e}")))?;
        }
        // The cache cap: its watcher starts here, outside the cgroup, and keeps iolab's own
        // memory out of the cap (iolab_sut::cgroup::CapGuard); this thread then joins, so
        // that the engine's workers are charged to it, and leaves once the workload ends.
        let cap = match &p.cgroup {
            Some(cg) => {
                let guard = cg
                    .guard()
                    .map_err(|e| RunFailure::failed(format!("guarding the cache cgroup: {e}")))?;
                cg.add_current_thread()
                    .map_err(|e| RunFailure::failed(format!("joining the cache cgroup: {e}")))?;
                Some((cg.clone(), guard))
            }
            None => None,
        };
        let device_name = p.device.as_ref().map(|d| d.name.clone());
        let workload = &config.workload;
        // The run has a cancel flag of its own, which Ctrl-C / SIGTERM sets (forwarded while
        // the run lasts), and so do the stall watchdog and, under MPI, another rank's failure:
        // those end this run, not the experiment.
        let group = self.opts.group.as_ref().map(|g| Arc::clone(&g.0));
        let cancel = Arc::new(AtomicBool::new(false));
        let forward = Forward::start(&self.opts.cancel, &cancel);
        let db = Some(self.store.path().to_path_buf()).filter(|p| p.as_os_str() != ":memory:");
        let watchdog = super::watchdog::Watchdog::start(
            &self.opts.stall,
            Arc::clone(&cancel),
            super::watchdog::RunToStore {
                db,
                experiment: self.experiment,
                config: config_id,
                repetition,
                seed,
                started_at,
                sut: self.sut.handle(),
                interrupted: Arc::clone(&self.opts.cancel),
            },
        );
        let runner = Runner {
            plan: self.plan,
            opts: self.opts,
            sut: self.sut,
            cancel: &cancel,
            ranks: match &group {
                Some(g) => g.as_ranks(),
                None => &iolab_kind::Solo,
            },
        };
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
            ranks: group.as_ref().map(|g| g.as_ranks()),
            abort: group.as_ref().map(|_| Arc::clone(&cancel)),
            rank_error: None,
            timed: None,
        };
        if let Some(cg) = &p.throttle {
            obs.watch.throttled(cg.clone());
        }
        let mut rec = RunRecord::new(NewRun {
            config: ConfigId(0),
            // The kind may read it (`{run}` of a tool's command); the rest is filled in
            // when the run is stored.
            repetition,
            seed,
            status: RunStatus::Ok,
            error: None,
            started_at: Timestamp::now(),
            ended_at: Timestamp::now(),
            elapsed_ns: 0,
            environment: Value::Null,
        });
        obs.outer.phase(Phase::Populating);
        let run = RunOf {
            config: i,
            seed,
            number,
            repetition,
        };
        // Read before the run takes the target: a tmpfs one's files are the cap's unevictable
        // pages whatever the watcher's samples caught of them.
        let on_tmpfs = p.fs == Some(iolab_sut::FsKind::Tmpfs);
        let (result, placed) = runner.run_placed(run, p, &mut obs, &mut rec);
        // A stall fails the run, whatever the workload made of being stopped.
        let result = match watchdog.stop() {
            Some(stall) => Err(RunFailure::failed(stall)),
            None => result,
        };
        drop(forward);
        self.placed = Some(placed);
        self.timed = obs.timed.take();
        // Another rank failed: this rank's run ends with it, whatever its workload did.
        let result = match obs.rank_error.take() {
            Some(f) if !self.opts.cancel.load(Ordering::Relaxed) => Err(f),
            _ => result,
        };
        obs.watch.stop();
        if result.is_err() {
            self.failed_outputs = std::mem::take(&mut rec.outputs);
        }
        if let Some((cg, guard)) = cap {
            // Out before the watcher stops: nothing of iolab waits on the cgroup's memory
            // once nobody raises its limit.
            if let Err(e) = cg.remove_current_thread() {
                obs.outer.warn(&format!(
                    "leaving the cache cgroup {}: {e}",
                    cg.path.display()
                ));
            }
            let used = guard.stop();
            obs.watch.cap_used(used);
            self.cap_use = Some(used);
            if let Some(f) = beyond_cap(&used, on_tmpfs, result.as_ref().err()) {
                return Err(f);
            }
        }
        if let Some(e) = obs.drop_error.take() {
            return Err(RunFailure::failed(e));
        }
        let drop_freed_kib = obs.drop_freed_kib;
        let skipped_system = std::mem::take(&mut obs.skipped_system);
        let mut watch = obs.watch;
        for n in watch.notes() {
            self.obs.note(&n);
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
        watch.planned(workload.planned_duration());
        let mut facts = watch.finish_facts(&mut rec, &intent, &device);
        if let Some(g) = &group {
            super::ranks::node_totals(g.as_ranks(), g.leader(), &mut facts);
        }
        rec.findings = monitor::findings(&intent, &facts);
        Ok(rec)
    }
}

/// Copies the runner's cancel flag (a signal) to a run's own while the run lasts.
struct Forward {
    done: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Forward {
    fn start(from: &Arc<AtomicBool>, to: &Arc<AtomicBool>) -> Forward {
        let done = Arc::new(AtomicBool::new(false));
        let (from, to, d) = (Arc::clone(from), Arc::clone(to), Arc::clone(&done));
        let thread = std::thread::Builder::new()
            .name("iolab-cancel".into())
            .spawn(move || {
                while !d.load(Ordering::Relaxed) {
                    if from.load(Ordering::Relaxed) {
                        to.store(true, Ordering::Relaxed);
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
            })
            .ok();
        Forward { done, thread }
    }
}

impl Drop for Forward {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The runner's session and the run's prepared target, for a kind's [`SutControl`] requests.
pub(super) struct SessionSut<'a> {
    pub(super) sut: &'a Sut,
    pub(super) prepared: &'a mut Prepared,
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

/// Why a run under a page-cache cap did not have it: shared memory (tmpfs files, which the
/// kernel cannot evict without swap) filled the cap, or a system call met ENOMEM because the
/// kernel could not reclaim the cap's pages in time. iolab's own memory is added to the
/// limit (iolab_sut::cgroup::CapGuard), so what fills it is page cache that cannot leave.
/// On a tmpfs target it is its files, even when the watcher (every 20 ms, starved on a busy
/// machine) saw less of them than half the cap before the ENOMEM.
fn beyond_cap(
    used: &iolab_sut::cgroup::CapUse,
    on_tmpfs: bool,
    failed: Option<&RunFailure>,
) -> Option<RunFailure> {
    let enomem = failed.filter(|f| iolab_util::errno::reports(&f.message, libc::ENOMEM));
    if !used.overrun && enomem.is_none() {
        return None;
    }
    let cap = iolab_util::units::format_bytes(used.cap_bytes);
    let (why, hint) = if used.overrun || on_tmpfs || used.shmem_peak_bytes * 2 >= used.cap_bytes {
        (
            format!(
                "files on tmpfs (shared memory) filled sut.cache_limit ({cap}); the kernel \
                 cannot evict them without swap, so the run could not have the cap it asked for"
            ),
            "raise sut.cache_limit above the data the workload keeps on tmpfs, or run it on \
             a filesystem with a device (a loop image)",
        )
    } else {
        (
            format!(
                "the page cache reached sut.cache_limit ({cap}) and the kernel could not \
                 reclaim it in time (dirty pages waiting to be written back)"
            ),
            "raise sut.cache_limit, or lower vm.dirty_bytes in sut.tunables so that dirty \
             pages are written back sooner",
        )
    };
    let message = match enomem {
        Some(f) => format!("{}: {why}", f.message),
        None => why,
    };
    Some(RunFailure {
        hint: Some(hint.into()),
        ..RunFailure::failed(message)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// On a busy machine the cap's watcher (every 20 ms) can miss most of a tmpfs workload's
    /// files before the ENOMEM: the run on a tmpfs target is still told it was its files, not
    /// dirty pages waiting for write-back.
    #[test]
    fn enomem_on_a_tmpfs_target_is_its_files_whatever_the_watcher_saw() {
        let used = iolab_sut::cgroup::CapUse {
            cap_bytes: 32 << 20,
            shmem_peak_bytes: 10 << 20,
            ..Default::default()
        };
        let enomem = RunFailure::failed(format!(
            "write /mnt/x: {}",
            std::io::Error::from_raw_os_error(libc::ENOMEM)
        ));
        let f = beyond_cap(&used, true, Some(&enomem)).unwrap();
        assert!(f.message.contains("files on tmpfs"), "{}", f.message);
        let f = beyond_cap(&used, false, Some(&enomem)).unwrap();
        assert!(
            f.message.contains("could not reclaim it in time"),
            "{}",
            f.message
        );
        assert!(beyond_cap(&used, true, None).is_none());
    }
}
