//! Sample quantiles.
//!
//! One definition is used everywhere in the crate: Hyndman & Fan (1996) type 7, linear
//! interpolation between order statistics at h = (n − 1)·p. It is the default of R's
//! `quantile`, NumPy's `percentile` and spreadsheets' `QUARTILE.INC`, so a user can reproduce
//! every quartile and percentile iolab reports. (Tukey's 1977 hinges differ slightly for small
//! odd n; see [`crate::outliers`].)

/// Type-7 quantile of already sorted, non-empty data, for p in [0, 1] (clamped).
///
/// # Panics
/// If `sorted` is empty.
pub fn quantile_sorted(sorted: &[f64], p: f64) -> f64 {
    assert!(!sorted.is_empty(), "quantile of an empty slice");
    let n = sorted.len();
    let h = (n - 1) as f64 * p.clamp(0.0, 1.0);
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(n - 1);
    let frac = h - lo as f64;
    if frac == 0.0 {
        sorted[lo]
    } else {
        sorted[lo] + frac * (sorted[hi] - sorted[lo])
    }
}

/// Median of already sorted, non-empty data (the type-7 quantile at ½: the middle value, or the
/// mean of the two middle values).
///
/// # Panics
/// If `sorted` is empty.
pub fn median_sorted(sorted: &[f64]) -> f64 {
    assert!(!sorted.is_empty(), "median of an empty slice");
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        0.5 * (sorted[n / 2 - 1] + sorted[n / 2])
    }
}

/// A sorted copy (total order; callers pass finite values).
pub(crate) fn sorted_copy(values: &[f64]) -> Vec<f64> {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type7_matches_r() {
        // R: quantile(c(1, 2, 3, 4, 10), c(0, .25, .5, .75, 1)) → 1 2 3 4 10
        let x = [1.0, 2.0, 3.0, 4.0, 10.0];
        assert_eq!(quantile_sorted(&x, 0.25), 2.0);
        assert_eq!(quantile_sorted(&x, 0.75), 4.0);
        assert_eq!(quantile_sorted(&x, 0.0), 1.0);
        assert_eq!(quantile_sorted(&x, 1.0), 10.0);
        // R: quantile(1:4, c(.25, .75)) → 1.75 3.25
        let y = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(quantile_sorted(&y, 0.25), 1.75);
        assert_eq!(quantile_sorted(&y, 0.75), 3.25);
        assert_eq!(median_sorted(&y), 2.5);
        assert_eq!(median_sorted(&x), 3.0);
        assert_eq!(quantile_sorted(&[7.0], 0.3), 7.0);
    }
}
