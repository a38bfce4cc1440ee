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

/// The answer in a few lines: the first factor's sentences on the stopping metric (what the
/// report's Answer section opens with), and how many other factors the section has;
/// `None` without answers.
pub(crate) fn lead(data: &ReportData) -> Option<(Vec<String>, usize)> {
    let a = answers(data)?;
    let factors = per_factor(&a, data);
    let first = factors.first()?;
    let lines = first.first.iter().map(|s| (*s).to_string()).collect();
    Some((lines, factors.len() - 1))
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

/// Per factor: the sentences on the experiment's stopping metric (its first metric when
/// that is not among them), and those on its other metrics, which the report folds — seed
/// 002's three factors on seven metrics were 38 sentences before the first chart.
fn per_factor<'a>(a: &'a Answers, data: &ReportData) -> Vec<FactorLines<'a>> {
    let stop = data.experiment.spec["repetitions"]["metric"].as_str();
    a.factors
        .iter()
        .map(|f| {
            let lead = f
                .metrics
                .iter()
                .position(|m| Some(m.metric.as_str()) == stop)
                .unwrap_or(0);
            let (mut first, mut rest, mut titles) = (Vec::new(), Vec::new(), Vec::new());
            for (i, m) in f.metrics.iter().enumerate() {
                if i == lead {
                    first = m.sentences();
                } else {
                    rest.extend(m.sentences());
                    titles.push(m.title.as_str());
                }
            }
            FactorLines {
                factor: &f.factor,
                baseline: &f.baseline,
                first,
                rest,
                titles,
            }
        })
        .collect()
}

/// One factor's sentences, as [`per_factor`] splits them.
struct FactorLines<'a> {
    factor: &'a str,
    baseline: &'a str,
    first: Vec<&'a str>,
    rest: Vec<&'a str>,
    titles: Vec<&'a str>,
}

impl FactorLines<'_> {
    fn heading(&self) -> String {
        format!(
            "{} (against {}={})",
            self.factor, self.factor, self.baseline
        )
    }

    fn fold_title(&self) -> String {
        format!(
            "{} on {} ({} sentences)",
            self.factor,
            self.titles.join(", "),
            self.rest.len()
        )
    }
}

/// The `<section id="answer">` (nothing without answers): per factor, its effect on the
/// stopping metric, its other metrics folded; a factor of many levels in one sentence per
/// metric, every level's sentence folded below.
pub(crate) fn html(h: &mut String, data: &ReportData) {
    let Some(a) = answers(data) else { return };
    let _ = write!(
        h,
        "<section id=\"answer\"><h2>Answer</h2><p class=\"muted\">{}</p>",
        esc(&how_to_read(&a))
    );
    for f in per_factor(&a, data) {
        let _ = write!(h, "<h3>{}</h3><ul>", esc(&f.heading()));
        for s in &f.first {
            let _ = write!(h, "<li>{}</li>", esc(s));
        }
        h.push_str("</ul>");
        if !f.rest.is_empty() {
            html_fold(h, &f.fold_title(), &f.rest);
        }
    }
    if let Some(summary) = folded_summary(&a) {
        html_fold(h, &summary, &iolab_compare::level_sentences(&a));
    }
    h.push_str("</section>");
}

/// Sentences folded under `title`.
fn html_fold(h: &mut String, title: &str, lines: &[&str]) {
    let _ = write!(
        h,
        "<details class=\"fold\"><summary>{}</summary><ul>",
        esc(title)
    );
    for s in lines {
        let _ = write!(h, "<li>{}</li>", esc(s));
    }
    h.push_str("</ul></details>");
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
    let _ = writeln!(s, "\n## Answer\n\n{}", md(&how_to_read(&a)));
    for f in per_factor(&a, data) {
        let _ = writeln!(s, "\n### {}\n", md(&f.heading()));
        for line in &f.first {
            let _ = writeln!(s, "- {}", md(line));
        }
        if !f.rest.is_empty() {
            markdown_fold(s, &f.fold_title(), &f.rest);
        }
    }
    if let Some(summary) = folded_summary(&a) {
        markdown_fold(s, &summary, &iolab_compare::level_sentences(&a));
    }
}

/// Sentences folded under `title` (`<details>`, which GitHub's Markdown shows folded).
fn markdown_fold(s: &mut String, title: &str, lines: &[&str]) {
    let _ = writeln!(s, "\n<details><summary>{}</summary>\n", esc(title));
    for line in lines {
        let _ = writeln!(s, "- {}", md(line));
    }
    let _ = writeln!(s, "\n</details>");
}
