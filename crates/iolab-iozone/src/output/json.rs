//! Machine-readable output (`iolab.iozone/1`): per run, the plan and every figure with
//! iolab's throughput, iozone's throughput-mode figures and each thread's numbers.

use std::io::{self, Write};
use std::time::UNIX_EPOCH;

use iolab_kind::output::{system_summary, Formatter};
use serde_json::json;

use super::{children_and_parent, rate, IozoneReport};
use crate::kind::MIB;

pub struct Json;

impl Formatter<IozoneReport> for Json {
    fn write(&self, report: &IozoneReport, out: &mut dyn Write) -> io::Result<()> {
        let started = report
            .started_at
            .duration_since(UNIX_EPOCH)
            .map(|t| t.as_secs_f64())
            .unwrap_or(0.0);
        let runs: Vec<_> = report
            .runs
            .iter()
            .map(|run| {
                let r = &run.output;
                let figures: Vec<_> = r
                    .figures
                    .iter()
                    .map(|f| {
                        // The stored rates: NaN (a pass not timed) is null.
                        let (children, parent) = children_and_parent(run, f);
                        json!({
                            "figure": f.figure,
                            "ops": f.ops(),
                            "bytes": f.bytes(),
                            "elapsed_ns": f.elapsed_ns,
                            "mib_per_s": rate(run, f.figure) / MIB,
                            "children_see_mib_per_s": children / MIB,
                            "parent_sees_mib_per_s": parent / MIB,
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
                    "findings": run.end.findings,
                    "system": system_summary(&run.end.metrics),
                })
            })
            .collect();
        let doc = json!({
            "started_unix_s": started,
            "host": report.host,
            "runs": runs,
        });
        iolab_kind::output::json::write(super::SCHEMA, &doc, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::testing::{recorded, report, result};

    /// The figures of the first run of `report`'s JSON.
    fn figures(report: &IozoneReport) -> Vec<serde_json::Value> {
        let mut out = Vec::new();
        Json.write(report, &mut out).unwrap();
        let doc: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(doc["schema"], crate::output::SCHEMA);
        doc["runs"][0]["figures"].as_array().unwrap().clone()
    }

    #[test]
    fn rates_are_the_stored_metrics_and_null_where_the_database_holds_none() {
        for threads in [1, 2] {
            // 1 MiB per thread in 0.5 s.
            let run = recorded(result(1 << 20, 4 << 10, threads, 500_000_000));
            let stored = |n: &str| run.end.metric(n).unwrap();
            let want = [
                stored("write_mib_per_s"),
                if threads > 1 {
                    stored("write_children_mib_per_s")
                } else {
                    2.0
                },
            ];
            let f = &figures(&report(vec![run]))[0];
            assert_eq!(f["mib_per_s"].as_f64(), Some(want[0]));
            assert_eq!(f["mib_per_s"].as_f64(), Some(2.0 * f64::from(threads)));
            assert_eq!(f["children_see_mib_per_s"].as_f64(), Some(want[1]));
            // Timed at 0 ns: no rate, NULL in the database, null here.
            let run = recorded(result(1 << 20, 4 << 10, threads, 0));
            let f = &figures(&report(vec![run]))[0];
            assert!(f["mib_per_s"].is_null(), "{f}");
            assert!(f["children_see_mib_per_s"].is_null(), "{f}");
            assert!(f["parent_sees_mib_per_s"].is_null(), "{f}");
        }
    }
}
