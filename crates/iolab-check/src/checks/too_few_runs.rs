//! `too-few-runs`: a configuration's runs are too few to tell it from another.
//!
//! Config-level. Needs: `stopping` (set by the runner once a configuration's repetitions have
//! ended): its `runs`, `rel_half_width` and `min_runs`.
//!
//! Fires (warning) when a comparison with the configuration cannot resolve even a large
//! effect:
//! * **fewer than 2 runs**: no interval at all (a configuration run once on purpose —
//!   `repetitions.max = 1` — is not judged: the runner does not set `stopping` for it);
//! * **fewer runs than `repetitions.min`**: the time budget cut the configuration short;
//! * the 95% interval of the mean, `mean × (1 ± h)`, **spans a factor of 2 or more**
//!   (`(1 + h) ÷ (1 − h) ≥ 2`, i.e. h ≥ ⅓), or reaches zero (h ≥ 1, an unbounded ratio).
//!   A ratio of two such means has an interval at least as wide, so only effects larger than
//!   a doubling could show: "no significant difference" would say nothing.
//!
//! `did-not-converge` says the mean is less precise than the target asked for; this check says
//! it is too imprecise to compare at all. Both can fire.

use crate::format::pct_of_fraction;
use crate::{Check, Finding, RunFacts, Severity};
use serde_json::json;

const ID: &str = "too-few-runs";

/// The widest the 95% interval of a mean may span (upper ÷ lower bound) for comparisons with
/// it to tell anything short of a doubling.
pub const MAX_CI_SPAN: f64 = 2.0;

/// Runs needed for any interval.
pub const MIN_RUNS: u32 = 2;

/// The interval `mean × (1 ± h)` as upper ÷ lower bound; `None` when the lower bound is at or
/// below zero (the span is unbounded).
pub fn ci_span(rel_half_width: f64) -> Option<f64> {
    let h = rel_half_width.abs();
    (h < 1.0).then(|| (1.0 + h) / (1.0 - h))
}

/// See the [module documentation](self).
pub struct TooFewRuns;

impl Check for TooFewRuns {
    fn id(&self) -> &'static str {
        ID
    }

    fn config_level(&self) -> bool {
        true
    }

    fn check(&self, f: &RunFacts) -> Option<Finding> {
        let s = f.stopping.as_ref()?;
        let metric = s.metric.as_deref().unwrap_or("the stopping metric");
        let h = s.rel_half_width.filter(|h| h.is_finite());
        let span = h.map(ci_span);
        let why = if s.runs < MIN_RUNS {
            format!(
                "{} run(s) of {metric}: no confidence interval can be formed",
                s.runs
            )
        } else if let Some(min) = s.min_runs.filter(|&m| s.runs < m) {
            format!(
                "{} run(s) of {metric}, fewer than the {min} asked for (`repetitions.min`): \
                 the time budget ran out first",
                s.runs
            )
        } else {
            match (h, span) {
                (Some(h), Some(Some(x))) if x >= MAX_CI_SPAN => format!(
                    "after {} runs the 95% interval of {metric} is ±{} of the mean: its \
                     bounds differ by a factor of {x:.1}",
                    s.runs,
                    pct_of_fraction(h)
                ),
                (Some(h), Some(None)) => format!(
                    "after {} runs the 95% interval of {metric} is ±{} of the mean: it \
                     reaches zero, so a ratio to it is unbounded",
                    s.runs,
                    pct_of_fraction(h)
                ),
                _ => return None,
            }
        };
        Some(Finding {
            id: ID,
            severity: Severity::Warning,
            evidence: json!({
                "runs": s.runs,
                "min_runs": s.min_runs,
                "rel_half_width": h,
                "ci_span": span.flatten(),
                "max_ci_span": MAX_CI_SPAN,
                "metric": s.metric,
            }),
            explanation: format!(
                "The configuration has {why}. A comparison with it cannot tell an effect \
                 smaller than a factor of {MAX_CI_SPAN:.0}: too few runs to tell, whatever \
                 the means say."
            ),
            fix: "Run more repetitions (`repetitions.min`, `repetitions.max`, \
                  `repetitions.time_budget`) after reducing run-to-run noise (see \
                  not-steady, short-run, noisy-neighbour)."
                .into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{close, ev, ev_f64};
    use crate::StoppingOutcome;

    fn facts(runs: u32, half: Option<f64>, min: Option<u32>) -> RunFacts {
        RunFacts {
            stopping: Some(StoppingOutcome {
                converged: false,
                runs,
                rel_half_width: half,
                target: Some(0.05),
                metric: Some("ops_per_s".into()),
                min_runs: min,
            }),
            ..RunFacts::default()
        }
    }

    #[test]
    fn fires_when_the_interval_spans_a_doubling_or_zero() {
        // Two runs of 3.3e9 and 0.9e9: ±470% of the mean, the interval reaches below zero.
        let x = TooFewRuns
            .check(&facts(2, Some(4.7), Some(2)))
            .expect("fires");
        assert_eq!(x.severity, Severity::Warning);
        assert!(x.evidence["ci_span"].is_null());
        assert!(x.explanation.contains("reaches zero"), "{}", x.explanation);
        assert!(x.explanation.contains("too few runs to tell"));
        let x = TooFewRuns
            .check(&facts(3, Some(0.5), Some(3)))
            .expect("fires");
        close(ev_f64(&x, "ci_span"), 3.0);
        assert!(
            x.explanation.contains("differ by a factor of 3.0"),
            "{}",
            x.explanation
        );
    }

    #[test]
    fn fires_for_one_run_and_for_a_budget_cut_short() {
        let x = TooFewRuns.check(&facts(1, None, Some(3))).expect("fires");
        assert_eq!(ev(&x, "runs"), 1);
        assert!(x.explanation.contains("no confidence interval"));
        let x = TooFewRuns
            .check(&facts(2, Some(0.04), Some(3)))
            .expect("fires");
        assert!(x.explanation.contains("fewer than the 3 asked for"));
    }

    #[test]
    fn boundary_and_silence() {
        // A doubling is h = 1/3.
        assert!(TooFewRuns.check(&facts(3, Some(0.34), None)).is_some());
        assert_eq!(TooFewRuns.check(&facts(3, Some(0.33), None)), None);
        // A merely unconverged configuration is did-not-converge's.
        assert_eq!(TooFewRuns.check(&facts(20, Some(0.081), Some(3))), None);
        assert_eq!(TooFewRuns.check(&RunFacts::default()), None);
        assert_eq!(ci_span(0.0), Some(1.0));
        assert_eq!(ci_span(1.0), None);
    }
}
