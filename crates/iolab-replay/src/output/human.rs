//! A table per replay: the install and each day with its time (mount to completed unmount),
//! its flush and each phase's throughput; then the days' time in all and per day, as stored.

use std::io::{self, Write};

use iolab_kind::output::{fixed, Formatter, NOT_MEASURED};

use super::ReplayReport;

pub struct Human;

fn rate(v: f64) -> String {
    fixed(v, 1)
}

/// Seconds to the millisecond; [`NOT_MEASURED`] for a figure not measured.
fn seconds(s: f64) -> String {
    if s.is_finite() {
        format!("{s:.3} s")
    } else {
        NOT_MEASURED.into()
    }
}

impl Formatter<ReplayReport> for Human {
    fn write(&self, report: &ReplayReport, out: &mut dyn Write) -> io::Result<()> {
        let r = &report.run.result;
        writeln!(
            out,
            "replay: {} days, between days: {}",
            r.days.len(),
            report.between_days.name()
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
        // The stored metrics, so that a replay without days says what the database holds
        // (no time per day) rather than a time of its own making.
        writeln!(
            out,
            "days: {} in all, {} per day",
            seconds(report.run.metric("days_total_s")),
            seconds(report.run.metric("day_s"))
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kind::{fixture::replayed, BetweenDays};

    /// The human format of a replay of the lists, with the metrics its run recorded.
    fn printed(install: Option<&str>, days: Option<&str>) -> (String, Vec<iolab_store::Metric>) {
        let (result, rec) = replayed(install, None, days);
        let report = ReplayReport {
            between_days: BetweenDays::None,
            run: iolab_kind::output::SingleReport {
                result,
                system_cpu: None,
                host: Default::default(),
                started_at: std::time::UNIX_EPOCH,
                findings: Vec::new(),
                system: Default::default(),
                metrics: rec.metrics.clone(),
            },
        };
        let mut out = Vec::new();
        Human.write(&report, &mut out).unwrap();
        (String::from_utf8(out).unwrap(), rec.metrics)
    }

    fn stored(metrics: &[iolab_store::Metric], name: &str) -> f64 {
        metrics.iter().find(|m| m.name == name).unwrap().value
    }

    #[test]
    fn the_days_line_is_the_stored_metrics() {
        let (text, metrics) = printed(
            Some("a, 5000, c\n"),
            Some("[day 1]\nb, 10, c\n[day 2]\nb, 10, d\n"),
        );
        let line = format!(
            "days: {:.3} s in all, {:.3} s per day",
            stored(&metrics, "days_total_s"),
            stored(&metrics, "day_s")
        );
        assert!(text.contains(&line), "{line:?} in\n{text}");
        // No days: the database holds no time per day (NULL), and the output says so.
        let (text, metrics) = printed(Some("a, 5000, c\n"), None);
        assert!(stored(&metrics, "day_s").is_nan());
        assert!(
            text.ends_with("days: 0.000 s in all, – per day\n"),
            "{text}"
        );
    }
}
