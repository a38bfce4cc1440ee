//! Machine-readable output (`iolab.iozone/1`): per run, the plan and every figure with
//! iolab's throughput, iozone's throughput-mode figures and each thread's numbers.

use std::io::{self, Write};
use std::time::UNIX_EPOCH;

use serde_json::json;

use super::IozoneReport;
use crate::output::Formatter;

pub struct Json;

impl Formatter<IozoneReport> for Json {
    fn write(&self, report: &IozoneReport, out: &mut dyn Write) -> io::Result<()> {
        const MIB: f64 = 1048576.0;
        let started = report
            .started_at
            .duration_since(UNIX_EPOCH)
            .map(|t| t.as_secs_f64())
            .unwrap_or(0.0);
        let runs: Vec<_> = report
            .results
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let figures: Vec<_> = r
                    .figures
                    .iter()
                    .map(|f| {
                        json!({
                            "figure": f.figure,
                            "ops": f.ops(),
                            "bytes": f.bytes(),
                            "elapsed_ns": f.elapsed_ns,
                            "mib_per_s": f.rate() / MIB,
                            "children_see_mib_per_s": f.children_see() / MIB,
                            "parent_sees_mib_per_s": f.parent_sees() / MIB,
                            "parent_ns": f.parent_ns,
                            "min_xfer_bytes": f.min_xfer(),
                            "flush_ns": f.flush_ns(),
                            "purge_ns": f.purge_ns,
                            "cached_bytes": f.cached_bytes,
                            "latency": (f.latency.count() > 0).then(|| f.latency.summary()),
                            "cpu": f.usage,
                            "cpu_utilization_percent": f.cpu_utilization(),
                            "cpu_ns_per_op": if f.ops() > 0 {
                                f.usage.cpu_ns() as f64 / f.ops() as f64
                            } else {
                                0.0
                            },
                            "threads": f.children,
                        })
                    })
                    .collect();
                json!({
                    "plan": r.plan,
                    "figures": figures,
                    "files": r.files,
                    "findings": report.findings.get(i),
                    "system": report.system.get(i),
                })
            })
            .collect();
        let doc = json!({
            "started_unix_s": started,
            "host": report.host,
            "runs": runs,
        });
        crate::output::json::write(crate::output::json::Kind::Iozone, &doc, out)
    }
}
