//! When to stop repeating a configuration.
//!
//! The rule of docs/statistics.md, as practised by Traeger, Zadok, Joukov & Wright, "A nine
//! year study of file system and storage benchmarking" (ACM TOS 4(2), 2008): repeat until the
//! Student-t confidence interval of the mean is narrow relative to the mean, within a budget of
//! runs and time, and say so plainly when the budget ran out first.

use crate::{Level, Result, StatsError, Welford};
use std::time::Duration;

/// Parameters of the stopping rule. Defaults: `min` 3, `max` 20, `target` 0.05, `level` 95%.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StoppingRule {
    /// Fewest repetitions before convergence may be declared. Values below 2 act as 2: an
    /// interval needs two points.
    pub min: u64,
    /// Most repetitions; reaching it without converging is [`StopReason::MaxRuns`].
    pub max: u64,
    /// Target relative half-width: stop once half-width ≤ `target` × |mean|.
    pub target: f64,
    /// Confidence level of the interval.
    pub level: Level,
}

impl Default for StoppingRule {
    fn default() -> Self {
        StoppingRule {
            min: 3,
            max: 20,
            target: 0.05,
            level: Level::P95,
        }
    }
}

/// Why repetitions stopped without converging.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StopReason {
    /// `max` repetitions were run.
    MaxRuns,
    /// The time budget is spent.
    TimeBudget,
}

/// What to do after the latest repetition.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Decision {
    /// Run another repetition.
    Continue,
    /// The interval is narrow enough.
    Converged {
        /// Repetitions so far.
        runs: u64,
        /// Achieved half-width / |mean|.
        rel_half_width: f64,
    },
    /// The budget ran out first: report "did not converge" with the achieved precision.
    NotConverged {
        /// Which budget ran out.
        reason: StopReason,
        /// Repetitions so far.
        runs: u64,
        /// Achieved half-width / |mean|; `None` if fewer than two runs finished.
        rel_half_width: Option<f64>,
    },
}

impl Decision {
    /// Whether repetitions should stop (converged or not).
    pub fn is_stop(&self) -> bool {
        !matches!(self, Decision::Continue)
    }
}

impl StoppingRule {
    /// A validated rule: `min ≥ 2`, `max ≥ min`, `target` finite and > 0.
    pub fn new(min: u64, max: u64, target: f64, level: Level) -> Result<Self> {
        let rule = StoppingRule {
            min,
            max,
            target,
            level,
        };
        rule.validate()?;
        Ok(rule)
    }

    /// Checks the fields (useful after building the struct literally, e.g. from a config file).
    pub fn validate(&self) -> Result<()> {
        if self.min < 2 {
            return Err(StatsError::InvalidParameter {
                name: "min",
                reason: format!(
                    "a confidence interval needs at least 2 runs, got {}",
                    self.min
                ),
            });
        }
        if self.max < self.min {
            return Err(StatsError::InvalidParameter {
                name: "max",
                reason: format!("must be ≥ min ({}), got {}", self.min, self.max),
            });
        }
        if !(self.target.is_finite() && self.target > 0.0) {
            return Err(StatsError::InvalidParameter {
                name: "target",
                reason: format!(
                    "must be a positive fraction of the mean (e.g. 0.05), got {}",
                    self.target
                ),
            });
        }
        Ok(())
    }

    /// Decides after a repetition, given the metric's running sums, the time spent so far and
    /// an optional time budget.
    ///
    /// Order: convergence wins (a run that converged exactly at `max` or past the budget is
    /// reported as converged); then `max`; then the budget (`elapsed ≥ budget`). To avoid
    /// starting a run that cannot finish in time, pass `elapsed` plus the expected duration of
    /// the next run.
    pub fn decide(&self, acc: &Welford, elapsed: Duration, budget: Option<Duration>) -> Decision {
        let runs = acc.count();
        let rel = acc.relative_half_width(self.level);
        if runs >= self.min.max(2) {
            if let Some(r) = rel {
                if r <= self.target {
                    return Decision::Converged {
                        runs,
                        rel_half_width: r,
                    };
                }
            }
        }
        let reason = if runs >= self.max {
            Some(StopReason::MaxRuns)
        } else if budget.is_some_and(|b| elapsed >= b) {
            Some(StopReason::TimeBudget)
        } else {
            None
        };
        match reason {
            Some(reason) => Decision::NotConverged {
                reason,
                runs,
                rel_half_width: rel,
            },
            None => Decision::Continue,
        }
    }

    /// Decides for a deterministic measurement (a simulation), whose every repetition gives
    /// the same value: while all values so far are equal, one run is exact — converged with
    /// a zero-width interval, whatever `min` says (repeating would only repeat the number).
    /// Values that differ mean the measurement was not deterministic after all: the normal
    /// rule ([`StoppingRule::decide`]) takes over.
    pub fn decide_deterministic(
        &self,
        acc: &Welford,
        elapsed: Duration,
        budget: Option<Duration>,
    ) -> Decision {
        let runs = acc.count();
        if runs >= 1 && acc.min() == acc.max() {
            return Decision::Converged {
                runs,
                rel_half_width: 0.0,
            };
        }
        self.decide(acc, elapsed, budget)
    }

    /// Applies the rule to a finished sequence of values, as if they arrived one per run and
    /// without a time budget; returns the decision at the first stop (or `Continue` if the
    /// sequence ended first). Useful for judging stored runs again and for tests.
    pub fn decide_over(&self, values: &[f64]) -> Result<Decision> {
        let mut acc = Welford::new();
        for (index, &value) in values.iter().enumerate() {
            acc.push(value)
                .map_err(|_| StatsError::NonFinite { index, value })?;
            let d = self.decide(&acc, Duration::ZERO, None);
            if d.is_stop() {
                return Ok(d);
            }
        }
        Ok(Decision::Continue)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_is_the_spec() {
        let r = StoppingRule::default();
        assert_eq!((r.min, r.max, r.target, r.level), (3, 20, 0.05, Level::P95));
        r.validate().unwrap();
    }

    #[test]
    fn steady_series_stops_exactly_at_run_three() {
        // Run 2 is already tight, but min = 3 holds it back; run 3 converges:
        // mean 100.1, s = 0.3606, half-width = 4.3027·0.3606/√3 = 0.8957 → 0.895% ≤ 5%.
        let rule = StoppingRule::default();
        let mut acc = Welford::new();
        acc.push(100.0).unwrap();
        assert_eq!(rule.decide(&acc, Duration::ZERO, None), Decision::Continue);
        acc.push(100.5).unwrap();
        assert_eq!(rule.decide(&acc, Duration::ZERO, None), Decision::Continue);
        acc.push(99.8).unwrap();
        match rule.decide(&acc, Duration::ZERO, None) {
            Decision::Converged {
                runs,
                rel_half_width,
            } => {
                assert_eq!(runs, 3);
                assert!(
                    (rel_half_width - 0.008_948).abs() < 1e-5,
                    "{rel_half_width}"
                );
            }
            d => panic!("expected convergence at run 3, got {d:?}"),
        }
    }

    #[test]
    fn noisy_series_hits_max() {
        // Alternating 50/150: CV ≈ 51%, the half-width stays far above 5% through run 20.
        let values: Vec<f64> = (0..30)
            .map(|i| if i % 2 == 0 { 50.0 } else { 150.0 })
            .collect();
        match StoppingRule::default().decide_over(&values).unwrap() {
            Decision::NotConverged {
                reason: StopReason::MaxRuns,
                runs: 20,
                rel_half_width: Some(r),
            } => {
                // s = 51.299, t(0.975, 19) = 2.093024 → hw = 24.008, rel = 0.24008.
                assert!((r - 0.240_08).abs() < 1e-4, "{r}");
            }
            d => panic!("expected MaxRuns at 20, got {d:?}"),
        }
    }

    #[test]
    fn converges_later_when_noise_needs_more_runs() {
        // ±5% alternating noise: relative half-width 14.6% at n = 3, 5.75% at n = 6 and
        // 4.98% at n = 7 (mean 99.29, s = 5.345, t(0.975, 6) = 2.447): stop exactly at 7.
        let values: Vec<f64> = (0..20)
            .map(|i| if i % 2 == 0 { 95.0 } else { 105.0 })
            .collect();
        let rule = StoppingRule::default();
        let d = rule.decide_over(&values).unwrap();
        let Decision::Converged {
            runs,
            rel_half_width,
        } = d
        else {
            panic!("{d:?}")
        };
        assert_eq!(runs, 7);
        assert!((rel_half_width - 0.0498).abs() < 5e-4, "{rel_half_width}");
        let six = Welford::from_values(&values[..6]).unwrap();
        assert!(six.relative_half_width(Level::P95).unwrap() > 0.05);
    }

    #[test]
    fn time_budget() {
        let rule = StoppingRule::default();
        let acc = Welford::from_values(&[50.0, 150.0, 60.0, 140.0]).unwrap();
        let budget = Some(Duration::from_secs(60));
        assert_eq!(
            rule.decide(&acc, Duration::from_secs(59), budget),
            Decision::Continue
        );
        assert!(matches!(
            rule.decide(&acc, Duration::from_secs(60), budget),
            Decision::NotConverged {
                reason: StopReason::TimeBudget,
                runs: 4,
                rel_half_width: Some(r)
            } if r > 0.05
        ));
        // Budget gone after a single run: no interval exists yet.
        let one = Welford::from_values(&[10.0]).unwrap();
        assert_eq!(
            rule.decide(&one, Duration::from_secs(61), budget),
            Decision::NotConverged {
                reason: StopReason::TimeBudget,
                runs: 1,
                rel_half_width: None
            }
        );
    }

    #[test]
    fn convergence_wins_over_budget_and_max() {
        let rule = StoppingRule::new(3, 3, 0.05, Level::P95).unwrap();
        let acc = Welford::from_values(&[100.0, 100.0, 100.0]).unwrap();
        assert!(matches!(
            rule.decide(&acc, Duration::from_secs(100), Some(Duration::from_secs(1))),
            Decision::Converged { runs: 3, .. }
        ));
    }

    #[test]
    fn validation() {
        assert!(StoppingRule::new(1, 20, 0.05, Level::P95).is_err());
        assert!(StoppingRule::new(5, 4, 0.05, Level::P95).is_err());
        assert!(StoppingRule::new(3, 20, 0.0, Level::P95).is_err());
        assert!(StoppingRule::new(3, 20, f64::NAN, Level::P95).is_err());
        assert!(StoppingRule::new(2, 2, 0.01, Level::P99).is_ok());
    }

    #[test]
    fn deterministic_values_converge_after_one_run() {
        let rule = StoppingRule::default();
        let mut acc = Welford::new();
        assert_eq!(
            rule.decide_deterministic(&acc, Duration::ZERO, None),
            Decision::Continue
        );
        acc.push(0.25).unwrap();
        assert_eq!(
            rule.decide_deterministic(&acc, Duration::ZERO, None),
            Decision::Converged {
                runs: 1,
                rel_half_width: 0.0
            }
        );
        // Zero variance, zero mean: still exact.
        let zeros = Welford::from_values(&[0.0, 0.0]).unwrap();
        assert!(matches!(
            rule.decide_deterministic(&zeros, Duration::ZERO, None),
            Decision::Converged { runs: 2, .. }
        ));
        // A value that differs: the normal rule (3 runs at least).
        let differs = Welford::from_values(&[1.0, 2.0]).unwrap();
        assert_eq!(
            rule.decide_deterministic(&differs, Duration::ZERO, None),
            Decision::Continue
        );
    }
}
