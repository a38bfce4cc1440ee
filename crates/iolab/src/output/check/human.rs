//! Per configuration its findings with their fixes, then a count.

use std::io::{self, Write};

use super::CheckReport;
use crate::output::Formatter;

pub struct Human;

impl Formatter<CheckReport> for Human {
    fn write(&self, r: &CheckReport, out: &mut dyn Write) -> io::Result<()> {
        let mut total = 0;
        for c in &r.configs {
            total += c.findings.len();
            if c.findings.is_empty() {
                writeln!(out, "{}: nothing to report before running", c.label)?;
                continue;
            }
            writeln!(out, "{}:", c.label)?;
            for f in &c.findings {
                writeln!(
                    out,
                    "  {} [{}]: {}",
                    f.severity.as_str(),
                    f.check,
                    f.explanation
                )?;
                writeln!(out, "    fix: {}", f.fix)?;
            }
        }
        let n = r.configs.len();
        writeln!(
            out,
            "{n} configuration{}, {total} finding{}; the other checks run after each run \
             (docs/checks.md)",
            if n == 1 { "" } else { "s" },
            if total == 1 { "" } else { "s" }
        )
    }
}
