//! Formats for `iolab run FILE.f`, and the list of built-in workloads.

mod filebench;
mod human;
mod json;
pub mod workloads;

use std::io::{self, Write};

use iolab_engine::workload::WorkloadResult;
use iolab_kind::cli::Format;
use iolab_kind::output::{Formatter, SingleReport};

/// The stamp of `iolab run FILE.f --json` (docs/json.md).
pub const SCHEMA: &str = "iolab.run/1";

/// A workload run plus what was observed around it.
pub struct RunReport {
    pub source: String,
    pub seed: u64,
    pub warnings: Vec<String>,
    /// The workload said `enable lathist` (filebench's format then adds histograms).
    pub lathist: bool,
    /// The run: the engine's result, what was observed around it and the stored metrics
    /// (the figures printed where a format shows the same quantity).
    pub run: SingleReport<WorkloadResult>,
}

/// The formats of `iolab run FILE.f`, the default first.
pub const FORMATS: &[Format] = &[
    Format {
        name: "human",
        help: "A per-flowop table with percentiles, and the summary",
    },
    iolab_kind::cli::JSON,
    Format {
        name: "filebench",
        help: "filebench's Per-Operation Breakdown and IO Summary lines, byte for byte",
    },
];

/// Writes `report` in the format named `format` (one of [`FORMATS`]).
pub fn write_run(format: &str, report: &RunReport, out: &mut dyn Write) -> io::Result<()> {
    let f: &dyn Formatter<RunReport> = match format {
        "json" => &json::Json,
        "filebench" => &filebench::Filebench,
        _ => &human::Human,
    };
    f.write(report, out)
}

#[cfg(test)]
mod tests {

    use iolab_engine::stats::LatencyHistogram;
    use iolab_engine::workload::FlowopResult;
    use serde_json::Value;

    use super::*;

    /// A run of one read flowop: `ops` reads of 4 KiB at 1 µs each, over `elapsed_ns`.
    fn result(elapsed_ns: u64, ops: u64) -> WorkloadResult {
        let mut latency = LatencyHistogram::default();
        for _ in 0..ops {
            latency.record(1_000);
        }
        WorkloadResult {
            elapsed_ns,
            threads: 1,
            flowops: vec![FlowopResult {
                name: "read1".into(),
                kind: "read",
                ops,
                bytes: 4096 * ops,
                latency,
                ran_dry: 0,
                is_io: true,
                is_composite: false,
                is_read: true,
                is_write: false,
                samples: None,
            }],
            interval_ns: 1_000_000_000,
            intervals: Vec::new(),
            usage: Default::default(),
            populate: Vec::new(),
            finished_threads: 0,
            engine: Default::default(),
            iodepth: None,
        }
    }

    /// The report of `result` with the metrics its run stores.
    fn report(result: WorkloadResult) -> RunReport {
        let mut record = iolab_kind::record::testing::record();
        crate::kind::add_record(&mut record, &result);
        RunReport {
            source: "one.f".into(),
            seed: 1,
            warnings: Vec::new(),
            lathist: false,
            run: iolab_kind::output::testing::report(result, record.metrics),
        }
    }

    fn text(format: &str, report: &RunReport) -> String {
        iolab_kind::output::testing::written(|out| write_run(format, report, out))
    }

    #[test]
    fn a_run_over_no_time_prints_what_the_database_holds() {
        let r = report(result(0, 0));
        assert!(r.run.metric("ops_per_s").is_nan());
        let human = text("human", &r);
        assert!(
            human.contains("  IO summary: 0 ops, – ops/s, –/– rd/wr ops/s, – MiB/s, – mean\n"),
            "{human}"
        );
        assert!(human.contains(", 0.00 s, seed 1"), "{human}");
        let json: Value = serde_json::from_str(&text("json", &r)).unwrap();
        let io = &json["result"]["io_summary"];
        for field in [
            "ops_per_s",
            "read_ops_per_s",
            "mib_per_s",
            "mean_latency_ns",
        ] {
            assert_eq!(io[field], Value::Null, "{field}: {json}");
        }
        assert_eq!(json["result"]["flowops"][0]["ops_per_s"], Value::Null);
    }

    #[test]
    fn the_printed_figures_are_the_stored_ones() {
        // 1,000 reads in half a second.
        let r = report(result(500_000_000, 1_000));
        assert_eq!(r.run.metric("ops_per_s"), 2_000.0);
        let human = text("human", &r);
        assert!(
            human.contains("  IO summary: 1,000 ops, 2000.0 ops/s, 2000/0 rd/wr ops/s, 7.8 MiB/s"),
            "{human}"
        );
        let json: Value = serde_json::from_str(&text("json", &r)).unwrap();
        let io = &json["result"]["io_summary"];
        assert_eq!(io["ops_per_s"], r.run.metric("ops_per_s"));
        assert_eq!(io["mib_per_s"], r.run.metric("mib_per_s"));
        assert_eq!(io["mean_latency_ns"], r.run.metric("lat_mean_ns"));
    }
}
