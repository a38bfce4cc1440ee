//! The terminal summary.

use std::io::{self, Write};

use iolab_engine::backend::FinalSync;
use iolab_kind::output::{
    durations, fixed, thousands, write_system_and_switches, Formatter, NOT_MEASURED,
};
use iolab_util::{units::format_bytes, units::format_ns};

use super::MicroReport;

pub struct Human;

impl Formatter<MicroReport> for Human {
    fn write(&self, report: &MicroReport, out: &mut dyn Write) -> io::Result<()> {
        let r = &report.result;
        let p = &r.plan;
        // The figures are the stored metrics (`–` where the database holds NaN: nothing was
        // measured), so that the summary and `iolab show` never disagree.
        let m = |name: &str| report.metric(name);
        // A whole number with thousands separators, as it is stored.
        let whole = |x: f64| {
            if x.is_finite() {
                thousands(x as u64)
            } else {
                NOT_MEASURED.to_string()
            }
        };
        let pct = |x: f64| {
            if x.is_finite() {
                format!("{x:.1}%")
            } else {
                NOT_MEASURED.to_string()
            }
        };
        let depth = if p.iodepth > 1 {
            format!(", iodepth {}", p.iodepth)
        } else {
            String::new()
        };
        writeln!(
            out,
            "iolab micro: {} / sync {} / {} engine{depth} / bs {} / {} in {} file{} / seed {}",
            p.access,
            p.sync,
            p.engine,
            format_bytes(p.bs),
            format_bytes(p.size),
            p.threads,
            if p.threads == 1 { "" } else { "s" },
            p.seed
        )?;
        if let Some(f) = r.files.first() {
            let dir = f
                .parent()
                .map(|d| d.display().to_string())
                .unwrap_or_default();
            let reuse = if r.reused_files { ", reused" } else { "" };
            writeln!(out, "  files       {dir}/iolab-micro.N{reuse}")?;
        }
        let limited = if r.time_limited {
            ", stopped by --time"
        } else {
            ""
        };
        writeln!(
            out,
            "  elapsed     {} s, {} record{}{limited}",
            fixed(m("elapsed_s"), 3),
            thousands(r.ops),
            if r.ops == 1 { "" } else { "s" }
        )?;
        writeln!(
            out,
            "  throughput  {} MiB/s ({} B/s), {} IOPS",
            fixed(m("mib_per_s"), 1),
            whole(super::bytes_per_s(report)),
            whole(m("ops_per_s").round())
        )?;
        writeln!(out, "  latency     {}", report.latency_line())?;
        if let Some(how) = p.record_sync() {
            let s = r.sync_latency.summary();
            if s.count > 0 {
                writeln!(
                    out,
                    "  {:<11} {} (included above)",
                    how.name(),
                    durations(&[
                        ("mean", s.mean_ns),
                        ("p50", s.p50_ns as f64),
                        ("p99", s.p99_ns as f64),
                        ("max", s.max_ns as f64),
                    ])
                )?;
            }
        }
        if let Some(f) = p.final_sync() {
            let name = match f {
                FinalSync::Fsync => "final fsync",
                FinalSync::MsyncSync => "final msync",
            };
            writeln!(out, "  {name:<11} {}", format_ns(m("final_sync_ns")))?;
        }
        writeln!(
            out,
            "  cpu         usr {}  sys {} of one core ({} s usr, {} s sys)",
            pct(super::pct_of_core(report, "cpu_usr_s")),
            pct(super::pct_of_core(report, "cpu_sys_s")),
            fixed(m("cpu_usr_s"), 3),
            fixed(m("cpu_sys_s"), 3)
        )?;
        let system = report.system_cpu.map(|(a, b)| b.percent_since(&a));
        write_system_and_switches(out, system, &r.usage.cpu())
    }
}
