//! Exporting an experiment: [`Store::export`] reads it whole into an [`ExportDocument`],
//! which serializes as the JSON export (the binary adds its `schema` stamp) and writes itself
//! as CSV ([`ExportDocument::write_csv`]).
//!
//! ```text
//! { "db_schema_version": 1,
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
//!                            findings: [{check, severity, evidence, explanation, fix}],
//!                            outputs: [{name, bytes, text}] (another tool's raw output) } ] } ] }
//! ```
//!
//! Times are RFC 3339 UTC strings with nanoseconds; NaN values are `null`.

mod csv;

use serde::Serialize;

use crate::error::Result;
use crate::schema::SCHEMA_VERSION;
use crate::store::Store;
use crate::types::{Config, Experiment, ExperimentId, Finding, RunDetails};
use iolab_metrics::MetricDef;

/// An experiment with everything measured in it, so that a report can be made from the
/// export alone.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExportDocument {
    /// The database schema the data was read from ([`SCHEMA_VERSION`]).
    pub db_schema_version: u32,
    pub experiment: Experiment,
    /// What each metric is (unit, direction, meaning): the definitions stored with the
    /// experiment, or the common ones for an experiment stored without them.
    pub metrics: Vec<MetricDef>,
    pub configs: Vec<ExportConfig>,
}

/// A configuration with its findings and its runs (in the order they ran).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExportConfig {
    #[serde(flatten)]
    pub config: Config,
    /// Findings about the configuration as a whole; each run has its own.
    pub findings: Vec<Finding>,
    pub runs: Vec<RunDetails>,
}

impl Store {
    /// Reads experiment `id` with all its configurations and runs.
    pub fn export(&self, id: ExperimentId) -> Result<ExportDocument> {
        let details = self.experiment_details(id)?;
        let mut configs = Vec::with_capacity(details.configs.len());
        for config in details.configs {
            let findings = self.config_findings(config.id)?;
            let runs = details
                .runs
                .iter()
                .filter(|r| r.config == config.id)
                .map(|r| self.run(r.id))
                .collect::<Result<Vec<_>>>()?;
            configs.push(ExportConfig {
                config,
                findings,
                runs,
            });
        }
        Ok(ExportDocument {
            db_schema_version: SCHEMA_VERSION,
            metrics: self.metric_defs(id)?,
            experiment: details.experiment,
            configs,
        })
    }
}
