//! Machine-readable output, schema `iolab.bonnie/1` (docs/json.md).

use std::io::{self, Write};

use serde_json::json;

use super::BonnieReport;
use iolab_kind::output::Formatter;

pub struct Json;

impl Formatter<BonnieReport> for Json {
    fn write(&self, report: &BonnieReport, out: &mut dyn Write) -> io::Result<()> {
        let r = &report.result;
        let usage = r.usage();
        let phases: Vec<_> = r
            .phases
            .iter()
            .map(|p| {
                let f = p.figures();
                json!({
                    "phase": p.phase.label(),
                    "title": p.phase.title(),
                    "unit": p.phase.unit(),
                    "operation": p.phase.operation(),
                    "elapsed_ns": p.elapsed_ns,
                    "ops": p.ops,
                    "bytes": p.bytes,
                    "rate": f.rate,
                    "ops_per_s": p.ops_per_s(),
                    "kib_per_s": p.kib_per_s(),
                    "cpu_pct": f.cpu_pct,
                    "cpu_ns": p.cpu_ns,
                    "usage": p.usage,
                    "threads": p.threads,
                    "latency": p.latency.summary(),
                    "latency_histogram": p.latency.buckets(),
                    "short": f.short,
                    "timing_error_ns": p.timing_error_ns,
                    "rel_error": f.rel_error,
                })
            })
            .collect();
        let doc = json!({
            "host": report.host,
            "plan": r.plan,
            "findings": report.findings,
            "system": report.system,
            "result": {
                "elapsed_ns": r.elapsed_ns,
                "clock": { "tsc": r.clock_tsc, "read_ns": r.clock_read_ns },
                "cpu": { "ns": r.cpu_ns(), "user_ns": usage.user_ns, "sys_ns": usage.sys_ns },
                "phases": phases,
                "file": r.file,
                "file_dir": r.file_dir,
            },
        });
        iolab_kind::output::json::write(super::SCHEMA, &doc, out)
    }
}
