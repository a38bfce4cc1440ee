//! The terminal summary of a workload run: a per-flowop table with percentiles, the IO
//! summary, CPU, and anything that deserves a second look (flowops that ran dry).

use std::io::{self, Write};

use super::RunReport;
use iolab_kind::output::Formatter;
use iolab_kind::output::{fixed, thousands};
use iolab_kind::record::per_second;
use iolab_util::units::format_ns;

pub struct Human;

impl Formatter<RunReport> for Human {
    fn write(&self, report: &RunReport, out: &mut dyn Write) -> io::Result<()> {
        let r = &report.run.result;
        let stored = |name: &str| report.run.metric(name);
        let rate = |x: u64| per_second(x as f64, r.elapsed_ns);
        let depth = r
            .iodepth
            .map(|d| format!(", iodepth {d}"))
            .unwrap_or_default();
        writeln!(
            out,
            "iolab run {}: {} thread{}, {} s, seed {}, {} engine{depth}",
            report.source,
            r.threads,
            if r.threads == 1 { "" } else { "s" },
            fixed(stored("elapsed_s"), 2),
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
                    "–".to_string()
                }
            };
            writeln!(
                out,
                "  {:<width$} {:>10} {:>10} {:>8} {:>9} {:>9} {:>9} {:>9} {:>9}",
                f.name,
                thousands(f.ops),
                fixed(rate(f.ops), 1),
                fixed(rate(f.bytes) / 1048576.0, 1),
                cell(l.mean_ns),
                cell(l.p50_ns as f64),
                cell(l.p99_ns as f64),
                cell(l.p999_ns as f64),
                cell(l.max_ns as f64),
            )?;
        }
        let (ops, ..) = r.io_summary();
        let mean = stored("lat_mean_ns");
        writeln!(
            out,
            "  IO summary: {} ops, {} ops/s, {}/{} rd/wr ops/s, {} MiB/s, {} mean",
            thousands(ops),
            fixed(stored("ops_per_s"), 1),
            fixed(stored("read_ops_per_s"), 0),
            fixed(stored("write_ops_per_s"), 0),
            fixed(stored("mib_per_s"), 1),
            if mean.is_finite() {
                format_ns(mean)
            } else {
                "–".into()
            },
        )?;
        let elapsed = stored("elapsed_s");
        let share = |cpu_s: f64| fixed(100.0 * cpu_s / elapsed, 1);
        let per_op = if ops > 0 {
            r.usage.cpu_ns() as f64 / 1e3 / ops as f64
        } else {
            f64::NAN
        };
        writeln!(
            out,
            "  cpu         usr {}%  sys {}% of one core, {} µs per op",
            share(stored("cpu_usr_s")),
            share(stored("cpu_sys_s")),
            fixed(per_op, 1),
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
        if let Some((a, b)) = report.run.system_cpu {
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
