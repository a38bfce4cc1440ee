//! The plan of a command's runs (`iolab KIND …`, `iolab run FILE.f`): an experiment whose
//! configurations run once each on an existing directory, so it goes through the same runner
//! as an experiment file — the same environment probe, monitors, checks and storage. The
//! kind's command builds the workloads from its flags (`iolab_kind::CommandPlan`).

use std::path::{Path, PathBuf};

use iolab_sut::spec::TargetSpec;
use iolab_sut::SutSpec;
use serde_json::{json, Value};

use iolab_kind::command::CommandPlan;

use super::{ConfigPlan, ExperimentPlan, Order, Procedure, Repetitions, UsageError};

/// `dir` as a run directory: it must exist and be a directory.
pub fn check_dir(dir: &Path) -> Result<(), UsageError> {
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(
            UsageError::new(format!("{} is not a directory", dir.display()))
                .hint("--dir takes a directory; iolab creates its files there"),
        ),
        Err(_) => Err(
            UsageError::new(format!("directory {} does not exist", dir.display()))
                .hint("create it first, or pass an existing --dir"),
        ),
    }
}

/// The plan of a command's runs: each configuration once, in order, in the directory as it
/// is (no mkfs, no tunables), caches not dropped, no warm-up.
pub fn single(run: CommandPlan) -> Result<ExperimentPlan, UsageError> {
    check_dir(&run.dir)?;
    let sut_spec = SutSpec {
        target: TargetSpec::Directory {
            path: run.dir.clone(),
        },
        fs: None,
        tunables: Default::default(),
        cache_limit: None,
        throttle: None,
        cache: None,
        environment: None,
    };
    let sut = sut_spec
        .validate()
        .map_err(|e| UsageError::new(format!("--dir {}: {e}", run.dir.display())))?;
    let repetitions = Repetitions::once();
    let procedure = Procedure {
        order: Order::Sequential,
        fresh_fs: false,
        warmup: 0,
        drop_caches: false,
        save_block_trace: false,
        trace_syscalls: false,
    };
    let sut_json = serde_json::to_value(&sut_spec).unwrap_or(Value::Null);
    let mut configs = Vec::with_capacity(run.configs.len());
    let mut configs_json = Vec::with_capacity(run.configs.len());
    for c in run.configs {
        let mut workload_json = c.workload_json;
        if let Value::Object(o) = &mut workload_json {
            o.extend(c.workload.describe());
        }
        configs_json.push(json!({
            "label": c.label,
            "factors": c.factors,
            "sut": sut_json,
            "workload": workload_json,
        }));
        configs.push(ConfigPlan {
            label: c.label,
            factors: c.factors,
            sut_spec: sut_spec.clone(),
            sut: sut.clone(),
            workload: c.workload,
        });
    }
    let resolved = json!({
        "name": run.name,
        "description": Value::Null,
        "source": run.source,
        "seed": run.seed,
        "factors": run.factors,
        "exclude": [],
        "repetitions": repetitions.to_json(),
        "procedure": procedure.to_json(),
        "sut": sut_json,
        "workload": configs_json.first().map_or(Value::Null, |c| c["workload"].clone()),
        "configs": configs_json,
    });
    Ok(ExperimentPlan {
        name: run.name,
        source: PathBuf::from(run.source),
        seed: run.seed,
        configs,
        repetitions,
        procedure,
        resolved,
        then: Vec::new(),
        text: None,
        stage_at: None,
        uses_previous_trace: false,
    })
}
