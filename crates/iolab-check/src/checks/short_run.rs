//! `short-run`: the run is too short for its number to mean what it should.
//!
//! Two parts; either can fire (warning), a part with unknown facts is skipped:
//! * **writeback**: a run with buffered writes (it writes, `sync_requested == Some(false)`,
//!   `o_direct == Some(false)`) shorter than `dirty_expire_centisecs`. Needs `elapsed_ns`,
//!   `dirty_expire_centisecs` and the write facts. Synced and direct writes reach the device
//!   whatever the run's length, so they are not judged.
//! * **intervals**: fewer than 5 *full* intervals. A trailing interval the run ended inside
//!   does not count ([`RunFacts::full_interval_ops`]: full when `elapsed_ns ≥ count ×
//!   interval_ns`, less a thousandth of the width). With a series but no elapsed time or
//!   width, at most its length are full: fewer than 5 recorded fires, more is undecidable.
//!   Without a series (before running), the intervals that fit in `elapsed_ns`.
//!
//! Judged before running when the workload has a duration (`PlanFacts::duration_ns`).

use crate::facts::full_intervals;
use crate::{Check, Finding, RunFacts, Severity};
use iolab_util::units::format_ns;
use serde_json::json;

const ID: &str = "short-run";

/// The SNIA steady-state window: with fewer intervals, `not-steady` cannot be judged and a
/// warm-up interval weighs at least a fifth of the mean.
pub const MIN_INTERVALS: u64 = 5;

const NS_PER_CENTISEC: u64 = 10_000_000;

/// See the [module documentation](self).
pub struct ShortRun;

impl Check for ShortRun {
    fn id(&self) -> &'static str {
        ID
    }

    fn applies_before_run(&self) -> bool {
        true
    }

    fn check(&self, f: &RunFacts) -> Option<Finding> {
        let buffered_writes = f.does_writes() == Some(true)
            && f.sync_requested == Some(false)
            && f.o_direct == Some(false);
        let expire_ns = f
            .dirty_expire_centisecs
            .map(|cs| cs.saturating_mul(NS_PER_CENTISEC));
        // (elapsed, expiry) when the writeback part fires.
        let writeback_short = match (buffered_writes, f.elapsed_ns, expire_ns) {
            (true, Some(e), Some(x)) if e < x => Some((e, x)),
            _ => None,
        };
        // Full intervals; a trailing partial one does not count.
        let intervals = match (f.full_interval_ops(), &f.interval_ops) {
            (Some(full), _) => Some(full.len() as u64),
            // Which are full is unknown, but at most all of them are.
            (None, Some(series)) => Some(series.len() as u64).filter(|&n| n < MIN_INTERVALS),
            (None, None) => f
                .elapsed_ns
                .zip(f.interval_ns)
                .and_then(|(e, w)| full_intervals(e, w)),
        };
        let too_few = intervals.is_some_and(|n| n < MIN_INTERVALS);
        if writeback_short.is_none() && !too_few {
            return None;
        }
        let elapsed = f.elapsed_ns;
        let writeback_ns = f
            .dirty_writeback_centisecs
            .map(|cs| cs.saturating_mul(NS_PER_CENTISEC));
        let mut sentences = Vec::new();
        let mut at_least = 0u64;
        if let Some((e, x)) = writeback_short {
            let wake = writeback_ns
                .map(|w| format!(", and the flusher looks every {}", format_ns(w as f64)))
                .unwrap_or_default();
            sentences.push(format!(
                "The timed region lasts {}, less than vm.dirty_expire_centisecs ({}): \
                 buffered writes are written back by age once they are that old{wake}, so \
                 the writes may not have reached the device and the number may measure \
                 copying into memory.",
                format_ns(e as f64),
                format_ns(x as f64)
            ));
            at_least = at_least.max(x.saturating_add(writeback_ns.unwrap_or(0)));
        }
        if too_few {
            let n = intervals.unwrap_or(0);
            let width = f
                .interval_ns
                .map(|w| format!(" of {}", format_ns(w as f64)))
                .unwrap_or_default();
            // The time after the last full interval, when it shows as more than 0.00 s.
            let tail = f
                .elapsed_ns
                .zip(f.interval_ns)
                .map(|(e, w)| e.saturating_sub(n.saturating_mul(w)))
                .filter(|&t| t >= 5_000_000)
                .map(|t| {
                    format!(
                        " (and a partial one of {}, not counted)",
                        format_ns(t as f64)
                    )
                })
                .unwrap_or_default();
            sentences.push(format!(
                "The run has {n} full interval(s){width}{tail}, fewer than {MIN_INTERVALS}: \
                 too few to judge steady state, and a warm-up weighs heavily in the mean."
            ));
            if let Some(w) = f.interval_ns {
                at_least = at_least.max(w.saturating_mul(MIN_INTERVALS));
            }
        }
        Some(Finding {
            id: ID,
            severity: Severity::Warning,
            evidence: json!({
                "elapsed_ns": elapsed,
                "dirty_expire_centisecs": f.dirty_expire_centisecs,
                "dirty_writeback_centisecs": f.dirty_writeback_centisecs,
                "buffered_writes": buffered_writes,
                "intervals": intervals,
                "recorded_intervals": f.interval_ops.as_ref().map(Vec::len),
                "interval_ns": f.interval_ns,
                "min_intervals": MIN_INTERVALS,
                "suggested_min_ns": (at_least > 0).then_some(at_least),
            }),
            explanation: sentences.join(" "),
            fix: if at_least > 0 {
                format!(
                    "Run for at least {} (the workload's `time`).",
                    format_ns(at_least as f64)
                )
            } else {
                "Run longer (the workload's `time`).".into()
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{self, close, ev, ev_f64, SEC};
    use crate::Access;

    fn buffered_write() -> RunFacts {
        let mut f = testutil::sync_write();
        f.sync_requested = Some(false);
        f
    }

    #[test]
    fn fires_for_buffered_writes_shorter_than_the_expiry() {
        let mut f = buffered_write();
        f.elapsed_ns = Some(12 * SEC);
        f.interval_ops = Some(vec![5000.0; 12]);
        let x = ShortRun.check(&f).expect("fires");
        assert_eq!(x.severity, Severity::Warning);
        assert_eq!(ev(&x, "elapsed_ns"), 12 * SEC);
        assert_eq!(ev(&x, "dirty_expire_centisecs"), 3000);
        assert_eq!(ev(&x, "dirty_writeback_centisecs"), 500);
        assert_eq!(ev(&x, "suggested_min_ns"), 35 * SEC);
        assert!(
            x.explanation
                .contains("lasts 12.00 s, less than vm.dirty_expire_centisecs (30.00 s)"),
            "{}",
            x.explanation
        );
        assert!(x.fix.contains("35.00 s"));
    }

    #[test]
    fn fires_for_too_few_intervals() {
        let mut f = testutil::cold_read();
        f.elapsed_ns = Some(3 * SEC);
        f.interval_ops = Some(vec![13_000.0; 3]);
        let x = ShortRun.check(&f).expect("fires");
        assert_eq!(ev(&x, "intervals"), 3);
        assert_eq!(ev(&x, "min_intervals"), 5);
        close(ev_f64(&x, "suggested_min_ns"), 5e9);
        assert!(!x.explanation.contains("dirty_expire"), "reads only");
        assert!(x
            .explanation
            .contains("3 full interval(s) of 1.00 s, fewer than 5"));
    }

    #[test]
    fn a_trailing_partial_interval_does_not_count() {
        // The review's run: 4.256 s, five recorded intervals, the last one 0.256 s long.
        let mut f = testutil::cold_read();
        f.elapsed_ns = Some(4_256_023_069);
        f.interval_ops = Some(vec![737.0, 729.0, 1464.0, 985.0, 181.0]);
        let x = ShortRun.check(&f).expect("only 4 full intervals");
        assert_eq!(ev(&x, "intervals"), 4);
        assert_eq!(ev(&x, "recorded_intervals"), 5);
        assert!(
            x.explanation.contains(
                "4 full interval(s) of 1.00 s (and a partial one of 256.02 ms, not counted), \
                 fewer than 5"
            ),
            "{}",
            x.explanation
        );
        // A 1.25 s run has one full interval, not two.
        f.elapsed_ns = Some(1_250_000_000);
        f.interval_ops = Some(vec![900.0, 250.0]);
        let x = ShortRun.check(&f).expect("fires");
        assert_eq!(ev(&x, "intervals"), 1);
        assert!(x.explanation.contains("has 1 full interval(s)"));
        // Five full intervals and a partial sixth: enough.
        f.elapsed_ns = Some(5_300_000_000);
        f.interval_ops = Some(vec![900.0, 900.0, 900.0, 900.0, 900.0, 270.0]);
        assert_eq!(ShortRun.check(&f), None);
        // A microsecond short of five intervals still counts five.
        f.elapsed_ns = Some(5 * SEC - 1000);
        f.interval_ops = Some(vec![900.0; 5]);
        assert_eq!(ShortRun.check(&f), None);
    }

    #[test]
    fn without_elapsed_time_only_a_series_too_short_anyway_fires() {
        let mut f = testutil::cold_read();
        f.elapsed_ns = None;
        f.interval_ops = Some(vec![900.0; 4]);
        let x = ShortRun.check(&f).expect("at most 4 full intervals");
        assert_eq!(ev(&x, "intervals"), 4);
        // Five recorded: the last may be partial or not — undecidable, silent.
        f.interval_ops = Some(vec![900.0; 5]);
        assert_eq!(ShortRun.check(&f), None);
    }

    #[test]
    fn silent_for_long_or_synced_runs() {
        assert_eq!(ShortRun.check(&testutil::cold_read()), None);
        assert_eq!(ShortRun.check(&testutil::sync_write()), None);
        let mut f = testutil::sync_write();
        f.elapsed_ns = Some(10 * SEC);
        f.interval_ops = Some(vec![1640.0; 10]);
        assert_eq!(ShortRun.check(&f), None, "fsync'ed writes reach the device");
    }

    #[test]
    fn boundaries() {
        let mut f = buffered_write();
        f.elapsed_ns = Some(30 * SEC); // exactly the expiry
        assert_eq!(ShortRun.check(&f), None);
        f.elapsed_ns = Some(30 * SEC - 1);
        assert!(ShortRun.check(&f).is_some());
        let mut f = testutil::cold_read();
        f.elapsed_ns = Some(5 * SEC);
        f.interval_ops = Some(vec![13_000.0; 5]);
        assert_eq!(ShortRun.check(&f), None);
        f.interval_ops = Some(vec![13_000.0; 4]);
        f.elapsed_ns = Some(4 * SEC);
        assert!(ShortRun.check(&f).is_some());
    }

    #[test]
    fn judged_from_a_planned_duration() {
        let plan = RunFacts {
            access: Some(Access::Read),
            elapsed_ns: Some(4 * SEC),
            interval_ns: Some(SEC),
            ..RunFacts::default()
        };
        let x = ShortRun.check(&plan).expect("4 planned intervals");
        assert_eq!(ev(&x, "intervals"), 4);
        let long = RunFacts {
            elapsed_ns: Some(60 * SEC),
            ..plan
        };
        assert_eq!(ShortRun.check(&long), None);
    }

    #[test]
    fn unknown_facts_are_undecidable() {
        let mut f = buffered_write();
        f.elapsed_ns = Some(10 * SEC);
        f.interval_ops = None;
        f.interval_ns = None;
        let mut g = f.clone();
        g.dirty_expire_centisecs = None;
        assert_eq!(ShortRun.check(&g), None);
        let mut g = f.clone();
        g.sync_requested = None;
        assert_eq!(ShortRun.check(&g), None);
        let mut g = f;
        g.elapsed_ns = None;
        assert_eq!(ShortRun.check(&g), None);
    }
}
