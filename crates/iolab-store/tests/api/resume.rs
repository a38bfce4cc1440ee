//! What `iolab run --resume` needs: the unfinished experiment and which runs are done.

use iolab_store::*;

use crate::common::{self, record, SMALL};

#[test]
fn resume_finds_the_unfinished_experiment_and_its_done_runs() {
    let mut store = Store::open_in_memory().unwrap();
    assert_eq!(store.latest_unfinished_experiment().unwrap(), None);
    let done = store
        .create_experiment(&common::experiment("done"))
        .unwrap();
    store
        .set_experiment_status(done, ExperimentStatus::Done, Timestamp(1))
        .unwrap();
    let crashed = store
        .create_experiment(&common::experiment("crashed"))
        .unwrap();
    let later_done = store
        .create_experiment(&common::experiment("later"))
        .unwrap();
    store
        .set_experiment_status(later_done, ExperimentStatus::Failed, Timestamp(2))
        .unwrap();
    // The crashed one never got finished: it is still `running`.
    assert_eq!(store.latest_unfinished_experiment().unwrap(), Some(crashed));
    assert_eq!(store.latest_experiment().unwrap(), Some(later_done));

    let a = common::config(&mut store, crashed, "a");
    let b = common::config(&mut store, crashed, "b");
    let c = common::config(&mut store, crashed, "c");
    for rep in [0, 1, 3] {
        store
            .record_run(&record(a, rep, RunStatus::Ok, SMALL))
            .unwrap();
    }
    // Repetition 2 failed, then was interrupted on the retry: latest attempt counts.
    store
        .record_run(&record(a, 2, RunStatus::Failed, SMALL))
        .unwrap();
    store
        .record_run(&record(a, 2, RunStatus::Interrupted, SMALL))
        .unwrap();
    // Repetition 4 failed once and then succeeded: done.
    store
        .record_run(&record(a, 4, RunStatus::Failed, SMALL))
        .unwrap();
    store
        .record_run(&record(a, 4, RunStatus::Ok, SMALL))
        .unwrap();
    store
        .record_run(&record(b, 0, RunStatus::Failed, SMALL))
        .unwrap();
    store
        .set_config_outcome(
            a,
            &ConfigOutcome {
                converged: true,
                note: "ok".into(),
            },
        )
        .unwrap();

    let state = store.resume_state(crashed).unwrap();
    assert_eq!(state.len(), 3);
    assert_eq!(state[0].config, a);
    assert_eq!(state[0].label, "a");
    assert_eq!(state[0].ok, [0, 1, 3, 4]);
    assert_eq!(state[0].failed, Vec::<u32>::new());
    assert_eq!(state[0].interrupted, [2]);
    assert_eq!(state[0].next_repetition(), 2);
    assert!(state[0].is_done(4));
    assert!(state[0].outcome.as_ref().unwrap().converged);
    assert_eq!(state[1].config, b);
    assert!(state[1].ok.is_empty());
    assert_eq!(state[1].failed, [0]);
    assert_eq!(state[1].next_repetition(), 0);
    assert_eq!(state[2].config, c);
    assert!(state[2].ok.is_empty() && state[2].failed.is_empty());
    assert_eq!(state[2].outcome, None);

    // Resuming: only the missing repetitions are run, and a repeat of a done one is refused.
    let err = store
        .record_run(&record(a, 3, RunStatus::Ok, SMALL))
        .unwrap_err();
    assert!(matches!(err, StoreError::DuplicateRun { .. }), "{err}");
    store
        .record_run(&record(a, 2, RunStatus::Ok, SMALL))
        .unwrap();
    assert_eq!(store.resume_state(crashed).unwrap()[0].ok, [0, 1, 2, 3, 4]);
    assert!(store.resume_state(crashed).unwrap()[0]
        .interrupted
        .is_empty());

    store
        .set_experiment_status(crashed, ExperimentStatus::Done, Timestamp(3))
        .unwrap();
    assert_eq!(store.latest_unfinished_experiment().unwrap(), None);
    let err = store.resume_state(ExperimentId(99)).unwrap_err();
    assert!(matches!(err, StoreError::NoSuchExperiment { .. }), "{err}");
}

#[test]
fn an_interrupted_experiment_is_unfinished() {
    let mut store = Store::open_in_memory().unwrap();
    let e = store.create_experiment(&common::experiment("e")).unwrap();
    store
        .set_experiment_status(e, ExperimentStatus::Interrupted, Timestamp(1))
        .unwrap();
    assert_eq!(store.latest_unfinished_experiment().unwrap(), Some(e));
    // Resuming sets it running again until it finishes.
    store
        .set_experiment_status(e, ExperimentStatus::Running, Timestamp(2))
        .unwrap();
    let got = store.experiment(e).unwrap();
    assert_eq!(got.status, ExperimentStatus::Running);
    assert_eq!(got.finished_at, None);
}

/// Found by failing iolab's system calls one at a time (crates/iolab/tests/syscall_faults.rs):
/// the experiment, its metrics and its configurations were three transactions, and a disk
/// error between them left an experiment without configurations that `--resume` refused as
/// "started from a different version". Started in one, a failure part-way leaves nothing.
#[test]
fn an_experiment_starts_whole_or_not_at_all() {
    let mut store = Store::open_in_memory().unwrap();
    let defs = iolab_metrics::COMMON.to_vec();
    let f = common::factors(&[("fs", serde_json::json!("ext4"))]);
    // The second configuration fails after the experiment and the first were written.
    let err = store
        .start_experiment(
            &common::experiment("half"),
            &defs,
            &[("a".into(), f.clone()), ("a".into(), f.clone())],
        )
        .unwrap_err();
    assert!(matches!(err, StoreError::DuplicateConfig { .. }), "{err}");
    assert!(store.list_experiments().unwrap().is_empty());

    let (exp, ids) = store
        .start_experiment(
            &common::experiment("whole"),
            &defs,
            &[("a".into(), f.clone()), ("b".into(), f)],
        )
        .unwrap();
    assert_eq!(store.latest_unfinished_experiment().unwrap(), Some(exp));
    let progress = store.resume_state(exp).unwrap();
    assert_eq!(progress.iter().map(|p| p.config).collect::<Vec<_>>(), ids);
    assert_eq!(store.metric_defs(exp).unwrap().len(), defs.len());
}
