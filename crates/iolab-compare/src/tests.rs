use super::*;
use iolab_stats::Rng;
use iolab_store::{NewConfig, NewExperiment, NewRun, RunRecord, RunStatus, Timestamp};

fn config(exp: i64, label: &str, metric: &str, v: &[f64]) -> ConfigData {
    ConfigData {
        experiment: ExperimentId(exp),
        config: iolab_store::ConfigId(0),
        label: label.into(),
        converged: Some(true),
        deterministic: false,
        factors: Default::default(),
        metrics: BTreeMap::from([(
            metric.to_string(),
            MetricValues {
                unit: "u".into(),
                values: v.to_vec(),
                runs: vec![],
            },
        )]),
    }
}

fn opts(metric: &str, dir: Option<bool>) -> Options {
    Options::new(vec![MetricSpec::new(metric, dir)])
}

/// Identical means, normal noise (CV 5%), 3 configurations (two comparisons per family),
/// 5 runs each: over 400 seeded trials the verdict is "no significant difference" in at
/// least 95% of the comparisons. Holm plus the ratio-interval condition keep the rate of
/// false claims at or below α.
#[test]
fn identical_configurations_are_no_difference_in_95_percent_of_trials() {
    let mut rng = Rng::new(2024);
    let trials = 400;
    let mut nsd = 0;
    let mut total = 0;
    for _ in 0..trials {
        let mut draw = || {
            (0..5)
                .map(|_| 1000.0 + 50.0 * rng.normal())
                .collect::<Vec<_>>()
        };
        let configs = [
            config(1, "a", "ops_per_s", &draw()),
            config(1, "b", "ops_per_s", &draw()),
            config(1, "c", "ops_per_s", &draw()),
        ];
        let c = compare(&configs, &opts("ops_per_s", Some(true))).unwrap();
        for r in &c.metrics[0].rows[1..] {
            total += 1;
            if r.verdict == RowVerdict::NoSignificantDifference {
                nsd += 1;
            }
        }
    }
    let rate = nsd as f64 / total as f64;
    assert!(rate >= 0.95, "no-difference rate {rate}");
    // And not trivially: the test does claim differences sometimes.
    assert!(rate < 1.0, "rate {rate}");
}

/// Two configurations only (a family of one): the property holds per comparison too.
#[test]
fn identical_pair_no_difference_in_95_percent_of_200_trials() {
    let mut rng = Rng::new(7);
    let mut nsd = 0;
    for _ in 0..200 {
        let mut draw = || {
            (0..5)
                .map(|_| 500.0 + 20.0 * rng.normal())
                .collect::<Vec<_>>()
        };
        let configs = [
            config(1, "a", "ops_per_s", &draw()),
            config(1, "b", "ops_per_s", &draw()),
        ];
        let c = compare(&configs, &opts("ops_per_s", Some(true))).unwrap();
        if c.metrics[0].rows[1].verdict == RowVerdict::NoSignificantDifference {
            nsd += 1;
        }
    }
    assert!(nsd >= 190, "{nsd}/200");
}

#[test]
fn directions() {
    let a = [100.0, 101.0, 99.0, 100.5];
    let b = [120.0, 121.0, 119.0, 120.5];
    let configs = [config(1, "a", "m", &a), config(1, "b", "m", &b)];
    let v = |dir| compare(&configs, &opts("m", dir)).unwrap().metrics[0].rows[1].verdict;
    assert_eq!(v(Some(true)), RowVerdict::Faster);
    assert_eq!(v(Some(false)), RowVerdict::Slower);
    assert_eq!(v(None), RowVerdict::Higher);
    let rev = [config(1, "b", "m", &b), config(1, "a", "m", &a)];
    let c = compare(&rev, &opts("m", None)).unwrap();
    assert_eq!(c.metrics[0].rows[1].verdict, RowVerdict::Lower);
    let r = &c.metrics[0].rows[1];
    assert!(r.ratio.unwrap() < 1.0);
    assert!(r.ratio_ci.unwrap()[1] < 1.0);
    assert!(r.p_adjusted.unwrap() < 0.05 && r.p_mann_whitney.is_some());
}

#[test]
fn too_few_runs_and_missing_metric() {
    let configs = [
        config(1, "a", "m", &[1.0, 2.0, 3.0]),
        config(1, "one", "m", &[2.0]),
        config(1, "none", "other", &[2.0, 3.0]),
    ];
    let c = compare(&configs, &opts("m", Some(true))).unwrap();
    let rows = &c.metrics[0].rows;
    assert_eq!(rows[0].verdict, RowVerdict::Baseline);
    assert_eq!(rows[1].verdict, RowVerdict::TooFewRuns);
    assert_eq!(rows[1].mean, Some(2.0));
    assert_eq!(rows[1].ci, None);
    assert_eq!(rows[2].verdict, RowVerdict::TooFewRuns);
    assert_eq!(rows[2].n, 0);
    // A baseline with one run: nobody can be compared.
    let mut b = opts("m", Some(true));
    b.baseline = Some("one".into());
    let c = compare(&configs, &b).unwrap();
    assert_eq!(c.metrics[0].rows[0].verdict, RowVerdict::TooFewRuns);
    // Unknown metric.
    assert!(matches!(
        compare(&configs, &opts("nope", None)),
        Err(CompareError::UnknownMetric { .. })
    ));
    let text = render_string(&c);
    assert!(text.contains("too few runs"), "{text}");
}

#[test]
fn labels_across_experiments() {
    let mut configs = vec![
        config(1, "vm", "m", &[1.0, 2.0]),
        config(1, "x=1", "m", &[1.0, 2.0]),
        config(2, "x=1", "m", &[1.0, 2.0]),
    ];
    disambiguate(&mut configs);
    let labels: Vec<&str> = configs.iter().map(|c| c.label.as_str()).collect();
    assert_eq!(labels, ["vm", "#1:x=1", "#2:x=1"]);
    let mut o = opts("m", Some(true));
    o.baseline = Some("#2:x=1".into());
    assert_eq!(compare(&configs, &o).unwrap().baseline, "#2:x=1");
    o.baseline = Some("x=1".into());
    assert!(matches!(
        compare(&configs, &o),
        Err(CompareError::AmbiguousBaseline { .. })
    ));
    o.baseline = Some("zzz".into());
    assert!(matches!(
        compare(&configs, &o),
        Err(CompareError::UnknownBaseline { .. })
    ));
}

#[test]
fn slower_than_threshold() {
    let a = [1000.0, 1002.0, 998.0, 1001.0, 999.0];
    let b = [900.0, 901.0, 899.0, 900.5, 899.5];
    let configs = [config(1, "a", "m", &a), config(1, "b", "m", &b)];
    let c = compare(&configs, &opts("m", Some(true))).unwrap();
    let r = c.slower_than(5.0).unwrap();
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].label, "b");
    assert!((r[0].limit - 0.95).abs() < 1e-12);
    assert!(c.slower_than(20.0).unwrap().is_empty());
    assert!(c.slower_than(-1.0).is_err());
    assert!(c.slower_than(f64::NAN).is_err());
    // Throughput cannot fall by 100%; a latency can rise by more (below).
    assert!(c.slower_than(100.0).is_err());
    // Latency: b is 10% lower, so a (as candidate) is ~11% slower.
    let rev = [config(1, "b", "m", &b), config(1, "a", "m", &a)];
    let c = compare(&rev, &opts("m", Some(false))).unwrap();
    assert_eq!(c.slower_than(10.0).unwrap().len(), 1);
    assert!(c.slower_than(12.0).unwrap().is_empty());
    // Tripled latency is past a +150% gate, not past +250%.
    let slow = [3000.0, 3006.0, 2994.0, 3003.0, 2997.0];
    let tripled = [config(1, "a", "m", &a), config(1, "c", "m", &slow)];
    let c3 = compare(&tripled, &opts("m", Some(false))).unwrap();
    assert_eq!(c3.slower_than(150.0).unwrap().len(), 1);
    assert!(c3.slower_than(250.0).unwrap().is_empty());
    let c = compare(&rev, &opts("m", None)).unwrap();
    assert!(matches!(
        c.slower_than(5.0),
        Err(CompareError::UnknownDirection { .. })
    ));
}

#[test]
fn json_and_text() {
    let configs = [
        config(1, "a", "ops_per_s", &[100.0, 101.0, 99.0]),
        config(1, "b", "ops_per_s", &[100.5, 100.0, 99.5]),
    ];
    let c = compare(&configs, &opts("ops_per_s", Some(true))).unwrap();
    let j = serde_json::to_value(&c).unwrap();
    assert_eq!(j["baseline"], "a");
    assert_eq!(
        j["metrics"][0]["rows"][1]["verdict"],
        "no_significant_difference"
    );
    assert_eq!(j["metrics"][0]["rows"][0]["verdict"], "baseline");
    let text = render_string(&c);
    assert!(text.contains("no significant difference"), "{text}");
    assert!(text.contains("1 (baseline)"), "{text}");
    assert!(text.contains("ops_per_s [u] (higher is better)"), "{text}");
}

#[test]
fn numbers() {
    assert_eq!(fmt_num(12345.6), "12346");
    assert_eq!(fmt_num(0.9), "0.9000");
    assert_eq!(fmt_num(12.345), "12.35");
    assert_eq!(fmt_num(0.0), "0");
    assert_eq!(fmt_num(f64::INFINITY), "inf");
}

#[test]
fn load_from_store() {
    let mut store = Store::open_in_memory().unwrap();
    let mut exps = vec![];
    for _ in 0..2 {
        let exp = store
            .create_experiment(&NewExperiment {
                name: "e".into(),
                source: "e.toml".into(),
                spec: serde_json::json!({}),
                seed: 1,
                created_at: Timestamp::now(),
                iolab_version: "0".into(),
                host: serde_json::json!({}),
            })
            .unwrap();
        let cfg = store
            .add_config(&NewConfig {
                experiment: exp,
                label: "same".into(),
                factors: Default::default(),
            })
            .unwrap();
        for rep in 0..3 {
            let mut r = RunRecord::new(NewRun {
                config: cfg,
                repetition: rep,
                seed: 1,
                status: RunStatus::Ok,
                error: None,
                started_at: Timestamp::now(),
                ended_at: Timestamp::now(),
                elapsed_ns: 1,
                environment: serde_json::json!({}),
            });
            r.metrics.push(iolab_store::Metric::new(
                "ops_per_s",
                10.0 + rep as f64,
                "op/s",
            ));
            store.record_run(&r).unwrap();
        }
        exps.push(exp);
    }
    let loaded = load(&store, &[exps[0], exps[1], exps[0]]).unwrap();
    assert_eq!(loaded.experiments.len(), 2);
    let labels: Vec<String> = loaded.configs.iter().map(|c| c.label.clone()).collect();
    assert_eq!(
        labels,
        [format!("#{}:same", exps[0]), format!("#{}:same", exps[1])]
    );
    assert_eq!(
        default_metrics(&loaded.configs, &loaded.metrics),
        ["ops_per_s"]
    );
    // Stored without definitions (as before schema 2): the common table's direction.
    assert_eq!(
        metric_spec("lat_p99_ns", &loaded.metrics).higher_is_better,
        Some(false)
    );
    assert_eq!(
        metric_spec("cpu.usr_pct", &loaded.metrics).higher_is_better,
        None
    );
    let c = compare(&loaded.configs, &opts("ops_per_s", Some(true))).unwrap();
    assert_eq!(
        c.metrics[0].rows[1].verdict,
        RowVerdict::NoSignificantDifference
    );
    assert_eq!(c.metrics[0].unit, "op/s");
}

#[test]
fn deterministic_configurations_compare_exact_metrics_exactly() {
    let exact = |label: &str, v: f64| ConfigData {
        deterministic: true,
        ..config(1, label, "miss_ratio", &[v])
    };
    let configs = [
        exact("lru", 0.5),
        exact("fifo", 0.6),
        exact("arc", 0.4),
        exact("clock", 0.5),
        // Not deterministic: one run is too few, as always.
        config(1, "measured", "miss_ratio", &[0.3]),
    ];
    let spec = MetricSpec {
        exact: true,
        ..MetricSpec::new("miss_ratio", Some(false))
    };
    let c = compare(&configs, &Options::new(vec![spec.clone()])).unwrap();
    let rows = &c.metrics[0].rows;
    let verdicts: Vec<RowVerdict> = rows.iter().map(|r| r.verdict).collect();
    assert_eq!(
        verdicts,
        [
            RowVerdict::Baseline,
            RowVerdict::Slower,
            RowVerdict::Faster,
            RowVerdict::Identical,
            RowVerdict::TooFewRuns
        ]
    );
    assert_eq!(rows[1].ratio, Some(0.6 / 0.5));
    assert_eq!(rows[1].ratio_ci, Some([0.6 / 0.5, 0.6 / 0.5]));
    assert!(rows[1].p_welch.is_none() && rows[1].p_adjusted.is_none());
    // A metric that is not declared exact (a simulation's speed) gets the usual treatment.
    let c = compare(
        &configs,
        &Options::new(vec![MetricSpec::new("miss_ratio", Some(false))]),
    )
    .unwrap();
    assert!(c.metrics[0].rows[1..]
        .iter()
        .all(|r| r.verdict == RowVerdict::TooFewRuns));
}
