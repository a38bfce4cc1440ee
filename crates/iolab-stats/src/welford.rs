//! Online accumulation of count, mean and sum of squared deviations.
//!
//! Welford, "Note on a method for calculating corrected sums of squares and products",
//! Technometrics 4(3), 1962: updating the mean and M2 = Σ(x − x̄)² one value at a time avoids
//! the catastrophic cancellation of the textbook Σx² − (Σx)²/n, which matters for throughputs
//! like 1.0e9 ± 1e3. The stopping rule needs the interval after every run, so the sums are kept
//! rather than recomputed.

use crate::summary::t_interval;
use crate::{Interval, Level, Result, StatsError};

/// Running count, mean, M2, min and max of finite values.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Welford {
    count: u64,
    mean: f64,
    m2: f64,
    min: f64,
    max: f64,
}

impl Welford {
    /// An empty accumulator.
    pub fn new() -> Self {
        Self::default()
    }

    /// An accumulator over `values`; fails on the first non-finite value.
    pub fn from_values(values: &[f64]) -> Result<Self> {
        let mut w = Self::new();
        for (index, &value) in values.iter().enumerate() {
            w.push(value)
                .map_err(|_| StatsError::NonFinite { index, value })?;
        }
        Ok(w)
    }

    /// Adds one value. A NaN or infinite value is refused ([`StatsError::NonFinite`] with
    /// index = the count so far) and leaves the accumulator unchanged.
    pub fn push(&mut self, x: f64) -> Result<()> {
        if !x.is_finite() {
            return Err(StatsError::NonFinite {
                index: self.count as usize,
                value: x,
            });
        }
        self.count += 1;
        if self.count == 1 {
            self.mean = x;
            self.m2 = 0.0;
            self.min = x;
            self.max = x;
            return Ok(());
        }
        let delta = x - self.mean;
        self.mean += delta / self.count as f64;
        // δ·(x − new mean) = δ²(n − 1)/n ≥ 0: M2 never decreases.
        self.m2 += delta * (x - self.mean);
        self.min = self.min.min(x);
        self.max = self.max.max(x);
        Ok(())
    }

    /// Combines two accumulators as if every value had been pushed into one.
    ///
    /// Chan, Golub & LeVeque, "Updating formulae and a pairwise algorithm for computing sample
    /// variances" (Stanford CS tech. report STAN-CS-79-773, 1979): with δ = x̄_b − x̄_a,
    /// M2 = M2_a + M2_b + δ²·n_a·n_b/n. Lets per-thread or per-host sums merge exactly.
    pub fn merge(&mut self, other: &Welford) {
        if other.count == 0 {
            return;
        }
        if self.count == 0 {
            *self = *other;
            return;
        }
        let na = self.count as f64;
        let nb = other.count as f64;
        let n = na + nb;
        let delta = other.mean - self.mean;
        self.mean += delta * nb / n;
        self.m2 += other.m2 + delta * delta * na * nb / n;
        self.count += other.count;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }

    /// Number of values pushed.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Mean, once a value was pushed.
    pub fn mean(&self) -> Option<f64> {
        (self.count > 0).then_some(self.mean)
    }

    /// Unbiased variance M2/(n − 1), once two values were pushed.
    pub fn variance(&self) -> Option<f64> {
        (self.count > 1).then(|| self.m2.max(0.0) / (self.count - 1) as f64)
    }

    /// Sample standard deviation (n − 1 denominator).
    pub fn std_dev(&self) -> Option<f64> {
        self.variance().map(f64::sqrt)
    }

    /// Standard error of the mean s/√n.
    pub fn std_error(&self) -> Option<f64> {
        self.std_dev().map(|s| s / (self.count as f64).sqrt())
    }

    /// Coefficient of variation s/|x̄|; `None` until two values, or when the mean is 0.
    pub fn cv(&self) -> Option<f64> {
        let s = self.std_dev()?;
        (self.mean != 0.0).then(|| s / self.mean.abs())
    }

    /// Smallest value pushed.
    pub fn min(&self) -> Option<f64> {
        (self.count > 0).then_some(self.min)
    }

    /// Largest value pushed.
    pub fn max(&self) -> Option<f64> {
        (self.count > 0).then_some(self.max)
    }

    /// Student-t confidence interval of the mean (see [`t_interval`]), once two values were
    /// pushed.
    pub fn confidence_interval(&self, level: Level) -> Option<Interval> {
        let s = self.std_dev()?;
        t_interval(self.mean, s, self.count, level).ok()
    }

    /// Half-width of the confidence interval relative to |mean|: the quantity the stopping
    /// rule compares with its target.
    pub fn relative_half_width(&self, level: Level) -> Option<f64> {
        self.confidence_interval(level)
            .map(|ci| ci.relative_half_width())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_and_single() {
        let mut w = Welford::new();
        assert_eq!(w.count(), 0);
        assert_eq!(w.mean(), None);
        assert_eq!(w.variance(), None);
        w.push(3.0).unwrap();
        assert_eq!(w.mean(), Some(3.0));
        assert_eq!(w.variance(), None);
        assert_eq!(w.confidence_interval(Level::P95), None);
        assert_eq!((w.min(), w.max()), (Some(3.0), Some(3.0)));
    }

    #[test]
    fn rejects_non_finite_without_changing_state() {
        let mut w = Welford::from_values(&[1.0, 2.0]).unwrap();
        let before = w;
        assert!(matches!(
            w.push(f64::NAN),
            Err(StatsError::NonFinite { index: 2, value }) if value.is_nan()
        ));
        assert!(w.push(f64::INFINITY).is_err());
        assert_eq!(w, before);
        assert!(matches!(
            Welford::from_values(&[1.0, f64::NAN]),
            Err(StatsError::NonFinite { index: 1, .. })
        ));
    }

    #[test]
    fn known_values() {
        let w = Welford::from_values(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert_eq!(w.count(), 8);
        assert_eq!(w.mean(), Some(5.0));
        assert!((w.variance().unwrap() - 32.0 / 7.0).abs() < 1e-14);
        assert_eq!((w.min(), w.max()), (Some(2.0), Some(9.0)));
        assert!((w.cv().unwrap() - (32.0f64 / 7.0).sqrt() / 5.0).abs() < 1e-15);
    }

    #[test]
    fn numerically_stable_with_large_offset() {
        // The textbook formula loses every digit here; Welford keeps them.
        let base = 1e9;
        let w = Welford::from_values(&[base + 4.0, base + 7.0, base + 13.0, base + 16.0]).unwrap();
        assert!((w.variance().unwrap() - 30.0).abs() < 1e-6);
    }

    #[test]
    fn merge_equals_sequential() {
        let xs = [1.5, 2.5, 10.0, -3.0, 4.25, 8.0, 0.5];
        let all = Welford::from_values(&xs).unwrap();
        for split in 0..=xs.len() {
            let mut a = Welford::from_values(&xs[..split]).unwrap();
            let b = Welford::from_values(&xs[split..]).unwrap();
            a.merge(&b);
            assert_eq!(a.count(), all.count());
            assert!((a.mean().unwrap() - all.mean().unwrap()).abs() < 1e-14);
            assert!((a.variance().unwrap() - all.variance().unwrap()).abs() < 1e-12);
            assert_eq!((a.min(), a.max()), (all.min(), all.max()));
        }
    }
}
