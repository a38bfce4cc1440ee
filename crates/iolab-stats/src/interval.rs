//! Confidence levels and intervals.

use crate::{Result, StatsError};

/// A confidence level, strictly between 0 and 1 (0.95 means a 95% interval).
///
/// Holding the invariant in the type means every interval routine can compute
/// α = 1 − level and the quantile 1 − α/2 without checking again.
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
pub struct Level(f64);

impl Level {
    /// 90%.
    pub const P90: Level = Level(0.90);
    /// 95%, the default of the measurement spec.
    pub const P95: Level = Level(0.95);
    /// 99%.
    pub const P99: Level = Level(0.99);

    /// A level in (0, 1); anything else (including NaN) is [`StatsError::InvalidLevel`].
    pub fn new(level: f64) -> Result<Self> {
        if level > 0.0 && level < 1.0 {
            Ok(Level(level))
        } else {
            Err(StatsError::InvalidLevel(level))
        }
    }

    /// The level as a number, e.g. 0.95.
    pub fn get(self) -> f64 {
        self.0
    }

    /// α = 1 − level, the two-sided error rate.
    pub fn alpha(self) -> f64 {
        1.0 - self.0
    }

    /// 1 − α/2: the cumulative probability of the upper critical value of a two-sided interval.
    pub fn upper_probability(self) -> f64 {
        1.0 - self.alpha() / 2.0
    }
}

impl Default for Level {
    fn default() -> Self {
        Level::P95
    }
}

impl TryFrom<f64> for Level {
    type Error = StatsError;
    fn try_from(level: f64) -> Result<Self> {
        Level::new(level)
    }
}

/// A point estimate with a two-sided confidence interval `[lower, upper]`.
///
/// Intervals need not be symmetric (Fieller's interval for a ratio is not) and may be unbounded
/// (`lower = −∞`, `upper = +∞`) when the data cannot bound the quantity at this level.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Interval {
    /// The point estimate (e.g. the sample mean).
    pub estimate: f64,
    /// Lower bound.
    pub lower: f64,
    /// Upper bound.
    pub upper: f64,
    /// Confidence level of the interval.
    pub level: Level,
}

impl Interval {
    /// Whether `x` lies in the closed interval.
    pub fn contains(&self, x: f64) -> bool {
        self.lower <= x && x <= self.upper
    }

    /// Half the width, `(upper − lower) / 2` (+∞ when unbounded).
    pub fn half_width(&self) -> f64 {
        (self.upper - self.lower) / 2.0
    }

    /// Half-width relative to |estimate|: the precision the stopping rule targets.
    ///
    /// 0 when the interval has zero width (even at a zero estimate: nothing varies), +∞ when the
    /// estimate is zero and the interval is not.
    pub fn relative_half_width(&self) -> f64 {
        let hw = self.half_width();
        if hw == 0.0 {
            0.0
        } else {
            hw / self.estimate.abs()
        }
    }

    /// Whether both bounds are finite.
    pub fn is_bounded(&self) -> bool {
        self.lower.is_finite() && self.upper.is_finite()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn level_rejects_out_of_range() {
        for bad in [0.0, 1.0, -0.5, 1.5, f64::NAN, f64::INFINITY] {
            assert!(matches!(Level::new(bad), Err(StatsError::InvalidLevel(_))));
        }
        let l = Level::new(0.95).unwrap();
        assert!((l.alpha() - 0.05).abs() < 1e-15);
        assert!((l.upper_probability() - 0.975).abs() < 1e-15);
        assert_eq!(Level::default(), Level::P95);
    }

    #[test]
    fn relative_half_width_edges() {
        let i = Interval {
            estimate: 10.0,
            lower: 9.0,
            upper: 11.0,
            level: Level::P95,
        };
        assert_eq!(i.half_width(), 1.0);
        assert_eq!(i.relative_half_width(), 0.1);
        assert!(i.contains(9.0) && i.contains(11.0) && !i.contains(11.5));
        let zero = Interval {
            estimate: 0.0,
            lower: 0.0,
            upper: 0.0,
            level: Level::P95,
        };
        assert_eq!(zero.relative_half_width(), 0.0);
        let wide = Interval {
            estimate: 0.0,
            lower: -1.0,
            upper: 1.0,
            level: Level::P95,
        };
        assert_eq!(wide.relative_half_width(), f64::INFINITY);
    }
}
