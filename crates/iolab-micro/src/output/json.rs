//! Machine-readable output, schema `iolab.micro/1` (docs/json.md). The schema is bumped
//! whenever a field changes meaning or goes away; new fields may appear within a version
//! (`findings`, the checks' verdicts, and `system`, the monitors' whole-run summary, came
//! that way).

use std::io::{self, Write};
use std::time::UNIX_EPOCH;

use iolab_kind::output::{DeviceFigures, Formatter};
use serde_json::json;

use super::MicroReport;

pub struct Json;

impl Formatter<MicroReport> for Json {
    fn write(&self, report: &MicroReport, out: &mut dyn Write) -> io::Result<()> {
        let r = &report.result;
        // Rates are the stored metrics: null where the database holds NaN (nothing was
        // measured).
        let bytes_per_s = super::bytes_per_s(report);
        let p = &r.plan;
        let started = report
            .started_at
            .duration_since(UNIX_EPOCH)
            .map(|t| t.as_secs_f64())
            .unwrap_or(0.0);
        let system = report.system_cpu.map(|(a, b)| {
            let s = b.percent_since(&a);
            json!({
                "usr_pct": s.usr, "sys_pct": s.sys, "iowait_pct": s.iowait,
                "idle_pct": s.idle, "steal_pct": s.steal, "active_pct": s.active,
            })
        });
        // The latency summary and bytes per second are a device's figures, in the one shape
        // that readers of saved results (a simulated cache's device models) read back.
        let figures = DeviceFigures {
            latency: r.latency.summary(),
            bytes_per_s,
        };
        let mut result = json!({
            "elapsed_ns": r.elapsed_ns,
            "ops": r.ops,
            "bytes": r.bytes,
            "mib_per_s": report.metric("mib_per_s"),
            "iops": report.metric("ops_per_s"),
            "time_limited": r.time_limited,
            "latency_histogram": r.latency.buckets(),
            "sync_latency": r.sync_latency.summary(),
            "final_sync_ns": r.final_sync_ns,
            "cpu": {
                "user_ns": r.usage.user_ns,
                "sys_ns": r.usage.sys_ns,
                "usr_pct_of_core": super::pct_of_core(report, "cpu_usr_s"),
                "sys_pct_of_core": super::pct_of_core(report, "cpu_sys_s"),
                "cpu_ns_per_op": if r.ops > 0 { r.usage.cpu_ns() as f64 / r.ops as f64 } else { 0.0 },
            },
            "context_switches": {
                "voluntary": r.usage.voluntary_switches,
                "involuntary": r.usage.involuntary_switches,
            },
            "faults": { "minor": r.usage.minor_faults, "major": r.usage.major_faults },
            "system_cpu": system,
            "intervals": {
                "width_ns": r.interval_ns,
                "ops": r.intervals.iter().map(|b| b.ops).collect::<Vec<_>>(),
                "bytes": r.intervals.iter().map(|b| b.bytes).collect::<Vec<_>>(),
            },
            "threads": r.threads.iter().map(|t| json!({
                "ops": t.ops, "bytes": t.bytes, "elapsed_ns": t.elapsed_ns, "usage": t.usage,
            })).collect::<Vec<_>>(),
            "files": r.files,
            "reused_files": r.reused_files,
        });
        if let Some(fields) = result.as_object_mut() {
            fields.extend(figures.fields());
        }
        let doc = json!({
            "started_unix_s": started,
            "host": report.host,
            "plan": p,
            "findings": report.findings,
            "system": report.system,
            "open_flags": p.sync.open_flags(),
            "record_sync": p.record_sync(),
            "final_sync": p.final_sync(),
            "result": result,
        });
        iolab_kind::output::json::write(super::SCHEMA, &doc, out)
    }
}
