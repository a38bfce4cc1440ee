//! What the experiment-level outputs (`show`, `compare`) say about a configuration besides
//! its headline numbers: the system during its runs and the checks that fired on it. Declared
//! once here so that the human tables and the JSON documents agree.

use std::collections::BTreeMap;

use iolab_store::{MetricValues, Severity, StoredFinding};
use serde::Serialize;

/// The machine during the runs (means over the ok runs of each run's whole-run value), with
/// the headings of the human table: what seed report 000 read from sar and perf by hand.
pub const SYSTEM: &[(&str, &str)] = iolab_metrics::SYSTEM_SUMMARY;

/// The [`SYSTEM`] quantities a configuration recorded, each the mean of its finite values.
pub fn system_means(metrics: &BTreeMap<String, MetricValues>) -> BTreeMap<String, f64> {
    SYSTEM
        .iter()
        .filter_map(|(name, _)| {
            let v: Vec<f64> = metrics
                .get(*name)?
                .values
                .iter()
                .copied()
                .filter(|x| x.is_finite())
                .collect();
            (!v.is_empty()).then(|| ((*name).to_string(), v.iter().sum::<f64>() / v.len() as f64))
        })
        .collect()
}

/// One check's findings about a configuration, counted.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckCount {
    pub check: String,
    /// The most severe of them.
    pub severity: Severity,
    /// Runs it fired on.
    pub runs: usize,
    /// Whether it fired on the configuration as a whole (e.g. did-not-converge).
    pub about_config: bool,
}

/// `findings` (of one configuration) counted per check, the most severe first (then in
/// first-seen order).
pub fn count_checks<'a>(findings: impl IntoIterator<Item = &'a StoredFinding>) -> Vec<CheckCount> {
    let mut counts: Vec<CheckCount> = Vec::new();
    for f in findings {
        let i = match counts.iter().position(|c| c.check == f.finding.check) {
            Some(i) => i,
            None => {
                counts.push(CheckCount {
                    check: f.finding.check.clone(),
                    severity: f.finding.severity,
                    runs: 0,
                    about_config: false,
                });
                counts.len() - 1
            }
        };
        let c = &mut counts[i];
        c.severity = c.severity.max(f.finding.severity);
        match f.run {
            Some(_) => c.runs += 1,
            None => c.about_config = true,
        }
    }
    counts.sort_by_key(|c| std::cmp::Reverse(c.severity));
    counts
}

impl CheckCount {
    /// `warning cache-fit ×3`, `error did-not-converge (configuration)`.
    pub fn text(&self) -> String {
        let mut s = format!("{} {}", self.severity.as_str(), self.check);
        if self.runs > 0 {
            s.push_str(&format!(" ×{}", self.runs));
        }
        if self.about_config {
            s.push_str(if self.runs > 0 {
                " + configuration"
            } else {
                " (configuration)"
            });
        }
        s
    }
}
