//! `iolab show ID`: reads an experiment into a [`ShowReport`] and prints it (the formats are
//! in `output/show/`). Also printed at the end of `iolab run EXPERIMENT.toml`.

use std::io::{self, Write};

use iolab_store::{ExperimentId, RunCounts, RunStatus, Store, StoreError};

use crate::cli::ShowArgs;
use crate::error::CliError;
use crate::output::context::{count_checks, system_means};
use crate::output::show::{self, Cell, ShowConfig, ShowReport, ShowRun};
use crate::output::{self, Formatter};

pub fn show(args: ShowArgs) -> Result<(), CliError> {
    let store = super::db::open_existing(&args.db.db)?;
    let id = super::db::resolve(&store, args.id.as_deref())?;
    let report = load(&store, id).map_err(super::db::store_error)?;
    output::print_json_or(args.json, &show::Human, &report)
}

/// The human table of experiment `id`.
pub fn write_experiment(store: &Store, id: ExperimentId, out: &mut dyn Write) -> io::Result<()> {
    let report = load(store, id).map_err(io::Error::other)?;
    show::Human.write(&report, out)
}

/// Everything `iolab show` prints about experiment `id`.
pub fn load(store: &Store, id: ExperimentId) -> Result<ShowReport, StoreError> {
    let d = store.experiment_details(id)?;
    let findings = store.findings(id)?;
    let single_run = show::plans_single_run(&d.experiment.spec);
    let metric = d
        .experiment
        .spec
        .pointer("/repetitions/metric")
        .and_then(|m| m.as_str())
        .unwrap_or(iolab_metrics::DEFAULT_METRIC)
        .to_string();
    // The headline metrics as the experiment's stored definitions declare them, and the
    // stopping rule's metric first when it is another (the quickstart stops on the median).
    let defs = store.metric_defs(id)?;
    let mut headline: Vec<iolab_store::MetricDef> =
        iolab_metrics::headline(&defs).cloned().collect();
    if !headline.iter().any(|d| d.name == metric) {
        if let Some(d) = iolab_metrics::find(&defs, &metric) {
            headline.insert(0, d.clone());
        }
    }
    let answers = answers(store, id, &headline)?;
    let mut configs = Vec::with_capacity(d.configs.len());
    for c in d.configs {
        let ok = store.ok_metrics(c.id)?;
        let mut runs = RunCounts::default();
        for r in d.runs.iter().filter(|r| r.config == c.id) {
            match r.status {
                RunStatus::Ok => runs.ok += 1,
                RunStatus::Failed => runs.failed += 1,
                RunStatus::Interrupted => runs.interrupted += 1,
            }
        }
        let mine: Vec<_> = findings.iter().filter(|f| f.config == c.id).collect();
        configs.push(ShowConfig {
            state: show::state(c.outcome.as_ref(), &runs, single_run, d.experiment.status),
            metrics: ok
                .iter()
                .map(|(name, v)| (name.clone(), Cell::new(&v.unit, &v.values)))
                .collect(),
            system: system_means(&ok),
            checks: count_checks(mine.iter().copied()),
            findings: mine
                .iter()
                .filter(|f| f.run.is_none())
                .map(|f| f.finding.clone())
                .collect(),
            id: c.id,
            label: c.label,
            factors: c.factors,
            outcome: c.outcome,
            runs,
        });
    }
    let runs = d
        .runs
        .into_iter()
        .map(|run| ShowRun {
            findings: findings
                .iter()
                .filter(|f| f.run == Some(run.id))
                .map(|f| f.finding.clone())
                .collect(),
            run,
        })
        .collect();
    Ok(ShowReport {
        answers,
        experiment: d.experiment,
        metric,
        headline,
        single_run,
        configs,
        runs,
    })
}

/// Each factor's effect on the headline metrics recorded, against each factor's first level
/// (`None` without factors of two levels or more).
fn answers(
    store: &Store,
    id: ExperimentId,
    headline: &[iolab_store::MetricDef],
) -> Result<Option<iolab_compare::Answers>, StoreError> {
    let loaded = match iolab_compare::load(store, &[id]) {
        Ok(l) => l,
        Err(iolab_compare::CompareError::Store(e)) => return Err(e),
        Err(_) => return Ok(None),
    };
    let recorded = iolab_compare::available_metrics(&loaded.configs);
    let specs: Vec<_> = headline
        .iter()
        .filter(|d| recorded.iter().any(|m| *m == d.name))
        .map(|d| iolab_compare::metric_spec(&d.name, &loaded.metrics))
        .collect();
    if specs.is_empty() || loaded.factors.is_empty() {
        return Ok(None);
    }
    let options = iolab_compare::Options::new(specs);
    Ok(
        iolab_compare::answers(&loaded.configs, &loaded.factors, &options)
            .ok()
            .filter(|a| !a.factors.is_empty()),
    )
}
