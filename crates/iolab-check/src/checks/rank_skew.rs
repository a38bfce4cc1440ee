//! `rank-skew`: under MPI, the ranks did not start their timed regions together.
//!
//! Needs: `ranks` with at least two ranks, their hosts and each one's timed region (Unix ns
//! on its host's clock, the start taken right after the barrier all ranks start at).
//!
//! Fires (warning) when the starts are spread (latest − earliest) by more than
//! [`MAX_SKEW_SHARE`] of the wall time (earliest start to latest end) and by more than
//! [`MIN_SKEW_NS`]. The aggregate rates divide all ranks' work by that wall time, so they
//! count the spread as time in which every rank worked. Two percent is where that starts
//! to show in a figure quoted to two digits; the absolute floor keeps microsecond jitter of
//! very short runs from firing. On one host the spread is the ranks' own skew; across hosts
//! each start is on its own host's clock, so the spread includes the clocks' offsets, which
//! the check cannot tell apart from skew (it says so).

use super::{rank_list, rank_spans, ranks, several_hosts};
use crate::{Check, Finding, RunFacts, Severity};
use iolab_util::units::format_ns;
use serde_json::json;

const ID: &str = "rank-skew";

/// The largest share of the wall time the starts may be spread over (0.02 = 2 %).
pub const MAX_SKEW_SHARE: f64 = 0.02;

/// A spread of at most this never fires (1 ms).
pub const MIN_SKEW_NS: u64 = 1_000_000;

/// See the [module documentation](self).
pub struct RankSkew;

impl Check for RankSkew {
    fn id(&self) -> &'static str {
        ID
    }

    fn check(&self, f: &RunFacts) -> Option<Finding> {
        let r = ranks(f)?;
        let spans = rank_spans(r)?;
        let (first, &[first_start, _]) = spans.iter().enumerate().min_by_key(|(_, t)| t[0])?;
        let (last, &[last_start, _]) = spans.iter().enumerate().max_by_key(|(_, t)| t[0])?;
        let last_end = spans.iter().map(|t| t[1]).max()?;
        let spread = last_start - first_start;
        let wall = last_end - first_start;
        let share = spread as f64 / wall as f64;
        if spread <= MIN_SKEW_NS || share <= MAX_SKEW_SHARE {
            return None;
        }
        let several = several_hosts(r);
        let mut hosts: Vec<&str> = r.hosts.iter().map(String::as_str).collect();
        hosts.sort_unstable();
        hosts.dedup();
        let late: Vec<usize> = (0..spans.len())
            .filter(|&i| spans[i][0] - first_start > MIN_SKEW_NS)
            .collect();
        let clocks = if several {
            format!(
                "The ranks ran on {} hosts and each start is on its own host's clock: the \
                 spread includes the offsets between those clocks, and this check cannot \
                 tell a skew from a clock offset.",
                hosts.len()
            )
        } else {
            format!(
                "All ranks ran on {}, on one clock: this is the ranks' own skew, some left \
                 the barrier late (more ranks than free CPUs, or other load).",
                hosts[0]
            )
        };
        Some(Finding {
            id: ID,
            severity: Severity::Warning,
            evidence: json!({
                "ranks": spans.len(),
                "hosts": hosts,
                "several_hosts": several,
                "spread_ns": spread,
                "wall_ns": wall,
                "spread_share": share,
                "first_rank": first,
                "first_host": r.hosts[first],
                "last_rank": last,
                "last_host": r.hosts[last],
                "late_ranks": late,
                "max_skew_share": MAX_SKEW_SHARE,
                "min_skew_ns": MIN_SKEW_NS,
            }),
            explanation: format!(
                "The ranks started up to {} apart (rank {first} on {} first, rank {last} on \
                 {} last; {} more than {} after the first), {:.1}% of the run's wall \
                 time of {} from the first start to the last end: the aggregate rates count \
                 that time as if every rank was running in it. {clocks}",
                format_ns(spread as f64),
                r.hosts[first],
                r.hosts[last],
                rank_list(late.iter().copied()),
                format_ns(MIN_SKEW_NS as f64),
                share * 100.0,
                format_ns(wall as f64),
            ),
            fix: if several {
                "Synchronise the hosts' clocks (chrony or PTP; `chronyc tracking` shows the \
                 offset): if they then agree to much less than the spread, the skew is real \
                 — give every rank a free CPU. Quote the all-running window's rate (ior's \
                 `window_mib_per_s`, mdtest's `window_ops_per_s`) beside the aggregate."
                    .into()
            } else {
                "Give every rank a CPU of its own (fewer ranks than free CPUs, no other load), \
                 and quote the all-running window's rate (ior's `window_mib_per_s`, mdtest's \
                 `window_ops_per_s`) beside the aggregate."
                    .into()
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::ranked;
    use crate::testutil::{close, ev, ev_f64, SEC};

    const MS: u64 = 1_000_000;
    const T0: u64 = 1_700_000_000 * SEC;

    #[test]
    fn fires_for_starts_spread_over_more_than_the_share() {
        // 10 s run, rank 2 started 500 ms late: 4.8 % of the 10.4 s wall time.
        let f = ranked(
            &["n1", "n1", "n1", "n1"],
            &[
                [T0, T0 + 10 * SEC],
                [T0 + MS / 2, T0 + 10 * SEC],
                [T0 + 500 * MS, T0 + 10 * SEC + 400 * MS],
                [T0 + MS / 4, T0 + 10 * SEC],
            ],
        );
        let x = RankSkew.check(&f).expect("fires");
        assert_eq!(x.severity, Severity::Warning);
        assert_eq!(ev(&x, "spread_ns"), 500 * MS);
        assert_eq!(ev(&x, "wall_ns"), 10 * SEC + 400 * MS);
        close(ev_f64(&x, "spread_share"), 0.5 / 10.4);
        assert_eq!(ev(&x, "first_rank"), 0);
        assert_eq!(ev(&x, "last_rank"), 2);
        assert_eq!(ev(&x, "late_ranks"), &json!([2]));
        assert_eq!(ev(&x, "several_hosts"), false);
        assert!(
            x.explanation.contains(
                "up to 500.00 ms apart (rank 0 on n1 first, rank 2 on n1 last; rank 2 more \
                 than 1.00 ms after the first), 4.8%"
            ),
            "{}",
            x.explanation
        );
        assert!(x.explanation.contains("on one clock"), "{}", x.explanation);
        assert!(x.fix.contains("CPU of its own"), "{}", x.fix);
    }

    #[test]
    fn across_hosts_it_says_the_clocks_may_differ() {
        let f = ranked(
            &["n1", "n2"],
            &[[T0, T0 + 2 * SEC], [T0 + 300 * MS, T0 + 2 * SEC]],
        );
        let x = RankSkew.check(&f).expect("fires");
        assert_eq!(ev(&x, "several_hosts"), true);
        assert_eq!(ev(&x, "hosts"), &json!(["n1", "n2"]));
        assert!(
            x.explanation
                .contains("cannot tell a skew from a clock offset"),
            "{}",
            x.explanation
        );
        assert!(x.fix.starts_with("Synchronise the hosts' clocks"));
    }

    #[test]
    fn silent_within_the_thresholds() {
        // 150 ms of 10 s: 1.5 %.
        let f = ranked(
            &["n1", "n1"],
            &[[T0, T0 + 10 * SEC], [T0 + 150 * MS, T0 + 10 * SEC]],
        );
        assert_eq!(RankSkew.check(&f), None);
        // 0.9 ms of a 10 ms run is 9 %, but under the absolute floor.
        let f = ranked(
            &["n1", "n1"],
            &[[T0, T0 + 10 * MS], [T0 + 900_000, T0 + 10 * MS]],
        );
        assert_eq!(RankSkew.check(&f), None);
        // Together to the nanosecond.
        let f = ranked(&["n1", "n1"], &[[T0, T0 + SEC], [T0, T0 + SEC]]);
        assert_eq!(RankSkew.check(&f), None);
    }

    #[test]
    fn odd_or_missing_facts_are_undecidable() {
        let late = [[T0, T0 + SEC], [T0 + 500 * MS, T0 + SEC]];
        assert!(RankSkew.check(&ranked(&["a", "a"], &late)).is_some());
        // One rank, no timings, lengths that disagree, an end before its start.
        assert_eq!(RankSkew.check(&ranked(&["a"], &late[..1])), None);
        assert_eq!(RankSkew.check(&ranked(&["a", "a"], &[])), None);
        assert_eq!(RankSkew.check(&ranked(&["a", "a", "a"], &late)), None);
        assert_eq!(RankSkew.check(&ranked(&[], &[])), None);
        let backwards = [[T0, T0 + SEC], [T0 + 500 * MS, T0]];
        assert_eq!(RankSkew.check(&ranked(&["a", "a"], &backwards)), None);
        let zeros = [[0, 0], [0, 0]];
        assert_eq!(RankSkew.check(&ranked(&["a", "a"], &zeros)), None);
        assert_eq!(RankSkew.check(&RunFacts::default()), None);
    }
}
