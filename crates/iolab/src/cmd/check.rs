//! `iolab check EXPERIMENT.toml`: validate the file and judge, per configuration, what can be
//! judged before running (the dataset against the page cache, a loop device without direct
//! I/O, runs shorter than the writeback interval). Nothing is run or changed.

use iolab_check::PlanFacts;
use iolab_experiment::run::monitor::Intent;
use iolab_experiment::{ConfigPlan, ExperimentPlan};
use iolab_sut::Target;

use crate::cli::CheckArgs;
use crate::error::CliError;
use crate::output;
use crate::output::check::{self, CheckReport, ConfigCheck};

pub fn run(args: CheckArgs) -> Result<(), CliError> {
    let plan = iolab_experiment::load(&args.file)
        .map_err(|errs| CliError::usage(errs.to_string().trim_end()))?;
    let mut configs = Vec::with_capacity(plan.configs.len());
    let stages = 1 + plan.then.len();
    for k in 0..stages {
        let stage_plan;
        let p = if k == 0 {
            &plan
        } else {
            stage_plan = iolab_experiment::stage(&plan, k, None)
                .map_err(|errs| CliError::usage(errs.to_string().trim_end()))?;
            &stage_plan
        };
        for c in &p.configs {
            let facts = plan_facts(p, c);
            configs.push(ConfigCheck {
                label: if stages > 1 {
                    format!("stage {} {}", k + 1, c.label)
                } else {
                    c.label.clone()
                },
                findings: iolab_check::pre_run_checks(&facts)
                    .into_iter()
                    .map(iolab_experiment::run::monitor::to_store)
                    .collect(),
            });
        }
    }
    let report = CheckReport {
        file: args.file.display().to_string(),
        configs,
    };
    output::print_json_or(args.json, &check::Human, &report)
}

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

fn plan_facts(plan: &ExperimentPlan, c: &ConfigPlan) -> PlanFacts {
    let intent = c.workload.intent(Intent {
        caches_dropped: plan.procedure.drop_caches,
        cache_limit: c.sut.cache_limit,
        ..Intent::default()
    });
    let duration = c.workload.planned_duration();
    let (is_loop, loop_direct_io, fs_type) = match &c.sut.target {
        Target::LoopImage(l) => (Some(true), Some(l.direct_io), None),
        Target::Tmpfs(_) => (Some(false), None, Some("tmpfs".to_string())),
        Target::BlockDevice(_) => (Some(false), None, None),
        Target::Directory(_) => (None, None, None),
    };
    PlanFacts {
        dataset_advice: intent.dataset_advice.clone(),
        access: intent.access,
        reads_cold: Some(intent.caches_dropped || intent.o_direct || intent.reads_meant_cold),
        o_direct: Some(intent.o_direct),
        cache_purged_each_pass: Some(intent.cache_purged_each_pass),
        sync_requested: Some(intent.sync_requested),
        sync_scope: intent.sync_scope,
        dataset_bytes: intent.dataset_bytes,
        mem_total_bytes: iolab_sys::meminfo::read().ok().map(|m| m.mem_total),
        cgroup_cache_limit_bytes: intent.cache_limit,
        duration_ns: duration.map(|d| d.as_nanos() as u64),
        interval_ns: Some(1_000_000_000),
        dirty_expire_centisecs: tunable(c, "vm.dirty_expire_centisecs"),
        dirty_writeback_centisecs: tunable(c, "vm.dirty_writeback_centisecs"),
        fs_type: c.sut.fs.as_ref().map(|f| f.kind.to_string()).or(fs_type),
        device_name: None,
        is_loop,
        loop_direct_io,
        throttle_limits_writes: c.sut.throttle.map(|t| t.limits_writes()),
    }
}
