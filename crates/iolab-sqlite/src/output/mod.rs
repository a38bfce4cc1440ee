//! Formats for `iolab sqlite`: human (a readable summary), JSON, and Mobibench's DB-mode
//! report.

pub mod human;
pub mod json;
pub mod mobibench;

use std::io::{self, Write};

use iolab_kind::cli::Format;
use iolab_kind::output::{Formatter, SingleReport};

use crate::SqliteResult;

/// A SQLite run as its formats see it.
pub type SqliteReport = SingleReport<SqliteResult>;

/// The stamp of `iolab sqlite --json` (docs/json.md).
pub const SCHEMA: &str = "iolab.sqlite/1";

/// `iolab sqlite`'s formats, the default first.
pub const FORMATS: &[Format] = &[
    iolab_kind::cli::HUMAN,
    iolab_kind::cli::JSON,
    Format {
        name: "mobibench",
        help: "Mobibench's result lines ([CPU], [TIME], [CON SWITCHES]; DB mode's blocks for \
               sqlite)",
    },
];

/// Writes `report` in the format named `format` (one of [`FORMATS`]).
pub fn write(format: &str, report: &SqliteReport, out: &mut dyn Write) -> io::Result<()> {
    let f: &dyn Formatter<SqliteReport> = match format {
        "json" => &json::Json,
        "mobibench" => &mobibench::Mobibench,
        _ => &human::Human,
    };
    f.write(report, out)
}

#[cfg(test)]
mod tests {

    use iolab_engine::stats::LatencyHistogram;
    use serde_json::Value;

    use super::*;
    use crate::{Calls, Journal, SqliteSpec};

    /// A WAL run (so the checkpoint line shows) of `transactions` of 1 ms each, with two
    /// fsyncs a transaction, over `elapsed_ns`.
    fn result(elapsed_ns: u64, transactions: u64) -> SqliteResult {
        let mut spec = SqliteSpec::with_defaults(std::env::temp_dir(), 1);
        spec.journal = Journal::Wal;
        let mut latency = LatencyHistogram::default();
        for _ in 0..transactions {
            latency.record(1_000_000);
        }
        SqliteResult {
            plan: spec.validate().unwrap(),
            library: crate::library().clone(),
            settings: Default::default(),
            elapsed_ns,
            transactions,
            time_limited: false,
            latency,
            checkpoint_ns: 0,
            usage: Default::default(),
            calls: Calls {
                fsync: 2 * transactions,
                ..Default::default()
            },
            setup_ns: 0,
            interval_ns: 1_000_000_000,
            intervals: Vec::new(),
            threads: Vec::new(),
            files: Vec::new(),
        }
    }

    /// The report of `result` with the metrics its run stores.
    fn report(result: SqliteResult) -> SqliteReport {
        let mut record = iolab_kind::record::testing::record();
        crate::kind::add_record(&mut record, &result);
        iolab_kind::output::testing::report(result, record.metrics)
    }

    fn text(format: &str, report: &SqliteReport) -> String {
        iolab_kind::output::testing::written(|out| write(format, report, out))
    }

    #[test]
    fn a_run_over_no_time_prints_what_the_database_holds() {
        let r = report(result(0, 0));
        // Nothing was measured: the database holds NaN, not 0.
        assert!(r.metric("ops_per_s").is_nan());
        let human = text("human", &r);
        assert!(
            human.contains("  throughput  – transactions/s\n"),
            "{human}"
        );
        assert!(
            human.contains("  latency     mean –  p50 –  p90 –  p99 –  p99.9 –  max –\n"),
            "{human}"
        );
        assert!(
            human.contains("  cpu         usr –  sys – of one core"),
            "{human}"
        );
        let json: Value = serde_json::from_str(&text("json", &r)).unwrap();
        assert_eq!(json["result"]["transactions_per_s"], Value::Null, "{json}");
        let mobibench = text("mobibench", &r);
        assert!(
            mobibench.contains("[TIME] :       0 sec 000000us. \tnan Transactions/sec\n"),
            "{mobibench}"
        );
    }

    #[test]
    fn the_printed_figures_are_the_stored_ones() {
        // 10 transactions in 2 s.
        let r = report(result(2_000_000_000, 10));
        assert_eq!(r.metric("ops_per_s"), 5.0);
        assert_eq!(r.metric("fsyncs_per_tx"), 2.0);
        let human = text("human", &r);
        assert!(
            human.contains("  elapsed     2.000 s, 10 transactions"),
            "{human}"
        );
        assert!(
            human.contains("  throughput  5.0 transactions/s\n"),
            "{human}"
        );
        assert!(
            human.contains("  latency     mean 1.00 ms  p50 1.00 ms"),
            "{human}"
        );
        assert!(human.contains("  checkpoint  0 ns"), "{human}");
        assert!(
            human.contains("per transaction: 2.00 fsync (0.00 of the directory)"),
            "{human}"
        );
        assert!(
            human.contains("  cpu         usr 0.0%  sys 0.0% of one core"),
            "{human}"
        );
        let json: Value = serde_json::from_str(&text("json", &r)).unwrap();
        assert_eq!(json["schema"], SCHEMA);
        assert_eq!(json["result"]["transactions_per_s"], 5.0);
        assert_eq!(json["result"]["syscalls_per_transaction"]["fsync"], 2.0);
        let mobibench = text("mobibench", &r);
        assert!(
            mobibench.contains("[TIME] :       2 sec 000000us. \t5.00 Transactions/sec\n"),
            "{mobibench}"
        );
    }
}
