//! Comparing configurations: is B faster than A, and by how much?
//!
//! For each pair the spec asks for the ratio with a 95% interval, Welch's p-value and a
//! verdict, with Holm's method over a family of comparisons. The ratio reported and judged by
//! is [`PositiveRatio`]: Welch's interval on the logarithms, exponentiated (the ratio of
//! geometric means), which never crosses zero; Fieller's interval of the ratio of means is
//! kept as a cross-check, and used (cut at 0) only for samples with a value ≤ 0. The verdict
//! follows "never claim a difference the intervals do not support": a difference is declared
//! only when the (Holm-adjusted) p-value of the same test is ≤ α **and** the interval excludes
//! 1; an interval that does not exclude 1 and spans [`MAX_RATIO_SPAN`] or more (upper/lower,
//! or unbounded) is "too few runs to tell", never "no significant difference".
//! Mann–Whitney U is reported as a rank-based cross-check, not used for the verdict.

mod holm;
mod mann_whitney;
mod ratio;
mod welch;

pub use holm::{bonferroni_adjust, holm_adjust, holm_reject};
pub use mann_whitney::{mann_whitney_u, MannWhitney, MannWhitneyMethod};
pub use ratio::{
    pool_log_ratios, positive_ratio, ratio_of_geometric_means, ratio_of_means, PositiveRatio,
    RatioMethod, RatioOfMeans,
};
pub use welch::{welch_t_test, WelchTest};

use crate::{Interval, Level, Result, Sample};

/// Outcome of a comparison of a candidate with a baseline.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// The candidate is better (higher, or lower when lower is better).
    Faster,
    /// The candidate is worse.
    Slower,
    /// The data do not support a difference at this level, and the interval is narrow
    /// enough to say so.
    NoSignificantDifference,
    /// No difference shown, but the interval spans [`MAX_RATIO_SPAN`] or more (or is
    /// unbounded): the runs are too few, or too noisy, to say anything.
    TooFewRunsToTell,
}

/// An interval of a ratio whose upper/lower bound ratio reaches this (an order of magnitude)
/// says nothing about whether there is a difference: "too few runs to tell".
pub const MAX_RATIO_SPAN: f64 = 10.0;

/// Whether the interval of a ratio lies above 0 and spans less than [`MAX_RATIO_SPAN`].
pub fn ratio_is_informative(ci: &Interval) -> bool {
    ci.lower > 0.0 && ci.upper.is_finite() && ci.upper / ci.lower < MAX_RATIO_SPAN
}

/// How to compare.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CompareOptions {
    /// Confidence level of the intervals; α = 1 − level for the tests.
    pub level: Level,
    /// `true` for throughput-like metrics, `false` for latency-like ones.
    pub higher_is_better: bool,
}

impl Default for CompareOptions {
    fn default() -> Self {
        CompareOptions {
            level: Level::P95,
            higher_is_better: true,
        }
    }
}

/// Everything computed for one candidate against a baseline.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Comparison {
    /// Ratio of means candidate/baseline with Fieller and delta intervals (cross-check).
    pub ratio: RatioOfMeans,
    /// The ratio reported and judged by (positive; see [`positive_ratio`]).
    pub positive: PositiveRatio,
    /// Welch's t-test of the difference of means.
    pub welch: WelchTest,
    /// Mann–Whitney U test (cross-check).
    pub mann_whitney: MannWhitney,
    /// The p-value behind the verdict: that of [`Self::positive`], Holm-adjusted within a
    /// family.
    pub p_value: f64,
    /// Faster / slower / no significant difference.
    pub verdict: Verdict,
}

/// The verdict rule: significant iff `p_value ≤ α` and `ratio_ci` excludes 1 (and 0); the
/// direction is that of the interval, read through `higher_is_better`. Not significant is
/// "too few runs to tell" when the interval is not informative ([`ratio_is_informative`]).
pub fn verdict(ratio_ci: &Interval, p_value: f64, alpha: f64, higher_is_better: bool) -> Verdict {
    // Written so that a NaN p-value is never significant.
    let significant = p_value <= alpha && !ratio_ci.contains(1.0) && !ratio_ci.contains(0.0);
    if !significant {
        return if ratio_is_informative(ratio_ci) {
            Verdict::NoSignificantDifference
        } else {
            Verdict::TooFewRunsToTell
        };
    }
    let higher = ratio_ci.lower > 1.0;
    if higher == higher_is_better {
        Verdict::Faster
    } else {
        Verdict::Slower
    }
}

/// Compares one candidate with a baseline. Fails only if the baseline mean is 0.
pub fn compare(
    baseline: &Sample,
    candidate: &Sample,
    options: CompareOptions,
) -> Result<Comparison> {
    let ratio = ratio_of_means(baseline, candidate, options.level)?;
    let positive = positive_ratio(baseline, candidate, options.level)?;
    let welch = welch_t_test(baseline, candidate, options.level);
    let mann_whitney = mann_whitney_u(baseline, candidate);
    let p_value = positive.p_value;
    Ok(Comparison {
        ratio,
        positive,
        welch,
        mann_whitney,
        p_value,
        verdict: verdict(
            &positive.interval,
            p_value,
            options.level.alpha(),
            options.higher_is_better,
        ),
    })
}

/// Compares several candidates with one baseline, controlling the family-wise error rate with
/// Holm's method over the p-values behind the verdicts (intervals stay at the nominal level).
pub fn compare_family(
    baseline: &Sample,
    candidates: &[Sample],
    options: CompareOptions,
) -> Result<Vec<Comparison>> {
    let mut out = candidates
        .iter()
        .map(|c| compare(baseline, c, options))
        .collect::<Result<Vec<_>>>()?;
    let raw: Vec<f64> = out.iter().map(|c| c.positive.p_value).collect();
    let adjusted = holm_adjust(&raw)?;
    for (c, p) in out.iter_mut().zip(adjusted) {
        c.p_value = p;
        c.verdict = verdict(
            &c.positive.interval,
            p,
            options.level.alpha(),
            options.higher_is_better,
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[f64]) -> Sample {
        Sample::from_slice(v).unwrap()
    }

    #[test]
    fn clear_speedup() {
        let a = s(&[100.0, 102.0, 98.0, 101.0, 99.0]);
        let b = s(&[120.0, 123.0, 118.0, 121.0, 119.0]);
        let c = compare(&a, &b, CompareOptions::default()).unwrap();
        assert_eq!(c.verdict, Verdict::Faster);
        assert!(c.ratio.fieller.lower > 1.15);
        // The same numbers as latencies: higher is worse.
        let lat = CompareOptions {
            higher_is_better: false,
            ..CompareOptions::default()
        };
        assert_eq!(compare(&a, &b, lat).unwrap().verdict, Verdict::Slower);
        assert_eq!(compare(&b, &a, lat).unwrap().verdict, Verdict::Faster);
        assert_eq!(
            compare(&b, &a, CompareOptions::default()).unwrap().verdict,
            Verdict::Slower
        );
    }

    #[test]
    fn overlapping_runs_are_not_a_difference() {
        let a = s(&[100.0, 110.0, 95.0, 105.0]);
        let b = s(&[102.0, 112.0, 97.0, 104.0]);
        let c = compare(&a, &b, CompareOptions::default()).unwrap();
        assert_eq!(c.verdict, Verdict::NoSignificantDifference);
        assert!(c.ratio.fieller.contains(1.0));
    }

    #[test]
    fn verdict_needs_both_criteria() {
        let ci_excl = Interval {
            estimate: 1.2,
            lower: 1.1,
            upper: 1.3,
            level: Level::P95,
        };
        let ci_incl = Interval {
            lower: 0.9,
            ..ci_excl
        };
        assert_eq!(verdict(&ci_excl, 0.01, 0.05, true), Verdict::Faster);
        assert_eq!(
            verdict(&ci_excl, 0.2, 0.05, true),
            Verdict::NoSignificantDifference
        );
        assert_eq!(
            verdict(&ci_incl, 0.01, 0.05, true),
            Verdict::NoSignificantDifference
        );
        assert_eq!(
            verdict(&ci_excl, f64::NAN, 0.05, true),
            Verdict::NoSignificantDifference
        );
    }

    #[test]
    fn family_uses_holm() {
        let a = s(&[100.0, 102.0, 98.0, 101.0, 99.0]);
        let strong = s(&[120.0, 123.0, 118.0, 121.0, 119.0]);
        // Borderline: significant alone, not after adjusting for three comparisons.
        let weak = s(&[102.5, 103.5, 101.0, 103.0, 101.5]);
        let none = s(&[100.5, 101.0, 98.5, 100.0, 99.5]);
        let single = compare(&a, &weak, CompareOptions::default()).unwrap();
        // Welch p = 0.0302 alone (SciPy agrees); Holm multiplies the second smallest by 2.
        assert!(
            (single.welch.p_value - 0.030_166_436).abs() < 1e-8,
            "{single:?}"
        );
        assert_eq!(single.verdict, Verdict::Faster);
        let fam =
            compare_family(&a, &[strong.clone(), weak, none], CompareOptions::default()).unwrap();
        assert_eq!(fam[0].verdict, Verdict::Faster);
        assert!((fam[1].p_value - 2.0 * single.p_value).abs() < 1e-15);
        assert_eq!(fam[1].verdict, Verdict::NoSignificantDifference);
        for c in &fam {
            assert!(c.p_value >= c.positive.p_value);
        }
        assert_eq!(fam[2].verdict, Verdict::NoSignificantDifference);
    }

    /// "No significant difference" is never said of an interval spanning an order of
    /// magnitude (the seed-000 comparison called a 4,629× latency ratio that): it is "too few
    /// runs to tell"; an unbounded one too.
    #[test]
    fn a_wide_interval_is_too_few_runs_to_tell() {
        let wide = Interval {
            estimate: 4629.0,
            lower: 0.5,
            upper: 40_000.0,
            level: Level::P95,
        };
        assert_eq!(verdict(&wide, 0.3, 0.05, false), Verdict::TooFewRunsToTell);
        let unbounded = Interval {
            lower: 0.0,
            upper: f64::INFINITY,
            ..wide
        };
        assert_eq!(
            verdict(&unbounded, 0.3, 0.05, false),
            Verdict::TooFewRunsToTell
        );
        let crossing = Interval {
            lower: -763.6,
            upper: 11649.0,
            ..wide
        };
        assert_eq!(
            verdict(&crossing, 0.01, 0.05, false),
            Verdict::TooFewRunsToTell
        );
        // Two runs each, one of them 4629× slower on average but all over the place.
        let a = s(&[1_000_000.0, 1_100_000.0]);
        let b = s(&[8_000_000.0, 9_250_000_000.0]);
        let c = compare(
            &a,
            &b,
            CompareOptions {
                higher_is_better: false,
                ..CompareOptions::default()
            },
        )
        .unwrap();
        assert!(c.positive.interval.lower > 0.0, "{c:?}");
        assert_eq!(c.verdict, Verdict::TooFewRunsToTell, "{c:?}");
    }
}
