//! What `iolab micro` and `iolab run FILE.f` print about monitoring and findings (the
//! monitoring itself is iolab-experiment's `monitor::Watch`, as in experiments).

use std::path::Path;

use iolab_experiment::monitor::{self, DeviceInfo, MonitorOptions, Watch};
use iolab_store::{Finding, Severity};

/// A watch over the device holding `dir`.
pub fn watch(opts: MonitorOptions, dir: &Path) -> Watch {
    Watch::new(opts, monitor::run_devices(None, dir))
}

/// Folds the observations and findings into `rec`; monitoring notes go to stderr.
pub fn finish(
    w: &mut Watch,
    rec: &mut iolab_store::RunRecord,
    intent: &monitor::Intent,
    dir: &Path,
) -> Vec<Finding> {
    for n in w.notes() {
        say!("iolab: note: {n}");
    }
    w.finish(rec, intent, &DeviceInfo::probe(dir));
    rec.findings.clone()
}

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
