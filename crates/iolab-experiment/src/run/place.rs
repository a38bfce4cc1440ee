//! Where a run's workload executes (`[sut] environment`, iolab_sut::env): in this process
//! (`host`), pinned to the environment's CPU set if it has one; or in a worker process
//! (`iolab __worker`, [`super::worker`]) that a container or a VM starts, driven over its
//! channel so that the runner's hooks (dropping caches, the monitors) run here exactly where
//! they would for a run on the host.

use iolab_sut::EnvKind;

use super::one_run::SessionSut;
use super::worker::{self, Request, WorkerSide};
use super::*;

/// What the run's environment was, for the run's record: `{kind, cpuset, …}` and what the
/// worker saw.
#[derive(Debug, Default)]
pub(super) struct Placed {
    pub record: Value,
}

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
}

impl Runner<'_> {
    /// Runs configuration `i`'s workload once where its environment says, with the runner's
    /// hooks `obs`, into `rec`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn run_placed(
        self,
        i: usize,
        p: &mut Prepared,
        seed: u64,
        number: u64,
        repetition: u32,
        obs: &mut Hooks<'_>,
        rec: &mut RunRecord,
    ) -> (Result<(), RunFailure>, Placed) {
        let config = &self.plan.configs[i];
        let env = &config.sut.environment;
        let mut placed = Placed {
            record: json!({
                "kind": env.name(),
                "cpuset": env.cpuset.as_deref().map(iolab_sys::cpus::format_cpu_list),
            }),
        };
        let result = match &env.kind {
            EnvKind::Host => {
                let pinned = match env.cpuset.as_deref().map(Pinned::to).transpose() {
                    Ok(p) => p,
                    Err(f) => return (Err(f), placed),
                };
                let dir = p.mountpoint.clone();
                let r = config.workload.run(&mut RunCtx {
                    dir: &dir,
                    seed,
                    number,
                    cancel: &self.opts.cancel,
                    hooks: obs,
                    record: rec,
                    sut: &mut SessionSut {
                        sut: self.sut,
                        prepared: &mut *p,
                    },
                });
                drop(pinned);
                r
            }
            EnvKind::Container(_) | EnvKind::Vm(_) => {
                self.run_in_worker(i, p, seed, number, repetition, obs, rec, &mut placed)
            }
        };
        (result, placed)
    }

    /// The request for a worker; `None` when the plan has no experiment file to read again.
    #[allow(clippy::too_many_arguments)]
    fn request(
        self,
        i: usize,
        seed: u64,
        number: u64,
        repetition: u32,
        dir: &Path,
        mount: Option<worker::DiskMount>,
        drop_caches: bool,
    ) -> Result<Request, RunFailure> {
        Request::new(
            self.plan,
            i,
            seed,
            number,
            repetition,
            dir,
            mount,
            drop_caches,
        )
        .ok_or_else(|| {
            RunFailure::bad_input(
                "a run in a container or a VM needs an experiment file (its worker reads the \
                     workload from it)",
            )
        })
    }

    /// Runs the workload in a worker process of the run's environment.
    #[allow(clippy::too_many_arguments)]
    fn run_in_worker(
        self,
        i: usize,
        p: &mut Prepared,
        seed: u64,
        number: u64,
        repetition: u32,
        obs: &mut Hooks<'_>,
        rec: &mut RunRecord,
        placed: &mut Placed,
    ) -> Result<(), RunFailure> {
        let _ = (
            i,
            p,
            seed,
            number,
            repetition,
            obs,
            rec,
            placed,
            worker::drive,
        );
        let _: Option<WorkerSide> = None;
        let _ = Self::request;
        Err(RunFailure::failed("not yet"))
    }
}
