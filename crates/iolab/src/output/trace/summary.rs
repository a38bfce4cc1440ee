//! What was traced, in a few lines: requests by kind with sizes and latencies, flags,
//! sequentiality, in-flight depth, a size histogram, throughput peaks, lost events.

use std::io::{self, Write};
use std::process::ExitStatus;

use iolab_blocktrace::{BlockTrace, DirStats, LatencySummary, OpStats};
use iolab_util::units::format_bytes;

use super::{command_line, TraceReport};
use crate::output::{durations, Formatter};
use iolab_util::units::format_ns;
use iolab_util::units::thousands;

fn mib(bytes: u64) -> f64 {
    bytes as f64 / 1048576.0
}

fn pct(x: Option<f64>) -> String {
    x.map_or_else(|| "-".into(), |f| format!("{:.1}%", f * 100.0))
}

fn lat_cols(l: &Option<LatencySummary>) -> String {
    match l {
        Some(l) => format!(
            "{:>10} {:>10} {:>10}",
            format_ns(l.p50_ns as f64),
            format_ns(l.p99_ns as f64),
            format_ns(l.max_ns as f64)
        ),
        None => String::new(),
    }
}

fn dir_row(out: &mut dyn Write, name: &str, d: &DirStats) -> io::Result<()> {
    let avg = d
        .bytes
        .checked_div(d.requests)
        .map_or_else(|| "-".into(), format_bytes);
    let row = format!(
        "  {name:<12} {:>10} {:>11.2} {:>10}  {}",
        thousands(d.requests),
        mib(d.bytes),
        avg,
        lat_cols(&d.latency)
    );
    writeln!(out, "{}", row.trim_end())
}

fn op_row(out: &mut dyn Write, name: &str, o: &OpStats, bytes: bool) -> io::Result<()> {
    let b = if bytes {
        format!("{:>11.2}", mib(o.bytes))
    } else {
        format!("{:>11}", "")
    };
    let row = format!(
        "  {name:<12} {:>10} {b} {:>10}  {}",
        thousands(o.requests),
        "",
        lat_cols(&o.latency)
    );
    writeln!(out, "{}", row.trim_end())
}

/// The readable summary.
pub struct Summary;

impl Formatter<TraceReport> for Summary {
    fn write(&self, r: &TraceReport, out: &mut dyn Write) -> io::Result<()> {
        write_summary(&r.trace, &r.ran.command, r.ran.status, out)
    }
}

fn write_summary(
    t: &BlockTrace,
    command: &[String],
    status: Option<ExitStatus>,
    out: &mut dyn Write,
) -> io::Result<()> {
    let d = &t.device;
    let what = match &d.partition {
        Some(p) => format!(
            "{} ({}, sectors {}..{} of {} {})",
            d.name,
            d.dev,
            p.start,
            p.start + p.sectors,
            d.disk,
            d.disk_dev
        ),
        None => format!("{} ({})", d.name, d.dev),
    };
    writeln!(
        out,
        "iolab trace: {what}, {:.3} s",
        t.duration_ns as f64 / 1e9
    )?;
    command_line(command, status, out)?;
    writeln!(
        out,
        "  {:<12} {:>10} {:>11} {:>10}  {:>10} {:>10} {:>10}",
        "requests", "count", "MiB", "avg size", "p50", "p99", "max"
    )?;
    dir_row(out, "reads", &t.reads)?;
    dir_row(out, "writes", &t.writes)?;
    op_row(out, "flushes", &t.flushes, false)?;
    op_row(out, "FUA writes", &t.fua, true)?;
    op_row(out, "discards", &t.discards, true)?;
    if t.other.requests > 0 {
        op_row(out, "other", &t.other, true)?;
    }
    writeln!(
        out,
        "  flags        sync {}, meta {}, read-ahead {}",
        thousands(t.sync),
        thousands(t.meta),
        thousands(t.readahead)
    )?;
    if let Some(b) = &t.bios {
        writeln!(
            out,
            "  bios         {} queued ({:.2} MiB read, {:.2} MiB written), {} with preflush, {} with FUA",
            thousands(b.bios),
            mib(b.read_bytes),
            mib(b.write_bytes),
            thousands(b.preflush),
            thousands(b.fua)
        )?;
    }
    writeln!(
        out,
        "  sequential   reads {}, writes {}",
        pct(t.reads.sequential_fraction()),
        pct(t.writes.sequential_fraction())
    )?;
    if let Some(l) = &t.latency {
        writeln!(
            out,
            "  latency      issue→complete, reads+writes: {}",
            durations(&[
                ("mean", l.mean_ns),
                ("p50", l.p50_ns as f64),
                ("p90", l.p90_ns as f64),
                ("p99", l.p99_ns as f64),
                ("max", l.max_ns as f64),
            ])
        )?;
    }
    if let Some(q) = &t.queue_time {
        writeln!(
            out,
            "  queue time   insert→issue, {} requests: {}",
            thousands(q.count),
            durations(&[
                ("p50", q.p50_ns as f64),
                ("p99", q.p99_ns as f64),
                ("max", q.max_ns as f64),
            ])
        )?;
    }
    let busiest = t
        .intervals
        .iter()
        .map(|i| i.mean_inflight)
        .fold(0.0, f64::max);
    writeln!(
        out,
        "  in flight    max {}, busiest interval mean {busiest:.2}",
        t.max_inflight
    )?;
    if t.sizes.total() > 0 {
        writeln!(out, "  request sizes (reads + writes)")?;
        let max = t.sizes.buckets.iter().map(|b| b.count).max().unwrap_or(1);
        for b in &t.sizes.buckets {
            let range = if b.low == 0 {
                "0".to_owned()
            } else {
                format!("{} .. {}", format_bytes(b.low), format_bytes(b.low * 2))
            };
            let bar = "#".repeat(((b.count * 40).div_ceil(max)) as usize);
            writeln!(out, "    {range:>20} {:>10}  {bar}", thousands(b.count))?;
        }
    }
    if t.intervals.len() > 1 {
        let secs = t.interval_ns as f64 / 1e9;
        let peak = |f: fn(&iolab_blocktrace::IntervalStats) -> u64| {
            t.intervals.iter().map(f).max().unwrap_or(0) as f64 / secs / 1048576.0
        };
        writeln!(
            out,
            "  throughput   peak {:.1} MiB/s read, {:.1} MiB/s write ({} intervals of {})",
            peak(|i| i.read_bytes),
            peak(|i| i.write_bytes),
            t.intervals.len(),
            format_ns(t.interval_ns as f64)
        )?;
    }
    let lost = if t.lost.total > 0 {
        " (raise --buffer-kb: the numbers above miss these)"
    } else {
        ""
    };
    writeln!(out, "  lost events  {}{lost}", thousands(t.lost.total))?;
    let mut notes = Vec::new();
    if t.unmatched_completions > 0 {
        notes.push(format!(
            "{} completions without their issue",
            thousands(t.unmatched_completions)
        ));
    }
    if t.in_flight_at_end > 0 {
        notes.push(format!(
            "{} requests still in flight at the end",
            thousands(t.in_flight_at_end)
        ));
    }
    if t.errors > 0 {
        notes.push(format!("{} requests failed", thousands(t.errors)));
    }
    if t.events.unparsed > 0 {
        notes.push(format!(
            "{} trace lines not understood",
            thousands(t.events.unparsed)
        ));
    }
    if !notes.is_empty() {
        writeln!(out, "  note         {}", notes.join("; "))?;
    }
    Ok(())
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use iolab_blocktrace::{Summarizer, TraceDevice};
    use iolab_sys::DevT;

    pub fn sample() -> BlockTrace {
        let mut s = Summarizer::new(
            TraceDevice::whole("loop1", DevT::new(7, 1)),
            1_000_000_000,
            1_000_000_000,
            false,
        );
        for l in [
            "dd-1 [000] ..... 1.000100: block_rq_issue: 7,1 WS 1048576 () 0 + 2048 be,0,4 [dd]",
            "dd-1 [000] ..... 1.000600: block_rq_complete: 7,1 WS () 0 + 2048 be,0,4 [0]",
            "dd-1 [000] ..... 1.000700: block_rq_issue: 7,1 FF 0 () 0 + 0 none,0,0 [kworker]",
            "dd-1 [000] ..... 1.000900: block_rq_complete: 7,1 FF () 18446744073709551615 + 0 none,0,0 [0]",
            "dd-1 [000] ..... 1.001000: block_rq_complete: 7,1 R () 8 + 8 be,0,4 [0]",
        ] {
            s.push_line(l);
        }
        s.finish(1_002_000_000, "mono", Vec::new(), Vec::new())
    }

    #[test]
    fn summary_text() {
        let mut out = Vec::new();
        write_summary(&sample(), &["dd".into()], None, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.starts_with("iolab trace: loop1 (7:1), 0.002 s\n"),
            "{text}"
        );
        assert!(
            text.contains("  command      dd (still running)\n"),
            "{text}"
        );
        let writes = text.lines().find(|l| l.starts_with("  writes")).unwrap();
        assert!(
            writes.contains(" 1.00 ") && writes.contains("1 MiB"),
            "{writes}"
        );
        let flushes = text.lines().find(|l| l.starts_with("  flushes")).unwrap();
        assert!(flushes.contains(" 1 "), "{flushes}");
        assert!(text.contains("1 MiB .. 2 MiB"), "{text}");
        assert!(text.contains("completions without their issue"), "{text}");
        assert!(!text.lines().any(|l| l.ends_with(' ')), "{text}");
    }
}
