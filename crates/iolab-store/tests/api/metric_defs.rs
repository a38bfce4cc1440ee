//! Metric definitions stored with an experiment (schema 2): read back as written, copied by
//! import, exported, and replaced by the common table for experiments stored without them.

use std::borrow::Cow;

use iolab_store::*;

use crate::common;

fn custom() -> MetricDef {
    MetricDef {
        name: Cow::Borrowed("final_sync_ns"),
        unit: Cow::Borrowed("ns"),
        better: Some(Better::Lower),
        title: Cow::Borrowed("Final sync"),
        description: Cow::Borrowed("the longest final fsync"),
        headline: false,
        exact: true,
    }
}

#[test]
fn definitions_round_trip_and_default_to_the_common_table() {
    let mut store = Store::open_in_memory().unwrap();
    let e = store.create_experiment(&common::experiment("e")).unwrap();
    assert!(store.stored_metric_defs(e).unwrap().is_empty());
    assert_eq!(store.metric_defs(e).unwrap(), iolab_metrics::COMMON);

    let defs = iolab_metrics::with_common(&[custom()]);
    store.set_metric_defs(e, &defs).unwrap();
    assert_eq!(store.metric_defs(e).unwrap(), defs);
    // Replaced, not added to.
    store.set_metric_defs(e, &[custom()]).unwrap();
    assert_eq!(store.metric_defs(e).unwrap(), [custom()]);

    let err = store
        .set_metric_defs(ExperimentId(99), &[custom()])
        .unwrap_err();
    assert!(matches!(err, StoreError::NoSuchExperiment { .. }), "{err}");
}

#[test]
fn import_and_export_carry_them() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src.db");
    let e = {
        let mut store = Store::open(&src).unwrap();
        let e = store.create_experiment(&common::experiment("e")).unwrap();
        store.set_metric_defs(e, &[custom()]).unwrap();
        e
    };
    let mut dst = Store::open(dir.path().join("dst.db")).unwrap();
    let report = dst.import(&src).unwrap();
    let new = report.imported[0].2;
    assert_eq!(dst.metric_defs(new).unwrap(), [custom()]);

    let src = Store::open(&src).unwrap();
    let doc = serde_json::to_value(src.export(e).unwrap()).unwrap();
    assert_eq!(doc["metrics"][0]["name"], "final_sync_ns");
    assert_eq!(doc["metrics"][0]["better"], "lower");
}
