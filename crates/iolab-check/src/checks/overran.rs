//! `overran`: the timed region lasted notably longer than planned.
//!
//! Needs: `planned_ns` (the workload's `time`, the WML's `run N`) and `elapsed_ns`.
//!
//! Fires (warning) when **elapsed > planned × 1.1**. A timed workload stops issuing
//! operations when its time is up and then waits for those in flight; finishing them takes
//! one operation's latency, a few milliseconds on a healthy run. A tenth more means
//! operations in flight stalled for seconds — memory reclaim (see `memory-pressure`), a
//! device queue full of writeback, a throttle — and the rate, counted over the actual time,
//! includes the stall. Exactly a tenth more does not fire.

use crate::format::pct_of_fraction;
use crate::{Check, Finding, RunFacts, Severity};
use iolab_util::units::format_ns;
use serde_json::json;

const ID: &str = "overran";

/// How much longer than planned a timed region may last (a fraction of the plan).
pub const MAX_OVERRUN: f64 = 0.1;

/// See the [module documentation](self).
pub struct Overran;

impl Check for Overran {
    fn id(&self) -> &'static str {
        ID
    }

    fn check(&self, f: &RunFacts) -> Option<Finding> {
        let planned = f.planned_ns.filter(|&p| p > 0)?;
        let elapsed = f.elapsed_ns?;
        let over = elapsed.saturating_sub(planned);
        let fraction = over as f64 / planned as f64;
        if fraction <= MAX_OVERRUN {
            return None;
        }
        Some(Finding {
            id: ID,
            severity: Severity::Warning,
            evidence: json!({
                "planned_ns": planned,
                "elapsed_ns": elapsed,
                "overrun_ns": over,
                "overrun_fraction": fraction,
                "max_overrun": MAX_OVERRUN,
            }),
            explanation: format!(
                "The timed region was planned to last {} and lasted {} ({} longer): \
                 operations in flight when the time was up took that long to finish, so \
                 the workload stalled — on memory reclaim, a device queue or a throttle — \
                 and the rates include the stall.",
                format_ns(planned as f64),
                format_ns(elapsed as f64),
                pct_of_fraction(fraction)
            ),
            fix: "Look for what stalled (memory-pressure, the latency maximum, the device's \
                  series); give the workload the memory and device it needs, or fewer \
                  processes."
                .into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{self, close, ev, ev_f64, SEC};

    fn timed(planned: u64, elapsed: u64) -> RunFacts {
        let mut f = testutil::cold_read();
        f.planned_ns = Some(planned);
        f.elapsed_ns = Some(elapsed);
        f
    }

    #[test]
    fn fires_for_the_seed_runs() {
        // Seed report 000: 10 s runs lasting 12.5–20.7 s.
        let x = Overran
            .check(&timed(10 * SEC, 20_700_000_000))
            .expect("fires");
        assert_eq!(x.severity, Severity::Warning);
        assert_eq!(ev(&x, "planned_ns"), 10 * SEC);
        assert_eq!(ev(&x, "elapsed_ns"), 20_700_000_000u64);
        close(ev_f64(&x, "overrun_fraction"), 1.07);
        assert!(
            x.explanation
                .contains("planned to last 10.00 s and lasted 20.70 s (107.0% longer)"),
            "{}",
            x.explanation
        );
        assert!(Overran.check(&timed(10 * SEC, 12_500_000_000)).is_some());
    }

    #[test]
    fn silent_on_time_and_at_the_boundary() {
        assert_eq!(Overran.check(&timed(10 * SEC, 10_004_000_000)), None);
        assert_eq!(Overran.check(&timed(10 * SEC, 11 * SEC)), None);
        assert!(Overran.check(&timed(10 * SEC, 11 * SEC + 1)).is_some());
        // Shorter than planned is another matter (a workload that ran out of work).
        assert_eq!(Overran.check(&timed(10 * SEC, 2 * SEC)), None);
    }

    #[test]
    fn unknown_plan_is_undecidable() {
        let mut f = timed(10 * SEC, 30 * SEC);
        f.planned_ns = None;
        assert_eq!(Overran.check(&f), None);
        f.planned_ns = Some(0);
        assert_eq!(Overran.check(&f), None);
        f.planned_ns = Some(10 * SEC);
        f.elapsed_ns = None;
        assert_eq!(Overran.check(&f), None);
    }
}
