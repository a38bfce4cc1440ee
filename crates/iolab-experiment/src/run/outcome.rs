//! How a configuration's repetitions ended, in words for the database, and the
//! configuration-level checks on the stopping rule's decision.

use super::*;

/// The configuration-level checks (did-not-converge) on the stopping rule's decision.
pub(super) fn config_findings(
    d: &Decision,
    reps: &crate::plan::Repetitions,
) -> Vec<iolab_store::Finding> {
    let (converged, runs, rel) = match *d {
        Decision::Converged {
            runs,
            rel_half_width,
        } => (true, runs, Some(rel_half_width)),
        Decision::NotConverged {
            runs,
            rel_half_width,
            ..
        } => (false, runs, rel_half_width),
        Decision::Continue => return Vec::new(),
    };
    let facts = iolab_check::RunFacts {
        stopping: Some(iolab_check::StoppingOutcome {
            converged,
            runs: u32::try_from(runs).unwrap_or(u32::MAX),
            rel_half_width: rel,
            target: Some(reps.rule.target),
            metric: Some(reps.metric.clone()),
            min_runs: u32::try_from(reps.rule.min).ok(),
        }),
        ..iolab_check::RunFacts::default()
    };
    iolab_check::run_checks(&facts)
        .into_iter()
        .map(monitor::to_store)
        .collect()
}

/// The outcome of a configuration run once on purpose (`repetitions.max = 1`, `iolab KIND`,
/// `iolab run FILE.f`).
pub const SINGLE_RUN_NOTE: &str = "single run: no repetitions, so no confidence interval";

pub(super) fn single_outcome() -> ConfigOutcome {
    ConfigOutcome {
        converged: false,
        note: SINGLE_RUN_NOTE.into(),
    }
}

/// The outcome of a deterministic configuration (a simulation) whose runs agree.
pub(super) fn deterministic_outcome(d: &Decision, metric: &str) -> ConfigOutcome {
    let runs = match *d {
        Decision::Converged { runs, .. } => runs,
        _ => 0,
    };
    let runs = if runs == 1 {
        "one run".to_string()
    } else {
        format!("{runs} runs agree")
    };
    ConfigOutcome {
        converged: true,
        note: format!(
            "{}{metric} is exact ({runs}; 95% CI ±0.0%)",
            ConfigOutcome::DETERMINISTIC
        ),
    }
}

pub(super) fn outcome_of(d: &Decision, metric: &str, acc: &Welford) -> ConfigOutcome {
    let pct = |r: f64| format!("±{:.1}%", r * 100.0);
    match *d {
        Decision::Converged {
            runs,
            rel_half_width,
        } => ConfigOutcome {
            converged: true,
            note: format!(
                "converged: 95% CI of {metric} {} after {runs} runs",
                pct(rel_half_width)
            ),
        },
        Decision::NotConverged {
            reason,
            runs,
            rel_half_width,
        } => {
            let why = match reason {
                StopReason::MaxRuns => format!("the maximum of {runs} runs was reached"),
                StopReason::TimeBudget => format!("the time budget ran out after {runs} runs"),
            };
            let achieved = match rel_half_width {
                Some(r) => format!("; the 95% CI of {metric} is {}", pct(r)),
                None if acc.count() < 2 => "; fewer than 2 values, no interval".into(),
                None => String::new(),
            };
            ConfigOutcome {
                converged: false,
                note: format!("did not converge: {why}{achieved}"),
            }
        }
        Decision::Continue => ConfigOutcome {
            converged: false,
            note: "still running".into(),
        },
    }
}
