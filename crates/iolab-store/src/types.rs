//! The plain records the binary writes and the rows queries give back.
//!
//! Write types (`New*`, [`RunRecord`] and its parts) carry no ids; read types add the ids and
//! the bookkeeping the store keeps (uuid, status). The parts of a run ([`Metric`],
//! [`FlowopStats`], [`Series`], [`MonitorSeries`], [`Finding`]) are the same type both ways,
//! so what was written compares equal to what is read back.

use std::fmt;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Value};

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
        #[serde(transparent)]
        pub struct $name(pub i64);

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }
    };
}

id_type!(
    /// An experiment's id in one database (an import gives it a new one; its uuid stays).
    ExperimentId
);
id_type!(
    /// A configuration's id.
    ConfigId
);
id_type!(
    /// A run's id.
    RunId
);

/// A wall-clock instant: nanoseconds since the Unix epoch, UTC.
///
/// Stored as an integer so that times sort and subtract in SQL and round-trip exactly; shown
/// as RFC 3339 in exports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Timestamp(pub i64);

impl Timestamp {
    pub fn now() -> Timestamp {
        Timestamp::from_system_time(SystemTime::now())
    }

    /// Saturates outside ±292 years of 1970.
    pub fn from_system_time(t: SystemTime) -> Timestamp {
        let ns = match t.duration_since(UNIX_EPOCH) {
            Ok(d) => i64::try_from(d.as_nanos()).unwrap_or(i64::MAX),
            Err(e) => i64::try_from(e.duration().as_nanos()).map_or(i64::MIN, |n| -n),
        };
        Timestamp(ns)
    }

    /// `2026-05-01T12:34:56.123456789Z` (always nine fractional digits, so the text sorts
    /// like the instant).
    pub fn to_rfc3339(self) -> String {
        let secs = self.0.div_euclid(1_000_000_000);
        let nanos = self.0.rem_euclid(1_000_000_000);
        let days = secs.div_euclid(86_400);
        let sod = secs.rem_euclid(86_400);
        let (y, m, d) = civil_from_days(days);
        format!(
            "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{nanos:09}Z",
            sod / 3600,
            sod / 60 % 60,
            sod % 60
        )
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_rfc3339())
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_rfc3339())
    }
}

/// Gregorian date of a day count since 1970-01-01 (Howard Hinnant's `civil_from_days`,
/// <https://howardhinnant.github.io/date_algorithms.html>).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

macro_rules! text_enum {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
        #[serde(rename_all = "lowercase")]
        pub enum $name {
            $($(#[$vdoc])* $variant),+
        }

        impl $name {
            /// The text stored in the database and shown in exports.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }

            pub fn parse(s: &str) -> Option<$name> {
                match s {
                    $($text => Some($name::$variant),)+
                    _ => None,
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

text_enum!(
    /// How a run ended.
    RunStatus {
        /// Completed; its numbers count.
        Ok = "ok",
        /// Stopped by an error (ENOSPC, EIO, …), recorded in [`NewRun::error`].
        Failed = "failed",
        /// Stopped by the user (Ctrl-C); the numbers cover part of the run.
        Interrupted = "interrupted",
    }
);

text_enum!(
    /// Where an experiment stands. `Running` is also what a crashed experiment keeps, which
    /// is how `iolab run --resume` finds it.
    ExperimentStatus {
        Running = "running",
        Done = "done",
        Interrupted = "interrupted",
        Failed = "failed",
    }
);

text_enum!(
    /// How much a finding matters; ordered info < warning < error.
    Severity {
        Info = "info",
        Warning = "warning",
        Error = "error",
    }
);

/// A new experiment: everything needed to understand (and redo) it later.
#[derive(Debug, Clone, PartialEq)]
pub struct NewExperiment {
    pub name: String,
    /// The file it came from (experiment TOML, WML workload, or a description of the command).
    pub source: String,
    /// The fully resolved experiment (matrix, repetitions, stopping rule, run order seed…).
    pub spec: Value,
    pub seed: u64,
    pub created_at: Timestamp,
    pub iolab_version: String,
    /// The host's environment when the experiment started.
    pub host: Value,
}

/// A new configuration of an experiment.
#[derive(Debug, Clone, PartialEq)]
pub struct NewConfig {
    pub experiment: ExperimentId,
    /// Unique within the experiment; what tables and charts show.
    pub label: String,
    /// Factor → value, e.g. `{"fs": "ext4", "data": "journal"}`.
    pub factors: Map<String, Value>,
}

/// The run itself, without its measurements.
#[derive(Debug, Clone, PartialEq)]
pub struct NewRun {
    pub config: ConfigId,
    /// 0-based repetition number within the configuration.
    pub repetition: u32,
    pub seed: u64,
    pub status: RunStatus,
    /// Why it failed or was interrupted.
    pub error: Option<String>,
    pub started_at: Timestamp,
    pub ended_at: Timestamp,
    /// The measured interval (monotonic clock), the denominator of its rates.
    pub elapsed_ns: u64,
    /// The environment during this run (kernel, device, filesystem, mount options, scheduler,
    /// tunables…). Identical environments are stored once.
    pub environment: Value,
}

/// One number a run produced.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Metric {
    /// Unique within a run, e.g. `ops_per_s`, `p99_ns`, `disk.wkB_per_s`.
    pub name: String,
    /// NaN is stored as SQL NULL and read back as NaN.
    pub value: f64,
    /// E.g. `op/s`, `MiB/s`, `ns`, `%`; empty for a plain count.
    pub unit: String,
}

impl Metric {
    pub fn new(name: impl Into<String>, value: f64, unit: impl Into<String>) -> Metric {
        Metric {
            name: name.into(),
            value,
            unit: unit.into(),
        }
    }
}

/// Latency percentiles and moments in nanoseconds, as the engine's histogram reports them.
/// Read back from a saved result, a figure it does not carry is 0.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LatencyStats {
    pub count: u64,
    pub mean_ns: f64,
    pub stdev_ns: f64,
    pub min_ns: u64,
    pub p50_ns: u64,
    pub p90_ns: u64,
    pub p99_ns: u64,
    pub p999_ns: u64,
    pub max_ns: u64,
}

/// One flowop's (or a single-pattern test's) statistics over all threads.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FlowopStats {
    pub name: String,
    /// The operation, e.g. `read`, `write`, `fsync`, `openfile`.
    pub kind: String,
    pub ops: u64,
    pub bytes: u64,
    pub errors: u64,
    pub latency: LatencyStats,
    /// Non-empty buckets as `(highest latency in the bucket in ns, count)`. Stored sorted by
    /// latency with equal bounds merged, so give them sorted (the engine does) to read back
    /// exactly what was written.
    pub histogram: Vec<(u64, u64)>,
    /// Anything else the engine knows (read/write flags, ran-dry counts, errors by kind…).
    pub extra: Value,
}

/// Work done per fixed interval of a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Series {
    /// E.g. `io` for the summary counters, or a flowop's name.
    pub name: String,
    pub width_ns: u64,
    pub ops: Vec<u64>,
    /// Same length as `ops`.
    pub bytes: Vec<u64>,
}

/// One monitored quantity over a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MonitorSeries {
    /// E.g. `cpu.iowait_pct`, `mem.dirty_bytes`, `disk.vdb.util_pct`.
    pub metric: String,
    pub unit: String,
    /// `(ns since the run's start on the monotonic clock — negative before it, value)`.
    pub points: Vec<(i64, f64)>,
}

/// A check's verdict about a run or a configuration.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    /// The check's id, e.g. `cache-fit`.
    pub check: String,
    pub severity: Severity,
    /// The numbers behind the verdict.
    pub evidence: Value,
    pub explanation: String,
    pub fix: String,
}

/// Everything about one finished run, written with [`crate::Store::record_run`] in one
/// transaction.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRecord {
    pub run: NewRun,
    pub metrics: Vec<Metric>,
    pub flowops: Vec<FlowopStats>,
    pub series: Vec<Series>,
    pub monitor: Vec<MonitorSeries>,
    pub findings: Vec<Finding>,
    /// What another tool printed (the `exec` kind): kept so a later parser can read it again.
    pub outputs: Vec<RunOutput>,
}

/// One piece of a tool's raw output kept with its run: `stdout`, `stderr`, `file:NAME`, or
/// the exec kind's own description of the run (`exec.json`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunOutput {
    pub name: String,
    pub content: Vec<u8>,
}

/// In JSON (`iolab export`): `{name, bytes, text}`, the text when the content is UTF-8 (a
/// tool's output almost always is), else `null`.
impl Serialize for RunOutput {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(3))?;
        m.serialize_entry("name", &self.name)?;
        m.serialize_entry("bytes", &self.content.len())?;
        m.serialize_entry("text", &std::str::from_utf8(&self.content).ok())?;
        m.end()
    }
}

impl RunRecord {
    /// A run with no measurements yet.
    pub fn new(run: NewRun) -> RunRecord {
        RunRecord {
            run,
            metrics: Vec::new(),
            flowops: Vec::new(),
            series: Vec::new(),
            monitor: Vec::new(),
            findings: Vec::new(),
            outputs: Vec::new(),
        }
    }
}

/// How a configuration's repetitions ended, per the stopping rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ConfigOutcome {
    /// Whether the confidence interval reached its target.
    pub converged: bool,
    /// E.g. `CI ±3.1% ≤ 5% after 7 runs` or `budget of 20 runs reached at ±8.2%`.
    pub note: String,
}

impl ConfigOutcome {
    /// How the note of a deterministic configuration (a simulation: one run is exact) starts.
    pub const DETERMINISTIC: &'static str = "deterministic: ";

    /// Whether the configuration's runs are deterministic.
    pub fn is_deterministic(&self) -> bool {
        self.note.starts_with(Self::DETERMINISTIC)
    }
}

/// A stored experiment.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Experiment {
    pub id: ExperimentId,
    pub uuid: String,
    pub name: String,
    pub source: String,
    pub status: ExperimentStatus,
    pub seed: u64,
    pub created_at: Timestamp,
    pub finished_at: Option<Timestamp>,
    pub iolab_version: String,
    pub host: Value,
    pub spec: Value,
}

/// A stored configuration.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Config {
    pub id: ConfigId,
    pub experiment: ExperimentId,
    pub label: String,
    pub factors: Map<String, Value>,
    /// Set by [`crate::Store::set_config_outcome`]; `None` while repetitions go on.
    pub outcome: Option<ConfigOutcome>,
}

/// A stored run, without its measurements.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Run {
    pub id: RunId,
    pub config: ConfigId,
    pub repetition: u32,
    pub seed: u64,
    pub status: RunStatus,
    pub error: Option<String>,
    pub started_at: Timestamp,
    pub ended_at: Timestamp,
    pub elapsed_ns: u64,
    pub environment: Value,
}

/// A stored run with everything measured in it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunDetails {
    #[serde(flatten)]
    pub run: Run,
    pub metrics: Vec<Metric>,
    pub flowops: Vec<FlowopStats>,
    pub series: Vec<Series>,
    pub monitor: Vec<MonitorSeries>,
    pub findings: Vec<Finding>,
    /// What another tool printed (the `exec` kind); none for iolab's own kinds.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub outputs: Vec<RunOutput>,
}

/// An experiment with its configurations and runs (without their measurements).
impl RunDetails {
    /// The run as a record to store again, as configuration `config`'s (an import, a run's
    /// record carried from another process).
    pub fn into_record(self, config: ConfigId) -> RunRecord {
        let r = self.run;
        RunRecord {
            run: NewRun {
                config,
                repetition: r.repetition,
                seed: r.seed,
                status: r.status,
                error: r.error,
                started_at: r.started_at,
                ended_at: r.ended_at,
                elapsed_ns: r.elapsed_ns,
                environment: r.environment,
            },
            metrics: self.metrics,
            flowops: self.flowops,
            series: self.series,
            monitor: self.monitor,
            findings: self.findings,
            outputs: self.outputs,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExperimentDetails {
    pub experiment: Experiment,
    pub configs: Vec<Config>,
    /// In the order they were started.
    pub runs: Vec<Run>,
}

/// Runs by status.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct RunCounts {
    pub ok: u64,
    pub failed: u64,
    pub interrupted: u64,
}

impl RunCounts {
    pub fn total(&self) -> u64 {
        self.ok + self.failed + self.interrupted
    }
}

/// A line of `iolab list`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExperimentSummary {
    pub id: ExperimentId,
    pub uuid: String,
    pub name: String,
    pub source: String,
    pub status: ExperimentStatus,
    pub created_at: Timestamp,
    pub finished_at: Option<Timestamp>,
    pub configs: u64,
    pub runs: RunCounts,
}

/// Which repetitions of a configuration exist, by how they ended (for `iolab run --resume`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ConfigProgress {
    pub config: ConfigId,
    pub label: String,
    /// Repetitions with an ok run, ascending. These are final: never run them again.
    pub ok: Vec<u32>,
    /// Repetitions whose latest attempt failed (and that have no ok run), ascending.
    pub failed: Vec<u32>,
    /// Repetitions whose latest attempt was interrupted (and that have no ok run), ascending.
    pub interrupted: Vec<u32>,
    pub outcome: Option<ConfigOutcome>,
}

impl ConfigProgress {
    /// Whether repetition `rep` already has an ok run.
    pub fn is_done(&self, rep: u32) -> bool {
        self.ok.binary_search(&rep).is_ok()
    }

    /// The lowest repetition number without an ok run.
    pub fn next_repetition(&self) -> u32 {
        let mut next = 0;
        for &r in &self.ok {
            if r != next {
                break;
            }
            next += 1;
        }
        next
    }
}

/// The values of one metric over a configuration's ok runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetricValues {
    pub unit: String,
    /// In repetition order.
    pub values: Vec<f64>,
    /// The run each value came from (to point at outliers).
    pub runs: Vec<RunId>,
}

impl MetricValues {
    /// The mean of the finite values (NaN: not measured in that run); `None` when none is.
    pub fn finite_mean(&self) -> Option<f64> {
        let v: Vec<f64> = self
            .values
            .iter()
            .copied()
            .filter(|x| x.is_finite())
            .collect();
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    }
}

/// A stored finding with what it is about.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StoredFinding {
    pub config: ConfigId,
    /// `None` for a finding about the whole configuration.
    pub run: Option<RunId>,
    #[serde(flatten)]
    pub finding: Finding,
}

/// What [`crate::Store::import`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ImportReport {
    /// Copied experiments: (uuid, id in the other database, new id here).
    pub imported: Vec<(String, ExperimentId, ExperimentId)>,
    /// Experiments already here (same uuid): (uuid, id in the other database, id here).
    pub skipped: Vec<(String, ExperimentId, ExperimentId)>,
    /// Runs copied.
    pub runs: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_of_known_instants() {
        assert_eq!(Timestamp(0).to_rfc3339(), "1970-01-01T00:00:00.000000000Z");
        assert_eq!(
            Timestamp(1_700_000_000_123_456_789).to_rfc3339(),
            "2023-11-14T22:13:20.123456789Z"
        );
        // Leap day, and before the epoch.
        assert_eq!(
            Timestamp(951_782_400_000_000_000).to_rfc3339(),
            "2000-02-29T00:00:00.000000000Z"
        );
        assert_eq!(Timestamp(-1).to_rfc3339(), "1969-12-31T23:59:59.999999999Z");
    }

    #[test]
    fn timestamp_from_system_time() {
        let t = UNIX_EPOCH + std::time::Duration::new(5, 7);
        assert_eq!(Timestamp::from_system_time(t), Timestamp(5_000_000_007));
        let before = UNIX_EPOCH - std::time::Duration::from_nanos(3);
        assert_eq!(Timestamp::from_system_time(before), Timestamp(-3));
    }

    #[test]
    fn enums_round_trip_their_text() {
        for s in [RunStatus::Ok, RunStatus::Failed, RunStatus::Interrupted] {
            assert_eq!(RunStatus::parse(s.as_str()), Some(s));
        }
        for s in [
            ExperimentStatus::Running,
            ExperimentStatus::Done,
            ExperimentStatus::Interrupted,
            ExperimentStatus::Failed,
        ] {
            assert_eq!(ExperimentStatus::parse(s.as_str()), Some(s));
        }
        for s in [Severity::Info, Severity::Warning, Severity::Error] {
            assert_eq!(Severity::parse(s.as_str()), Some(s));
        }
        assert_eq!(RunStatus::parse("OK"), None);
        assert_eq!(
            serde_json::to_string(&RunStatus::Interrupted).unwrap(),
            "\"interrupted\""
        );
    }

    #[test]
    fn next_repetition_skips_the_done_prefix() {
        let p = ConfigProgress {
            config: ConfigId(1),
            label: "a".into(),
            ok: vec![0, 1, 3],
            failed: vec![2],
            interrupted: vec![],
            outcome: None,
        };
        assert_eq!(p.next_repetition(), 2);
        assert!(p.is_done(3));
        assert!(!p.is_done(2));
    }
}
