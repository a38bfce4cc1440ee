//! Schema versions and migrations.
//!
//! The schema version is SQLite's `PRAGMA user_version` (a field of the file header: no table
//! to create before knowing which tables exist). `MIGRATIONS[i]` takes a database from version
//! `i` to `i + 1`; version 0 is an empty file. Adding version N+1 is one line: append
//! `include_str!("schema/vN+1.sql")`. Each step runs in its own immediate transaction together
//! with the version bump, so a crash or an error leaves the database at the previous version,
//! and two processes opening a fresh file at once do not both run a step.

use std::path::Path;

use rusqlite::{Connection, ErrorCode, TransactionBehavior};

use crate::error::{Result, StoreError};

/// Ordered migration steps; never edit a released one.
pub(crate) const MIGRATIONS: &[&str] = &[
    include_str!("schema/v1.sql"),
    include_str!("schema/v2.sql"),
    include_str!("schema/v3.sql"),
    include_str!("schema/v4.sql"),
    include_str!("schema/v5.sql"),
];

/// The schema version this build writes.
pub const SCHEMA_VERSION: u32 = MIGRATIONS.len() as u32;

/// `PRAGMA application_id` of an iolab database ("iolb"), set by the first migration.
pub(crate) const APPLICATION_ID: i64 = 0x696f_6c62;

pub(crate) fn user_version(conn: &Connection) -> rusqlite::Result<u32> {
    let v: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
    Ok(u32::try_from(v).unwrap_or(u32::MAX))
}

pub(crate) fn application_id(conn: &Connection) -> rusqlite::Result<i64> {
    conn.pragma_query_value(None, "application_id", |r| r.get(0))
}

/// Refuses files that are not iolab's and databases newer than `known`. Returns the version.
pub(crate) fn check(conn: &Connection, path: &Path, known: u32) -> Result<u32> {
    let sql = |e| crate::store::db_err(path, e);
    // One read transaction: another process creating the schema right now must not be seen
    // half-way (version 0 read before its commit, its tables after: "not iolab's").
    let snapshot = conn.unchecked_transaction().map_err(sql)?;
    let version = user_version(&snapshot).map_err(sql)?;
    let app = application_id(&snapshot).map_err(sql)?;
    let foreign = if version == 0 {
        // A fresh file has no tables; anything else with version 0 belongs to someone else.
        let tables: i64 = snapshot
            .query_row("SELECT count(*) FROM sqlite_schema", [], |r| r.get(0))
            .map_err(sql)?;
        app != APPLICATION_ID && (app != 0 || tables > 0)
    } else {
        app != APPLICATION_ID
    };
    snapshot.commit().map_err(sql)?;
    if foreign {
        return Err(StoreError::NotIolab {
            path: path.to_path_buf(),
            application_id: app,
        });
    }
    if version > known {
        return Err(StoreError::TooNew {
            path: path.to_path_buf(),
            found: version,
            known,
        });
    }
    Ok(version)
}

/// Brings the database up to `steps.len()`. Returns the version it found.
pub(crate) fn migrate(conn: &mut Connection, path: &Path, steps: &[&str]) -> Result<u32> {
    let known = steps.len() as u32;
    let found = check(conn, path, known)?;
    for (i, sql) in steps.iter().enumerate().skip(found as usize) {
        let to = i as u32 + 1;
        let fail = |source: rusqlite::Error| match source.sqlite_error_code() {
            // The disk failing under a step is not a fault of the step.
            Some(ErrorCode::SystemIoFailure | ErrorCode::DiskFull) => {
                crate::store::db_err(path, source)
            }
            _ => StoreError::Migration {
                path: path.to_path_buf(),
                to,
                source,
            },
        };
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| crate::store::db_err(path, e))?;
        // Another process may have run this step while we waited for the lock.
        if user_version(&tx).map_err(fail)? >= to {
            continue;
        }
        tx.execute_batch(sql).map_err(fail)?;
        tx.pragma_update(None, "user_version", i64::from(to))
            .map_err(fail)?;
        tx.commit().map_err(fail)?;
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FROZEN_V1: &str = include_str!("../tests/data/schema_v1.sql");
    const FROZEN_V2: &str = include_str!("../tests/data/schema_v2.sql");
    const FROZEN_V3: &str = include_str!("../tests/data/schema_v3.sql");
    const FROZEN_V4: &str = include_str!("../tests/data/schema_v4.sql");
    const FROZEN_V5: &str = include_str!("../tests/data/schema_v5.sql");

    #[test]
    fn released_migrations_are_frozen() {
        // Migrations are append-only: a released step must never change, or databases made
        // by earlier builds would differ from new ones at the same version.
        assert_eq!(MIGRATIONS[0], FROZEN_V1);
        assert_eq!(MIGRATIONS[1], FROZEN_V2);
        assert_eq!(MIGRATIONS[2], FROZEN_V3);
        assert_eq!(MIGRATIONS[3], FROZEN_V4);
        assert_eq!(MIGRATIONS[4], FROZEN_V5);
    }

    #[test]
    fn fresh_database_reaches_the_current_version() {
        let mut conn = Connection::open_in_memory().unwrap();
        let found = migrate(&mut conn, Path::new(":memory:"), MIGRATIONS).unwrap();
        assert_eq!(found, 0);
        assert_eq!(user_version(&conn).unwrap(), SCHEMA_VERSION);
        assert_eq!(application_id(&conn).unwrap(), APPLICATION_ID);
        // Idempotent.
        assert_eq!(
            migrate(&mut conn, Path::new(":memory:"), MIGRATIONS).unwrap(),
            SCHEMA_VERSION
        );
    }

    #[test]
    fn a_later_step_runs_once_on_top_of_the_earlier_ones() {
        // The shape of the next real migration: v1 plus one more step.
        let v2 = "ALTER TABLE runs ADD COLUMN note TEXT NOT NULL DEFAULT '';";
        let steps = [MIGRATIONS[0], v2];
        // (A made-up second step, not the released v2.)
        let mut conn = Connection::open_in_memory().unwrap();
        migrate(&mut conn, Path::new(":memory:"), &steps[..1]).unwrap();
        assert_eq!(user_version(&conn).unwrap(), 1);
        assert_eq!(
            migrate(&mut conn, Path::new(":memory:"), &steps).unwrap(),
            1
        );
        assert_eq!(user_version(&conn).unwrap(), 2);
        conn.execute_batch("SELECT note FROM runs").unwrap();
        // And a build that only knows v1 now refuses the file.
        let err = migrate(&mut conn, Path::new("x.db"), &steps[..1]).unwrap_err();
        assert!(matches!(
            err,
            StoreError::TooNew {
                found: 2,
                known: 1,
                ..
            }
        ));
    }

    /// Found by failing iolab's system calls one at a time (crates/iolab/tests/syscall_faults.rs):
    /// a write error while a new database got its schema was reported as "report this as a
    /// bug". A full disk (here SQLite's page limit, which fails the same way) is the disk's
    /// fault: the error says so and what to do, and the database stays at its version.
    #[test]
    fn a_full_disk_under_a_step_is_a_disk_error_not_a_bug() {
        let mut conn = Connection::open_in_memory().unwrap();
        migrate(&mut conn, Path::new("x.db"), &MIGRATIONS[..1]).unwrap();
        let pages: i64 = conn
            .query_row("PRAGMA page_count", [], |r| r.get(0))
            .unwrap();
        conn.pragma_update(None, "max_page_count", pages).unwrap();
        let err = migrate(&mut conn, Path::new("x.db"), &MIGRATIONS[..2]).unwrap_err();
        assert!(matches!(err, StoreError::Disk { .. }), "{err:?}");
        let text = err.to_string();
        assert!(!text.contains("bug"), "{text}");
        assert!(
            text.contains("x.db") && text.contains("free space"),
            "{text}"
        );
        assert_eq!(user_version(&conn).unwrap(), 1);
    }

    #[test]
    fn a_failing_step_leaves_the_previous_version() {
        let steps = [
            MIGRATIONS[0],
            "CREATE TABLE t (x); SELECT * FROM no_such_table;",
        ];
        let mut conn = Connection::open_in_memory().unwrap();
        let err = migrate(&mut conn, Path::new("x.db"), &steps).unwrap_err();
        assert!(matches!(err, StoreError::Migration { to: 2, .. }), "{err}");
        assert!(err.to_string().contains("left at schema 1"), "{err}");
        assert_eq!(user_version(&conn).unwrap(), 1);
        let t: i64 = conn
            .query_row(
                "SELECT count(*) FROM sqlite_schema WHERE name = 't'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(t, 0, "the failed step's table was rolled back");
    }

    #[test]
    fn foreign_databases_are_refused() {
        let mut conn = Connection::open_in_memory().unwrap();
        conn.execute_batch("CREATE TABLE notes (x)").unwrap();
        let err = migrate(&mut conn, Path::new("other.db"), MIGRATIONS).unwrap_err();
        assert!(matches!(err, StoreError::NotIolab { .. }), "{err}");

        let mut conn = Connection::open_in_memory().unwrap();
        conn.pragma_update(None, "application_id", 42).unwrap();
        let err = migrate(&mut conn, Path::new("other.db"), MIGRATIONS).unwrap_err();
        assert!(err.to_string().contains("not iolab's"), "{err}");
    }
}
