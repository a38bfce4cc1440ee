//! The terminal summary of a workload run: a per-flowop table with percentiles, the IO
//! summary, CPU, and anything that deserves a second look (flowops that ran dry).

use std::io::{self, Write};

use super::{secs, RunReport};
use iolab_kind::output::thousands;
use iolab_kind::output::Formatter;
use iolab_workload::format_ns;

pub struct Human;

impl Formatter<RunReport> for Human {
    fn write(&self, report: &RunReport, out: &mut dyn Write) -> io::Result<()> {
        let r = &report.result;
        let t = secs(r);
        let depth = r
            .iodepth
            .map(|d| format!(", iodepth {d}"))
            .unwrap_or_default();
        writeln!(
            out,
            "iolab run {}: {} thread{}, {:.2} s, seed {}, {} engine{depth}",
            report.source,
            r.threads,
            if r.threads == 1 { "" } else { "s" },
            t,
            report.seed,
            r.engine,
        )?;
        let width = r
            .flowops
            .iter()
            .map(|f| f.name.len())
            .max()
            .unwrap_or(6)
            .max(6);
        writeln!(
            out,
            "  {:<width$} {:>10} {:>10} {:>8} {:>9} {:>9} {:>9} {:>9} {:>9}",
            "flowop", "ops", "ops/s", "MiB/s", "mean", "p50", "p99", "p99.9", "max"
        )?;
        for f in &r.flowops {
            let l = f.latency.summary();
            let cell = |v: f64| {
                if f.ops > 0 {
                    format_ns(v)
                } else {
                    "-".to_string()
                }
            };
            writeln!(
                out,
                "  {:<width$} {:>10} {:>10.1} {:>8.1} {:>9} {:>9} {:>9} {:>9} {:>9}",
                f.name,
                thousands(f.ops),
                f.ops as f64 / t,
                f.bytes as f64 / 1048576.0 / t,
                cell(l.mean_ns),
                cell(l.p50_ns as f64),
                cell(l.p99_ns as f64),
                cell(l.p999_ns as f64),
                cell(l.max_ns as f64),
            )?;
        }
        let (ops, rd, wr, bytes, lat) = r.io_summary();
        writeln!(
            out,
            "  IO summary: {} ops, {:.1} ops/s, {:.0}/{:.0} rd/wr ops/s, {:.1} MiB/s, {} mean",
            thousands(ops),
            ops as f64 / t,
            rd as f64 / t,
            wr as f64 / t,
            bytes as f64 / 1048576.0 / t,
            format_ns(if ops > 0 { lat / ops as f64 } else { 0.0 })
        )?;
        writeln!(
            out,
            "  cpu         usr {:.1}%  sys {:.1}% of one core, {:.1} µs per op",
            r.usage.user_ns as f64 / 1e7 / t,
            r.usage.sys_ns as f64 / 1e7 / t,
            if ops > 0 {
                r.usage.cpu_ns() as f64 / 1e3 / ops as f64
            } else {
                0.0
            }
        )?;
        if let Some(c) = r.own_cost() {
            writeln!(
                out,
                "  iolab cost  {:.0} flowops/s, {} of CPU per flowop (the {} engine does no I/O: \
                 this is iolab's own cost)",
                c.flowops_per_s,
                format_ns(c.cpu_ns_per_flowop),
                r.engine
            )?;
        }
        if let Some((a, b)) = report.system_cpu {
            let s = b.percent_since(&a);
            writeln!(
                out,
                "  system      active {:.1}%  idle {:.1}%  iowait {:.1}%  (all CPUs)",
                s.active, s.idle, s.iowait
            )?;
        }
        for f in r.flowops.iter().filter(|f| f.ran_dry > 0) {
            writeln!(
                out,
                "  note: `{}` found no suitable file {} times (all busy or none in the wanted state); \
                 filebench would have aborted the run here",
                f.name,
                thousands(f.ran_dry)
            )?;
        }
        for f in &r.flowops {
            if let Some((n, mean, sd)) = f.samples {
                writeln!(
                    out,
                    "  testrandvar `{}`: {} samples, mean {:.3}, sd {:.3}",
                    f.name, n, mean, sd
                )?;
            }
        }
        if r.finished_threads > 0 {
            writeln!(
                out,
                "  {} of {} threads finished before the run time (finishon*, or no file left to work on in firstdone/alldone mode)",
                r.finished_threads, r.threads
            )?;
        }
        Ok(())
    }
}
