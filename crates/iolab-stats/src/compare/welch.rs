//! Welch's unequal-variance t-test.
//!
//! Welch, "The generalization of 'Student's' problem when several different population
//! variances are involved", Biometrika 34, 1947; degrees of freedom by Satterthwaite, "An
//! approximate distribution of estimates of variance components", Biometrics Bulletin 2, 1946.
//! Two configurations rarely have equal run-to-run variance (a cached configuration is both
//! faster and steadier), so the pooled-variance Student test is not used.

use crate::{Interval, Level, Sample, StudentT};

/// Result of Welch's test of mean(candidate) − mean(baseline) = 0.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WelchTest {
    /// t = (x̄_b − x̄_a) / √(s_a²/n_a + s_b²/n_b).
    pub t: f64,
    /// Welch–Satterthwaite degrees of freedom.
    pub df: f64,
    /// Two-sided p-value from the exact t distribution with `df` degrees of freedom.
    pub p_value: f64,
    /// Standard error of the difference, √(s_a²/n_a + s_b²/n_b).
    pub se: f64,
    /// Confidence interval of the difference x̄_b − x̄_a at the requested level.
    pub diff: Interval,
}

/// Welch's t-test comparing `candidate` (B) with `baseline` (A); positive t means B > A.
///
/// df = (v_a + v_b)² / (v_a²/(n_a − 1) + v_b²/(n_b − 1)) with v = s²/n. When both samples are
/// constant the statistic is 0/0: equal means give t = 0, p = 1; different means give
/// t = ±∞, p = 0, and df falls back to n_a + n_b − 2.
pub fn welch_t_test(baseline: &Sample, candidate: &Sample, level: Level) -> WelchTest {
    let (na, nb) = (baseline.len() as f64, candidate.len() as f64);
    let (ma, mb) = (baseline.mean(), candidate.mean());
    let va = baseline.variance() / na;
    let vb = candidate.variance() / nb;
    let se2 = va + vb;
    let diff = mb - ma;
    let df = if se2 > 0.0 {
        se2 * se2 / (va * va / (na - 1.0) + vb * vb / (nb - 1.0))
    } else {
        na + nb - 2.0
    };
    let se = se2.sqrt();
    let t = if se > 0.0 {
        diff / se
    } else if diff == 0.0 {
        0.0
    } else {
        diff.signum() * f64::INFINITY
    };
    // Welch–Satterthwaite df lies in [min(n_a, n_b) − 1, n_a + n_b − 2], so df ≥ 1.
    let dist = StudentT::with_df(df);
    let hw = dist.critical_value(level) * se;
    WelchTest {
        t,
        df,
        p_value: dist.two_sided_p(t),
        se,
        diff: Interval {
            estimate: diff,
            lower: diff - hw,
            upper: diff + hw,
            level,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_r_t_test() {
        // SciPy: ttest_ind(b, a, equal_var=False) → t = 5.000637, df = 6.599111,
        //        p = 0.0018597041, 95% CI of the difference (1.6002353, 4.5397647).
        let a = Sample::new(vec![19.1, 20.3, 18.7, 21.0, 19.8]).unwrap();
        let b = Sample::new(vec![22.4, 21.9, 24.0, 23.1]).unwrap();
        let w = welch_t_test(&a, &b, Level::P95);
        assert!((w.t - 5.000_636_733).abs() < 1e-8, "{w:?}");
        assert!((w.df - 6.599_111_129).abs() < 1e-8, "{w:?}");
        assert!((w.p_value - 0.001_859_704_127).abs() < 1e-11, "{w:?}");
        assert!((w.diff.lower - 1.600_235_320).abs() < 1e-8, "{w:?}");
        assert!((w.diff.upper - 4.539_764_680).abs() < 1e-8, "{w:?}");
    }

    #[test]
    fn constant_samples() {
        let a = Sample::new(vec![5.0, 5.0, 5.0]).unwrap();
        let b = Sample::new(vec![5.0, 5.0]).unwrap();
        let w = welch_t_test(&a, &b, Level::P95);
        assert_eq!((w.t, w.p_value, w.df), (0.0, 1.0, 3.0));
        let c = Sample::new(vec![6.0, 6.0]).unwrap();
        let w = welch_t_test(&a, &c, Level::P95);
        assert_eq!((w.t, w.p_value), (f64::INFINITY, 0.0));
        // One constant sample: df = n_other − 1.
        let d = Sample::new(vec![4.0, 6.0, 5.0, 7.0]).unwrap();
        assert!((welch_t_test(&a, &d, Level::P95).df - 3.0).abs() < 1e-12);
    }
}
