//! A table per replay: the install and each day with its time (mount to completed unmount),
//! its flush and each phase's throughput.

use std::io::{self, Write};

use super::ReplayReport;
use crate::output::Formatter;

pub struct Human;

fn rate(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.1}")
    } else {
        "-".into()
    }
}

impl Formatter<ReplayReport> for Human {
    fn write(&self, report: &ReplayReport, out: &mut dyn Write) -> io::Result<()> {
        let r = &report.result;
        writeln!(
            out,
            "replay: {} days, between days: {}",
            r.days.len(),
            report.between_days
        )?;
        writeln!(
            out,
            "{:<8} {:>10} {:>9} {:>12} {:>12}  {:<6} {:>8} {:>11} {:>10} {:>10}",
            "day",
            "time s",
            "flush s",
            "dev read MiB",
            "dev wrtn MiB",
            "phase",
            "files",
            "MiB",
            "MiB/s",
            "files/s"
        )?;
        for d in r.all() {
            let day = if d.day == 0 {
                "install".to_string()
            } else {
                d.day.to_string()
            };
            for (i, p) in d.phases.iter().enumerate() {
                let mib = |b: Option<u64>| {
                    b.map_or("-".into(), |b| format!("{:.1}", b as f64 / 1048576.0))
                };
                let (a, b, c, r, w) = if i == 0 {
                    (
                        day.clone(),
                        format!("{:.3}", d.time_ns as f64 / 1e9),
                        format!("{:.3}", d.end.flush_ns as f64 / 1e9),
                        mib(d.end.device_read_bytes),
                        mib(d.end.device_write_bytes),
                    )
                } else {
                    Default::default()
                };
                writeln!(
                    out,
                    "{a:<8} {b:>10} {c:>9} {r:>12} {w:>12}  {:<6} {:>8} {:>11.1} {:>10} {:>10}",
                    p.kind.name(),
                    p.files,
                    (p.read_bytes + p.write_bytes) as f64 / 1048576.0,
                    rate(p.mib_per_s()),
                    rate(p.files_per_s()),
                )?;
            }
        }
        let total: u64 = r.days.iter().map(|d| d.time_ns).sum();
        if !r.days.is_empty() {
            writeln!(
                out,
                "days: {:.3} s in all, {:.3} s per day",
                total as f64 / 1e9,
                total as f64 / 1e9 / r.days.len() as f64
            )?;
        }
        Ok(())
    }
}
