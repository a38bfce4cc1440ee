//! Engine results → the plain records of the results database. One place, so that
//! `iolab micro`, `iolab run FILE.f` and experiments store the same metric names with the
//! same definitions (see [`crate::METRICS`] and docs/metrics.md).

use iolab_engine::stats::{Bucket, LatencyHistogram, LatencySummary};
use iolab_engine::usage::Usage;
use iolab_engine::workload::WorkloadResult;
use iolab_engine::MicroResult;
use iolab_store::{FlowopStats, LatencyStats, Metric, RunRecord, Series};
use serde_json::json;

/// The run metrics of [`crate::METRICS`], from totals over the measured interval.
fn headline(
    record: &mut RunRecord,
    ops: u64,
    bytes: u64,
    elapsed_ns: u64,
    lat: &LatencySummary,
    usage: &Usage,
) {
    let t = elapsed_ns as f64 / 1e9;
    let rate = |x: f64| if t > 0.0 { x / t } else { f64::NAN };
    let m = &mut record.metrics;
    m.push(Metric::new("ops_per_s", rate(ops as f64), "op/s"));
    m.push(Metric::new(
        "mib_per_s",
        rate(bytes as f64) / 1048576.0,
        "MiB/s",
    ));
    m.push(Metric::new("ops", ops as f64, ""));
    m.push(Metric::new("bytes", bytes as f64, "B"));
    let nan_if_empty = |v: f64| if lat.count == 0 { f64::NAN } else { v };
    m.push(Metric::new("lat_mean_ns", nan_if_empty(lat.mean_ns), "ns"));
    m.push(Metric::new(
        "lat_p50_ns",
        nan_if_empty(lat.p50_ns as f64),
        "ns",
    ));
    m.push(Metric::new(
        "lat_p90_ns",
        nan_if_empty(lat.p90_ns as f64),
        "ns",
    ));
    m.push(Metric::new(
        "lat_p99_ns",
        nan_if_empty(lat.p99_ns as f64),
        "ns",
    ));
    m.push(Metric::new(
        "lat_p999_ns",
        nan_if_empty(lat.p999_ns as f64),
        "ns",
    ));
    m.push(Metric::new(
        "lat_max_ns",
        nan_if_empty(lat.max_ns as f64),
        "ns",
    ));
    m.push(Metric::new("cpu_usr_s", usage.user_ns as f64 / 1e9, "s"));
    m.push(Metric::new("cpu_sys_s", usage.sys_ns as f64 / 1e9, "s"));
    m.push(Metric::new("elapsed_s", t, "s"));
    m.push(Metric::new(
        "ctx_voluntary",
        usage.voluntary_switches as f64,
        "",
    ));
    m.push(Metric::new(
        "ctx_involuntary",
        usage.involuntary_switches as f64,
        "",
    ));
}

fn latency_stats(s: &LatencySummary) -> LatencyStats {
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

fn series(name: &str, width_ns: u64, buckets: &[Bucket]) -> Series {
    Series {
        name: name.into(),
        width_ns,
        ops: buckets.iter().map(|b| b.ops).collect(),
        bytes: buckets.iter().map(|b| b.bytes).collect(),
    }
}

/// Adds a micro test's measurements to `record`.
pub fn add_micro(record: &mut RunRecord, r: &MicroResult) {
    let lat = r.latency.summary();
    headline(record, r.ops, r.bytes, r.elapsed_ns, &lat, &r.usage);
    record
        .metrics
        .push(Metric::new("final_sync_ns", r.final_sync_ns as f64, "ns"));
    let p = &r.plan;
    record.flowops.push(FlowopStats {
        name: p.access.name().into(),
        kind: if p.writes() { "write" } else { "read" }.into(),
        ops: r.ops,
        bytes: r.bytes,
        errors: 0,
        latency: latency_stats(&lat),
        histogram: r.latency.buckets(),
        extra: json!({
            "sync": p.sync.name(),
            "engine": p.engine.name(),
            "bs": p.bs,
            "threads": p.threads,
            "time_limited": r.time_limited,
            "reused_files": r.reused_files,
        }),
    });
    if r.sync_latency.count() > 0 {
        let s = r.sync_latency.summary();
        record.flowops.push(FlowopStats {
            name: "record sync".into(),
            kind: "sync".into(),
            ops: s.count,
            bytes: 0,
            errors: 0,
            latency: latency_stats(&s),
            histogram: r.sync_latency.buckets(),
            extra: json!({ "sync": p.sync.name() }),
        });
    }
    record
        .series
        .push(series("io", r.interval_ns, &r.intervals));
}

/// Adds a workload run's measurements to `record`: the headline metrics are filebench's IO
/// Summary (its I/O flowops), every flowop gets its own row.
pub fn add_workload(record: &mut RunRecord, r: &WorkloadResult) {
    let (ops, read_ops, write_ops, bytes, _) = r.io_summary();
    let mut io_lat = LatencyHistogram::default();
    for f in r.flowops.iter().filter(|f| f.is_io) {
        io_lat.merge(&f.latency);
    }
    headline(
        record,
        ops,
        bytes,
        r.elapsed_ns,
        &io_lat.summary(),
        &r.usage,
    );
    let t = r.elapsed_ns as f64 / 1e9;
    if t > 0.0 {
        record
            .metrics
            .push(Metric::new("read_ops_per_s", read_ops as f64 / t, "op/s"));
        record
            .metrics
            .push(Metric::new("write_ops_per_s", write_ops as f64 / t, "op/s"));
    }
    record
        .metrics
        .push(Metric::new("threads", r.threads as f64, ""));
    for f in &r.flowops {
        let lat = f.latency.summary();
        record.flowops.push(FlowopStats {
            name: f.name.clone(),
            kind: f.kind.into(),
            ops: f.ops,
            bytes: f.bytes,
            errors: 0,
            latency: latency_stats(&lat),
            histogram: f.latency.buckets(),
            extra: json!({
                "ran_dry": f.ran_dry,
                "in_io_summary": f.is_io,
                "read": f.is_read,
                "write": f.is_write,
                "samples": f.samples,
            }),
        });
    }
    record
        .series
        .push(series("io", r.interval_ns, &r.intervals));
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_store::{NewRun, RunStatus, Timestamp};
    use iolab_workload::micro::{Access, DataPattern, EngineKind, MicroSpec, SyncMode};

    fn empty_record() -> RunRecord {
        RunRecord::new(NewRun {
            config: iolab_store::ConfigId(1),
            repetition: 0,
            seed: 1,
            status: RunStatus::Ok,
            error: None,
            started_at: Timestamp(0),
            ended_at: Timestamp(0),
            elapsed_ns: 0,
            environment: json!({}),
        })
    }

    #[test]
    fn micro_metrics_are_the_engine_totals_over_elapsed() {
        let _hang = iolab_testkit::timeout(120);
        let plan = MicroSpec {
            access: Access::Write,
            sync: SyncMode::Normal,
            bs: 4096,
            size: 4096 * 1000,
            threads: 2,
            dir: "/nonexistent".into(),
            engine: Some(EngineKind::Null),
            iodepth: None,
            time_limit: None,
            loops: 1,
            seed: 3,
            data: DataPattern::Zeros,
        }
        .validate()
        .unwrap();
        let r = iolab_engine::run_micro(&plan, &mut ()).unwrap();
        let mut rec = empty_record();
        add_micro(&mut rec, &r);
        let get = |n: &str| rec.metrics.iter().find(|m| m.name == n).unwrap().value;
        assert_eq!(get("ops"), 1000.0);
        assert_eq!(get("bytes"), 4096.0 * 1000.0);
        let expect = 1000.0 / (r.elapsed_ns as f64 / 1e9);
        assert!((get("ops_per_s") - expect).abs() < 1e-6 * expect);
        for (name, unit, _) in crate::METRICS {
            let m = rec.metrics.iter().find(|m| m.name == *name);
            assert_eq!(m.map(|m| m.unit.as_str()), Some(*unit), "{name}");
        }
        assert_eq!(rec.flowops[0].ops, 1000);
        assert_eq!(rec.series[0].ops.iter().sum::<u64>(), 1000);
    }
}
