//! Machine-readable output, schema `iolab.sqlite/1` (docs/json.md).

use std::io::{self, Write};
use std::time::UNIX_EPOCH;

use iolab_kind::output::Formatter;
use serde_json::json;

use super::SqliteReport;

pub struct Json;

impl Formatter<SqliteReport> for Json {
    fn write(&self, report: &SqliteReport, out: &mut dyn Write) -> io::Result<()> {
        let r = &report.result;
        let started = report
            .started_at
            .duration_since(UNIX_EPOCH)
            .map(|t| t.as_secs_f64())
            .unwrap_or(0.0);
        // Rates are the stored metrics: null where the database holds NaN (nothing was
        // measured).
        let m = |name: &str| report.metric(name);
        let system = report.system_cpu.map(|(a, b)| {
            let s = b.percent_since(&a);
            json!({
                "usr_pct": s.usr, "sys_pct": s.sys, "iowait_pct": s.iowait,
                "idle_pct": s.idle, "steal_pct": s.steal, "active_pct": s.active,
            })
        });
        let c = &r.calls;
        let doc = json!({
            "started_unix_s": started,
            "host": report.host,
            "plan": r.plan,
            "sqlite_library": r.library,
            "settings": r.settings,
            "findings": report.findings,
            "system": report.system,
            "result": {
                "elapsed_ns": r.elapsed_ns,
                "setup_ns": r.setup_ns,
                "transactions": r.transactions,
                "time_limited": r.time_limited,
                "transactions_per_s": m("ops_per_s"),
                "latency": r.latency.summary(),
                "latency_histogram": r.latency.buckets(),
                "checkpoint_ns": r.checkpoint_ns,
                "syscalls": c,
                "syscalls_per_transaction": {
                    "fsync": m("fsyncs_per_tx"),
                    "dir_fsync": m("dir_fsyncs_per_tx"),
                    "unlink": m("unlinks_per_tx"),
                    "ftruncate": m("ftruncates_per_tx"),
                    "write": m("writes_per_tx"),
                    "write_bytes": r.per_transaction(c.write_bytes),
                },
                "cpu": {
                    "user_ns": r.usage.user_ns,
                    "sys_ns": r.usage.sys_ns,
                    "cpu_ns_per_transaction": r.per_transaction(r.usage.cpu_ns()),
                },
                "context_switches": {
                    "voluntary": r.usage.voluntary_switches,
                    "involuntary": r.usage.involuntary_switches,
                },
                "system_cpu": system,
                "intervals": {
                    "width_ns": r.interval_ns,
                    "transactions": r.intervals.iter().map(|b| b.ops).collect::<Vec<_>>(),
                    "write_bytes": r.intervals.iter().map(|b| b.bytes).collect::<Vec<_>>(),
                },
                "threads": r.threads,
                "files": r.files,
            }
        });
        iolab_kind::output::json::write(super::SCHEMA, &doc, out)
    }
}
