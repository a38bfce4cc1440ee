//! The CSV export: one row per run (in the order they ran), with the configuration's factors
//! and the run's metrics as columns.
//!
//! Columns: `experiment_id, experiment, config_id, config, repetition, run_id, status, seed,
//! started_at, ended_at, elapsed_ns, error`, then one per factor (named after it), then one
//! per metric (`name (unit)`, or `name` without a unit), metrics sorted by name. A factor or
//! metric whose header would repeat an earlier one is prefixed with `factor:` or `metric:`.
//! Cells follow RFC 4180 (quoted when they hold a comma, quote or line break); lines end in
//! `\n`. A factor that is a string is written bare, other JSON values as JSON; a missing
//! factor or metric, and NaN, are empty cells.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::io::Write;

use serde_json::Value;

use super::ExportDocument;
use crate::types::{Config, ConfigId, RunDetails};

const FIXED: [&str; 12] = [
    "experiment_id",
    "experiment",
    "config_id",
    "config",
    "repetition",
    "run_id",
    "status",
    "seed",
    "started_at",
    "ended_at",
    "elapsed_ns",
    "error",
];

impl ExportDocument {
    /// Writes one row per run, in the order they ran (see the module documentation).
    pub fn write_csv(&self, out: &mut dyn Write) -> std::io::Result<()> {
        write_csv(self, out)
    }
}

fn write_csv(doc: &ExportDocument, out: &mut dyn Write) -> std::io::Result<()> {
    // Factor names in first-seen order.
    let mut factor_names: Vec<&String> = Vec::new();
    let mut seen = BTreeSet::new();
    for c in &doc.configs {
        for k in c.config.factors.keys() {
            if seen.insert(k) {
                factor_names.push(k);
            }
        }
    }

    // Run ids grow in the order runs start.
    let mut runs: Vec<&RunDetails> = doc.configs.iter().flat_map(|c| &c.runs).collect();
    runs.sort_by_key(|r| r.run.id);
    let mut metric_units: BTreeMap<String, String> = BTreeMap::new();
    for full in &runs {
        for m in &full.metrics {
            metric_units
                .entry(m.name.clone())
                .or_insert_with(|| m.unit.clone());
        }
    }

    let mut header: Vec<String> = FIXED.iter().map(|s| s.to_string()).collect();
    let mut taken: HashSet<String> = header.iter().cloned().collect();
    let mut unique = |name: String, prefix: &str| {
        let name = if taken.contains(&name) {
            format!("{prefix}:{name}")
        } else {
            name
        };
        taken.insert(name.clone());
        name
    };
    for f in &factor_names {
        let h = unique((*f).clone(), "factor");
        header.push(h);
    }
    for (name, unit) in &metric_units {
        let h = if unit.is_empty() {
            name.clone()
        } else {
            format!("{name} ({unit})")
        };
        let h = unique(h, "metric");
        header.push(h);
    }
    write_row(out, header.iter().map(String::as_str))?;

    let configs: BTreeMap<ConfigId, &Config> = doc
        .configs
        .iter()
        .map(|c| (c.config.id, &c.config))
        .collect();
    let exp = &doc.experiment;
    for full in &runs {
        let r = &full.run;
        let config = configs[&r.config];
        let mut row: Vec<String> = vec![
            exp.id.to_string(),
            exp.name.clone(),
            config.id.to_string(),
            config.label.clone(),
            r.repetition.to_string(),
            r.id.to_string(),
            r.status.to_string(),
            r.seed.to_string(),
            r.started_at.to_rfc3339(),
            r.ended_at.to_rfc3339(),
            r.elapsed_ns.to_string(),
            r.error.clone().unwrap_or_default(),
        ];
        for f in &factor_names {
            row.push(match config.factors.get(*f) {
                None | Some(Value::Null) => String::new(),
                Some(Value::String(s)) => s.clone(),
                Some(other) => other.to_string(),
            });
        }
        let values: BTreeMap<&str, f64> = full
            .metrics
            .iter()
            .map(|m| (m.name.as_str(), m.value))
            .collect();
        for name in metric_units.keys() {
            row.push(match values.get(name.as_str()) {
                Some(v) if !v.is_nan() => v.to_string(),
                _ => String::new(),
            });
        }
        write_row(out, row.iter().map(String::as_str))?;
    }
    Ok(())
}

fn write_row<'a>(out: &mut dyn Write, cells: impl Iterator<Item = &'a str>) -> std::io::Result<()> {
    let mut line = String::new();
    for (i, cell) in cells.enumerate() {
        if i > 0 {
            line.push(',');
        }
        if cell.contains([',', '"', '\n', '\r']) {
            line.push('"');
            line.push_str(&cell.replace('"', "\"\""));
            line.push('"');
        } else {
            line.push_str(cell);
        }
    }
    line.push('\n');
    out.write_all(line.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::write_row;

    #[test]
    fn cells_are_quoted_per_rfc_4180() {
        let mut out = Vec::new();
        write_row(
            &mut out,
            ["plain", "a,b", "say \"hi\"", "two\nlines", ""].into_iter(),
        )
        .unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "plain,\"a,b\",\"say \"\"hi\"\"\",\"two\nlines\",\n"
        );
    }
}
