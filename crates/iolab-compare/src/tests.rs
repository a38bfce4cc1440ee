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
                unit: "op/s".into(),
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
    assert!(text.contains("ops_per_s (higher is better)"), "{text}");
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

/// The seed-000 comparison printed a latency ratio as `5315 [-763.6, 11649]` (Fieller, with a
/// noisy candidate) and called it "no significant difference". The same runs now give a
/// positive interval; and the difference, far outside it, is claimed.
#[test]
fn a_noisy_latency_ratio_stays_positive() {
    let configs = [
        config(1, "a", "lat_p99_ns", &[936_200.0, 1_000_000.0, 1_063_800.0]),
        config(
            1,
            "b",
            "lat_p99_ns",
            &[2_786_240_000.0, 5_315_000_000.0, 7_843_760_000.0],
        ),
    ];
    let c = compare(&configs, &opts("lat_p99_ns", Some(false))).unwrap();
    let r = &c.metrics[0].rows[1];
    let ci = r.ratio_ci.unwrap();
    assert!(
        ci[0] > 1.0 && ci[0] < r.ratio.unwrap() && r.ratio.unwrap() < ci[1],
        "{r:?}"
    );
    assert_eq!(r.verdict, RowVerdict::Slower, "{r:?}");
    let text = render_string(&c);
    assert!(!text.contains("-763"), "{text}");
    assert!(!text.contains("no significant difference"), "{text}");
}

/// Two runs each, the candidate 4,629× slower on average but all over the place: the seed-000
/// table called such a ratio "no significant difference"; it is "too few runs to tell".
#[test]
fn an_interval_spanning_orders_of_magnitude_is_too_few_runs_to_tell() {
    let configs = [
        config(1, "a", "lat_p99_ns", &[1_000_000.0, 1_100_000.0]),
        config(1, "b", "lat_p99_ns", &[8_000_000.0, 9_250_000_000.0]),
    ];
    let c = compare(&configs, &opts("lat_p99_ns", Some(false))).unwrap();
    let r = &c.metrics[0].rows[1];
    assert!(r.ratio_ci.unwrap()[0] > 0.0, "{r:?}");
    assert_eq!(r.verdict, RowVerdict::Inconclusive, "{r:?}");
    let text = render_string(&c);
    assert!(text.contains("too few runs to tell"), "{text}");
    assert!(!text.contains("no significant difference"), "{text}");
}

/// Human units in the table: a latency in seconds, not `3.326e9`.
#[test]
fn the_table_prints_human_units() {
    let configs = [
        config(1, "a", "lat", &[3.2e9, 3.3e9, 3.4e9]),
        config(1, "b", "lat", &[3.3e9, 3.3e9, 3.35e9]),
    ];
    let mut configs = configs.to_vec();
    for c in &mut configs {
        c.metrics.get_mut("lat").unwrap().unit = "ns".into();
    }
    let text = render_string(&compare(&configs, &opts("lat", Some(false))).unwrap());
    assert!(text.contains("3.30 s ± "), "{text}");
    assert!(!text.contains("e9"), "{text}");
}

fn factored(label: &str, factors: serde_json::Value, metric: &str, v: &[f64]) -> ConfigData {
    ConfigData {
        factors: factors.as_object().unwrap().clone(),
        ..config(1, label, metric, v)
    }
}

/// journal × readers, 2 × 2: writeback doubles ops/s at one reader; 10 readers halve them
/// with journal=ordered, and with writeback to `wb10`.
/// A configuration of a simulation's miss ratio (no unit) about `m` at the levels `factors`
/// (`{"assoc": 2, "policy": "lru"}`), labelled with them.
fn miss_ratio_at(factors: serde_json::Value, m: f64) -> ConfigData {
    let label = factors
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| format!("{k}={}", level_name(v, 0)))
        .collect::<Vec<_>>()
        .join(" ");
    let mut c = factored(&label, factors, "miss_ratio", &[m * 0.999, m, m * 1.001]);
    c.metrics.get_mut("miss_ratio").unwrap().unit = String::new();
    c
}

/// The miss ratio's spec, titled.
fn miss_ratio_spec() -> MetricSpec {
    MetricSpec {
        title: Some("Miss ratio".into()),
        ..MetricSpec::new("miss_ratio", Some(false))
    }
}

fn journal_by_readers(wb10: f64) -> (Vec<ConfigData>, Vec<Factor>) {
    let spec = serde_json::json!({"factors": [
        {"name": "journal", "levels": ["ordered", "writeback"]},
        {"name": "readers", "levels": [1, 10]},
    ]});
    let v = |m: f64| [m * 0.99, m, m * 1.01, m * 1.005];
    let configs = vec![
        factored(
            "journal=ordered readers=1",
            serde_json::json!({"journal": "ordered", "readers": 1}),
            "ops",
            &v(1000.0),
        ),
        factored(
            "journal=ordered readers=10",
            serde_json::json!({"journal": "ordered", "readers": 10}),
            "ops",
            &v(500.0),
        ),
        factored(
            "journal=writeback readers=1",
            serde_json::json!({"journal": "writeback", "readers": 1}),
            "ops",
            &v(2000.0),
        ),
        factored(
            "journal=writeback readers=10",
            serde_json::json!({"journal": "writeback", "readers": 10}),
            "ops",
            &[wb10 + 2.0, wb10 - 10.0, wb10 + 15.0, wb10 + 1.0],
        ),
    ];
    let f = factors(&spec, configs.iter().map(|c| &c.factors));
    (configs, f)
}

#[test]
fn the_answer_is_said_once_when_the_same_everywhere_and_says_where_when_not() {
    let (configs, f) = journal_by_readers(2000.0);
    let mut spec = MetricSpec::new("ops", Some(true));
    spec.title = Some("Throughput".into());
    let a = answers(&configs, &f, &Options::new(vec![spec])).unwrap();
    assert_eq!(a.factors.len(), 2);
    // Writeback is faster everywhere, but 2× with one reader and 4× with ten: said where.
    let journal = &a.factors[0].metrics[0].levels[0];
    assert_eq!(journal.effect, Effect::Faster);
    assert_eq!(journal.ratio, None);
    assert!(
        journal.sentence.starts_with(
            "Throughput: journal=writeback faster than journal=ordered at each of the 2 levels \
             of readers, by different amounts: 2.00× ["
        ) && journal.sentence.contains("] in readers=1, 4.00× ["),
        "{}",
        journal.sentence
    );
    assert_eq!(journal.cells.len(), 2);
    let readers = &a.factors[1].metrics[0].levels[0];
    assert_eq!(readers.effect, Effect::Mixed);
    assert!(
        readers
            .sentence
            .starts_with("Throughput: readers=10 vs readers=1: slower in journal=ordered (2.00× ["),
        "{}",
        readers.sentence
    );
    assert!(
        readers.sentence.contains("; no effect within ±")
            && readers.sentence.ends_with("% in journal=writeback"),
        "{}",
        readers.sentence
    );
    assert_eq!(readers.ratio, None);
    let mut text = Vec::new();
    render_answers(&a, &mut text).unwrap();
    let text = String::from_utf8(text).unwrap();
    assert!(
        text.contains("factor readers (baseline readers=1, within each combination of journal):"),
        "{text}"
    );
    assert!(
        text.lines()
            .any(|l| l.starts_with("journal=writeback readers=10") && l.contains("faster")),
        "{text}"
    );
    // In JSON, structurally.
    let j = serde_json::to_value(&a).unwrap();
    assert_eq!(
        j["factors"][1]["metrics"][0]["levels"][0]["effect"],
        "mixed"
    );
    assert_eq!(
        j["factors"][1]["metrics"][0]["levels"][0]["cells"][1]["effect"],
        "no_effect"
    );
    assert_eq!(j["no_effect_band_pct"], 5.0);
}

/// The same effect in every combination: said once, with the geometric mean of the ratios.
#[test]
fn the_same_effect_everywhere_is_said_once() {
    let (configs, f) = journal_by_readers(1000.0);
    let a = answers(
        &configs,
        &f,
        &Options::new(vec![MetricSpec::new("ops", Some(true))]),
    )
    .unwrap();
    let journal = &a.factors[0].metrics[0].levels[0];
    let ci = journal.ratio_ci.unwrap();
    assert!(
        ci[0] > 1.9 && ci[0] < 2.0 && ci[1] > 2.0 && ci[1] < 2.1,
        "{journal:?}"
    );
    let expected = format!(
        "ops: journal=writeback 2.00× [{}, {}] faster than journal=ordered at each of the 2 \
         levels of readers (geometric mean of the 2)",
        fmt_ratio(ci[0]),
        fmt_ratio(ci[1])
    );
    assert_eq!(journal.sentence, expected);
    let readers = &a.factors[1].metrics[0].levels[0];
    assert_eq!(readers.effect, Effect::Slower);
    assert!(
        readers.sentence.starts_with("ops: readers=10 2.00× [")
            && readers
                .sentence
                .contains("] slower than readers=1 at each of the 2 levels of journal"),
        "{}",
        readers.sentence
    );
}

#[test]
fn the_baseline_level_is_the_first_or_the_one_named() {
    let (configs, f) = journal_by_readers(2000.0);
    let mut o = Options::new(vec![MetricSpec::new("ops", Some(true))]);
    o.baseline = Some("journal=writeback".into());
    let a = answers(&configs, &f, &o).unwrap();
    assert_eq!(a.factors[0].baseline, "writeback");
    assert_eq!(a.factors[0].metrics[0].levels[0].effect, Effect::Slower);
    assert_eq!(a.factors[1].baseline, "1");
    // A configuration's label: its levels.
    o.baseline = Some("journal=writeback readers=10".into());
    let a = answers(&configs, &f, &o).unwrap();
    assert_eq!(
        (
            a.factors[0].baseline.as_str(),
            a.factors[1].baseline.as_str()
        ),
        ("writeback", "10")
    );
    // The flat table takes the first configuration with the levels named.
    o.baseline = Some("journal=writeback".into());
    assert_eq!(
        compare(&configs, &o).unwrap().baseline,
        "journal=writeback readers=1"
    );
    o.baseline = Some("journal=nope".into());
    assert!(matches!(
        answers(&configs, &f, &o),
        Err(CompareError::UnknownBaseline { .. })
    ));
    assert!(matches!(
        compare(&configs, &o),
        Err(CompareError::UnknownBaseline { .. })
    ));
}

#[test]
fn a_significant_difference_too_small_to_print_is_no_effect() {
    // Two eventgen-paced levels: 999.9 and 999.8 op/s, each within ±0.01 %: the difference is
    // significant, and 0.01 % of it.
    let spec = serde_json::json!({"factors": [{"name": "note", "levels": ["a", "b"]}]});
    let configs = vec![
        factored(
            "note=a",
            serde_json::json!({"note": "a"}),
            "ops",
            &[999.90, 999.91, 999.89],
        ),
        factored(
            "note=b",
            serde_json::json!({"note": "b"}),
            "ops",
            &[999.80, 999.81, 999.79],
        ),
    ];
    let f = factors(&spec, configs.iter().map(|c| &c.factors));
    let o = Options::new(vec![MetricSpec::new("ops", Some(true))]);
    let rows = compare(&configs, &o).unwrap();
    assert_eq!(rows.metrics[0].rows[1].verdict, RowVerdict::Slower);
    let a = answers(&configs, &f, &o).unwrap();
    let l = &a.factors[0].metrics[0].levels[0];
    assert_eq!(l.effect, Effect::NoEffect, "{}", l.sentence);
    assert_eq!(l.sentence, "ops: note=b vs note=a: no effect within ±0.1 %");
    // 2 % slower, as precisely: a difference, said as one.
    let configs = vec![
        configs[0].clone(),
        factored(
            "note=b",
            serde_json::json!({"note": "b"}),
            "ops",
            &[979.90, 979.91, 979.89],
        ),
    ];
    let a = answers(&configs, &f, &o).unwrap();
    assert_eq!(a.factors[0].metrics[0].levels[0].effect, Effect::Slower);
}

#[test]
fn identical_levels_are_no_effect_and_single_runs_too_few_to_tell() {
    let spec = serde_json::json!({"factors": [{"name": "note", "levels": ["a", "b", "c"]}]});
    let configs = vec![
        factored(
            "note=a",
            serde_json::json!({"note": "a"}),
            "ops",
            &[1000.0, 1010.0, 990.0, 1005.0],
        ),
        factored(
            "note=b",
            serde_json::json!({"note": "b"}),
            "ops",
            &[1002.0, 995.0, 1008.0, 999.0],
        ),
        factored("note=c", serde_json::json!({"note": "c"}), "ops", &[1000.0]),
    ];
    let f = factors(&spec, configs.iter().map(|c| &c.factors));
    let a = answers(
        &configs,
        &f,
        &Options::new(vec![MetricSpec::new("ops", Some(true))]),
    )
    .unwrap();
    let levels = &a.factors[0].metrics[0].levels;
    assert_eq!(levels[0].effect, Effect::NoEffect);
    let w = levels[0].within_pct.unwrap();
    assert!(w > 0.0 && w <= NO_EFFECT_BAND_PCT, "{w}");
    assert_eq!(
        levels[0].sentence,
        format!("ops: note=b vs note=a: no effect within ±{w:.0} %")
    );
    assert_eq!(levels[1].effect, Effect::TooFewRuns);
    assert_eq!(
        levels[1].sentence,
        "ops: note=c vs note=a: too few runs to tell"
    );
    // Noisier: the interval contains 1 but reaches past the band.
    let noisy = vec![
        factored(
            "note=a",
            serde_json::json!({"note": "a"}),
            "ops",
            &[1000.0, 1100.0, 900.0],
        ),
        factored(
            "note=b",
            serde_json::json!({"note": "b"}),
            "ops",
            &[1050.0, 950.0, 1000.0],
        ),
    ];
    let a = answers(
        &noisy,
        &f,
        &Options::new(vec![MetricSpec::new("ops", Some(true))]),
    )
    .unwrap();
    let l = &a.factors[0].metrics[0].levels[0];
    assert_eq!(l.effect, Effect::NoSignificantDifference, "{l:?}");
    assert!(l.sentence.contains("are not ruled out"), "{}", l.sentence);
    // No factors: no answer.
    let plain = [
        config(1, "x", "ops", &[1.0, 2.0]),
        config(1, "y", "ops", &[1.0, 2.0]),
    ];
    let a = answers(
        &plain,
        &[],
        &Options::new(vec![MetricSpec::new("ops", Some(true))]),
    )
    .unwrap();
    assert!(a.factors.is_empty());
    let mut text = Vec::new();
    render_sentences(&a, &mut text).unwrap();
    assert!(text.is_empty());
}

/// Seed 004's answer: a miss ratio, better lower, is "lower", not "faster"; and an effect of
/// different sizes in many combinations is given as a range with where its ends are, not as
/// 14 intervals in a row.
#[test]
fn a_ratio_that_is_not_a_speed_is_lower_and_many_combinations_are_a_range() {
    let spec = serde_json::json!({"factors": [
        {"name": "assoc", "levels": [2, 16]},
        {"name": "policy", "levels": ["a", "b", "c", "d", "e", "f"]},
    ]});
    let mut configs = Vec::new();
    for (i, p) in ["a", "b", "c", "d", "e", "f"].iter().enumerate() {
        let base = 0.5;
        let better = base / (1.1 + 0.05 * i as f64);
        for (assoc, m) in [(2, base), (16, better)] {
            configs.push(miss_ratio_at(
                serde_json::json!({"assoc": assoc, "policy": p}),
                m,
            ));
        }
    }
    let f = factors(&spec, configs.iter().map(|c| &c.factors));
    let a = answers(&configs, &f, &Options::new(vec![miss_ratio_spec()])).unwrap();
    let assoc = &a.factors[0].metrics[0].levels[0];
    let s = &assoc.sentence;
    assert!(!s.contains("faster"), "{s}");
    assert!(
        s.starts_with("Miss ratio: assoc=16 lower than assoc=2")
            && s.contains("by different amounts: from 1.10× (in policy=a) to 1.35× (in policy=f)"),
        "{s}"
    );
    assert_eq!(s.matches('[').count(), 0, "no list of intervals: {s}");
}

/// A table's heading names the metric as a person reads it, and claims no unit: the cells are
/// in µs/ms/s, so `lat_mean_ns [ns]` contradicted them.
#[test]
fn headings_are_titles_without_a_unit_the_cells_do_not_use() {
    let mut configs = vec![
        config(1, "a", "lat_mean_ns", &[3.2e6, 3.3e6, 3.4e6]),
        config(1, "b", "lat_mean_ns", &[3.3e6, 3.3e6, 3.35e6]),
    ];
    for c in &mut configs {
        c.metrics.get_mut("lat_mean_ns").unwrap().unit = "ns".into();
    }
    let spec = metric_spec("lat_mean_ns", iolab_metrics::COMMON);
    let c = compare(&configs, &Options::new(vec![spec])).unwrap();
    assert_eq!(c.metrics[0].title, "Mean latency");
    let text = render_string(&c);
    assert!(
        text.contains("\nMean latency (lower is better)\n"),
        "{text}"
    );
    assert!(
        !text.contains("[ns]") && !text.contains("lat_mean_ns"),
        "{text}"
    );
    assert!(text.contains("3.30 ms ± "), "{text}");
}

/// `compare --flat` said "faster" for a miss ratio that fell, while the answer said "lower":
/// one function chooses the word for both, and the gate still sees a miss ratio that rose as a
/// regression.
#[test]
fn a_miss_ratio_is_lower_in_the_table_as_in_the_answer() {
    let spec =
        serde_json::json!({"factors": [{"name": "policy", "levels": ["lru", "arc", "fifo"]}]});
    let mut configs = Vec::new();
    for (p, m) in [("lru", 0.5), ("arc", 0.4), ("fifo", 0.6)] {
        configs.push(miss_ratio_at(serde_json::json!({ "policy": p }), m));
    }
    let m = MetricSpec::new("miss_ratio", Some(false));
    let c = compare(&configs, &Options::new(vec![m.clone()])).unwrap();
    let verdicts: Vec<RowVerdict> = c.metrics[0].rows.iter().map(|r| r.verdict).collect();
    assert_eq!(
        verdicts,
        [RowVerdict::Baseline, RowVerdict::Lower, RowVerdict::Higher]
    );
    let text = render_string(&c);
    assert!(
        !text.contains("faster") && !text.contains("slower"),
        "{text}"
    );
    // The answer's pairs carry the same verdicts as the table's rows.
    let f = factors(&spec, configs.iter().map(|c| &c.factors));
    let a = answers(&configs, &f, &Options::new(vec![m])).unwrap();
    let cells: Vec<RowVerdict> = a.factors[0].metrics[0]
        .levels
        .iter()
        .map(|l| l.cells[0].verdict)
        .collect();
    assert_eq!(cells, [RowVerdict::Lower, RowVerdict::Higher]);
    // A miss ratio 20% higher is a regression beyond 5%.
    let r = c.slower_than(5.0).unwrap();
    assert_eq!(r.len(), 1, "{r:?}");
    assert_eq!(r[0].label, "policy=fifo");
    // A time keeps "faster"/"slower".
    assert_eq!(
        RowVerdict::of_difference(Some(false), "ns", false),
        RowVerdict::Faster
    );
    assert_eq!(
        RowVerdict::of_difference(Some(true), "B", true),
        RowVerdict::Higher
    );
}

/// Seed 004's answer was a wall: 13 associativities × 7 policies, a sentence per level and
/// metric. A factor of more than four levels is one sentence per metric — how many levels do
/// what, the best and the worst — with every level's sentence kept as the folded detail; a
/// factor of four levels or fewer keeps a sentence per level.
#[test]
fn a_factor_of_many_levels_is_one_sentence_per_metric() {
    let assoc: Vec<String> = (1..=12)
        .map(|i| (1u64 << i).to_string())
        .chain(["full".to_string()])
        .collect();
    let policies = ["lru", "fifo", "clock", "belady"];
    let spec = serde_json::json!({"factors": [
        {"name": "assoc", "levels": assoc},
        {"name": "policy", "levels": policies},
    ]});
    let mut configs = Vec::new();
    for (i, a) in assoc.iter().enumerate() {
        for (j, p) in policies.iter().enumerate() {
            // Falls with the associativity, levels off from 64 ways on; belady is the best.
            let m = 0.5 / (1.0 + 0.1 * i.min(5) as f64) * (1.0 - 0.05 * j as f64);
            configs.push(miss_ratio_at(
                serde_json::json!({"assoc": a, "policy": p}),
                m,
            ));
        }
    }
    let f = factors(&spec, configs.iter().map(|c| &c.factors));
    let a = answers(&configs, &f, &Options::new(vec![miss_ratio_spec()])).unwrap();
    let lines = sentences(&a);
    // assoc: one sentence; policy (4 levels): one per other level.
    assert_eq!(lines.len(), 1 + 3, "{lines:#?}");
    let s = lines[0];
    assert!(
        s.starts_with("Miss ratio: the 12 other levels of assoc against assoc=2: ")
            && s.contains("; best assoc=64 (1.50× [")
            && s.contains("] lower), worst assoc=4 (1.10× ["),
        "{s}"
    );
    let assoc_answer = &a.factors[0].metrics[0];
    assert!(assoc_answer.summary.is_some());
    assert_eq!(assoc_answer.levels.len(), 12, "the detail is kept");
    assert!(a.factors[1].metrics[0].summary.is_none());
    assert_eq!(level_sentences(&a).len(), 12 + 3);
    let mut text = Vec::new();
    render_sentences(&a, &mut text).unwrap();
    let text = String::from_utf8(text).unwrap();
    assert_eq!(text.lines().count(), 1 + 4 + 1, "{text}");
    assert!(
        text.contains("assoc summed up: every level's sentence in `iolab compare --json`"),
        "{text}"
    );
    // Nothing varies: no effect, said once.
    for c in &mut configs {
        let v = c.metrics.get_mut("miss_ratio").unwrap();
        v.values = vec![0.3 * 0.999, 0.3, 0.3 * 1.001];
    }
    let a = answers(
        &configs,
        &f,
        &Options::new(vec![MetricSpec::new("miss_ratio", Some(false))]),
    )
    .unwrap();
    let s = sentences(&a)[0];
    assert!(
        s.starts_with(
            "miss_ratio: the 12 other levels of assoc against assoc=2: no effect within ±"
        ) && s.ends_with("% at every one"),
        "{s}"
    );
}

/// Seed report 002: a journal mode that never unlinks (0 unlinks per transaction in every
/// run) against one that unlinks once per transaction. No ratio on the log scale exists, but
/// the difference is plain: "higher … 1 against 0", not "undefined (baseline mean 0)" nor
/// "too few runs to tell"; two modes that both never unlink are no effect.
#[test]
fn a_count_that_is_zero_in_every_run_of_one_side_is_said_with_the_means() {
    let spec = serde_json::json!({"factors": [
        {"name": "journal", "levels": ["wal", "delete", "truncate"]},
    ]});
    let unlinks = |label: &str, v: &[f64]| {
        let mut c = factored(
            &format!("journal={label}"),
            serde_json::json!({ "journal": label }),
            "unlinks_per_tx",
            v,
        );
        c.metrics.get_mut("unlinks_per_tx").unwrap().unit = String::new();
        c
    };
    let configs = vec![
        unlinks("wal", &[0.0, 0.0, 0.0, 0.0]),
        unlinks("delete", &[1.0, 1.0, 1.0, 1.0]),
        unlinks("truncate", &[0.0, 0.0, 0.0, 0.0]),
    ];
    let f = factors(&spec, configs.iter().map(|c| &c.factors));
    let spec = MetricSpec {
        title: Some("unlinks/txn".into()),
        ..MetricSpec::new("unlinks_per_tx", Some(false))
    };
    let a = answers(&configs, &f, &Options::new(vec![spec.clone()])).unwrap();
    let levels = &a.factors[0].metrics[0].levels;
    assert_eq!(levels[0].effect, Effect::Higher);
    assert_eq!(
        levels[0].sentence,
        "unlinks/txn: journal=delete higher than journal=wal: 1.00 against 0"
    );
    assert_eq!(levels[1].effect, Effect::NoEffect);
    // The flat table agrees, and the other way round is "lower … 0 against 1".
    let c = compare(&configs, &Options::new(vec![spec.clone()])).unwrap();
    let verdicts: Vec<RowVerdict> = c.metrics[0].rows.iter().map(|r| r.verdict).collect();
    assert_eq!(
        verdicts,
        [
            RowVerdict::Baseline,
            RowVerdict::Higher,
            RowVerdict::Identical
        ]
    );
    let o = Options {
        baseline: Some("journal=delete".into()),
        ..Options::new(vec![spec])
    };
    let a = answers(&configs, &f, &o).unwrap();
    assert_eq!(
        a.factors[0].metrics[0].levels[0].sentence,
        "unlinks/txn: journal=wal lower than journal=delete: 0 against 1.00"
    );
}
