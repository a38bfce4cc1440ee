//! `straggler`: under MPI, one rank (or a few) ended well after the others.
//!
//! Needs: `ranks` with at least two ranks, their hosts and each one's timed region (Unix ns
//! on its host's clock, the start taken right after the barrier all ranks start at).
//!
//! Each rank's end is taken from the barrier's release: on one host from the first start
//! (one clock), across hosts from the rank's own start, since the hosts' clocks may be
//! offset from each other while the barrier released every rank at the same moment. Fires
//! (warning) when the last end is more than [`MAX_TAIL_SHARE`] of the wall time (the last
//! end) and more than [`MIN_TAIL_NS`] after the median rank's end; the ranks that far behind
//! the median are named. The median is what most ranks did, so a tail past it is a few
//! ranks' own: ten percent of the wall time is a tail that moves the aggregate rate by as
//! much, well beyond run-to-run noise; the floor keeps very short runs' jitter out.

use super::{rank_list, rank_spans, ranks, several_hosts};
use crate::{Check, Finding, RunFacts, Severity};
use iolab_util::units::format_ns;
use serde_json::json;

const ID: &str = "straggler";

/// The largest share of the wall time the last rank may end after the median (0.10).
pub const MAX_TAIL_SHARE: f64 = 0.10;

/// A tail of at most this never fires (1 ms).
pub const MIN_TAIL_NS: u64 = 1_000_000;

/// Stragglers named in the explanation (the evidence lists them all).
const NAMED: usize = 6;

/// See the [module documentation](self).
pub struct Straggler;

/// The median of `v` (not empty); the mean of the middle two for an even count.
fn median(v: &[u64]) -> u64 {
    let mut v = v.to_vec();
    v.sort_unstable();
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        let (a, b) = (v[n / 2 - 1], v[n / 2]);
        a / 2 + b / 2 + (a % 2 + b % 2) / 2
    }
}

impl Check for Straggler {
    fn id(&self) -> &'static str {
        ID
    }

    fn check(&self, f: &RunFacts) -> Option<Finding> {
        let r = ranks(f)?;
        let spans = rank_spans(r)?;
        let several = several_hosts(r);
        let first_start = spans.iter().map(|t| t[0]).min()?;
        let ends: Vec<u64> = spans
            .iter()
            .map(|&[s, e]| e - if several { s } else { first_start })
            .collect();
        let wall = *ends.iter().max()?;
        let mid = median(&ends);
        let tail = wall - mid;
        let limit = MAX_TAIL_SHARE * wall as f64;
        if tail <= MIN_TAIL_NS || tail as f64 <= limit {
            return None;
        }
        let mut late: Vec<usize> = (0..ends.len())
            .filter(|&i| ends[i].saturating_sub(mid) as f64 > limit)
            .collect();
        late.sort_by_key(|&i| std::cmp::Reverse(ends[i]));
        let mut named: Vec<String> = late
            .iter()
            .take(NAMED)
            .map(|&i| {
                format!(
                    "rank {i} on {} {} after",
                    r.hosts[i],
                    format_ns(ends[i].saturating_sub(mid) as f64)
                )
            })
            .collect();
        if late.len() > NAMED {
            named.push("…".into());
        }
        let mut hosts: Vec<&str> = late.iter().map(|&i| r.hosts[i].as_str()).collect();
        hosts.sort_unstable();
        hosts.dedup();
        let share = tail as f64 / wall as f64;
        Some(Finding {
            id: ID,
            severity: Severity::Warning,
            evidence: json!({
                "ranks": ends.len(),
                "stragglers": late.iter().map(|&i| json!({
                    "rank": i,
                    "host": r.hosts[i],
                    "after_median_ns": ends[i].saturating_sub(mid),
                })).collect::<Vec<_>>(),
                "straggler_hosts": hosts,
                "median_end_ns": mid,
                "tail_ns": tail,
                "wall_ns": wall,
                "tail_share": share,
                "several_hosts": several,
                "max_tail_share": MAX_TAIL_SHARE,
                "min_tail_ns": MIN_TAIL_NS,
            }),
            explanation: format!(
                "{} of the {} ranks ended more than {:.0}% of the wall time after the median \
                 rank ({}), the last {} after it: {:.1}% of the {} from the barrier to the last \
                 end{}. The honest aggregate (all ranks' work from the first start to the last \
                 end) charges that tail to every rank, as if all had waited for the slowest; \
                 the first-done rate (all work until the first rank finished) against the \
                 last-done rate shows how much.",
                late.len(),
                ends.len(),
                MAX_TAIL_SHARE * 100.0,
                named.join(", "),
                format_ns(tail as f64),
                share * 100.0,
                format_ns(wall as f64),
                if several {
                    " (each rank timed from its own start: the hosts' clocks may differ)"
                } else {
                    ""
                },
            ),
            fix: format!(
                "Look at {} ({}): its device, other load, its network, or more work given \
                 to it. To measure the tail on purpose, run with a `stonewall` and `wear_out = \
                 true` (IOR's stonewalling wear-out: every rank then does as much as the \
                 busiest had at the deadline), and quote first-done beside last-done.",
                hosts.join(", "),
                rank_list(late.iter().copied()),
            ),
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
    fn names_the_rank_that_ended_late() {
        // Four ranks, 10 s each, rank 3 on n2 ran 3 s longer.
        let f = ranked(
            &["n1", "n1", "n2", "n2"],
            &[
                [T0, T0 + 10 * SEC],
                [T0, T0 + 10 * SEC + 100 * MS],
                [T0 + 7 * SEC, T0 + 17 * SEC],
                [T0 + 7 * SEC, T0 + 20 * SEC],
            ],
        );
        let x = Straggler.check(&f).expect("fires");
        assert_eq!(x.severity, Severity::Warning);
        // Across hosts each rank is timed from its own start (n2's clock is 7 s ahead).
        assert_eq!(ev(&x, "wall_ns"), 13 * SEC);
        assert_eq!(ev(&x, "median_end_ns"), 10 * SEC + 50 * MS);
        assert_eq!(ev(&x, "tail_ns"), 2 * SEC + 950 * MS);
        close(ev_f64(&x, "tail_share"), 2.95 / 13.0);
        assert_eq!(ev(&x, "stragglers")[0]["rank"], 3);
        assert_eq!(ev(&x, "stragglers")[0]["host"], "n2");
        assert_eq!(ev(&x, "stragglers").as_array().unwrap().len(), 1);
        assert!(
            x.explanation
                .contains("1 of the 4 ranks ended more than 10% of the wall time after the median rank (rank 3 on n2 2.95 s after)"),
            "{}",
            x.explanation
        );
        assert!(x.explanation.contains("clocks may differ"));
        assert!(x.fix.starts_with("Look at n2 (rank 3)"), "{}", x.fix);
        assert!(x.fix.contains("`wear_out = true`"), "{}", x.fix);
    }

    #[test]
    fn on_one_host_ends_count_from_the_first_start() {
        // Rank 1 started 3 s late and ran as long as rank 0: on one clock it ended late.
        let f = ranked(
            &["n1", "n1"],
            &[[T0, T0 + 10 * SEC], [T0 + 3 * SEC, T0 + 13 * SEC]],
        );
        let x = Straggler.check(&f).expect("fires");
        assert_eq!(ev(&x, "wall_ns"), 13 * SEC);
        // Of two ranks the median is their mean: the tail is half their difference.
        assert_eq!(ev(&x, "median_end_ns"), 11 * SEC + 500 * MS);
        assert_eq!(ev(&x, "stragglers")[0]["rank"], 1);
        assert!(!x.explanation.contains("clocks may differ"));
        // The same on two hosts is a clock offset, not a straggler.
        let f = ranked(
            &["n1", "n2"],
            &[[T0, T0 + 10 * SEC], [T0 + 3 * SEC, T0 + 13 * SEC]],
        );
        assert_eq!(Straggler.check(&f), None);
    }

    #[test]
    fn silent_when_the_ranks_end_together_or_most_are_late() {
        // 0.9 s past the median of a 10.9 s run: 8 %.
        let f = ranked(
            &["n1", "n1", "n1"],
            &[
                [T0, T0 + 10 * SEC],
                [T0, T0 + 10 * SEC],
                [T0, T0 + 10 * SEC + 900 * MS],
            ],
        );
        assert_eq!(Straggler.check(&f), None);
        // Most ranks ended late: the median is late too, no one is a straggler.
        let f = ranked(
            &["n1", "n1", "n1"],
            &[[T0, T0 + 5 * SEC], [T0, T0 + 10 * SEC], [T0, T0 + 10 * SEC]],
        );
        assert_eq!(Straggler.check(&f), None);
        // 0.5 ms tail of a 2 ms run: under the floor.
        let f = ranked(&["n1", "n1"], &[[T0, T0 + MS], [T0, T0 + 2 * MS]]);
        assert_eq!(Straggler.check(&f), None);
    }

    #[test]
    fn odd_or_missing_facts_are_undecidable() {
        let tail = [[T0, T0 + SEC], [T0, T0 + 3 * SEC]];
        assert!(Straggler.check(&ranked(&["a", "a"], &tail)).is_some());
        assert_eq!(Straggler.check(&ranked(&["a"], &tail[..1])), None);
        assert_eq!(Straggler.check(&ranked(&["a", "a"], &[])), None);
        assert_eq!(Straggler.check(&ranked(&["a", "a", "a"], &tail)), None);
        let backwards = [[T0, T0 + SEC], [T0 + 3 * SEC, T0]];
        assert_eq!(Straggler.check(&ranked(&["a", "b"], &backwards)), None);
        assert_eq!(
            Straggler.check(&ranked(&["a", "a"], &[[0, 0], [0, 0]])),
            None
        );
        let extremes = [[0, u64::MAX], [u64::MAX, u64::MAX]];
        assert!(Straggler.check(&ranked(&["a", "a"], &extremes)).is_none());
        assert_eq!(Straggler.check(&RunFacts::default()), None);
    }

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&[3, 1, 2]), 2);
        assert_eq!(median(&[4, 1, 3, 2]), 2);
        assert_eq!(median(&[u64::MAX, u64::MAX]), u64::MAX);
        assert_eq!(median(&[1, 2]), 1);
    }
}
