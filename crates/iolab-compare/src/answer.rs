//! The answer an experiment gives: per factor and metric, the effect of each level against
//! the baseline level *within each combination of the other factors*, as a ratio with its 95%
//! interval and a verdict, in one sentence ("bs=64k 12.3× [11.0, 13.8] faster than bs=4k",
//! "no effect within ±3 %", "too few runs to tell").
//!
//! Each comparison is a pair of configurations that differ in this factor only, judged as
//! `iolab compare` judges its rows (ratio interval on the log scale, Holm over the family of
//! this factor's comparisons on this metric). A comparison whose interval contains 1 and lies
//! within ±[`NO_EFFECT_BAND_PCT`] % of it is "no effect within ±x %", x its farthest bound
//! rounded up. When every combination of the other factors gives the same verdict and their
//! intervals overlap (one ratio fits them all) it is said once, with the geometric mean of
//! their ratios and its interval on the log scale
//! ([`iolab_stats::compare::pool_log_ratios`]): the average effect over the combinations
//! measured. When they differ, the sentence says where (docs/statistics.md, "The answer").

use std::collections::BTreeMap;
use std::io::{self, Write};

use iolab_stats::compare::{pool_log_ratios, MAX_RATIO_SPAN};
use serde::Serialize;

use crate::{
    available_metrics, find_baseline, fmt_mean, fmt_p, fmt_ratio, fmt_ratio_ci, judge, mean_ci,
    metric_heading, pair, values, write_table, CompareError, ConfigData, Factor, Options, Pair,
    RowVerdict,
};

/// "No effect" is said when the ratio's interval lies within this many percent of 1.
pub const NO_EFFECT_BAND_PCT: f64 = 5.0;

/// Every factor's effect on every metric.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Answers {
    /// Confidence level of the intervals (0.95).
    pub level: f64,
    /// See [`NO_EFFECT_BAND_PCT`].
    pub no_effect_band_pct: f64,
    /// An interval spanning this factor (upper/lower) or more is "too few runs to tell".
    pub max_ratio_span: f64,
    /// In the experiment file's order; factors with one level are left out.
    pub factors: Vec<FactorAnswer>,
}

/// One factor.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FactorAnswer {
    pub factor: String,
    /// The baseline level's name.
    pub baseline: String,
    /// The other factors that vary, whose combinations the comparisons are made within.
    pub others: Vec<String>,
    /// One per metric, in the order asked.
    pub metrics: Vec<MetricAnswer>,
}

/// One factor on one metric.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetricAnswer {
    pub metric: String,
    pub title: String,
    pub unit: String,
    pub higher_is_better: Option<bool>,
    /// Each other level against the baseline level, in the file's order.
    pub levels: Vec<LevelAnswer>,
    /// For a factor of more than [`FOLD_ABOVE_LEVELS`] levels: one sentence in place of the
    /// levels' (how many levels show which effect, the best and the worst); the levels'
    /// sentences are the detail, folded.
    pub summary: Option<String>,
}

/// One level against the baseline level.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LevelAnswer {
    pub level: String,
    /// The same in every combination, or `mixed`.
    pub effect: Effect,
    /// The answer in words.
    pub sentence: String,
    /// Candidate / baseline over the combinations: the geometric mean of their ratios, with
    /// its interval when they are all on the log scale (`None` for mixed effects).
    pub ratio: Option<f64>,
    pub ratio_ci: Option<[f64; 2]>,
    /// For `no_effect` and `no_significant_difference`: the farthest bound of the intervals
    /// from 1, in percent, rounded up.
    pub within_pct: Option<f64>,
    /// One per combination of the other factors that has both levels.
    pub cells: Vec<CellEffect>,
}

/// One pair of configurations that differ in the factor only.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CellEffect {
    /// The other factors' levels, `readers=1 workload=oltp` (empty without other factors).
    pub within: String,
    pub config: String,
    pub baseline_config: String,
    pub n: usize,
    pub n_baseline: usize,
    pub mean: Option<f64>,
    pub ci: Option<[f64; 2]>,
    pub baseline_mean: Option<f64>,
    pub ratio: Option<f64>,
    pub ratio_ci: Option<[f64; 2]>,
    /// Holm-adjusted over the factor's comparisons on this metric.
    pub p_adjusted: Option<f64>,
    /// As `iolab compare` judges it.
    pub verdict: RowVerdict,
    pub effect: Effect,
    pub within_pct: Option<f64>,
}

/// What a comparison, or a level over all its comparisons, shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Effect {
    Faster,
    Slower,
    /// For a metric of unknown direction.
    Higher,
    Lower,
    /// The interval lies within ±[`NO_EFFECT_BAND_PCT`] % of 1 (or the exact values agree).
    NoEffect,
    /// The interval contains 1 but reaches farther than the band.
    NoSignificantDifference,
    /// Fewer than two runs, or an interval spanning 10× or more.
    TooFewRuns,
    /// The baseline's mean is 0.
    Undefined,
    /// Not the same in every combination of the other factors.
    Mixed,
}

impl Effect {
    fn word(self) -> &'static str {
        match self {
            Effect::Faster => "faster",
            Effect::Slower => "slower",
            Effect::Higher => "higher",
            Effect::Lower => "lower",
            Effect::NoEffect => "no effect",
            Effect::NoSignificantDifference => "no significant difference",
            Effect::TooFewRuns => "too few runs to tell",
            Effect::Undefined => "undefined (baseline mean 0)",
            Effect::Mixed => "mixed",
        }
    }

    fn directional(self) -> bool {
        matches!(
            self,
            Effect::Faster | Effect::Slower | Effect::Higher | Effect::Lower
        )
    }
}

/// The farthest bound of `ci` from 1, in percent, rounded up (to 0.1 below 1 %).
fn reach_pct(ci: [f64; 2]) -> f64 {
    let pct = (ci[1] - 1.0).max(1.0 - ci[0]).max(0.0) * 100.0;
    // 4.000000001 % is 4 %: the bounds went through exp and ln.
    let pct = (pct * 1e6).round() / 1e6;
    if pct < 1.0 {
        (pct * 10.0).ceil() / 10.0
    } else {
        pct.ceil()
    }
}

/// A significant difference whose whole interval lies within this many percent of 1 is said as
/// "no effect within ±x %": it would print as "1.00× [1.00, 1.00] slower", a verdict no reader
/// can use (two eventgen-paced levels at 999.9 and 999.8 op/s, each ±0.01 %).
pub const NEGLIGIBLE_PCT: f64 = 0.5;

fn cell_effect(v: RowVerdict, ci: Option<[f64; 2]>) -> (Effect, Option<f64>) {
    if let (true, Some(ci)) = (
        matches!(
            v,
            RowVerdict::Faster | RowVerdict::Slower | RowVerdict::Higher | RowVerdict::Lower
        ),
        ci,
    ) {
        let w = reach_pct(ci);
        if w <= NEGLIGIBLE_PCT {
            return (Effect::NoEffect, Some(w));
        }
    }
    match v {
        RowVerdict::Faster => (Effect::Faster, None),
        RowVerdict::Slower => (Effect::Slower, None),
        RowVerdict::Higher => (Effect::Higher, None),
        RowVerdict::Lower => (Effect::Lower, None),
        RowVerdict::Identical => (Effect::NoEffect, Some(0.0)),
        RowVerdict::NoSignificantDifference => match ci {
            Some(ci) => {
                let w = reach_pct(ci);
                if w <= NO_EFFECT_BAND_PCT {
                    (Effect::NoEffect, Some(w))
                } else {
                    (Effect::NoSignificantDifference, Some(w))
                }
            }
            None => (Effect::TooFewRuns, None),
        },
        RowVerdict::Undefined => (Effect::Undefined, None),
        RowVerdict::TooFewRuns | RowVerdict::Inconclusive | RowVerdict::Baseline => {
            (Effect::TooFewRuns, None)
        }
    }
}

/// A factor of more levels than this is summed up in one sentence per metric (seed 004's 13
/// associativities × 7 policies made a wall of 130 sentences); up to this many, each level
/// has its own.
pub const FOLD_ABOVE_LEVELS: usize = 4;

/// A level's ratio to the baseline: its own, else the geometric mean of its combinations'.
fn typical_ratio(l: &LevelAnswer) -> Option<f64> {
    l.ratio.or_else(|| {
        let logs: Vec<f64> = l
            .cells
            .iter()
            .filter_map(|c| c.ratio)
            .filter(|r| *r > 0.0 && r.is_finite())
            .map(f64::ln)
            .collect();
        (!logs.is_empty()).then(|| (logs.iter().sum::<f64>() / logs.len() as f64).exp())
    })
}

/// One factor's levels on one metric in a sentence: how many levels show which effect, then
/// the best and the worst level (the highest and the lowest for a metric of unknown
/// direction) with their ratios.
fn summarize(factor: &str, base: &str, title: &str, m: &MetricAnswer) -> String {
    let k = m.levels.len();
    let first = m.levels[0].effect;
    if m.levels.iter().all(|l| l.effect == first) && !first.directional() && first != Effect::Mixed
    {
        let within = m
            .levels
            .iter()
            .filter_map(|l| l.within_pct)
            .reduce(f64::max);
        let vs = format!("{title}: the {k} other levels of {factor} against {factor}={base}");
        return match first {
            Effect::NoEffect => format!("{vs}: {} at every one", no_effect(within)),
            Effect::NoSignificantDifference => format!(
                "{vs}: no significant difference at any, but effects up to ±{} % are not ruled out (more runs would tell)",
                fmt_pct(within.unwrap_or(0.0))
            ),
            e => format!("{vs}: {} at every one", e.word()),
        };
    }
    let mut counts: BTreeMap<Effect, usize> = BTreeMap::new();
    for l in &m.levels {
        *counts.entry(l.effect).or_default() += 1;
    }
    let counts: Vec<String> = counts
        .into_iter()
        .map(|(e, n)| format!("{n} {}", e.word()))
        .collect();
    let phrase = |l: &LevelAnswer, r: f64| -> String {
        let word = |r: f64| RowVerdict::of_difference(m.higher_is_better, &m.unit, r > 1.0);
        match l.effect {
            e if e.directional() && l.ratio.is_some() => {
                format!("{} {}", magnitude(r, l.ratio_ci), e.word())
            }
            e if e.directional() => format!("{} {} on average", magnitude(r, None), e.word()),
            Effect::Mixed => format!(
                "mixed, {} {} on average",
                magnitude(r, None),
                word(r).as_str()
            ),
            e => e.word().to_string(),
        }
    };
    // Best and worst among the levels that differ: a ranking of noise would say nothing.
    let rated: Vec<(&LevelAnswer, f64)> = m
        .levels
        .iter()
        .filter(|l| l.effect.directional() || l.effect == Effect::Mixed)
        .filter_map(|l| typical_ratio(l).map(|r| (l, r)))
        .collect();
    let top = rated
        .iter()
        .copied()
        .reduce(|a, b| if b.1 > a.1 { b } else { a });
    let bottom = rated
        .iter()
        .copied()
        .reduce(|a, b| if b.1 < a.1 { b } else { a });
    let (first, second) = match m.higher_is_better {
        Some(true) => (("best", top), ("worst", bottom)),
        Some(false) => (("best", bottom), ("worst", top)),
        None => (("highest", top), ("lowest", bottom)),
    };
    let ends = match (first, second) {
        ((_, Some((a, ra))), (_, Some((b, _)))) if std::ptr::eq(a, b) => {
            format!("; only {factor}={}: {}", a.level, phrase(a, ra))
        }
        ((w1, Some((a, ra))), (w2, Some((b, rb)))) => format!(
            "; {w1} {factor}={} ({}), {w2} {factor}={} ({})",
            a.level,
            phrase(a, ra),
            b.level,
            phrase(b, rb)
        ),
        _ => String::new(),
    };
    format!(
        "{title}: the {k} other levels of {factor} against {factor}={base}: {}{ends}",
        counts.join(", ")
    )
}

/// At most this many combinations are listed one by one; more are given as a range.
const LIST_AT_MOST: usize = 4;

fn magnitude(r: f64, ci: Option<[f64; 2]>) -> String {
    let (m, ci) = if r < 1.0 && r > 0.0 {
        (1.0 / r, ci.map(|c| [1.0 / c[1], 1.0 / c[0]]))
    } else {
        (r, ci)
    };
    match ci {
        Some(c) if c[0] != c[1] => format!(
            "{}× [{}, {}]",
            fmt_ratio(m),
            fmt_ratio(c[0]),
            fmt_ratio(c[1])
        ),
        _ => format!("{}×", fmt_ratio(m)),
    }
}

/// How far apart a comparison is: its ratio and interval, or, when one side is zero and no
/// ratio says it, the two means ("1.00 against 0").
fn size_of(c: &CellEffect, unit: &str) -> String {
    match c.ratio {
        Some(r) if r > 0.0 => magnitude(r, c.ratio_ci),
        _ => format!(
            "{} against {}",
            fmt_mean(c.mean, None, unit),
            fmt_mean(c.baseline_mean, None, unit)
        ),
    }
}

/// Where a statement holds: "" without other factors, else "in readers=1", "at each of the 3
/// levels of readers", "in all 4 combinations of readers × workload".
fn scope(others: &[String], cells: &[CellEffect]) -> String {
    match (others.len(), cells.len()) {
        (0, _) => String::new(),
        (_, 1) => format!(" in {}", cells[0].within),
        (1, m) => format!(" at each of the {m} levels of {}", others[0]),
        (_, m) => format!(" in all {m} combinations of {}", others.join(" × ")),
    }
}

/// The names a level's sentence uses.
struct Names<'a> {
    factor: &'a str,
    base: &'a str,
    level: &'a str,
    title: &'a str,
    unit: &'a str,
    others: &'a [String],
}

/// Words a level's comparisons.
fn level_answer(
    names: &Names<'_>,
    cells: Vec<CellEffect>,
    positives: &[Option<iolab_stats::compare::PositiveRatio>],
    level_ci: iolab_stats::Level,
) -> LevelAnswer {
    let &Names {
        factor,
        base,
        level,
        title,
        unit,
        others,
    } = names;
    let first = cells[0].effect;
    let same = cells.iter().all(|c| c.effect == first);
    let vs = format!("{factor}={level} vs {factor}={base}");
    let within = cells
        .iter()
        .filter_map(|c| c.within_pct)
        .fold(None, |m: Option<f64>, w| Some(m.map_or(w, |m| m.max(w))));
    let mut answer = LevelAnswer {
        level: level.to_string(),
        effect: if same { first } else { Effect::Mixed },
        sentence: String::new(),
        ratio: None,
        ratio_ci: None,
        within_pct: None,
        cells: Vec::new(),
    };
    // Said once only when one ratio is compatible with every combination's interval (they
    // overlap): pooling a 2× and a 4× into "2.8×" would describe neither.
    let all: Option<Vec<_>> = positives.iter().copied().collect();
    let pooled = all.and_then(|p| pool_log_ratios(&p, level_ci));
    let cis: Option<Vec<[f64; 2]>> = cells.iter().map(|c| c.ratio_ci).collect();
    let homogeneous = match cis {
        Some(cis) => {
            let lo = cis.iter().map(|c| c[0]).fold(0.0, f64::max);
            let hi = cis.iter().map(|c| c[1]).fold(f64::INFINITY, f64::min);
            lo <= hi
        }
        None => cells.iter().all(|c| c.ratio == cells[0].ratio),
    };
    if same && first.directional() && cells.iter().any(|c| !c.ratio.is_some_and(|r| r > 0.0)) {
        // A zero side: the means say it, once when every combination has the same.
        let sizes: Vec<String> = cells.iter().map(|c| size_of(c, unit)).collect();
        let values = if sizes.iter().all(|x| *x == sizes[0]) {
            sizes[0].clone()
        } else {
            // The range of each side over the combinations.
            let range = |pick: fn(&CellEffect) -> Option<f64>| {
                let v: Vec<f64> = cells.iter().filter_map(pick).collect();
                let lo = fmt_mean(v.iter().copied().reduce(f64::min), None, unit);
                let hi = fmt_mean(v.iter().copied().reduce(f64::max), None, unit);
                if lo == hi {
                    lo
                } else {
                    format!("{lo} to {hi}")
                }
            };
            format!(
                "{} against {}",
                range(|c| c.mean),
                range(|c| c.baseline_mean)
            )
        };
        answer.sentence = format!(
            "{title}: {factor}={level} {} than {factor}={base}{}: {values}",
            first.word(),
            scope(others, &cells),
        );
    } else if same && first.directional() && !homogeneous {
        let list = if cells.len() <= LIST_AT_MOST {
            cells
                .iter()
                .map(|c| {
                    format!(
                        "{} in {}",
                        magnitude(c.ratio.unwrap_or(f64::NAN), c.ratio_ci),
                        c.within
                    )
                })
                .collect::<Vec<_>>()
                .join(", ")
        } else {
            // A range, and where the extremes are: 14 intervals in a row are not an answer.
            let m = |c: &CellEffect| {
                c.ratio
                    .map(|r| if r < 1.0 && r > 0.0 { 1.0 / r } else { r })
            };
            let by = |pick: fn(f64, f64) -> bool| {
                cells
                    .iter()
                    .filter_map(|c| m(c).map(|v| (v, c)))
                    .reduce(|a, b| if pick(b.0, a.0) { b } else { a })
            };
            match (by(|a, b| a < b), by(|a, b| a > b)) {
                (Some((lo, lc)), Some((hi, hc))) => format!(
                    "from {}× (in {}) to {}× (in {})",
                    fmt_ratio(lo),
                    lc.within,
                    fmt_ratio(hi),
                    hc.within
                ),
                _ => String::from("see the table of `iolab compare`"),
            }
        };
        answer.sentence = format!(
            "{title}: {factor}={level} {} than {factor}={base}{}, by different amounts: {list}",
            first.word(),
            scope(others, &cells),
        );
    } else if same {
        if let Some(p) = pooled {
            answer.ratio = Some(p.estimate);
            answer.ratio_ci = Some([p.lower, p.upper]);
        } else if cells.len() == 1 {
            answer.ratio = cells[0].ratio;
            answer.ratio_ci = cells[0].ratio_ci;
        } else if let Some(rs) = cells.iter().map(|c| c.ratio).collect::<Option<Vec<f64>>>() {
            // Exact ratios (deterministic configurations): their geometric mean.
            let g = rs.iter().map(|r| r.ln()).sum::<f64>() / rs.len() as f64;
            answer.ratio = Some(g.exp());
        }
        let where_ = scope(others, &cells);
        answer.within_pct = within;
        answer.sentence = match first {
            e if e.directional() => {
                let each = if cells.len() > 1 {
                    let ms: Vec<f64> = cells
                        .iter()
                        .filter_map(|c| c.ratio)
                        .map(|r| if r < 1.0 { 1.0 / r } else { r })
                        .collect();
                    let lo = ms.iter().copied().fold(f64::INFINITY, f64::min);
                    let hi = ms.iter().copied().fold(0.0, f64::max);
                    if fmt_ratio(lo) == fmt_ratio(hi) {
                        format!(" (geometric mean of the {})", cells.len())
                    } else {
                        format!(
                            " (geometric mean of {}× to {}×)",
                            fmt_ratio(lo),
                            fmt_ratio(hi)
                        )
                    }
                } else {
                    String::new()
                };
                format!(
                    "{title}: {factor}={level} {} {} than {factor}={base}{where_}{each}",
                    magnitude(answer.ratio.unwrap_or(f64::NAN), answer.ratio_ci),
                    e.word()
                )
            }
            Effect::NoEffect => format!("{title}: {vs}: {}{where_}", no_effect(within)),
            Effect::NoSignificantDifference => format!(
                "{title}: {vs}: no significant difference{where_}, but effects up to ±{} % are not ruled out (more runs would tell)",
                fmt_pct(within.unwrap_or(0.0))
            ),
            other => format!("{title}: {vs}: {}{where_}", other.word()),
        };
    } else {
        // Say where: each kind of outcome with the combinations it holds in.
        let mut groups: BTreeMap<Effect, Vec<&CellEffect>> = BTreeMap::new();
        for c in &cells {
            groups.entry(c.effect).or_default().push(c);
        }
        let parts: Vec<String> = groups
            .into_iter()
            .map(|(e, cs)| {
                let list = |f: &dyn Fn(&CellEffect) -> String| {
                    if cs.len() > LIST_AT_MOST {
                        // Too many to read: how many, and the first few.
                        let first: Vec<String> = cs.iter().take(2).map(|c| f(c)).collect();
                        return format!(
                            "{} of the {} combinations ({}, …)",
                            cs.len(),
                            cells.len(),
                            first.join(", ")
                        );
                    }
                    cs.iter().map(|c| f(c)).collect::<Vec<_>>().join(", ")
                };
                if e.directional() {
                    format!(
                        "{} in {}",
                        e.word(),
                        list(&|c| format!("{} ({})", c.within, size_of(c, unit)))
                    )
                } else if e == Effect::NoEffect {
                    let w = cs.iter().filter_map(|c| c.within_pct).fold(0.0, f64::max);
                    format!("{} in {}", no_effect(Some(w)), list(&|c| c.within.clone()))
                } else {
                    format!("{} in {}", e.word(), list(&|c| c.within.clone()))
                }
            })
            .collect();
        answer.sentence = format!("{title}: {vs}: {}", parts.join("; "));
    }
    answer.cells = cells;
    answer
}

/// "no effect within ±x %", or "no effect (identical values)" when nothing varied.
fn no_effect(within: Option<f64>) -> String {
    match within {
        Some(w) if w > 0.0 => format!("no effect within ±{} %", fmt_pct(w)),
        _ => "no effect (identical values)".into(),
    }
}

fn fmt_pct(p: f64) -> String {
    if p < 1.0 && p > 0.0 {
        format!("{p:.1}")
    } else {
        format!("{p:.0}")
    }
}

/// In one combination of the other factors, a configuration per level of the factor.
type LevelConfigs = BTreeMap<usize, usize>;

/// Each factor's effect on each metric of `options`, within the combinations of the other
/// factors. `options.baseline` names a configuration (whose levels are the baselines) or
/// `factor=level …` pairs; a factor it does not name has its first level (in the file's
/// order) as baseline.
pub fn answers(
    configs: &[ConfigData],
    factors: &[Factor],
    options: &Options,
) -> Result<Answers, CompareError> {
    if configs.is_empty() {
        return Err(CompareError::NoConfigs);
    }
    if options.metrics.is_empty() {
        return Err(CompareError::NoMetrics);
    }
    let available = available_metrics(configs);
    if let Some(m) = options
        .metrics
        .iter()
        .find(|m| !available.contains(&m.name))
    {
        return Err(CompareError::UnknownMetric {
            metric: m.name.clone(),
            available: available.join(", "),
        });
    }
    let at: Vec<Vec<Option<usize>>> = configs
        .iter()
        .map(|c| factors.iter().map(|f| f.level_of(&c.factors)).collect())
        .collect();
    // Per factor, its levels that some configuration has.
    let present: Vec<Vec<usize>> = (0..factors.len())
        .map(|f| {
            let mut ls: Vec<usize> = at.iter().filter_map(|a| a[f]).collect();
            ls.sort_unstable();
            ls.dedup();
            ls
        })
        .collect();
    let mut baseline: Vec<Option<usize>> = present.iter().map(|ls| ls.first().copied()).collect();
    if let Some(label) = &options.baseline {
        match find_baseline(configs, label) {
            Ok(i) => {
                for (b, l) in baseline.iter_mut().zip(&at[i]) {
                    if l.is_some() {
                        *b = *l;
                    }
                }
            }
            Err(e @ CompareError::UnknownBaseline { .. }) => {
                let pairs = crate::factors::parse_levels(factors, label).ok_or(e)?;
                for (f, l) in pairs {
                    baseline[f] = Some(l);
                }
            }
            Err(e) => return Err(e),
        }
    }
    let varying: Vec<usize> = (0..factors.len())
        .filter(|&f| present[f].len() > 1)
        .collect();
    let mut out = Vec::new();
    for &f in &varying {
        let Some(base) = baseline[f] else { continue };
        let others: Vec<usize> = varying.iter().copied().filter(|&g| g != f).collect();
        // Combinations of the other factors, in the configurations' order; in each, the
        // first configuration of each level of `f`.
        let mut cells: Vec<(Vec<Option<usize>>, LevelConfigs)> = Vec::new();
        for (i, a) in at.iter().enumerate() {
            let Some(l) = a[f] else { continue };
            let key: Vec<Option<usize>> = (0..factors.len())
                .filter(|&g| g != f)
                .map(|g| a[g])
                .collect();
            let ci = match cells.iter().position(|(k, _)| *k == key) {
                Some(ci) => ci,
                None => {
                    cells.push((key, BTreeMap::new()));
                    cells.len() - 1
                }
            };
            cells[ci].1.entry(l).or_insert(i);
        }
        let within = |i: usize| -> String {
            others
                .iter()
                .map(|&g| {
                    let l = at[i][g].map_or("–", |l| factors[g].levels[l].name.as_str());
                    format!("{}={l}", factors[g].name)
                })
                .collect::<Vec<_>>()
                .join(" ")
        };
        let other_names: Vec<String> = others.iter().map(|&g| factors[g].name.clone()).collect();
        let name = &factors[f].name;
        let base_name = &factors[f].levels[base].name;
        let mut metrics = Vec::new();
        for spec in &options.metrics {
            // A metric no run measured (another tool's operations, when it counts none) has
            // nothing to say.
            if !configs
                .iter()
                .any(|c| values(c, &spec.name).iter().any(|v| v.is_finite()))
            {
                continue;
            }
            // The family: every (level, combination) pair with both configurations.
            let mut slots: Vec<(usize, usize, usize)> = Vec::new(); // (level, base cfg, cfg)
            for &l in present[f].iter().filter(|&&l| l != base) {
                for (_, by_level) in &cells {
                    if let (Some(&b), Some(&c)) = (by_level.get(&base), by_level.get(&l)) {
                        slots.push((l, b, c));
                    }
                }
            }
            let unit = configs
                .iter()
                .find_map(|c| c.metrics.get(&spec.name))
                .map(|m| m.unit.clone())
                .unwrap_or_default();
            let pairs: Vec<Pair> = slots
                .iter()
                .map(|&(_, b, c)| pair(&configs[b], &configs[c], spec, &unit, options.level))
                .collect();
            let verdicts = judge(&pairs, spec, &unit, options.level);
            let mut levels = Vec::new();
            for &l in present[f].iter().filter(|&&l| l != base) {
                let mut cell_effects = Vec::new();
                let mut positives = Vec::new();
                for ((&(sl, b, c), p), &(verdict, adj)) in slots.iter().zip(&pairs).zip(&verdicts) {
                    if sl != l {
                        continue;
                    }
                    let (effect, within_pct) = cell_effect(verdict, p.ratio_ci);
                    let stats = |i: usize| mean_ci(values(&configs[i], &spec.name), options.level);
                    let (n, mean, ci) = stats(c);
                    let (n_baseline, baseline_mean, _) = stats(b);
                    positives.push(p.positive);
                    cell_effects.push(CellEffect {
                        within: within(c),
                        config: configs[c].label.clone(),
                        baseline_config: configs[b].label.clone(),
                        n,
                        n_baseline,
                        mean,
                        ci,
                        baseline_mean,
                        ratio: p.ratio,
                        ratio_ci: p.ratio_ci,
                        p_adjusted: adj,
                        verdict,
                        effect,
                        within_pct,
                    });
                }
                if cell_effects.is_empty() {
                    continue;
                }
                let names = Names {
                    factor: name,
                    base: base_name,
                    level: &factors[f].levels[l].name,
                    title: spec.title(),
                    unit: &unit,
                    others: &other_names,
                };
                levels.push(level_answer(
                    &names,
                    cell_effects,
                    &positives,
                    options.level,
                ));
            }
            if !levels.is_empty() {
                let mut m = MetricAnswer {
                    metric: spec.name.clone(),
                    title: spec.title().to_string(),
                    unit,
                    higher_is_better: spec.higher_is_better,
                    levels,
                    summary: None,
                };
                if present[f].len() > FOLD_ABOVE_LEVELS {
                    m.summary = Some(summarize(name, base_name, spec.title(), &m));
                }
                metrics.push(m);
            }
        }
        if !metrics.is_empty() {
            out.push(FactorAnswer {
                factor: name.clone(),
                baseline: base_name.clone(),
                others: other_names,
                metrics,
            });
        }
    }
    Ok(Answers {
        level: options.level.get(),
        no_effect_band_pct: NO_EFFECT_BAND_PCT,
        max_ratio_span: MAX_RATIO_SPAN,
        factors: out,
    })
}

/// The sentences, one line each, under a heading that says how to read them (nothing when
/// there are none): a factor of many levels in one sentence per metric, and where to find
/// every level's.
pub fn render_sentences(a: &Answers, out: &mut dyn Write) -> io::Result<()> {
    if a.factors.is_empty() {
        return Ok(());
    }
    writeln!(
        out,
        "answer (each level against the baseline level within each combination of the other factors; ratio [{}% CI]; \"no effect\" when the interval lies within ±{} %):",
        (a.level * 100.0).round(),
        fmt_pct(a.no_effect_band_pct)
    )?;
    for line in sentences(a) {
        writeln!(out, "  {line}")?;
    }
    let folded = folded_factors(a);
    if !folded.is_empty() {
        writeln!(
            out,
            "  ({} summed up: every level's sentence in `iolab compare --json` (answers), every pair in `iolab compare`)",
            folded.join(", ")
        )?;
    }
    Ok(())
}

/// The factors whose levels are summed up ([`MetricAnswer::summary`]).
pub fn folded_factors(a: &Answers) -> Vec<&str> {
    a.factors
        .iter()
        .filter(|f| f.metrics.iter().any(|m| m.summary.is_some()))
        .map(|f| f.factor.as_str())
        .collect()
}

/// `iolab compare`'s per-factor view: the sentences, then per factor and metric the pairs of
/// configurations behind them.
pub fn render_answers(a: &Answers, out: &mut dyn Write) -> io::Result<()> {
    render_sentences(a, out)?;
    let pct = (a.level * 100.0).round();
    for f in &a.factors {
        writeln!(out)?;
        let within = if f.others.is_empty() {
            String::new()
        } else {
            format!(", within each combination of {}", f.others.join(" × "))
        };
        writeln!(
            out,
            "factor {} (baseline {}={}{within}):",
            f.factor, f.factor, f.baseline
        )?;
        for m in &f.metrics {
            writeln!(out, "{}", metric_heading(&m.title, m.higher_is_better))?;
            let mut table = vec![vec![
                "configuration".to_string(),
                "vs".into(),
                "n".into(),
                format!("mean ± {pct}% CI"),
                "baseline mean".into(),
                format!("ratio [{pct}% CI]"),
                "p (Welch, Holm)".into(),
                "verdict".into(),
            ]];
            for l in &m.levels {
                for c in &l.cells {
                    let ratio = match (c.ratio, c.ratio_ci) {
                        (Some(x), Some(ci)) if ci[0] == ci[1] => {
                            format!("{} (exact)", fmt_ratio(x))
                        }
                        (Some(x), Some(ci)) => fmt_ratio_ci(x, ci),
                        _ => "-".into(),
                    };
                    let verdict = match (c.effect, c.within_pct) {
                        (Effect::NoEffect, Some(w)) if w > 0.0 => {
                            format!("{} (within ±{} %)", c.verdict.as_str(), fmt_pct(w))
                        }
                        _ => c.verdict.as_str().to_string(),
                    };
                    table.push(vec![
                        c.config.clone(),
                        c.baseline_config.clone(),
                        c.n.to_string(),
                        fmt_mean(c.mean, c.ci, &m.unit),
                        fmt_mean(c.baseline_mean, None, &m.unit),
                        ratio,
                        fmt_p(c.p_adjusted),
                        verdict,
                    ]);
                }
            }
            write_table(
                &table,
                &[false, false, true, true, true, true, true, false],
                out,
            )?;
        }
    }
    Ok(())
}

/// The answer's lines: per factor and metric, the summary of a factor of many levels, else
/// each level's sentence.
pub fn sentences(a: &Answers) -> Vec<&str> {
    a.factors
        .iter()
        .flat_map(|f| &f.metrics)
        .flat_map(MetricAnswer::sentences)
        .collect()
}

impl MetricAnswer {
    /// What is said of this metric: its summary when the factor is summed up, else a
    /// sentence per level.
    pub fn sentences(&self) -> Vec<&str> {
        match &self.summary {
            Some(s) => vec![s.as_str()],
            None => self.levels.iter().map(|l| l.sentence.as_str()).collect(),
        }
    }
}

/// Every level's sentence, summed up or not (the detail a summary folds).
pub fn level_sentences(a: &Answers) -> Vec<&str> {
    a.factors
        .iter()
        .flat_map(|f| &f.metrics)
        .flat_map(|m| &m.levels)
        .map(|l| l.sentence.as_str())
        .collect()
}
