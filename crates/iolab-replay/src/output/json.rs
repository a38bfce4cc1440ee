//! Machine-readable output, schema `iolab.replay/1` (docs/json.md).

use std::io::{self, Write};

use serde_json::{json, Value};

use iolab_kind::output::Formatter;

use super::ReplayReport;

pub struct Json;

impl Formatter<ReplayReport> for Json {
    fn write(&self, report: &ReplayReport, out: &mut dyn Write) -> io::Result<()> {
        let r = &report.run.result;
        let days: Vec<Value> = r
            .all()
            .map(|d| {
                let mut v = serde_json::to_value(d.summary()).unwrap_or_default();
                v["phases"] = d.phases.iter().map(|p| json!(p.figures())).collect();
                v
            })
            .collect();
        let doc = json!({
            "host": report.run.host,
            "between_days": report.between_days.name(),
            "findings": report.run.findings,
            "system": report.run.system,
            "result": {
                "elapsed_ns": r.elapsed_ns,
                "usage": r.usage,
                "days": days,
            },
        });
        iolab_kind::output::json::write(super::SCHEMA, &doc, out)
    }
}
