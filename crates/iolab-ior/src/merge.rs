//! A phase's figures across ranks, from each rank's own record: IOR's aggregate (all the
//! bytes over the first rank's start to the last rank's end), the window in which every rank
//! was running and the rate inside it, elbencho's first-done and last-done throughput, and
//! the slowest, fastest and mean rank. Every rank's phase clock starts at the release of the
//! phase's barrier, so its times line up with the others'.

use iolab_store::{Metric, RunRecord, Series};

use crate::kind::METRICS;
use iolab_kind::record::metric;

const MIB: f64 = 1048576.0;

/// One rank's phase as the merge reads it. Times in seconds after the barrier's release.
#[derive(Debug, Clone)]
pub struct RankPhase<'a> {
    pub start: f64,
    pub end: f64,
    pub bytes: f64,
    /// Bytes per `width` seconds from the release; `None`: even progress assumed.
    pub progress: Option<(&'a [u64], f64)>,
}

impl RankPhase<'_> {
    /// Bytes done by time `t`, interpolated inside a progress bucket.
    pub fn done_at(&self, t: f64) -> f64 {
        if t <= self.start {
            return 0.0;
        }
        if t >= self.end {
            return self.bytes;
        }
        match self.progress {
            Some((buckets, width)) if width > 0.0 => {
                let k = (t / width).floor();
                let whole: u64 = buckets.iter().take(k as usize).sum();
                let part = buckets.get(k as usize).copied().unwrap_or(0) as f64 * (t / width - k);
                (whole as f64 + part).min(self.bytes)
            }
            _ => self.bytes * (t - self.start) / (self.end - self.start),
        }
    }

    fn rate(&self) -> f64 {
        per_second_mib(self.bytes, self.end - self.start)
    }
}

fn per_second_mib(bytes: f64, secs: f64) -> f64 {
    if secs > 0.0 {
        bytes / MIB / secs
    } else {
        f64::NAN
    }
}

/// The figures of phase `p` (`write`, `read`) that only a view across ranks gives: the
/// all-running window and its rate, first-done and last-done, the ranks' min/max/mean.
pub fn aggregates(p: &str, ranks: &[RankPhase<'_>]) -> Vec<Metric> {
    if ranks.is_empty() {
        return Vec::new();
    }
    let first_start = ranks.iter().map(|r| r.start).fold(f64::INFINITY, f64::min);
    let last_start = ranks
        .iter()
        .map(|r| r.start)
        .fold(f64::NEG_INFINITY, f64::max);
    let first_end = ranks.iter().map(|r| r.end).fold(f64::INFINITY, f64::min);
    let last_end = ranks
        .iter()
        .map(|r| r.end)
        .fold(f64::NEG_INFINITY, f64::max);
    let total: f64 = ranks.iter().map(|r| r.bytes).sum();
    let done = |t: f64| ranks.iter().map(|r| r.done_at(t)).sum::<f64>();
    let (window_s, window_rate) = if first_end > last_start {
        let w = first_end - last_start;
        (w, per_second_mib(done(first_end) - done(last_start), w))
    } else {
        // Some rank ended before another began: there is no such window.
        (0.0, f64::NAN)
    };
    let rates: Vec<f64> = ranks.iter().map(RankPhase::rate).collect();
    let mean = rates.iter().sum::<f64>() / rates.len() as f64;
    let min = rates.iter().copied().fold(f64::INFINITY, f64::min);
    let max = rates.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    [
        ("window_s", window_s),
        ("window_mib_per_s", window_rate),
        (
            "first_done_mib_per_s",
            per_second_mib(done(first_end), first_end - first_start),
        ),
        (
            "last_done_mib_per_s",
            per_second_mib(total, last_end - first_start),
        ),
        ("rank_min_mib_per_s", min),
        ("rank_max_mib_per_s", max),
        ("rank_mean_mib_per_s", mean),
    ]
    .into_iter()
    .map(|(n, v)| metric(METRICS, &format!("{p}.{n}"), v))
    .collect()
}

fn value(r: &RunRecord, name: &str) -> Option<f64> {
    r.metrics.iter().find(|m| m.name == name).map(|m| m.value)
}

fn series<'a>(r: &'a RunRecord, name: &str) -> Option<&'a Series> {
    r.series.iter().find(|s| s.name == name)
}

/// The run as a whole from every rank's record (rank order): per phase the sums, IOR's
/// aggregate rate, and [`aggregates`]; the common counts and rates over the phases' time.
pub fn merge(records: &[RunRecord]) -> Vec<Metric> {
    let mut out = Vec::new();
    let (mut bytes, mut ops, mut elapsed) = (0.0, 0.0, 0.0);
    for p in ["write", "read"] {
        let get = |r: &RunRecord, n: &str| value(r, &format!("{p}.{n}"));
        let ranks: Vec<(&RunRecord, RankPhase<'_>)> = records
            .iter()
            .filter_map(|r| {
                let phase = RankPhase {
                    start: get(r, "start_s")?,
                    end: get(r, "end_s")?,
                    bytes: get(r, "bytes")?,
                    progress: series(r, p).map(|s| (s.bytes.as_slice(), s.width_ns as f64 / 1e9)),
                };
                Some((r, phase))
            })
            .collect();
        if ranks.is_empty() {
            continue;
        }
        let sum = |n: &str| ranks.iter().filter_map(|(r, _)| get(r, n)).sum::<f64>();
        let max = |n: &str| {
            ranks
                .iter()
                .filter_map(|(r, _)| get(r, n))
                .fold(f64::NAN, f64::max)
        };
        let phases: Vec<RankPhase<'_>> = ranks.iter().map(|(_, ph)| ph.clone()).collect();
        let start = phases.iter().map(|r| r.start).fold(f64::INFINITY, f64::min);
        let end = phases
            .iter()
            .map(|r| r.end)
            .fold(f64::NEG_INFINITY, f64::max);
        let wall = end - start;
        let (b, o) = (sum("bytes"), sum("ops"));
        let lat_ops: f64 = ranks
            .iter()
            .filter_map(|(r, _)| Some(get(r, "lat_mean_ns")? * get(r, "ops")?))
            .sum();
        let mut named = vec![
            ("bytes", b),
            ("ops", o),
            ("start_s", start),
            ("end_s", end),
            ("elapsed_s", wall),
            ("mib_per_s", per_second_mib(b, wall)),
            ("ops_per_s", if wall > 0.0 { o / wall } else { f64::NAN }),
            ("open_s", max("open_s")),
            ("close_s", max("close_s")),
            ("stonewall_ops", sum("stonewall_ops")),
            ("lat_mean_ns", if o > 0.0 { lat_ops / o } else { f64::NAN }),
            ("lat_p99_ns", max("lat_p99_ns")),
            ("lat_max_ns", max("lat_max_ns")),
        ];
        if p == "read" {
            named.push(("stamp_errors", sum("stamp_errors")));
        }
        out.extend(
            named
                .into_iter()
                .map(|(n, v)| metric(METRICS, &format!("{p}.{n}"), v)),
        );
        out.extend(aggregates(p, &phases));
        bytes += b;
        ops += o;
        elapsed += wall;
    }
    if out.is_empty() {
        return out;
    }
    let common = iolab_metrics::COMMON;
    let rate = |x: f64| if elapsed > 0.0 { x / elapsed } else { f64::NAN };
    out.extend([
        metric(common, "bytes", bytes),
        metric(common, "ops", ops),
        metric(common, "elapsed_s", elapsed),
        metric(common, "mib_per_s", rate(bytes) / MIB),
        metric(common, "ops_per_s", rate(ops)),
    ]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(m: &[Metric], n: &str) -> f64 {
        m.iter().find(|x| x.name == n).unwrap().value
    }

    #[test]
    fn the_aggregates_of_two_ranks_that_overlap() {
        // Rank 0 moves 100 MiB evenly over 0..10 s, rank 1 100 MiB over 2..4 s.
        let mib = MIB;
        let ranks = [
            RankPhase {
                start: 0.0,
                end: 10.0,
                bytes: 100.0 * mib,
                progress: None,
            },
            RankPhase {
                start: 2.0,
                end: 4.0,
                bytes: 100.0 * mib,
                progress: None,
            },
        ];
        let m = aggregates("write", &ranks);
        // IOR's: 200 MiB over 10 s.
        assert_eq!(get(&m, "write.last_done_mib_per_s"), 20.0);
        // Both running in 2..4 s: 20 MiB of rank 0 and 100 of rank 1 in 2 s.
        assert_eq!(get(&m, "write.window_s"), 2.0);
        assert!((get(&m, "write.window_mib_per_s") - 60.0).abs() < 1e-9);
        // First done at 4 s: 40 + 100 MiB over 4 s.
        assert!((get(&m, "write.first_done_mib_per_s") - 35.0).abs() < 1e-9);
        assert_eq!(get(&m, "write.rank_min_mib_per_s"), 10.0);
        assert_eq!(get(&m, "write.rank_max_mib_per_s"), 50.0);
        assert_eq!(get(&m, "write.rank_mean_mib_per_s"), 30.0);
    }

    #[test]
    fn progress_is_interpolated_inside_a_bucket() {
        let buckets = [10, 30, 60];
        let r = RankPhase {
            start: 0.0,
            end: 0.03,
            bytes: 100.0,
            progress: Some((&buckets, 0.01)),
        };
        assert!((r.done_at(0.015) - 25.0).abs() < 1e-9);
        assert_eq!(r.done_at(0.0), 0.0);
        assert_eq!(r.done_at(1.0), 100.0);
    }

    #[test]
    fn ranks_that_never_ran_together_have_no_window() {
        let ranks = [
            RankPhase {
                start: 0.0,
                end: 1.0,
                bytes: 1.0,
                progress: None,
            },
            RankPhase {
                start: 2.0,
                end: 3.0,
                bytes: 1.0,
                progress: None,
            },
        ];
        let m = aggregates("read", &ranks);
        assert!(get(&m, "read.window_mib_per_s").is_nan());
    }
}
