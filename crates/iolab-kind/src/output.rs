//! A command's results in its formats: one [`Formatter`] per format (hyperfine's
//! `export/`), the one JSON stamp ([`json`]), the shape of a run's result as its formats see
//! it ([`SingleReport`]), output files written whole or not at all ([`write_output`]), the
//! number formats the human outputs share, and the result lines of a tool several kinds
//! emulate ([`mobibench`]).

pub mod mobibench;

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use iolab_store::{Finding, LatencyStats, Metric};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::cli::{CommandError, Ended, Machine, Single, SystemCpu};
use crate::record::Cpu;
use iolab_monitor::procstat::CpuPercent;

/// Writes one result of kind `R` in one format.
pub trait Formatter<R: ?Sized> {
    fn write(&self, result: &R, out: &mut dyn Write) -> io::Result<()>;
}

/// A run's result (`R`, its kind's output) and what was observed around it.
pub struct SingleReport<R> {
    pub result: R,
    /// All CPUs over the timed region.
    pub system_cpu: Option<SystemCpu>,
    pub host: Machine,
    pub started_at: SystemTime,
    /// What the checks found about the run.
    pub findings: Vec<Finding>,
    /// The machine during the run (whole-run values of the monitors' summary metrics).
    pub system: Map<String, Value>,
    /// Every metric the run stored (its kind's and the monitors'), as the database holds
    /// them: the figures a format prints where it shows the same quantity.
    pub metrics: Vec<Metric>,
}

impl<R> SingleReport<R> {
    /// The report of `run`, which started at `started_at` on `host`.
    pub fn of(run: Single<R>, host: &Machine, started_at: SystemTime) -> SingleReport<R> {
        SingleReport {
            result: run.output,
            system_cpu: run.end.system_cpu,
            host: host.clone(),
            started_at,
            system: system_summary(&run.end.metrics),
            findings: run.end.findings,
            metrics: run.end.metrics,
        }
    }

    /// The stored value of metric `name`: NaN where nothing was measured, and where the run
    /// stored no such metric.
    pub fn metric(&self, name: &str) -> f64 {
        self.metrics
            .iter()
            .find(|m| m.name == name)
            .map_or(f64::NAN, |m| m.value)
    }

    /// The stored latency metrics (`lat_mean_ns` … `lat_max_ns`) as one line, as
    /// [`latency_line`] writes a summary: `–` where nothing was measured.
    pub fn latency_line(&self) -> String {
        durations(&[
            ("mean", self.metric("lat_mean_ns")),
            ("p50", self.metric("lat_p50_ns")),
            ("p90", self.metric("lat_p90_ns")),
            ("p99", self.metric("lat_p99_ns")),
            ("p99.9", self.metric("lat_p999_ns")),
            ("max", self.metric("lat_max_ns")),
        ])
    }
}

impl Ended {
    /// The run's value of metric `name`, as stored (NaN where nothing was measured).
    pub fn metric(&self, name: &str) -> Option<f64> {
        self.metrics
            .iter()
            .find(|m| m.name == name)
            .map(|m| m.value)
    }
}

/// The run's system summary: the whole-run values of the monitor metrics that describe the
/// machine ([`iolab_metrics::SYSTEM_SUMMARY`]), those that were measured.
pub fn system_summary(metrics: &[Metric]) -> Map<String, Value> {
    iolab_metrics::SYSTEM_SUMMARY
        .iter()
        .filter_map(|(name, _)| {
            let m = metrics.iter().find(|m| m.name == *name)?;
            let n = serde_json::Number::from_f64(m.value)?;
            Some((name.to_string(), Value::Number(n)))
        })
        .collect()
}

/// The one JSON stamp. Every JSON document iolab writes starts with
/// `"schema": "iolab.<kind>/<n>"` and `"iolab_version"` at its root. A kind declares its own
/// schema next to its JSON format; a schema's version goes up when a field changes meaning or
/// goes away (new fields may appear within a version).
pub mod json {
    use std::io::{self, Write};

    use serde::Serialize;

    #[derive(Serialize)]
    struct Stamped<'a, T: ?Sized> {
        schema: &'a str,
        iolab_version: &'static str,
        #[serde(flatten)]
        doc: &'a T,
    }

    /// Writes `doc` (which serializes as a map) as pretty JSON with the stamp `schema`
    /// (`iolab.<kind>/<n>`) first at its root, and a final newline.
    pub fn write<T: Serialize + ?Sized>(
        schema: &str,
        doc: &T,
        out: &mut dyn Write,
    ) -> io::Result<()> {
        let stamped = Stamped {
            schema,
            iolab_version: env!("CARGO_PKG_VERSION"),
            doc,
        };
        serde_json::to_writer_pretty(&mut *out, &stamped)?;
        writeln!(out)
    }

    /// Whether `schema` is a stamp: `iolab.<kind>/<n>`.
    pub fn is_schema(schema: &str) -> bool {
        schema
            .strip_prefix("iolab.")
            .and_then(|r| r.split_once('/'))
            .is_some_and(|(name, v)| !name.is_empty() && v.parse::<u32>().is_ok())
    }
}

/// A device's figures as a run measured them: its latency per request and its bytes per
/// second. One shape for the kinds whose JSON result carries them (at `result.latency` and
/// `result.bytes_per_s`) and for what reads them back from a saved result (a simulated
/// cache's device models): the field names are the contract.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct DeviceFigures {
    pub latency: LatencyStats,
    /// NaN (`null` in JSON) where nothing was measured.
    #[serde(deserialize_with = "nan_for_null")]
    pub bytes_per_s: f64,
}

impl DeviceFigures {
    /// The figures `result` (a saved JSON result's `result` object) carries, if it does.
    pub fn of(result: &Value) -> Option<DeviceFigures> {
        DeviceFigures::deserialize(result).ok()
    }

    /// The figures as JSON fields, to add to a result object.
    pub fn fields(&self) -> Map<String, Value> {
        match serde_json::to_value(self) {
            Ok(Value::Object(m)) => m,
            _ => Map::new(),
        }
    }
}

/// A number, or NaN for `null` (what JSON writes for NaN).
fn nan_for_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

pub use iolab_util::units::thousands;

/// What every human format prints for a figure not measured (NaN, stored as NULL).
pub const NOT_MEASURED: &str = "–";

/// A value with `decimals` decimals, or [`NOT_MEASURED`] where nothing was measured (NaN),
/// as the database holds it.
pub fn fixed(value: f64, decimals: usize) -> String {
    if value.is_finite() {
        format!("{value:.decimals$}")
    } else {
        NOT_MEASURED.into()
    }
}

/// Named durations in nanoseconds as one line: `mean 1.2 µs  p50 1.1 µs  …`.
pub fn durations(named: &[(&str, f64)]) -> String {
    named
        .iter()
        .map(|(name, ns)| format!("{name} {}", iolab_util::units::format_ns(*ns)))
        .collect::<Vec<_>>()
        .join("  ")
}

/// A latency summary as one line: `mean …  p50 …  p90 …  p99 …  p99.9 …  max …`.
pub fn latency_line(l: &LatencyStats) -> String {
    durations(&[
        ("mean", l.mean_ns),
        ("p50", l.p50_ns as f64),
        ("p90", l.p90_ns as f64),
        ("p99", l.p99_ns as f64),
        ("p99.9", l.p999_ns as f64),
        ("max", l.max_ns as f64),
    ])
}

/// The last lines of a run's human summary: all CPUs during the timed region (when read) and
/// the worker threads' context switches.
pub fn write_system_and_switches(
    out: &mut dyn Write,
    system: Option<CpuPercent>,
    cpu: &Cpu,
) -> io::Result<()> {
    if let Some(s) = system {
        writeln!(
            out,
            "  system      active {:.1}%  idle {:.1}%  iowait {:.1}%  (all CPUs)",
            s.active, s.idle, s.iowait
        )?;
    }
    writeln!(
        out,
        "  switches    {} voluntary, {} involuntary",
        thousands(cpu.voluntary_switches),
        thousands(cpu.involuntary_switches)
    )
}

/// Checks an output file's destination (`-o`, `--excel`) before anything is written: not a
/// directory, not the results database `db` or one of its files, in a directory that exists.
/// The directory it is in.
pub fn check_output(path: &Path, db: &Path, flag: &str) -> Result<PathBuf, CommandError> {
    if path.is_dir() {
        return Err(
            CommandError::usage(format!("{} is a directory", path.display()))
                .with_hint(format!("name a file for {flag}")),
        );
    }
    let is_db = |candidate: &Path| match (candidate.canonicalize(), path.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    let db_files = ["", "-wal", "-shm", "-journal"]
        .map(|suffix| PathBuf::from(format!("{}{suffix}", db.display())));
    if db_files.iter().any(|f| is_db(f)) {
        return Err(CommandError::usage(format!(
            "{} is the results database (or one of its files); writing there would destroy it",
            path.display()
        ))
        .with_hint(format!("name another file for {flag}")));
    }
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if !dir.is_dir() {
        return Err(CommandError::usage(format!(
            "cannot write {}: directory {} does not exist",
            path.display(),
            dir.display()
        ))
        .with_hint("create the directory first, or name a file in an existing one"));
    }
    Ok(dir)
}

/// Writes an output file (`-o`) whole or not at all: into a temporary file beside it, synced,
/// then renamed over it, so a reader never sees half a file and a failure leaves any previous
/// one in place. Bad destinations are refused before anything is written ([`check_output`]).
pub fn write_output(
    path: &Path,
    db: &Path,
    flag: &str,
    render: impl FnOnce(&mut dyn Write) -> Result<(), CommandError>,
) -> Result<(), CommandError> {
    let dir = check_output(path, db, flag)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "output".into());
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let cannot = |e: &dyn std::fmt::Display| {
        CommandError::failed(format!("cannot write {}: {e}", path.display()))
    };
    let result = (|| -> Result<(), CommandError> {
        let file = std::fs::File::create(&tmp).map_err(|e| cannot(&e))?;
        let mut w = io::BufWriter::new(file);
        render(&mut w)?;
        let file = w.into_inner().map_err(|e| cannot(e.error()))?;
        file.sync_all().map_err(|e| cannot(&e))?;
        std::fs::rename(&tmp, path).map_err(|e| cannot(&e))
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// For the kinds' tests of their formats.
pub mod testing {
    use std::io::{self, Write};
    use std::time::UNIX_EPOCH;

    use iolab_store::Metric;

    use super::SingleReport;

    /// The report of a run whose `result` stored `metrics`, on no particular machine, started
    /// at the epoch.
    pub fn report<R>(result: R, metrics: Vec<Metric>) -> SingleReport<R> {
        SingleReport {
            result,
            system_cpu: None,
            host: Default::default(),
            started_at: UNIX_EPOCH,
            findings: Vec::new(),
            system: Default::default(),
            metrics,
        }
    }

    /// What `write` writes, as text.
    pub fn written(write: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> String {
        let mut out = Vec::new();
        write(&mut out).unwrap();
        String::from_utf8(out).unwrap()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stamp_comes_first_and_keeps_the_fields() {
        #[derive(serde::Serialize)]
        struct Doc {
            b: u32,
            a: &'static str,
        }
        let mut out = Vec::new();
        json::write("iolab.list/1", &Doc { b: 1, a: "x" }, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.starts_with("{\n  \"schema\": \"iolab.list/1\",\n  \"iolab_version\": "),
            "{text}"
        );
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!((v["a"].as_str(), v["b"].as_u64()), (Some("x"), Some(1)));
        assert!(json::is_schema("iolab.some_kind/1"));
        assert!(!json::is_schema("iolab.some_kind"));
    }

    #[test]
    fn what_was_not_measured_is_a_dash() {
        assert_eq!(fixed(1.26, 1), "1.3");
        assert_eq!(fixed(3.0, 3), "3.000");
        assert_eq!(fixed(f64::NAN, 2), "–");
    }

    #[test]
    fn device_figures_are_read_back_from_the_fields_they_write() {
        let f = DeviceFigures {
            latency: LatencyStats {
                count: 3,
                mean_ns: 250_000.0,
                max_ns: 400_000,
                ..Default::default()
            },
            bytes_per_s: 16_384_000.0,
        };
        let fields = f.fields();
        assert_eq!(fields["latency"]["mean_ns"], 250_000.0);
        assert_eq!(fields["bytes_per_s"], 16_384_000.0);
        assert_eq!(DeviceFigures::of(&Value::Object(fields)), Some(f));
        // Only the figures need be there; what was not measured is null.
        let r = serde_json::json!({"latency": {"mean_ns": 1.5}, "bytes_per_s": null, "ops": 1});
        let read = DeviceFigures::of(&r).unwrap();
        assert_eq!(read.latency.mean_ns, 1.5);
        assert!(read.bytes_per_s.is_nan());
        assert_eq!(DeviceFigures::of(&serde_json::json!({"ops": 1})), None);
        assert_eq!(DeviceFigures::of(&Value::Null), None);
    }
}
