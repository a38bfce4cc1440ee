//! Opening the database and writing to it.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{
    params, Connection, ErrorCode, OpenFlags, OptionalExtension, Transaction, TransactionBehavior,
};
use serde_json::Value;

use crate::codec;
use crate::error::{Result, StoreError};
use crate::schema::{self, MIGRATIONS, SCHEMA_VERSION};
use crate::types::{
    ConfigId, ConfigOutcome, ExperimentId, ExperimentStatus, Finding, Metric, NewConfig,
    NewExperiment, RunId, RunRecord, RunStatus, Timestamp,
};
use iolab_metrics::MetricDef;

/// How long a statement waits for another process's write lock before giving up. Runs last
/// seconds to hours and a write takes milliseconds, so a long wait means something is stuck.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// The default database file, relative to the working directory.
pub const DEFAULT_PATH: &str = "iolab.db";

/// An open results database. Writes take `&mut self` because each is one transaction.
pub struct Store {
    pub(crate) conn: Connection,
    pub(crate) path: PathBuf,
    journal_mode: String,
    found_version: u32,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("path", &self.path)
            .field("journal_mode", &self.journal_mode)
            .finish_non_exhaustive()
    }
}

/// Maps an SQLite error to the error a user can act on.
pub(crate) fn db_err(path: &Path, e: rusqlite::Error) -> StoreError {
    let path = path.to_path_buf();
    match e.sqlite_error_code() {
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => StoreError::Busy { path },
        Some(ErrorCode::SystemIoFailure | ErrorCode::DiskFull) => {
            StoreError::Disk { path, source: e }
        }
        Some(ErrorCode::NotADatabase) => StoreError::NotADatabase { path },
        Some(ErrorCode::DatabaseCorrupt) => StoreError::Corrupt {
            path,
            details: e.to_string(),
        },
        _ => StoreError::Sqlite { path, source: e },
    }
}

/// u64 ↔ INTEGER by reinterpreting the bits (lossless; see the crate docs).
pub(crate) fn to_i64(v: u64) -> i64 {
    v as i64
}

pub(crate) fn to_u64(v: i64) -> u64 {
    v as u64
}

/// NaN ↔ NULL: SQLite turns a bound NaN into NULL anyway; doing it here makes it explicit.
pub(crate) fn real(v: f64) -> Option<f64> {
    (!v.is_nan()).then_some(v)
}

pub(crate) fn json_text(what: &str, v: &Value) -> Result<String> {
    serde_json::to_string(v)
        .map_err(|e| StoreError::InvalidRecord(format!("{what} cannot be written as JSON: {e}")))
}

impl Store {
    /// Opens `path`, creating it if missing, and brings its schema up to date.
    ///
    /// Sets WAL mode (readers never wait for the writer and a crash loses at most the
    /// transaction in flight), `synchronous = FULL` (a committed run survives a power cut,
    /// for one fsync per run), foreign keys and a [`BUSY_TIMEOUT`]. Refuses files that are
    /// not iolab databases and databases from a newer iolab.
    pub fn open(path: impl AsRef<Path>) -> Result<Store> {
        Store::open_with(path.as_ref(), true)
    }

    /// Like [`Store::open`], but a missing file is an error rather than a new database: for
    /// commands that only read (`iolab list`, `show`, `export`).
    pub fn open_existing(path: impl AsRef<Path>) -> Result<Store> {
        Store::open_with(path.as_ref(), false)
    }

    /// A private database in memory, for tests.
    pub fn open_in_memory() -> Result<Store> {
        let path = PathBuf::from(":memory:");
        let conn = Connection::open_in_memory().map_err(|source| StoreError::Open {
            path: path.clone(),
            source,
        })?;
        Store::init(conn, path)
    }

    fn open_with(path: &Path, create: bool) -> Result<Store> {
        if !create && !path.exists() {
            return Err(StoreError::Missing {
                path: path.to_path_buf(),
            });
        }
        let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        if create {
            flags |= OpenFlags::SQLITE_OPEN_CREATE;
        }
        // Processes that open a new database at the same moment race to switch it to WAL and
        // create the schema; SQLite answers the loser "busy" at once, without waiting (its
        // busy handler does not cover the journal-mode switch). Open again until the winner
        // is done, within the same patience as any other lock.
        let start = std::time::Instant::now();
        loop {
            match Store::open_once(path, flags) {
                Err(StoreError::Busy { .. }) if start.elapsed() < BUSY_TIMEOUT => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                other => return other,
            }
        }
    }

    fn open_once(path: &Path, flags: OpenFlags) -> Result<Store> {
        let conn = Connection::open_with_flags(path, flags).map_err(|source| {
            match source.sqlite_error_code() {
                Some(ErrorCode::NotADatabase) => StoreError::NotADatabase {
                    path: path.to_path_buf(),
                },
                _ => StoreError::Open {
                    path: path.to_path_buf(),
                    source,
                },
            }
        })?;
        Store::init(conn, path.to_path_buf())
    }

    fn init(mut conn: Connection, path: PathBuf) -> Result<Store> {
        let sql = |e| db_err(&path, e);
        conn.busy_timeout(BUSY_TIMEOUT).map_err(sql)?;
        // Before changing anything: is this ours, and can we read it?
        schema::check(&conn, &path, SCHEMA_VERSION)?;
        let journal_mode: String = conn
            .pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get(0))
            .map_err(sql)?;
        conn.pragma_update(None, "synchronous", "FULL")
            .map_err(sql)?;
        conn.pragma_update(None, "foreign_keys", true)
            .map_err(sql)?;
        let found_version = schema::migrate(&mut conn, &path, MIGRATIONS)?;
        Ok(Store {
            conn,
            path,
            journal_mode,
            found_version,
        })
    }

    /// A store around an already checked and migrated connection (import's source).
    pub(crate) fn from_parts(conn: Connection, path: PathBuf, found_version: u32) -> Store {
        Store {
            conn,
            path,
            journal_mode: String::new(),
            found_version,
        }
    }

    /// The file this store was opened from (`:memory:` for [`Store::open_in_memory`]).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `wal`, or what SQLite settled for where WAL is impossible (`memory` for in-memory
    /// databases; WAL needs shared memory, which network filesystems may lack). The binary
    /// may warn when it is not `wal`: runs stay atomic, but readers then wait for writers.
    pub fn journal_mode(&self) -> &str {
        &self.journal_mode
    }

    /// The schema version the file had before this open upgraded it (0 for a new file).
    pub fn found_schema_version(&self) -> u32 {
        self.found_version
    }

    /// Runs SQLite's `integrity_check` and `foreign_key_check`.
    pub fn check_integrity(&self) -> Result<()> {
        let sql = |e| db_err(&self.path, e);
        let mut problems = Vec::new();
        let mut stmt = self.conn.prepare("PRAGMA integrity_check").map_err(sql)?;
        let rows = stmt.query_map([], |r| r.get::<_, String>(0)).map_err(sql)?;
        for row in rows {
            let line = row.map_err(sql)?;
            if line != "ok" {
                problems.push(line);
            }
        }
        let mut stmt = self.conn.prepare("PRAGMA foreign_key_check").map_err(sql)?;
        let rows = stmt
            .query_map([], |r| {
                Ok(format!(
                    "row {} of {} points to a missing row of {}",
                    r.get::<_, Option<i64>>(1)?.unwrap_or(0),
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(2)?
                ))
            })
            .map_err(sql)?;
        for row in rows {
            problems.push(row.map_err(sql)?);
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(StoreError::Corrupt {
                path: self.path.clone(),
                details: problems.join("; "),
            })
        }
    }

    /// Runs `f` in one immediate (write-locked) transaction and commits: all or nothing.
    pub(crate) fn write<T>(
        &mut self,
        f: impl FnOnce(&Transaction<'_>, &Path) -> Result<T>,
    ) -> Result<T> {
        let path = self.path.as_path();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| db_err(path, e))?;
        let value = f(&tx, path)?;
        tx.commit().map_err(|e| db_err(path, e))?;
        Ok(value)
    }

    /// Starts an experiment (status `running`, a fresh uuid).
    pub fn create_experiment(&mut self, exp: &NewExperiment) -> Result<ExperimentId> {
        self.write(|tx, path| {
            let sql = |e| db_err(path, e);
            let uuid = new_uuid(tx).map_err(sql)?;
            let id = insert_experiment(tx, path, &uuid, exp, ExperimentStatus::Running, None)?;
            set_owner(tx, path, id, ExperimentStatus::Running)?;
            Ok(id)
        })
    }

    /// Starts an experiment with its metric definitions and its configurations (label,
    /// factors), in one transaction: a failure (the disk, a crash) leaves all of it or none,
    /// never an experiment without the configurations `--resume` needs to continue it.
    pub fn start_experiment(
        &mut self,
        exp: &NewExperiment,
        defs: &[MetricDef],
        configs: &[(String, serde_json::Map<String, Value>)],
    ) -> Result<(ExperimentId, Vec<ConfigId>)> {
        self.write(|tx, path| {
            let sql = |e| db_err(path, e);
            let uuid = new_uuid(tx).map_err(sql)?;
            let id = insert_experiment(tx, path, &uuid, exp, ExperimentStatus::Running, None)?;
            set_owner(tx, path, id, ExperimentStatus::Running)?;
            insert_metric_defs(tx, path, id, defs)?;
            let ids = configs
                .iter()
                .map(|(label, factors)| {
                    let c = NewConfig {
                        experiment: id,
                        label: label.clone(),
                        factors: factors.clone(),
                    };
                    insert_config(tx, path, &c, None)
                })
                .collect::<Result<Vec<_>>>()?;
            Ok((id, ids))
        })
    }

    /// Adds a configuration to an experiment.
    pub fn add_config(&mut self, config: &NewConfig) -> Result<ConfigId> {
        self.write(|tx, path| insert_config(tx, path, config, None))
    }

    /// Adds several configurations in one transaction (one fsync for a whole matrix), all or
    /// none.
    pub fn add_configs(&mut self, configs: &[NewConfig]) -> Result<Vec<ConfigId>> {
        self.write(|tx, path| {
            configs
                .iter()
                .map(|c| insert_config(tx, path, c, None))
                .collect::<Result<Vec<_>>>()
        })
    }

    /// Writes a finished run — its metrics, flowops, series, monitor samples and findings —
    /// in one transaction: after a crash the run is either all there or absent.
    pub fn record_run(&mut self, record: &RunRecord) -> Result<RunId> {
        validate(record)?;
        self.write(|tx, path| insert_run(tx, path, record))
    }

    /// Records where a run's saved block trace went (it is named by the run id, known only
    /// once the run is stored): the `saved.path` of its `block trace` flowop's extra JSON.
    pub fn set_saved_trace_path(&mut self, run: RunId, trace: &Path) -> Result<()> {
        let text = trace.to_string_lossy().into_owned();
        self.write(|tx, path| {
            tx.execute(
                "UPDATE flowop_stats SET extra_json = json_set(extra_json, '$.saved.path', ?2) \
                 WHERE run_id = ?1 AND kind = 'trace'",
                params![run.0, text],
            )
            .map_err(|e| db_err(path, e))?;
            Ok(())
        })
    }

    /// Records how a configuration's repetitions ended (the stopping rule's verdict).
    pub fn set_config_outcome(&mut self, config: ConfigId, outcome: &ConfigOutcome) -> Result<()> {
        let n = self
            .conn
            .execute(
                "UPDATE configs SET converged = ?2, outcome = ?3 WHERE id = ?1",
                params![config.0, outcome.converged, outcome.note],
            )
            .map_err(|e| db_err(&self.path, e))?;
        if n == 0 {
            return Err(StoreError::NoSuchConfig {
                path: self.path.clone(),
                id: config,
            });
        }
        Ok(())
    }

    /// Adds findings about a whole configuration (e.g. `did-not-converge`).
    pub fn add_config_findings(&mut self, config: ConfigId, findings: &[Finding]) -> Result<()> {
        self.write(|tx, path| {
            require_config(tx, path, config)?;
            for f in findings {
                insert_finding(tx, path, config, None, f)?;
            }
            Ok(())
        })
    }

    /// Replaces the metrics of run `id` whose names are in `metrics` (a parser fixed later read
    /// the run's raw output again: `iolab reparse --apply`); the run's other metrics stay.
    pub fn update_run_metrics(&mut self, id: RunId, metrics: &[Metric]) -> Result<()> {
        self.write(|tx, path| {
            let sql = |e| db_err(path, e);
            let n: i64 = tx
                .query_row("SELECT COUNT(*) FROM runs WHERE id = ?1", [id.0], |r| {
                    r.get(0)
                })
                .map_err(sql)?;
            if n == 0 {
                return Err(StoreError::NoSuchRun {
                    path: path.to_path_buf(),
                    id,
                });
            }
            for m in metrics {
                tx.execute(
                    "DELETE FROM run_metrics WHERE run_id = ?1 AND name = ?2",
                    params![id.0, m.name],
                )
                .map_err(sql)?;
                tx.execute(
                    "INSERT INTO run_metrics (run_id, name, value, unit) VALUES (?1, ?2, ?3, ?4)",
                    params![id.0, m.name, real(m.value), m.unit],
                )
                .map_err(sql)?;
            }
            Ok(())
        })
    }

    /// Stores the definitions of the metrics experiment `id`'s runs record, replacing any
    /// stored before (a resumed experiment stores them again).
    pub fn set_metric_defs(&mut self, id: ExperimentId, defs: &[MetricDef]) -> Result<()> {
        self.write(|tx, path| {
            let sql = |e| db_err(path, e);
            let exists: Option<i64> = tx
                .query_row("SELECT id FROM experiments WHERE id = ?1", [id.0], |r| {
                    r.get(0)
                })
                .optional()
                .map_err(sql)?;
            if exists.is_none() {
                return Err(StoreError::NoSuchExperiment {
                    path: path.to_path_buf(),
                    id,
                });
            }
            tx.execute("DELETE FROM metric_defs WHERE experiment_id = ?1", [id.0])
                .map_err(sql)?;
            insert_metric_defs(tx, path, id, defs)?;
            Ok(())
        })
    }

    /// Marks an experiment finished (`at` becomes its end), or `running` again when it is
    /// resumed. One left `running` is one that crashed: `--resume` picks it up.
    pub fn set_experiment_status(
        &mut self,
        id: ExperimentId,
        status: ExperimentStatus,
        at: Timestamp,
    ) -> Result<()> {
        let finished = (status != ExperimentStatus::Running).then_some(at.0);
        self.write(|tx, path| {
            let n = tx
                .execute(
                    "UPDATE experiments SET status = ?2, finished_ns = ?3 WHERE id = ?1",
                    params![id.0, status.as_str(), finished],
                )
                .map_err(|e| db_err(path, e))?;
            if n == 0 {
                return Err(StoreError::NoSuchExperiment {
                    path: path.to_path_buf(),
                    id,
                });
            }
            set_owner(tx, path, id, status)
        })
    }
}

/// Records this process as the one running experiment `id` (status `running`), or clears the
/// owner when it ends: readers show a `running` experiment whose owner is gone as
/// interrupted ([`crate::query`]).
fn set_owner(
    conn: &Connection,
    path: &Path,
    id: ExperimentId,
    status: ExperimentStatus,
) -> Result<()> {
    let owner = match status {
        ExperimentStatus::Running => iolab_sys::process::ProcessIdentity::current()
            .map(|o| serde_json::to_value(o).map_err(|e| StoreError::InvalidRecord(e.to_string())))
            .transpose()?
            .map(|v| json_text("experiment owner", &v))
            .transpose()?,
        _ => None,
    };
    conn.execute(
        "UPDATE experiments SET owner_json = ?2 WHERE id = ?1",
        params![id.0, owner],
    )
    .map_err(|e| db_err(path, e))?;
    Ok(())
}

/// A random (version 4) UUID from SQLite's randomness, which is seeded by the OS.
fn new_uuid(conn: &Connection) -> rusqlite::Result<String> {
    let mut b: Vec<u8> = conn.query_row("SELECT randomblob(16)", [], |r| r.get(0))?;
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    Ok(format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    ))
}

fn validate(record: &RunRecord) -> Result<()> {
    let mut names = HashSet::new();
    for m in &record.metrics {
        if !names.insert(m.name.as_str()) {
            return Err(StoreError::InvalidRecord(format!(
                "metric {:?} appears twice in run {} of configuration {}",
                m.name, record.run.repetition, record.run.config
            )));
        }
    }
    for s in &record.series {
        if s.ops.len() != s.bytes.len() {
            return Err(StoreError::InvalidRecord(format!(
                "series {:?} has {} op counts but {} byte counts",
                s.name,
                s.ops.len(),
                s.bytes.len()
            )));
        }
    }
    Ok(())
}

/// The id of an environment, storing it if new.
pub(crate) fn environment_id(conn: &Connection, path: &Path, env: &Value) -> Result<i64> {
    let sql = |e| db_err(path, e);
    let text = json_text("environment", env)?;
    let found: Option<i64> = conn
        .prepare_cached("SELECT id FROM environments WHERE json = ?1")
        .map_err(sql)?
        .query_row([&text], |r| r.get(0))
        .optional()
        .map_err(sql)?;
    if let Some(id) = found {
        return Ok(id);
    }
    conn.prepare_cached("INSERT INTO environments (json) VALUES (?1)")
        .map_err(sql)?
        .execute([&text])
        .map_err(sql)?;
    Ok(conn.last_insert_rowid())
}

pub(crate) fn insert_experiment(
    conn: &Connection,
    path: &Path,
    uuid: &str,
    exp: &NewExperiment,
    status: ExperimentStatus,
    finished_at: Option<Timestamp>,
) -> Result<ExperimentId> {
    let host = environment_id(conn, path, &exp.host)?;
    let spec = json_text("experiment spec", &exp.spec)?;
    conn.execute(
        "INSERT INTO experiments (uuid, name, source, spec_json, seed, created_ns, finished_ns,
                                  status, iolab_version, host_env_id)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        params![
            uuid,
            exp.name,
            exp.source,
            spec,
            to_i64(exp.seed),
            exp.created_at.0,
            finished_at.map(|t| t.0),
            status.as_str(),
            exp.iolab_version,
            host
        ],
    )
    .map_err(|e| db_err(path, e))?;
    Ok(ExperimentId(conn.last_insert_rowid()))
}

pub(crate) fn insert_metric_defs(
    conn: &Connection,
    path: &Path,
    id: ExperimentId,
    defs: &[MetricDef],
) -> Result<()> {
    let mut stmt = conn
        .prepare_cached(
            "INSERT INTO metric_defs (experiment_id, ordinal, name, unit, better, title,
                                      description, headline, exact)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        )
        .map_err(|e| db_err(path, e))?;
    for (i, d) in defs.iter().enumerate() {
        stmt.execute(params![
            id.0,
            i as i64,
            d.name.as_ref(),
            d.unit.as_ref(),
            d.better.map(|b| b.as_str()),
            d.title.as_ref(),
            d.description.as_ref(),
            d.headline,
            d.exact
        ])
        .map_err(|e| db_err(path, e))?;
    }
    Ok(())
}

pub(crate) fn insert_config(
    conn: &Connection,
    path: &Path,
    config: &NewConfig,
    outcome: Option<&ConfigOutcome>,
) -> Result<ConfigId> {
    let sql = |e| db_err(path, e);
    let exists: Option<i64> = conn
        .query_row(
            "SELECT id FROM experiments WHERE id = ?1",
            [config.experiment.0],
            |r| r.get(0),
        )
        .optional()
        .map_err(sql)?;
    if exists.is_none() {
        return Err(StoreError::NoSuchExperiment {
            path: path.to_path_buf(),
            id: config.experiment,
        });
    }
    let taken: Option<i64> = conn
        .query_row(
            "SELECT id FROM configs WHERE experiment_id = ?1 AND label = ?2",
            params![config.experiment.0, config.label],
            |r| r.get(0),
        )
        .optional()
        .map_err(sql)?;
    if taken.is_some() {
        return Err(StoreError::DuplicateConfig {
            experiment: config.experiment,
            label: config.label.clone(),
        });
    }
    let factors = serde_json::to_string(&config.factors).map_err(|e| {
        StoreError::InvalidRecord(format!("factors cannot be written as JSON: {e}"))
    })?;
    conn.execute(
        "INSERT INTO configs (experiment_id, label, factors_json, converged, outcome)
         VALUES (?1, ?2, ?3, ?4, ?5)",
        params![
            config.experiment.0,
            config.label,
            factors,
            outcome.map(|o| o.converged),
            outcome.map(|o| o.note.as_str())
        ],
    )
    .map_err(sql)?;
    Ok(ConfigId(conn.last_insert_rowid()))
}

fn require_config(conn: &Connection, path: &Path, config: ConfigId) -> Result<()> {
    let exists: Option<i64> = conn
        .prepare_cached("SELECT id FROM configs WHERE id = ?1")
        .map_err(|e| db_err(path, e))?
        .query_row([config.0], |r| r.get(0))
        .optional()
        .map_err(|e| db_err(path, e))?;
    match exists {
        Some(_) => Ok(()),
        None => Err(StoreError::NoSuchConfig {
            path: path.to_path_buf(),
            id: config,
        }),
    }
}

pub(crate) fn insert_finding(
    conn: &Connection,
    path: &Path,
    config: ConfigId,
    run: Option<RunId>,
    f: &Finding,
) -> Result<()> {
    let evidence = json_text("finding evidence", &f.evidence)?;
    conn.prepare_cached(
        "INSERT INTO findings (config_id, run_id, check_id, severity, evidence_json,
                               explanation, fix)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )
    .and_then(|mut s| {
        s.execute(params![
            config.0,
            run.map(|r| r.0),
            f.check,
            f.severity.as_str(),
            evidence,
            f.explanation,
            f.fix
        ])
    })
    .map_err(|e| db_err(path, e))?;
    Ok(())
}

/// Writes a run and all its parts; the caller owns the transaction.
pub(crate) fn insert_run(conn: &Connection, path: &Path, record: &RunRecord) -> Result<RunId> {
    let sql = |e| db_err(path, e);
    let r = &record.run;
    require_config(conn, path, r.config)?;
    if r.status == RunStatus::Ok {
        let done: Option<i64> = conn
            .prepare_cached(
                "SELECT id FROM runs WHERE config_id = ?1 AND repetition = ?2 AND status = 'ok'",
            )
            .map_err(sql)?
            .query_row(params![r.config.0, r.repetition], |row| row.get(0))
            .optional()
            .map_err(sql)?;
        if done.is_some() {
            return Err(StoreError::DuplicateRun {
                config: r.config,
                repetition: r.repetition,
            });
        }
    }
    let env = environment_id(conn, path, &r.environment)?;
    conn.prepare_cached(
        "INSERT INTO runs (config_id, repetition, seed, status, error, started_ns, ended_ns,
                           elapsed_ns, env_id)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    )
    .map_err(sql)?
    .execute(params![
        r.config.0,
        r.repetition,
        to_i64(r.seed),
        r.status.as_str(),
        r.error,
        r.started_at.0,
        r.ended_at.0,
        to_i64(r.elapsed_ns),
        env
    ])
    .map_err(sql)?;
    let run = RunId(conn.last_insert_rowid());

    let mut stmt = conn
        .prepare_cached(
            "INSERT INTO run_metrics (run_id, name, value, unit) VALUES (?1, ?2, ?3, ?4)",
        )
        .map_err(sql)?;
    for m in &record.metrics {
        stmt.execute(params![run.0, m.name, real(m.value), m.unit])
            .map_err(sql)?;
    }

    let mut stmt = conn
        .prepare_cached(
            "INSERT INTO flowop_stats (run_id, ordinal, name, kind, ops, bytes, errors,
                 lat_count, lat_mean_ns, lat_stdev_ns, lat_min_ns, lat_p50_ns, lat_p90_ns,
                 lat_p99_ns, lat_p999_ns, lat_max_ns, histogram, extra_json)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16,
                     ?17, ?18)",
        )
        .map_err(sql)?;
    for (i, f) in record.flowops.iter().enumerate() {
        let l = &f.latency;
        let extra = json_text("flowop extra", &f.extra)?;
        stmt.execute(params![
            run.0,
            i as i64,
            f.name,
            f.kind,
            to_i64(f.ops),
            to_i64(f.bytes),
            to_i64(f.errors),
            to_i64(l.count),
            real(l.mean_ns),
            real(l.stdev_ns),
            to_i64(l.min_ns),
            to_i64(l.p50_ns),
            to_i64(l.p90_ns),
            to_i64(l.p99_ns),
            to_i64(l.p999_ns),
            to_i64(l.max_ns),
            codec::encode_histogram(&f.histogram),
            extra
        ])
        .map_err(sql)?;
    }

    let mut stmt = conn
        .prepare_cached(
            "INSERT INTO interval_series (run_id, ordinal, name, width_ns, ops, bytes)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )
        .map_err(sql)?;
    for (i, s) in record.series.iter().enumerate() {
        stmt.execute(params![
            run.0,
            i as i64,
            s.name,
            to_i64(s.width_ns),
            codec::encode_u64s(&s.ops),
            codec::encode_u64s(&s.bytes)
        ])
        .map_err(sql)?;
    }

    let mut metric_stmt = conn
        .prepare_cached(
            "INSERT INTO monitor_metrics (run_id, ordinal, name, unit) VALUES (?1, ?2, ?3, ?4)",
        )
        .map_err(sql)?;
    let mut sample_stmt = conn
        .prepare_cached(
            "INSERT INTO monitor_samples (metric_id, seq, t_ns, value) VALUES (?1, ?2, ?3, ?4)",
        )
        .map_err(sql)?;
    for (i, m) in record.monitor.iter().enumerate() {
        metric_stmt
            .execute(params![run.0, i as i64, m.metric, m.unit])
            .map_err(sql)?;
        let metric = conn.last_insert_rowid();
        for (seq, &(t, v)) in m.points.iter().enumerate() {
            sample_stmt
                .execute(params![metric, seq as i64, t, real(v)])
                .map_err(sql)?;
        }
    }

    for f in &record.findings {
        insert_finding(conn, path, r.config, Some(run), f)?;
    }

    let mut stmt = conn
        .prepare_cached(
            "INSERT INTO run_outputs (run_id, ordinal, name, content) VALUES (?1, ?2, ?3, ?4)",
        )
        .map_err(sql)?;
    for (i, o) in record.outputs.iter().enumerate() {
        stmt.execute(params![run.0, i as i64, o.name, o.content])
            .map_err(sql)?;
    }
    Ok(run)
}
