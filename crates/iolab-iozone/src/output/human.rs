//! The terminal summary: per run, a line per figure with iolab's throughput, its CPU
//! utilization and, in throughput mode, iozone's two figures beside it.

use std::io::{self, Write};

use iolab_kind::output::{fixed, Formatter, NOT_MEASURED};
use iolab_util::{units::format_bytes, units::format_ns};

use super::{children_and_parent, rate, IozoneReport, Run};
use crate::kind::MIB;
use crate::Flush;

pub struct Human;

/// A rate in bytes/s as MiB/s; [`NOT_MEASURED`] for one not measured (NaN, stored as NULL).
fn mib_per_s(bytes_per_s: f64) -> String {
    fixed(bytes_per_s / MIB, 1)
}

/// A rate in bytes/s as iozone's whole kB/s; [`NOT_MEASURED`] for one not measured.
fn kb_per_s(bytes_per_s: f64) -> String {
    if bytes_per_s.is_finite() {
        super::kib_per_s(bytes_per_s).to_string()
    } else {
        NOT_MEASURED.into()
    }
}

impl Formatter<IozoneReport> for Human {
    fn write(&self, report: &IozoneReport, out: &mut dyn Write) -> io::Result<()> {
        for run in &report.runs {
            let r = &run.output;
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
                let rate = rate(run, f.figure);
                if tp {
                    let (children, parent) = children_and_parent(run, f);
                    writeln!(
                        out,
                        "  {:<15} {:>11} {:>14} {:>13} {:>11} {:>6.1} {:>10} {:>10} {:>10}",
                        f.figure.title(),
                        mib_per_s(rate),
                        mib_per_s(children),
                        mib_per_s(parent),
                        format_bytes(f.min_xfer()),
                        f.cpu_utilization(),
                        p50,
                        p99,
                        cached
                    )?;
                } else {
                    writeln!(
                        out,
                        "  {:<15} {:>11} {:>12} {:>10} {:>6.1} {:>10} {:>10} {:>10}",
                        f.figure.title(),
                        mib_per_s(rate),
                        kb_per_s(rate),
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
                    crate::Purge::None => String::from(" (no purge between passes)"),
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
        scaling(&report.runs, out)
    }
}

/// After the runs of a range of thread counts (`--threads-max`, iozone -l/-u): iolab's
/// figure per test and thread count in one table, as iozone's throughput report lays it
/// out.
fn scaling(runs: &[Run], out: &mut dyn Write) -> io::Result<()> {
    let counts: Vec<u32> = runs.iter().map(|r| r.output.plan.threads).collect();
    let cell = |r: &Run| (r.output.plan.size, r.output.plan.record);
    let one_cell = runs.windows(2).all(|w| cell(&w[0]) == cell(&w[1]));
    if runs.len() < 2 || !one_cell || counts.windows(2).any(|w| w[0] == w[1]) {
        return Ok(());
    }
    writeln!(out, "iolab iozone: MiB/s (iolab's figure) by threads")?;
    write!(out, "  {:<15}", "test")?;
    for t in &counts {
        write!(out, " {:>10}", t)?;
    }
    writeln!(out)?;
    for f in &runs[0].output.figures {
        write!(out, "  {:<15}", f.figure.title())?;
        for r in runs {
            match r.output.figure(f.figure) {
                Some(g) => write!(out, " {:>10}", mib_per_s(rate(r, g.figure)))?,
                None => write!(out, " {:>10}", "-")?,
            }
        }
        writeln!(out)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::testing::{recorded, report, result};
    use std::sync::atomic::AtomicBool;

    fn render(report: &IozoneReport) -> String {
        let mut out = Vec::new();
        Human.write(report, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// The words of the line of figure `title` (`Write` … `Random mix`).
    fn row<'a>(text: &'a str, title: &str) -> Vec<&'a str> {
        let line = text
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{title} ")))
            .unwrap_or_else(|| panic!("no {title} line in\n{text}"));
        line.split_whitespace().collect()
    }

    #[test]
    fn printed_rates_are_the_stored_metrics() {
        let _hang = iolab_testkit::timeout(120);
        let dir = tempfile::tempdir().unwrap();
        let mut s = crate::IozoneSpec::with_defaults(dir.path().to_path_buf(), 1);
        s.tests = vec![crate::Test::Write, crate::Test::Read];
        s.size = 256 << 10;
        let r = crate::run_iozone(
            &s.validate().unwrap(),
            &mut (),
            &mut (),
            &AtomicBool::new(false),
        )
        .unwrap();
        let run = recorded(r);
        let stored = |name: &str| run.end.metric(name).unwrap();
        let read = stored("read_mib_per_s");
        let text = render(&report(vec![run]));
        let words = row(&text, "Read");
        assert_eq!(words[1], format!("{read:.1}"), "{text}");
        assert_eq!(words[2], ((read * 1024.0) as u64).to_string(), "{text}");
    }

    #[test]
    fn a_pass_too_short_to_time_prints_what_the_database_holds() {
        // A pass timed at 0 ns has no rate: the database holds NULL, and the table says so
        // rather than NaN or 0 kB/s.
        for threads in [1, 2] {
            let run = recorded(result(1 << 20, 4 << 10, threads, 0));
            assert!(run.end.metric("write_mib_per_s").unwrap().is_nan());
            let text = render(&report(vec![run]));
            let words = row(&text, "Write");
            // Single stream: MiB/s and kB/s; throughput mode: iolab's MiB/s, the children's
            // and the parent's.
            let rates = if threads == 1 { 2 } else { 3 };
            assert_eq!(words[1..=rates], [NOT_MEASURED; 3][..rates], "{text}");
            assert!(!text.contains("NaN"), "{text}");
        }
    }
}
