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
//! * **passes**: a run made of separately timed passes, each with its own figure (iozone's
//!   tests, bonnie's phases; `passes`), and no interval series: every pass shorter than 5
//!   intervals (of `interval_ns`, else the monitor's 1 s) is too short for the same reason —
//!   its figure is one unrepeated sample dominated by start-up, and the samplers see at most
//!   a few points of it. Such a run is judged by its passes, not by its total time.
//!
//! Judged before running when the workload has a duration (`PlanFacts::duration_ns`).

use crate::facts::full_intervals;
use crate::{Check, Finding, RunFacts, Severity, TimedPass};
use iolab_util::units::format_ns;
use serde_json::json;

const ID: &str = "short-run";

/// The SNIA steady-state window: with fewer intervals, `not-steady` cannot be judged and a
/// warm-up interval weighs at least a fifth of the mean.
pub const MIN_INTERVALS: u64 = 5;

const NS_PER_CENTISEC: u64 = 10_000_000;

/// The interval width passes are judged in when the run recorded none: the monitor's default
/// sampling interval.
pub const DEFAULT_INTERVAL_NS: u64 = 1_000_000_000;

/// Short passes named in the explanation (the evidence lists them all).
const PASSES_NAMED: usize = 6;

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
        // A run of separately timed passes without a series is judged by its passes.
        let passes = f
            .passes
            .as_deref()
            .filter(|p| !p.is_empty() && f.interval_ops.is_none());
        let min_pass_ns = f
            .interval_ns
            .filter(|&w| w > 0)
            .unwrap_or(DEFAULT_INTERVAL_NS)
            .saturating_mul(MIN_INTERVALS);
        let short_passes: Vec<&TimedPass> = passes
            .into_iter()
            .flatten()
            .filter(|p| p.elapsed_ns < min_pass_ns)
            .collect();
        // Full intervals; a trailing partial one does not count.
        let intervals = match (f.full_interval_ops(), &f.interval_ops) {
            (Some(full), _) => Some(full.len() as u64),
            // Which are full is unknown, but at most all of them are.
            (None, Some(series)) => Some(series.len() as u64).filter(|&n| n < MIN_INTERVALS),
            (None, None) if passes.is_some() => None,
            (None, None) => f
                .elapsed_ns
                .zip(f.interval_ns)
                .and_then(|(e, w)| full_intervals(e, w)),
        };
        let too_few = intervals.is_some_and(|n| n < MIN_INTERVALS);
        if writeback_short.is_none() && !too_few && short_passes.is_empty() {
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
        if !short_passes.is_empty() {
            let mut named: Vec<String> = short_passes
                .iter()
                .take(PASSES_NAMED)
                .map(|p| format!("{} {}", p.name, format_ns(p.elapsed_ns as f64)))
                .collect();
            if short_passes.len() > PASSES_NAMED {
                named.push("…".into());
            }
            sentences.push(format!(
                "{} of its {} timed passes last less than {} ({MIN_INTERVALS} intervals of \
                 {}): {}. Each pass's figure is a measurement of its own, and one this short \
                 is dominated by start-up and the first misses; the monitor sees at most a \
                 few samples of it.",
                short_passes.len(),
                passes.map_or(0, <[TimedPass]>::len),
                format_ns(min_pass_ns as f64),
                format_ns((min_pass_ns / MIN_INTERVALS) as f64),
                named.join(", ")
            ));
            at_least = at_least.max(min_pass_ns);
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
                "passes": passes.map(<[TimedPass]>::len),
                "short_passes": (!short_passes.is_empty()).then_some(&short_passes),
                "min_pass_ns": passes.map(|_| min_pass_ns),
            }),
            explanation: sentences.join(" "),
            fix: if !short_passes.is_empty() {
                format!(
                    "Give each pass more work, so that it lasts at least {}: more data, \
                     or more files, for each pass to move.",
                    format_ns(min_pass_ns as f64)
                )
            } else if at_least > 0 {
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
    use crate::{Access, TimedPass};

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

    /// An iozone run of the seed-001 example: six passes of 10–590 ms, no interval series,
    /// each pass fsync'ed (so the writeback part is not judged).
    fn iozone_run(ms: &[(&str, u64)]) -> RunFacts {
        let mut f = testutil::sync_write();
        f.sync_scope = Some(crate::SyncScope::EndOfPass);
        f.interval_ops = None;
        f.interval_ns = None;
        f.planned_ns = None;
        f.passes = Some(
            ms.iter()
                .map(|&(name, ms)| TimedPass {
                    name: name.into(),
                    elapsed_ns: ms * 1_000_000,
                })
                .collect(),
        );
        f.elapsed_ns = Some(ms.iter().map(|p| p.1 * 1_000_000).sum());
        f
    }

    #[test]
    fn fires_for_passes_too_short_to_measure() {
        let f = iozone_run(&[
            ("write", 590),
            ("rewrite", 120),
            ("read", 10),
            ("reread", 11),
            ("random read", 40),
            ("random write", 300),
        ]);
        let x = ShortRun.check(&f).expect("fires");
        assert_eq!(ev(&x, "passes"), 6);
        assert_eq!(x.evidence["short_passes"].as_array().unwrap().len(), 6);
        assert_eq!(ev(&x, "min_pass_ns"), 5 * SEC);
        assert_eq!(x.evidence["short_passes"][2]["name"], "read");
        assert_eq!(x.evidence["short_passes"][2]["elapsed_ns"], 10_000_000);
        assert!(
            x.explanation.contains(
                "6 of its 6 timed passes last less than 5.00 s (5 intervals of 1.00 s): \
                 write 590.00 ms, rewrite 120.00 ms, read 10.00 ms"
            ),
            "{}",
            x.explanation
        );
        assert!(
            !x.explanation.contains("full interval"),
            "{}",
            x.explanation
        );
        assert!(x.fix.contains("at least 5.00 s"), "{}", x.fix);
    }

    #[test]
    fn passes_long_enough_are_fine_and_only_the_short_ones_are_named() {
        let f = iozone_run(&[("write", 6000), ("read", 5000)]);
        assert_eq!(ShortRun.check(&f), None, "5 s is enough");
        let f = iozone_run(&[("write", 6000), ("read", 4999)]);
        let x = ShortRun.check(&f).expect("fires");
        assert!(x.explanation.contains("1 of its 2 timed passes"));
        assert!(x.explanation.contains("read 4.99 s") || x.explanation.contains("read 5.00 s"));
        assert!(!x.explanation.contains("write 6"));
        // With a series, the series decides (micro, WML, sqlite record one).
        let mut f = iozone_run(&[("write", 100)]);
        f.elapsed_ns = Some(20 * SEC);
        f.interval_ns = Some(SEC);
        f.interval_ops = Some(vec![100.0; 20]);
        assert_eq!(ShortRun.check(&f), None);
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
