//! A validated sample of repeated measurements.

use crate::quantile::{median_sorted, quantile_sorted, sorted_copy};
use crate::{Result, StatsError, Welford};

/// At least two finite values: the smallest input for which a variance, and so a confidence
/// interval, exists (criterion's `Sample` holds the same invariant). Construction checks it
/// once, so the statistics built on a `Sample` never meet NaN or a single point.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    values: Vec<f64>,
}

impl Sample {
    /// The fewest values a sample may hold.
    pub const MIN_LEN: usize = 2;

    /// The largest magnitude a value may have: the fourth powers of values this size (a
    /// variance squared, as in Welch's degrees of freedom), summed over millions of runs,
    /// still fit a double, so no statistic overflows to ∞ and then to NaN. No measurement
    /// comes near it; a hostile or corrupt database can.
    pub const MAX_MAGNITUDE: f64 = 1e75;

    /// A sample from owned values; fails with [`StatsError::TooFewValues`],
    /// [`StatsError::NonFinite`] or [`StatsError::TooLarge`].
    pub fn new(values: Vec<f64>) -> Result<Self> {
        if values.len() < Self::MIN_LEN {
            return Err(StatsError::TooFewValues {
                needed: Self::MIN_LEN,
                got: values.len(),
            });
        }
        if let Some((index, &value)) = values.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            return Err(StatsError::NonFinite { index, value });
        }
        if let Some((index, &value)) = values
            .iter()
            .enumerate()
            .find(|(_, v)| v.abs() > Self::MAX_MAGNITUDE)
        {
            return Err(StatsError::TooLarge { index, value });
        }
        Ok(Sample { values })
    }

    /// A sample from borrowed values (copied).
    pub fn from_slice(values: &[f64]) -> Result<Self> {
        Self::new(values.to_vec())
    }

    /// The values in their original (run) order.
    pub fn values(&self) -> &[f64] {
        &self.values
    }

    /// Number of values (≥ 2).
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Always false: a sample holds at least two values.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Arithmetic mean.
    pub fn mean(&self) -> f64 {
        self.values.iter().sum::<f64>() / self.len() as f64
    }

    /// Unbiased variance s² = Σ(x − x̄)²/(n − 1) (Bessel's correction), two-pass for accuracy.
    pub fn variance(&self) -> f64 {
        let m = self.mean();
        let ss: f64 = self.values.iter().map(|x| (x - m) * (x - m)).sum();
        ss / (self.len() - 1) as f64
    }

    /// Sample standard deviation s (n − 1 denominator).
    pub fn std_dev(&self) -> f64 {
        self.variance().sqrt()
    }

    /// Smallest value.
    pub fn min(&self) -> f64 {
        self.values.iter().copied().fold(f64::INFINITY, f64::min)
    }

    /// Largest value.
    pub fn max(&self) -> f64 {
        self.values
            .iter()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max)
    }

    /// The values sorted ascending.
    pub fn sorted(&self) -> Vec<f64> {
        sorted_copy(&self.values)
    }

    /// Median.
    pub fn median(&self) -> f64 {
        median_sorted(&self.sorted())
    }

    /// Type-7 quantile (see [`crate::quantile`]), p clamped to [0, 1].
    pub fn quantile(&self, p: f64) -> f64 {
        quantile_sorted(&self.sorted(), p)
    }

    /// Running sums of the same values.
    pub fn welford(&self) -> Welford {
        let mut w = Welford::new();
        for &x in &self.values {
            // Values are finite by construction, so this cannot fail.
            let _ = w.push(x);
        }
        w
    }

    /// The natural logarithms of the values, for log-scale (multiplicative) analysis;
    /// fails with [`StatsError::NonPositive`] if a value is ≤ 0.
    pub fn ln(&self) -> Result<Sample> {
        if let Some((index, &value)) = self.values.iter().enumerate().find(|(_, v)| **v <= 0.0) {
            return Err(StatsError::NonPositive { index, value });
        }
        Ok(Sample {
            values: self.values.iter().map(|v| v.ln()).collect(),
        })
    }
}

impl TryFrom<Vec<f64>> for Sample {
    type Error = StatsError;
    fn try_from(values: Vec<f64>) -> Result<Self> {
        Sample::new(values)
    }
}

impl TryFrom<&[f64]> for Sample {
    type Error = StatsError;
    fn try_from(values: &[f64]) -> Result<Self> {
        Sample::from_slice(values)
    }
}

impl AsRef<[f64]> for Sample {
    fn as_ref(&self) -> &[f64] {
        &self.values
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found with a hostile results database: 1e308 is finite, but its variance is ∞ and
    /// Welch's degrees of freedom ∞/∞ = NaN, which panicked `iolab compare`.
    #[test]
    fn values_whose_squares_overflow_are_refused() {
        let e = Sample::new(vec![1.0, 1e308, 2.0]).unwrap_err();
        assert_eq!(
            e,
            StatsError::TooLarge {
                index: 1,
                value: 1e308
            }
        );
        assert!(e.to_string().contains("too large"), "{e}");
        let e = Sample::new(vec![-1e76, 1.0]).unwrap_err();
        assert!(matches!(e, StatsError::TooLarge { index: 0, .. }), "{e}");
        // At the limit everything stays finite, Welch's test included.
        let m = Sample::MAX_MAGNITUDE;
        let (a, b) = (
            Sample::new(vec![m, -m, m]).unwrap(),
            Sample::new(vec![-m, m, 0.0]).unwrap(),
        );
        assert!(a.variance().is_finite());
        let w = crate::welch_t_test(&a, &b, crate::Level::P95);
        assert!(w.df.is_finite() && w.df > 0.0, "{w:?}");
    }

    #[test]
    fn rejects_too_few_and_non_finite() {
        assert_eq!(
            Sample::new(vec![]),
            Err(StatsError::TooFewValues { needed: 2, got: 0 })
        );
        assert_eq!(
            Sample::new(vec![1.0]),
            Err(StatsError::TooFewValues { needed: 2, got: 1 })
        );
        assert!(matches!(
            Sample::new(vec![1.0, f64::NAN, 2.0]),
            Err(StatsError::NonFinite { index: 1, .. })
        ));
        assert!(matches!(
            Sample::from_slice(&[1.0, 2.0, f64::NEG_INFINITY]),
            Err(StatsError::NonFinite { index: 2, .. })
        ));
    }

    #[test]
    fn basic_statistics() {
        let s = Sample::try_from(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0][..]).unwrap();
        assert_eq!(s.len(), 8);
        assert_eq!(s.mean(), 5.0);
        assert!((s.variance() - 32.0 / 7.0).abs() < 1e-14);
        assert_eq!(s.median(), 4.5);
        assert_eq!(s.min(), 2.0);
        assert_eq!(s.max(), 9.0);
        let w = s.welford();
        assert_eq!(w.count(), 8);
        assert!((w.variance().unwrap() - s.variance()).abs() < 1e-13);
    }

    #[test]
    fn log_needs_positive_values() {
        let s = Sample::new(vec![1.0, 0.0]).unwrap();
        assert!(matches!(
            s.ln(),
            Err(StatsError::NonPositive { index: 1, .. })
        ));
        let s = Sample::new(vec![1.0, std::f64::consts::E]).unwrap();
        assert_eq!(s.ln().unwrap().values(), &[0.0, 1.0]);
    }
}
