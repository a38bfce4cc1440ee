//! JSON and CSV exports hold what the database holds.

use iolab_store::*;
use serde_json::{json, Value};

use crate::common::{self, record, SMALL};

fn json(store: &Store, id: ExperimentId) -> String {
    serde_json::to_string(&store.export(id).unwrap()).unwrap()
}

fn csv(store: &Store, id: ExperimentId) -> String {
    let mut out = Vec::new();
    store.export(id).unwrap().write_csv(&mut out).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn json_export_holds_everything() {
    let mut store = Store::open_in_memory().unwrap();
    let exp = store.create_experiment(&common::experiment("e")).unwrap();
    let a = common::config(&mut store, exp, "journal");
    let b = common::config(&mut store, exp, "ordered");
    let mut rec = record(a, 0, RunStatus::Ok, SMALL);
    rec.metrics.push(Metric::new("zz_nan", f64::NAN, ""));
    let r0 = store.record_run(&rec).unwrap();
    let r1 = store
        .record_run(&record(b, 0, RunStatus::Failed, SMALL))
        .unwrap();
    store
        .set_config_outcome(
            a,
            &ConfigOutcome {
                converged: true,
                note: "CI ±1%".into(),
            },
        )
        .unwrap();
    store
        .add_config_findings(
            b,
            &[Finding {
                check: "did-not-converge".into(),
                severity: Severity::Error,
                evidence: json!({"n": 1}),
                explanation: "e".into(),
                fix: "f".into(),
            }],
        )
        .unwrap();

    let text = json(&store, exp);
    let doc: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(doc["db_schema_version"], SCHEMA_VERSION);

    let e = &doc["experiment"];
    let stored = store.experiment(exp).unwrap();
    assert_eq!(e["id"], exp.0);
    assert_eq!(e["uuid"], stored.uuid.as_str());
    assert_eq!(e["name"], "e");
    assert_eq!(e["source"], "e.toml");
    assert_eq!(e["status"], "running");
    assert_eq!(e["seed"].as_u64(), Some(u64::MAX - 1));
    assert_eq!(e["created_at"], "2023-11-14T22:13:20.123456789Z");
    assert_eq!(e["finished_at"], Value::Null);
    assert_eq!(e["iolab_version"], "0.1.0");
    assert_eq!(e["host"], common::experiment("e").host);
    assert_eq!(e["spec"], common::experiment("e").spec);

    let configs = doc["configs"].as_array().unwrap();
    assert_eq!(configs.len(), 2);
    assert_eq!(configs[0]["id"], a.0);
    assert_eq!(configs[0]["label"], "journal");
    assert_eq!(
        configs[0]["factors"],
        json!({"fs": "ext4", "data": "journal"})
    );
    assert_eq!(
        configs[0]["outcome"],
        json!({"converged": true, "note": "CI ±1%"})
    );
    assert_eq!(configs[1]["outcome"], Value::Null);
    assert_eq!(configs[0]["findings"], json!([]));
    assert_eq!(configs[1]["findings"][0]["check"], "did-not-converge");
    assert_eq!(configs[1]["findings"][0]["severity"], "error");

    let run = &configs[0]["runs"][0];
    assert_eq!(run["id"], r0.0);
    assert_eq!(run["config"], a.0);
    assert_eq!(run["repetition"], 0);
    assert_eq!(run["seed"].as_u64(), Some(rec.run.seed));
    assert_eq!(run["status"], "ok");
    assert_eq!(run["error"], Value::Null);
    assert_eq!(run["started_at"], "2023-11-14T22:15:00.000000000Z");
    assert_eq!(run["ended_at"], "2023-11-14T22:15:00.500000000Z");
    assert_eq!(run["elapsed_ns"], 500_000_000);
    assert_eq!(run["environment"], rec.run.environment);
    assert_eq!(
        run["metrics"][3],
        json!({"name": "ops_per_s", "value": 2000.0, "unit": "op/s"})
    );
    assert_eq!(run["metrics"][4]["value"], Value::Null, "NaN is null");
    let f = &run["flowops"][0];
    assert_eq!(f["name"], "flowop0");
    assert_eq!(f["kind"], "read");
    assert_eq!(f["ops"], 1000);
    assert_eq!(f["bytes"], 4_096_000);
    assert_eq!(f["errors"], 0);
    assert_eq!(f["latency"]["p99_ns"], 50_000);
    assert_eq!(f["latency"]["mean_ns"], 12_345.678);
    assert_eq!(
        f["histogram"],
        json!([[1000, 1], [1038, 2], [1078, 3], [1120, 4], [1164, 5]])
    );
    assert_eq!(f["extra"], json!({"is_io": true, "ran_dry": 0}));
    assert_eq!(
        run["series"][0],
        json!({"name": "io", "width_ns": 1_000_000_000u64, "ops": [100, 101, 102, 103],
               "bytes": [409_600, 413_696, 417_792, 421_888]})
    );
    assert_eq!(run["monitor"][1]["metric"], "disk.vdb.m1");
    assert_eq!(
        run["monitor"][1]["points"],
        json!([[-50_000_000, 0.5], [50_000_000, 1.0], [150_000_000, 1.5]])
    );
    assert_eq!(run["findings"][0]["check"], "cache-fit");
    assert_eq!(run["findings"][0]["severity"], "warning");
    assert_eq!(
        run["findings"][0]["evidence"]["dataset_bytes"],
        1_073_741_824u64
    );
    let failed = &configs[1]["runs"][0];
    assert_eq!(failed["id"], r1.0);
    assert_eq!(failed["status"], "failed");
    assert_eq!(failed["error"], "write: No space left on device (rep 0)");

    let err = store.export(ExperimentId(42)).unwrap_err();
    assert!(matches!(err, StoreError::NoSuchExperiment { .. }), "{err}");
}

fn small_run(config: ConfigId, rep: u32, status: RunStatus, metrics: Vec<Metric>) -> RunRecord {
    let mut r = RunRecord::new(record(config, rep, status, SMALL).run);
    r.metrics = metrics;
    r
}

#[test]
fn csv_export_has_one_row_per_run_with_factors_and_metrics() {
    let mut store = Store::open_in_memory().unwrap();
    let exp = store
        .create_experiment(&common::experiment("csv, \"quoted\""))
        .unwrap();
    let a = store
        .add_config(&NewConfig {
            experiment: exp,
            label: "ext4".into(),
            factors: common::factors(&[("fs", json!("ext4")), ("threads", json!(4))]),
        })
        .unwrap();
    let b = store
        .add_config(&NewConfig {
            experiment: exp,
            label: "xfs".into(),
            // A factor the first config lacks, one colliding with a fixed column, a list.
            factors: common::factors(&[
                ("fs", json!("xfs")),
                ("status", json!("odd")),
                ("opts", json!(["noatime", "a,b"])),
            ]),
        })
        .unwrap();
    store
        .record_run(&small_run(
            a,
            0,
            RunStatus::Ok,
            vec![
                Metric::new("ops_per_s", 1500.25, "op/s"),
                Metric::new("fs", 1.0, ""),
            ],
        ))
        .unwrap();
    store
        .record_run(&small_run(
            b,
            0,
            RunStatus::Failed,
            vec![Metric::new("p99_ns", 12_000.0, "ns")],
        ))
        .unwrap();
    store
        .record_run(&small_run(
            a,
            1,
            RunStatus::Ok,
            vec![Metric::new("ops_per_s", f64::NAN, "op/s")],
        ))
        .unwrap();

    let text = csv(&store, exp);
    let expected = format!(
        "experiment_id,experiment,config_id,config,repetition,run_id,status,seed,started_at,ended_at,elapsed_ns,error,fs,threads,opts,factor:status,metric:fs,ops_per_s (op/s),p99_ns (ns)\n\
         {e},\"csv, \"\"quoted\"\"\",{a},ext4,0,1,ok,11400714819323198485,2023-11-14T22:15:00.000000000Z,2023-11-14T22:15:00.500000000Z,500000000,,ext4,4,,,1,1500.25,\n\
         {e},\"csv, \"\"quoted\"\"\",{b},xfs,0,2,failed,11400714819323198485,2023-11-14T22:15:00.000000000Z,2023-11-14T22:15:00.500000000Z,500000000,write: No space left on device (rep 0),xfs,,\"[\"\"noatime\"\",\"\"a,b\"\"]\",odd,,,12000\n\
         {e},\"csv, \"\"quoted\"\"\",{a},ext4,1,3,ok,11400714819323198484,2023-11-14T22:15:01.000000000Z,2023-11-14T22:15:01.500000000Z,500000001,,ext4,4,,,,,\n",
        e = exp.0,
        a = a.0,
        b = b.0,
    );
    assert_eq!(text, expected);
}

#[test]
fn csv_export_of_an_experiment_without_runs_is_a_header() {
    let mut store = Store::open_in_memory().unwrap();
    let exp = store.create_experiment(&common::experiment("e")).unwrap();
    common::config(&mut store, exp, "x");
    assert_eq!(
        csv(&store, exp),
        "experiment_id,experiment,config_id,config,repetition,run_id,status,seed,started_at,ended_at,elapsed_ns,error,data,fs\n"
    );
}
