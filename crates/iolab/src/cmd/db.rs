//! The results database at the edge: opening it, `iolab list`, `iolab export`, and storing a
//! single run of `iolab micro` / `iolab run FILE.f` as a one-configuration experiment.

use std::io::Write;
use std::path::Path;

use iolab_store::{
    ExperimentId, ExperimentStatus, NewConfig, NewExperiment, NewRun, RunRecord, RunStatus, Store,
    StoreError, Timestamp,
};
use serde_json::{Map, Value};

use crate::cli::{ExportArg, ExportArgs, ListArgs};
use crate::error::CliError;

fn store_error(e: StoreError) -> CliError {
    match e {
        StoreError::Missing { .. } => CliError::usage(e),
        other => CliError::failed(other),
    }
}

/// Opens (creating if needed) the database for writing.
pub fn open(path: &Path) -> Result<Store, CliError> {
    Store::open(path)
        .map_err(|e| CliError::failed(e).with_hint("point --db (or $IOLAB_DB) at a writable file"))
}

/// Opens an existing database for reading.
pub fn open_existing(path: &Path) -> Result<Store, CliError> {
    Store::open_existing(path).map_err(store_error)
}

/// An experiment named by id or uuid, or the newest.
pub fn resolve(store: &Store, id: Option<&str>) -> Result<ExperimentId, CliError> {
    match id {
        None => store
            .latest_experiment()
            .map_err(store_error)?
            .ok_or_else(|| {
                CliError::usage(format!(
                    "{} holds no experiment yet",
                    store.path().display()
                ))
            }),
        Some(s) => {
            if let Ok(n) = s.parse::<i64>() {
                let id = ExperimentId(n);
                store.experiment(id).map_err(|e| {
                    CliError::usage(e).with_hint("`iolab list` shows the experiments")
                })?;
                return Ok(id);
            }
            store
                .experiment_by_uuid(s)
                .map_err(store_error)?
                .ok_or_else(|| {
                    CliError::usage(format!("no experiment {s:?} in {}", store.path().display()))
                        .with_hint("give the number `iolab list` shows, or a full uuid")
                })
        }
    }
}

pub fn list(args: ListArgs) -> Result<(), CliError> {
    let store = open_existing(&args.db.db)?;
    let list = store.list_experiments().map_err(store_error)?;
    crate::output::emit(|out| {
        if args.json {
            serde_json::to_writer_pretty(&mut *out, &list)?;
            return writeln!(out);
        }
        if list.is_empty() {
            return writeln!(out, "no experiments in {}", args.db.db.display());
        }
        writeln!(
            out,
            "{:>4}  {:<20}  {:<11}  {:>7}  {:>14}  name (source)",
            "id", "started (UTC)", "status", "configs", "runs ok/fail/int"
        )?;
        for e in &list {
            let started = e.created_at.to_rfc3339();
            writeln!(
                out,
                "{:>4}  {:<20}  {:<11}  {:>7}  {:>14}  {} ({})",
                e.id.0,
                started.get(..19).unwrap_or(&started).replace('T', " "),
                e.status.as_str(),
                e.configs,
                format!("{}/{}/{}", e.runs.ok, e.runs.failed, e.runs.interrupted),
                e.name,
                e.source
            )?;
        }
        Ok(())
    })
}

pub fn export(args: ExportArgs) -> Result<(), CliError> {
    let store = open_existing(&args.db.db)?;
    let id = resolve(&store, args.id.as_deref())?;
    let format = match args.format {
        ExportArg::Json => iolab_store::ExportFormat::Json,
        ExportArg::Csv => iolab_store::ExportFormat::Csv,
    };
    match &args.output {
        Some(path) => {
            // Write beside the target and rename, so a failed export leaves no half file.
            let tmp = path.with_extension("iolab-tmp");
            let result = (|| -> Result<(), CliError> {
                let f = std::fs::File::create(&tmp).map_err(|e| {
                    CliError::usage(format!("cannot create {}: {e}", tmp.display()))
                })?;
                let mut w = std::io::BufWriter::new(f);
                store.export(id, format, &mut w).map_err(store_error)?;
                w.flush()
                    .map_err(|e| CliError::failed(format!("{}: {e}", tmp.display())))?;
                std::fs::rename(&tmp, path)
                    .map_err(|e| CliError::failed(format!("{}: {e}", path.display())))
            })();
            if result.is_err() {
                let _ = std::fs::remove_file(&tmp);
            }
            result
        }
        None => {
            let mut buf = Vec::new();
            store.export(id, format, &mut buf).map_err(store_error)?;
            crate::output::emit(|out| out.write_all(&buf))
        }
    }
}

/// What a single command run stores: one experiment, one configuration, one run.
pub struct Single<'a> {
    pub db: &'a Path,
    pub name: String,
    pub source: String,
    pub spec: Value,
    pub factors: Map<String, Value>,
    pub seed: u64,
    pub started_at: Timestamp,
    /// The run's directory: its storage goes into the run's environment.
    pub dir: &'a Path,
}

/// A failed engine run: stored as failed or interrupted (unless storing is off or the input
/// was at fault: nothing ran), then turned into the command's error.
pub fn engine_failure(
    single: Option<Single<'_>>,
    e: iolab_engine::EngineError,
    interrupted: &str,
) -> CliError {
    if let (Some(single), false) = (single, e.is_bad_input()) {
        let status = if e.is_interrupted() {
            RunStatus::Interrupted
        } else {
            RunStatus::Failed
        };
        // The run's own error matters more than a failure to record it.
        let _ = store_single(single, status, Some(e.to_string()), new_record());
    }
    if e.is_interrupted() {
        return CliError::interrupted(interrupted);
    }
    e.into()
}

/// An empty record to fill before [`store_single`] (which sets its run fields).
pub fn new_record() -> RunRecord {
    RunRecord::new(NewRun {
        config: iolab_store::ConfigId(0),
        repetition: 0,
        seed: 0,
        status: RunStatus::Ok,
        error: None,
        started_at: Timestamp(0),
        ended_at: Timestamp(0),
        elapsed_ns: 0,
        environment: Value::Null,
    })
}

/// Stores `rec` (its measurements; keeps its `elapsed_ns`) as a finished one-run experiment;
/// returns the experiment's id.
pub fn store_single(
    s: Single<'_>,
    status: RunStatus,
    error: Option<String>,
    mut rec: RunRecord,
) -> Result<ExperimentId, CliError> {
    let mut store = open(s.db)?;
    let exp = store
        .create_experiment(&NewExperiment {
            name: s.name,
            source: s.source,
            spec: s.spec,
            seed: s.seed,
            created_at: s.started_at,
            iolab_version: env!("CARGO_PKG_VERSION").into(),
            host: serde_json::to_value(iolab_monitor::environment::HostEnv::probe())
                .unwrap_or(Value::Null),
        })
        .map_err(CliError::failed)?;
    let config = store
        .add_config(&NewConfig {
            experiment: exp,
            label: "default".into(),
            factors: s.factors,
        })
        .map_err(CliError::failed)?;
    rec.run = NewRun {
        config,
        repetition: 0,
        seed: s.seed,
        status,
        error,
        started_at: s.started_at,
        ended_at: Timestamp::now(),
        elapsed_ns: rec.run.elapsed_ns,
        environment: serde_json::to_value(iolab_monitor::environment::Environment::probe(Some(
            s.dir,
        )))
        .unwrap_or_default(),
    };
    store.record_run(&rec).map_err(CliError::failed)?;
    let exp_status = match status {
        RunStatus::Ok => ExperimentStatus::Done,
        RunStatus::Failed => ExperimentStatus::Failed,
        RunStatus::Interrupted => ExperimentStatus::Interrupted,
    };
    store
        .set_experiment_status(exp, exp_status, Timestamp::now())
        .map_err(CliError::failed)?;
    Ok(exp)
}
