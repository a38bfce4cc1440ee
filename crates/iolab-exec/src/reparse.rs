//! `iolab reparse EXPERIMENT`: every stored run of another tool read again from its raw
//! output with the parsers of this build, and what that changes — a value, a run that was
//! valid and no longer is (or the reverse), a parser version. With `apply`, changed values
//! are written back (a run's status is never changed: run it again instead).

use std::path::{Path, PathBuf};

use iolab_store::{ExperimentId, Metric, RunId, RunStatus, Store, StoreError};
use serde_json::Value;

use crate::kind::{self, Check, KEY};
use crate::run::{record_metrics, ExecWorkload};
use crate::stored;

/// What reading one run again gives.
#[derive(Debug, Clone, PartialEq)]
pub struct RunReparse {
    pub run: RunId,
    pub config: String,
    pub repetition: u32,
    pub tool: String,
    /// The parser version the run was stored with, and this build's.
    pub stored_parser: u32,
    pub parser: u32,
    pub verdict: Verdict,
}

/// How the current parser's reading compares with the stored one.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Every value the same (NaN equals NaN: not measured either way).
    Same,
    /// Values that differ: (metric, stored, now); a metric new to this parser has NaN as
    /// its stored value.
    Changed(Vec<(String, f64, f64)>),
    /// Stored as valid; the current parser rejects the output.
    NowInvalid(String),
    /// Stored as failed; the current parser reads a valid result.
    NowValid,
    /// Failed, and still rejected (the reason as it reads now).
    StillInvalid(String),
}

/// Why an experiment cannot be read again.
#[derive(Debug)]
pub enum ReparseError {
    Store(StoreError),
    /// The experiment ran no other tool.
    NotExec {
        name: String,
    },
    /// A configuration's stored workload no longer reads (an adapter's key changed).
    Workload {
        config: String,
        message: String,
    },
}

impl std::fmt::Display for ReparseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReparseError::Store(e) => write!(f, "{e}"),
            ReparseError::NotExec { name } => write!(
                f,
                "experiment {name:?} ran no other tool: only runs of the `exec` kind keep raw \
                 output to read again"
            ),
            ReparseError::Workload { config, message } => write!(
                f,
                "configuration {config}: its stored workload does not read with this build: \
                 {message}"
            ),
        }
    }
}

impl std::error::Error for ReparseError {}

impl From<StoreError> for ReparseError {
    fn from(e: StoreError) -> Self {
        ReparseError::Store(e)
    }
}

/// Reads every run of experiment `id` again; with `apply`, stores the changed values.
pub fn reparse(
    store: &mut Store,
    id: ExperimentId,
    apply: bool,
) -> Result<Vec<RunReparse>, ReparseError> {
    let exp = store.experiment(id)?;
    let configs = store.configs(id)?;
    let stored_configs = exp.spec["configs"].as_array().cloned().unwrap_or_default();
    let base: PathBuf = exp.spec["source"]
        .as_str()
        .and_then(|s| Path::new(s).parent())
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    let mut workloads: Vec<(iolab_store::ConfigId, String, ExecWorkload)> = Vec::new();
    for c in &configs {
        let Some(w) = stored_configs
            .iter()
            .find(|s| s["label"].as_str() == Some(&c.label))
            .map(|s| &s["workload"])
        else {
            continue;
        };
        if w.get(KEY).is_none() {
            return Err(ReparseError::NotExec { name: exp.name });
        }
        let wl = workload(w, &base).map_err(|message| ReparseError::Workload {
            config: c.label.clone(),
            message,
        })?;
        workloads.push((c.id, c.label.clone(), wl));
    }
    if workloads.is_empty() {
        return Err(ReparseError::NotExec { name: exp.name });
    }
    let mut out = Vec::new();
    for r in store.runs(id)? {
        let Some((_, label, wl)) = workloads.iter().find(|(cid, _, _)| *cid == r.config) else {
            continue;
        };
        let outputs = store.run_outputs(r.id)?;
        let Some((meta, raw)) = stored::raw(&outputs) else {
            continue;
        };
        let verdict = match (wl.parse(&raw), r.status) {
            (Ok(parsed), RunStatus::Ok) => {
                let wall = std::time::Duration::from_nanos(meta.wall_ns);
                let now = record_metrics(wl.metrics_defs(), &parsed, wall, meta.usage.as_ref());
                let old = store.run(r.id)?.metrics;
                let changed = differences(&old, &now);
                if changed.is_empty() {
                    Verdict::Same
                } else {
                    if apply {
                        let write: Vec<Metric> = now
                            .iter()
                            .filter(|m| changed.iter().any(|(n, _, _)| *n == m.name))
                            .cloned()
                            .collect();
                        store.update_run_metrics(r.id, &write)?;
                    }
                    Verdict::Changed(changed)
                }
            }
            (Ok(_), _) => Verdict::NowValid,
            (Err(e), RunStatus::Ok) => Verdict::NowInvalid(e.to_string()),
            (Err(e), _) => Verdict::StillInvalid(e.to_string()),
        };
        out.push(RunReparse {
            run: r.id,
            config: label.clone(),
            repetition: r.repetition,
            tool: meta.tool,
            stored_parser: meta.parser_version,
            parser: wl.adapter.parser_version(),
            verdict,
        });
    }
    Ok(out)
}

/// The stored `[workload]` section read again, without looking for the program.
fn workload(w: &Value, base: &Path) -> Result<ExecWorkload, String> {
    iolab_kind::input::reread(w, KEY, |cx, _t, e| kind::read(cx, e, base, Check::Nothing))
        .map_err(|errs| errs.first().to_string())
}

/// The metrics of `now` whose value differs from `old`'s (a missing one counts as NaN).
fn differences(old: &[Metric], now: &[Metric]) -> Vec<(String, f64, f64)> {
    let same = |a: f64, b: f64| (a.is_nan() && b.is_nan()) || a == b;
    now.iter()
        .filter_map(|m| {
            let before = old
                .iter()
                .find(|o| o.name == m.name)
                .map_or(f64::NAN, |o| o.value);
            (!same(before, m.value)).then(|| (m.name.clone(), before, m.value))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differences_ignore_equal_and_both_unmeasured_values() {
        let old = vec![
            Metric::new("a", 1.0, ""),
            Metric::new("b", f64::NAN, ""),
            Metric::new("c", 2.0, ""),
        ];
        let now = vec![
            Metric::new("a", 1.0, ""),
            Metric::new("b", f64::NAN, ""),
            Metric::new("c", 3.0, ""),
            Metric::new("d", 4.0, ""),
        ];
        let d = differences(&old, &now);
        assert_eq!(d.len(), 2);
        assert_eq!((d[0].0.as_str(), d[0].1, d[0].2), ("c", 2.0, 3.0));
        assert_eq!(d[1].0, "d");
        assert!(d[1].1.is_nan());
    }
}
