//! A run's phases as a whole, from every rank's record: mdtest's rate (all ranks' items over
//! the first start to the last end), the window where every rank was running and the rate
//! inside it, first-done throughput as elbencho defines it, and the per-rank rates' min, max
//! and mean. Every rank's phase clock starts at the release of the phase's barrier, so the
//! ranks' times align; inside a 10 ms progress bucket items are taken as evenly spread.

use iolab_store::{Metric, RunRecord};

use crate::kind::METRICS;
use crate::run::Phase;

/// One rank's phase as its record holds it.
#[derive(Debug, Clone, PartialEq)]
pub struct RankPhase {
    pub items: f64,
    pub start_s: f64,
    pub end_s: f64,
    pub ops_per_s: f64,
    /// Items per bucket from the release.
    pub buckets: Vec<u64>,
    pub width_s: f64,
}

impl RankPhase {
    /// Items done by `t_s` from the release.
    fn done_by(&self, t_s: f64) -> f64 {
        if t_s >= self.end_s {
            return self.items;
        }
        if t_s <= 0.0 || self.width_s <= 0.0 {
            return 0.0;
        }
        let k = (t_s / self.width_s) as usize;
        let before: u64 = self.buckets.iter().take(k).sum();
        let inside = self.buckets.get(k).copied().unwrap_or(0) as f64;
        let frac = (t_s - k as f64 * self.width_s) / self.width_s;
        (before as f64 + inside * frac).min(self.items)
    }
}

/// `phase` of `rec`, when that rank ran it.
pub fn rank_phase(rec: &RunRecord, phase: Phase) -> Option<RankPhase> {
    let p = phase.name();
    let get = |k: &str| {
        let name = format!("{p}.{k}");
        rec.metrics.iter().find(|m| m.name == name).map(|m| m.value)
    };
    let series = rec.series.iter().find(|s| s.name == p)?;
    Some(RankPhase {
        items: get("items")?,
        start_s: get("start_s")?,
        end_s: get("end_s")?,
        ops_per_s: get("ops_per_s")?,
        buckets: series.ops.clone(),
        width_s: series.width_ns as f64 / 1e9,
    })
}

/// A phase's aggregates over `ranks`: (metric suffix, value).
pub fn aggregates(ranks: &[RankPhase]) -> Vec<(&'static str, f64)> {
    if ranks.is_empty() {
        return Vec::new();
    }
    let total: f64 = ranks.iter().map(|r| r.items).sum();
    let first_start = ranks
        .iter()
        .map(|r| r.start_s)
        .fold(f64::INFINITY, f64::min);
    let last_start = ranks.iter().map(|r| r.start_s).fold(0.0, f64::max);
    let first_end = ranks.iter().map(|r| r.end_s).fold(f64::INFINITY, f64::min);
    let last_end = ranks.iter().map(|r| r.end_s).fold(0.0, f64::max);
    let rate = |items: f64, secs: f64| if secs > 0.0 { items / secs } else { f64::NAN };
    let window_s = (first_end - last_start).max(0.0);
    let in_window: f64 = ranks
        .iter()
        .map(|r| r.done_by(first_end) - r.done_by(last_start))
        .sum();
    let first_done: f64 = ranks.iter().map(|r| r.done_by(first_end)).sum();
    let rates = ranks.iter().map(|r| r.ops_per_s);
    vec![
        ("agg_ops_per_s", rate(total, last_end - first_start)),
        ("last_done_s", last_end - first_start),
        ("window_s", window_s),
        ("window_ops_per_s", rate(in_window, window_s)),
        ("first_done_s", first_end - first_start),
        (
            "first_done_ops_per_s",
            rate(first_done, first_end - first_start),
        ),
        (
            "rank_min_ops_per_s",
            rates.clone().fold(f64::INFINITY, f64::min),
        ),
        (
            "rank_max_ops_per_s",
            rates.clone().fold(f64::NEG_INFINITY, f64::max),
        ),
        (
            "rank_mean_ops_per_s",
            rates.sum::<f64>() / ranks.len() as f64,
        ),
    ]
}

/// Every phase's aggregates from every rank's record (rank order), as metrics.
pub fn merge(records: &[RunRecord]) -> Vec<Metric> {
    let mut out = Vec::new();
    for phase in Phase::ALL {
        let ranks: Vec<RankPhase> = records
            .iter()
            .filter_map(|r| rank_phase(r, phase))
            .collect();
        if ranks.len() != records.len() {
            // Not every rank ran it (or none did).
            continue;
        }
        let aggregate = aggregates(&ranks);
        let agg = |k: &str| aggregate.iter().find(|(n, _)| *n == k).map(|(_, v)| *v);
        let sum = |k: &str| {
            let name = format!("{}.{k}", phase.name());
            records
                .iter()
                .filter_map(|r| r.metrics.iter().find(|m| m.name == name))
                .map(|m| m.value)
                .sum::<f64>()
        };
        // The run's own figures become all ranks': items summed, the rate and time over the
        // first start to the last end (mdtest's), the earliest start and the latest end.
        let whole = [
            ("items", Some(ranks.iter().map(|r| r.items).sum())),
            ("ops_per_s", agg("agg_ops_per_s")),
            ("elapsed_s", agg("last_done_s")),
            (
                "start_s",
                Some(
                    ranks
                        .iter()
                        .map(|r| r.start_s)
                        .fold(f64::INFINITY, f64::min),
                ),
            ),
            (
                "end_s",
                Some(ranks.iter().map(|r| r.end_s).fold(0.0, f64::max)),
            ),
            (
                "stonewall_items",
                matches!(phase, Phase::DirCreate | Phase::Create).then(|| sum("stonewall_items")),
            ),
        ];
        for (k, v) in whole
            .into_iter()
            .filter_map(|(k, v)| v.map(|v| (k, v)))
            .chain(aggregate.iter().copied())
        {
            let name = format!("{}.{k}", phase.name());
            out.push(iolab_kind::record::metric(&METRICS, &name, v));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rank(items: u64, end_s: f64) -> RankPhase {
        // Items evenly over [0, end_s) in 10 ms buckets.
        let n = (end_s / 0.01).ceil() as usize;
        let mut buckets = vec![items / n as u64; n];
        buckets[n - 1] += items - items / n as u64 * n as u64;
        RankPhase {
            items: items as f64,
            start_s: 0.0,
            end_s,
            ops_per_s: items as f64 / end_s,
            buckets,
            width_s: 0.01,
        }
    }

    #[test]
    fn a_straggler_shows_in_the_aggregates() {
        // Two ranks of 1000 items: one done in 1 s, the other in 2 s.
        let a = aggregates(&[rank(1000, 1.0), rank(1000, 2.0)]);
        let get = |k: &str| a.iter().find(|(n, _)| *n == k).unwrap().1;
        let close = |x: f64, y: f64| (x - y).abs() < 1e-6 * y.abs().max(1.0);
        assert!(close(get("agg_ops_per_s"), 1000.0), "{a:?}");
        assert!(close(get("window_s"), 1.0));
        // In the first second: 1000 + 500 items.
        assert!(close(get("window_ops_per_s"), 1500.0), "{a:?}");
        assert!(close(get("first_done_ops_per_s"), 1500.0));
        assert!(close(get("rank_min_ops_per_s"), 500.0));
        assert!(close(get("rank_max_ops_per_s"), 1000.0));
        assert!(close(get("rank_mean_ops_per_s"), 750.0));
    }

    #[test]
    fn progress_is_interpolated_inside_a_bucket() {
        let r = rank(1000, 1.0);
        assert!((r.done_by(0.005) - 5.0).abs() < 1e-9);
        assert_eq!(r.done_by(2.0), 1000.0);
        assert_eq!(r.done_by(0.0), 0.0);
    }
}
