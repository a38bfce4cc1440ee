//! Property: an experiment imported into another database (`iolab import`) exports
//! (`iolab export`) exactly as it did from its own, ids aside — whatever its names and
//! values: HTML and control characters, NaN and infinities, the largest numbers.

use iolab_store::*;
use proptest::prelude::*;
use serde_json::{json, Value};

use crate::common::{self, SMALL};

/// Names as another host may have written them.
fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z_.]{1,12}",
        Just("<script>alert(1)</script>".to_string()),
        Just("\"quoted\" & 'single'".to_string()),
        Just("\u{1b}[2J\u{1b}[31mred".to_string()),
        Just("nul\0byte".to_string()),
        Just("é€😀\u{7f}\u{202e}".to_string()),
        any::<String>(),
    ]
}

fn value() -> impl Strategy<Value = f64> {
    prop_oneof![
        any::<f64>(),
        prop::sample::select(
            &[
                f64::NAN,
                f64::INFINITY,
                f64::NEG_INFINITY,
                1e308,
                -1e308,
                f64::MAX,
                f64::MIN_POSITIVE,
                5e-324,
                -0.0,
                0.1 + 0.2,
                i64::MAX as f64
            ][..]
        ),
    ]
}

fn status() -> impl Strategy<Value = RunStatus> {
    prop::sample::select(&[RunStatus::Ok, RunStatus::Failed, RunStatus::Interrupted][..])
}

#[derive(Debug, Clone)]
struct Run {
    status: RunStatus,
    error: Option<String>,
    seed: u64,
    elapsed_ns: u64,
    metrics: Vec<(String, f64, String)>,
    env: String,
}

fn run() -> impl Strategy<Value = Run> {
    (
        status(),
        prop::option::of(name()),
        any::<u64>(),
        any::<u64>(),
        prop::collection::btree_map(name(), (value(), name()), 0..4),
        name(),
    )
        .prop_map(|(status, error, seed, elapsed_ns, metrics, env)| Run {
            status,
            error,
            seed,
            elapsed_ns,
            metrics: metrics.into_iter().map(|(n, (v, u))| (n, v, u)).collect(),
            env,
        })
}

/// The export as JSON without the ids, which the import renumbers.
fn without_ids(mut v: Value) -> Value {
    fn strip(v: &mut Value) {
        match v {
            Value::Object(o) => {
                o.retain(|k, v| {
                    !(matches!(k.as_str(), "id" | "experiment" | "config") && v.is_number())
                });
                o.values_mut().for_each(strip);
            }
            Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    strip(&mut v);
    v
}

fn export(store: &Store, id: ExperimentId) -> Value {
    without_ids(serde_json::to_value(store.export(id).unwrap()).unwrap())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 48,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn an_imported_experiment_exports_the_same(
        exp_name in name(),
        source in name(),
        spec_value in value(),
        configs in prop::collection::btree_map(name(), (name(), prop::collection::vec(run(), 0..3)), 1..3),
    ) {
        let d = tempfile::tempdir().unwrap();
        let (a, b) = (d.path().join("a.db"), d.path().join("b.db"));
        let mut src = Store::open(&a).unwrap();
        let mut new = common::experiment("x");
        new.name = exp_name;
        new.source = source;
        new.spec["value"] = serde_json::Number::from_f64(spec_value).map_or(Value::Null, Value::Number);
        let exp = src.create_experiment(&new).unwrap();
        for (label, (factor, runs)) in &configs {
            let config = src
                .add_config(&NewConfig {
                    experiment: exp,
                    label: label.clone(),
                    factors: common::factors(&[(factor.as_str(), json!(label))]),
                })
                .unwrap();
            for (rep, r) in runs.iter().enumerate() {
                let mut rec = common::record(config, rep as u32, r.status, SMALL);
                rec.run.seed = r.seed;
                rec.run.elapsed_ns = r.elapsed_ns;
                rec.run.error = r.error.clone();
                rec.run.environment = json!({ "kernel": r.env });
                rec.metrics = r.metrics.iter().map(|(n, v, u)| Metric::new(n.clone(), *v, u.clone())).collect();
                src.record_run(&rec).unwrap();
            }
        }
        let before = export(&src, exp);
        drop(src);
        let mut dst = Store::open(&b).unwrap();
        let report = dst.import(&a).unwrap();
        prop_assert_eq!(report.imported.len(), 1);
        let id = report.imported[0].2;
        prop_assert_eq!(export(&dst, id), before);
    }
}
