//! bonnie++'s CSV line, as bonnie++ 2.00 prints it (format version 1.98, 50 fields), so that
//! `bon_csv2html`, `bon_csv2txt` and scripts written for it read iolab's results. The field
//! layout follows bonnie++'s own printing code, its quirks included: the I/O chunk size
//! column is always empty, and the file chunk size is never printed (with more than one
//! directory, the directory count lands in that column). Rates are bonnie++'s units (K/sec
//! for the I/O phases, seeks/s, files/s), latencies its `123us`/`45ms`/`6s`.
//!
//! The one difference is deliberate: where bonnie++ prints `+++++` and `+++` for a phase
//! shorter than 0.5 s, iolab prints the rate and CPU it measured.

use std::fmt::Write as _;
use std::io::{self, Write};

use crate::{Phase, PhaseResult};

use super::BonnieReport;
use iolab_kind::output::Formatter;

/// bonnie++'s CSV format version.
pub const FORMAT_VERSION: &str = "1.98";
/// The bonnie++ version whose semantics iolab follows.
pub const BONNIE_VERSION: &str = "2.00a";

pub struct Csv<'a> {
    /// bonnie++ `-m`; the host name when `None`.
    pub machine: Option<&'a str>,
}

impl Formatter<BonnieReport> for Csv<'_> {
    fn write(&self, report: &BonnieReport, out: &mut dyn Write) -> io::Result<()> {
        writeln!(out, "{}", line(report, self.machine))
    }
}

/// bonnie++'s `print_size`: the number in `units[0]`, scaled by 1024 while it divides
/// evenly and a larger unit is left.
fn print_size(mut size: u64, units: &[u8]) -> String {
    if size == 0 {
        return format!("0{}", units[0] as char);
    }
    let mut i = 0;
    while size.is_multiple_of(1024) && i + 1 < units.len() {
        size /= 1024;
        i += 1;
    }
    format!("{size}{}", units[i] as char).trim_end().to_string()
}

/// `,rate,cpu` of one phase: empty fields for a phase that did not run.
fn stat(out: &mut String, p: Option<&PhaseResult>, rate: impl Fn(&PhaseResult) -> String) {
    match p.filter(|p| p.elapsed_ns > 0) {
        None => out.push_str(",,"),
        Some(p) => {
            let _ = write!(out, ",{},{}", rate(p), p.cpu_pct() as i64);
        }
    }
}

/// bonnie++'s latency: whole seconds above 100 s, milliseconds above 0.1 s, else µs.
pub(super) fn latency(p: Option<&PhaseResult>) -> String {
    let s = p.map_or(0.0, |p| p.latency.summary().max_ns as f64 / 1e9);
    if s == 0.0 {
        String::new()
    } else if s > 99.999999 {
        format!("{}s", s as i64)
    } else if s > 0.099999 {
        format!("{}ms", (s * 1000.0) as i64)
    } else {
        format!("{}us", (s * 1e6) as i64)
    }
}

/// The whole line, without its newline.
pub fn line(report: &BonnieReport, machine: Option<&str>) -> String {
    let r = &report.result;
    let plan = &r.plan;
    let get = |phase: Phase| r.phase(phase);
    let name = super::machine_name(report, machine);
    let mut out = format!("{FORMAT_VERSION},{BONNIE_VERSION},{name},1,{}", plan.seed);
    if plan.size > 0 {
        let size = if plan.size.is_multiple_of(1 << 20) {
            print_size(plan.size >> 20, b"MG")
        } else {
            format!("{}K", plan.size >> 10)
        };
        // The I/O chunk size's column stays empty in bonnie++'s CSV.
        let _ = write!(out, ",{size},,{},{}", plan.seeks, plan.seekers);
        for phase in [
            Phase::Putc,
            Phase::PutBlock,
            Phase::Rewrite,
            Phase::Getc,
            Phase::GetBlock,
        ] {
            stat(&mut out, get(phase), |p| {
                format!(
                    "{}",
                    (plan_bytes(plan, phase) as f64 / 1024.0 / secs(p)) as i64
                )
            });
        }
        stat(&mut out, get(Phase::Seeks), |p| {
            let v = f64::from(plan.seeks) / secs(p);
            if v >= 1000.0 {
                format!("{v:.0}")
            } else {
                format!("{v:.1}")
            }
        });
    } else {
        out.push_str(&",".repeat(16));
    }
    if plan.files > 0 {
        let mut f = plan.files_k.to_string();
        let (max, min) = (plan.max_file_size, plan.min_file_size);
        if max > 0 {
            if min > 0 {
                let _ = write!(f, ",{max},{min}");
            } else {
                let _ = write!(f, ",{max},");
            }
        } else {
            f.push_str(",,");
        }
        f.push(',');
        // bonnie++ writes a non-default file chunk size past the end of its string: it
        // never shows.
        if plan.dirs > 1 {
            let _ = write!(f, ",{}", plan.dirs);
        } else {
            f.push(',');
        }
        let _ = write!(out, ",{f}");
        for phase in &Phase::ALL[6..] {
            stat(&mut out, get(*phase), |p| {
                format!("{}", (plan.files as f64 / secs(p)) as i64)
            });
        }
    } else {
        out.push_str(&",".repeat(17));
    }
    for phase in Phase::ALL {
        out.push(',');
        out.push_str(&latency(get(phase)));
    }
    out
}

fn secs(p: &PhaseResult) -> f64 {
    p.elapsed_ns as f64 / 1e9
}

/// The bytes bonnie++ divides by a phase's time: the per-char size or the file size (the
/// rewrite counts the file once).
fn plan_bytes(plan: &crate::BonniePlan, phase: Phase) -> u64 {
    match phase {
        Phase::Putc | Phase::Getc => plan.char_size,
        _ => plan.size,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_print_as_bonnie_prints_them() {
        assert_eq!(print_size(300, b"MG"), "300M");
        assert_eq!(print_size(2048, b"MG"), "2G");
        assert_eq!(print_size(0, b"MG"), "0M");
        assert_eq!(print_size(3072, b"MG"), "3G");
        assert_eq!(print_size(1536, b"MG"), "1536M");
    }
}
