//! The report's first section: the answer — each factor's effect on each headline metric
//! within the combinations of the other factors, one sentence each (iolab-compare's
//! [`iolab_compare::answers`], the same sentences `iolab show` and `iolab compare` print).
//! Nothing without factors of two levels or more.

use std::fmt::Write as _;

use iolab_compare::{Answers, ConfigData, Options};
use iolab_store::{ConfigOutcome, MetricValues};

use crate::escape::{escape_html as esc, escape_md as md};
use crate::model::ReportData;

/// The answers of the report's experiment, from the headline metrics it holds.
pub fn answers(data: &ReportData) -> Option<Answers> {
    let configs: Vec<ConfigData> = data
        .configs
        .iter()
        .map(|c| ConfigData {
            experiment: c.config.experiment,
            config: c.config.id,
            label: c.config.label.clone(),
            converged: c.config.outcome.as_ref().map(|o| o.converged),
            deterministic: c
                .config
                .outcome
                .as_ref()
                .is_some_and(ConfigOutcome::is_deterministic),
            metrics: c
                .metrics
                .iter()
                .filter(|m| !m.values.is_empty())
                .map(|m| {
                    let v = MetricValues {
                        unit: m.unit.clone(),
                        values: m.values.clone(),
                        runs: m.runs.clone(),
                    };
                    (m.name.clone(), v)
                })
                .collect(),
            factors: c.config.factors.clone(),
        })
        .collect();
    let factors = iolab_compare::factors(
        &data.experiment.spec,
        data.configs.iter().map(|c| &c.config.factors),
    );
    let recorded = iolab_compare::available_metrics(&configs);
    let specs: Vec<_> = data
        .headline
        .iter()
        .filter(|d| recorded.iter().any(|m| *m == d.name))
        .map(|d| iolab_compare::metric_spec(&d.name, &data.headline))
        .collect();
    if specs.is_empty() || factors.is_empty() {
        return None;
    }
    iolab_compare::answers(&configs, &factors, &Options::new(specs))
        .ok()
        .filter(|a| !a.factors.is_empty())
}

fn how_to_read(a: &Answers) -> String {
    format!(
        "Each level of a factor against its baseline level, within each combination of the \
         other factors: the ratio with its {:.0}% interval; “no effect” when that interval lies \
         within ±{} % of 1, “too few runs to tell” when it spans {}× or more.",
        a.level * 100.0,
        a.no_effect_band_pct,
        a.max_ratio_span
    )
}

/// The `<section id="answer">` (nothing without answers): a factor of many levels in one
/// sentence per metric, every level's sentence folded below.
pub(crate) fn html(h: &mut String, data: &ReportData) {
    let Some(a) = answers(data) else { return };
    let _ = write!(
        h,
        "<section id=\"answer\"><h2>Answer</h2><p class=\"muted\">{}</p><ul>",
        esc(&how_to_read(&a))
    );
    for s in iolab_compare::sentences(&a) {
        let _ = write!(h, "<li>{}</li>", esc(s));
    }
    h.push_str("</ul>");
    if let Some(summary) = folded_summary(&a) {
        let _ = write!(
            h,
            "<details class=\"fold\"><summary>{}</summary><ul>",
            esc(&summary)
        );
        for s in iolab_compare::level_sentences(&a) {
            let _ = write!(h, "<li>{}</li>", esc(s));
        }
        h.push_str("</ul></details>");
    }
    h.push_str("</section>");
}

/// The fold's title when some factor is summed up.
fn folded_summary(a: &Answers) -> Option<String> {
    let folded = iolab_compare::folded_factors(a);
    (!folded.is_empty()).then(|| {
        format!(
            "Every level, one sentence each ({} sentences; {} summed up above)",
            iolab_compare::level_sentences(a).len(),
            folded.join(", ")
        )
    })
}

/// The `## Answer` section (nothing without answers); the fold as in HTML (`<details>`, which
/// Markdown renderers such as GitHub's show folded).
pub(crate) fn markdown(s: &mut String, data: &ReportData) {
    let Some(a) = answers(data) else { return };
    let _ = writeln!(s, "\n## Answer\n\n{}\n", md(&how_to_read(&a)));
    for line in iolab_compare::sentences(&a) {
        let _ = writeln!(s, "- {}", md(line));
    }
    if let Some(summary) = folded_summary(&a) {
        let _ = writeln!(s, "\n<details><summary>{}</summary>\n", esc(&summary));
        for line in iolab_compare::level_sentences(&a) {
            let _ = writeln!(s, "- {}", md(line));
        }
        let _ = writeln!(s, "\n</details>");
    }
}
