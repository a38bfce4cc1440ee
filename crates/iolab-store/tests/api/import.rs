//! Importing another database: new ids, remapped references, no duplicates.

use iolab_store::*;
use serde_json::json;

use crate::common::{self, assert_run_eq, record, SMALL};

/// A source database with two experiments.
fn source(path: &std::path::Path) -> Vec<ExperimentId> {
    let mut store = Store::open(path).unwrap();
    let e1 = store
        .create_experiment(&common::experiment("first"))
        .unwrap();
    let a = common::config(&mut store, e1, "a");
    let b = common::config(&mut store, e1, "b");
    for rep in 0..3 {
        store
            .record_run(&record(a, rep, RunStatus::Ok, SMALL))
            .unwrap();
    }
    store
        .record_run(&record(b, 0, RunStatus::Failed, SMALL))
        .unwrap();
    store
        .record_run(&record(b, 0, RunStatus::Ok, SMALL))
        .unwrap();
    store
        .set_config_outcome(
            a,
            &ConfigOutcome {
                converged: true,
                note: "CI ±1% after 3 runs".into(),
            },
        )
        .unwrap();
    store
        .add_config_findings(
            b,
            &[Finding {
                check: "did-not-converge".into(),
                severity: Severity::Warning,
                evidence: json!({"n": 1}),
                explanation: "too few runs".into(),
                fix: "run more".into(),
            }],
        )
        .unwrap();
    store
        .set_experiment_status(
            e1,
            ExperimentStatus::Done,
            Timestamp(1_700_000_500_000_000_000),
        )
        .unwrap();
    let e2 = store
        .create_experiment(&common::experiment("second"))
        .unwrap();
    let c = common::config(&mut store, e2, "c");
    store
        .record_run(&record(c, 0, RunStatus::Interrupted, SMALL))
        .unwrap();
    vec![e1, e2]
}

/// Asserts that experiment `b` in `bs` is a copy of `a` in `src`, ids aside.
fn assert_same_experiment(src: &Store, a: ExperimentId, dst: &Store, b: ExperimentId) {
    let (x, y) = (src.experiment(a).unwrap(), dst.experiment(b).unwrap());
    assert_eq!(
        Experiment { id: b, ..x },
        y,
        "everything but the id is the same, uuid included"
    );
    let (xc, yc) = (src.configs(a).unwrap(), dst.configs(b).unwrap());
    assert_eq!(xc.len(), yc.len());
    for (p, q) in xc.iter().zip(&yc) {
        assert_eq!(p.label, q.label);
        assert_eq!(p.factors, q.factors);
        assert_eq!(p.outcome, q.outcome);
        assert_eq!(q.experiment, b);
        assert_eq!(
            src.config_findings(p.id).unwrap(),
            dst.config_findings(q.id).unwrap()
        );
        assert_eq!(
            src.ok_metrics(p.id).unwrap().len(),
            dst.ok_metrics(q.id).unwrap().len()
        );
    }
    let (xr, yr) = (src.runs(a).unwrap(), dst.runs(b).unwrap());
    assert_eq!(xr.len(), yr.len());
    // Runs come out per configuration in the copy; compare within each configuration.
    for (p, q) in xc.iter().zip(&yc) {
        let pr: Vec<_> = xr.iter().filter(|r| r.config == p.id).collect();
        let qr: Vec<_> = yr.iter().filter(|r| r.config == q.id).collect();
        assert_eq!(pr.len(), qr.len());
        for (r, s) in pr.iter().zip(&qr) {
            let d = src.run(r.id).unwrap();
            let mut want = RunRecord {
                run: NewRun {
                    config: q.id,
                    repetition: d.run.repetition,
                    seed: d.run.seed,
                    status: d.run.status,
                    error: d.run.error.clone(),
                    started_at: d.run.started_at,
                    ended_at: d.run.ended_at,
                    elapsed_ns: d.run.elapsed_ns,
                    environment: d.run.environment.clone(),
                },
                metrics: d.metrics.clone(),
                flowops: d.flowops.clone(),
                series: d.series.clone(),
                monitor: d.monitor.clone(),
                findings: d.findings.clone(),
                outputs: src.run_outputs(r.id).unwrap(),
            };
            assert_run_eq(&dst.run(s.id).unwrap(), &want);
            assert!(!want.outputs.is_empty());
            assert_eq!(dst.run_outputs(s.id).unwrap(), want.outputs);
            want.run.config = p.id;
            assert_run_eq(&d, &want);
        }
    }
}

#[test]
fn import_copies_experiments_with_new_ids_and_skips_known_ones() {
    let dir = tempfile::tempdir().unwrap();
    let src_path = dir.path().join("other.db");
    let src_ids = source(&src_path);
    let dst_path = dir.path().join("iolab.db");
    let mut dst = Store::open(&dst_path).unwrap();
    // Something already here, so that the source's ids are taken.
    let mine = dst.create_experiment(&common::experiment("mine")).unwrap();
    let c = common::config(&mut dst, mine, "a");
    let mut runs = Vec::new();
    for rep in 0..7 {
        runs.push(
            dst.record_run(&record(c, rep, RunStatus::Ok, SMALL))
                .unwrap(),
        );
    }

    let report = dst.import(&src_path).unwrap();
    assert_eq!(report.imported.len(), 2);
    assert!(report.skipped.is_empty());
    assert_eq!(report.runs, 6);
    let src = Store::open_existing(&src_path).unwrap();
    for (i, (uuid, old, new)) in report.imported.iter().enumerate() {
        assert_eq!(*old, src_ids[i]);
        assert_ne!(new, old, "new ids here");
        assert_eq!(&src.experiment(*old).unwrap().uuid, uuid);
        assert_same_experiment(&src, *old, &dst, *new);
    }
    // What was here is untouched.
    assert_eq!(dst.runs(mine).unwrap().len(), 7);
    dst.check_integrity().unwrap();
    let list = dst.list_experiments().unwrap();
    assert_eq!(list.len(), 3);
    assert_eq!(
        list[1].runs,
        RunCounts {
            ok: 4,
            failed: 1,
            interrupted: 0
        }
    );

    // Again: nothing new, and the report says why.
    let again = dst.import(&src_path).unwrap();
    assert!(again.imported.is_empty());
    assert_eq!(again.runs, 0);
    assert_eq!(
        again.skipped,
        report
            .imported
            .iter()
            .map(|(u, old, new)| (u.clone(), *old, *new))
            .collect::<Vec<_>>()
    );
    assert_eq!(dst.list_experiments().unwrap().len(), 3);

    // Importing this database into itself changes nothing either.
    let itself = dst.import(&dst_path).unwrap();
    assert!(itself.imported.is_empty());
    assert_eq!(itself.skipped.len(), 3);

    // And the other way round only brings `mine` over.
    drop(src);
    let mut src = Store::open(&src_path).unwrap();
    let back = src.import(&dst_path).unwrap();
    assert_eq!(back.imported.len(), 1);
    assert_eq!(back.skipped.len(), 2);
    assert_eq!(back.runs, 7);
}

#[test]
fn import_leaves_an_older_source_untouched() {
    let dir = tempfile::tempdir().unwrap();
    // Version 0: an empty file, the oldest database there is. It is upgraded in memory.
    let empty = dir.path().join("empty.db");
    std::fs::write(&empty, b"").unwrap();
    let mut dst = Store::open(dir.path().join("iolab.db")).unwrap();
    let report = dst.import(&empty).unwrap();
    assert_eq!(report, ImportReport::default());
    assert_eq!(
        std::fs::metadata(&empty).unwrap().len(),
        0,
        "not written to"
    );

    // A database at an older-or-equal version made from the frozen v1 DDL.
    let old = dir.path().join("old.db");
    crate::migrate::v1_database(&old);
    let before = std::fs::read(&old).unwrap();
    let report = dst.import(&old).unwrap();
    assert_eq!(report.imported.len(), 1);
    assert_eq!(report.runs, 1);
    assert_eq!(std::fs::read(&old).unwrap(), before, "not written to");
    let (_, _, id) = &report.imported[0];
    assert_eq!(dst.experiment(*id).unwrap().seed, u64::MAX);
}

#[test]
fn import_refuses_what_it_cannot_read() {
    let dir = tempfile::tempdir().unwrap();
    let mut dst = Store::open(dir.path().join("iolab.db")).unwrap();
    let err = dst.import(dir.path().join("nope.db")).unwrap_err();
    assert!(matches!(err, StoreError::Missing { .. }), "{err}");

    let newer = dir.path().join("newer.db");
    drop(Store::open(&newer).unwrap());
    rusqlite::Connection::open(&newer)
        .unwrap()
        .pragma_update(None, "user_version", SCHEMA_VERSION + 1)
        .unwrap();
    let err = dst.import(&newer).unwrap_err();
    assert!(matches!(err, StoreError::TooNew { .. }), "{err}");
    assert!(dst.list_experiments().unwrap().is_empty());
}
