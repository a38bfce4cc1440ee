//! SQLite transactions: Mobibench's DB mode with real SQLite (docs/sqlite.md). `[workload]
//! sqlite = { … }` in an experiment, `iolab sqlite` on the command line; both read the one
//! option table, [`crate::OPTIONS`].

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::{
    run_sqlite, SqliteError, SqliteOption, SqlitePlan, SqliteResult, SqliteSpec, SqliteSpecError,
    Synchronous, OPTIONS,
};
use iolab_check::{Access as CheckAccess, SyncScope};
use iolab_metrics::{Better, MetricDef};
use iolab_store::{FlowopStats, RunRecord};
use iolab_util::option::OptionValue;
use serde_json::{json, Map, Value};

use iolab_kind::record::{headline, metric, series, Totals};
use iolab_kind::table::{self, OptionTable, TableKind, TableRun, TableWorkload};
use iolab_kind::Intent;
use iolab_kind::Runs;
use iolab_kind::{Origin, UsageError};
use iolab_kind::{RunCtx, RunFailure};
use iolab_util::setting::{Phrase, Worded};

/// The `[workload]` key.
pub const KEY: &str = "sqlite";

/// The SQLite kind.
pub static SQLITE: TableKind = TableKind {
    key: KEY,
    noun: "SQLite runs",
    example: "sqlite = { … }",
    metrics: || METRICS,
    misplaced: |key| match key {
        "time" => "give a SQLite run's time limit inside it: sqlite = { …, time = \"10s\" }",
        _ => {
            "remove it: a SQLite run is given by its own keys, e.g. sqlite = { journal = \
             \"wal\", transactions = 1000 }"
        }
    },
    needs_target: true,
    resolve: |cx, entry, at| {
        let r = table::read::<SqliteTable>(cx, entry, at)?;
        Some(iolab_kind::erase(TableWorkload::<SqliteTable>::new(
            r.spec,
            Origin::File,
        )))
    },
};

/// sqlite's one option table.
pub struct SqliteTable;

impl OptionTable for SqliteTable {
    type Spec = SqliteSpec;
    type Plan = crate::SqlitePlan;
    type Error = SqliteSpecError;
    const KIND: &'static str = KEY;
    const TOOL: &'static str = "mobibench";

    fn options() -> &'static [SqliteOption] {
        OPTIONS
    }

    fn defaults(dir: PathBuf, seed: u64) -> SqliteSpec {
        SqliteSpec::with_defaults(dir, seed)
    }

    fn validate(spec: &SqliteSpec) -> Result<Self::Plan, SqliteSpecError> {
        spec.validate()
    }

    fn fault(e: &SqliteSpecError, _given: &dyn Fn(&str) -> bool) -> &'static str {
        e.option()
    }
}

/// What SQLite runs record besides the common metrics (whose `ops` are transactions and
/// `bytes` the bytes SQLite wrote). The system calls are SQLite's own in the timed region,
/// counted by iolab's hooks into its unix VFS, per transaction. The four that tell the
/// journal modes apart (fsyncs, directory fsyncs, unlinks, ftruncates) are headline metrics:
/// `iolab show` and the report's summary show them next to the transactions per second.
pub const METRICS: &[MetricDef] = &[
    MetricDef::new(
        "fsyncs_per_tx",
        "",
        None,
        "fsyncs/txn",
        "fsync and fdatasync calls per transaction, of files and of the directory",
    )
    .headline(),
    MetricDef::new(
        "dir_fsyncs_per_tx",
        "",
        None,
        "dir fsyncs/txn",
        "of those, the syncs of the database's directory (after a journal or WAL was created)",
    )
    .headline(),
    MetricDef::new(
        "unlinks_per_tx",
        "",
        None,
        "unlinks/txn",
        "unlink calls per transaction (a DELETE-mode journal is removed at every commit)",
    )
    .headline(),
    MetricDef::new(
        "ftruncates_per_tx",
        "",
        None,
        "ftruncates/txn",
        "ftruncate calls per transaction (a TRUNCATE-mode journal is emptied at every commit)",
    )
    .headline(),
    MetricDef::new(
        "writes_per_tx",
        "",
        None,
        "writes/txn",
        "write, pwrite and pwrite64 calls per transaction",
    ),
    MetricDef::new(
        "checkpoint_ns",
        "ns",
        Some(Better::Lower),
        "Final checkpoint",
        "the longest final WAL checkpoint of a thread (inside the timed region; 0 in other \
         journal modes)",
    ),
];

/// The common metrics in SQLite's words: an operation is a transaction (`txn/s`), and the
/// bytes are what SQLite wrote — journal, WAL and database pages, not the rows' payload — so
/// their rate is no headline figure (the report shows them per transaction instead).
pub const COMMON_AS: &[MetricDef] = &[
    MetricDef::new(
        "ops_per_s",
        "txn/s",
        Some(Better::Higher),
        "Throughput",
        "transactions per second over the timed region (Mobibench's Transactions/sec)",
    )
    .headline(),
    MetricDef::new(
        "mib_per_s",
        "MiB/s",
        Some(Better::Higher),
        "Written",
        "bytes SQLite wrote (write and pwrite calls: journal, WAL and database pages) per \
         second, in MiB",
    ),
    MetricDef::new(
        "ops",
        "txn",
        Some(Better::Higher),
        "Transactions",
        "transactions over the timed region",
    ),
    MetricDef::new(
        "bytes",
        "B",
        Some(Better::Higher),
        "Bytes written",
        "bytes SQLite wrote over the timed region (journal, WAL and database pages)",
    ),
];

impl TableRun for SqliteTable {
    type Output = SqliteResult;
    type RunError = SqliteError;

    fn metrics() -> &'static [MetricDef] {
        METRICS
    }

    fn common_as() -> &'static [MetricDef] {
        COMMON_AS
    }

    fn place(spec: &mut SqliteSpec, dir: &Path, seed: u64) {
        spec.dir = dir.to_path_buf();
        spec.seed = seed;
    }

    fn intent(plan: &SqlitePlan, base: Intent) -> Intent {
        let synced = plan.synchronous != Synchronous::Off;
        Intent {
            access: Some(CheckAccess::Write),
            sync_requested: synced,
            // Commits sync the journal, the WAL or the database, not each write.
            sync_scope: Some(if synced {
                SyncScope::SomeWrites
            } else {
                SyncScope::Never
            }),
            writes_in_flight_per_file: Some(1),
            threads: Some(plan.threads),
            ..base
        }
    }

    fn planned_duration(spec: &SqliteSpec) -> Option<Duration> {
        spec.time_limit
    }

    /// The SQLite library the runs use: its version and compile-time options change the
    /// I/O of a transaction.
    fn describe(_spec: &SqliteSpec) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("sqlite_library".into(), library_json());
        m
    }

    fn run_files(plan: &SqlitePlan) -> Vec<PathBuf> {
        plan.db_files()
    }

    fn run(plan: &SqlitePlan, run: &mut RunCtx<'_>) -> Result<SqliteResult, SqliteError> {
        run_sqlite(plan, run.hooks, run.cancel)
    }

    /// An error in the user's words.
    fn failure(e: &SqliteError, _spec: &SqliteSpec, origin: Origin) -> RunFailure {
        let word = |p: &Phrase| table::word::<SqliteTable>(origin, p);
        RunFailure {
            message: word(&e.phrase()),
            hint: e.advice().as_ref().map(word),
            bad_input: e.is_bad_input(),
            interrupted: e.is_interrupted(),
            located: false,
        }
    }

    fn record(record: &mut RunRecord, r: &SqliteResult) {
        add_record(record, r);
    }
}

fn library_json() -> Value {
    let l = crate::library();
    json!({
        "version": l.version,
        "source_id": l.source_id,
        "compile_options": l.compile_options,
    })
}

/// `iolab sqlite`: the given option values over the table's defaults, validated (the
/// messages name the flags), as the one-run plan for `dir` with `seed`.
pub fn from_command_line(
    values: &[(&'static SqliteOption, OptionValue)],
    dir: &Path,
    seed: u64,
) -> Result<Runs<SqliteResult>, UsageError> {
    let (spec, _) = table::from_values::<SqliteTable>(values, dir.to_path_buf(), seed)?;
    let mut name = format!(
        "sqlite {} journal={} synchronous={} transactions={} threads={}",
        spec.mode, spec.journal, spec.synchronous, spec.transactions, spec.threads
    );
    if let Some(t) = spec.time_limit {
        name.push_str(&format!(" time={}", iolab_util::units::duration_text(t)));
    }
    Ok(table::command_run::<SqliteTable>(
        spec,
        name,
        "iolab sqlite",
        dir.to_path_buf(),
        seed,
    ))
}

/// Adds a SQLite run's measurements to `record`: the common metrics (ops = transactions,
/// bytes = what SQLite wrote), the system calls per transaction, the checkpoint, one flowop
/// row for the transactions (with the library and the settings SQLite reported), the `io`
/// series.
pub(crate) fn add_record(record: &mut RunRecord, r: &SqliteResult) {
    record.run.elapsed_ns = r.elapsed_ns;
    let lat = r.latency.summary();
    let c = &r.calls;
    headline(
        record,
        Totals {
            ops: r.transactions,
            bytes: c.write_bytes,
            elapsed_ns: r.elapsed_ns,
            latency: &lat,
            cpu: r.usage.cpu(),
        },
    );
    // The values carry the units of their definitions in SQLite's words.
    for m in record.metrics.iter_mut() {
        if let Some(d) = iolab_metrics::find(COMMON_AS, &m.name) {
            m.unit = d.unit.to_string();
        }
    }
    for (name, count) in [
        ("fsyncs_per_tx", c.fsync),
        ("dir_fsyncs_per_tx", c.dir_fsync),
        ("unlinks_per_tx", c.unlink),
        ("ftruncates_per_tx", c.ftruncate),
        ("writes_per_tx", c.write),
    ] {
        record
            .metrics
            .push(metric(METRICS, name, r.per_transaction(count)));
    }
    record
        .metrics
        .push(metric(METRICS, "checkpoint_ns", r.checkpoint_ns as f64));
    let p = &r.plan;
    record.flowops.push(FlowopStats {
        name: format!("{} transaction", p.mode),
        kind: "transaction".into(),
        ops: r.transactions,
        bytes: c.write_bytes,
        errors: 0,
        latency: lat,
        histogram: r.latency.buckets(),
        extra: json!({
            "mode": p.mode.name(),
            "journal": p.journal.name(),
            "synchronous": p.synchronous.name(),
            "tables": p.tables,
            "databases": p.databases,
            "threads": p.threads,
            "time_limited": r.time_limited,
            "calls": c,
            "settings": r.settings,
            "sqlite_library": library_json(),
        }),
    });
    record.series.push(series(
        "io",
        r.interval_ns,
        r.intervals.iter().map(|b| (b.ops, b.bytes)),
    ));
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_kind::table::testing;

    #[test]
    fn the_docs_list_the_sqlite_options_of_the_one_table() {
        for (file, start) in [
            ("experiments.md", "`sqlite` (see"),
            ("sqlite.md", "## Options"),
        ] {
            let all = testing::doc(file);
            let text = &all[all
                .find(start)
                .unwrap_or_else(|| panic!("docs/{file} has no `{start}`"))..];
            for o in crate::OPTIONS {
                let r = testing::row(text, o.name)
                    .unwrap_or_else(|| panic!("docs/{file} has no row for `{}`", o.name));
                if let Some(d) = o.default {
                    let last = r.trim_end_matches('|').rsplit('|').next().unwrap().trim();
                    assert_eq!(
                        last,
                        format!("`{d}`"),
                        "docs/{file}: default of `{}`",
                        o.name
                    );
                }
            }
        }
    }

    #[test]
    fn the_tables_getters_undo_its_appliers() {
        testing::get_undoes_apply::<SqliteTable>();
    }

    #[test]
    fn the_command_line_plan_is_one_run_on_the_directory() {
        let dir = std::env::temp_dir();
        let j = crate::option("journal").unwrap();
        let p = iolab_experiment::plan::single::single(
            from_command_line(&[(j, OptionValue::Name("wal"))], &dir, 9)
                .unwrap()
                .plan,
        )
        .unwrap();
        assert_eq!(p.configs.len(), 1);
        assert!(p.repetitions.is_single());
        assert_eq!(
            p.name,
            "sqlite insert journal=wal synchronous=full transactions=1000 threads=1"
        );
        assert_eq!(p.resolved["workload"]["sqlite"]["journal"], json!("wal"));
        assert!(p.resolved["workload"]["sqlite_library"]["version"].is_string());
        let t = crate::option("threads").unwrap();
        let n = crate::option("transactions").unwrap();
        let e = from_command_line(
            &[(t, OptionValue::Count(8)), (n, OptionValue::Count(4))],
            &dir,
            1,
        )
        .unwrap_err();
        assert!(
            e.message
                .contains("--transactions 4 split over --threads 8"),
            "{e}"
        );
    }

    #[test]
    fn a_real_run_records_every_declared_metric() {
        let _hang = iolab_testkit::timeout(300);
        let dir = tempfile::tempdir().unwrap();
        let mut spec = SqliteSpec::with_defaults(dir.path().to_path_buf(), 1);
        spec.transactions = 20;
        spec.journal = crate::Journal::Wal;
        spec.synchronous = Synchronous::Off;
        let plan = spec.validate().unwrap();
        let r = run_sqlite(&plan, &mut (), &std::sync::atomic::AtomicBool::new(false)).unwrap();
        let mut rec = iolab_kind::record::testing::record();
        add_record(&mut rec, &r);
        let get = |n: &str| rec.metrics.iter().find(|m| m.name == n).unwrap().value;
        assert_eq!(get("ops"), 20.0);
        // synchronous=off: SQLite syncs nothing at all.
        assert_eq!(get("fsyncs_per_tx"), 0.0);
        assert!(get("writes_per_tx") >= 3.0, "{}", get("writes_per_tx"));
        iolab_kind::record::testing::assert_declared_as(&rec, METRICS, COMMON_AS);
        assert_eq!(rec.metrics[0].unit, "txn/s");
        assert_eq!(rec.flowops[0].extra["settings"]["journal_mode"], "wal");
        assert_eq!(rec.flowops[0].extra["settings"]["page_size"], 4096);
        assert_eq!(rec.flowops[0].extra["settings"]["auto_vacuum"], 1);
        // The files are gone after the run.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
