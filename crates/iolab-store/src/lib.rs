//! iolab's results database: one SQLite file (default `./iolab.db`) holding every
//! experiment, configuration and run, with enough context to make a report from the file
//! alone, long after the run.
//!
//! The binary fills in the plain records of [`types`] from the engine's, the monitors' and
//! the checks' results; this crate depends on none of them.
//!
//! # Why it is built this way
//!
//! - **One transaction per finished run** ([`Store::record_run`]): a run's metrics, flowop
//!   statistics, interval series, monitor samples and findings are written together, so a
//!   crash (kill -9, power cut) loses at most the run in flight and never leaves half a run
//!   (hyperfine exports after each benchmark for the same reason). Writes use
//!   `BEGIN IMMEDIATE` so two processes sharing a file queue for the lock instead of failing
//!   on a lock upgrade.
//! - **WAL** (write-ahead log): `iolab show` can read while an experiment writes, and a crash
//!   only ever discards uncommitted frames. `synchronous = FULL` makes a commit durable (one
//!   fsync per run, between runs — keep the database off the device under test).
//! - **Versioned schema**: `PRAGMA user_version` is the schema version and migrations are an
//!   append-only list ([`schema`]); a database from a newer iolab is refused with a message
//!   saying to upgrade, never half-understood. `PRAGMA application_id` marks the file as
//!   iolab's so that `--db some-other.sqlite` is refused too.
//! - **Everything stamped** (STYLE 9): an experiment stores the fully resolved spec, the seed,
//!   the iolab version and the host; a run stores its own seed and environment. Environments
//!   are JSON because what matters about a machine grows faster than a schema should; they
//!   are stored once per distinct value (`environments`), so a thousand runs on one machine
//!   cost one copy. SQLite's `json_extract` still queries them.
//! - **Stable identity across files**: ids are per file, so every experiment also has a uuid;
//!   [`Store::import`] remaps ids and uses the uuid to skip what is already there.
//! - **Exact values**: u64 counters and seeds are stored bit for bit in SQLite's signed
//!   INTEGER (values ≥ 2^63, in practice only seeds, look negative to raw SQL); times of day
//!   are integer nanoseconds since the Unix epoch (UTC); REAL NaN becomes NULL and reads
//!   back as NaN. Histograms and interval series are BLOBs of LEB128 varints: a series is one
//!   varint per interval; a histogram is `(upper_ns − previous upper_ns, count)` pairs with
//!   bounds ascending (src/codec.rs).
//!
//! # Tables (schema version 5: `src/schema/v1.sql`, then `v2.sql` … `v5.sql`)
//!
//! | table | one row per | key columns |
//! |---|---|---|
//! | `environments` | distinct environment JSON | `id`, `json` (unique) |
//! | `experiments` | experiment | `id`, `uuid`, `name`, `source`, `spec_json`, `seed`, `created_ns`, `finished_ns`, `status`, `iolab_version`, `host_env_id`, `owner_json` (the process running it, schema 4) |
//! | `configs` | point of the matrix | `id`, `experiment_id`, `label` (unique per experiment), `factors_json`, `converged`, `outcome` |
//! | `runs` | repetition attempt | `id`, `config_id`, `repetition`, `seed`, `status` (ok/failed/interrupted), `error`, `started_ns`, `ended_ns`, `elapsed_ns`, `env_id`; at most one ok run per (config, repetition) |
//! | `run_metrics` | metric of a run | (`run_id`, `name`), `value`, `unit` |
//! | `flowop_stats` | flowop of a run | (`run_id`, `ordinal`), `name`, `kind`, `ops`, `bytes`, `errors`, `lat_*` summary, `histogram` BLOB, `extra_json` |
//! | `interval_series` | series of a run | (`run_id`, `ordinal`), `name`, `width_ns`, `ops` BLOB, `bytes` BLOB |
//! | `monitor_metrics` | monitored quantity of a run | `id`, `run_id`, `ordinal`, `name`, `unit` |
//! | `monitor_samples` | sample | (`metric_id`, `seq`), `t_ns`, `value` |
//! | `findings` | check verdict | `id`, `config_id`, `run_id` (NULL: about the configuration), `check_id`, `severity`, `evidence_json`, `explanation`, `fix` |
//! | `metric_defs` (v2) | metric an experiment's runs record | (`experiment_id`, `name`), `ordinal`, `unit`, `better`, `title`, `description`, `headline`, `exact` (v3) |
//! | `run_outputs` (v5) | raw output of another tool in a run (the `exec` kind) | (`run_id`, `ordinal`), `name` (`stdout`, `stderr`, `file:NAME`, `exec.json`), `content` BLOB |
//!
//! Monitor samples are rows (a metric's series is one indexed range scan, and SQL can
//! aggregate them); histograms and interval series are BLOBs because they are only ever
//! read whole.
//!
//! # Use
//!
//! ```
//! use iolab_store::*;
//! use serde_json::json;
//!
//! let mut store = Store::open_in_memory()?;
//! let exp = store.create_experiment(&NewExperiment {
//!     name: "journal modes".into(),
//!     source: "ext4-journal.toml".into(),
//!     spec: json!({"repetitions": {"min": 3}}),
//!     seed: 42,
//!     created_at: Timestamp::now(),
//!     iolab_version: "0.1.0".into(),
//!     host: json!({"kernel": "6.1.0"}),
//! })?;
//! let mut factors = serde_json::Map::new();
//! factors.insert("data".into(), json!("journal"));
//! let config = store.add_config(&NewConfig { experiment: exp, label: "journal".into(), factors })?;
//! let mut record = RunRecord::new(NewRun {
//!     config,
//!     repetition: 0,
//!     seed: 7,
//!     status: RunStatus::Ok,
//!     error: None,
//!     started_at: Timestamp::now(),
//!     ended_at: Timestamp::now(),
//!     elapsed_ns: 1_000_000_000,
//!     environment: json!({"kernel": "6.1.0", "fs": "ext4"}),
//! });
//! record.metrics.push(Metric::new("ops_per_s", 1234.5, "op/s"));
//! store.record_run(&record)?;
//! assert_eq!(store.ok_metric_values(config, "ops_per_s")?, [1234.5]);
//! # Ok::<(), StoreError>(())
//! ```

mod bulk;
mod codec;
mod error;
mod export;
mod import;
mod query;
pub mod schema;
mod store;
pub mod transfer;
pub mod types;

pub use error::{Result, StoreError};
pub use export::{ExportConfig, ExportDocument};
pub use iolab_metrics::{Better, MetricDef};
pub use schema::SCHEMA_VERSION;
pub use store::{Store, BUSY_TIMEOUT, DEFAULT_PATH};
pub use types::*;
