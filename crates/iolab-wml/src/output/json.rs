//! Machine-readable workload results, schema `iolab.run/1`.

use std::io::{self, Write};
use std::time::UNIX_EPOCH;

use serde_json::json;

use super::RunReport;
use iolab_kind::output::Formatter;
use iolab_kind::record::per_second;

pub struct Json;

impl Formatter<RunReport> for Json {
    fn write(&self, report: &RunReport, out: &mut dyn Write) -> io::Result<()> {
        let r = &report.run.result;
        let stored = |name: &str| report.run.metric(name);
        let rate = |x: u64| per_second(x as f64, r.elapsed_ns);
        let (ops, _, _, bytes, _) = r.io_summary();
        let flowops: Vec<_> = r
            .flowops
            .iter()
            .map(|f| {
                json!({
                    "name": f.name,
                    "kind": f.kind,
                    "ops": f.ops,
                    "ops_per_s": rate(f.ops),
                    "bytes": f.bytes,
                    "mib_per_s": rate(f.bytes) / 1048576.0,
                    "latency": f.latency.summary(),
                    "latency_histogram": f.latency.buckets(),
                    "ran_dry": f.ran_dry,
                    "in_io_summary": f.is_io,
                    "testrandvar": f.samples.map(|(n, m, sd)| json!({"samples": n, "mean": m, "sd": sd})),
                })
            })
            .collect();
        let doc = json!({
            "source": report.source,
            "seed": report.seed,
            "started_unix_s": report.run.started_at.duration_since(UNIX_EPOCH).map(|d| d.as_secs_f64()).unwrap_or(0.0),
            "host": report.run.host,
            "warnings": report.warnings,
            "findings": report.run.findings,
            "system": report.run.system,
            "result": {
                "elapsed_ns": r.elapsed_ns,
                "threads": r.threads,
                "engine": { "name": r.engine, "iodepth": r.iodepth, "caps": r.engine.caps() },
                // Only for an engine without I/O: then the run measured iolab itself.
                "iolab_cost": r.own_cost().map(|c| json!({
                    "flowops": c.flowops,
                    "flowops_per_s": c.flowops_per_s,
                    "cpu_ns_per_flowop": c.cpu_ns_per_flowop,
                })),
                "finished_threads": r.finished_threads,
                "io_summary": {
                    "ops": ops,
                    "ops_per_s": stored("ops_per_s"),
                    "read_ops_per_s": stored("read_ops_per_s"),
                    "write_ops_per_s": stored("write_ops_per_s"),
                    "bytes": bytes,
                    "mib_per_s": stored("mib_per_s"),
                    "mean_latency_ns": stored("lat_mean_ns"),
                },
                "flowops": flowops,
                "cpu": {
                    "user_ns": r.usage.user_ns,
                    "sys_ns": r.usage.sys_ns,
                    "cpu_ns_per_op": if ops > 0 { r.usage.cpu_ns() as f64 / ops as f64 } else { f64::NAN },
                },
                "context_switches": {
                    "voluntary": r.usage.voluntary_switches,
                    "involuntary": r.usage.involuntary_switches,
                },
                "system_cpu": report.run.system_cpu.map(|(a, b)| {
                    let s = b.percent_since(&a);
                    json!({"usr_pct": s.usr, "sys_pct": s.sys, "iowait_pct": s.iowait, "idle_pct": s.idle, "active_pct": s.active})
                }),
                "intervals": {
                    "width_ns": r.interval_ns,
                    "ops": r.intervals.iter().map(|b| b.ops).collect::<Vec<_>>(),
                    "bytes": r.intervals.iter().map(|b| b.bytes).collect::<Vec<_>>(),
                },
                "populate": r.populate.iter().map(|(name, p)| json!({
                    "fileset": name,
                    "threads": p.threads,
                    "reused": p.reused,
                    "removed": p.removed,
                    "dirs_created": p.dirs_created,
                    "files_created": p.files_created,
                    "files_resized": p.files_resized,
                    "files_kept": p.files_kept,
                    "leafdirs_created": p.leafdirs_created,
                    "bytes_written": p.bytes_written,
                    "elapsed_ns": p.elapsed.as_nanos() as u64,
                })).collect::<Vec<_>>(),
            }
        });
        iolab_kind::output::json::write(super::SCHEMA, &doc, out)
    }
}
