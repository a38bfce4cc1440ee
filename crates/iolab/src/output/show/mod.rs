//! `iolab show`: an experiment's configurations with n and mean ± 95% CI of every metric,
//! the stopping rule's outcome, the system during the runs and what the checks found (per
//! configuration and per run). Also printed at the end of `iolab run EXPERIMENT.toml`.

mod human;

pub use human::Human;

use std::collections::BTreeMap;

use iolab_stats::{Level, Sample, Summary};
use iolab_store::{ConfigId, ConfigOutcome, Experiment, ExperimentStatus, Finding, Run, RunCounts};
use serde::Serialize;
use serde_json::{Map, Value};

use super::context::CheckCount;
use super::json::{Document, Kind};

#[derive(Debug, Serialize)]
pub struct ShowReport {
    pub experiment: Experiment,
    /// Each factor's effect within the combinations of the others, on the headline metrics
    /// (`None` without factors); printed first.
    pub answers: Option<iolab_compare::Answers>,
    /// The stopping rule's metric.
    pub metric: String,
    /// The headline metrics (their stored definitions): the table's columns.
    pub headline: Vec<iolab_store::MetricDef>,
    /// One run per configuration was planned (`iolab KIND`, `iolab run FILE.f`): the values
    /// are single measurements, without an interval, and "converged" means nothing.
    pub single_run: bool,
    pub configs: Vec<ShowConfig>,
    /// In the order they ran.
    pub runs: Vec<ShowRun>,
}

#[derive(Debug, Serialize)]
pub struct ShowConfig {
    pub id: ConfigId,
    pub label: String,
    pub factors: Map<String, Value>,
    /// The stopping rule's outcome as stored.
    pub outcome: Option<ConfigOutcome>,
    /// The outcome as the table prints it: `converged (±1.2%)`, `done (single run)`, …
    pub state: String,
    pub runs: RunCounts,
    /// Every metric over the ok runs.
    pub metrics: BTreeMap<String, Cell>,
    /// The system during the runs: see [`super::context::SYSTEM`].
    pub system: BTreeMap<String, f64>,
    /// The checks that fired on it or its runs, counted.
    pub checks: Vec<CheckCount>,
    /// Findings about the configuration as a whole (each run's are with the run).
    pub findings: Vec<Finding>,
}

/// One metric over a configuration's ok runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cell {
    pub unit: String,
    /// Finite values.
    pub n: usize,
    pub mean: Option<f64>,
    /// Half-width of the Student-t 95% interval of the mean (n ≥ 2).
    pub ci95_half_width: Option<f64>,
    /// All values, in repetition order (NaN as null).
    pub values: Vec<f64>,
}

impl Cell {
    pub fn new(unit: &str, values: &[f64]) -> Cell {
        let v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
        let (mean, half) = match v.len() {
            0 => (None, None),
            1 => (Some(v[0]), None),
            _ => match Sample::new(v.clone()) {
                Ok(s) => {
                    let s = Summary::new(&s, Level::P95);
                    (Some(s.mean), Some(s.ci.half_width()))
                }
                // Values too large for statistics (another host's 1e308): their mean if
                // it is a number, without an interval.
                Err(_) => {
                    let mean = v.iter().sum::<f64>() / v.len() as f64;
                    (mean.is_finite().then_some(mean), None)
                }
            },
        };
        Cell {
            unit: unit.to_string(),
            n: v.len(),
            mean,
            ci95_half_width: half,
            values: values.to_vec(),
        }
    }
}

#[derive(Debug, Serialize)]
pub struct ShowRun {
    #[serde(flatten)]
    pub run: Run,
    /// What the checks found about this run.
    pub findings: Vec<Finding>,
}

impl Document for ShowReport {
    const KIND: Kind = Kind::Show;
}

/// The table's outcome column for a configuration.
pub fn state(
    outcome: Option<&ConfigOutcome>,
    runs: &RunCounts,
    single_run: bool,
    experiment: ExperimentStatus,
) -> String {
    if single_run {
        return match (runs.ok, runs.failed, runs.interrupted) {
            (1.., _, _) => "done (single run)".into(),
            (0, 1.., _) => "failed".into(),
            (0, 0, 1..) => "interrupted".into(),
            _ if experiment == ExperimentStatus::Running => "not finished".into(),
            _ => "not run".into(),
        };
    }
    match outcome {
        Some(o) => compact_outcome(&o.note),
        None if runs.failed > 0 => format!("{} failed", runs.failed),
        None => match experiment {
            ExperimentStatus::Running => "not finished".into(),
            ExperimentStatus::Interrupted => "interrupted".into(),
            ExperimentStatus::Done | ExperimentStatus::Failed => "no outcome stored".into(),
        },
    }
}

/// The stopping rule's note, short enough for a table column.
fn compact_outcome(note: &str) -> String {
    let pct = note
        .split_whitespace()
        .find(|w| w.starts_with('±'))
        .map(|w| w.trim_end_matches([',', ';']))
        .unwrap_or("");
    if note.starts_with("converged") {
        format!("converged ({pct})")
    } else if note.starts_with("did not converge") {
        let why = if note.contains("time budget") {
            "time budget"
        } else {
            "max runs"
        };
        format!("NOT converged ({pct}, {why})")
    } else {
        note.to_string()
    }
}

/// Whether the experiment's spec plans one run per configuration.
pub fn plans_single_run(spec: &Value) -> bool {
    spec.pointer("/repetitions/max").and_then(Value::as_u64) == Some(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_single_run_is_done_not_unfinished() {
        let one = RunCounts {
            ok: 1,
            ..RunCounts::default()
        };
        let s = |runs: &RunCounts, single, exp| state(None, runs, single, exp);
        assert_eq!(s(&one, true, ExperimentStatus::Done), "done (single run)");
        // Whatever a stopping rule would say about one value.
        let note = ConfigOutcome {
            converged: false,
            note: "did not converge: the maximum of 1 runs was reached".into(),
        };
        assert_eq!(
            state(Some(&note), &one, true, ExperimentStatus::Done),
            "done (single run)"
        );
        let failed = RunCounts {
            failed: 1,
            ..RunCounts::default()
        };
        assert_eq!(s(&failed, true, ExperimentStatus::Failed), "failed");
        assert_eq!(
            s(&RunCounts::default(), true, ExperimentStatus::Running),
            "not finished"
        );
        assert_eq!(s(&one, false, ExperimentStatus::Running), "not finished");
        assert_eq!(
            s(&RunCounts::default(), false, ExperimentStatus::Interrupted),
            "interrupted"
        );
        assert!(plans_single_run(
            &serde_json::json!({"repetitions": {"min": 1, "max": 1}})
        ));
        assert!(!plans_single_run(
            &serde_json::json!({"repetitions": {"min": 3, "max": 20}})
        ));
    }

    #[test]
    fn one_value_has_no_interval() {
        let c = Cell::new("op/s", &[5.0, f64::NAN]);
        assert_eq!((c.n, c.mean, c.ci95_half_width), (1, Some(5.0), None));
        let c = Cell::new("op/s", &[4.0, 6.0]);
        assert_eq!((c.n, c.mean), (2, Some(5.0)));
        assert!(c.ci95_half_width.unwrap() > 0.0);
        assert_eq!(Cell::new("", &[]).mean, None);
    }
}
