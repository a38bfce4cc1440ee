//! filebench's result text with its own format strings (stats.c, `stats_snap`), so that
//! scripts that parse filebench output keep working:
//!
//! ```text
//! %4.3f: Per-Operation Breakdown
//! %-20s %dops %8.0lfops/s %5.1lfmb/s %8.3fms/op [%.3fms - %5.3fms]
//! %4.3f: IO Summary: %5d ops %5.3lf ops/s %0.0lf/%0.0lf rd/wr %5.1lfmb/s %5.3fms/op
//! ```
//!
//! With `enable lathist` each flowop line ends, as in filebench, with `\t[ ` and the 64 counts
//! of its latency histogram, each followed by a space, then `]`.
//!
//! Flowops are listed in reverse order of definition, as filebench's flowop list has them.
//! The leading timestamp is the run's elapsed time; rates divide by the measured interval.

use std::io::{self, Write};

use iolab_engine::stats::LatencyHistogram;

use super::RunReport;
use iolab_kind::output::Formatter;

/// filebench's `OSPROF_BUCKET_NUMBER`.
const LATHIST_BUCKETS: usize = 64;

pub struct Filebench;

impl Formatter<RunReport> for Filebench {
    fn write(&self, report: &RunReport, out: &mut dyn Write) -> io::Result<()> {
        let r = &report.run.result;
        let t = secs(r);
        writeln!(out, "{t:4.3}: Per-Operation Breakdown")?;
        for f in r.flowops.iter().rev() {
            let l = f.latency.summary();
            let (min, max) = if f.ops > 0 {
                (l.min_ns as f64 / 1e6, l.max_ns as f64 / 1e6)
            } else {
                (0.0, 0.0)
            };
            write!(
                out,
                "{:<20} {}ops {:8.0}ops/s {:5.1}mb/s {:8.3}ms/op [{:.3}ms - {:5.3}ms]",
                f.name,
                f.ops,
                f.ops as f64 / t,
                f.bytes as f64 / 1048576.0 / t,
                if f.ops > 0 { l.mean_ns / 1e6 } else { 0.0 },
                min,
                max
            )?;
            if report.lathist {
                write!(out, "\t[ ")?;
                for n in log2_buckets(&f.latency) {
                    write!(out, "{n} ")?;
                }
                write!(out, "]")?;
            }
            writeln!(out)?;
        }
        let (ops, rd, wr, bytes, lat) = r.io_summary();
        writeln!(
            out,
            "{t:4.3}: IO Summary: {ops:5} ops {:5.3} ops/s {:.0}/{:.0} rd/wr {:5.1}mb/s {:5.3}ms/op",
            ops as f64 / t,
            rd as f64 / t,
            wr as f64 / t,
            bytes as f64 / 1048576.0 / t,
            if ops > 0 { lat / ops as f64 / 1e6 } else { 0.0 }
        )
    }
}

/// filebench's latency histogram (flowop.c, `flowop_populate_distribution`): bucket `i` counts
/// the latencies `d` (ns) with `2^(i-1) ≤ d < 2^i`, bucket 0 those of 0 ns; the last bucket
/// also takes what would overflow it (filebench writes past its array there). Exact from the
/// HDR histogram: its buckets never straddle a power of two.
fn log2_buckets(h: &LatencyHistogram) -> [u64; LATHIST_BUCKETS] {
    let mut out = [0u64; LATHIST_BUCKETS];
    for (ns, count) in h.buckets() {
        let i = (u64::BITS - ns.leading_zeros()) as usize;
        out[i.min(LATHIST_BUCKETS - 1)] += count;
    }
    out
}

/// Seconds of the measured interval; filebench divides by it, so never by zero.
fn secs(r: &iolab_engine::workload::WorkloadResult) -> f64 {
    (r.elapsed_ns as f64 / 1e9).max(f64::MIN_POSITIVE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_buckets_are_filebench_s_powers_of_two() {
        let mut h = LatencyHistogram::coarse();
        // 1 → bucket 1; 2, 3 → 2; 1023 → 10; 1024 → 11; 1.5 ms → 21; an hour → 42.
        for ns in [1, 2, 3, 1023, 1024, 1_500_000, 3_600_000_000_000] {
            h.record(ns);
        }
        let b = log2_buckets(&h);
        let mut want = [0u64; 64];
        for (i, n) in [(1, 1), (2, 2), (10, 1), (11, 1), (21, 1), (42, 1)] {
            want[i] = n;
        }
        assert_eq!(b, want);
    }
}
