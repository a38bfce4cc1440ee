//! A run's measurements as the results database stores them: the metrics every run records
//! ([`iolab_metrics::COMMON`], [`headline`]), a kind's own ([`metric`], with the declared
//! unit), and the shape of series. Each kind adds its rows in its own place.

use iolab_metrics::MetricDef;
pub use iolab_store::LatencyStats;
use iolab_store::{Metric, RunRecord, Series};

/// CPU use of the threads that did a run's work, over its timed region.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Cpu {
    pub user_ns: u64,
    pub sys_ns: u64,
    pub voluntary_switches: u64,
    pub involuntary_switches: u64,
}

/// What a run did over its measured interval, for the common metrics.
#[derive(Debug, Clone, Copy)]
pub struct Totals<'a> {
    pub ops: u64,
    pub bytes: u64,
    pub elapsed_ns: u64,
    /// Latency of the operations (a count of 0: no latency was measured).
    pub latency: &'a LatencyStats,
    pub cpu: Cpu,
}

/// The metrics of [`iolab_metrics::COMMON`] a run records itself, from totals over the
/// measured interval (`cache_dropped_kib` is the runner's). A rate over no time is NaN, not 0:
/// nothing was measured.
pub fn headline(record: &mut RunRecord, t: Totals<'_>) {
    let secs = t.elapsed_ns as f64 / 1e9;
    let rate = |x: f64| per_second(x, t.elapsed_ns);
    let lat = t.latency;
    let lat_or_nan = |v: f64| if lat.count == 0 { f64::NAN } else { v };
    for (name, value) in [
        ("ops_per_s", rate(t.ops as f64)),
        ("mib_per_s", rate(t.bytes as f64) / 1048576.0),
        ("ops", t.ops as f64),
        ("bytes", t.bytes as f64),
        ("lat_mean_ns", lat_or_nan(lat.mean_ns)),
        ("lat_p50_ns", lat_or_nan(lat.p50_ns as f64)),
        ("lat_p90_ns", lat_or_nan(lat.p90_ns as f64)),
        ("lat_p99_ns", lat_or_nan(lat.p99_ns as f64)),
        ("lat_p999_ns", lat_or_nan(lat.p999_ns as f64)),
        ("lat_max_ns", lat_or_nan(lat.max_ns as f64)),
        ("cpu_usr_s", t.cpu.user_ns as f64 / 1e9),
        ("cpu_sys_s", t.cpu.sys_ns as f64 / 1e9),
        ("elapsed_s", secs),
        ("ctx_voluntary", t.cpu.voluntary_switches as f64),
        ("ctx_involuntary", t.cpu.involuntary_switches as f64),
    ] {
        record
            .metrics
            .push(metric(iolab_metrics::COMMON, name, value));
    }
}

/// `count` per second of `elapsed_ns`: NaN over no time (nothing was measured), as the
/// stored rates are.
pub fn per_second(count: f64, elapsed_ns: u64) -> f64 {
    if elapsed_ns > 0 {
        count / (elapsed_ns as f64 / 1e9)
    } else {
        f64::NAN
    }
}

/// A value of the metric `name` declared in `defs`, with the declared unit.
pub fn metric(defs: &[MetricDef], name: &str, value: f64) -> Metric {
    // Every name given here is declared (each kind's tests run its record code against its
    // declarations, see [`testing::assert_declared`]); an undeclared one would still be
    // stored, without a unit.
    let unit = iolab_metrics::find(defs, name).map_or("", |d| d.unit.as_ref());
    Metric::new(name, value, unit)
}

/// A throughput series of fixed-width intervals, from each interval's `(ops, bytes)`.
pub fn series(name: &str, width_ns: u64, buckets: impl IntoIterator<Item = (u64, u64)>) -> Series {
    let (ops, bytes) = buckets.into_iter().unzip();
    Series {
        name: name.into(),
        width_ns,
        ops,
        bytes,
    }
}

/// For the kinds' tests of the records they write.
pub mod testing {
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
        assert_declared_as(rec, own, &[]);
    }

    /// [`assert_declared`] for a kind that words the common metrics its own way
    /// ([`crate::Workload::common_as`]).
    pub fn assert_declared_as(rec: &RunRecord, own: &[MetricDef], common_as: &[MetricDef]) {
        let defs = iolab_metrics::with_common_as(own, common_as);
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
