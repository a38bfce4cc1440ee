//! Every record type goes in and comes back with exact values.

use iolab_store::*;
use serde_json::json;

use crate::common::{self, assert_run_eq, record, SMALL};

#[test]
fn a_tools_raw_output_round_trips_and_a_reparse_replaces_only_its_metrics() {
    let mut store = Store::open_in_memory().unwrap();
    let exp = store.create_experiment(&common::experiment("raw")).unwrap();
    let cfg = store
        .add_config(&NewConfig {
            experiment: exp,
            label: "a".into(),
            factors: common::factors(&[]),
        })
        .unwrap();
    let rec = record(cfg, 0, RunStatus::Ok, SMALL);
    let id = store.record_run(&rec).unwrap();
    assert_eq!(store.run_outputs(id).unwrap(), rec.outputs);
    assert_eq!(rec.outputs[1].content, vec![0, 0xff, 0xfe, b'\n']);

    let before = store.run(id).unwrap().metrics;
    let changed = &before[0];
    store
        .update_run_metrics(id, &[Metric::new(changed.name.clone(), 42.5, "op/s")])
        .unwrap();
    let after = store.run(id).unwrap().metrics;
    assert_eq!(after.len(), before.len());
    for (a, b) in after.iter().zip(&before) {
        if a.name == changed.name {
            assert_eq!((a.value, a.unit.as_str()), (42.5, "op/s"));
        } else {
            assert_eq!(a, b);
        }
    }
    assert!(matches!(
        store.update_run_metrics(RunId(id.0 + 99), &[]),
        Err(StoreError::NoSuchRun { .. })
    ));
}

#[test]
fn experiment_round_trips() {
    let mut store = Store::open_in_memory().unwrap();
    let new = common::experiment("journal-modes");
    let id = store.create_experiment(&new).unwrap();
    let e = store.experiment(id).unwrap();
    assert_eq!(e.id, id);
    assert_eq!(e.name, new.name);
    assert_eq!(e.source, new.source);
    assert_eq!(e.spec, new.spec, "floats survive JSON exactly");
    assert_eq!(e.spec["ratio"].as_f64(), Some(0.1 + 0.2));
    assert_eq!(e.seed, u64::MAX - 1, "seeds above 2^63 survive");
    assert_eq!(e.created_at, new.created_at);
    assert_eq!(e.finished_at, None);
    assert_eq!(e.status, ExperimentStatus::Running);
    assert_eq!(e.iolab_version, "0.1.0");
    assert_eq!(e.host, new.host);
    // A v4 uuid.
    assert_eq!(e.uuid.len(), 36);
    assert_eq!(&e.uuid[14..15], "4");
    assert!("89ab".contains(&e.uuid[19..20]), "{}", e.uuid);
    let other = store.create_experiment(&new).unwrap();
    assert_ne!(store.experiment(other).unwrap().uuid, e.uuid);
    assert_eq!(store.experiment_by_uuid(&e.uuid).unwrap(), Some(id));
    assert_eq!(store.experiment_by_uuid("nope").unwrap(), None);

    store
        .set_experiment_status(
            id,
            ExperimentStatus::Done,
            Timestamp(1_700_000_999_000_000_001),
        )
        .unwrap();
    let e = store.experiment(id).unwrap();
    assert_eq!(e.status, ExperimentStatus::Done);
    assert_eq!(e.finished_at, Some(Timestamp(1_700_000_999_000_000_001)));
}

#[test]
fn configs_round_trip_with_outcomes() {
    let mut store = Store::open_in_memory().unwrap();
    let exp = store.create_experiment(&common::experiment("e")).unwrap();
    let factors = common::factors(&[
        ("fs", json!("ext4")),
        ("dirty_ratio", json!(20)),
        ("direct", json!(true)),
        ("opts", json!(["noatime", "data=journal"])),
        ("ratio", json!(0.1)),
    ]);
    let a = store
        .add_config(&NewConfig {
            experiment: exp,
            label: "ext4 journal".into(),
            factors: factors.clone(),
        })
        .unwrap();
    let b = common::config(&mut store, exp, "ordered");
    let configs = store.configs(exp).unwrap();
    assert_eq!(configs.len(), 2);
    assert_eq!(configs[0].id, a);
    assert_eq!(configs[0].experiment, exp);
    assert_eq!(configs[0].label, "ext4 journal");
    assert_eq!(configs[0].factors, factors);
    assert_eq!(configs[0].outcome, None);
    assert_eq!(configs[1].id, b);

    let outcome = ConfigOutcome {
        converged: false,
        note: "budget of 20 runs reached at ±8.2%".into(),
    };
    store.set_config_outcome(a, &outcome).unwrap();
    assert_eq!(store.configs(exp).unwrap()[0].outcome, Some(outcome));

    let finding = Finding {
        check: "did-not-converge".into(),
        severity: Severity::Error,
        evidence: json!({"half_width": 0.082, "target": 0.05, "n": 20}),
        explanation: "The confidence interval stayed wider than the target.".into(),
        fix: "Raise max repetitions or reduce noise.".into(),
    };
    store
        .add_config_findings(a, std::slice::from_ref(&finding))
        .unwrap();
    assert_eq!(
        store.config_findings(a).unwrap(),
        std::slice::from_ref(&finding)
    );
    assert!(store.config_findings(b).unwrap().is_empty());
    let all = store.findings(exp).unwrap();
    assert_eq!(all.len(), 1);
    assert_eq!(all[0].config, a);
    assert_eq!(all[0].run, None);
    assert_eq!(all[0].finding, finding);
}

#[test]
fn a_matrix_of_configs_is_added_all_or_nothing() {
    let mut store = Store::open_in_memory().unwrap();
    let exp = store.create_experiment(&common::experiment("e")).unwrap();
    let new = |label: &str| NewConfig {
        experiment: exp,
        label: label.into(),
        factors: common::factors(&[("data", json!(label))]),
    };
    let ids = store.add_configs(&[new("a"), new("b"), new("c")]).unwrap();
    let configs = store.configs(exp).unwrap();
    assert_eq!(configs.iter().map(|c| c.id).collect::<Vec<_>>(), ids);
    assert_eq!(
        configs.iter().map(|c| c.label.as_str()).collect::<Vec<_>>(),
        ["a", "b", "c"]
    );
    // "b" exists already: neither "d" nor "e" is added.
    let err = store
        .add_configs(&[new("d"), new("b"), new("e")])
        .unwrap_err();
    assert!(matches!(err, StoreError::DuplicateConfig { .. }), "{err}");
    assert_eq!(store.configs(exp).unwrap().len(), 3);
}

#[test]
fn a_run_round_trips_with_everything_in_it() {
    let mut store = Store::open_in_memory().unwrap();
    let exp = store.create_experiment(&common::experiment("e")).unwrap();
    let config = common::config(&mut store, exp, "journal");
    let rec = record(config, 3, RunStatus::Ok, SMALL);
    let id = store.record_run(&rec).unwrap();
    let got = store.run(id).unwrap();
    assert_eq!(got.run.id, id);
    assert_run_eq(&got, &rec);

    let runs = store.runs(exp).unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0], got.run);
    let findings = store.findings(exp).unwrap();
    assert_eq!(findings.len(), 1);
    assert_eq!(findings[0].run, Some(id));
    assert_eq!(findings[0].config, config);
}

#[test]
fn extreme_values_survive() {
    let mut store = Store::open_in_memory().unwrap();
    let exp = store.create_experiment(&common::experiment("e")).unwrap();
    let config = common::config(&mut store, exp, "x");
    let mut rec = record(config, 0, RunStatus::Failed, SMALL);
    rec.run.seed = u64::MAX;
    rec.run.elapsed_ns = u64::MAX;
    rec.run.started_at = Timestamp(i64::MIN);
    rec.run.error = Some("ünïcödé, \"quotes\"\nand a newline".into());
    rec.metrics = vec![
        Metric::new("inf", f64::INFINITY, "x"),
        Metric::new("max", f64::MAX, ""),
        Metric::new("neg_zero", -0.0, ""),
        Metric::new("tiny", f64::MIN_POSITIVE, ""),
    ];
    rec.flowops[0].ops = u64::MAX;
    rec.flowops[0].latency.max_ns = u64::MAX;
    rec.flowops[0].histogram = vec![(0, 1), (u64::MAX, u64::MAX)];
    rec.series[0].ops = vec![0, u64::MAX, 1, 0];
    rec.monitor[0].points = vec![(i64::MIN, f64::NEG_INFINITY), (i64::MAX, 0.0)];
    let id = store.record_run(&rec).unwrap();
    assert_run_eq(&store.run(id).unwrap(), &rec);
}

#[test]
fn nan_is_stored_as_null_and_read_back_as_nan() {
    let mut store = Store::open_in_memory().unwrap();
    let exp = store.create_experiment(&common::experiment("e")).unwrap();
    let config = common::config(&mut store, exp, "x");
    let mut rec = record(config, 0, RunStatus::Ok, SMALL);
    rec.metrics = vec![Metric::new("cv", f64::NAN, "")];
    rec.flowops[0].latency.stdev_ns = f64::NAN;
    rec.monitor[0].points = vec![(0, f64::NAN)];
    let id = store.record_run(&rec).unwrap();
    let got = store.run(id).unwrap();
    assert!(got.metrics[0].value.is_nan());
    assert!(got.flowops[0].latency.stdev_ns.is_nan());
    assert!(got.monitor[0].points[0].1.is_nan());
    assert!(store.ok_metric_values(config, "cv").unwrap()[0].is_nan());
}

#[test]
fn empty_parts_round_trip() {
    let mut store = Store::open_in_memory().unwrap();
    let exp = store.create_experiment(&common::experiment("e")).unwrap();
    let config = common::config(&mut store, exp, "x");
    let mut rec = RunRecord::new(record(config, 0, RunStatus::Interrupted, SMALL).run);
    rec.flowops = vec![FlowopStats {
        name: "idle".into(),
        kind: "delay".into(),
        ops: 0,
        bytes: 0,
        errors: 0,
        latency: LatencyStats::default(),
        histogram: vec![],
        extra: json!(null),
    }];
    rec.series = vec![Series {
        name: "io".into(),
        width_ns: 1,
        ops: vec![],
        bytes: vec![],
    }];
    rec.monitor = vec![MonitorSeries {
        metric: "none".into(),
        unit: String::new(),
        points: vec![],
    }];
    let id = store.record_run(&rec).unwrap();
    assert_run_eq(&store.run(id).unwrap(), &rec);
}

#[test]
fn identical_environments_are_stored_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("iolab.db");
    let mut store = Store::open(&path).unwrap();
    let exp = store.create_experiment(&common::experiment("e")).unwrap();
    let config = common::config(&mut store, exp, "x");
    for rep in 0..5 {
        store
            .record_run(&record(config, rep, RunStatus::Ok, SMALL))
            .unwrap();
    }
    let mut other = record(config, 5, RunStatus::Ok, SMALL);
    other.run.environment = json!({"kernel": "6.12"});
    let id = store.record_run(&other).unwrap();
    assert_eq!(
        store.run(id).unwrap().run.environment,
        other.run.environment
    );
    drop(store);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let n: i64 = conn
        .query_row("SELECT count(*) FROM environments", [], |r| r.get(0))
        .unwrap();
    assert_eq!(
        n, 3,
        "the host, the runs' common environment, the other one"
    );
}

#[test]
fn summaries_count_runs_by_status() {
    let mut store = Store::open_in_memory().unwrap();
    assert!(store.list_experiments().unwrap().is_empty());
    assert_eq!(store.latest_experiment().unwrap(), None);
    let a = store.create_experiment(&common::experiment("a")).unwrap();
    let b = store.create_experiment(&common::experiment("b")).unwrap();
    let ca = common::config(&mut store, a, "x");
    let cb = common::config(&mut store, a, "y");
    store
        .record_run(&record(ca, 0, RunStatus::Ok, SMALL))
        .unwrap();
    store
        .record_run(&record(ca, 1, RunStatus::Failed, SMALL))
        .unwrap();
    store
        .record_run(&record(cb, 0, RunStatus::Ok, SMALL))
        .unwrap();
    store
        .record_run(&record(cb, 1, RunStatus::Interrupted, SMALL))
        .unwrap();
    store
        .set_experiment_status(a, ExperimentStatus::Interrupted, Timestamp(5))
        .unwrap();
    let list = store.list_experiments().unwrap();
    assert_eq!(list.len(), 2);
    assert_eq!(list[0].id, a);
    assert_eq!(list[0].name, "a");
    assert_eq!(list[0].source, "a.toml");
    assert_eq!(list[0].status, ExperimentStatus::Interrupted);
    assert_eq!(list[0].finished_at, Some(Timestamp(5)));
    assert_eq!(list[0].configs, 2);
    assert_eq!(
        list[0].runs,
        RunCounts {
            ok: 2,
            failed: 1,
            interrupted: 1
        }
    );
    assert_eq!(list[0].runs.total(), 4);
    assert_eq!(list[1].id, b);
    assert_eq!(list[1].configs, 0);
    assert_eq!(list[1].runs, RunCounts::default());
    assert_eq!(store.latest_experiment().unwrap(), Some(b));

    let details = store.experiment_details(a).unwrap();
    assert_eq!(details.experiment.id, a);
    assert_eq!(details.configs.len(), 2);
    assert_eq!(details.runs.len(), 4);
    assert_eq!(
        details.runs.iter().map(|r| r.status).collect::<Vec<_>>(),
        [
            RunStatus::Ok,
            RunStatus::Failed,
            RunStatus::Ok,
            RunStatus::Interrupted
        ]
    );
}

#[test]
fn metric_values_come_from_ok_runs_only() {
    let mut store = Store::open_in_memory().unwrap();
    let exp = store.create_experiment(&common::experiment("e")).unwrap();
    let c = common::config(&mut store, exp, "x");
    let other = common::config(&mut store, exp, "y");
    // Recorded out of order: values come back in repetition order.
    let r2 = store
        .record_run(&record(c, 2, RunStatus::Ok, SMALL))
        .unwrap();
    let r0 = store
        .record_run(&record(c, 0, RunStatus::Ok, SMALL))
        .unwrap();
    store
        .record_run(&record(c, 1, RunStatus::Failed, SMALL))
        .unwrap();
    store
        .record_run(&record(c, 3, RunStatus::Interrupted, SMALL))
        .unwrap();
    store
        .record_run(&record(other, 0, RunStatus::Ok, SMALL))
        .unwrap();
    assert_eq!(
        store.ok_metric_values(c, "ops_per_s").unwrap(),
        [2000.0, 2000.0 + 2.0 / 3.0]
    );
    assert!(store.ok_metric_values(c, "missing").unwrap().is_empty());
    let all = store.ok_metrics(c).unwrap();
    assert_eq!(
        all.keys().map(String::as_str).collect::<Vec<_>>(),
        ["bytes_per_s", "cpu_sys_pct", "ops", "ops_per_s"]
    );
    let ops = &all["ops_per_s"];
    assert_eq!(ops.unit, "op/s");
    assert_eq!(ops.values, [2000.0, 2000.0 + 2.0 / 3.0]);
    assert_eq!(ops.runs, [r0, r2]);
}

#[test]
fn bad_records_are_refused_and_nothing_is_written() {
    let mut store = Store::open_in_memory().unwrap();
    let exp = store.create_experiment(&common::experiment("e")).unwrap();
    let c = common::config(&mut store, exp, "x");

    let err = store
        .add_config(&NewConfig {
            experiment: exp,
            label: "x".into(),
            factors: Default::default(),
        })
        .unwrap_err();
    assert!(matches!(err, StoreError::DuplicateConfig { .. }), "{err}");
    let err = store
        .add_config(&NewConfig {
            experiment: ExperimentId(999),
            label: "x".into(),
            factors: Default::default(),
        })
        .unwrap_err();
    assert!(matches!(err, StoreError::NoSuchExperiment { .. }), "{err}");

    let err = store
        .record_run(&record(ConfigId(999), 0, RunStatus::Ok, SMALL))
        .unwrap_err();
    assert!(matches!(err, StoreError::NoSuchConfig { .. }), "{err}");

    let mut dup = record(c, 0, RunStatus::Ok, SMALL);
    dup.metrics.push(dup.metrics[0].clone());
    let err = store.record_run(&dup).unwrap_err();
    assert!(err.to_string().contains("appears twice"), "{err}");

    let mut ragged = record(c, 0, RunStatus::Ok, SMALL);
    ragged.series[0].bytes.pop();
    let err = store.record_run(&ragged).unwrap_err();
    assert!(matches!(err, StoreError::InvalidRecord(_)), "{err}");

    store
        .record_run(&record(c, 0, RunStatus::Ok, SMALL))
        .unwrap();
    let err = store
        .record_run(&record(c, 0, RunStatus::Ok, SMALL))
        .unwrap_err();
    assert!(
        matches!(err, StoreError::DuplicateRun { repetition: 0, .. }),
        "{err}"
    );
    // Failed attempts at a repetition may repeat.
    store
        .record_run(&record(c, 1, RunStatus::Failed, SMALL))
        .unwrap();
    store
        .record_run(&record(c, 1, RunStatus::Failed, SMALL))
        .unwrap();
    assert_eq!(store.runs(exp).unwrap().len(), 3);

    let err = store.run(RunId(12345)).unwrap_err();
    assert!(matches!(err, StoreError::NoSuchRun { .. }), "{err}");
    let err = store.experiment(ExperimentId(12345)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "no experiment 12345 in :memory:: `iolab list` shows the ids"
    );
    let err = store
        .set_config_outcome(
            ConfigId(777),
            &ConfigOutcome {
                converged: true,
                note: String::new(),
            },
        )
        .unwrap_err();
    assert!(matches!(err, StoreError::NoSuchConfig { .. }), "{err}");
    let err = store
        .set_experiment_status(ExperimentId(777), ExperimentStatus::Done, Timestamp(0))
        .unwrap_err();
    assert!(matches!(err, StoreError::NoSuchExperiment { .. }), "{err}");
}
