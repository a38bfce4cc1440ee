//! What a run measured: per-record latency histograms (HDR, nanoseconds), per-interval op and
//! byte counts, and the CPU usage of the threads that did the work. Each thread fills its own
//! [`ThreadStats`] without locks; they are merged after the run.

use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use serde::Serialize;

use crate::usage::Usage;

/// Latencies up to one hour are recorded exactly to 3 significant digits; longer ones saturate.
const MAX_LATENCY_NS: u64 = 3_600_000_000_000;

/// An HDR histogram of latencies in nanoseconds (Gil Tene's HdrHistogram: constant-time
/// recording, bounded relative error, mergeable — unlike fio's fixed buckets).
#[derive(Debug, Clone)]
pub struct LatencyHistogram(Histogram<u64>);

impl Default for LatencyHistogram {
    fn default() -> Self {
        LatencyHistogram(Histogram::new_with_bounds(1, MAX_LATENCY_NS, 3).expect("valid bounds"))
    }
}

impl LatencyHistogram {
    /// Two significant digits (1% buckets, ~37 KiB instead of ~270 KiB): for per-flowop,
    /// per-thread histograms of workloads with hundreds of threads.
    pub fn coarse() -> LatencyHistogram {
        LatencyHistogram(Histogram::new_with_bounds(1, MAX_LATENCY_NS, 2).expect("valid bounds"))
    }

    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.0.saturating_record(ns.max(1));
    }

    pub fn merge(&mut self, other: &LatencyHistogram) {
        // Same bounds on both sides, so adding cannot fail.
        let _ = self.0.add(&other.0);
    }

    pub fn count(&self) -> u64 {
        self.0.len()
    }

    pub fn summary(&self) -> LatencySummary {
        let h = &self.0;
        if h.is_empty() {
            return LatencySummary::default();
        }
        LatencySummary {
            count: h.len(),
            mean_ns: h.mean(),
            stdev_ns: h.stdev(),
            min_ns: h.min(),
            p50_ns: h.value_at_quantile(0.50),
            p90_ns: h.value_at_quantile(0.90),
            p99_ns: h.value_at_quantile(0.99),
            p999_ns: h.value_at_quantile(0.999),
            max_ns: h.max(),
        }
    }

    /// Non-empty buckets as `(highest equivalent value in ns, count)`, for export.
    pub fn buckets(&self) -> Vec<(u64, u64)> {
        self.0
            .iter_recorded()
            .map(|v| {
                (
                    self.0.highest_equivalent(v.value_iterated_to()),
                    v.count_at_value(),
                )
            })
            .collect()
    }
}

/// Percentiles and moments of one histogram (values are the histogram's, ±0.1%): the
/// record's type, so a kind stores what the engine measured as it is.
pub use iolab_kind::record::LatencyStats as LatencySummary;

/// Work completed in one interval of the run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Bucket {
    pub ops: u64,
    pub bytes: u64,
}

/// Counts ops and bytes per fixed interval of a clock given as plain numbers (nanoseconds,
/// or TSC ticks in a record loop): the hot path is one comparison and two additions.
#[derive(Debug, Clone)]
pub struct IntervalCounter {
    width: u64,
    next: u64,
    current: Bucket,
    done: Vec<Bucket>,
}

impl IntervalCounter {
    /// Buckets of `width` units starting at `start`.
    pub fn new(start: u64, width: u64, expected: usize) -> IntervalCounter {
        IntervalCounter {
            width: width.max(1),
            next: start + width.max(1),
            current: Bucket::default(),
            done: Vec::with_capacity(expected.min(1 << 16)),
        }
    }

    #[inline]
    pub fn add(&mut self, now: u64, ops: u64, bytes: u64) {
        if now >= self.next {
            self.roll(now);
        }
        self.current.ops += ops;
        self.current.bytes += bytes;
    }

    #[cold]
    fn roll(&mut self, now: u64) {
        while now >= self.next {
            self.done.push(std::mem::take(&mut self.current));
            self.next += self.width;
        }
    }

    /// Closes the series at `end`; the last bucket may be partial.
    pub fn finish(mut self, end: u64) -> Vec<Bucket> {
        self.roll(end);
        if self.current != Bucket::default() || end > self.next - self.width {
            self.done.push(self.current);
        }
        self.done
    }
}

/// [`IntervalCounter`] on the monotonic clock, from a common start instant, so the buckets of
/// all threads line up and can be summed.
#[derive(Debug, Clone)]
pub struct IntervalRecorder {
    start: Instant,
    counter: IntervalCounter,
}

impl IntervalRecorder {
    pub fn new(start: Instant, width: Duration, expected: usize) -> IntervalRecorder {
        IntervalRecorder {
            start,
            counter: IntervalCounter::new(0, width.as_nanos() as u64, expected),
        }
    }

    #[inline]
    pub fn add(&mut self, now: Instant, ops: u64, bytes: u64) {
        let ns = now.saturating_duration_since(self.start).as_nanos() as u64;
        self.counter.add(ns, ops, bytes);
    }

    /// Closes the series at `end`; the last bucket may be partial.
    pub fn finish(self, end: Instant) -> Vec<Bucket> {
        let ns = end.saturating_duration_since(self.start).as_nanos() as u64;
        self.counter.finish(ns)
    }
}

/// Sums per-thread interval series bucket by bucket.
pub fn merge_intervals(series: &[Vec<Bucket>]) -> Vec<Bucket> {
    let len = series.iter().map(Vec::len).max().unwrap_or(0);
    let mut out = vec![Bucket::default(); len];
    for s in series {
        for (o, b) in out.iter_mut().zip(s) {
            o.ops += b.ops;
            o.bytes += b.bytes;
        }
    }
    out
}

/// Everything one worker thread measured.
#[derive(Debug, Clone, Default)]
pub struct ThreadStats {
    /// Records completed.
    pub ops: u64,
    /// Bytes moved by completed records.
    pub bytes: u64,
    /// Latency of each record, including its per-record sync.
    pub latency: LatencyHistogram,
    /// Latency of the per-record sync calls alone (synchronous engines).
    pub sync_latency: LatencyHistogram,
    /// Duration of the sync that ends a write pass (inside the timed region).
    pub final_sync_ns: u64,
    /// Time from the common start to this thread's last completion.
    pub elapsed_ns: u64,
    pub intervals: Vec<Bucket>,
    pub usage: Usage,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_percentiles_and_merge() {
        let mut a = LatencyHistogram::default();
        let mut b = LatencyHistogram::default();
        for v in 1..=1000u64 {
            a.record(v * 1000);
        }
        b.record(5_000_000);
        a.merge(&b);
        let s = a.summary();
        assert_eq!(s.count, 1001);
        // The 501st of 1001 values is 501 µs; HDR keeps 3 significant digits.
        assert!(
            (s.p50_ns as f64 - 501_000.0).abs() / 501_000.0 < 0.001,
            "{s:?}"
        );
        assert!(s.max_ns >= 5_000_000 && s.max_ns < 5_010_000);
        assert_eq!(a.buckets().iter().map(|b| b.1).sum::<u64>(), 1001);
    }

    #[test]
    fn intervals_roll_and_merge() {
        let start = Instant::now();
        let w = Duration::from_millis(10);
        let mut r = IntervalRecorder::new(start, w, 4);
        r.add(start + Duration::from_millis(1), 1, 10);
        r.add(start + Duration::from_millis(9), 1, 10);
        r.add(start + Duration::from_millis(25), 1, 10); // skips into the third bucket
        let s = r.finish(start + Duration::from_millis(27));
        assert_eq!(
            s,
            vec![
                Bucket { ops: 2, bytes: 20 },
                Bucket { ops: 0, bytes: 0 },
                Bucket { ops: 1, bytes: 10 }
            ]
        );
        let m = merge_intervals(&[s.clone(), vec![Bucket { ops: 5, bytes: 1 }]]);
        assert_eq!(m[0], Bucket { ops: 7, bytes: 21 });
        assert_eq!(m.len(), 3);
    }
}
