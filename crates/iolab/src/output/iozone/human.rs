//! The terminal summary: per run, a line per figure with iolab's throughput, its CPU
//! utilization and, in throughput mode, iozone's two figures beside it.

use std::io::{self, Write};

use iolab_iozone::Flush;
use iolab_workload::{format_bytes, format_ns};

use super::IozoneReport;
use crate::output::Formatter;

/// Rates are printed in MiB/s.
const MIB: f64 = 1048576.0;

pub struct Human;

impl Formatter<IozoneReport> for Human {
    fn write(&self, report: &IozoneReport, out: &mut dyn Write) -> io::Result<()> {
        for r in &report.results {
            let p = &r.plan;
            let mut flags = Vec::new();
            if p.direct {
                flags.push("O_DIRECT");
            }
            if p.osync {
                flags.push("O_SYNC");
            }
            let flags = if flags.is_empty() {
                String::new()
            } else {
                format!(" / {}", flags.join("+"))
            };
            writeln!(
                out,
                "iolab iozone: file {} / record {} / {} thread{}{flags} / flush {} / seed {}",
                format_bytes(p.size),
                format_bytes(p.record),
                p.threads,
                if p.threads == 1 { "" } else { "s" },
                match p.flush {
                    Flush::Included => "included (fsync + close timed)",
                    Flush::Fsync => "fsync (fsync timed, close after the timer: iozone -e)",
                    Flush::Excluded => "excluded (iozone's default: fsync + close after the timer)",
                },
                p.seed
            )?;
            let tp = p.throughput_mode();
            if tp {
                writeln!(
                    out,
                    "  {:<15} {:>11} {:>14} {:>13} {:>11} {:>6} {:>10} {:>10} {:>10}",
                    "test",
                    "iolab MiB/s",
                    "children MiB/s",
                    "parent MiB/s",
                    "min xfer",
                    "CPU%",
                    "p50",
                    "p99",
                    "cached"
                )?;
            } else {
                writeln!(
                    out,
                    "  {:<15} {:>11} {:>12} {:>10} {:>6} {:>10} {:>10} {:>10}",
                    "test", "MiB/s", "kB/s", "flush", "CPU%", "p50", "p99", "cached"
                )?;
            }
            for f in &r.figures {
                let l = f.latency.summary();
                let (p50, p99) = if l.count > 0 {
                    (format_ns(l.p50_ns as f64), format_ns(l.p99_ns as f64))
                } else {
                    ("-".into(), "-".into())
                };
                let cached = f.cached_bytes.map_or("-".into(), format_bytes);
                if tp {
                    writeln!(
                        out,
                        "  {:<15} {:>11.1} {:>14.1} {:>13.1} {:>11} {:>6.1} {:>10} {:>10} {:>10}",
                        f.figure.title(),
                        f.rate() / MIB,
                        f.children_see() / MIB,
                        f.parent_sees() / MIB,
                        format_bytes(f.min_xfer()),
                        f.cpu_utilization(),
                        p50,
                        p99,
                        cached
                    )?;
                } else {
                    writeln!(
                        out,
                        "  {:<15} {:>11.1} {:>12} {:>10} {:>6.1} {:>10} {:>10} {:>10}",
                        f.figure.title(),
                        f.rate() / MIB,
                        super::kib_per_s(f.rate()),
                        format_ns(f.flush_ns() as f64),
                        f.cpu_utilization(),
                        p50,
                        p99,
                        cached
                    )?;
                }
            }
            writeln!(
                out,
                "  cached: the files' bytes in the page cache as the pass began{}",
                match p.purge {
                    iolab_iozone::Purge::None => String::from(" (no purge between passes)"),
                    how => format!(", after the purge ({})", how.name()),
                }
            )?;
            if tp {
                writeln!(
                    out,
                    "  iolab: all bytes over the whole timed region. children see (iozone): sum of \
                     each thread's rate up to the stone-wall; parent sees (iozone): bytes at the \
                     stone-wall over the time until every thread ended. CPU%: the threads' CPU \
                     time over the longest thread's timed window (iozone -+u)."
                )?;
            }
        }
        scaling(&report.results, out)
    }
}

/// After the runs of a range of thread counts (`--threads-max`, iozone -l/-u): iolab's
/// figure per test and thread count in one table, as iozone's throughput report lays it
/// out.
fn scaling(results: &[iolab_iozone::IozoneResult], out: &mut dyn Write) -> io::Result<()> {
    let counts: Vec<u32> = results.iter().map(|r| r.plan.threads).collect();
    let one_cell = results
        .windows(2)
        .all(|w| w[0].plan.size == w[1].plan.size && w[0].plan.record == w[1].plan.record);
    if results.len() < 2 || !one_cell || counts.windows(2).any(|w| w[0] == w[1]) {
        return Ok(());
    }
    writeln!(out, "iolab iozone: MiB/s (iolab's figure) by threads")?;
    write!(out, "  {:<15}", "test")?;
    for t in &counts {
        write!(out, " {:>10}", t)?;
    }
    writeln!(out)?;
    for f in &results[0].figures {
        write!(out, "  {:<15}", f.figure.title())?;
        for r in results {
            match r.figure(f.figure) {
                Some(g) => write!(out, " {:>10.1}", g.rate() / MIB)?,
                None => write!(out, " {:>10}", "-")?,
            }
        }
        writeln!(out)?;
    }
    Ok(())
}
