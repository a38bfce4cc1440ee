//! `iolab compare`: the comparison model (iolab-compare's), the experiments it pools, and per
//! configuration the system during its runs and the checks that fired.

use std::collections::BTreeMap;
use std::io::{self, Write};

use iolab_compare::{Answers, Comparison, ExperimentRef};
use serde::Serialize;

use super::context::CheckCount;
use super::json::{Document, Kind};
use super::Formatter;

#[derive(Debug, Serialize)]
pub struct CompareReport {
    pub experiments: Vec<ExperimentRef>,
    #[serde(flatten)]
    pub comparison: Comparison,
    /// Each factor's effect within the combinations of the others (`None` without factors).
    pub answers: Option<Answers>,
    /// In the comparison's configuration order.
    pub configs: Vec<ConfigContext>,
}

#[derive(Debug, Serialize)]
pub struct ConfigContext {
    /// As the comparison's rows name it.
    pub label: String,
    pub experiment: iolab_store::ExperimentId,
    /// See [`super::context::system_means`].
    pub system: BTreeMap<String, f64>,
    pub findings: Vec<CheckCount>,
}

impl Document for CompareReport {
    const KIND: Kind = Kind::Compare;
}

/// The experiments, the per-factor view (or, `flat` or without factors, one table per
/// metric of every configuration against the baseline), then the checks that fired.
pub struct Human {
    pub flat: bool,
}

impl Formatter<CompareReport> for Human {
    fn write(&self, r: &CompareReport, out: &mut dyn Write) -> io::Result<()> {
        let names: Vec<String> = r
            .experiments
            .iter()
            .map(|e| format!("#{} {}", e.id, e.name))
            .collect();
        writeln!(out, "experiment: {}", names.join(", "))?;
        match &r.answers {
            Some(a) if !self.flat => iolab_compare::render_answers(a, out)?,
            _ => iolab_compare::render_text(&r.comparison, out)?,
        }
        let fired: Vec<_> = r
            .configs
            .iter()
            .filter(|c| !c.findings.is_empty())
            .collect();
        if !fired.is_empty() {
            writeln!(out, "\nfindings (details: iolab show; docs/checks.md):")?;
            for c in fired {
                let text: Vec<String> = c.findings.iter().map(CheckCount::text).collect();
                writeln!(out, "  {}: {}", c.label, text.join(", "))?;
            }
        }
        Ok(())
    }
}
