//! Markdown tables for papers and pull requests.

use crate::section::Placement;
use std::fmt::Write as _;

use crate::escape::escape_md as md;
use crate::model::{check_scope, evidence_line, hit_scope, outcome_text, ReportData};
use crate::num;
use crate::Result;
use iolab_util::{units::format_bytes, units::format_ns};

/// Renders the experiment, findings, summary and flowop tables.
pub fn render_markdown(data: &ReportData, out: &mut dyn std::io::Write) -> Result<()> {
    out.write_all(markdown(data).as_bytes())?;
    Ok(())
}

/// The Markdown report as text.
pub(crate) fn markdown(data: &ReportData) -> String {
    let mut s = String::new();
    let e = &data.experiment;
    let host = &data.host;
    let or = |v: &Option<String>| v.clone().unwrap_or_else(|| "unknown".into());
    let _ = writeln!(s, "# {}\n", md(&e.name));
    s.push_str("| | |\n|---|---|\n");
    let mut row = |k: &str, v: &str| {
        let _ = writeln!(s, "| {k} | {} |", md(v));
    };
    row("source", &e.source);
    row("status", e.status.as_str());
    row("seed", &e.seed.to_string());
    row("iolab version", &e.iolab_version);
    row("started", &e.created_at.to_rfc3339());
    row("kernel", &or(&host.kernel));
    row("CPU", &or(&host.cpu));
    row(
        "memory",
        &host.memory_bytes.map_or("unknown".into(), format_bytes),
    );
    row("virtualization", &or(&host.virtualization));
    crate::answer::markdown(&mut s, data);

    s.push_str("\n## Findings\n\n");
    if data.findings.is_empty() {
        s.push_str("No check reported anything.\n");
    } else {
        s.push_str("| check | severity | where |\n|---|---|---|\n");
        for g in &data.findings {
            let _ = writeln!(
                s,
                "| `{}` | {} | {} |",
                md(&g.check),
                g.severity.as_str(),
                check_scope(g, data.configs.len())
            );
        }
        s.push_str("\nEach check's evidence, explanation and fix follow the summary.\n");
    }

    s.push_str("\n## Summary\n\nMean ± half-width of the 95% Student-t confidence interval over the ok runs.\n\n| configuration | ok/failed/interrupted | n |");
    for d in &data.headline {
        let _ = write!(s, " {} |", num::title(&d.title, &d.unit));
    }
    s.push_str(" converged | note |\n|---|---:|---:|");
    s.push_str(&"---:|".repeat(data.headline.len()));
    s.push_str("---|---|\n");
    for c in &data.configs {
        let _ = write!(
            s,
            "| {} | {}/{}/{} | {} |",
            md(&c.config.label),
            c.runs.ok,
            c.runs.failed,
            c.runs.interrupted,
            c.metrics.first().map_or(0, |m| m.n)
        );
        for m in &c.metrics {
            let _ = write!(s, " {} |", m.ci_text());
        }
        let (conv, note) = outcome_text(&c.config.outcome);
        let _ = writeln!(s, " {conv} | {} |", md(&note));
    }
    for p in data.sections.at(Placement::Summary) {
        p.view.markdown(&mut s, data);
    }

    if !data.findings.is_empty() {
        s.push_str("\n## What the checks found\n");
        for g in &data.findings {
            let _ = write!(
                s,
                "\n### `{}` ({})\n\nFired on {}.\n\n| configuration | fired on | evidence |\n|---|---:|---|\n",
                md(&g.check),
                g.severity.as_str(),
                check_scope(g, data.configs.len())
            );
            for h in &g.hits {
                let _ = writeln!(
                    s,
                    "| {} | {} | {} |",
                    md(&h.label),
                    hit_scope(h),
                    md(&evidence_line(h))
                );
            }
            let worded = g
                .worded_for
                .as_ref()
                .map(|l| format!("For {}: ", md(l)))
                .unwrap_or_default();
            let _ = write!(
                s,
                "\n{worded}{}\n\n**Fix:** {}\n",
                md(&g.explanation),
                md(&g.fix)
            );
        }
    }

    crate::sweep::markdown(&mut s, data);
    if let Some(c) = &data.miss_ratio_curves {
        crate::mrc::markdown(&mut s, c);
    }
    for p in data.sections.at(Placement::Details) {
        p.view.markdown(&mut s, data);
    }
    s.push_str("\n## Flowops\n\n");
    if data.configs.iter().all(|c| c.flowops.is_empty()) {
        s.push_str("No flowop statistics.\n");
    } else {
        s.push_str("| configuration | flowop | kind | runs | ops | bytes | errors | mean latency | p99 (mean of runs) | max |\n|---|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
        for c in &data.configs {
            for f in &c.flowops {
                let _ = writeln!(
                    s,
                    "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                    md(&c.config.label),
                    md(&f.name),
                    md(&f.kind),
                    f.runs,
                    num::fmt_count(f.ops),
                    format_bytes(f.bytes),
                    f.errors,
                    format_ns(f.lat_mean_ns),
                    format_ns(f.lat_p99_ns),
                    format_ns(f.lat_max_ns as f64)
                );
            }
        }
    }
    s
}
