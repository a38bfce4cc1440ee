//! `ran-dry`: flowops found no file to work on.
//!
//! Needs: `ran_dry` (per-flowop counts; WML runs only) and `ran_dry_ends_thread == Some(false)`
//! (timeout mode). Uses `app_ops` for the share of operations.
//!
//! Fires (warning) when any count is above 0. In timeout mode filebench aborts the run when a
//! flowop cannot pick a file ("no results"); iolab's engine counts the miss, skips the
//! operation and goes on, so the run completes — but the operation mix is no longer the one
//! the workload describes. In `quit firstdone|alldone` mode running dry is how a thread
//! finishes (createfiles: every file exists), so the check stays silent there.

use crate::format::pct_of_fraction;
use crate::{Check, Finding, RunFacts, Severity};
use serde_json::json;

const ID: &str = "ran-dry";

/// Any miss counts: each one is an operation the workload asked for and did not get, and
/// filebench treats the first as fatal.
pub const MAX_RAN_DRY: u64 = 0;

/// See the [module documentation](self).
pub struct RanDry;

impl Check for RanDry {
    fn id(&self) -> &'static str {
        ID
    }

    fn check(&self, f: &RunFacts) -> Option<Finding> {
        if f.ran_dry_ends_thread? {
            return None;
        }
        let dry: Vec<_> = f
            .ran_dry
            .as_deref()?
            .iter()
            .filter(|c| c.count > MAX_RAN_DRY)
            .collect();
        if dry.is_empty() {
            return None;
        }
        let total: u64 = dry.iter().map(|c| c.count).sum();
        let share = f
            .app_ops
            .filter(|&ops| ops > 0)
            .map(|ops| total as f64 / ops as f64);
        let list = dry
            .iter()
            .map(|c| format!("{} {}×", c.flowop, c.count))
            .collect::<Vec<_>>()
            .join(", ");
        let share_text = share
            .map(|s| format!(", {} of all operations", pct_of_fraction(s)))
            .unwrap_or_default();
        Some(Finding {
            id: ID,
            severity: Severity::Warning,
            evidence: json!({
                "ran_dry": dry
                    .iter()
                    .map(|c| json!({ "flowop": c.flowop, "count": c.count }))
                    .collect::<Vec<_>>(),
                "total": total,
                "app_ops": f.app_ops,
                "fraction_of_ops": share,
            }),
            explanation: format!(
                "Flowops found no file to work on {total} time(s) ({list}{share_text}): those \
                 operations did no I/O, so the operation mix is not the one the workload \
                 describes (filebench would have aborted the run)."
            ),
            fix: "Give the fileset more files (`entries`, `prealloc`) or balance the threads \
                  that create and delete files so the fileset never empties."
                .into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{close, ev, ev_f64};
    use crate::FlowopCount;

    fn facts(counts: &[(&str, u64)]) -> RunFacts {
        RunFacts {
            app_ops: Some(1_200_000),
            ran_dry_ends_thread: Some(false),
            ran_dry: Some(
                counts
                    .iter()
                    .map(|&(flowop, count)| FlowopCount {
                        flowop: flowop.into(),
                        count,
                    })
                    .collect(),
            ),
            ..RunFacts::default()
        }
    }

    #[test]
    fn fires_with_the_dry_flowops() {
        let f = facts(&[("deletefile1", 3100), ("openfile1", 0), ("statfile1", 500)]);
        let x = RanDry.check(&f).expect("fires");
        assert_eq!(x.severity, Severity::Warning);
        assert_eq!(ev(&x, "total"), 3600);
        assert_eq!(ev(&x, "ran_dry").as_array().unwrap().len(), 2);
        assert_eq!(ev(&x, "ran_dry")[0]["flowop"], "deletefile1");
        assert_eq!(ev(&x, "ran_dry")[0]["count"], 3100);
        close(ev_f64(&x, "fraction_of_ops"), 0.003);
        assert!(x
            .explanation
            .contains("deletefile1 3100×, statfile1 500×, 0.3%"));
    }

    #[test]
    fn silent_when_nothing_ran_dry() {
        assert_eq!(RanDry.check(&facts(&[("deletefile1", 0)])), None);
        assert_eq!(RanDry.check(&facts(&[])), None);
    }

    #[test]
    fn boundary_is_a_single_miss() {
        let x = RanDry.check(&facts(&[("deletefile1", 1)])).expect("fires");
        assert_eq!(ev(&x, "total"), 1);
    }

    #[test]
    fn silent_when_running_dry_is_how_threads_finish() {
        // createfiles.f: `set mode quit alldone`, each thread's createfile ends dry once.
        let mut f = facts(&[("createfile1", 16)]);
        f.ran_dry_ends_thread = Some(true);
        assert_eq!(RanDry.check(&f), None);
    }

    #[test]
    fn unknown_is_undecidable() {
        assert_eq!(RanDry.check(&RunFacts::default()), None);
        let mut f = facts(&[("deletefile1", 3)]);
        f.ran_dry_ends_thread = None;
        assert_eq!(RanDry.check(&f), None);
    }
}
