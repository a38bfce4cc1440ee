//! The plan of a single run from the command line (`iolab micro`, `iolab run FILE.f`): an
//! experiment with one configuration and one repetition on an existing directory, so it goes
//! through the same runner as an experiment file — the same environment probe, monitors,
//! checks and storage. Its kind builds the workload from the subcommand's values (see
//! `kind::micro::from_command_line`, `kind::wml::from_command_line`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use iolab_sut::spec::TargetSpec;
use iolab_sut::SutSpec;
use serde_json::{json, Map, Value};

use super::{ConfigPlan, ExperimentPlan, Order, Procedure, Repetitions, UsageError};
use crate::kind::Workload;

/// What a subcommand gives for its one run.
pub struct SingleRun {
    /// As `iolab list` shows it, e.g. `micro randread normal bs=4096 …`.
    pub name: String,
    /// The workload file, or the command.
    pub source: String,
    /// The run directory (`--dir`): an existing directory, used as it is.
    pub dir: PathBuf,
    pub seed: u64,
    pub workload: Arc<dyn Workload>,
    /// The `[workload]` section an experiment file would have for it.
    pub workload_json: Value,
}

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

/// The one-configuration, one-run plan: the directory as it is (no mkfs, no tunables),
/// caches not dropped, no warm-up.
pub fn single(run: SingleRun) -> Result<ExperimentPlan, UsageError> {
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
    };
    let mut workload_json = run.workload_json;
    if let Value::Object(o) = &mut workload_json {
        o.extend(run.workload.describe());
    }
    let sut_json = serde_json::to_value(&sut_spec).unwrap_or(Value::Null);
    let resolved = json!({
        "name": run.name,
        "description": Value::Null,
        "source": run.source,
        "seed": run.seed,
        "factors": [],
        "exclude": [],
        "repetitions": repetitions.to_json(),
        "procedure": procedure.to_json(),
        "sut": sut_json,
        "workload": workload_json,
        "configs": [{
            "label": "default",
            "factors": {},
            "sut": sut_json,
            "workload": workload_json,
        }],
    });
    Ok(ExperimentPlan {
        name: run.name,
        source: PathBuf::from(run.source),
        seed: run.seed,
        configs: vec![ConfigPlan {
            label: "default".into(),
            factors: Map::new(),
            sut_spec,
            sut,
            workload: run.workload,
        }],
        repetitions,
        procedure,
        resolved,
        then: Vec::new(),
        text: None,
        uses_previous_trace: false,
    })
}
