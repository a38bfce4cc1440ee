//! `did-not-converge`: the stopping rule hit its budget before the interval was narrow enough.
//!
//! Config-level. Needs: `stopping` (set by the runner once a configuration's repetitions
//! have ended). Uses its `rel_half_width`, `target`, `runs` and `metric` for the evidence.
//!
//! Fires (warning) when `stopping.converged` is false: after `max` runs or the time budget,
//! the 95% confidence interval's half-width is still above `target × |mean|`
//! (docs/statistics.md, after Traeger et al., ACM TOS 2008). The mean is less precise than
//! asked for, and comparisons with it may not resolve.

use crate::format::pct_of_fraction;
use crate::{Check, Finding, RunFacts, Severity};
use serde_json::json;

const ID: &str = "did-not-converge";

/// See the [module documentation](self). The threshold is the experiment's own `target`;
/// this check only reports the rule's verdict.
pub struct DidNotConverge;

impl Check for DidNotConverge {
    fn id(&self) -> &'static str {
        ID
    }

    fn config_level(&self) -> bool {
        true
    }

    fn check(&self, f: &RunFacts) -> Option<Finding> {
        let s = f.stopping.as_ref()?;
        if s.converged {
            return None;
        }
        let metric = s.metric.as_deref().unwrap_or("the stopping metric");
        let reached = match (s.rel_half_width, s.target) {
            (Some(h), Some(t)) => format!(
                "the 95% interval of {metric} is still ±{} of the mean (target ±{})",
                pct_of_fraction(h),
                pct_of_fraction(t)
            ),
            (Some(h), None) => format!(
                "the 95% interval of {metric} is still ±{} of the mean",
                pct_of_fraction(h)
            ),
            (None, _) => format!("no interval of {metric} could be formed (fewer than 2 runs)"),
        };
        Some(Finding {
            id: ID,
            severity: Severity::Warning,
            evidence: json!({
                "converged": false,
                "runs": s.runs,
                "rel_half_width": s.rel_half_width,
                "target": s.target,
                "metric": s.metric,
            }),
            explanation: format!(
                "After {} run(s) {reached}: the stopping rule ran out of runs or time. The \
                 mean is less precise than asked for, and a comparison may not resolve.",
                s.runs
            ),
            fix: "Reduce run-to-run noise first (see noisy-neighbour, not-steady, short-run; \
                  `procedure.fresh_fs`, `procedure.drop_caches`), then raise \
                  `repetitions.max` or `repetitions.time_budget`, or accept a wider \
                  `repetitions.target`."
                .into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{close, ev, ev_f64};
    use crate::StoppingOutcome;

    fn facts(converged: bool, runs: u32, half: Option<f64>) -> RunFacts {
        RunFacts {
            stopping: Some(StoppingOutcome {
                converged,
                runs,
                rel_half_width: half,
                target: Some(0.05),
                metric: Some("ops_per_s".into()),
                min_runs: None,
            }),
            ..RunFacts::default()
        }
    }

    #[test]
    fn fires_when_the_budget_ran_out() {
        let x = DidNotConverge
            .check(&facts(false, 20, Some(0.083)))
            .expect("fires");
        assert_eq!(x.severity, Severity::Warning);
        assert_eq!(ev(&x, "runs"), 20);
        close(ev_f64(&x, "rel_half_width"), 0.083);
        close(ev_f64(&x, "target"), 0.05);
        assert_eq!(ev(&x, "metric"), "ops_per_s");
        assert!(x.explanation.contains("±8.3% of the mean (target ±5.0%)"));
    }

    #[test]
    fn silent_when_converged() {
        assert_eq!(DidNotConverge.check(&facts(true, 4, Some(0.031))), None);
    }

    #[test]
    fn boundary_is_the_rule_verdict_not_the_numbers() {
        // Converged exactly at the target: the rule said yes.
        assert_eq!(DidNotConverge.check(&facts(true, 3, Some(0.05))), None);
        // A time budget after one run: no interval at all.
        let x = DidNotConverge.check(&facts(false, 1, None)).expect("fires");
        assert!(x.explanation.contains("fewer than 2 runs"));
        assert!(x.evidence["rel_half_width"].is_null());
    }

    #[test]
    fn unknown_is_undecidable() {
        assert_eq!(DidNotConverge.check(&RunFacts::default()), None);
    }
}
