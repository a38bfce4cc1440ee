//! Copying experiments from another results database (`iolab import OTHER.db`).
//!
//! Experiments keep their uuid and get new ids here; configurations, runs and everything
//! under them get new ids with their references remapped. An experiment whose uuid is
//! already here is skipped and reported, so importing the same file twice (or a copy of this
//! database) adds nothing. The other file is opened read-only and never changed: one from an
//! older iolab is copied into memory and upgraded there.

use std::path::Path;

use rusqlite::backup::{Backup, StepResult};
use rusqlite::{Connection, OpenFlags, OptionalExtension};

use crate::error::{Result, StoreError};
use crate::schema::{self, MIGRATIONS, SCHEMA_VERSION};
use crate::store::{self, db_err, Store};
use crate::types::{ExperimentId, ImportReport, NewConfig, NewExperiment};

impl Store {
    /// Copies every experiment of the database at `other` that is not already here, in one
    /// transaction: after an error or a crash, nothing of the import is here.
    pub fn import(&mut self, other: impl AsRef<Path>) -> Result<ImportReport> {
        let src = open_source(other.as_ref())?;
        self.write(|tx, path| {
            let sql = |e| db_err(path, e);
            let mut report = ImportReport::default();
            for summary in src.list_experiments()? {
                let here: Option<i64> = tx
                    .query_row(
                        "SELECT id FROM experiments WHERE uuid = ?1",
                        [&summary.uuid],
                        |r| r.get(0),
                    )
                    .optional()
                    .map_err(sql)?;
                if let Some(here) = here {
                    report
                        .skipped
                        .push((summary.uuid, summary.id, ExperimentId(here)));
                    continue;
                }
                let e = src.experiment(summary.id)?;
                let new_exp = store::insert_experiment(
                    tx,
                    path,
                    &e.uuid,
                    &NewExperiment {
                        name: e.name,
                        source: e.source,
                        spec: e.spec,
                        seed: e.seed,
                        created_at: e.created_at,
                        iolab_version: e.iolab_version,
                        host: e.host,
                    },
                    e.status,
                    e.finished_at,
                )?;
                store::insert_metric_defs(tx, path, new_exp, &src.stored_metric_defs(summary.id)?)?;
                let runs = src.runs(summary.id)?;
                for config in src.configs(summary.id)? {
                    let new_config = store::insert_config(
                        tx,
                        path,
                        &NewConfig {
                            experiment: new_exp,
                            label: config.label,
                            factors: config.factors,
                        },
                        config.outcome.as_ref(),
                    )?;
                    for f in src.config_findings(config.id)? {
                        store::insert_finding(tx, path, new_config, None, &f)?;
                    }
                    for run in runs.iter().filter(|r| r.config == config.id) {
                        let record = src.run(run.id)?.into_record(new_config);
                        store::insert_run(tx, path, &record)?;
                        report.runs += 1;
                    }
                }
                report.imported.push((e.uuid, summary.id, new_exp));
            }
            Ok(report)
        })
    }
}

/// Opens `path` for reading at the current schema version without touching the file.
fn open_source(path: &Path) -> Result<Store> {
    if !path.exists() {
        return Err(StoreError::Missing {
            path: path.to_path_buf(),
        });
    }
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let src = Connection::open_with_flags(path, flags).map_err(|source| StoreError::Open {
        path: path.to_path_buf(),
        source,
    })?;
    let sql = |e| db_err(path, e);
    src.busy_timeout(store::BUSY_TIMEOUT).map_err(sql)?;
    let version = schema::check(&src, path, SCHEMA_VERSION)?;
    if version == SCHEMA_VERSION {
        missing_schema(&src, path)?;
        return Ok(Store::from_parts(src, path.to_path_buf(), version));
    }
    let mut mem = Connection::open_in_memory().map_err(sql)?;
    {
        // All pages in one step: the copy is a consistent snapshot of the other file.
        let backup = Backup::new(&src, &mut mem).map_err(sql)?;
        if backup.step(-1).map_err(sql)? != StepResult::Done {
            return Err(StoreError::Busy {
                path: path.to_path_buf(),
            });
        }
    }
    drop(src);
    mem.pragma_update(None, "foreign_keys", true).map_err(sql)?;
    schema::migrate(&mut mem, path, MIGRATIONS)?;
    missing_schema(&mem, path)?;
    Ok(Store::from_parts(mem, path.to_path_buf(), version))
}

/// Refuses a database that says it has this schema but lacks one of its tables or columns
/// (dropped by another program, or a file made to look like iolab's): what the import reads
/// must be there, or it would stop half-way with an SQL message. Extra tables and columns
/// are left alone.
fn missing_schema(src: &Connection, path: &Path) -> Result<()> {
    let sql = |e| db_err(path, e);
    let mut reference = Connection::open_in_memory().map_err(sql)?;
    schema::migrate(&mut reference, path, MIGRATIONS)?;
    let columns = |conn: &Connection, table: &str| -> rusqlite::Result<Vec<String>> {
        conn.prepare("SELECT name FROM pragma_table_info(?1)")?
            .query_map([table], |r| r.get(0))?
            .collect()
    };
    let tables: Vec<String> = reference
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
        .and_then(|mut st| st.query_map([], |r| r.get(0))?.collect())
        .map_err(sql)?;
    for table in tables {
        let have = columns(src, &table).map_err(sql)?;
        let missing = if have.is_empty() {
            format!("its table `{table}` is missing")
        } else {
            match columns(&reference, &table)
                .map_err(sql)?
                .into_iter()
                .find(|c| !have.contains(c))
            {
                Some(c) => format!("its column `{table}.{c}` is missing"),
                None => continue,
            }
        };
        return Err(StoreError::Corrupt {
            path: path.to_path_buf(),
            details: format!("{missing} (iolab's schema {SCHEMA_VERSION} has it)"),
        });
    }
    Ok(())
}
