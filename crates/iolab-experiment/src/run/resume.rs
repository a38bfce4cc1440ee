//! Continuing an unfinished experiment from the database (`iolab run --resume`): which one,
//! and where each configuration stands.

use super::*;

/// The unfinished experiment `--resume` continues: the latest from the same file with this
/// very plan (a file with stages has several experiments); failing that, the latest from the
/// file, whose differing plan says that the file changed; `None` if there is none. An
/// experiment that failed is unfinished too: a run that failed (a disk error, a full
/// filesystem) runs again once the cause is fixed, without repeating the runs that finished.
pub fn unfinished(
    plan: &ExperimentPlan,
    store: &Store,
) -> Result<Option<iolab_store::Experiment>, RunnerError> {
    let mut latest = None;
    for e in store.list_experiments()?.into_iter().rev() {
        if !names_same_file(&e.source, &plan.source)
            || !matches!(
                e.status,
                ExperimentStatus::Running
                    | ExperimentStatus::Interrupted
                    | ExperimentStatus::Failed
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
        // A configuration stops at its first failed run, so one whose latest attempt at a
        // repetition failed was stopped by that failure, not by the stopping rule: it goes on.
        let stopped = p.outcome.is_some() && p.failed.is_empty();
        states.push(ConfigState {
            id: p.config,
            acc,
            ok: p.ok.clone(),
            spent,
            stopped,
            warmed_up: !p.ok.is_empty(),
            outcome: p.outcome.clone().filter(|_| stopped),
        });
    }
    store.set_experiment_status(exp.id, ExperimentStatus::Running, Timestamp::now())?;
    Ok((exp.id, states))
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_store::NewConfig;

    /// An experiment stored as a run of it left it: configuration "a" with repetition 0 ok,
    /// configuration "b" with repetition 0 ok and repetition 1 `last` (and, when failed, the
    /// outcome the runner gives a configuration its failure stopped), in status `status`.
    fn stored(plan: &ExperimentPlan, last: RunStatus, status: ExperimentStatus) -> Store {
        let mut store = Store::open_in_memory().unwrap();
        let exp = store
            .create_experiment(&plan.new_experiment(
                plan.source.display().to_string(),
                Timestamp(1),
                "test".into(),
                json!({}),
            ))
            .unwrap();
        let ids = store
            .add_configs(
                &plan
                    .configs
                    .iter()
                    .map(|c| NewConfig {
                        experiment: exp,
                        label: c.label.clone(),
                        factors: c.factors.clone(),
                    })
                    .collect::<Vec<_>>(),
            )
            .unwrap();
        let run = |config, repetition, status| {
            RunRecord::new(NewRun {
                config,
                repetition,
                seed: 1,
                status,
                error: (status != RunStatus::Ok).then(|| "pwrite: EIO".into()),
                started_at: Timestamp(1),
                ended_at: Timestamp(2),
                elapsed_ns: 1,
                environment: json!({}),
            })
        };
        for &id in &ids {
            store.record_run(&run(id, 0, RunStatus::Ok)).unwrap();
        }
        store.record_run(&run(ids[1], 1, last)).unwrap();
        if last == RunStatus::Failed {
            let stopped = ConfigOutcome {
                converged: false,
                note: "stopped: a run failed (pwrite: EIO)".into(),
            };
            store.set_config_outcome(ids[1], &stopped).unwrap();
        }
        store
            .set_experiment_status(exp, status, Timestamp(3))
            .unwrap();
        store
    }

    fn plan() -> ExperimentPlan {
        crate::load_str(
            Path::new("/nonexistent/resume.toml"),
            "[factors]\nbs = [\"4k\", \"8k\"]\n[sut]\ntarget = { kind = \"directory\", path = \
             \"/tmp\" }\n[workload]\nmicro = { access = \"write\", bs = \"${bs}\", \
             size = \"64k\", engine = \"null\" }\n[repetitions]\nmin = 2\nmax = 2\n",
        )
        .unwrap()
    }

    /// Found by failing iolab's system calls one at a time (tests/syscall_faults.rs): an
    /// experiment whose run failed on an I/O error could not be resumed ("nothing to
    /// resume"), and the configuration the failure stopped stayed stopped.
    #[test]
    fn a_failed_experiment_resumes_with_its_failed_repetition() {
        let plan = plan();
        let mut store = stored(&plan, RunStatus::Failed, ExperimentStatus::Failed);
        let found = unfinished(&plan, &store).unwrap().expect("resumable");
        let (exp, states) = resume(&plan, &mut store, "resume.toml").unwrap();
        assert_eq!(exp, found.id);
        assert_eq!(states[0].ok, [0]);
        assert_eq!(states[1].ok, [0]);
        assert!(!states[1].stopped, "the failure's configuration goes on");
        assert!(states[1].outcome.is_none());
        assert_eq!(
            store.experiment(exp).unwrap().status,
            ExperimentStatus::Running
        );
    }

    #[test]
    fn an_interrupted_experiment_resumes_and_a_done_one_does_not() {
        let plan = plan();
        let mut store = stored(&plan, RunStatus::Interrupted, ExperimentStatus::Interrupted);
        let (_, states) = resume(&plan, &mut store, "resume.toml").unwrap();
        assert!(states.iter().all(|s| !s.stopped));
        let store = stored(&plan, RunStatus::Ok, ExperimentStatus::Done);
        assert!(unfinished(&plan, &store).unwrap().is_none());
    }
}
