//! The JSON export: the experiment, its configurations, and every run with everything
//! measured in it, so that a report can be made from the file alone.
//!
//! ```text
//! { "format": "iolab-results", "format_version": 1, "schema_version": 1,
//!   "experiment": { id, uuid, name, source, status, seed, created_at, finished_at,
//!                   iolab_version, host, spec },
//!   "metrics": [ { name, unit, better ("higher", "lower" or null), title, description,
//!                  headline } ],
//!   "configs": [ { id, experiment, label, factors, outcome, findings: [...],
//!                  runs: [ { id, config, repetition, seed, status, error, started_at,
//!                            ended_at, elapsed_ns, environment, metrics: [{name, value, unit}],
//!                            flowops: [{..., histogram: [[upper_ns, count], ...]}],
//!                            series: [{name, width_ns, ops: [...], bytes: [...]}],
//!                            monitor: [{metric, unit, points: [[t_ns, value], ...]}],
//!                            findings: [{check, severity, evidence, explanation, fix}] } ] } ] }
//! ```
//!
//! Times are RFC 3339 UTC strings with nanoseconds; NaN values are `null`.

use std::io::Write;

use serde::Serialize;

use super::JSON_FORMAT_VERSION;
use crate::error::Result;
use crate::schema::SCHEMA_VERSION;
use crate::store::Store;
use crate::types::{Config, Experiment, ExperimentId, Finding, RunDetails};
use iolab_metrics::MetricDef;

#[derive(Serialize)]
struct Document {
    format: &'static str,
    format_version: u32,
    schema_version: u32,
    experiment: Experiment,
    /// What each metric is (unit, direction, meaning).
    metrics: Vec<MetricDef>,
    configs: Vec<ConfigDoc>,
}

#[derive(Serialize)]
struct ConfigDoc {
    #[serde(flatten)]
    config: Config,
    findings: Vec<Finding>,
    runs: Vec<RunDetails>,
}

pub(super) fn export(store: &Store, id: ExperimentId, out: &mut dyn Write) -> Result<()> {
    let details = store.experiment_details(id)?;
    let mut configs = Vec::with_capacity(details.configs.len());
    for config in details.configs {
        let findings = store.config_findings(config.id)?;
        let runs = details
            .runs
            .iter()
            .filter(|r| r.config == config.id)
            .map(|r| store.run(r.id))
            .collect::<Result<Vec<_>>>()?;
        configs.push(ConfigDoc {
            config,
            findings,
            runs,
        });
    }
    let doc = Document {
        format: "iolab-results",
        format_version: JSON_FORMAT_VERSION,
        schema_version: SCHEMA_VERSION,
        metrics: store.metric_defs(id)?,
        experiment: details.experiment,
        configs,
    };
    serde_json::to_writer_pretty(&mut *out, &doc).map_err(std::io::Error::from)?;
    out.write_all(b"\n")?;
    Ok(())
}
