//! Property tests: invariants that must hold for any input, not just the worked examples.

use iolab_stats::compare::{bonferroni_adjust, holm_adjust, holm_reject};
use iolab_stats::{
    detect_outliers, mann_whitney_u, welch_t_test, Bootstrap, Decision, Level, Sample,
    SteadyStateRule, StoppingRule, StudentT, Summary, Welford,
};
use proptest::prelude::*;
use std::time::Duration;

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * a.abs().max(b.abs()).max(1.0)
}

fn values(min_len: usize) -> impl Strategy<Value = Vec<f64>> {
    prop::collection::vec(-1e6..1e6f64, min_len..40)
}

/// Integer-valued data (exact in binary, as are their quartiles), for transformations whose
/// exactness the property relies on.
fn int_values() -> impl Strategy<Value = Vec<f64>> {
    prop::collection::vec((-1000i32..1000).prop_map(f64::from), 2..30)
}

fn p_values() -> impl Strategy<Value = Vec<f64>> {
    prop::collection::vec(0.0..=1.0f64, 0..25)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    // ---------- Sample and Welford ----------

    #[test]
    fn sample_rejects_any_non_finite(mut v in values(2), i in any::<prop::sample::Index>(),
                                     bad in prop::sample::select(vec![f64::NAN, f64::INFINITY, f64::NEG_INFINITY])) {
        let k = i.index(v.len());
        v[k] = bad;
        prop_assert!(Sample::new(v).is_err());
    }

    #[test]
    fn welford_merge_equals_sequential(a in values(0), b in values(0)) {
        let mut merged = Welford::from_values(&a).unwrap();
        merged.merge(&Welford::from_values(&b).unwrap());
        let all: Vec<f64> = a.iter().chain(&b).copied().collect();
        let seq = Welford::from_values(&all).unwrap();
        prop_assert_eq!(merged.count(), seq.count());
        if let (Some(m1), Some(m2)) = (merged.mean(), seq.mean()) {
            prop_assert!(close(m1, m2, 1e-9), "{} vs {}", m1, m2);
        }
        if let (Some(v1), Some(v2)) = (merged.variance(), seq.variance()) {
            prop_assert!(close(v1, v2, 1e-8), "{} vs {}", v1, v2);
        }
        prop_assert_eq!(merged.min(), seq.min());
        prop_assert_eq!(merged.max(), seq.max());
    }

    #[test]
    fn welford_matches_two_pass(v in values(2)) {
        let s = Sample::new(v).unwrap();
        let w = s.welford();
        prop_assert!(close(w.mean().unwrap(), s.mean(), 1e-9));
        prop_assert!(close(w.variance().unwrap(), s.variance(), 1e-8));
    }

    // ---------- Student t ----------

    #[test]
    fn t_quantile_round_trips(df in 0.5..1e4f64, p in 1e-6..(1.0 - 1e-6)) {
        let t = StudentT::new(df).unwrap();
        let x = t.quantile(p).unwrap();
        let back = t.cdf(x);
        prop_assert!((back - p).abs() <= 1e-10 * p.min(1.0 - p), "df={} p={} back={}", df, p, back);
    }

    #[test]
    fn t_quantile_monotone_in_p_and_df(df in 1.0..500.0f64, extra in 0.0..500.0f64,
                                       p1 in 0.5..0.9999f64, dp in 0.0..0.5f64) {
        let p2 = (p1 + dp).min(0.9999);
        let t = StudentT::new(df).unwrap();
        prop_assert!(t.quantile(p1).unwrap() <= t.quantile(p2).unwrap());
        // Heavier tails at fewer degrees of freedom: upper quantiles shrink as df grows.
        let wider = StudentT::new(df + extra).unwrap();
        prop_assert!(wider.quantile(p1).unwrap() <= t.quantile(p1).unwrap() * (1.0 + 1e-12));
        // And the t quantile never drops below the normal one.
        let z = iolab_stats::normal_quantile(p1).unwrap();
        prop_assert!(t.quantile(p1).unwrap() >= z * (1.0 - 1e-12));
    }

    // ---------- Summary / interval ----------

    #[test]
    fn interval_is_affine_equivariant(v in values(2), shift in -1e3..1e3f64, scale in 0.01..100.0f64) {
        let s = Sample::new(v.clone()).unwrap();
        let moved = Sample::new(v.iter().map(|x| shift + scale * x).collect()).unwrap();
        let a = Summary::new(&s, Level::P95).ci;
        let b = Summary::new(&moved, Level::P95).ci;
        let tol = 1e-7 * (1.0 + scale) * (1.0 + a.lower.abs().max(a.upper.abs()));
        prop_assert!((b.lower - (shift + scale * a.lower)).abs() <= tol);
        prop_assert!((b.upper - (shift + scale * a.upper)).abs() <= tol);
        prop_assert!(a.contains(a.estimate));
    }

    #[test]
    fn higher_level_gives_wider_interval(v in values(2), l1 in 0.5..0.98f64, dl in 0.001..0.019f64) {
        let s = Sample::new(v).unwrap();
        let narrow = Summary::new(&s, Level::new(l1).unwrap()).ci;
        let wide = Summary::new(&s, Level::new(l1 + dl).unwrap()).ci;
        prop_assert!(wide.half_width() >= narrow.half_width());
    }

    // ---------- Stopping rule ----------

    #[test]
    fn stopping_rule_is_consistent(v in prop::collection::vec(1.0..1e4f64, 1..30),
                                   target in 0.001..0.5f64, max in 3u64..25) {
        let rule = StoppingRule { min: 3, max, target, level: Level::P95 };
        let acc = Welford::from_values(&v).unwrap();
        let n = acc.count();
        match rule.decide(&acc, Duration::ZERO, None) {
            Decision::Continue => {
                prop_assert!(n < max);
                if n >= 3 {
                    prop_assert!(acc.relative_half_width(Level::P95).unwrap() > target);
                }
            }
            Decision::Converged { runs, rel_half_width } => {
                prop_assert_eq!(runs, n);
                prop_assert!(n >= 3 && rel_half_width <= target);
                // A looser target converges too.
                let looser = StoppingRule { target: target * 2.0, ..rule };
                let converged = matches!(
                    looser.decide(&acc, Duration::ZERO, None),
                    Decision::Converged { .. }
                );
                prop_assert!(converged);
            }
            Decision::NotConverged { runs, .. } => prop_assert!(runs >= max),
        }
    }

    // ---------- Comparisons ----------

    #[test]
    fn welch_is_antisymmetric(a in values(2), b in values(2)) {
        let (sa, sb) = (Sample::new(a).unwrap(), Sample::new(b).unwrap());
        let ab = welch_t_test(&sa, &sb, Level::P95);
        let ba = welch_t_test(&sb, &sa, Level::P95);
        prop_assert!(close(ab.t, -ba.t, 1e-12) || (ab.t.is_infinite() && ab.t == -ba.t));
        prop_assert!(close(ab.df, ba.df, 1e-12));
        prop_assert!(close(ab.p_value, ba.p_value, 1e-12));
        prop_assert!((0.0..=1.0).contains(&ab.p_value));
    }

    #[test]
    fn mann_whitney_is_symmetric(a in int_values(), b in int_values()) {
        let (sa, sb) = (Sample::new(a).unwrap(), Sample::new(b).unwrap());
        let ab = mann_whitney_u(&sa, &sb);
        let ba = mann_whitney_u(&sb, &sa);
        let nn = (sa.len() * sb.len()) as f64;
        prop_assert_eq!(ab.u + ba.u, nn);
        prop_assert!(close(ab.p_value, ba.p_value, 1e-12), "{:?} vs {:?}", ab, ba);
        prop_assert!((0.0..=1.0).contains(&ab.p_value));
    }

    /// Holm sits between Bonferroni and no correction: it rejects everything Bonferroni
    /// rejects and nothing an unadjusted test would not.
    #[test]
    fn holm_between_bonferroni_and_unadjusted(p in p_values(), alpha in 0.001..0.2f64) {
        let holm = holm_reject(&p, alpha).unwrap();
        let bonf = bonferroni_adjust(&p).unwrap();
        for i in 0..p.len() {
            if bonf[i] <= alpha {
                prop_assert!(holm[i], "Bonferroni rejects #{} but Holm does not", i);
            }
            if holm[i] {
                prop_assert!(p[i] <= alpha, "Holm rejects #{} with raw p {} > α", i, p[i]);
            }
        }
    }

    #[test]
    fn holm_adjusted_values_are_monotone(p in p_values()) {
        let adj = holm_adjust(&p).unwrap();
        for i in 0..p.len() {
            prop_assert!(adj[i] >= p[i] && adj[i] <= 1.0);
            for j in 0..p.len() {
                if p[i] <= p[j] {
                    prop_assert!(adj[i] <= adj[j], "order broken at {} {}", i, j);
                }
            }
        }
    }

    #[test]
    fn holm_rejects_more_when_a_p_value_shrinks(p in prop::collection::vec(0.0..=1.0f64, 1..25),
                                               k in any::<prop::sample::Index>(),
                                               factor in 0.0..1.0f64, alpha in 0.001..0.2f64) {
        let before = holm_reject(&p, alpha).unwrap();
        let mut q = p.clone();
        let k = k.index(q.len());
        q[k] *= factor;
        let after = holm_reject(&q, alpha).unwrap();
        for i in 0..p.len() {
            prop_assert!(!before[i] || after[i], "rejection #{} lost", i);
        }
    }

    // ---------- Outliers, steady state, bootstrap ----------

    #[test]
    fn outlier_flags_are_affine_invariant(v in int_values(), shift in -1000i32..1000, k in -4i32..5) {
        let scale = 2f64.powi(k);
        let s = Sample::new(v.clone()).unwrap();
        let moved = Sample::new(v.iter().map(|x| f64::from(shift) + scale * x).collect()).unwrap();
        let a = detect_outliers(&s);
        let b = detect_outliers(&moved);
        prop_assert_eq!(a.flags.len(), s.len());
        prop_assert_eq!(a.flags, b.flags);
    }

    #[test]
    fn steady_verdicts_are_scale_invariant(series in prop::collection::vec(1.0..1000.0f64, 0..30), k in -4i32..5) {
        let scale = 2f64.powi(k);
        let rule = SteadyStateRule::default();
        let scaled: Vec<f64> = series.iter().map(|x| x * scale).collect();
        let a: Vec<bool> = rule.windows(&series).map(|w| w.is_steady()).collect();
        let b: Vec<bool> = rule.windows(&scaled).map(|w| w.is_steady()).collect();
        prop_assert_eq!(a.len(), series.len().saturating_sub(4));
        prop_assert_eq!(a, b);
    }

    #[test]
    fn constant_series_is_steady_at_once(level in 1.0..1e6f64, len in 5usize..20) {
        let w = SteadyStateRule::default().first_steady_window(&vec![level; len]).unwrap();
        prop_assert_eq!(w.start, 0);
    }

    #[test]
    fn bootstrap_is_deterministic_and_within_range(v in prop::collection::vec(1.0..100.0f64, 2..15), seed in any::<u64>()) {
        let s = Sample::new(v).unwrap();
        let b = Bootstrap { resamples: 200, ..Bootstrap::new(seed) };
        let ci = b.mean_ci(&s).unwrap();
        prop_assert_eq!(ci, b.mean_ci(&s).unwrap());
        prop_assert!(ci.lower <= ci.upper);
        prop_assert!(ci.lower >= s.min() - 1e-9 && ci.upper <= s.max() + 1e-9);
    }
}
