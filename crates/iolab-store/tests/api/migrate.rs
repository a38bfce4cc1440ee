//! Opening files: schema versions, upgrades, refusals.

use iolab_store::*;
use rusqlite::Connection;
use serde_json::json;

/// The version 1 DDL as released. Never edit it: it is what old databases contain.
const V1: &str = include_str!("../data/schema_v1.sql");

/// A database as iolab with schema version 1 wrote it, filled with raw SQL.
pub(crate) fn v1_database(path: &std::path::Path) {
    let conn = Connection::open(path).unwrap();
    conn.execute_batch(V1).unwrap();
    conn.pragma_update(None, "user_version", 1).unwrap();
    conn.execute_batch(
        r#"
        INSERT INTO environments (id, json) VALUES (1, '{"kernel":"6.1"}'), (2, '{"fs":"xfs"}');
        INSERT INTO experiments (id, uuid, name, source, spec_json, seed, created_ns, finished_ns,
                                 status, iolab_version, host_env_id)
            VALUES (7, '0b7a9c1e-0000-4000-8000-000000000001', 'old', 'old.toml', '{"n":3}',
                    -1, 1700000000000000000, 1700000001000000000, 'done', '0.0.9', 1);
        INSERT INTO configs (id, experiment_id, label, factors_json, converged, outcome)
            VALUES (3, 7, 'xfs', '{"fs":"xfs"}', 1, 'CI ±2% after 3 runs');
        INSERT INTO runs (id, config_id, repetition, seed, status, error, started_ns, ended_ns,
                          elapsed_ns, env_id)
            VALUES (11, 3, 0, 42, 'ok', NULL, 1700000000100000000, 1700000000600000000,
                    500000000, 2);
        INSERT INTO run_metrics (run_id, name, value, unit)
            VALUES (11, 'ops_per_s', 1234.5, 'op/s'), (11, 'cv', NULL, '');
        INSERT INTO flowop_stats VALUES (11, 0, 'rd', 'read', 10, 40960, 0, 10, 1500.5, 10.25,
                                         900, 1000, 1010, 1010, 1010, 1010,
                                         X'E807010A02', '{"is_io":true}');
        INSERT INTO interval_series VALUES (11, 0, 'io', 1000000000, X'008001', X'7F');
        INSERT INTO monitor_metrics (id, run_id, ordinal, name, unit)
            VALUES (5, 11, 0, 'cpu.iowait_pct', '%');
        INSERT INTO monitor_samples VALUES (5, 0, -5, 1.5), (5, 1, 999999995, 2.5);
        INSERT INTO findings (config_id, run_id, check_id, severity, evidence_json, explanation, fix)
            VALUES (3, 11, 'device-idle', 'info', '{"util":3}', 'idle', 'more threads');
        "#,
    )
    .unwrap();
}

#[test]
fn a_v1_database_upgrades_with_its_data_intact() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.db");
    v1_database(&path);
    let store = Store::open(&path).unwrap();
    assert_eq!(store.found_schema_version(), 1);
    store.check_integrity().unwrap();
    let conn = Connection::open(&path).unwrap();
    let version: u32 = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(version, SCHEMA_VERSION);

    let e = store.experiment(ExperimentId(7)).unwrap();
    assert_eq!(e.uuid, "0b7a9c1e-0000-4000-8000-000000000001");
    assert_eq!(e.seed, u64::MAX);
    assert_eq!(e.status, ExperimentStatus::Done);
    assert_eq!(e.spec, json!({"n": 3}));
    assert_eq!(e.host, json!({"kernel": "6.1"}));
    assert_eq!(e.finished_at, Some(Timestamp(1_700_000_001_000_000_000)));
    let configs = store.configs(e.id).unwrap();
    assert_eq!(
        configs[0].outcome,
        Some(ConfigOutcome {
            converged: true,
            note: "CI ±2% after 3 runs".into()
        })
    );
    let run = store.run(RunId(11)).unwrap();
    assert_eq!(run.run.environment, json!({"fs": "xfs"}));
    assert_eq!(run.metrics[0].name, "cv");
    assert!(run.metrics[0].value.is_nan());
    assert_eq!(run.metrics[1], Metric::new("ops_per_s", 1234.5, "op/s"));
    assert_eq!(run.flowops[0].histogram, [(1000, 1), (1010, 2)]);
    assert_eq!(run.flowops[0].latency.mean_ns, 1500.5);
    assert_eq!(run.series[0].ops, [0, 128]);
    assert_eq!(run.series[0].bytes, [127]);
    assert_eq!(run.monitor[0].points, [(-5, 1.5), (999_999_995, 2.5)]);
    assert_eq!(run.findings[0].check, "device-idle");
    assert_eq!(
        store.resume_state(e.id).unwrap()[0].ok,
        [0],
        "an old database resumes too"
    );
}

#[test]
fn a_newer_database_is_refused_with_a_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("iolab.db");
    drop(Store::open(&path).unwrap());
    let conn = Connection::open(&path).unwrap();
    conn.pragma_update(None, "user_version", SCHEMA_VERSION + 1)
        .unwrap();
    drop(conn);
    let err = Store::open(&path).unwrap_err();
    assert!(
        matches!(err, StoreError::TooNew { found, known, .. }
            if found == SCHEMA_VERSION + 1 && known == SCHEMA_VERSION),
        "{err}"
    );
    assert_eq!(
        err.to_string(),
        format!(
            "{} was written by a newer iolab (schema {}, this one knows {}): upgrade iolab",
            path.display(),
            SCHEMA_VERSION + 1,
            SCHEMA_VERSION
        )
    );
    // Nothing was changed.
    let conn = Connection::open(&path).unwrap();
    let version: u32 = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(version, SCHEMA_VERSION + 1);
}

#[test]
fn files_that_are_not_iolab_databases_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("notes.txt");
    std::fs::write(
        &text,
        "this is not a database, just some text that is long enough\n".repeat(20),
    )
    .unwrap();
    let err = Store::open(&text).unwrap_err();
    assert!(matches!(err, StoreError::NotADatabase { .. }), "{err}");
    assert!(
        err.to_string().contains("is not an SQLite database"),
        "{err}"
    );

    let other = dir.path().join("other.sqlite");
    Connection::open(&other)
        .unwrap()
        .execute_batch("CREATE TABLE t (x)")
        .unwrap();
    let err = Store::open(&other).unwrap_err();
    assert!(matches!(err, StoreError::NotIolab { .. }), "{err}");

    let missing = dir.path().join("missing.db");
    let err = Store::open_existing(&missing).unwrap_err();
    assert!(matches!(err, StoreError::Missing { .. }), "{err}");
    assert!(!missing.exists(), "open_existing must not create the file");
}

#[test]
fn a_new_file_is_created_in_wal_mode() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("iolab.db");
    let store = Store::open(&path).unwrap();
    assert_eq!(store.journal_mode(), "wal");
    assert_eq!(store.found_schema_version(), 0);
    assert_eq!(store.path(), path);
    drop(store);
    let store = Store::open_existing(&path).unwrap();
    assert_eq!(store.found_schema_version(), SCHEMA_VERSION);
    store.check_integrity().unwrap();
}
