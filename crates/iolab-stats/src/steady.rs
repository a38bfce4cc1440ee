//! Steady state inside a run.
//!
//! SNIA Solid State Storage Performance Test Specification (SSS PTS) 2.0, definition of Steady State:
//! over a measurement window of 5 consecutive rounds, (1) the data excursion
//! max(y) − min(y) is at most 20% of the window's average, and (2) the excursion of the
//! least-squares line over the window, |slope|·(window − 1), is at most 10% of the average.
//! Condition 1 bounds the noise, condition 2 the trend: a warming-up or degrading device fails
//! the second even when each interval looks close to its neighbours. iolab applies it to
//! per-interval throughput (default 1 s buckets) for warm-up detection and the `not-steady`
//! finding.

use crate::{Result, StatsError};

/// The rule's parameters; [`Default`] is SNIA SSS PTS 2.0 (5, 20%, 10%).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SteadyStateRule {
    /// Consecutive values per window (≥ 2).
    pub window: usize,
    /// Largest allowed max − min, as a fraction of the window average.
    pub max_range: f64,
    /// Largest allowed least-squares excursion |slope|·(window − 1), as a fraction of the
    /// window average.
    pub max_excursion: f64,
}

impl Default for SteadyStateRule {
    fn default() -> Self {
        SteadyStateRule {
            window: 5,
            max_range: 0.20,
            max_excursion: 0.10,
        }
    }
}

/// The numbers behind one window's verdict (the evidence a finding shows).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WindowCheck {
    /// Index of the window's first value in the series.
    pub start: usize,
    /// Number of values in the window.
    pub len: usize,
    /// Mean of the window.
    pub average: f64,
    /// max − min.
    pub range: f64,
    /// Least-squares slope per interval.
    pub slope: f64,
    /// |slope|·(len − 1): how far the fitted line moves across the window.
    pub excursion: f64,
    /// range ≤ max_range·|average|.
    pub range_ok: bool,
    /// excursion ≤ max_excursion·|average|.
    pub excursion_ok: bool,
}

impl WindowCheck {
    /// Both conditions hold.
    pub fn is_steady(&self) -> bool {
        self.range_ok && self.excursion_ok
    }
}

impl SteadyStateRule {
    /// Checks the fields: `window ≥ 2`, fractions finite and ≥ 0.
    pub fn validate(&self) -> Result<()> {
        if self.window < 2 {
            return Err(StatsError::InvalidParameter {
                name: "window",
                reason: format!("a slope needs at least 2 values, got {}", self.window),
            });
        }
        for (name, v) in [
            ("max_range", self.max_range),
            ("max_excursion", self.max_excursion),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(StatsError::InvalidParameter {
                    name,
                    reason: format!("must be a non-negative fraction, got {v}"),
                });
            }
        }
        Ok(())
    }

    /// Evaluates one window (all of `values`, which should hold `window` values; any length
    /// ≥ 2 is accepted). `start` is recorded in the result. A window holding a non-finite value
    /// is never steady.
    pub fn check(&self, start: usize, values: &[f64]) -> Result<WindowCheck> {
        let n = values.len();
        if n < 2 {
            return Err(StatsError::TooFewValues { needed: 2, got: n });
        }
        let nf = n as f64;
        let average = values.iter().sum::<f64>() / nf;
        let (min, max) = values
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
                (lo.min(v), hi.max(v))
            });
        let range = max - min;
        // Least squares against x = 0, 1, …, n − 1 (centred at x̄ = (n − 1)/2).
        let x_mean = (nf - 1.0) / 2.0;
        let (sxy, sxx) = values
            .iter()
            .enumerate()
            .fold((0.0, 0.0), |(sxy, sxx), (i, &y)| {
                let dx = i as f64 - x_mean;
                (sxy + dx * (y - average), sxx + dx * dx)
            });
        let slope = sxy / sxx;
        let excursion = slope.abs() * (nf - 1.0);
        let finite = values.iter().all(|v| v.is_finite());
        Ok(WindowCheck {
            start,
            len: n,
            average,
            range,
            slope,
            excursion,
            range_ok: finite && range <= self.max_range * average.abs(),
            excursion_ok: finite && excursion <= self.max_excursion * average.abs(),
        })
    }

    /// Every full window of the series, in order (empty if the series is shorter than one
    /// window or the rule is invalid).
    pub fn windows<'a>(&'a self, series: &'a [f64]) -> impl Iterator<Item = WindowCheck> + 'a {
        let ok = self.validate().is_ok();
        series
            .windows(self.window.max(2))
            .enumerate()
            .filter(move |_| ok)
            .filter_map(move |(start, w)| self.check(start, w).ok())
    }

    /// The first steady window of the series: where a measurement window may begin after
    /// warm-up. `None` means the series never reached steady state.
    pub fn first_steady_window(&self, series: &[f64]) -> Option<WindowCheck> {
        self.windows(series).find(WindowCheck::is_steady)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ramp_then_flat_finds_the_flat_part() {
        // Warm-up ramp, then noise of ±2 around 100.
        let series = [
            20.0, 40.0, 60.0, 80.0, 95.0, 101.0, 99.0, 102.0, 98.0, 100.0, 101.0,
        ];
        let rule = SteadyStateRule::default();
        let w = rule.first_steady_window(&series).unwrap();
        // Window starting at 4: 95 101 99 102 98 → avg 99, range 7 ≤ 19.8,
        // slope 7/10 = 0.7 → excursion 2.8 ≤ 9.9.
        assert_eq!(w.start, 4);
        assert_eq!(w.len, 5);
        assert!((w.average - 99.0).abs() < 1e-12);
        assert_eq!(w.range, 7.0);
        assert!((w.slope - 0.7).abs() < 1e-12);
        assert!((w.excursion - 2.8).abs() < 1e-12);
        // Window 3 (80 95 101 99 102): range 22 > 19.08 fails.
        let w3 = rule.windows(&series).nth(3).unwrap();
        assert!(!w3.range_ok);
    }

    #[test]
    fn slow_trend_fails_the_slope_condition_only() {
        // +3% per interval: range 12 ≤ 20% of ~106, but excursion 12 > 10%.
        let series: Vec<f64> = (0..5).map(|i| 100.0 + 3.0 * i as f64).collect();
        let c = SteadyStateRule::default().check(0, &series).unwrap();
        assert!(c.range_ok);
        assert!(!c.excursion_ok);
        assert!(!c.is_steady());
        assert!((c.slope - 3.0).abs() < 1e-12);
    }

    #[test]
    fn short_or_bad_series() {
        let rule = SteadyStateRule::default();
        assert!(rule.first_steady_window(&[1.0, 1.0, 1.0]).is_none());
        assert!(rule.check(0, &[1.0]).is_err());
        let with_nan = [100.0, 100.0, f64::NAN, 100.0, 100.0];
        assert!(rule.first_steady_window(&with_nan).is_none());
        let bad = SteadyStateRule { window: 1, ..rule };
        assert!(bad.validate().is_err());
        assert_eq!(bad.windows(&[1.0; 10]).count(), 0);
        assert_eq!(rule.windows(&[1.0; 10]).count(), 6);
    }
}
