//! iolab-metrics: what iolab measures, declared once.
//!
//! A metric is declared by one [`MetricDef`]: its name, unit, which direction is better, a
//! title and a description. The metrics every run records are in [`COMMON`]; a workload
//! kind declares the ones only it records next to its code (iolab-experiment's `kind/`), and
//! the runner stores the definitions of everything an experiment produces with it in the
//! results database. The stopping rule (`repetitions.metric`), `iolab show`, `iolab
//! compare`, `iolab export` and reports all read these declarations; for a database written
//! before they were stored, [`COMMON`] stands in.
//!
//! Monitor metrics (`cpu.usr_pct`, `disk.D.util_pct`, …) are declared by their samplers in
//! iolab-monitor; they have no direction (more CPU time is not better or worse by itself).
//!
//! This crate is a leaf: the store, compare and report crates use it without depending on the
//! engine or the experiment runner.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

/// Which way a metric improves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Better {
    /// Throughput-like: more is better.
    Higher,
    /// Latency-like: less is better.
    Lower,
}

impl Better {
    pub fn as_str(self) -> &'static str {
        match self {
            Better::Higher => "higher",
            Better::Lower => "lower",
        }
    }

    pub fn parse(s: &str) -> Option<Better> {
        match s {
            "higher" => Some(Better::Higher),
            "lower" => Some(Better::Lower),
            _ => None,
        }
    }
}

/// One metric's declaration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MetricDef {
    /// Unique within a run, e.g. `ops_per_s`.
    pub name: Cow<'static, str>,
    /// `op/s`, `MiB/s`, `ns`, `s`, `B`; empty for a plain count.
    pub unit: Cow<'static, str>,
    /// `None`: neither direction is better (a count of threads, of context switches).
    pub better: Option<Better>,
    /// For headings and charts: `Throughput`, `p99 latency`.
    pub title: Cow<'static, str>,
    /// What it is and how it is computed, in one sentence.
    pub description: Cow<'static, str>,
    /// Shown and compared by default (`iolab show`, `iolab compare`, reports).
    pub headline: bool,
    /// Exact: the same input gives the same value on any machine (a simulation's counts, not
    /// its speed). Configurations whose runs are deterministic compare it as an exact number,
    /// without intervals or tests.
    #[serde(default)]
    pub exact: bool,
}

impl MetricDef {
    /// A metric that is not a headline one.
    pub const fn new(
        name: &'static str,
        unit: &'static str,
        better: Option<Better>,
        title: &'static str,
        description: &'static str,
    ) -> MetricDef {
        MetricDef {
            name: Cow::Borrowed(name),
            unit: Cow::Borrowed(unit),
            better,
            title: Cow::Borrowed(title),
            description: Cow::Borrowed(description),
            headline: false,
            exact: false,
        }
    }

    /// The same metric, declared exact (see [`MetricDef::exact`]).
    pub const fn exact(mut self) -> MetricDef {
        self.exact = true;
        self
    }

    /// The same metric, shown and compared by default.
    pub const fn headline(mut self) -> MetricDef {
        self.headline = true;
        self
    }

    /// `Some(true)` for throughput-like, `Some(false)` for latency-like, `None` unknown.
    pub fn higher_is_better(&self) -> Option<bool> {
        self.better.map(|b| b == Better::Higher)
    }

    /// `Throughput (op/s)`; the title alone for a metric without a unit.
    pub fn title_with_unit(&self) -> String {
        if self.unit.is_empty() {
            self.title.to_string()
        } else {
            format!("{} ({})", self.title, self.unit)
        }
    }
}

use Better::{Higher, Lower};

/// The metrics every run records (iolab-experiment's `run/record.rs` computes them from the
/// engine's totals), in the order tables show them. The first four are the headline.
/// What a run under MPI records about its ranks besides the common metrics (whose values are
/// then the ranks' together: counts summed, rates over the first rank's start to the last
/// one's end).
pub const RANKS: &[MetricDef] = &[
    MetricDef::new(
        "ranks.count",
        "",
        None,
        "Ranks",
        "MPI ranks that ran the workload together",
    ),
    MetricDef::new(
        "ranks.start_skew_s",
        "s",
        Some(Lower),
        "Start skew",
        "latest minus earliest start of the ranks' timed regions, each on its host's clock \
         (across hosts it includes their clocks' offsets)",
    ),
    MetricDef::new(
        "ranks.end_spread_s",
        "s",
        Some(Lower),
        "End spread",
        "latest minus earliest end of the ranks' timed regions: the straggler tail",
    ),
    MetricDef::new(
        "ranks.all_running_s",
        "s",
        None,
        "All-running window",
        "from the latest start to the earliest end: the time every rank was running",
    ),
    MetricDef::new(
        "ranks.ops_per_s_min",
        "op/s",
        Some(Higher),
        "Slowest rank",
        "the lowest of the ranks' own throughputs (each over its own timed region)",
    ),
    MetricDef::new(
        "ranks.ops_per_s_max",
        "op/s",
        Some(Higher),
        "Fastest rank",
        "the highest of the ranks' own throughputs",
    ),
    MetricDef::new(
        "ranks.ops_per_s_mean",
        "op/s",
        Some(Higher),
        "Mean rank",
        "the mean of the ranks' own throughputs",
    ),
    MetricDef::new(
        "ranks.mib_per_s_min",
        "MiB/s",
        Some(Higher),
        "Slowest rank bandwidth",
        "the lowest of the ranks' own bandwidths (each over its own timed region)",
    ),
    MetricDef::new(
        "ranks.mib_per_s_max",
        "MiB/s",
        Some(Higher),
        "Fastest rank bandwidth",
        "the highest of the ranks' own bandwidths",
    ),
    MetricDef::new(
        "ranks.mib_per_s_mean",
        "MiB/s",
        Some(Higher),
        "Mean rank bandwidth",
        "the mean of the ranks' own bandwidths",
    ),
];

pub const COMMON: &[MetricDef] = &[
    MetricDef::new(
        "ops_per_s",
        "op/s",
        Some(Higher),
        "Throughput",
        "operations per second of the measured interval: records, transactions, WML's I/O \
         flowops (filebench's IO Summary)",
    )
    .headline(),
    MetricDef::new(
        "mib_per_s",
        "MiB/s",
        Some(Higher),
        "Bandwidth",
        "bytes moved by those operations per second, in MiB",
    )
    .headline(),
    MetricDef::new(
        "lat_mean_ns",
        "ns",
        Some(Lower),
        "Mean latency",
        "mean per-operation latency from the merged HDR histograms",
    )
    .headline(),
    MetricDef::new(
        "lat_p99_ns",
        "ns",
        Some(Lower),
        "p99 latency",
        "99th percentile of the per-operation latency",
    )
    .headline(),
    MetricDef::new(
        "ops",
        "",
        Some(Higher),
        "Operations",
        "operations over the measured interval",
    ),
    MetricDef::new(
        "bytes",
        "B",
        Some(Higher),
        "Bytes",
        "bytes moved over the measured interval",
    ),
    MetricDef::new(
        "lat_p50_ns",
        "ns",
        Some(Lower),
        "Median latency",
        "50th percentile of the per-operation latency",
    ),
    MetricDef::new(
        "lat_p90_ns",
        "ns",
        Some(Lower),
        "p90 latency",
        "90th percentile of the per-operation latency",
    ),
    MetricDef::new(
        "lat_p999_ns",
        "ns",
        Some(Lower),
        "p99.9 latency",
        "99.9th percentile of the per-operation latency",
    ),
    MetricDef::new(
        "lat_max_ns",
        "ns",
        Some(Lower),
        "Maximum latency",
        "the slowest operation",
    ),
    MetricDef::new(
        "cpu_usr_s",
        "s",
        Some(Lower),
        "Engine user CPU",
        "user CPU time of the engine's worker threads (getrusage RUSAGE_THREAD)",
    ),
    MetricDef::new(
        "cpu_sys_s",
        "s",
        Some(Lower),
        "Engine system CPU",
        "system CPU time of the engine's worker threads",
    ),
    MetricDef::new(
        "elapsed_s",
        "s",
        Some(Lower),
        "Elapsed time",
        "the measured interval: from the release of the threads to the last one's end",
    ),
    MetricDef::new(
        "ctx_voluntary",
        "",
        None,
        "Voluntary context switches",
        "voluntary context switches of the worker threads",
    ),
    MetricDef::new(
        "ctx_involuntary",
        "",
        None,
        "Involuntary context switches",
        "involuntary context switches of the worker threads",
    ),
    MetricDef::new(
        "cache_dropped_kib",
        "KiB",
        None,
        "Page cache dropped",
        "page cache freed by dropping caches before the run (procedure.drop_caches)",
    ),
];

/// The stopping rule's metric when an experiment names none.
pub const DEFAULT_METRIC: &str = "ops_per_s";

/// The monitor metrics that summarise the machine during a run: what `iolab show` tabulates
/// per configuration and what a command's `--json` (`iolab run --json`) reports as the system
/// summary (name, short heading). The averages seed report 000 collected with sar and perf.
pub const SYSTEM_SUMMARY: &[(&str, &str)] = &[
    ("cpu.usr_pct", "cpu usr%"),
    ("cpu.sys_pct", "sys%"),
    ("cpu.iowait_pct", "iowait%"),
    ("dev.util_pct", "dev util%"),
    ("dev.rkB_per_s", "dev rkB/s"),
    ("dev.wkB_per_s", "dev wkB/s"),
    ("dev.f_per_s", "flush/s"),
    ("perf.context_switches_per_s", "cs/s"),
    ("vm.pgfault_per_s", "faults/s"),
];

/// The declaration of `name` among `defs`.
pub fn find<'a>(defs: &'a [MetricDef], name: &str) -> Option<&'a MetricDef> {
    defs.iter().find(|d| d.name == name)
}

/// The headline metrics of `defs`, in order.
pub fn headline(defs: &[MetricDef]) -> impl Iterator<Item = &MetricDef> {
    defs.iter().filter(|d| d.headline)
}

/// [`COMMON`] followed by `extra` (a kind's own metrics), as stored with an experiment.
pub fn with_common(extra: &[MetricDef]) -> Vec<MetricDef> {
    with_common_as(extra, &[])
}

/// [`with_common`], the common definitions replaced by those of `common_as` with the same
/// name (a kind's words for them: a SQLite run's rate is `txn/s`).
pub fn with_common_as(extra: &[MetricDef], common_as: &[MetricDef]) -> Vec<MetricDef> {
    COMMON
        .iter()
        .map(|d| find(common_as, &d.name).unwrap_or(d))
        .chain(extra)
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_the_default_is_declared() {
        let mut names: Vec<&str> = COMMON.iter().map(|d| d.name.as_ref()).collect();
        names.sort_unstable();
        let n = names.len();
        names.dedup();
        assert_eq!(names.len(), n, "a metric is declared twice");
        assert!(find(COMMON, DEFAULT_METRIC).is_some_and(|d| d.better.is_some()));
    }

    #[test]
    fn headline_metrics_come_first() {
        let heads: Vec<&str> = headline(COMMON).map(|d| d.name.as_ref()).collect();
        assert_eq!(
            heads,
            ["ops_per_s", "mib_per_s", "lat_mean_ns", "lat_p99_ns"]
        );
        assert!(COMMON[..4].iter().all(|d| d.headline));
    }

    #[test]
    fn definitions_round_trip_through_json() {
        let d = COMMON[0].clone();
        let text = serde_json::to_string(&d).unwrap();
        assert!(text.contains("\"better\":\"higher\""), "{text}");
        let back: MetricDef = serde_json::from_str(&text).unwrap();
        assert_eq!(back, d);
        assert_eq!(d.title_with_unit(), "Throughput (op/s)");
        assert_eq!(
            find(COMMON, "lat_p99_ns").unwrap().higher_is_better(),
            Some(false)
        );
        assert_eq!(
            find(COMMON, "ctx_voluntary").unwrap().higher_is_better(),
            None
        );
    }
}
