//! Comparing configurations (`iolab compare`): for each metric, every configuration against a
//! baseline — the ratio with its 95% interval (Welch's on the logarithms, exponentiated: it
//! never crosses zero), its p-value Holm-adjusted over the family of comparisons of that
//! metric, Mann–Whitney's p as a rank-based cross-check, and a verdict (docs/statistics.md,
//! "Comparing configurations"). [`answers`] gives the per-factor view: each factor's effect
//! within each combination of the other factors, in one sentence per factor and metric.
//!
//! The verdict is `iolab_stats::compare::verdict`: a difference is claimed only when the
//! Holm-adjusted p ≤ 0.05 **and** the ratio's interval excludes 1; an interval that spans 10×
//! or more is "too few runs to tell". A configuration (or a baseline) with fewer than two ok
//! runs gets "too few runs to tell" too and takes no part in the family. A metric declared exact (`MetricDef::exact`: a simulation's counts) of two
//! deterministic configurations is compared as exact numbers: the ratio without an interval and
//! "identical", or the direction, as the verdict; no test. A difference is "faster"/"slower"
//! only for a speed or a time of known direction; anything else (a miss ratio, a byte count,
//! monitor metrics such as `cpu.busy`) is "higher"/"lower" ([`RowVerdict::of_difference`]:
//! the one place the word is chosen, for the tables and the answer's sentences alike).
//!
//! Configurations may come from several experiments (e.g. the same experiment file run on
//! two machines and brought together with `iolab import`): [`load`] pools them, and a label
//! that occurs in more than one experiment is shown as `#ID:label`.
//!
//! The library never prints: [`render_text`] writes the tables to an `io::Write`, and the
//! model ([`Comparison`]) serializes to JSON.
//!
//! ```
//! use iolab_compare::*;
//! use std::collections::BTreeMap;
//! use iolab_store::{ConfigId, ExperimentId, MetricValues};
//!
//! let config = |label: &str, v: &[f64]| ConfigData {
//!     experiment: ExperimentId(1),
//!     config: ConfigId(0),
//!     label: label.into(),
//!     converged: Some(true),
//!     deterministic: false,
//!     factors: Default::default(),
//!     metrics: BTreeMap::from([("ops_per_s".to_string(), MetricValues {
//!         unit: "op/s".into(), values: v.to_vec(), runs: vec![] })]),
//! };
//! let configs = [config("a", &[100.0, 101.0, 99.0]), config("b", &[90.0, 91.0, 89.0])];
//! let c = compare(&configs, &Options::new(vec![MetricSpec::new("ops_per_s", Some(true))]))?;
//! assert_eq!(c.metrics[0].rows[1].verdict, RowVerdict::Slower);
//! let mut text = Vec::new();
//! render_text(&c, &mut text).unwrap();
//! # Ok::<(), CompareError>(())
//! ```

mod answer;
mod factors;

pub use answer::{
    answers, folded_factors, level_sentences, render_answers, render_sentences, sentences, Answers,
    CellEffect, Effect, FactorAnswer, LevelAnswer, MetricAnswer, FOLD_ABOVE_LEVELS,
    NO_EFFECT_BAND_PCT,
};
pub use factors::{factors, level_name, Factor, FactorLevel};

use std::collections::{BTreeMap, BTreeSet};
use std::io::{self, Write};

use iolab_metrics::MetricDef;
use iolab_stats::compare::{
    self as stats_compare, holm_adjust, CompareOptions, PositiveRatio, Verdict,
};
use iolab_stats::{Level, Sample, Summary};
use iolab_store::{ConfigId, ExperimentId, MetricValues, Store, StoreError};
use serde::Serialize;
use serde_json::{Map, Value};

/// What can go wrong.
#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("nothing to compare: the experiments have no configurations")]
    NoConfigs,
    #[error("no configuration or factor level {label:?}; there are: {available}")]
    UnknownBaseline { label: String, available: String },
    #[error("configuration label {label:?} is ambiguous; give one of: {candidates}")]
    AmbiguousBaseline { label: String, candidates: String },
    #[error("no metric {metric:?} in any configuration; there are: {available}")]
    UnknownMetric { metric: String, available: String },
    #[error("none of the headline metrics was recorded; name one with --metric")]
    NoMetrics,
    #[error("the direction of {metric:?} is unknown, so \"slower\" means nothing for it")]
    UnknownDirection { metric: String },
    #[error(
        "threshold must be a percentage ≥ 0 (below 100 for a metric where higher is better: \
         it cannot fall by 100% or more), got {0}"
    )]
    BadThreshold(f64),
}

/// One configuration's stored results.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigData {
    pub experiment: ExperimentId,
    /// Its id in the database (findings and runs hang off it).
    pub config: ConfigId,
    /// As displayed: the stored label, or `#ID:label` when it occurs in several experiments.
    pub label: String,
    /// From the configuration's outcome; `None` while it has none.
    pub converged: Option<bool>,
    /// Its runs are deterministic (the outcome says so): its exact metrics are exact.
    pub deterministic: bool,
    /// Ok runs' values by metric.
    pub metrics: BTreeMap<String, MetricValues>,
    /// Factor → the level's value, as stored with the configuration.
    pub factors: Map<String, Value>,
}

/// An experiment taking part in a comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExperimentRef {
    pub id: ExperimentId,
    pub uuid: String,
    pub name: String,
}

/// What [`load`] read.
#[derive(Debug, Clone, PartialEq)]
pub struct Loaded {
    pub experiments: Vec<ExperimentRef>,
    /// In the experiments' order, then the stored configurations' order.
    pub configs: Vec<ConfigData>,
    /// The experiments' metric definitions (units, directions, headline ones), each name
    /// once (the first experiment's wins).
    pub metrics: Vec<MetricDef>,
    /// The factors of the first experiment's file, with the levels the configurations have;
    /// with several experiments, `experiment` (`#ID`) is one more (unless a factor has that
    /// name), so that the same configuration of two experiments is compared too.
    pub factors: Vec<Factor>,
}

/// The factor [`load`] adds when it pools several experiments.
pub const EXPERIMENT_FACTOR: &str = "experiment";

/// Reads the configurations of `experiments` (pooled, in the order given; an id given twice
/// counts once) with their ok runs' metrics.
pub fn load(store: &Store, experiments: &[ExperimentId]) -> Result<Loaded, CompareError> {
    let mut seen = BTreeSet::new();
    let mut refs = Vec::new();
    let mut configs = Vec::new();
    let mut metrics: Vec<MetricDef> = Vec::new();
    let mut spec = None;
    for &id in experiments {
        if !seen.insert(id) {
            continue;
        }
        let e = store.experiment(id)?;
        spec.get_or_insert(e.spec);
        for d in store.metric_defs(id)? {
            if iolab_metrics::find(&metrics, &d.name).is_none() {
                metrics.push(d);
            }
        }
        refs.push(ExperimentRef {
            id,
            uuid: e.uuid,
            name: e.name,
        });
        for c in store.configs(id)? {
            configs.push(ConfigData {
                experiment: id,
                config: c.id,
                metrics: store.ok_metrics(c.id)?,
                converged: c.outcome.as_ref().map(|o| o.converged),
                deterministic: c
                    .outcome
                    .as_ref()
                    .is_some_and(iolab_store::ConfigOutcome::is_deterministic),
                label: c.label,
                factors: c.factors,
            });
        }
    }
    disambiguate(&mut configs);
    let mut factors = factors::factors(
        &spec.unwrap_or_default(),
        configs.iter().map(|c| &c.factors),
    );
    if refs.len() > 1 && !factors.iter().any(|f| f.name == EXPERIMENT_FACTOR) {
        for c in &mut configs {
            c.factors.insert(
                EXPERIMENT_FACTOR.into(),
                Value::String(format!("#{}", c.experiment)),
            );
        }
        factors.push(Factor {
            name: EXPERIMENT_FACTOR.into(),
            levels: refs
                .iter()
                .map(|e| FactorLevel {
                    name: format!("#{}", e.id),
                    value: Value::String(format!("#{}", e.id)),
                })
                .collect(),
        });
    }
    Ok(Loaded {
        experiments: refs,
        configs,
        metrics,
        factors,
    })
}

/// Prefixes `#ID:` to every label that occurs in more than one experiment.
pub fn disambiguate(configs: &mut [ConfigData]) {
    let mut experiments_of: BTreeMap<&str, BTreeSet<ExperimentId>> = BTreeMap::new();
    for c in configs.iter() {
        experiments_of
            .entry(c.label.as_str())
            .or_default()
            .insert(c.experiment);
    }
    let ambiguous: BTreeSet<String> = experiments_of
        .into_iter()
        .filter(|(_, e)| e.len() > 1)
        .map(|(l, _)| l.to_string())
        .collect();
    for c in configs.iter_mut() {
        if ambiguous.contains(&c.label) {
            c.label = format!("#{}:{}", c.experiment, c.label);
        }
    }
}

/// The metrics compared when none are named: the headline ones of `defs` that at least one
/// configuration recorded, in declaration order.
pub fn default_metrics(configs: &[ConfigData], defs: &[MetricDef]) -> Vec<String> {
    iolab_metrics::headline(defs)
        .filter(|d| {
            configs
                .iter()
                .any(|c| c.metrics.contains_key(d.name.as_ref()))
        })
        .map(|d| d.name.to_string())
        .collect()
}

/// `metric` with its direction (unknown for monitor metrics and the like) and exactness from
/// `defs`.
pub fn metric_spec(metric: &str, defs: &[MetricDef]) -> MetricSpec {
    let def = iolab_metrics::find(defs, metric);
    MetricSpec {
        exact: def.is_some_and(|d| d.exact),
        title: def.map(|d| d.title.to_string()),
        ..MetricSpec::new(metric, def.and_then(MetricDef::higher_is_better))
    }
}

/// Every metric some configuration recorded.
pub fn available_metrics(configs: &[ConfigData]) -> Vec<String> {
    let set: BTreeSet<&String> = configs.iter().flat_map(|c| c.metrics.keys()).collect();
    set.into_iter().cloned().collect()
}

/// A metric to compare and its direction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetricSpec {
    pub name: String,
    /// `Some(true)` for throughput-like, `Some(false)` for latency-like, `None` unknown.
    pub higher_is_better: Option<bool>,
    /// Declared exact: deterministic configurations compare it without statistics.
    pub exact: bool,
    /// Its title (`Throughput`), for sentences; the name when `None`.
    pub title: Option<String>,
}

impl MetricSpec {
    pub fn new(name: impl Into<String>, higher_is_better: Option<bool>) -> MetricSpec {
        MetricSpec {
            name: name.into(),
            higher_is_better,
            exact: false,
            title: None,
        }
    }

    /// Its title, or its name.
    pub fn title(&self) -> &str {
        self.title.as_deref().unwrap_or(&self.name)
    }
}

/// How to compare.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// In order; the first is the headline metric.
    pub metrics: Vec<MetricSpec>,
    /// A configuration label (as displayed, or the stored label if that names one
    /// configuration); default: the first configuration.
    pub baseline: Option<String>,
    /// Confidence level of every interval; α = 1 − level for the tests.
    pub level: Level,
}

impl Options {
    pub fn new(metrics: Vec<MetricSpec>) -> Options {
        Options {
            metrics,
            baseline: None,
            level: Level::P95,
        }
    }
}

/// The whole comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    pub baseline: String,
    /// Confidence level of the intervals (0.95).
    pub level: f64,
    /// The significance level of the tests (0.05).
    pub alpha: f64,
    /// One table per metric, the headline first.
    pub metrics: Vec<MetricComparison>,
}

/// Every configuration against the baseline on one metric.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetricComparison {
    pub metric: String,
    /// As a person reads it (`Mean latency`): the metric's declared title, else its name.
    pub title: String,
    pub unit: String,
    pub higher_is_better: Option<bool>,
    /// In configuration order; the baseline's row has `is_baseline`.
    pub rows: Vec<Row>,
}

/// One configuration on one metric.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    pub label: String,
    pub experiment: ExperimentId,
    pub is_baseline: bool,
    /// Ok runs with this metric.
    pub n: usize,
    /// `None` without runs.
    pub mean: Option<f64>,
    /// Student-t interval of the mean (n ≥ 2).
    pub ci: Option<[f64; 2]>,
    /// Candidate / baseline: the ratio of geometric means when every value is positive (the
    /// centre of its interval on the log scale), else of means.
    pub ratio: Option<f64>,
    /// Its interval: Welch's on the logarithms, exponentiated, so never below 0; for samples
    /// with a zero, Fieller's, cut at 0, whose upper bound is infinite ("unbounded") when the
    /// baseline mean is not clearly above 0.
    pub ratio_ci: Option<[f64; 2]>,
    /// Welch's two-sided p-value before adjustment (on the logarithms when the interval is).
    pub p_welch: Option<f64>,
    /// That p, Holm-adjusted over this metric's comparisons: the one behind the verdict.
    pub p_adjusted: Option<f64>,
    /// Mann–Whitney U two-sided p-value (cross-check, not used for the verdict).
    pub p_mann_whitney: Option<f64>,
    pub verdict: RowVerdict,
    /// Whether the configuration's stopping rule converged (`None`: no outcome stored).
    pub converged: Option<bool>,
}

/// The verdict of one row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RowVerdict {
    /// The row is the baseline.
    Baseline,
    /// Better, for a speed or a time (op/s, MiB/s, ns, s).
    Faster,
    /// Worse, for a speed or a time.
    Slower,
    /// Significantly higher, for a metric that is not a speed or a time (a miss ratio, bytes)
    /// or of unknown direction.
    Higher,
    /// Significantly lower, likewise.
    Lower,
    NoSignificantDifference,
    /// Fewer than two runs here or in the baseline.
    TooFewRuns,
    /// The interval of the ratio spans 10× or more (or is unbounded): the runs are too few,
    /// or too noisy, to tell; never "no significant difference".
    Inconclusive,
    /// Exact values (deterministic configurations), equal to the baseline's.
    Identical,
    /// The ratio is undefined (baseline mean 0).
    Undefined,
}

impl RowVerdict {
    pub fn as_str(self) -> &'static str {
        match self {
            RowVerdict::Baseline => "baseline",
            RowVerdict::Faster => "faster",
            RowVerdict::Slower => "slower",
            RowVerdict::Higher => "higher",
            RowVerdict::Lower => "lower",
            RowVerdict::NoSignificantDifference => "no significant difference",
            RowVerdict::TooFewRuns | RowVerdict::Inconclusive => "too few runs to tell",
            RowVerdict::Identical => "identical (exact)",
            RowVerdict::Undefined => "undefined (baseline mean 0)",
        }
    }

    /// The verdict for a difference the data establish, `up` when the candidate is the higher:
    /// "faster"/"slower" for a speed or a time whose better direction is known, else
    /// "higher"/"lower" — a miss ratio that fell is lower, not faster.
    pub fn of_difference(higher_is_better: Option<bool>, unit: &str, up: bool) -> RowVerdict {
        match higher_is_better {
            Some(h) if is_speed_or_time(unit) => {
                if h == up {
                    RowVerdict::Faster
                } else {
                    RowVerdict::Slower
                }
            }
            _ if up => RowVerdict::Higher,
            _ => RowVerdict::Lower,
        }
    }

    /// A difference in the worse direction of a metric whose better direction is known.
    pub fn is_worse(self, higher_is_better: bool) -> bool {
        match self {
            RowVerdict::Slower => true,
            RowVerdict::Higher => !higher_is_better,
            RowVerdict::Lower => higher_is_better,
            _ => false,
        }
    }
}

/// A rate (`op/s`, `MiB/s`, `txn/s`) or a duration (`ns` … `h`).
fn is_speed_or_time(unit: &str) -> bool {
    unit.ends_with("/s") || matches!(unit, "ns" | "us" | "µs" | "ms" | "s" | "min" | "h")
}

/// Finds the baseline's index: an exact displayed label, else a stored label that names one
/// configuration.
pub(crate) fn find_baseline(configs: &[ConfigData], label: &str) -> Result<usize, CompareError> {
    if let Some(i) = configs.iter().position(|c| c.label == label) {
        return Ok(i);
    }
    let matches: Vec<usize> = configs
        .iter()
        .enumerate()
        .filter(|(_, c)| format!("#{}:{label}", c.experiment) == c.label)
        .map(|(i, _)| i)
        .collect();
    match matches.as_slice() {
        [i] => Ok(*i),
        [] => Err(CompareError::UnknownBaseline {
            label: label.to_string(),
            available: configs
                .iter()
                .map(|c| c.label.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        }),
        _ => Err(CompareError::AmbiguousBaseline {
            label: label.to_string(),
            candidates: matches
                .iter()
                .map(|&i| configs[i].label.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        }),
    }
}

/// Compares every configuration with the baseline on every metric of `options`.
pub fn compare(configs: &[ConfigData], options: &Options) -> Result<Comparison, CompareError> {
    if configs.is_empty() {
        return Err(CompareError::NoConfigs);
    }
    if options.metrics.is_empty() {
        return Err(CompareError::NoMetrics);
    }
    let base = match &options.baseline {
        Some(label) => match find_baseline(configs, label) {
            Err(e @ CompareError::UnknownBaseline { .. }) => {
                // `factor=level …`: the first configuration with those levels.
                let factors = factors::factors(&Value::Null, configs.iter().map(|c| &c.factors));
                let chosen = factors::parse_levels(&factors, label).and_then(|pairs| {
                    configs.iter().position(|c| {
                        pairs
                            .iter()
                            .all(|&(f, l)| factors[f].level_of(&c.factors) == Some(l))
                    })
                });
                chosen.ok_or(e)?
            }
            other => other?,
        },
        None => 0,
    };
    let available = available_metrics(configs);
    let mut metrics = Vec::new();
    for spec in &options.metrics {
        if !available.contains(&spec.name) {
            return Err(CompareError::UnknownMetric {
                metric: spec.name.clone(),
                available: available.join(", "),
            });
        }
        metrics.push(compare_metric(configs, base, spec, options.level));
    }
    Ok(Comparison {
        baseline: configs[base].label.clone(),
        level: options.level.get(),
        // 1 − 0.95 is 0.050000000000000044 in binary; report the intended value.
        alpha: (options.level.alpha() * 1e9).round() / 1e9,
        metrics,
    })
}

pub(crate) fn values<'a>(c: &'a ConfigData, metric: &str) -> &'a [f64] {
    c.metrics
        .get(metric)
        .map(|m| m.values.as_slice())
        .unwrap_or(&[])
}

/// A configuration's values of a metric: how many, their mean and its Student-t interval
/// (n ≥ 2).
pub(crate) fn mean_ci(v: &[f64], level: Level) -> (usize, Option<f64>, Option<[f64; 2]>) {
    let mean = (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
    let ci = Sample::from_slice(v)
        .ok()
        .map(|s| Summary::new(&s, level).ci)
        .map(|ci| [ci.lower, ci.upper]);
    (v.len(), mean, ci)
}

/// One candidate against one baseline on one metric, before the family's p-values are
/// adjusted ([`judge`]).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Pair {
    pub ratio: Option<f64>,
    pub ratio_ci: Option<[f64; 2]>,
    /// The test's p-value (Welch on the logarithms, or on the values).
    pub p_raw: Option<f64>,
    pub p_mann_whitney: Option<f64>,
    /// The statistics, when the pair was tested.
    pub positive: Option<PositiveRatio>,
    /// Known without a test: exact values, too few runs, an undefined ratio.
    pub settled: Option<RowVerdict>,
}

/// Compares `cand` with `base` on `spec`: exactly for exact metrics of deterministic
/// configurations, else with the statistics of [`iolab_stats::compare`].
pub(crate) fn pair(
    base: &ConfigData,
    cand: &ConfigData,
    spec: &MetricSpec,
    unit: &str,
    level: Level,
) -> Pair {
    let mut p = Pair {
        ratio: None,
        ratio_ci: None,
        p_raw: None,
        p_mann_whitney: None,
        positive: None,
        settled: Some(RowVerdict::TooFewRuns),
    };
    let (bv, cv) = (values(base, &spec.name), values(cand, &spec.name));
    // Exact values of deterministic configurations: the ratio is exact, and so is the verdict.
    let exact = |c: &ConfigData, v: &[f64]| spec.exact && c.deterministic && !v.is_empty();
    if exact(base, bv) && exact(cand, cv) {
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        let (b, v) = (mean(bv), mean(cv));
        if b == 0.0 {
            p.settled = Some(if v == 0.0 {
                RowVerdict::Identical
            } else {
                RowVerdict::Undefined
            });
            return p;
        }
        let r = v / b;
        p.ratio = Some(r);
        p.ratio_ci = Some([r, r]);
        p.settled = Some(if v == b {
            RowVerdict::Identical
        } else {
            RowVerdict::of_difference(spec.higher_is_better, unit, v > b)
        });
        return p;
    }
    // A side that is zero in every run (a SQLite mode that never unlinks): no ratio on the
    // log scale, but the difference is plain when the other side's interval excludes 0.
    let all_zero = |v: &[f64]| v.iter().all(|&x| x == 0.0);
    if bv.len() >= 2 && cv.len() >= 2 && (all_zero(bv) || all_zero(cv)) {
        let (zero_base, zero_cand) = (all_zero(bv), all_zero(cv));
        let other = if zero_base { cv } else { bv };
        let (_, mean, ci) = mean_ci(other, level);
        p.settled = Some(match (zero_base && zero_cand, ci) {
            (true, _) => RowVerdict::Identical,
            (false, Some(ci)) if ci[0] > 0.0 || ci[1] < 0.0 => {
                p.ratio = (!zero_base).then_some(0.0);
                let m = mean.unwrap_or(0.0);
                // Up when the candidate is the higher: it is the non-zero side and positive,
                // or the baseline is negative.
                let up = if zero_base { m > 0.0 } else { m < 0.0 };
                RowVerdict::of_difference(spec.higher_is_better, unit, up)
            }
            _ => RowVerdict::Inconclusive,
        });
        return p;
    }
    let (Ok(baseline), Ok(candidate)) = (Sample::from_slice(bv), Sample::from_slice(cv)) else {
        return p;
    };
    let options = CompareOptions {
        level,
        higher_is_better: spec.higher_is_better.unwrap_or(true),
    };
    match stats_compare::compare(&baseline, &candidate, options) {
        Ok(cmp) => {
            let ci = cmp.positive.interval;
            p.ratio = Some(ci.estimate);
            p.ratio_ci = Some([ci.lower, ci.upper]);
            p.p_raw = Some(cmp.positive.p_value);
            p.p_mann_whitney = Some(cmp.mann_whitney.p_value);
            p.positive = Some(cmp.positive);
            p.settled = None;
        }
        Err(_) => p.settled = Some(RowVerdict::Undefined),
    }
    p
}

/// The verdicts of a family of pairs: Holm over the tested ones' p-values, then
/// `iolab_stats::compare::verdict` on each. Returns (verdict, adjusted p) per pair.
pub(crate) fn judge(
    pairs: &[Pair],
    spec: &MetricSpec,
    unit: &str,
    level: Level,
) -> Vec<(RowVerdict, Option<f64>)> {
    let raw: Vec<f64> = pairs.iter().filter_map(|p| p.p_raw).collect();
    // Holm fails only on an empty family or p outside [0, 1]; then keep the raw p-values.
    let mut adjusted = holm_adjust(&raw)
        .unwrap_or_else(|_| raw.clone())
        .into_iter();
    pairs
        .iter()
        .map(|p| {
            if let Some(v) = p.settled {
                return (v, None);
            }
            let (Some(adj), Some(pos)) = (adjusted.next(), p.positive) else {
                return (RowVerdict::TooFewRuns, None);
            };
            // Of unknown direction: compared as if higher were better.
            let higher = spec.higher_is_better.unwrap_or(true);
            let verdict = stats_compare::verdict(&pos.interval, adj, level.alpha(), higher);
            let v = match verdict {
                Verdict::NoSignificantDifference => RowVerdict::NoSignificantDifference,
                Verdict::TooFewRunsToTell => RowVerdict::Inconclusive,
                // Better and higher are the same when higher is better.
                Verdict::Faster => RowVerdict::of_difference(spec.higher_is_better, unit, higher),
                Verdict::Slower => RowVerdict::of_difference(spec.higher_is_better, unit, !higher),
            };
            (v, Some(adj))
        })
        .collect()
}

/// The unit of `spec`'s values: the baseline's, else the first configuration's with them.
pub(crate) fn unit_of(configs: &[ConfigData], base: usize, spec: &MetricSpec) -> String {
    std::iter::once(&configs[base])
        .chain(configs)
        .find_map(|c| c.metrics.get(&spec.name))
        .map(|m| m.unit.clone())
        .unwrap_or_default()
}

fn compare_metric(
    configs: &[ConfigData],
    base: usize,
    spec: &MetricSpec,
    level: Level,
) -> MetricComparison {
    let others: Vec<usize> = (0..configs.len()).filter(|&i| i != base).collect();
    let unit = unit_of(configs, base, spec);
    let pairs: Vec<Pair> = others
        .iter()
        .map(|&i| pair(&configs[base], &configs[i], spec, &unit, level))
        .collect();
    let verdicts = judge(&pairs, spec, &unit, level);
    let mut rows: Vec<Row> = configs
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let (n, mean, ci) = mean_ci(values(c, &spec.name), level);
            Row {
                label: c.label.clone(),
                experiment: c.experiment,
                is_baseline: i == base,
                n,
                mean,
                ci,
                ratio: None,
                ratio_ci: None,
                p_welch: None,
                p_adjusted: None,
                p_mann_whitney: None,
                verdict: RowVerdict::Baseline,
                converged: c.converged,
            }
        })
        .collect();
    for ((&i, p), (verdict, adj)) in others.iter().zip(pairs).zip(verdicts) {
        let row = &mut rows[i];
        row.ratio = p.ratio;
        row.ratio_ci = p.ratio_ci;
        row.p_welch = p.p_raw;
        row.p_adjusted = adj;
        row.p_mann_whitney = p.p_mann_whitney;
        row.verdict = verdict;
    }
    MetricComparison {
        metric: spec.name.clone(),
        title: spec.title().to_string(),
        unit,
        higher_is_better: spec.higher_is_better,
        rows,
    }
}

/// A configuration found slower than the baseline by more than a threshold.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Regression {
    pub label: String,
    pub metric: String,
    pub ratio: f64,
    pub ratio_ci: [f64; 2],
    /// The bound the whole interval had to pass.
    pub limit: f64,
}

impl Comparison {
    /// The configurations significantly slower than the baseline by more than `pct` percent
    /// on the headline (first) metric (`--fail-if-slower PCT`).
    ///
    /// "Slower by more than PCT%" must hold for the whole 95% interval of the ratio
    /// candidate/baseline, on top of a "slower" verdict:
    /// - higher is better (throughput): the interval's upper bound < 1 − PCT/100 (at PCT 5,
    ///   even the most favourable reading keeps less than 95% of the baseline's ops/s);
    /// - lower is better (latency, time): the interval's lower bound > 1 + PCT/100 (more than
    ///   PCT% longer).
    ///
    /// So the gate fires only on regressions the data establish; a noisy comparison whose
    /// interval straddles the threshold does not fail. A headline metric of unknown direction
    /// is an error.
    pub fn slower_than(&self, pct: f64) -> Result<Vec<Regression>, CompareError> {
        if !(pct.is_finite() && pct >= 0.0) {
            return Err(CompareError::BadThreshold(pct));
        }
        let Some(head) = self.metrics.first() else {
            return Ok(Vec::new());
        };
        let Some(higher_is_better) = head.higher_is_better else {
            return Err(CompareError::UnknownDirection {
                metric: head.metric.clone(),
            });
        };
        // A latency may double (+100%); a throughput cannot fall by 100%.
        if higher_is_better && pct >= 100.0 {
            return Err(CompareError::BadThreshold(pct));
        }
        let limit = if higher_is_better {
            1.0 - pct / 100.0
        } else {
            1.0 + pct / 100.0
        };
        Ok(head
            .rows
            .iter()
            .filter(|r| r.verdict.is_worse(higher_is_better))
            .filter_map(|r| {
                let ci = r.ratio_ci?;
                let beyond = if higher_is_better {
                    ci[1] < limit
                } else {
                    ci[0] > limit
                };
                beyond.then(|| Regression {
                    label: r.label.clone(),
                    metric: head.metric.clone(),
                    ratio: r.ratio.unwrap_or(f64::NAN),
                    ratio_ci: ci,
                    limit,
                })
            })
            .collect())
    }
}

/// A number with about four significant digits, without exponent for ordinary magnitudes.
pub fn fmt_num(x: f64) -> String {
    if !x.is_finite() {
        return if x.is_nan() {
            "NaN".into()
        } else if x > 0.0 {
            "inf".into()
        } else {
            "-inf".into()
        };
    }
    let a = x.abs();
    if a == 0.0 {
        "0".into()
    } else if !(1e-4..1e9).contains(&a) {
        format!("{x:.3e}")
    } else if a >= 1000.0 {
        format!("{x:.0}")
    } else {
        let decimals = (3 - a.log10().floor() as i32).clamp(0, 6) as usize;
        format!("{x:.decimals$}")
    }
}

/// A ratio with about three significant digits: `0.998`, `1.90`, `12.3`, `5,315`; `unbounded`
/// for +∞.
pub fn fmt_ratio(x: f64) -> String {
    if x == f64::INFINITY {
        return "unbounded".into();
    }
    if !x.is_finite() {
        return "–".into();
    }
    let a = x.abs();
    if a >= 100.0 {
        let s = iolab_util::units::thousands(a.round() as u64);
        if x < 0.0 {
            format!("-{s}")
        } else {
            s
        }
    } else if a >= 10.0 {
        format!("{x:.1}")
    } else if a >= 1.0 || a == 0.0 {
        format!("{x:.2}")
    } else {
        let decimals = ((-a.log10()).floor() as usize + 3).min(6);
        format!("{x:.decimals$}")
    }
}

/// `ratio [lower, upper]` as the tables print it.
pub fn fmt_ratio_ci(ratio: f64, ci: [f64; 2]) -> String {
    format!(
        "{} [{}, {}]",
        fmt_ratio(ratio),
        fmt_ratio(ci[0]),
        fmt_ratio(ci[1])
    )
}

/// `mean ± half-width` in the metric's human units.
pub fn fmt_mean(mean: Option<f64>, ci: Option<[f64; 2]>, unit: &str) -> String {
    use iolab_util::units::format_quantity as q;
    match (mean, ci) {
        (Some(mean), Some(ci)) => format!("{} ± {}", q(mean, unit), q((ci[1] - ci[0]) / 2.0, unit)),
        (Some(mean), None) => q(mean, unit),
        _ => "-".into(),
    }
}

pub(crate) fn fmt_p(p: Option<f64>) -> String {
    match p {
        None => "-".into(),
        Some(p) if p < 1e-4 => "<0.0001".into(),
        Some(p) => format!("{p:.4}"),
    }
}

/// A metric's table heading: its title and which way is better (`Mean latency (lower is
/// better)`). No unit: every cell carries the one it is written in (µs, ms, s; KiB, MiB, GiB),
/// which a stored unit such as `ns` would contradict.
pub(crate) fn metric_heading(title: &str, higher_is_better: Option<bool>) -> String {
    let direction = match higher_is_better {
        Some(true) => "higher is better",
        Some(false) => "lower is better",
        None => "direction unknown",
    };
    format!("{title} ({direction})")
}

/// Writes one table per metric, as `iolab compare` prints them.
pub fn render_text(c: &Comparison, out: &mut dyn Write) -> io::Result<()> {
    let pct = (c.level * 100.0).round();
    writeln!(
        out,
        "baseline: {}   ({pct}% intervals; ratio of geometric means, interval and p = Welch on the logarithms, p Holm-adjusted per metric; difference claimed when p ≤ {} and the ratio interval excludes 1)",
        c.baseline, c.alpha
    )?;
    for m in &c.metrics {
        writeln!(out)?;
        writeln!(out, "{}", metric_heading(&m.title, m.higher_is_better))?;
        let header = vec![
            "configuration".to_string(),
            "n".into(),
            format!("mean ± {pct}% CI"),
            format!("ratio [{pct}% CI]"),
            "p (Welch, Holm)".into(),
            "p (Mann-Whitney)".into(),
            "verdict".into(),
            "converged".into(),
        ];
        let mut table = vec![header];
        for r in &m.rows {
            let mean = fmt_mean(r.mean, r.ci, &m.unit);
            let ratio = match (r.ratio, r.ratio_ci) {
                _ if r.is_baseline => "1 (baseline)".into(),
                (Some(x), Some(ci)) if ci[0] == ci[1] => format!("{} (exact)", fmt_ratio(x)),
                (Some(x), Some(ci)) => fmt_ratio_ci(x, ci),
                _ => "-".into(),
            };
            let converged = match r.converged {
                Some(true) => "yes",
                Some(false) => "no",
                None => "-",
            };
            table.push(vec![
                r.label.clone(),
                r.n.to_string(),
                mean,
                ratio,
                fmt_p(r.p_adjusted),
                fmt_p(r.p_mann_whitney),
                r.verdict.as_str().into(),
                converged.into(),
            ]);
        }
        write_table(
            &table,
            &[false, true, true, true, true, true, false, false],
            out,
        )?;
    }
    Ok(())
}

/// Left-aligned text columns, right-aligned number columns, two spaces apart.
pub(crate) fn write_table(
    table: &[Vec<String>],
    right: &[bool],
    out: &mut dyn Write,
) -> io::Result<()> {
    let cols = table[0].len();
    let widths: Vec<usize> = (0..cols)
        .map(|j| {
            table
                .iter()
                .map(|r| r[j].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for row in table {
        let mut line = String::new();
        for (j, cell) in row.iter().enumerate() {
            if j > 0 {
                line.push_str("  ");
            }
            let pad = " ".repeat(widths[j] - cell.chars().count());
            if right[j] {
                line.push_str(&pad);
                line.push_str(cell);
            } else {
                line.push_str(cell);
                if j + 1 < cols {
                    line.push_str(&pad);
                }
            }
        }
        writeln!(out, "{}", line.trim_end())?;
    }
    Ok(())
}

/// Renders into a `String`.
pub fn render_string(c: &Comparison) -> String {
    let mut v = Vec::new();
    render_text(c, &mut v).expect("writing to a Vec does not fail");
    String::from_utf8(v).expect("the table is UTF-8")
}

#[cfg(test)]
mod tests;
