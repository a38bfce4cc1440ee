//! Fills a results database with one synthetic experiment of N runs (for the report's speed
//! benchmark, bench/report-speed.sh): realistic metrics, an `io` series, monitor series and
//! latency histograms, with a seeded generator so every database is the same.
//!
//!     cargo run --release -p iolab-report --example synth_db -- DB RUNS [CONFIGS]

use iolab_stats::Rng;
use iolab_store::*;
use serde_json::json;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let (Some(path), Some(runs)) = (args.get(1), args.get(2)) else {
        return Err("usage: synth_db DB RUNS [CONFIGS]".into());
    };
    let runs: u32 = runs.parse()?;
    let configs: u32 = args.get(3).map_or(Ok(4), |s| s.parse())?;
    let mut store = Store::open(path)?;
    let exp = store.create_experiment(&NewExperiment {
        name: format!("synthetic: {runs} runs"),
        source: "synth_db".into(),
        spec: json!({"repetitions": {"min": runs / configs}}),
        seed: 1,
        created_at: Timestamp::now(),
        iolab_version: env!("CARGO_PKG_VERSION").into(),
        host: json!({"kernel_release": "6.1.0", "cpu_model": "synthetic", "logical_cpus": 8,
                     "mem_total_bytes": 17_179_869_184u64, "virtualization": {"vm": false}}),
    })?;
    let new: Vec<NewConfig> = (0..configs)
        .map(|i| NewConfig {
            experiment: exp,
            label: format!("bs={}k", 4 << i),
            factors: Default::default(),
        })
        .collect();
    let ids = store.add_configs(&new)?;
    let mut rng = Rng::new(42);
    let per = runs / configs;
    for (ci, &config) in ids.iter().enumerate() {
        let base = 10_000.0 / (ci as f64 + 1.0);
        for rep in 0..per {
            let ops = base * (1.0 + 0.05 * rng.normal());
            let mut r = RunRecord::new(NewRun {
                config,
                repetition: rep,
                seed: rng.next_u64(),
                status: RunStatus::Ok,
                error: None,
                started_at: Timestamp::now(),
                ended_at: Timestamp::now(),
                elapsed_ns: 10_000_000_000,
                environment: json!({"fs": "ext4"}),
            });
            let bs = 4096.0 * f64::from(1u32 << ci);
            r.metrics.push(Metric::new("ops_per_s", ops, "op/s"));
            r.metrics
                .push(Metric::new("mib_per_s", ops * bs / 1_048_576.0, "MiB/s"));
            r.metrics.push(Metric::new("lat_mean_ns", 1e9 / ops, "ns"));
            r.metrics.push(Metric::new("lat_p99_ns", 4e9 / ops, "ns"));
            let hist: Vec<(u64, u64)> = (0..40)
                .map(|i| (1000 + i * 2500, 1 + rng.below(1000)))
                .collect();
            r.flowops.push(FlowopStats {
                name: "write".into(),
                kind: "write".into(),
                ops: (ops * 10.0) as u64,
                bytes: (ops * 10.0 * bs) as u64,
                errors: 0,
                latency: LatencyStats {
                    count: (ops * 10.0) as u64,
                    mean_ns: 1e9 / ops,
                    p99_ns: (4e9 / ops) as u64,
                    max_ns: (9e9 / ops) as u64,
                    ..LatencyStats::default()
                },
                histogram: hist,
                extra: json!({}),
            });
            let ops_s: Vec<u64> = (0..10)
                .map(|_| (ops * (1.0 + 0.1 * rng.normal())).max(0.0) as u64)
                .collect();
            r.series.push(Series {
                name: "io".into(),
                width_ns: 1_000_000_000,
                bytes: ops_s.iter().map(|o| (*o as f64 * bs) as u64).collect(),
                ops: ops_s,
            });
            for (m, unit, v) in [
                ("cpu.usr_pct", "%", 20.0),
                ("cpu.sys_pct", "%", 30.0),
                ("cpu.iowait_pct", "%", 10.0),
                ("dev.util_pct", "%", 80.0),
                ("dev.rkB_per_s", "kB/s", 0.0),
                ("dev.wkB_per_s", "kB/s", ops * bs / 1000.0),
            ] {
                r.monitor.push(MonitorSeries {
                    metric: m.into(),
                    unit: unit.into(),
                    points: (1..=10)
                        .map(|t| (t * 1_000_000_000, v * (1.0 + 0.05 * rng.normal())))
                        .collect(),
                });
            }
            store.record_run(&r)?;
        }
    }
    println!("{path}: experiment {exp}, {} runs", per * configs);
    Ok(())
}
