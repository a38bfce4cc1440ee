//! Records with exact, deterministic contents for the integration tests.

#![allow(dead_code)]

use iolab_store::*;
use serde_json::{json, Map, Value};

pub fn experiment(name: &str) -> NewExperiment {
    NewExperiment {
        name: name.into(),
        source: format!("{name}.toml"),
        spec: json!({
            "name": name,
            "matrix": {"fs": ["ext4", "xfs"], "data": ["journal", "ordered"]},
            "repetitions": {"min": 3, "max": 20, "target": 0.05},
            "ratio": 0.1 + 0.2,
        }),
        seed: u64::MAX - 1,
        created_at: Timestamp(1_700_000_000_123_456_789),
        iolab_version: "0.1.0".into(),
        host: json!({"kernel": "6.1.0-18-amd64", "cpu": "AMD EPYC", "memory_bytes": 25_769_803_776u64}),
    }
}

pub fn factors(pairs: &[(&str, Value)]) -> Map<String, Value> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect()
}

pub fn config(store: &mut Store, exp: ExperimentId, label: &str) -> ConfigId {
    store
        .add_config(&NewConfig {
            experiment: exp,
            label: label.into(),
            factors: factors(&[("fs", json!("ext4")), ("data", json!(label))]),
        })
        .unwrap()
}

/// How big a run record is.
#[derive(Clone, Copy)]
pub struct Size {
    pub buckets: u64,
    pub intervals: u64,
    pub monitor_metrics: u64,
    pub samples: u64,
}

pub const SMALL: Size = Size {
    buckets: 5,
    intervals: 4,
    monitor_metrics: 2,
    samples: 3,
};

/// A run whose every value derives from `(rep, status)`, so a reader can tell a complete
/// run from a partial one.
pub fn record(config: ConfigId, rep: u32, status: RunStatus, size: Size) -> RunRecord {
    let r = u64::from(rep);
    let run = NewRun {
        config,
        repetition: rep,
        seed: 0x9e37_79b9_7f4a_7c15 ^ r,
        status,
        error: match status {
            RunStatus::Ok => None,
            RunStatus::Failed => Some(format!("write: No space left on device (rep {rep})")),
            RunStatus::Interrupted => Some("interrupted by the user".into()),
        },
        started_at: Timestamp(1_700_000_100_000_000_000 + i64::from(rep) * 1_000_000_000),
        ended_at: Timestamp(1_700_000_100_500_000_000 + i64::from(rep) * 1_000_000_000),
        elapsed_ns: 500_000_000 + r,
        environment: json!({
            "kernel": "6.1.0-18-amd64",
            "fs": "ext4",
            "mount_options": "rw,relatime,data=ordered",
            "scheduler": "mq-deadline",
            "tunables": {"vm.dirty_ratio": 20, "vm.dirty_expire_centisecs": 3000},
        }),
    };
    let mut rec = RunRecord::new(run);
    // Sorted by name: the order the store gives them back in.
    rec.metrics = vec![
        Metric::new("bytes_per_s", 1.5e8 + r as f64, "B/s"),
        Metric::new("cpu_sys_pct", 12.25, "%"),
        Metric::new("ops", (1000 + r) as f64, ""),
        Metric::new("ops_per_s", 2000.0 + r as f64 / 3.0, "op/s"),
    ];
    rec.flowops = (0..2)
        .map(|i| FlowopStats {
            name: format!("flowop{i}"),
            kind: if i == 0 { "read" } else { "write" }.into(),
            ops: 1000 + r + i,
            bytes: (1000 + r + i) * 4096,
            errors: i,
            latency: LatencyStats {
                count: 1000 + r + i,
                mean_ns: 12_345.678 + r as f64,
                stdev_ns: 2_000.5,
                min_ns: 900,
                p50_ns: 11_000,
                p90_ns: 20_000,
                p99_ns: 50_000,
                p999_ns: 90_000,
                max_ns: 1_000_000 + r,
            },
            histogram: (0..size.buckets)
                .map(|b| (1000 + b * 37 + b * b, b % 7 + 1 + r))
                .collect(),
            extra: json!({"is_io": true, "ran_dry": i}),
        })
        .collect();
    rec.series = vec![Series {
        name: "io".into(),
        width_ns: 1_000_000_000,
        ops: (0..size.intervals).map(|k| 100 + k + r).collect(),
        bytes: (0..size.intervals).map(|k| (100 + k + r) * 4096).collect(),
    }];
    rec.monitor = (0..size.monitor_metrics)
        .map(|m| MonitorSeries {
            metric: format!("disk.vdb.m{m}"),
            unit: "%".into(),
            points: (0..size.samples)
                .map(|k| {
                    (
                        k as i64 * 100_000_000 - 50_000_000,
                        (k + m + r) as f64 * 0.5,
                    )
                })
                .collect(),
        })
        .collect();
    rec.findings = vec![Finding {
        check: "cache-fit".into(),
        severity: Severity::Warning,
        evidence: json!({"dataset_bytes": 1_073_741_824u64, "mem_total_bytes": 25_769_803_776u64}),
        explanation: "The dataset fits in the page cache.".into(),
        fix: "Use a dataset at least 3× the memory, or cap the cache with a cgroup.".into(),
    }];
    // A tool's raw output is bytes, not text: keep a byte that is not UTF-8.
    rec.outputs = vec![
        RunOutput {
            name: "stdout".into(),
            content: format!("{{\"rep\": {rep}}}\n").into_bytes(),
        },
        RunOutput {
            name: "file:result.bin".into(),
            content: vec![0, 0xff, 0xfe, b'\n'],
        },
    ];
    rec
}

/// Asserts that `got` holds exactly `want`.
pub fn assert_run_eq(got: &RunDetails, want: &RunRecord) {
    let (g, w) = (&got.run, &want.run);
    assert_eq!(g.config, w.config);
    assert_eq!(g.repetition, w.repetition);
    assert_eq!(g.seed, w.seed);
    assert_eq!(g.status, w.status);
    assert_eq!(g.error, w.error);
    assert_eq!(g.started_at, w.started_at);
    assert_eq!(g.ended_at, w.ended_at);
    assert_eq!(g.elapsed_ns, w.elapsed_ns);
    assert_eq!(g.environment, w.environment);
    assert_eq!(got.metrics, want.metrics);
    assert_eq!(got.flowops, want.flowops);
    assert_eq!(got.series, want.series);
    assert_eq!(got.monitor, want.monitor);
    assert_eq!(got.findings, want.findings);
}
