//! The results database at the edge: opening it, `iolab list`, `iolab export`. (Runs are
//! stored by the experiment runner, single runs included.)

use std::path::Path;

use iolab_store::{ExperimentId, ExportDocument, Store, StoreError};

use crate::cli::{ExportArg, ExportArgs, ListArgs};
use crate::error::CliError;
use crate::output::json::Json;
use crate::output::list::{self, ListReport};
use crate::output::{self, export, Formatter};

/// A database that cannot be used as given is bad input (exit 2), like any other bad
/// argument; exit 1 stays for work that ran and failed.
pub fn store_error(e: StoreError) -> CliError {
    store_error_as(e, &iolab_util::setting::CommandLine)
}

/// [`store_error`] with the database named in `words` (the command line's `--db`, or the file
/// a command reads another database from).
pub fn store_error_as(e: StoreError, words: &dyn iolab_util::setting::Words) -> CliError {
    let advice = e.advice().map(|a| a.render(words));
    let err = match e {
        StoreError::Missing { .. }
        | StoreError::Open { .. }
        | StoreError::NotADatabase { .. }
        | StoreError::NotIolab { .. }
        | StoreError::TooNew { .. }
        | StoreError::Corrupt { .. }
        | StoreError::NoSuchExperiment { .. }
        | StoreError::NoSuchConfig { .. }
        | StoreError::NoSuchRun { .. } => CliError::usage(e),
        other => CliError::failed(other),
    };
    match advice {
        Some(a) => err.with_hint(a),
        None => err,
    }
}

fn not_a_directory(path: &Path) -> Result<(), CliError> {
    if path.is_dir() {
        return Err(
            CliError::usage(format!("{} is a directory", path.display()))
                .with_hint("--db (or $IOLAB_DB) names the database file, e.g. results/iolab.db"),
        );
    }
    Ok(())
}

/// Opens (creating if needed) the database for writing.
pub fn open(path: &Path) -> Result<Store, CliError> {
    // Under MPI rank 0 stores; the others keep their runs in memory.
    if !crate::state::speaks() {
        return Store::open_in_memory().map_err(CliError::failed);
    }
    not_a_directory(path)?;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        if !dir.is_dir() {
            return Err(CliError::usage(format!(
                "cannot create the results database {}: directory {} does not exist",
                path.display(),
                dir.display()
            ))
            .with_hint("create the directory first, or point --db elsewhere"));
        }
    }
    Store::open(path).map_err(|e| match e {
        StoreError::Open { .. } | StoreError::Sqlite { .. } => {
            CliError::usage(e).with_hint("point --db (or $IOLAB_DB) at a file this user can write")
        }
        other => store_error(other),
    })
}

/// Opens an existing database for reading.
pub fn open_existing(path: &Path) -> Result<Store, CliError> {
    not_a_directory(path)?;
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
                store.experiment(id).map_err(store_error)?;
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
    let report = ListReport {
        database: args.db.db.clone(),
        experiments: store.list_experiments().map_err(store_error)?,
    };
    output::print_json_or(args.json, &list::Human, &report)
}

pub fn export(args: ExportArgs) -> Result<(), CliError> {
    let store = open_existing(&args.db.db)?;
    let id = resolve(&store, args.id.as_deref())?;
    let doc = store.export(id).map_err(store_error)?;
    let format: &dyn Formatter<ExportDocument> = match args.format {
        ExportArg::Json => &Json,
        ExportArg::Csv => &export::Csv,
    };
    match &args.output {
        Some(path) => iolab_kind::output::write_output(path, &args.db.db, "-o", |w| {
            format
                .write(&doc, w)
                .map_err(|e| CliError::failed(format!("cannot write {}: {e}", path.display())))
        }),
        None => output::print(format, &doc),
    }
}
