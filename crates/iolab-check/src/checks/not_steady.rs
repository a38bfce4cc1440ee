//! `not-steady`: the run's throughput had not settled by its end.
//!
//! Needs: `interval_ops`, `interval_ns` and `elapsed_ns`, with at least 5 full intervals
//! (fewer is `short-run`'s finding). A trailing partial interval — the run ended inside it —
//! is dropped ([`RunFacts::full_interval_ops`]): its count covers less time and would read as
//! a fall in throughput. Without the elapsed time, which intervals are full is unknown and
//! the check stays silent.
//!
//! Applies the SNIA Solid State Storage Performance Test Specification (PTS 2.0) steady-state
//! rule to the *last* 5 intervals — the end of the run is where a warm-up would have ended:
//! (1) max − min ≤ 20% of the window's average, and (2) the least-squares line's excursion
//! over the window, |slope| × (5 − 1), ≤ 10% of the average. Fires (warning) when either
//! fails. Condition 1 bounds noise, condition 2 trend: a still-warming or degrading run fails
//! the second even when neighbouring intervals look alike. (iolab-stats' `SteadyStateRule` is
//! the same rule; this crate stays free of other iolab crates.)

use iolab_stats::WindowCheck;

use crate::format::pct_of_fraction;
use crate::{Check, Finding, RunFacts, Severity};
use serde_json::json;

const ID: &str = "not-steady";

/// SNIA PTS 2.0: a measurement window of 5 rounds.
pub const WINDOW: usize = 5;
/// SNIA PTS 2.0: data excursion (max − min) at most 20% of the window average.
pub const MAX_RANGE: f64 = 0.20;
/// SNIA PTS 2.0: slope excursion |slope| × (window − 1) at most 10% of the window average.
pub const MAX_EXCURSION: f64 = 0.10;

/// See the [module documentation](self).
pub struct NotSteady;

impl Check for NotSteady {
    fn id(&self) -> &'static str {
        ID
    }

    fn check(&self, f: &RunFacts) -> Option<Finding> {
        let series = f.full_interval_ops()?;
        if series.len() < WINDOW {
            return None;
        }
        let start = series.len() - WINDOW;
        let w = &series[start..];
        if !w.iter().all(|v| v.is_finite()) {
            return None;
        }
        let rule = iolab_stats::SteadyStateRule {
            window: WINDOW,
            max_range: MAX_RANGE,
            max_excursion: MAX_EXCURSION,
        };
        let WindowCheck {
            average,
            range,
            slope,
            excursion,
            range_ok,
            excursion_ok,
            ..
        } = rule.check(start, w).ok()?;
        if range_ok && excursion_ok {
            return None;
        }
        let rel = |x: f64| {
            if average != 0.0 {
                pct_of_fraction(x / average.abs())
            } else {
                "∞".into()
            }
        };
        let mut failed = Vec::new();
        if !range_ok {
            failed.push(format!(
                "max − min is {} of the average (at most {})",
                rel(range),
                pct_of_fraction(MAX_RANGE)
            ));
        }
        if !excursion_ok {
            failed.push(format!(
                "the trend moves {} of the average across the window (at most {}; throughput \
                 {})",
                rel(excursion),
                pct_of_fraction(MAX_EXCURSION),
                if slope > 0.0 { "rising" } else { "falling" },
            ));
        }
        let per_s = f
            .interval_ns
            .filter(|&ns| ns > 0)
            .map(|ns| average * 1e9 / ns as f64);
        let values = w
            .iter()
            .map(|v| format!("{v:.0}"))
            .collect::<Vec<_>>()
            .join(", ");
        Some(Finding {
            id: ID,
            severity: Severity::Warning,
            evidence: json!({
                "window_start": start,
                "window": w,
                "full_intervals": series.len(),
                "recorded_intervals": f.interval_ops.as_ref().map(Vec::len),
                "average": average,
                "average_ops_per_s": per_s,
                "range": range,
                "slope": slope,
                "excursion": excursion,
                "max_range_fraction": MAX_RANGE,
                "max_excursion_fraction": MAX_EXCURSION,
                "interval_ns": f.interval_ns,
            }),
            explanation: format!(
                "The last {WINDOW} intervals ({values} ops each) are not steady by the SNIA \
                 rule: {}. The run's mean mixes a warm-up, a trend or large swings \
                 (writeback bursts, garbage collection) into one number.",
                failed.join("; ")
            ),
            fix: "Run longer, or add warm-up (`procedure.warmup`, or a longer `time`), until \
                  the last intervals are steady; look at the interval series for periodic \
                  dips (writeback) or a slow decline (device cache filling)."
                .into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{self, close, ev, ev_f64, SEC};

    fn with_tail(tail: &[f64]) -> RunFacts {
        let mut f = testutil::cold_read();
        let mut s = vec![13_000.0; 10];
        s.extend_from_slice(tail);
        f.interval_ops = Some(s);
        f
    }

    #[test]
    fn fires_for_a_rising_tail() {
        // Still warming up: +5% per interval.
        let f = with_tail(&[10_000.0, 10_500.0, 11_000.0, 11_500.0, 12_000.0]);
        let x = NotSteady.check(&f).expect("fires");
        assert_eq!(x.severity, Severity::Warning);
        assert_eq!(ev(&x, "window_start"), 10);
        assert_eq!(ev(&x, "window")[4], 12_000.0);
        close(ev_f64(&x, "average"), 11_000.0);
        close(ev_f64(&x, "range"), 2000.0);
        close(ev_f64(&x, "slope"), 500.0);
        close(ev_f64(&x, "excursion"), 2000.0);
        close(ev_f64(&x, "average_ops_per_s"), 11_000.0);
        // 2000 / 11000 = 18.2%: range passes, trend fails.
        assert!(!x.explanation.contains("max − min"), "{}", x.explanation);
        assert!(x.explanation.contains("18.2% of the average"));
        assert!(x.explanation.contains("rising"));
    }

    #[test]
    fn fires_for_noisy_swings_without_a_trend() {
        let f = with_tail(&[13_000.0, 9_000.0, 13_000.0, 9_000.0, 13_000.0]);
        let x = NotSteady.check(&f).expect("fires");
        close(ev_f64(&x, "range"), 4000.0);
        assert!(
            x.explanation.contains("max − min is 35.1%"),
            "{}",
            x.explanation
        );
    }

    #[test]
    fn silent_for_a_steady_series() {
        assert_eq!(NotSteady.check(&testutil::cold_read()), None);
        assert_eq!(NotSteady.check(&testutil::sync_write()), None);
        // Only the last window counts: an early warm-up is fine.
        let mut f = with_tail(&[13_000.0; 5]);
        f.interval_ops.as_mut().unwrap()[0] = 2_000.0;
        assert_eq!(NotSteady.check(&f), None);
    }

    #[test]
    fn boundary_is_twenty_percent_range() {
        // Average 1000, range exactly 200, zero slope (symmetric): steady.
        let f = with_tail(&[1100.0, 900.0, 1000.0, 900.0, 1100.0]);
        assert_eq!(NotSteady.check(&f), None);
        let f = with_tail(&[1101.0, 899.0, 1000.0, 899.0, 1101.0]);
        assert!(NotSteady.check(&f).is_some());
    }

    #[test]
    fn boundary_is_ten_percent_trend() {
        // Slope 25/interval → excursion 100 = 10% of 1000.
        let f = with_tail(&[950.0, 975.0, 1000.0, 1025.0, 1050.0]);
        assert_eq!(NotSteady.check(&f), None);
        let f = with_tail(&[949.0, 974.5, 1000.0, 1025.5, 1051.0]);
        assert!(NotSteady.check(&f).is_some());
    }

    #[test]
    fn a_trailing_partial_interval_is_dropped() {
        // The review's run: a 0.256 s tail of 181 ops read as "throughput falling".
        let mut f = testutil::cold_read();
        f.elapsed_ns = Some(4_256_023_069);
        f.interval_ops = Some(vec![737.0, 729.0, 1464.0, 985.0, 181.0]);
        assert_eq!(NotSteady.check(&f), None, "4 full intervals: short-run's");
        // Steady full intervals and a short tail: steady.
        f.elapsed_ns = Some(10_100_000_000);
        let mut s = vec![1000.0; 10];
        s.push(100.0);
        f.interval_ops = Some(s);
        assert_eq!(NotSteady.check(&f), None);
        // The same series had the tail been a full interval: a real fall.
        f.elapsed_ns = Some(11 * SEC);
        let x = NotSteady.check(&f).expect("fires");
        assert_eq!(ev(&x, "window")[4], 100.0);
        assert_eq!(ev(&x, "full_intervals"), 11);
        // Judged on the full intervals only: a falling run with a partial tail still fires,
        // on the window before the tail.
        f.elapsed_ns = Some(10_500_000_000);
        f.interval_ops = Some(vec![
            1000.0, 1000.0, 1000.0, 1000.0, 1000.0, 900.0, 800.0, 700.0, 600.0, 500.0, 200.0,
        ]);
        let x = NotSteady.check(&f).expect("fires");
        assert_eq!(ev(&x, "window_start"), 5);
        assert_eq!(ev(&x, "window")[4], 500.0);
        assert_eq!(ev(&x, "full_intervals"), 10);
        assert_eq!(ev(&x, "recorded_intervals"), 11);
        assert!(x.explanation.contains("falling"));
        // Without the elapsed time the partial interval cannot be told: silent.
        f.elapsed_ns = None;
        assert_eq!(NotSteady.check(&f), None);
    }

    #[test]
    fn too_short_or_unknown_is_undecidable() {
        let mut f = testutil::cold_read();
        f.interval_ops = Some(vec![1.0, 100.0, 10_000.0, 5.0]);
        assert_eq!(NotSteady.check(&f), None);
        f.interval_ops = None;
        assert_eq!(NotSteady.check(&f), None);
        f.interval_ops = Some(vec![1.0, f64::NAN, 3.0, 4.0, 5.0]);
        assert_eq!(NotSteady.check(&f), None);
    }
}
