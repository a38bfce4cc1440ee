//! The terminal table: per configuration n, mean ± 95% CI of the headline metrics and the
//! outcome; then the system during the runs, the checks that fired, and the first failures.

use std::io::{self, Write};

use iolab_store::RunStatus;

use super::{Cell, ShowReport};
use crate::output::configs::describe;
use crate::output::context::{CheckCount, SYSTEM};
use crate::output::Formatter;

/// Prints one value of a column.
type Format = Box<dyn Fn(f64) -> String>;

/// The units whose values are printed in the unit that reads best, with it (`18.1 Gbit/s`,
/// `3.10 GiB`): the column heading then has none. Throughput in op/s and MiB/s keeps the
/// fixed unit the columns of iolab's own kinds have always had.
fn carries_unit(unit: &str) -> bool {
    !matches!(unit, "" | "op/s" | "txn/s" | "MiB/s" | "%")
}

/// How to print a value of a metric in `unit`: durations, sizes and other rates in the unit
/// that reads best, op/s and MiB/s to a sensible precision.
fn format_for(unit: &str) -> Format {
    match unit {
        "op/s" | "txn/s" => Box::new(|v| fixed(v, 1)),
        "MiB/s" => Box::new(|v| fixed(v, 2)),
        "" | "%" => Box::new(|v| fixed(v, 4)),
        u => {
            let u = u.to_string();
            Box::new(move |v| iolab_util::units::format_quantity(v, &u))
        }
    }
}

/// `v` with `decimals` places; from 10^15 on in scientific notation, where the places say
/// nothing and 1e308 (a value another host's database may hold) would be 309 digits wide.
fn fixed(v: f64, decimals: usize) -> String {
    if v.is_finite() && v.abs() >= 1e15 {
        format!("{v:.3e}")
    } else {
        format!("{v:.decimals$}")
    }
}

/// A column heading: the metric's title, with its unit unless the values carry their own.
fn heading(d: &iolab_store::MetricDef) -> String {
    let mut title = d.title.to_string();
    if let Some(first) = title.get(..1) {
        title = first.to_lowercase() + &title[1..];
    }
    if d.unit.is_empty() || carries_unit(&d.unit) {
        title
    } else {
        format!("{title} ({})", d.unit)
    }
}

/// Failed runs whose errors are printed.
const FAILURES_SHOWN: usize = 5;

pub struct Human;

impl Formatter<ShowReport> for Human {
    fn write(&self, r: &ShowReport, out: &mut dyn Write) -> io::Result<()> {
        let e = &r.experiment;
        writeln!(
            out,
            "experiment {} \"{}\" ({}), from {}",
            e.id.0,
            e.name,
            e.status.as_str(),
            e.source
        )?;
        let count = |s: RunStatus| r.runs.iter().filter(|x| x.run.status == s).count();
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
        if let Some(a) = &r.answers {
            iolab_compare::render_sentences(a, out)?;
        }
        write_table(r, out)?;
        if r.single_run {
            writeln!(
                out,
                "\none run: the values as measured, without a confidence interval (repetitions \
                 need an experiment file, docs/experiments.md)"
            )?;
        } else {
            writeln!(
                out,
                "\nmean ± half-width of the 95% confidence interval (Student t) over the ok runs, \
                 in percent of the mean; stopping metric: {}",
                r.metric
            )?;
        }
        write_system(r, out)?;
        write_findings(r, out)?;
        for f in r
            .runs
            .iter()
            .filter(|x| x.run.status == RunStatus::Failed)
            .take(FAILURES_SHOWN)
        {
            let label = r
                .configs
                .iter()
                .find(|c| c.id == f.run.config)
                .map_or("?", |c| c.label.as_str());
            writeln!(
                out,
                "failed: {label} run {}: {}",
                f.run.repetition + 1,
                f.run.error.as_deref().unwrap_or("unknown error")
            )?;
        }
        Ok(())
    }
}

/// A value, ± the interval's half-width as a percentage of it when there is one (a single
/// value has none: the n column says so): `344.50 ms ± 3.0%`, narrow enough for several
/// metrics side by side. A mean of 0 keeps the half-width itself.
fn fmt_cell(c: &Cell, f: &Format) -> String {
    let Some(mean) = c.mean else {
        return "–".into();
    };
    match c.ci95_half_width {
        Some(h) if mean != 0.0 => {
            let pct = h / mean.abs() * 100.0;
            if pct < 10.0 {
                format!("{} ± {pct:.1}%", f(mean))
            } else {
                format!("{} ± {pct:.0}%", f(mean))
            }
        }
        Some(h) => format!("{} ± {}", f(mean), f(h)),
        None => f(mean),
    }
}

fn pad(s: &str, w: usize) -> String {
    format!("{s}{}", " ".repeat(w.saturating_sub(s.chars().count())))
}

fn rpad(s: &str, w: usize) -> String {
    format!("{}{s}", " ".repeat(w.saturating_sub(s.chars().count())))
}

/// The widest a table is made (seed 002's SQLite table, with its system calls per
/// transaction, was 230 columns): the metrics that do not fit go to a table below.
const MAX_WIDTH: usize = 120;

/// A column: its heading, one text per configuration, and whether it is right-aligned.
struct Column {
    heading: String,
    cells: Vec<String>,
    right: bool,
}

impl Column {
    fn width(&self) -> usize {
        self.cells
            .iter()
            .chain(std::iter::once(&self.heading))
            .map(|c| c.chars().count())
            .max()
            .unwrap_or(0)
    }
}

/// Splits `metrics` (their widths) into consecutive groups, each as many as fit in
/// [`MAX_WIDTH`] beside `first` columns' width in the first group and `rest` in the others
/// (two spaces between columns); at least one metric per group.
fn pack(metrics: &[usize], first: usize, rest: usize) -> Vec<std::ops::Range<usize>> {
    let mut groups = Vec::new();
    let mut start = 0;
    while start < metrics.len() {
        let mut used = if groups.is_empty() { first } else { rest };
        let mut end = start;
        while end < metrics.len() && (end == start || used + 2 + metrics[end] <= MAX_WIDTH) {
            used += 2 + metrics[end];
            end += 1;
        }
        groups.push(start..end);
        start = end;
    }
    groups
}

fn write_columns(columns: &[&Column], out: &mut dyn Write) -> io::Result<()> {
    let widths: Vec<usize> = columns.iter().map(|c| c.width()).collect();
    let last = columns.len() - 1;
    let line = |text: &dyn Fn(&Column) -> &str| {
        let mut l = String::new();
        for (j, c) in columns.iter().enumerate() {
            if j > 0 {
                l.push_str("  ");
            }
            let t = text(c);
            l.push_str(&match (c.right, j == last) {
                (true, _) => rpad(t, widths[j]),
                (false, false) => pad(t, widths[j]),
                (false, true) => t.to_string(),
            });
        }
        l.trim_end().to_string()
    };
    writeln!(out)?;
    writeln!(out, "{}", line(&|c| c.heading.as_str()))?;
    for i in 0..columns[0].cells.len() {
        writeln!(out, "{}", line(&|c| c.cells[i].as_str()))?;
    }
    Ok(())
}

/// The configurations with n, the headline metrics and the outcome; the metrics that do not
/// fit in [`MAX_WIDTH`] in further tables, each with the configurations again.
fn write_table(r: &ShowReport, out: &mut dyn Write) -> io::Result<()> {
    let mut specs: Vec<(String, String, Format)> = r
        .headline
        .iter()
        .map(|d| (d.name.to_string(), heading(d), format_for(&d.unit)))
        .collect();
    if !specs.iter().any(|c| c.0 == r.metric) {
        specs.insert(0, (r.metric.clone(), r.metric.clone(), format_for("")));
    }
    let column = |heading: &str, cells: Vec<String>, right: bool| Column {
        heading: heading.to_string(),
        cells,
        right,
    };
    let label = column(
        "configuration",
        r.configs.iter().map(|c| c.label.clone()).collect(),
        false,
    );
    let n = column(
        "n",
        r.configs.iter().map(|c| c.runs.ok.to_string()).collect(),
        true,
    );
    let outcome = column(
        "outcome",
        r.configs.iter().map(|c| c.state.clone()).collect(),
        false,
    );
    // A headline metric no configuration measured (another tool's throughput in op/s when
    // it counts none) is left out; the stopping metric is always shown.
    let measured = |name: &str| {
        name == r.metric
            || r.configs
                .iter()
                .any(|c| c.metrics.get(name).is_some_and(|v| v.mean.is_some()))
    };
    let metrics: Vec<Column> = specs
        .iter()
        .filter(|(name, _, _)| measured(name))
        .map(|(name, heading, f)| {
            let cells = r
                .configs
                .iter()
                .map(|c| c.metrics.get(name).map_or("–".into(), |v| fmt_cell(v, f)))
                .collect();
            column(heading, cells, true)
        })
        .collect();
    let widths: Vec<usize> = metrics.iter().map(Column::width).collect();
    let first = label.width() + 2 + n.width() + 2 + outcome.width();
    for (i, group) in pack(&widths, first, label.width()).into_iter().enumerate() {
        let mut columns: Vec<&Column> = vec![&label];
        if i == 0 {
            columns.push(&n);
        }
        columns.extend(&metrics[group]);
        if i == 0 {
            columns.push(&outcome);
        }
        write_columns(&columns, out)?;
    }
    Ok(())
}

fn write_system(r: &ShowReport, out: &mut dyn Write) -> io::Result<()> {
    let rows: Vec<(&str, Vec<String>)> = r
        .configs
        .iter()
        .filter(|c| !c.system.is_empty())
        .map(|c| {
            let cells = SYSTEM
                .iter()
                .map(|(name, _)| {
                    c.system
                        .get(*name)
                        .map_or("–".into(), |v| format!("{v:.1}"))
                })
                .collect();
            (c.label.as_str(), cells)
        })
        .collect();
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
    let mean = if r.single_run {
        "the run's whole-run values"
    } else {
        "means over the ok runs"
    };
    writeln!(out, "\nthe system during the runs ({mean}):")?;
    let mut head = pad("configuration", w0);
    for (i, (_, h)) in SYSTEM.iter().enumerate() {
        head.push_str(&format!("  {}", rpad(h, widths[i])));
    }
    writeln!(out, "{head}")?;
    for (label, cells) in &rows {
        let mut line = pad(label, w0);
        for (i, c) in cells.iter().enumerate() {
            line.push_str(&format!("  {}", rpad(c, widths[i])));
        }
        writeln!(out, "{line}")?;
    }
    Ok(())
}

/// The findings, each check once with the configurations it fired on (named by the factor
/// levels they share where that is shorter) and its runs; then the configurations without any.
fn write_findings(r: &ShowReport, out: &mut dyn Write) -> io::Result<()> {
    if r.configs.iter().all(|c| c.checks.is_empty()) {
        return Ok(());
    }
    writeln!(out, "\nfindings (details: iolab report; docs/checks.md):")?;
    let labels: Vec<&str> = r.configs.iter().map(|c| c.label.as_str()).collect();
    for g in group_checks(r) {
        let count = CheckCount {
            check: g.check.clone(),
            severity: g.severity,
            runs: g.runs,
            about_config: g.about_config,
        };
        let mut line = format!("  {}: {}", count.text(), describe(&g.configs, &labels));
        if g.runs > 0 {
            let total: u64 = g.configs.iter().map(|&i| r.configs[i].runs.ok).sum();
            let (their, s) = match (g.configs.len(), total) {
                (1, 1) => ("its", ""),
                (1, _) => ("its", "s"),
                _ => ("their", "s"),
            };
            line.push_str(&format!(" (of {their} {total} ok run{s})"));
        }
        writeln!(out, "{line}")?;
    }
    let clean: Vec<usize> = (0..r.configs.len())
        .filter(|&i| r.configs[i].checks.is_empty())
        .collect();
    if !clean.is_empty() {
        writeln!(out, "  nothing found: {}", describe(&clean, &labels))?;
    }
    Ok(())
}

/// One check over every configuration it fired on.
struct CheckGroup {
    check: String,
    severity: iolab_store::Severity,
    /// Indices into the report's configurations, in order.
    configs: Vec<usize>,
    runs: usize,
    about_config: bool,
}

/// The configurations' counted checks regrouped per check, the most severe first, then the
/// most widespread.
fn group_checks(r: &ShowReport) -> Vec<CheckGroup> {
    let mut groups: Vec<CheckGroup> = Vec::new();
    for (i, c) in r.configs.iter().enumerate() {
        for k in &c.checks {
            let g = match groups.iter().position(|g| g.check == k.check) {
                Some(p) => &mut groups[p],
                None => {
                    groups.push(CheckGroup {
                        check: k.check.clone(),
                        severity: k.severity,
                        configs: Vec::new(),
                        runs: 0,
                        about_config: false,
                    });
                    groups.last_mut().expect("just pushed")
                }
            };
            g.severity = g.severity.max(k.severity);
            g.configs.push(i);
            g.runs += k.runs;
            g.about_config |= k.about_config;
        }
    }
    groups.sort_by_key(|g| {
        (
            std::cmp::Reverse(g.severity),
            std::cmp::Reverse(g.configs.len()),
        )
    });
    groups
}
