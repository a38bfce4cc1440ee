//! Ratio of means B/A with a confidence interval.
//!
//! Primary: **Fieller's interval** (Fieller, "Some problems in interval estimation", JRSS B
//! 16(2), 1954). For independent samples, the set of ρ for which x̄_b − ρ·x̄_a is compatible
//! with 0, i.e. (x̄_b − ρx̄_a)² ≤ t²(v_b + ρ²v_a) with v = s²/n, is an exact pivot under
//! normality. It is asymmetric where it should be (a ratio cannot be negative when both
//! means are clearly positive) and, unlike the delta method, honest when the baseline mean is
//! imprecise: if x̄_a is not significantly different from 0 (g = t²v_a/x̄_a² ≥ 1) the set is
//! unbounded and we report (−∞, +∞) rather than a misleadingly narrow interval. The degrees of
//! freedom of v_b + ρ²v_a follow Welch (1947) and Satterthwaite (1946), evaluated at the point
//! estimate ρ̂.
//!
//! Cross-check: the **delta method** (first-order Taylor expansion of x̄_b/x̄_a), which agrees
//! with Fieller when g is small — the common case for benchmark throughputs with a few
//! percent of noise — and is reported alongside.
//!
//! Alternative the spec mentions: the t-interval of log values ([`ratio_of_geometric_means`]),
//! which estimates the ratio of *geometric* means (medians of log-normal data). It is exact for
//! log-normal data and never negative, but estimates a different quantity, so it is offered
//! separately rather than mixed into the arithmetic-mean ratio.

use super::welch::welch_t_test;
use crate::{Interval, Level, Result, Sample, StatsError, StudentT};

/// Ratio of means `candidate / baseline` with its intervals.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RatioOfMeans {
    /// x̄_b / x̄_a.
    pub ratio: f64,
    /// Fieller's interval (unbounded as (−∞, +∞) when the baseline mean is not significantly
    /// different from zero). This is the interval to report.
    pub fieller: Interval,
    /// Delta-method interval ρ̂ ± t·√(v_b + ρ̂²v_a)/|x̄_a|, for cross-checking.
    pub delta: Interval,
    /// Welch–Satterthwaite degrees of freedom used by both intervals.
    pub df: f64,
    /// g = t²·v_a/x̄_a²: Fieller's interval is bounded iff g < 1, and close to the delta
    /// method when g ≪ 1.
    pub g: f64,
}

/// Ratio of means `candidate / baseline` (B/A) with Fieller and delta-method intervals.
/// Fails with [`StatsError::ZeroBaselineMean`] if x̄_a = 0.
pub fn ratio_of_means(baseline: &Sample, candidate: &Sample, level: Level) -> Result<RatioOfMeans> {
    let ma = baseline.mean();
    let mb = candidate.mean();
    if ma == 0.0 {
        return Err(StatsError::ZeroBaselineMean);
    }
    let va = baseline.variance() / baseline.len() as f64;
    let vb = candidate.variance() / candidate.len() as f64;
    let rho = mb / ma;

    // Welch–Satterthwaite df of the linear combination x̄_b − ρ̂·x̄_a.
    let (na1, nb1) = ((baseline.len() - 1) as f64, (candidate.len() - 1) as f64);
    let var_comb = vb + rho * rho * va;
    let df = if var_comb > 0.0 {
        var_comb * var_comb / (vb * vb / nb1 + rho.powi(4) * va * va / na1)
    } else {
        na1 + nb1
    };
    let t = StudentT::with_df(df).critical_value(level);
    let t2 = t * t;

    // (x̄_a² − t²v_a)ρ² − 2x̄_a x̄_b ρ + (x̄_b² − t²v_b) ≤ 0.
    let a = ma * ma - t2 * va;
    let g = t2 * va / (ma * ma);
    let (lower, upper) = if a > 0.0 {
        // Discriminant / t² = v_b·a + v_a·x̄_b² ≥ 0, so the roots are real.
        let root = t * (vb * a + va * mb * mb).sqrt();
        ((ma * mb - root) / a, (ma * mb + root) / a)
    } else {
        (f64::NEG_INFINITY, f64::INFINITY)
    };
    let se_delta = var_comb.sqrt() / ma.abs();
    Ok(RatioOfMeans {
        ratio: rho,
        fieller: Interval {
            estimate: rho,
            lower,
            upper,
            level,
        },
        delta: Interval {
            estimate: rho,
            lower: rho - t * se_delta,
            upper: rho + t * se_delta,
            level,
        },
        df,
        g,
    })
}

/// Ratio of geometric means B/A from the Welch t-interval of the log values, exponentiated.
///
/// Appropriate when effects are multiplicative and data log-normal (skewed latencies); it
/// estimates exp(mean(ln b) − mean(ln a)), not x̄_b/x̄_a. Fails with
/// [`StatsError::NonPositive`] if any value is ≤ 0.
pub fn ratio_of_geometric_means(
    baseline: &Sample,
    candidate: &Sample,
    level: Level,
) -> Result<Interval> {
    let la = baseline.ln()?;
    let lb = candidate.ln()?;
    let w = welch_t_test(&la, &lb, level);
    Ok(Interval {
        estimate: w.diff.estimate.exp(),
        lower: w.diff.lower.exp(),
        upper: w.diff.upper.exp(),
        level,
    })
}

/// How a [`PositiveRatio`] was estimated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RatioMethod {
    /// Welch's t-interval of the difference of the mean logarithms, exponentiated: the ratio of
    /// geometric means. Used whenever every value is positive.
    LogWelch,
    /// Fieller's interval of the ratio of (arithmetic) means, cut at 0 when no value is
    /// negative: for samples with a zero (a count that can be 0), where logarithms do not exist.
    Fieller,
}

/// The ratio candidate/baseline that comparisons report and judge by: an interval that never
/// crosses zero for positive data, so that a noisy sample widens it (upwards, on the log
/// scale) instead of turning it negative.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PositiveRatio {
    pub method: RatioMethod,
    /// The estimate and its interval; `upper` is +∞ when the data cannot bound it (Fieller's
    /// interval with a baseline mean not clearly above 0): "unbounded".
    pub interval: Interval,
    /// The two-sided p-value of "the ratio is 1" by the same test as the interval (Welch on
    /// the logarithms, or on the values for [`RatioMethod::Fieller`]).
    pub p_value: f64,
    /// On the log scale (LogWelch only, else NaN): the standard error of ln(ratio) and its
    /// Welch–Satterthwaite degrees of freedom, for pooling ratios ([`pool_log_ratios`]).
    pub log_se: f64,
    pub df: f64,
}

/// The ratio `candidate / baseline` as comparisons report it ([`PositiveRatio`]): Welch on
/// the logarithms when every value is positive, else Fieller's interval of the ratio of means,
/// cut at 0 when no value is negative. Fails only when Fieller's baseline mean is 0.
///
/// Why the log scale: Fieller's interval is exact for normal data, but benchmark metrics are
/// positive and skewed, and with a noisy candidate its lower bound goes negative (a latency
/// ratio of 5315 with the interval [−763.6, 11649]), which is no statement about a ratio of
/// positive quantities at all. Multiplicative noise is what repeated runs show, and on the log
/// scale the interval is exp(d ± t·se): positive, asymmetric, and as wide as the data say.
pub fn positive_ratio(
    baseline: &Sample,
    candidate: &Sample,
    level: Level,
) -> Result<PositiveRatio> {
    if let (Ok(la), Ok(lb)) = (baseline.ln(), candidate.ln()) {
        let w = welch_t_test(&la, &lb, level);
        return Ok(PositiveRatio {
            method: RatioMethod::LogWelch,
            interval: Interval {
                estimate: w.diff.estimate.exp(),
                lower: w.diff.lower.exp(),
                upper: w.diff.upper.exp(),
                level,
            },
            p_value: w.p_value,
            log_se: w.se,
            df: w.df,
        });
    }
    let r = ratio_of_means(baseline, candidate, level)?;
    let w = welch_t_test(baseline, candidate, level);
    let mut interval = r.fieller;
    let nonnegative = baseline
        .values()
        .iter()
        .chain(candidate.values())
        .all(|&v| v >= 0.0);
    if nonnegative {
        // A ratio of non-negative means is ≥ 0: the confidence set within that range.
        interval.lower = interval.lower.max(0.0);
        if !interval.is_bounded() {
            interval.lower = 0.0;
            interval.upper = f64::INFINITY;
        }
    }
    Ok(PositiveRatio {
        method: RatioMethod::Fieller,
        interval,
        p_value: w.p_value,
        log_se: f64::NAN,
        df: r.df,
    })
}

/// The geometric mean of several [`RatioMethod::LogWelch`] ratios with its interval: the mean
/// of their logarithms d̄ = Σdᵢ/m, standard error √(Σseᵢ²)/m (independent comparisons),
/// Welch–Satterthwaite degrees of freedom (Σseᵢ²)²/Σ(seᵢ⁴/dfᵢ), then exp(d̄ ± t·se).
/// It estimates the average effect over these comparisons (the same weight for each), whether
/// or not they differ; `None` when one is not on the log scale or `parts` is empty.
pub fn pool_log_ratios(parts: &[PositiveRatio], level: Level) -> Option<Interval> {
    if parts.is_empty() || parts.iter().any(|p| p.method != RatioMethod::LogWelch) {
        return None;
    }
    let m = parts.len() as f64;
    let d = parts.iter().map(|p| p.interval.estimate.ln()).sum::<f64>() / m;
    let var: f64 = parts.iter().map(|p| p.log_se * p.log_se).sum();
    let df = if var > 0.0 {
        var * var / parts.iter().map(|p| p.log_se.powi(4) / p.df).sum::<f64>()
    } else {
        parts.iter().map(|p| p.df).sum()
    };
    let hw = StudentT::with_df(df.max(1.0)).critical_value(level) * var.sqrt() / m;
    Some(Interval {
        estimate: d.exp(),
        lower: (d - hw).exp(),
        upper: (d + hw).exp(),
        level,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[f64]) -> Sample {
        Sample::from_slice(v).unwrap()
    }

    #[test]
    fn fieller_reference_values() {
        // Reference: the quadratic solved by numpy.roots with SciPy's t.ppf at the
        // Welch–Satterthwaite df 6.44087 → Fieller (1.0637909, 1.1584862),
        // delta (1.0629579, 1.1576010).
        let a = s(&[100.0, 104.0, 97.0, 101.0, 99.0]);
        let b = s(&[110.0, 115.0, 108.0, 112.0]);
        let r = ratio_of_means(&a, &b, Level::P95).unwrap();
        assert!((r.ratio - 111.25 / 100.2).abs() < 1e-14);
        assert!((r.df - 6.440_871_406_5).abs() < 1e-9, "{r:?}");
        assert!((r.fieller.lower - 1.063_790_871_9).abs() < 1e-9, "{r:?}");
        assert!((r.fieller.upper - 1.158_486_221_0).abs() < 1e-9, "{r:?}");
        assert!((r.delta.lower - 1.062_957_865_9).abs() < 1e-9, "{r:?}");
        assert!((r.delta.upper - 1.157_601_016_4).abs() < 1e-9, "{r:?}");
        // g small → Fieller ≈ delta method.
        assert!(r.g < 0.01, "{r:?}");
        assert!((r.fieller.lower - r.delta.lower).abs() < 2e-3, "{r:?}");
        assert!((r.fieller.upper - r.delta.upper).abs() < 2e-3, "{r:?}");
        // Fieller's interval is shifted upward relative to the symmetric delta interval.
        assert!(r.fieller.upper - r.ratio > r.ratio - r.fieller.lower);
    }

    #[test]
    fn fieller_contains_one_iff_welch_does_not_reject_roughly() {
        // At ρ = 1 the Fieller inequality is exactly Welch's |t| ≤ t_crit (up to the df).
        let a = s(&[10.0, 11.0, 9.5, 10.5]);
        let b = s(&[10.2, 11.3, 9.9, 10.8]);
        let r = ratio_of_means(&a, &b, Level::P95).unwrap();
        let w = welch_t_test(&a, &b, Level::P95);
        assert!(r.fieller.contains(1.0));
        assert!(w.p_value > 0.05);
    }

    #[test]
    fn unbounded_when_baseline_mean_is_imprecise() {
        let a = s(&[-1.0, 2.0, 0.5, -0.8]);
        let b = s(&[5.0, 6.0, 5.5, 6.2]);
        let r = ratio_of_means(&a, &b, Level::P95).unwrap();
        assert!(r.g >= 1.0);
        assert!(!r.fieller.is_bounded());
        assert!(r.fieller.contains(1e12) && r.fieller.contains(-1e12));
        let zero = s(&[-1.0, 1.0]);
        assert_eq!(
            ratio_of_means(&zero, &b, Level::P95),
            Err(StatsError::ZeroBaselineMean)
        );
    }

    #[test]
    fn geometric_ratio() {
        let a = s(&[1.0, 2.0, 4.0]);
        let b = s(&[2.0, 4.0, 8.0]);
        let g = ratio_of_geometric_means(&a, &b, Level::P95).unwrap();
        assert!((g.estimate - 2.0).abs() < 1e-12);
        assert!(g.contains(2.0));
        assert!(matches!(
            ratio_of_geometric_means(&s(&[1.0, 0.0]), &b, Level::P95),
            Err(StatsError::NonPositive { index: 1, .. })
        ));
    }

    /// The seed-000 defect: a latency ratio printed as `5315 [-763.6, 11649]` (Fieller, with
    /// a candidate too noisy for its mean to be clearly above 0). These runs reproduce it; the
    /// reported interval is on the log scale, positive, and wide where the data are.
    #[test]
    fn a_noisy_candidate_keeps_the_ratio_positive() {
        let a = s(&[936_200.0, 1_000_000.0, 1_063_800.0]);
        let b = s(&[2_786_240_000.0, 5_315_000_000.0, 7_843_760_000.0]);
        let r = ratio_of_means(&a, &b, Level::P95).unwrap();
        assert!((r.ratio - 5315.0).abs() < 1e-9, "{r:?}");
        assert!((r.fieller.lower - -763.6).abs() < 0.05, "{r:?}");
        assert!((r.fieller.upper - 11649.0).abs() < 0.5, "{r:?}");
        let p = positive_ratio(&a, &b, Level::P95).unwrap();
        assert_eq!(p.method, RatioMethod::LogWelch);
        let ci = p.interval;
        assert!(
            ci.lower > 1.0 && ci.lower < ci.estimate && ci.estimate < ci.upper,
            "{p:?}"
        );
        // exp of the t-interval of the log difference: the geometric-mean ratio.
        let g = ratio_of_geometric_means(&a, &b, Level::P95).unwrap();
        assert!(
            (g.lower - ci.lower).abs() < 1e-9 * g.lower
                && (g.upper - ci.upper).abs() < 1e-9 * g.upper
        );
    }

    #[test]
    fn fieller_is_cut_at_zero_and_unbounded_says_so() {
        // A zero rules out logarithms: Fieller's interval, cut at 0 for non-negative data.
        let a = s(&[0.0, 2.0, 1.0, 3.0]);
        let b = s(&[5.0, 6.0, 5.5, 6.2]);
        let p = positive_ratio(&a, &b, Level::P95).unwrap();
        assert_eq!(p.method, RatioMethod::Fieller);
        assert!(p.interval.lower >= 0.0, "{p:?}");
        let b0 = s(&[0.0, 9.0, 0.0, 1.0]);
        let a0 = s(&[0.0, 1.0, 0.0, 0.2]);
        let p = positive_ratio(&a0, &b0, Level::P95).unwrap();
        assert_eq!(
            (p.interval.lower, p.interval.upper),
            (0.0, f64::INFINITY),
            "{p:?}"
        );
    }

    #[test]
    fn pooled_log_ratios() {
        let a = s(&[100.0, 102.0, 98.0, 101.0]);
        let b = s(&[200.0, 204.0, 196.0, 202.0]);
        let c = s(&[400.0, 390.0, 410.0, 405.0]);
        let one = positive_ratio(&a, &b, Level::P95).unwrap();
        let two = positive_ratio(&a, &c, Level::P95).unwrap();
        let pooled = pool_log_ratios(&[one, two], Level::P95).unwrap();
        let geo = (one.interval.estimate * two.interval.estimate).sqrt();
        assert!((pooled.estimate - geo).abs() < 1e-12);
        assert!(pooled.lower < geo && geo < pooled.upper);
        // Alone, the pool is the ratio itself.
        let alone = pool_log_ratios(&[one], Level::P95).unwrap();
        assert!((alone.lower - one.interval.lower).abs() < 1e-12);
        assert!((alone.upper - one.interval.upper).abs() < 1e-12);
        assert!(pool_log_ratios(&[], Level::P95).is_none());
    }
}
