//! Formats for `iolab iozone`: one [`IozoneReport`] (one run per file size × record size, or
//! per thread count) in each of [`FORMATS`], and iozone's `-b` workbook ([`xls`]).
//!
//! The rates the formats print are the runs' stored metrics ([`rate`], [`children_and_parent`]),
//! so that a number on the terminal is the one `iolab show` gives, and a figure the database
//! holds nothing for (NULL) is printed as not measured rather than as a number of its own.

pub mod excel;
pub mod human;
pub mod json;
pub mod xls;

use std::io::{self, Write};
use std::time::SystemTime;

use iolab_kind::cli::{Format, Machine, Single};
use iolab_kind::output::Formatter;

use crate::kind::{figure_metric, throughput_metrics, MIB};
use crate::{Figure, FigureResult, IozoneResult};

/// The stamp of `iolab iozone --json` (docs/json.md).
pub const SCHEMA: &str = "iolab.iozone/1";

/// `iolab iozone`'s formats, the default first.
pub const FORMATS: &[Format] = &[
    Format {
        name: "human",
        help: "A readable table per file size × record size",
    },
    iolab_kind::cli::JSON,
    Format {
        name: "iozone",
        help: "iozone's -R report: a block per test, rows of file sizes, columns of record sizes \
               (kB/s)",
    },
];

/// One run of the command: its result, and how it ended (findings, metrics as stored).
pub type Run = Single<IozoneResult>;

/// The runs of one `iolab iozone` command and what was observed around them.
pub struct IozoneReport {
    /// One per cell, in the matrix's order (one without `--auto`; one per thread count with
    /// `--threads-max`).
    pub runs: Vec<Run>,
    /// The record sizes of auto mode's matrix, which iozone's `-R` header lists whether or
    /// not a file ran them; empty: the record sizes of the results.
    pub matrix_records: Vec<u64>,
    /// iozone's `-+u`: `--format iozone` adds its CPU utilization blocks.
    pub cpu_utilization: bool,
    /// iozone's `-O`: `--format iozone` gives operations per second instead of kB/s.
    pub ops: bool,
    /// iozone's `-N`: `--format iozone` gives microseconds per operation (single stream).
    pub us_per_op: bool,
    pub host: Machine,
    pub started_at: SystemTime,
}

/// Writes `report` in the format named `format` (one of [`FORMATS`]).
pub fn write(format: &str, report: &IozoneReport, out: &mut dyn Write) -> io::Result<()> {
    let f: &dyn Formatter<IozoneReport> = match format {
        "json" => &json::Json,
        "iozone" => &excel::Iozone,
        _ => &human::Human,
    };
    f.write(report, out)
}

/// iolab's figure `figure` of `run`, in bytes/s, as stored (NaN where nothing was measured).
pub fn rate(run: &Run, figure: Figure) -> f64 {
    stored(run, figure_metric(figure)) * MIB
}

/// iozone's "children see" and "parent sees" of figure `f` of `run`, in bytes/s: as stored in
/// throughput mode; a single stream stores neither, and they are the result's.
pub fn children_and_parent(run: &Run, f: &FigureResult) -> (f64, f64) {
    if run.output.plan.throughput_mode() {
        let [children, parent, _] = throughput_metrics(f.figure);
        (stored(run, &children) * MIB, stored(run, &parent) * MIB)
    } else {
        (f.children_see(), f.parent_sees())
    }
}

/// The run's metric `name` as stored; NaN when it holds none.
fn stored(run: &Run, name: &str) -> f64 {
    run.end.metric(name).unwrap_or(f64::NAN)
}

/// iozone's unit: kB/s, 1 kB = 1024 bytes, truncated to an integer as iozone does.
pub fn kib_per_s(bytes_per_s: f64) -> u64 {
    if bytes_per_s.is_finite() && bytes_per_s > 0.0 {
        (bytes_per_s / 1024.0) as u64
    } else {
        0
    }
}

/// For the formats' tests: runs as the runner gives them back.
#[cfg(test)]
pub(crate) mod testing {
    use super::*;
    use crate::{ChildResult, IozoneSpec, Test};
    use iolab_kind::cli::Ended;
    use iolab_store::RunStatus;

    /// `result` as a run that went well, with the metrics its record code stores.
    pub fn recorded(result: IozoneResult) -> Run {
        let mut rec = iolab_kind::record::testing::record();
        crate::kind::add_record(&mut rec, &result);
        Run {
            output: result,
            end: Ended {
                number: 1,
                status: RunStatus::Ok,
                failure: None,
                findings: Vec::new(),
                metrics: rec.metrics,
                system_cpu: None,
                stored: None,
            },
        }
    }

    /// A result of `size` × `record` (one thread, or `threads` in throughput mode) whose
    /// write pass moved `size` bytes per thread in `elapsed_ns`, as did its rewrite pass.
    pub fn result(size: u64, record: u64, threads: u32, elapsed_ns: u64) -> IozoneResult {
        let mut s = IozoneSpec::with_defaults("/d".into(), 1);
        s.tests = vec![Test::Write];
        s.size = size;
        s.record = record;
        s.threads = threads;
        let plan = s.validate().unwrap();
        let child = ChildResult {
            ops: size / record,
            bytes: size,
            elapsed_ns,
            ..ChildResult::default()
        };
        let figures = [Figure::Write, Figure::Rewrite]
            .into_iter()
            .map(|figure| FigureResult {
                figure,
                children: vec![child; threads as usize],
                elapsed_ns,
                parent_ns: elapsed_ns,
                latency: Default::default(),
                usage: Default::default(),
                purge_ns: 0,
                cached_bytes: None,
            })
            .collect();
        IozoneResult {
            plan,
            figures,
            files: Vec::new(),
        }
    }

    /// A report of `runs` with no option set.
    pub fn report(runs: Vec<Run>) -> IozoneReport {
        IozoneReport {
            runs,
            matrix_records: Vec::new(),
            cpu_utilization: false,
            ops: false,
            us_per_op: false,
            host: Machine::default(),
            started_at: SystemTime::now(),
        }
    }
}
