//! Each finding once, with the configurations it applies to, then one line for the
//! configurations with nothing to report, then a count. (`--json` keeps every
//! configuration's findings: the grouping is for people.)

use std::io::{self, Write};

use iolab_store::Finding;

use super::CheckReport;
use crate::output::configs::describe;
use crate::output::Formatter;

pub struct Human;

/// One message and the configurations (indices) it was found for.
struct Group<'a> {
    finding: &'a Finding,
    configs: Vec<usize>,
}

/// The report's findings, each distinct one (same check, severity, explanation and fix) once,
/// the most severe first, then in the order of the configurations.
fn groups(r: &CheckReport) -> Vec<Group<'_>> {
    let mut groups: Vec<Group> = Vec::new();
    for (i, c) in r.configs.iter().enumerate() {
        for f in &c.findings {
            let same = |g: &&mut Group| {
                let x = g.finding;
                x.check == f.check
                    && x.severity == f.severity
                    && x.explanation == f.explanation
                    && x.fix == f.fix
            };
            match groups.iter_mut().find(same) {
                Some(g) if g.configs.last() != Some(&i) => g.configs.push(i),
                Some(_) => {}
                None => groups.push(Group {
                    finding: f,
                    configs: vec![i],
                }),
            }
        }
    }
    groups.sort_by_key(|g| std::cmp::Reverse(g.finding.severity));
    groups
}

impl Formatter<CheckReport> for Human {
    fn write(&self, r: &CheckReport, out: &mut dyn Write) -> io::Result<()> {
        let labels: Vec<&str> = r.configs.iter().map(|c| c.label.as_str()).collect();
        for g in groups(r) {
            let f = g.finding;
            writeln!(
                out,
                "{} [{}] on {}:",
                f.severity.as_str(),
                f.check,
                describe(&g.configs, &labels)
            )?;
            writeln!(out, "  {}", f.explanation)?;
            writeln!(out, "  fix: {}", f.fix)?;
        }
        let clean: Vec<usize> = (0..r.configs.len())
            .filter(|&i| r.configs[i].findings.is_empty())
            .collect();
        if !clean.is_empty() {
            writeln!(
                out,
                "{}: nothing to report before running",
                describe(&clean, &labels)
            )?;
        }
        let total: usize = r.configs.iter().map(|c| c.findings.len()).sum();
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::check::ConfigCheck;
    use iolab_store::Severity;

    fn finding(check: &str, explanation: &str) -> Finding {
        Finding {
            check: check.into(),
            severity: Severity::Warning,
            evidence: serde_json::Value::Null,
            explanation: explanation.into(),
            fix: "do this".into(),
        }
    }

    #[test]
    fn each_message_once_with_its_configurations_and_one_line_for_the_clean_ones() {
        let config = |label: &str, findings: Vec<Finding>| ConfigCheck {
            label: label.into(),
            findings,
        };
        let fits = finding("cache-fit", "The dataset fits.");
        let r = CheckReport {
            file: "x.toml".into(),
            configs: vec![
                config("journal=ordered setup=seed", vec![fits.clone()]),
                config("journal=ordered setup=corrected", vec![]),
                config("journal=writeback setup=seed", vec![fits.clone()]),
                config("journal=writeback setup=corrected", vec![]),
                config(
                    "journal=journal setup=seed",
                    vec![fits, finding("cache-fit", "The dataset fits twice.")],
                ),
                config("journal=journal setup=corrected", vec![]),
            ],
        };
        let mut out = Vec::new();
        Human.write(&r, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text,
            "warning [cache-fit] on the 3 configurations with setup=seed:\n  \
             The dataset fits.\n  fix: do this\n\
             warning [cache-fit] on journal=journal setup=seed:\n  \
             The dataset fits twice.\n  fix: do this\n\
             the 3 configurations with setup=corrected: nothing to report before running\n\
             6 configurations, 4 findings; the other checks run after each run \
             (docs/checks.md)\n"
        );
    }
}
