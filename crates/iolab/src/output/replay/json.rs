//! Machine-readable output, schema `iolab.replay/1` (docs/json.md).

use std::io::{self, Write};

use serde_json::json;

use super::ReplayReport;
use crate::output::json::{write, Kind};
use crate::output::Formatter;

pub struct Json;

impl Formatter<ReplayReport> for Json {
    fn write(&self, report: &ReplayReport, out: &mut dyn Write) -> io::Result<()> {
        let r = &report.result;
        let days: Vec<_> = r
            .all()
            .map(|d| {
                let phases: Vec<_> = d
                    .phases
                    .iter()
                    .map(|p| {
                        json!({
                            "phase": p.kind,
                            "elapsed_ns": p.elapsed_ns,
                            "files": p.files,
                            "read_bytes": p.read_bytes,
                            "write_bytes": p.write_bytes,
                            "steps": p.steps,
                            "mib_per_s": p.mib_per_s(),
                            "files_per_s": p.files_per_s(),
                        })
                    })
                    .collect();
                json!({
                    "day": d.day,
                    "time_ns": d.time_ns,
                    "flush_ns": d.end.flush_ns,
                    "other_ns": d.end.other_ns,
                    "mount_id": d.end.mount_id,
                    "resident_bytes": d.end.resident_bytes,
                    "file_bytes": d.end.file_bytes,
                    "phases": phases,
                })
            })
            .collect();
        let doc = json!({
            "host": report.host,
            "between_days": report.between_days,
            "findings": report.findings,
            "system": report.system,
            "result": {
                "elapsed_ns": r.elapsed_ns,
                "usage": r.usage,
                "days": days,
            },
        });
        write(Kind::Replay, &doc, out)
    }
}
