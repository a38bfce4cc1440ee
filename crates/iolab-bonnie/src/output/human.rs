//! The terminal summary: bonnie++'s two tables, laid out as bonnie++ lays them out, but with
//! the file phases' rates where bonnie++'s text report prints the file count, and a number
//! where it prints `+++++`; then iolab's figures per phase in its own units.

use std::io::{self, Write};

use crate::{Phase, PhaseResult, RateUnit, MIN_TIME};
use iolab_util::{units::format_bytes, units::format_ns};

use super::BonnieReport;
use iolab_kind::output::Formatter;

pub struct Human<'a> {
    /// bonnie++ `-m`; the host name when `None`.
    pub machine: Option<&'a str>,
}

/// bonnie++'s text cell for an I/O rate in K/sec.
fn kib_cell(kib: f64) -> String {
    if kib < 10000.0 {
        format!(" {:4}k", kib as i64)
    } else if kib / 1024.0 < 1000.0 {
        let m = kib / 1024.0;
        if m < 100.0 {
            format!(" {m:4.1}m")
        } else {
            format!(" {:4}m", (m + 0.5) as i64)
        }
    } else {
        format!(" {:4.1}g", kib / 1024.0 / 1024.0)
    }
}

/// A phase's `rate %CP` cells (blank when it did not run).
fn cells(p: Option<&PhaseResult>) -> String {
    let Some(p) = p.filter(|p| p.elapsed_ns > 0) else {
        return " ".repeat(10);
    };
    let rate = match p.phase.unit() {
        RateUnit::Bytes => kib_cell(p.kib_per_s()),
        RateUnit::Seeks => {
            let v = p.ops_per_s();
            if v >= 1000.0 {
                format!(" {v:5.0}")
            } else {
                format!(" {v:5.1}")
            }
        }
        RateUnit::Files => format!(" {:5}", p.ops_per_s() as i64),
    };
    format!("{rate} {:3}", p.cpu_pct() as i64)
}

/// bonnie++'s latency cell: its CSV text, right-aligned.
fn latency_cell(p: Option<&PhaseResult>) -> String {
    format!(" {:>9}", super::csv::latency(p))
}

/// The first 19 columns of a result row: the machine name, and the size at their end.
fn name_cell(name: &str, size: &str) -> String {
    let width = 19usize.saturating_sub(size.len() + 1);
    let name: String = name.chars().take(width).collect();
    format!("{name:<width$} {size}")
}

impl Formatter<BonnieReport> for Human<'_> {
    fn write(&self, report: &BonnieReport, out: &mut dyn Write) -> io::Result<()> {
        let r = &report.result;
        let p = &r.plan;
        let get = |phase: Phase| r.phase(phase);
        let mut what = Vec::new();
        if p.size > 0 {
            let rule = if p.size_from_memory {
                " (twice the memory)"
            } else {
                ""
            };
            what.push(format!(
                "test file {}{rule} in {} chunks",
                format_bytes(p.size),
                format_bytes(p.chunk_size)
            ));
            if p.char_size > 0 {
                what.push(format!("per-char {}", format_bytes(p.char_size)));
            }
            what.push(format!("{} seekers × {} seeks", p.seekers, p.seeks));
        }
        if p.files > 0 {
            let sizes = if p.max_file_size == 0 {
                "empty".to_string()
            } else if p.min_file_size < p.max_file_size {
                format!(
                    "{}–{}",
                    format_bytes(p.min_file_size),
                    format_bytes(p.max_file_size)
                )
            } else {
                format_bytes(p.max_file_size)
            };
            what.push(format!(
                "{} files ({}×1024, {sizes}) in {} director{}",
                p.files,
                p.files_k,
                p.dirs,
                if p.dirs == 1 { "y" } else { "ies" }
            ));
        }
        writeln!(
            out,
            "iolab bonnie: {} / {} / seed {}",
            p.dir.display(),
            what.join(" / "),
            p.seed
        )?;
        let host = super::machine_name(report, self.machine);
        if p.size > 0 {
            writeln!(out)?;
            writeln!(
                out,
                "iolab bonnie        ------Sequential Output------ --Sequential Input- --Random-"
            )?;
            writeln!(
                out,
                "                    -Per Chr- --Block-- -Rewrite- -Per Chr- --Block-- --Seeks--"
            )?;
            writeln!(
                out,
                "Name:Size etc        /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP"
            )?;
            let size = if p.size.is_multiple_of(1 << 30) {
                format!("{}G", p.size >> 30)
            } else if p.size.is_multiple_of(1 << 20) {
                format!("{}M", p.size >> 20)
            } else {
                format!("{}K", p.size >> 10)
            };
            let mut row = name_cell(host, &size);
            let mut lat = "Latency          ".to_string();
            for phase in &Phase::ALL[..6] {
                row.push_str(&cells(get(*phase)));
                lat.push_str(&latency_cell(get(*phase)));
            }
            writeln!(out, "{row}")?;
            writeln!(out, "{lat}")?;
        }
        if p.files > 0 {
            writeln!(out)?;
            writeln!(
                out,
                "iolab bonnie        ------Sequential Create------ --------Random Create--------"
            )?;
            let name: String = host.chars().take(19).collect();
            writeln!(
                out,
                "{name:<19} -Create-- --Read--- -Delete-- -Create-- --Read--- -Delete--"
            )?;
            let label = match (p.max_file_size, p.min_file_size) {
                (0, _) => "              files ",
                (_, 0) => "files:max           ",
                _ => "files:max:min       ",
            };
            writeln!(
                out,
                "{label} /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP"
            )?;
            let mut files = p.files_k.to_string();
            if p.max_file_size > 0 {
                files.push_str(&format!(":{}:{}", p.max_file_size, p.min_file_size));
            }
            if p.dirs > 1 {
                files.push_str(&format!("/{}", p.dirs));
            }
            let mut row = format!("{files:>19}");
            let mut lat = "Latency          ".to_string();
            for phase in &Phase::ALL[6..] {
                row.push_str(&cells(get(*phase)));
                lat.push_str(&latency_cell(get(*phase)));
            }
            writeln!(out, "{row}")?;
            writeln!(out, "{lat}")?;
        }
        writeln!(out)?;
        writeln!(
            out,
            "  {:<11} {:>16} {:>6} {:>11} {:>11} {:>10}",
            "phase", "rate", "cpu", "p50", "max", "elapsed"
        )?;
        for ph in &r.phases {
            let rate = match ph.phase.unit() {
                RateUnit::Bytes => format!("{:.1} MiB/s", ph.rate()),
                RateUnit::Seeks => format!("{:.0} seeks/s", ph.rate()),
                RateUnit::Files => format!("{:.0} files/s", ph.rate()),
            };
            let l = ph.latency.summary();
            writeln!(
                out,
                "  {:<11} {rate:>16} {:>5.0}% {:>11} {:>11} {:>8.3} s{}",
                ph.phase.label(),
                ph.cpu_pct(),
                format_ns(l.p50_ns as f64),
                format_ns(l.max_ns as f64),
                ph.elapsed_ns as f64 / 1e9,
                if ph.short() { " *" } else { "" }
            )?;
        }
        let short: Vec<&PhaseResult> = r.phases.iter().filter(|p| p.short()).collect();
        if let Some(worst) = short
            .iter()
            .max_by(|a, b| a.rel_error().total_cmp(&b.rel_error()))
        {
            writeln!(
                out,
                "  * shorter than {} s, where bonnie++ prints +++++: timed with iolab's clock \
                 to ±{} (±{:.4}% at worst, {}); a phase this short is sensitive to anything \
                 else the machine does: repeat the run (an experiment's repetitions) for a \
                 confidence interval",
                MIN_TIME.as_secs_f64(),
                format_ns(worst.timing_error_ns as f64),
                worst.rel_error() * 100.0,
                worst.phase.label()
            )?;
        }
        let per = |phase: Phase| phase.operation();
        writeln!(
            out,
            "  latency per {} (I/O phases), {} and {}; cpu of the threads doing the phase",
            per(Phase::PutBlock),
            per(Phase::Seeks),
            per(Phase::SeqCreate)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_as_bonnie_prints_them() {
        assert_eq!(kib_cell(9999.0), " 9999k");
        assert_eq!(kib_cell(51200.0), " 50.0m");
        assert_eq!(kib_cell(512000.0), "  500m");
        assert_eq!(kib_cell(2.0 * 1048576.0), "  2.0g");
        // bonnie++ gives the name and size 19 columns; each cell starts with a space.
        assert_eq!(name_cell("host", "300M").len(), 19);
        assert_eq!(
            name_cell("a-very-long-machine-name", "300M"),
            "a-very-long-ma 300M"
        );
    }
}
