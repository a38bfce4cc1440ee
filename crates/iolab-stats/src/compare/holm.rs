//! Family-wise error control for many comparisons.
//!
//! Holm, "A simple sequentially rejective multiple test procedure", Scand. J. Statist. 6(2),
//! 1979: sort the m p-values, compare the j-th smallest with α/(m − j + 1), and stop at the
//! first that fails. It controls the family-wise error rate at α under any dependence, like
//! Bonferroni, but rejects at least as much — so it is the default when an experiment compares
//! many configurations against a baseline.

use crate::{Result, StatsError};

fn check(p_values: &[f64]) -> Result<()> {
    match p_values.iter().find(|p| !(0.0..=1.0).contains(*p)) {
        Some(&p) => Err(StatsError::InvalidProbability(p)),
        None => Ok(()),
    }
}

/// Holm-adjusted p-values, in the input order: adjusted p_(j) = max_{k ≤ j} min(1,
/// (m − k + 1)·p_(k)) over the ascending order. Reject H_i at level α iff adjusted p_i ≤ α.
/// Fails on a value outside [0, 1] (or NaN).
pub fn holm_adjust(p_values: &[f64]) -> Result<Vec<f64>> {
    check(p_values)?;
    let m = p_values.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&i, &j| p_values[i].total_cmp(&p_values[j]));
    let mut adjusted = vec![0.0; m];
    let mut running_max: f64 = 0.0;
    for (rank, &i) in order.iter().enumerate() {
        let scaled = ((m - rank) as f64 * p_values[i]).min(1.0);
        running_max = running_max.max(scaled);
        adjusted[i] = running_max;
    }
    Ok(adjusted)
}

/// Bonferroni-adjusted p-values min(1, m·p): the single-step procedure Holm improves on.
pub fn bonferroni_adjust(p_values: &[f64]) -> Result<Vec<f64>> {
    check(p_values)?;
    let m = p_values.len() as f64;
    Ok(p_values.iter().map(|p| (m * p).min(1.0)).collect())
}

/// Which hypotheses Holm's procedure rejects at family-wise level `alpha`.
pub fn holm_reject(p_values: &[f64], alpha: f64) -> Result<Vec<bool>> {
    Ok(holm_adjust(p_values)?
        .into_iter()
        .map(|p| p <= alpha)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_r_p_adjust() {
        // R: p.adjust(c(0.01, 0.04, 0.03, 0.005), "holm") → 0.03 0.06 0.06 0.02
        let adj = holm_adjust(&[0.01, 0.04, 0.03, 0.005]).unwrap();
        let want = [0.03, 0.06, 0.06, 0.02];
        for (a, w) in adj.iter().zip(want) {
            assert!((a - w).abs() < 1e-15, "{adj:?}");
        }
        assert_eq!(
            holm_reject(&[0.01, 0.04, 0.03, 0.005], 0.05).unwrap(),
            vec![true, false, false, true]
        );
        let bonf = bonferroni_adjust(&[0.01, 0.04, 0.03, 0.005]).unwrap();
        assert_eq!(bonf, vec![0.04, 0.16, 0.12, 0.02]);
    }

    #[test]
    fn edge_cases() {
        assert!(holm_adjust(&[]).unwrap().is_empty());
        assert_eq!(holm_adjust(&[0.3]).unwrap(), vec![0.3]);
        assert_eq!(holm_adjust(&[0.9, 0.8]).unwrap(), vec![1.0, 1.0]);
        assert!(holm_adjust(&[0.1, f64::NAN]).is_err());
        assert!(holm_adjust(&[1.5]).is_err());
    }
}
