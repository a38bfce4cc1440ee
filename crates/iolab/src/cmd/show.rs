//! `iolab show ID`: an experiment's configurations with n, mean ± 95% CI of the headline
//! metrics, and whether the stopping rule converged. Also printed at the end of
//! `iolab run EXPERIMENT.toml`.

use std::io::{self, Write};

use iolab_stats::{Level, Sample, Summary};
use iolab_store::{ExperimentId, RunStatus, Store};
use serde_json::json;

use crate::cli::ShowArgs;
use crate::error::CliError;

/// Prints one value of a column.
type Format = fn(f64) -> String;

/// The columns, in order: metric, heading, how to print a value.
const COLUMNS: &[(&str, &str, Format)] = &[
    ("ops_per_s", "ops/s", |v| format!("{v:.1}")),
    ("mib_per_s", "MiB/s", |v| format!("{v:.2}")),
    ("lat_mean_ns", "mean latency", |v| crate::fmt::ns(v)),
    ("lat_p50_ns", "p50 latency", |v| crate::fmt::ns(v)),
    ("lat_p99_ns", "p99 latency", |v| crate::fmt::ns(v)),
];

pub fn show(args: ShowArgs) -> Result<(), CliError> {
    let store = super::db::open_existing(&args.db.db)?;
    let id = super::db::resolve(&store, args.id.as_deref())?;
    if args.json {
        let v = summary_json(&store, id).map_err(CliError::failed)?;
        return crate::output::emit(|out| {
            serde_json::to_writer_pretty(&mut *out, &v)?;
            writeln!(out)
        });
    }
    crate::output::emit(|out| write_experiment(&store, id, out))
}

/// One metric over a configuration's ok runs.
struct Cell {
    n: usize,
    mean: f64,
    /// Half-width of the 95% CI (n ≥ 2).
    half: Option<f64>,
}

fn cell(values: &[f64]) -> Option<Cell> {
    let v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    match v.len() {
        0 => None,
        1 => Some(Cell {
            n: 1,
            mean: v[0],
            half: None,
        }),
        _ => {
            let s = Summary::new(&Sample::new(v).ok()?, Level::P95);
            Some(Cell {
                n: s.n,
                mean: s.mean,
                half: Some(s.ci.half_width()),
            })
        }
    }
}

fn fmt_cell(c: &Cell, f: Format) -> String {
    match c.half {
        Some(h) if c.mean != 0.0 => format!(
            "{} ± {} (±{:.1}%)",
            f(c.mean),
            f(h),
            h / c.mean.abs() * 100.0
        ),
        Some(h) => format!("{} ± {}", f(c.mean), f(h)),
        None => format!("{} (n=1)", f(c.mean)),
    }
}

fn io_err(e: impl std::fmt::Display) -> io::Error {
    io::Error::other(e.to_string())
}

pub fn write_experiment(store: &Store, id: ExperimentId, out: &mut dyn Write) -> io::Result<()> {
    let d = store.experiment_details(id).map_err(io_err)?;
    let e = &d.experiment;
    let count = |s: RunStatus| d.runs.iter().filter(|r| r.status == s).count();
    writeln!(
        out,
        "experiment {} \"{}\" ({}), from {}",
        e.id.0,
        e.name,
        e.status.as_str(),
        e.source
    )?;
    writeln!(
        out,
        "started {}; runs: {} ok, {} failed, {} interrupted",
        e.created_at
            .to_rfc3339()
            .get(..19)
            .unwrap_or_default()
            .replace('T', " "),
        count(RunStatus::Ok),
        count(RunStatus::Failed),
        count(RunStatus::Interrupted)
    )?;
    let metric = e
        .spec
        .pointer("/repetitions/metric")
        .and_then(|m| m.as_str())
        .unwrap_or("ops_per_s")
        .to_string();
    let mut columns: Vec<(String, String, Format)> = COLUMNS
        .iter()
        .map(|(m, h, f)| ((*m).to_string(), (*h).to_string(), *f))
        .collect();
    if !columns.iter().any(|c| c.0 == metric) {
        columns.insert(0, (metric.clone(), metric.clone(), |v| format!("{v:.4}")));
    }
    // Rows: label, n, one text per column, outcome.
    let mut rows: Vec<(String, String, Vec<String>, String)> = Vec::new();
    for c in &d.configs {
        let m = store.ok_metrics(c.id).map_err(io_err)?;
        let n = d
            .runs
            .iter()
            .filter(|r| r.config == c.id && r.status == RunStatus::Ok)
            .count();
        let cells = columns
            .iter()
            .map(|(name, _, f)| {
                m.get(name.as_str())
                    .and_then(|v| cell(&v.values))
                    .map_or_else(|| "–".to_string(), |c| fmt_cell(&c, *f))
            })
            .collect();
        let failed = d
            .runs
            .iter()
            .filter(|r| r.config == c.id && r.status == RunStatus::Failed)
            .count();
        let outcome = match &c.outcome {
            Some(o) => compact_outcome(&o.note),
            None if failed > 0 => format!("{failed} failed"),
            None => "not finished".into(),
        };
        rows.push((c.label.clone(), n.to_string(), cells, outcome));
    }
    let mut widths = vec![
        "configuration"
            .len()
            .max(rows.iter().map(|r| r.0.chars().count()).max().unwrap_or(0)),
        1.max(rows.iter().map(|r| r.1.len()).max().unwrap_or(0)),
    ];
    for (i, c) in columns.iter().enumerate() {
        widths.push(
            c.1.chars().count().max(
                rows.iter()
                    .map(|r| r.2[i].chars().count())
                    .max()
                    .unwrap_or(0),
            ),
        );
    }
    let pad = |s: &str, w: usize| format!("{s}{}", " ".repeat(w.saturating_sub(s.chars().count())));
    let rpad =
        |s: &str, w: usize| format!("{}{s}", " ".repeat(w.saturating_sub(s.chars().count())));
    writeln!(out)?;
    let mut head = format!(
        "{}  {}",
        pad("configuration", widths[0]),
        rpad("n", widths[1])
    );
    for (i, c) in columns.iter().enumerate() {
        head.push_str(&format!("  {}", rpad(&c.1, widths[i + 2])));
    }
    writeln!(out, "{head}  outcome")?;
    for r in &rows {
        let mut line = format!("{}  {}", pad(&r.0, widths[0]), rpad(&r.1, widths[1]));
        for (i, t) in r.2.iter().enumerate() {
            line.push_str(&format!("  {}", rpad(t, widths[i + 2])));
        }
        writeln!(out, "{line}  {}", r.3)?;
    }
    writeln!(
        out,
        "\nmean ± half-width of the 95% confidence interval (Student t) over the ok runs; \
         stopping metric: {metric}"
    )?;
    write_system(store, &d, out)?;
    write_findings(store, &d, out)?;
    let failures: Vec<_> = d
        .runs
        .iter()
        .filter(|r| r.status == RunStatus::Failed)
        .collect();
    for r in failures.iter().take(5) {
        let label = d
            .configs
            .iter()
            .find(|c| c.id == r.config)
            .map_or("?", |c| c.label.as_str());
        writeln!(
            out,
            "failed: {label} run {}: {}",
            r.repetition + 1,
            r.error.as_deref().unwrap_or("unknown error")
        )?;
    }
    Ok(())
}

/// The stopping rule's note, short enough for a table column.
fn compact_outcome(note: &str) -> String {
    let pct = note
        .split_whitespace()
        .find(|w| w.starts_with('±'))
        .map(|w| w.trim_end_matches([',', ';']))
        .unwrap_or("");
    if note.starts_with("converged") {
        format!("converged ({pct})")
    } else if note.starts_with("did not converge") {
        let why = if note.contains("time budget") {
            "time budget"
        } else {
            "max runs"
        };
        format!("NOT converged ({pct}, {why})")
    } else {
        note.to_string()
    }
}

/// The machine during the runs, per configuration (means over ok runs of each run's
/// whole-run value): what seed report 000 read from sar and perf by hand.
const SYSTEM: &[(&str, &str)] = &[
    ("cpu.usr_pct", "cpu usr%"),
    ("cpu.sys_pct", "sys%"),
    ("cpu.iowait_pct", "iowait%"),
    ("dev.util_pct", "dev util%"),
    ("dev.rkB_per_s", "dev rkB/s"),
    ("dev.wkB_per_s", "dev wkB/s"),
    ("dev.f_per_s", "flush/s"),
    ("perf.context_switches_per_s", "cs/s"),
    ("vm.pgfault_per_s", "faults/s"),
];

fn write_system(
    store: &Store,
    d: &iolab_store::ExperimentDetails,
    out: &mut dyn Write,
) -> io::Result<()> {
    let mut rows = Vec::new();
    for c in &d.configs {
        let m = store.ok_metrics(c.id).map_err(io_err)?;
        let cells: Vec<String> = SYSTEM
            .iter()
            .map(|(name, _)| {
                m.get(*name)
                    .and_then(|v| cell(&v.values))
                    .map_or_else(|| "–".into(), |c| format!("{:.1}", c.mean))
            })
            .collect();
        if cells.iter().any(|c| c != "–") {
            rows.push((c.label.clone(), cells));
        }
    }
    if rows.is_empty() {
        return Ok(());
    }
    let w0 = "configuration"
        .len()
        .max(rows.iter().map(|r| r.0.chars().count()).max().unwrap_or(0));
    let widths: Vec<usize> = SYSTEM
        .iter()
        .enumerate()
        .map(|(i, (_, h))| {
            h.len()
                .max(rows.iter().map(|r| r.1[i].len()).max().unwrap_or(0))
        })
        .collect();
    writeln!(
        out,
        "\nthe system during the runs (means over the ok runs):"
    )?;
    let mut head = format!("{:<w0$}", "configuration");
    for (i, (_, h)) in SYSTEM.iter().enumerate() {
        head.push_str(&format!("  {:>w$}", h, w = widths[i]));
    }
    writeln!(out, "{head}")?;
    for (label, cells) in &rows {
        let pad = w0 + label.len() - label.chars().count();
        let mut line = format!("{label:<pad$}");
        for (i, c) in cells.iter().enumerate() {
            line.push_str(&format!("  {:>w$}", c, w = widths[i]));
        }
        writeln!(out, "{line}")?;
    }
    Ok(())
}

/// Findings per configuration: each check once, with the number of runs it fired on.
fn write_findings(
    store: &Store,
    d: &iolab_store::ExperimentDetails,
    out: &mut dyn Write,
) -> io::Result<()> {
    let all = store.findings(d.experiment.id).map_err(io_err)?;
    if all.is_empty() {
        return Ok(());
    }
    writeln!(out, "\nfindings (details: iolab export; docs/checks.md):")?;
    for c in &d.configs {
        let mut counts: Vec<(String, String, usize)> = Vec::new();
        for f in all.iter().filter(|f| f.config == c.id) {
            match counts.iter_mut().find(|x| x.0 == f.finding.check) {
                Some(x) => x.2 += 1,
                None => counts.push((
                    f.finding.check.clone(),
                    f.finding.severity.as_str().to_string(),
                    1,
                )),
            }
        }
        if counts.is_empty() {
            continue;
        }
        let text: Vec<String> = counts
            .iter()
            .map(|(id, sev, n)| format!("{sev} {id} ×{n}"))
            .collect();
        writeln!(out, "  {}: {}", c.label, text.join(", "))?;
    }
    Ok(())
}

fn summary_json(store: &Store, id: ExperimentId) -> iolab_store::Result<serde_json::Value> {
    let d = store.experiment_details(id)?;
    let mut configs = Vec::new();
    for c in &d.configs {
        let m = store.ok_metrics(c.id)?;
        let metrics: serde_json::Map<String, serde_json::Value> = m
            .iter()
            .map(|(name, v)| {
                let c = cell(&v.values);
                (
                    name.clone(),
                    json!({
                        "unit": v.unit,
                        "n": c.as_ref().map(|c| c.n),
                        "mean": c.as_ref().map(|c| c.mean),
                        "ci95_half_width": c.as_ref().and_then(|c| c.half),
                        "values": v.values,
                    }),
                )
            })
            .collect();
        configs.push(json!({
            "id": c.id.0,
            "label": c.label,
            "factors": c.factors,
            "outcome": c.outcome,
            "metrics": metrics,
        }));
    }
    Ok(json!({
        "format": "iolab.show/1",
        "experiment": d.experiment,
        "configs": configs,
        "runs": d.runs,
    }))
}
