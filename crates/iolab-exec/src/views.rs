//! The report's three views (active benchmarking): per configuration, what the workload
//! claims it read and wrote (another tool's own numbers, or iolab's counts for its own
//! kinds), what its system calls moved (the syscall view, `--trace-syscalls`), and what the
//! device moved — side by side, so that a figure served by the page cache, a claim beyond
//! the calls or a write amplified by the filesystem shows as a gap between columns.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use iolab_report::escape::{escape_html as esc, escape_md};
use iolab_report::section::{Placement, Section, SectionInput, SectionView};
use iolab_report::ReportData;
use iolab_store::{FlowopStats, MetricValues};
use iolab_util::units::format_bytes;
use serde::Serialize;

/// The report's `three_views` section.
pub struct ThreeViews;

/// One configuration's bytes, means over its ok runs (`None`: not known).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Views {
    /// The claims are another tool's (`false`: iolab's own counts).
    pub tool: bool,
    pub claimed_read: Option<f64>,
    pub claimed_write: Option<f64>,
    pub syscall_read: Option<f64>,
    pub syscall_write: Option<f64>,
    pub device_read: Option<f64>,
    pub device_write: Option<f64>,
    /// The written bytes over the time the workload says its write figures are over (bytes
    /// per second): another tool's claimed seconds, or iolab's timed passes.
    pub claimed_write_rate: Option<f64>,
    /// What the device wrote over the run's timed region (bytes per second).
    pub device_write_rate: Option<f64>,
}

impl Section for ThreeViews {
    fn key(&self) -> &'static str {
        "three_views"
    }

    fn placement(&self) -> Placement {
        Placement::Summary
    }

    /// Drawn when some configuration has the syscall view: without it, claimed against
    /// device is what the checks already say.
    fn collect(&self, input: &SectionInput<'_>) -> Option<Box<dyn SectionView>> {
        let rows: Vec<(String, Views)> = input
            .configs
            .iter()
            .map(|c| (c.label.to_string(), views(c.ok_metrics, c.ok_flowops)))
            .collect();
        if rows
            .iter()
            .all(|(_, v)| v.syscall_read.is_none() && v.syscall_write.is_none())
        {
            return None;
        }
        Some(Box::new(Table { rows }))
    }
}

/// A configuration's three views.
pub fn views(ok: &BTreeMap<String, MetricValues>, flowops: &[&Vec<FlowopStats>]) -> Views {
    let mean = |name: &str| -> Option<f64> { ok.get(name)?.finite_mean() };
    let tool = flowops
        .iter()
        .any(|rows| rows.iter().any(|f| f.extra["view"] == "claimed"));
    // As the checks count them: the rows that read, the rows that write.
    let claimed = |key: &str, kind: &str| -> Option<f64> {
        let per_run: Vec<f64> = flowops
            .iter()
            .map(|rows| {
                rows.iter()
                    .filter(|f| f.extra[key].as_bool().unwrap_or(f.kind == kind))
                    .map(|f| f.bytes as f64)
                    .sum()
            })
            .collect();
        (!per_run.is_empty()).then(|| per_run.iter().sum::<f64>() / per_run.len() as f64)
    };
    // Per run, the write rows' bytes over their timed time: another tool's claimed
    // seconds, or the passes' own timed regions (iozone, bonnie).
    let rates: Vec<f64> = flowops
        .iter()
        .filter_map(|rows| {
            let writes: Vec<_> = rows.iter().filter(|f| f.kind == "write").collect();
            let bytes: u64 = writes.iter().map(|f| f.bytes).sum();
            let secs = writes
                .iter()
                .find_map(|f| f.extra["seconds"].as_f64())
                .or_else(|| {
                    let ns: u64 = writes
                        .iter()
                        .filter_map(|f| f.extra["elapsed_ns"].as_u64())
                        .sum();
                    (ns > 0).then(|| ns as f64 / 1e9)
                })?;
            (bytes > 0 && secs > 0.0).then(|| bytes as f64 / secs)
        })
        .collect();
    let claimed_write_rate =
        (!rates.is_empty()).then(|| rates.iter().sum::<f64>() / rates.len() as f64);
    // The device's time: the write passes with the flushes their figures leave out
    // (iolab's iozone with `flush = "excluded"`), else the run's timed region.
    let flush_times: Vec<f64> = flowops
        .iter()
        .filter_map(|rows| {
            let ns: u64 = rows
                .iter()
                .filter(|f| f.kind == "write" && f.extra["flush_ns"].is_u64())
                .map(|f| {
                    f.extra["elapsed_ns"].as_u64().unwrap_or(0)
                        + f.extra["flush_ns"].as_u64().unwrap_or(0)
                })
                .sum();
            (ns > 0).then(|| ns as f64 / 1e9)
        })
        .collect();
    let device_secs = if flush_times.is_empty() {
        mean("elapsed_s")
    } else {
        Some(flush_times.iter().sum::<f64>() / flush_times.len() as f64)
    };
    let device_write_rate = match (mean("dev.write_bytes"), device_secs) {
        (Some(b), Some(s)) if s > 0.0 && b > 0.0 => Some(b / s),
        _ => None,
    };
    Views {
        claimed_write_rate,
        device_write_rate,
        tool,
        claimed_read: claimed("read", "read"),
        claimed_write: claimed("write", "write"),
        syscall_read: mean("sys.read_bytes"),
        syscall_write: mean("sys.write_bytes"),
        device_read: mean("dev.read_bytes"),
        device_write: mean("dev.write_bytes"),
    }
}

#[derive(Debug)]
struct Table {
    rows: Vec<(String, Views)>,
}

const NOTE: &str = "Bytes per run (means over the ok runs) as the workload claims them — \
                    another tool's own numbers, or iolab's counts for its own kinds —, as its \
                    processes' system calls moved them (the syscall view), and as the device \
                    moved them (diskstats). Claims above the calls: the tool's arithmetic or \
                    timing window (claims-beyond-syscalls). Calls above the device: the page \
                    cache served the reads or still held the writes (cache-served, \
                    flush-untimed). Device above the calls: the filesystem's journal, \
                    metadata and read-ahead (write-amplification). The write rates: the written bytes over \
                    the time the workload's write figures are over, and what the device wrote \
                    over the time the writes took to reach it (the passes with the flushes \
                    their figures leave out, or the whole run) — a claimed rate far above the \
                    device's was timed without its flush (flush-untimed).";

fn cell(v: Option<f64>, rate: bool) -> String {
    match v {
        Some(b) if b.is_finite() => {
            format_bytes(b.round().max(0.0) as u64) + if rate { "/s" } else { "" }
        }
        _ => "–".into(),
    }
}

/// The columns: heading, value, whether a rate.
type Column = (&'static str, fn(&Views) -> Option<f64>, bool);

const COLUMNS: &[Column] = &[
    ("claimed", |v| v.claimed_read, false),
    ("syscalls", |v| v.syscall_read, false),
    ("device", |v| v.device_read, false),
    ("claimed", |v| v.claimed_write, false),
    ("syscalls", |v| v.syscall_write, false),
    ("device", |v| v.device_write, false),
    ("claimed", |v| v.claimed_write_rate, true),
    ("device", |v| v.device_write_rate, true),
];

impl SectionView for Table {
    fn html(&self, h: &mut String, _data: &ReportData) {
        let _ = write!(
            h,
            "<section id=\"three-views\"><h2>Claimed, system calls, device</h2><p \
             class=\"muted\">{}</p><table class=\"views\"><thead><tr><th \
             rowspan=\"2\">configuration</th><th colspan=\"3\">read</th><th \
             colspan=\"3\">written</th><th colspan=\"2\">write rate</th></tr><tr>",
            esc(NOTE)
        );
        for (title, _, _) in COLUMNS {
            let _ = write!(h, "<th>{title}</th>");
        }
        h.push_str("</tr></thead><tbody>");
        for (label, v) in &self.rows {
            let _ = write!(h, "<tr><td class=\"label\">{}</td>", esc(label));
            for (_, f, rate) in COLUMNS {
                let _ = write!(h, "<td class=\"n\">{}</td>", esc(&cell(f(v), *rate)));
            }
            h.push_str("</tr>");
        }
        h.push_str("</tbody></table></section>");
    }

    fn markdown(&self, s: &mut String, _data: &ReportData) {
        let _ = write!(
            s,
            "\n## Claimed, system calls, device\n\n{NOTE}\n\n| configuration | read: claimed | \
             read: syscalls | read: device | written: claimed | written: syscalls | written: \
             device | write rate: claimed | write rate: device |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n"
        );
        for (label, v) in &self.rows {
            let _ = write!(s, "| {} |", escape_md(label));
            for (_, f, rate) in COLUMNS {
                let _ = write!(s, " {} |", cell(f(v), *rate));
            }
            s.push('\n');
        }
    }

    fn config_json(&self, i: usize) -> Option<serde_json::Value> {
        serde_json::to_value(&self.rows.get(i)?.1).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_report::load;
    use iolab_report::testing::{assert_structure, record, render_all, store_with};
    use iolab_store::{Metric, RunStatus};

    const MIB: f64 = 1048576.0;

    /// Seed report 001 on this machine: iozone claims 96 MiB written, its calls moved 96 MiB,
    /// the device saw 6 MiB before the clock stopped.
    #[test]
    fn the_report_sets_claims_calls_and_device_side_by_side() {
        let (mut store, exp, c) = store_with(&["file=fits", "no-syscall-view"]);
        for rep in 0..2 {
            let mut r = record(c[0], rep, RunStatus::Ok, 100.0);
            r.flowops = crate::run::claimed_rows(&iolab_tools::Claimed {
                write_bytes: Some(96.0 * MIB),
                flush_timed: Some(false),
                ..Default::default()
            });
            for (name, v) in [
                ("sys.write_bytes", 96.0 * MIB),
                ("sys.read_bytes", 0.0),
                ("dev.write_bytes", (6 + rep) as f64 * MIB),
                ("dev.read_bytes", 0.0),
            ] {
                r.metrics.push(Metric::new(name, v, "B"));
            }
            store.record_run(&r).unwrap();
        }
        store
            .record_run(&record(c[1], 0, RunStatus::Ok, 100.0))
            .unwrap();
        let data = load(&store, exp, &[&ThreeViews]).unwrap();
        let (html, md, json) = render_all(&data);
        assert_structure(&html);
        let section = &html[html.find("id=\"three-views\"").expect("the section")..];
        let section = &section[..section.find("</section>").unwrap()];
        assert!(
            section.contains(
                "<td class=\"n\">96 MiB</td><td class=\"n\">96 MiB</td><td class=\"n\">6.5 \
                 MiB</td>"
            ),
            "{section}"
        );
        assert!(
            md.contains("| file=fits | 0 B | 0 B | 0 B | 96 MiB | 96 MiB | 6.5 MiB |"),
            "{md}"
        );
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        let views = &v["configs"][0]["three_views"];
        assert_eq!(views["tool"], true);
        assert_eq!(views["device_write"], 6.5 * MIB);
        // Without the syscall view anywhere, no section.
        let (store, exp, _) = store_with(&["a"]);
        let (html, _, _) = render_all(&load(&store, exp, &[&ThreeViews]).unwrap());
        assert!(!html.contains("id=\"three-views\""));
    }

    /// iolab's iozone with `flush = "excluded"`: 96 MiB written in 24 ms of figure and 45 ms
    /// of flush; the device's rate is over both.
    #[test]
    fn the_write_rates_set_the_figures_time_against_the_devices() {
        let row = iolab_store::FlowopStats {
            name: "write".into(),
            kind: "write".into(),
            ops: 0,
            bytes: 96 << 20,
            errors: 0,
            latency: Default::default(),
            histogram: Vec::new(),
            extra: serde_json::json!({"elapsed_ns": 24_000_000u64, "flush_ns": 45_000_000u64}),
        };
        let rows = vec![row];
        let mut ok = BTreeMap::new();
        ok.insert(
            "dev.write_bytes".to_string(),
            MetricValues {
                unit: "B".into(),
                values: vec![96.0 * MIB],
                runs: Vec::new(),
            },
        );
        let v = views(&ok, &[&rows]);
        assert_eq!(v.claimed_write, Some(96.0 * MIB));
        assert_eq!(v.claimed_write_rate, Some(96.0 * MIB / 0.024));
        assert_eq!(v.device_write_rate, Some(96.0 * MIB / 0.069));
        assert!(!v.tool);
    }
}
