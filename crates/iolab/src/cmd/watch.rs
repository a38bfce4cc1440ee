//! Monitoring and checks around the timed region of `iolab micro` and `iolab run FILE.f`
//! (experiments do the same inside the runner).

use std::path::Path;
use std::time::Instant;

use iolab_experiment::monitor::{self, DeviceInfo, Intent, MonitorOptions, Observed, RunMonitor};
use iolab_store::{Finding, RunRecord, Severity};

/// Starts at the timed region's start, stops at its end.
pub struct Watch {
    opts: MonitorOptions,
    devices: Vec<String>,
    running: Option<RunMonitor>,
    pub observed: Option<Observed>,
}

impl Watch {
    pub fn new(opts: MonitorOptions, dir: &Path) -> Watch {
        Watch {
            opts,
            devices: monitor::run_devices(None, dir),
            running: None,
            observed: None,
        }
    }

    pub fn start(&mut self) {
        self.running = Some(RunMonitor::start(
            &self.opts,
            std::mem::take(&mut self.devices),
            Instant::now(),
        ));
    }

    pub fn stop(&mut self) {
        if let Some(m) = self.running.take() {
            self.observed = Some(m.stop());
        }
    }

    /// Adds what was observed to `rec`, runs the checks, and returns their findings (also
    /// in `rec`). Notes about monitoring itself go to stderr.
    pub fn finish(&mut self, rec: &mut RunRecord, intent: &Intent, dir: &Path) -> Vec<Finding> {
        let observed = self.observed.take().unwrap_or_default();
        // Absent hardware counters are expected on VMs, not news.
        for n in observed
            .notes
            .iter()
            .filter(|n| !n.contains("not reported as 0"))
        {
            eprintln!("iolab: note: {n}");
        }
        if let Some(s) = &observed.samples {
            monitor::add_samples(rec, s, observed.device.as_deref());
        }
        if let Some(t) = &observed.trace {
            monitor::add_trace(rec, t);
        }
        let facts = monitor::run_facts(rec, intent, &DeviceInfo::probe(dir), &observed);
        rec.findings = monitor::findings(intent, &facts);
        rec.findings.clone()
    }
}

/// Findings on stderr, most severe first: `warning [cache-served] …` and the fix.
pub fn print_findings(findings: &[Finding], indent: &str) {
    let mut sorted: Vec<&Finding> = findings.iter().collect();
    sorted.sort_by_key(|f| match f.severity {
        Severity::Error => 0,
        Severity::Warning => 1,
        Severity::Info => 2,
    });
    for f in sorted {
        eprintln!(
            "{indent}{} [{}]: {}",
            f.severity.as_str(),
            f.check,
            f.explanation
        );
        eprintln!("{indent}  fix: {}", f.fix);
    }
}
