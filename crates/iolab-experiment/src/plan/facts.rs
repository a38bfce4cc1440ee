//! What the checks know of a configuration from its plan: the workload's intent with what the
//! procedure does, and — before running (`iolab check`) — its target and tunables. The runner
//! starts from the same intent and adds what it measured (`run::monitor::run_facts`).

use iolab_check::PlanFacts;
use iolab_kind::Intent;
use iolab_sut::Target;

use super::{ConfigPlan, ExperimentPlan};

impl ExperimentPlan {
    /// What configuration `c`'s workload means to do, with what the procedure does around it.
    pub fn intent(&self, c: &ConfigPlan) -> Intent {
        c.workload.intent(Intent {
            caches_dropped: self.procedure.drop_caches,
            cache_limit: c.sut.cache_limit,
            ..Intent::default()
        })
    }

    /// What the checks can judge of configuration `c` before it runs: its workload's intent,
    /// its target, the tunables it will run with.
    pub fn pre_run_facts(&self, c: &ConfigPlan) -> PlanFacts {
        let duration = c.workload.planned_duration();
        let (is_loop, loop_direct_io, fs_type) = match &c.sut.target {
            Target::LoopImage(l) => (Some(true), Some(l.direct_io), None),
            Target::Tmpfs(_) => (Some(false), None, Some("tmpfs".to_string())),
            Target::BlockDevice(_) => (Some(false), None, None),
            Target::Directory(_) => (None, None, None),
        };
        let env = self.planned_environment(c);
        let base = self.intent(c).facts();
        PlanFacts {
            // The memory that can cache the run's files is the guest's in a VM, and at most
            // the container's limit in a container.
            mem_total_bytes: match &c.sut.environment.kind {
                iolab_sut::EnvKind::Vm(v) => Some(v.memory),
                _ => iolab_sys::meminfo::read().ok().map(|m| m.mem_total),
            },
            cgroup_cache_limit_bytes: match &c.sut.environment.kind {
                iolab_sut::EnvKind::Container(k) => k.memory.or(base.cgroup_cache_limit_bytes),
                _ => base.cgroup_cache_limit_bytes,
            },
            duration_ns: duration.map(|d| d.as_nanos() as u64),
            interval_ns: Some(1_000_000_000),
            dirty_expire_centisecs: tunable(c, "vm.dirty_expire_centisecs"),
            dirty_writeback_centisecs: tunable(c, "vm.dirty_writeback_centisecs"),
            fs_type: c.sut.fs.as_ref().map(|f| f.kind.to_string()).or(fs_type),
            device_name: None,
            is_loop,
            loop_direct_io,
            throttle_limits_writes: c
                .sut
                .throttle
                .or_else(|| c.sut.container.as_ref().and_then(|k| k.io))
                .map(|t| t.limits_writes()),
            environment: Some(env),
            ..base
        }
    }

    /// What the checks know of configuration `c`'s environment before it runs: its kind,
    /// CPUs and settings, and the environments it is compared with.
    pub fn planned_environment(&self, c: &ConfigPlan) -> iolab_check::EnvFacts {
        let env = &c.sut.environment;
        let mut f = iolab_check::EnvFacts {
            kind: env.name().into(),
            cpuset: env.cpuset.clone(),
            compared: (self.configs.len() > 1).then(|| {
                self.configs
                    .iter()
                    .map(|o| {
                        let e = &o.sut.environment;
                        (e.name().to_string(), e.cpuset.clone())
                    })
                    .collect()
            }),
            ..iolab_check::EnvFacts::default()
        };
        match &env.kind {
            iolab_sut::EnvKind::Container(k) => {
                f.cpu_quota_cpus = k.cpus;
                f.memory_limit_bytes = k.memory;
            }
            iolab_sut::EnvKind::Vm(v) => {
                f.vm_cache = Some(v.cache.name().into());
                f.vm_accel = match v.accel {
                    iolab_sut::env::VmAccel::Kvm => Some("kvm".into()),
                    iolab_sut::env::VmAccel::Tcg => Some("tcg".into()),
                    // What `auto` will choose here.
                    iolab_sut::env::VmAccel::Auto => Some(
                        if iolab_vm::kvm_check().is_ok() {
                            "kvm"
                        } else {
                            "tcg"
                        }
                        .into(),
                    ),
                };
                f.memory_limit_bytes = Some(v.memory);
            }
            iolab_sut::EnvKind::Host => {}
        }
        f
    }
}

/// The value of tunable `name` the configuration will run with: its own, else the machine's.
fn tunable(c: &ConfigPlan, name: &str) -> Option<u64> {
    c.sut
        .tunables
        .iter()
        .find(|t| t.name.to_string() == name)
        .and_then(|t| t.value.parse().ok())
        .or_else(|| {
            std::fs::read_to_string(format!("/proc/sys/{}", name.replace('.', "/")))
                .ok()?
                .trim()
                .parse()
                .ok()
        })
}
