//! Engine results → the plain records of the results database: the metrics every run
//! records ([`iolab_metrics::COMMON`]) and the shapes of flowop rows and series, shared by
//! the workload kinds (each adds its own rows in its module under `kind/`).

use iolab_engine::stats::{Bucket, LatencySummary};
use iolab_engine::usage::Usage;
use iolab_metrics::MetricDef;
use iolab_store::{LatencyStats, Metric, RunRecord, Series};

/// The metrics of [`iolab_metrics::COMMON`] a run records itself, from totals over the
/// measured interval (`cache_dropped_kib` is the runner's).
pub(crate) fn headline(
    record: &mut RunRecord,
    ops: u64,
    bytes: u64,
    elapsed_ns: u64,
    lat: &LatencySummary,
    usage: &Usage,
) {
    let t = elapsed_ns as f64 / 1e9;
    let rate = |x: f64| if t > 0.0 { x / t } else { f64::NAN };
    let lat_or_nan = |v: f64| if lat.count == 0 { f64::NAN } else { v };
    for (name, value) in [
        ("ops_per_s", rate(ops as f64)),
        ("mib_per_s", rate(bytes as f64) / 1048576.0),
        ("ops", ops as f64),
        ("bytes", bytes as f64),
        ("lat_mean_ns", lat_or_nan(lat.mean_ns)),
        ("lat_p50_ns", lat_or_nan(lat.p50_ns as f64)),
        ("lat_p90_ns", lat_or_nan(lat.p90_ns as f64)),
        ("lat_p99_ns", lat_or_nan(lat.p99_ns as f64)),
        ("lat_p999_ns", lat_or_nan(lat.p999_ns as f64)),
        ("lat_max_ns", lat_or_nan(lat.max_ns as f64)),
        ("cpu_usr_s", usage.user_ns as f64 / 1e9),
        ("cpu_sys_s", usage.sys_ns as f64 / 1e9),
        ("elapsed_s", t),
        ("ctx_voluntary", usage.voluntary_switches as f64),
        ("ctx_involuntary", usage.involuntary_switches as f64),
    ] {
        record
            .metrics
            .push(metric(iolab_metrics::COMMON, name, value));
    }
}

/// A value of the metric `name` declared in `defs`, with the declared unit.
pub(crate) fn metric(defs: &[MetricDef], name: &str, value: f64) -> Metric {
    // Every name given here is declared (a unit test runs each kind's record code against
    // its declarations); an undeclared one would still be stored, without a unit.
    let unit = iolab_metrics::find(defs, name).map_or("", |d| d.unit.as_ref());
    Metric::new(name, value, unit)
}

pub(crate) fn latency_stats(s: &LatencySummary) -> LatencyStats {
    LatencyStats {
        count: s.count,
        mean_ns: s.mean_ns,
        stdev_ns: s.stdev_ns,
        min_ns: s.min_ns,
        p50_ns: s.p50_ns,
        p90_ns: s.p90_ns,
        p99_ns: s.p99_ns,
        p999_ns: s.p999_ns,
        max_ns: s.max_ns,
    }
}

pub(crate) fn series(name: &str, width_ns: u64, buckets: &[Bucket]) -> Series {
    Series {
        name: name.into(),
        width_ns,
        ops: buckets.iter().map(|b| b.ops).collect(),
        bytes: buckets.iter().map(|b| b.bytes).collect(),
    }
}

/// For the kinds' tests of their `add_record`.
#[cfg(test)]
pub(crate) mod testing {
    use iolab_metrics::MetricDef;
    use iolab_store::{ConfigId, NewRun, RunRecord, RunStatus, Timestamp};

    /// An empty record of a run that went well.
    pub fn record() -> RunRecord {
        RunRecord::new(NewRun {
            config: ConfigId(1),
            repetition: 0,
            seed: 1,
            status: RunStatus::Ok,
            error: None,
            started_at: Timestamp(0),
            ended_at: Timestamp(0),
            elapsed_ns: 0,
            environment: serde_json::json!({}),
        })
    }

    /// Every metric in `rec` is declared (common or `own`) with the declared unit, and every
    /// declared one a run records itself is there.
    pub fn assert_declared(rec: &RunRecord, own: &[MetricDef]) {
        let defs = iolab_metrics::with_common(own);
        for m in &rec.metrics {
            let d = iolab_metrics::find(&defs, &m.name)
                .unwrap_or_else(|| panic!("{} is not declared", m.name));
            assert_eq!(m.unit, d.unit, "{}", m.name);
        }
        for d in &defs {
            if d.name != "cache_dropped_kib" {
                assert!(rec.metrics.iter().any(|m| m.name == d.name), "{}", d.name);
            }
        }
    }
}
