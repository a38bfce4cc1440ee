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
    let mean = |name: &str| -> Option<f64> {
        let v: Vec<f64> = ok
            .get(name)?
            .values
            .iter()
            .copied()
            .filter(|x| x.is_finite())
            .collect();
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    };
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
    Views {
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
                    metadata and read-ahead (write-amplification).";

fn cell(v: Option<f64>) -> String {
    match v {
        Some(b) if b.is_finite() => format_bytes(b.round().max(0.0) as u64),
        _ => "–".into(),
    }
}

/// The columns: heading and value.
type Column = (&'static str, fn(&Views) -> Option<f64>);

const COLUMNS: &[Column] = &[
    ("claimed", |v| v.claimed_read),
    ("syscalls", |v| v.syscall_read),
    ("device", |v| v.device_read),
    ("claimed", |v| v.claimed_write),
    ("syscalls", |v| v.syscall_write),
    ("device", |v| v.device_write),
];

impl SectionView for Table {
    fn html(&self, h: &mut String, _data: &ReportData) {
        let _ = write!(
            h,
            "<section id=\"three-views\"><h2>Claimed, system calls, device</h2><p \
             class=\"muted\">{}</p><table class=\"views\"><thead><tr><th \
             rowspan=\"2\">configuration</th><th colspan=\"3\">read</th><th \
             colspan=\"3\">written</th></tr><tr>",
            esc(NOTE)
        );
        for (title, _) in COLUMNS {
            let _ = write!(h, "<th>{title}</th>");
        }
        h.push_str("</tr></thead><tbody>");
        for (label, v) in &self.rows {
            let _ = write!(h, "<tr><td class=\"label\">{}</td>", esc(label));
            for (_, f) in COLUMNS {
                let _ = write!(h, "<td class=\"n\">{}</td>", esc(&cell(f(v))));
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
             device |\n|---|---:|---:|---:|---:|---:|---:|\n"
        );
        for (label, v) in &self.rows {
            let _ = write!(s, "| {} |", escape_md(label));
            for (_, f) in COLUMNS {
                let _ = write!(s, " {} |", cell(f(v)));
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
}
