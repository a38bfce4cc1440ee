//! Findings on stderr, as single runs and experiments print them.

use iolab_store::{Finding, Severity};

/// Findings on stderr, most severe first: `warning [cache-served] …` and the fix.
pub fn print_findings(findings: &[Finding], indent: &str) {
    let mut sorted: Vec<&Finding> = findings.iter().collect();
    sorted.sort_by_key(|f| match f.severity {
        Severity::Error => 0,
        Severity::Warning => 1,
        Severity::Info => 2,
    });
    // One write for all of them: stderr is unbuffered, and piecewise writes could interleave
    // with another writer's line.
    let mut out = String::new();
    for f in sorted {
        out.push_str(&format!(
            "{indent}{} [{}]: {}\n{indent}  fix: {}\n",
            f.severity.as_str(),
            f.check,
            f.explanation,
            f.fix
        ));
    }
    say_inline!("{out}");
}
