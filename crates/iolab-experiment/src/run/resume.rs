//! Continuing an unfinished experiment from the database (`iolab run --resume`): which one,
//! and where each configuration stands.

use super::*;

/// The unfinished experiment `--resume` continues: the latest from the same file with this
/// very plan (a file with stages has several experiments); failing that, the latest from the
/// file, whose differing plan says that the file changed; `None` if there is none.
pub fn unfinished(
    plan: &ExperimentPlan,
    store: &Store,
) -> Result<Option<iolab_store::Experiment>, RunnerError> {
    let mut latest = None;
    for e in store.list_experiments()?.into_iter().rev() {
        if !names_same_file(&e.source, &plan.source)
            || !matches!(
                e.status,
                ExperimentStatus::Running | ExperimentStatus::Interrupted
            )
        {
            continue;
        }
        let e = store.experiment(e.id)?;
        if e.spec == plan.resolved {
            return Ok(Some(e));
        }
        latest.get_or_insert(e);
    }
    Ok(latest)
}

/// The latest experiment stored from the same file with this very plan that completed: a
/// stage `iolab run --resume` need not run again.
pub fn completed(
    plan: &ExperimentPlan,
    store: &Store,
) -> Result<Option<ExperimentId>, RunnerError> {
    for e in store.list_experiments()?.into_iter().rev() {
        if e.status == ExperimentStatus::Done
            && names_same_file(&e.source, &plan.source)
            && store.experiment(e.id)?.spec == plan.resolved
        {
            return Ok(Some(e.id));
        }
    }
    Ok(None)
}

/// Whether a stored source path names `file`: as typed, or the same file after resolving
/// (sources stored before they were made absolute are relative to where iolab ran).
pub(super) fn names_same_file(stored: &str, file: &Path) -> bool {
    let stored = Path::new(stored);
    stored == file
        || matches!(
            (stored.canonicalize(), file.canonicalize()),
            (Ok(a), Ok(b)) if a == b
        )
}

pub(super) fn resume(
    plan: &ExperimentPlan,
    store: &mut Store,
    source: &str,
) -> Result<(ExperimentId, Vec<ConfigState>), RunnerError> {
    let exp =
        unfinished(plan, store)?.ok_or_else(|| RunnerError::NothingToResume(source.to_owned()))?;
    if exp.spec != plan.resolved {
        return Err(RunnerError::ResumeMismatch {
            id: exp.id.0,
            source_file: source.to_owned(),
        });
    }
    let progress = store.resume_state(exp.id)?;
    let runs = store.runs(exp.id)?;
    let mut states = Vec::with_capacity(plan.configs.len());
    for c in &plan.configs {
        let p = progress
            .iter()
            .find(|p| p.label == c.label)
            .ok_or_else(|| RunnerError::ResumeMismatch {
                id: exp.id.0,
                source_file: source.to_owned(),
            })?;
        let values = store.ok_metric_values(p.config, &plan.repetitions.metric)?;
        let mut acc = Welford::new();
        for v in values.iter().filter(|v| v.is_finite()) {
            let _ = acc.push(*v);
        }
        let spent = runs
            .iter()
            .filter(|r| r.config == p.config)
            .map(|r| Duration::from_nanos((r.ended_at.0 - r.started_at.0).max(0) as u64))
            .sum();
        states.push(ConfigState {
            id: p.config,
            acc,
            ok: p.ok.clone(),
            spent,
            stopped: p.outcome.is_some(),
            warmed_up: !p.ok.is_empty(),
            outcome: p.outcome.clone(),
        });
    }
    store.set_experiment_status(exp.id, ExperimentStatus::Running, Timestamp::now())?;
    Ok((exp.id, states))
}
