//! The terminal summary.

use std::io::{self, Write};

use iolab_engine::backend::FinalSync;
use iolab_kind::output::{
    durations, latency_line, thousands, write_system_and_switches, Formatter,
};
use iolab_workload::{format_bytes, format_ns};

use super::MicroReport;

pub struct Human;

impl Formatter<MicroReport> for Human {
    fn write(&self, report: &MicroReport, out: &mut dyn Write) -> io::Result<()> {
        let r = &report.result;
        let p = &r.plan;
        let d = super::derived(report);
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
            "  elapsed     {:.3} s, {} record{}{limited}",
            d.elapsed_s,
            thousands(r.ops),
            if r.ops == 1 { "" } else { "s" }
        )?;
        writeln!(
            out,
            "  throughput  {:.1} MiB/s ({} B/s), {} IOPS",
            d.bytes_per_s / 1048576.0,
            thousands(d.bytes_per_s as u64),
            thousands(d.iops.round() as u64)
        )?;
        let l = r.latency.summary();
        writeln!(out, "  latency     {}", latency_line(&l))?;
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
            writeln!(out, "  {name:<11} {}", format_ns(r.final_sync_ns as f64))?;
        }
        writeln!(
            out,
            "  cpu         usr {:.1}%  sys {:.1}% of one core ({:.3} s usr, {:.3} s sys)",
            d.usr_pct,
            d.sys_pct,
            r.usage.user_ns as f64 / 1e9,
            r.usage.sys_ns as f64 / 1e9
        )?;
        write_system_and_switches(out, d.system, &r.usage.cpu())
    }
}
