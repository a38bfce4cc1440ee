//! Mann–Whitney U test (Wilcoxon rank-sum).
//!
//! Mann & Whitney, "On a test of whether one of two random variables is stochastically larger
//! than the other", Ann. Math. Statist. 18, 1947. Rank-based, so a single wild run cannot
//! dominate it the way it moves a mean: a robustness cross-check next to Welch's test.
//!
//! Exact null distribution when both samples have fewer than 50 values and there are no ties
//! (the rule of R's `wilcox.test`); otherwise the normal approximation with the tie-corrected
//! variance σ² = n_a n_b/12·[(N + 1) − Σ(t³ − t)/(N(N − 1))] and a continuity correction of ½
//! (Lehmann, *Nonparametrics: Statistical Methods Based on Ranks*, 1975, ch. 1).

use crate::dist::normal_sf;
use crate::Sample;

/// How the p-value was obtained.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MannWhitneyMethod {
    /// Exact permutation distribution of U.
    Exact,
    /// Normal approximation with tie and continuity corrections.
    NormalApprox,
}

/// Result of the Mann–Whitney U test.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MannWhitney {
    /// U for the candidate: #{(i, j): b_j > a_i} + ½·#{ties}. Ranges over [0, n_a·n_b];
    /// n_a·n_b/2 is "no difference".
    pub u: f64,
    /// Two-sided p-value.
    pub p_value: f64,
    /// Exact or approximate.
    pub method: MannWhitneyMethod,
}

/// Below this size (both samples) and without ties, the exact distribution is used.
const EXACT_LIMIT: usize = 50;

/// Mann–Whitney U test of `candidate` (B) against `baseline` (A), two-sided.
pub fn mann_whitney_u(baseline: &Sample, candidate: &Sample) -> MannWhitney {
    let (na, nb) = (baseline.len(), candidate.len());
    let n = na + nb;
    // Pool, sort, assign mid-ranks to ties.
    let mut pooled: Vec<(f64, bool)> = baseline
        .values()
        .iter()
        .map(|&x| (x, false))
        .chain(candidate.values().iter().map(|&x| (x, true)))
        .collect();
    pooled.sort_by(|x, y| x.0.total_cmp(&y.0));
    let mut rank_sum_b = 0.0;
    let mut tie_term = 0.0;
    let mut i = 0;
    while i < n {
        let mut j = i + 1;
        while j < n && pooled[j].0 == pooled[i].0 {
            j += 1;
        }
        let t = (j - i) as f64;
        let mid_rank = (i + j + 1) as f64 / 2.0; // ranks i+1..=j
        let in_b = pooled[i..j].iter().filter(|p| p.1).count() as f64;
        rank_sum_b += mid_rank * in_b;
        tie_term += t * t * t - t;
        i = j;
    }
    let (naf, nbf) = (na as f64, nb as f64);
    let u = rank_sum_b - nbf * (nbf + 1.0) / 2.0;
    let mean_u = naf * nbf / 2.0;

    if tie_term == 0.0 && na < EXACT_LIMIT && nb < EXACT_LIMIT {
        return MannWhitney {
            u,
            p_value: exact_two_sided_p(na, nb, u.round() as usize),
            method: MannWhitneyMethod::Exact,
        };
    }
    let nf = n as f64;
    let var = naf * nbf / 12.0 * ((nf + 1.0) - tie_term / (nf * (nf - 1.0)));
    let p_value = if var <= 0.0 {
        1.0 // every value tied: no evidence either way
    } else {
        let d = u - mean_u;
        let z = (d.abs() - 0.5).max(0.0) / var.sqrt();
        (2.0 * normal_sf(z)).min(1.0)
    };
    MannWhitney {
        u,
        p_value,
        method: MannWhitneyMethod::NormalApprox,
    }
}

/// Two-sided exact p = min(1, 2·min(P(U ≤ u), P(U ≥ u))) under H₀.
fn exact_two_sided_p(na: usize, nb: usize, u: usize) -> f64 {
    let counts = u_distribution(na, nb);
    let total: f64 = counts.iter().map(|&c| c as f64).sum();
    let lower: f64 = counts[..=u].iter().map(|&c| c as f64).sum();
    let upper: f64 = counts[u..].iter().map(|&c| c as f64).sum();
    (2.0 * lower.min(upper) / total).min(1.0)
}

/// Number of arrangements giving U = 0..=na·nb: the coefficients of the Gaussian binomial
/// [na + nb choose na]_q = Π_{i=1..na} (1 − q^(nb+i)) / (1 − q^i) (Andrews, *The Theory of
/// Partitions*, 1976, ch. 3). Each step multiplies and then divides exactly, in integers
/// (C(98, 49) < 2¹²⁷).
fn u_distribution(na: usize, nb: usize) -> Vec<i128> {
    let len = na * nb + 1;
    let mut poly = vec![0i128; len];
    poly[0] = 1;
    let mut deg = 0;
    for i in 1..=na {
        // × (1 − q^(nb + i))
        let shift = nb + i;
        deg += nb;
        for k in (shift..=deg.min(len - 1)).rev() {
            poly[k] -= poly[k - shift];
        }
        // ÷ (1 − q^i): r[k] = p[k] + r[k − i]
        for k in i..=deg.min(len - 1) {
            poly[k] += poly[k - i];
        }
    }
    poly
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[f64]) -> Sample {
        Sample::from_slice(v).unwrap()
    }

    #[test]
    fn distribution_counts() {
        // n_a = n_b = 2: U ∈ {0, 1, 2, 2, 3, 4} over C(4, 2) = 6 arrangements.
        assert_eq!(u_distribution(2, 2), vec![1, 1, 2, 1, 1]);
        // n_a = 3, n_b = 2: 10 arrangements.
        assert_eq!(u_distribution(3, 2), vec![1, 1, 2, 2, 2, 1, 1]);
        let big = u_distribution(49, 49);
        let total: i128 = big.iter().sum();
        // C(98, 49)
        assert_eq!(total, 25_477_612_258_980_856_902_730_428_600);
        assert!(big.iter().all(|&c| c > 0));
    }

    #[test]
    fn exact_matches_reference() {
        // Complete separation of 4 vs 3 values: p = 2/C(7, 3) = 2/35 (SciPy agrees).
        let a = s(&[1.0, 2.0, 3.0, 4.0]);
        let b = s(&[5.0, 6.0, 7.0]);
        let r = mann_whitney_u(&a, &b);
        assert_eq!(r.method, MannWhitneyMethod::Exact);
        assert_eq!(r.u, 12.0);
        assert!((r.p_value - 2.0 / 35.0).abs() < 1e-15);
        let r = mann_whitney_u(&b, &a);
        assert_eq!(r.u, 0.0);
        assert!((r.p_value - 2.0 / 35.0).abs() < 1e-15);
        // SciPy: mannwhitneyu(b, a, method="exact") → U = 28, p = 0.017316017316017316.
        let a = s(&[9.1, 9.9, 10.0, 8.7, 9.5]);
        let b = s(&[10.5, 11.2, 9.8, 12.4, 11.9, 10.1]);
        let r = mann_whitney_u(&a, &b);
        assert_eq!(r.u, 28.0);
        assert!((r.p_value - 0.017_316_017_316_017_316).abs() < 1e-15);
    }

    #[test]
    fn ties_use_normal_approximation() {
        let a = s(&[1.0, 2.0, 2.0, 3.0, 4.0]);
        let b = s(&[2.0, 3.0, 5.0, 6.0, 6.0]);
        let r = mann_whitney_u(&a, &b);
        assert_eq!(r.method, MannWhitneyMethod::NormalApprox);
        // Pairs b > a: 2→1 (+ ties with two 2s: 1.0), 3→3 (+ tie 0.5), 5→5, 6→5, 6→5.
        assert_eq!(r.u, 1.0 + 1.0 + 3.0 + 0.5 + 5.0 + 5.0 + 5.0);
        // SciPy: mannwhitneyu(b, a, method="asymptotic") (tie + continuity corrections).
        assert!(
            (r.p_value - 0.110_492_024_055_668_02).abs() < 1e-14,
            "{r:?}"
        );
        let all_tied = mann_whitney_u(&s(&[1.0, 1.0]), &s(&[1.0, 1.0]));
        assert_eq!(all_tied.p_value, 1.0);
    }
}
