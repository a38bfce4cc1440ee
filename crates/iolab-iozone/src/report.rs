//! iozone's matrix as heatmaps: per figure (write, read, random read, …) a grid of file size
//! × record size, each cell the mean throughput of its configuration's ok runs.
//!
//! An iozone run stores one flowop row per figure with the run's file size, record size and
//! threads (`extra.size`, `extra.record`, `extra.threads`) and its timed region
//! (`extra.elapsed_ns`), so the matrix needs neither the factor names nor the metric
//! definitions. Runs with different thread counts (a factor `threads`) or purges
//! (`extra.purge`) get a grid each per figure: averaging them into one cell would mix loads,
//! or the page cache's figures with the device's.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use iolab_store::FlowopStats;
use serde::Serialize;

use iolab_report::escape::escape_html as esc;
use iolab_report::num;
use iolab_report::section::{Placement, Section, SectionInput, SectionView};
use iolab_report::ReportData;
use iolab_util::units::format_bytes;

/// The report's `iozone` section: the matrix as heatmaps.
pub struct IozoneSection;

impl Section for IozoneSection {
    fn key(&self) -> &'static str {
        "iozone"
    }

    fn placement(&self) -> Placement {
        Placement::Details
    }

    fn collect(&self, input: &SectionInput<'_>) -> Option<Box<dyn SectionView>> {
        let mut c = Collector::default();
        for config in input.configs {
            c.add(config.ok_flowops);
        }
        // One-cell grids per thread count or purge are left out only when the sweep draws
        // the metrics against a factor instead (three or more levels).
        let swept = input.factors.iter().any(|f| f.levels.len() >= 3);
        Some(Box::new(c.finish(swept)?))
    }
}

impl SectionView for IozoneMatrix {
    fn html(&self, h: &mut String, _data: &ReportData) {
        render(h, self);
    }

    fn markdown(&self, s: &mut String, _data: &ReportData) {
        markdown(s, self);
    }

    fn json(&self) -> Option<serde_json::Value> {
        serde_json::to_value(self).ok()
    }
}

/// Every figure's grid.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct IozoneMatrix {
    pub figures: Vec<FigureMatrix>,
}

/// One figure over the cells that ran it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FigureMatrix {
    /// The flowop name: `write`, `random_read`, … (with `, N threads` when the experiment
    /// ran several thread counts).
    pub figure: String,
    /// The threads of the runs in this grid.
    pub threads: u64,
    /// Their purge between passes (`none`, `fadvise`, …).
    pub purge: String,
    /// File sizes, ascending (rows).
    pub sizes: Vec<u64>,
    /// Record sizes, ascending (columns).
    pub records: Vec<u64>,
    pub cells: Vec<IozoneCell>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IozoneCell {
    pub size: u64,
    pub record: u64,
    /// Mean over the cell's ok runs, MiB/s.
    pub mib_per_s: f64,
    pub runs: usize,
}

/// Collects the figures of the iozone runs of an experiment, configuration by configuration.
#[derive(Default)]
struct Collector {
    /// (figure, threads, purge) → first-seen index; (that index, size, record) → (sum, n).
    order: Vec<(String, u64, String)>,
    sums: BTreeMap<(usize, u64, u64), (f64, usize)>,
}

impl Collector {
    /// Adds one configuration's ok runs.
    pub fn add(&mut self, runs: &[&Vec<FlowopStats>]) {
        for flowops in runs {
            for f in flowops.iter() {
                let (Some(size), Some(record), Some(ns)) = (
                    f.extra.get("size").and_then(|v| v.as_u64()),
                    f.extra.get("record").and_then(|v| v.as_u64()),
                    f.extra
                        .get("elapsed_ns")
                        .and_then(|v| v.as_u64())
                        .filter(|&n| n > 0),
                ) else {
                    continue;
                };
                let threads = f.extra.get("threads").and_then(|v| v.as_u64()).unwrap_or(1);
                let purge = f
                    .extra
                    .get("purge")
                    .and_then(|v| v.as_str())
                    .unwrap_or("none")
                    .to_string();
                let i = match self
                    .order
                    .iter()
                    .position(|(n, t, p)| *n == f.name && *t == threads && *p == purge)
                {
                    Some(i) => i,
                    None => {
                        self.order.push((f.name.clone(), threads, purge));
                        self.order.len() - 1
                    }
                };
                let rate = f.bytes as f64 / (ns as f64 / 1e9) / 1048576.0;
                let e = self.sums.entry((i, size, record)).or_insert((0.0, 0));
                e.0 += rate;
                e.1 += 1;
            }
        }
    }

    /// The matrix, or `None` when no run was an iozone run — or when the runs differ only in
    /// threads or purge, each grid one cell, and the report draws its metrics against a
    /// factor (`swept`): one-cell grids would only repeat that.
    pub fn finish(self, swept: bool) -> Option<IozoneMatrix> {
        if self.sums.is_empty() {
            return None;
        }
        let one_cell_each = (0..self.order.len())
            .all(|i| self.sums.range((i, 0, 0)..=(i, u64::MAX, u64::MAX)).count() == 1);
        let mut figures: Vec<&str> = self.order.iter().map(|o| o.0.as_str()).collect();
        figures.sort_unstable();
        figures.dedup();
        let several_variants = self.order.len() > figures.len();
        if swept && one_cell_each && several_variants {
            return None;
        }
        let threads_vary = self.order.iter().any(|(_, t, _)| *t != self.order[0].1);
        let purges_vary = self.order.iter().any(|(_, _, p)| *p != self.order[0].2);
        let figures = self
            .order
            .iter()
            .enumerate()
            .map(|(i, (name, threads, purge))| {
                let cells: Vec<IozoneCell> = self
                    .sums
                    .range((i, 0, 0)..=(i, u64::MAX, u64::MAX))
                    .map(|(&(_, size, record), &(sum, n))| IozoneCell {
                        size,
                        record,
                        mib_per_s: sum / n as f64,
                        runs: n,
                    })
                    .collect();
                let mut sizes: Vec<u64> = cells.iter().map(|c| c.size).collect();
                sizes.sort_unstable();
                sizes.dedup();
                let mut records: Vec<u64> = cells.iter().map(|c| c.record).collect();
                records.sort_unstable();
                records.dedup();
                let mut figure = name.clone();
                if threads_vary {
                    let s = if *threads == 1 { "" } else { "s" };
                    figure.push_str(&format!(", {threads} thread{s}"));
                }
                if purges_vary {
                    figure.push_str(&format!(", purge {purge}"));
                }
                FigureMatrix {
                    figure,
                    threads: *threads,
                    purge: purge.clone(),
                    sizes,
                    records,
                    cells,
                }
            })
            .collect();
        Some(IozoneMatrix { figures })
    }
}

/// The heatmaps section.
fn render(h: &mut String, m: &IozoneMatrix) {
    h.push_str(
        "<section id=\"iozone\"><h2>iozone matrix</h2><p class=\"muted\">Per test: file size \
         (rows) × record size (columns); each cell the mean MiB/s of its configuration's runs \
         (all bytes over the whole timed region), darker is faster within the test. Empty: \
         not run.</p><div class=\"charts\">",
    );
    for f in &m.figures {
        h.push_str(&heatmap(f));
    }
    h.push_str("</div></section>");
}

/// The matrices as Markdown tables: per figure, a row per file size, a column per record
/// size, mean MiB/s in the cells.
fn markdown(s: &mut String, m: &IozoneMatrix) {
    s.push_str("\n## iozone matrix\n\nMean MiB/s of each configuration's ok runs; rows: file size, columns: record size.\n");
    for f in &m.figures {
        let _ = write!(s, "\n### {}\n\n| file |", f.figure);
        for r in &f.records {
            let _ = write!(s, " {} |", short(*r));
        }
        s.push_str("\n|---|");
        s.push_str(&"---:|".repeat(f.records.len()));
        s.push('\n');
        for size in &f.sizes {
            let _ = write!(s, "| {} |", short(*size));
            for r in &f.records {
                let v = f
                    .cells
                    .iter()
                    .find(|c| c.size == *size && c.record == *r)
                    .map_or(String::new(), |c| num::fmt(c.mib_per_s));
                let _ = write!(s, " {v} |");
            }
            s.push('\n');
        }
    }
}

/// One figure's grid as an SVG.
pub(crate) fn heatmap(f: &FigureMatrix) -> String {
    const CW: f64 = 64.0;
    const CH: f64 = 26.0;
    const LEFT: f64 = 70.0;
    const TOP: f64 = 44.0;
    let width = LEFT + CW * f.records.len() as f64 + 10.0;
    let height = TOP + CH * f.sizes.len() as f64 + 28.0;
    let max = f
        .cells
        .iter()
        .map(|c| c.mib_per_s)
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max);
    let mut out = String::new();
    let _ = write!(
        out,
        r#"<svg class="chart heatmap" viewBox="0 0 {width:.0} {height:.0}" role="img" aria-label="{t}"><text class="ct" x="8" y="18">{t} (MiB/s)</text>"#,
        t = esc(&f.figure)
    );
    for (j, r) in f.records.iter().enumerate() {
        let _ = write!(
            out,
            r#"<text class="tick" x="{x:.1}" y="{y:.1}" text-anchor="middle">{l}</text>"#,
            x = LEFT + CW * (j as f64 + 0.5),
            y = TOP - 6.0,
            l = esc(&short(*r))
        );
    }
    for (i, s) in f.sizes.iter().enumerate() {
        let y = TOP + CH * i as f64;
        let _ = write!(
            out,
            r#"<text class="tick" x="{x:.1}" y="{ty:.1}" text-anchor="end">{l}</text>"#,
            x = LEFT - 6.0,
            ty = y + CH * 0.65,
            l = esc(&short(*s))
        );
        for (j, r) in f.records.iter().enumerate() {
            let Some(c) = f.cells.iter().find(|c| c.size == *s && c.record == *r) else {
                continue;
            };
            let x = LEFT + CW * j as f64;
            let share = if max > 0.0 && c.mib_per_s.is_finite() {
                (c.mib_per_s / max).clamp(0.0, 1.0)
            } else {
                0.0
            };
            let _ = write!(
                out,
                r#"<rect x="{x:.1}" y="{y:.1}" width="{w:.1}" height="{hh:.1}" fill="{fill}"><title>file {fs}, record {rs}: {v} MiB/s ({n} run{p})</title></rect><text class="tick" x="{tx:.1}" y="{ty:.1}" text-anchor="middle" style="fill:{tc}">{v}</text>"#,
                w = CW - 2.0,
                hh = CH - 2.0,
                fill = shade(share),
                fs = esc(&format_bytes(c.size)),
                rs = esc(&format_bytes(c.record)),
                v = esc(&num::fmt(c.mib_per_s)),
                n = c.runs,
                p = if c.runs == 1 { "" } else { "s" },
                tx = x + CW / 2.0 - 1.0,
                ty = y + CH * 0.65,
                tc = if share > 0.55 { "#fff" } else { "#1d1d1f" },
            );
        }
    }
    let _ = write!(
        out,
        r#"<text class="tick" x="{x:.1}" y="{y:.1}" text-anchor="middle">record size</text><text class="tick" x="8" y="{y:.1}">rows: file size</text></svg>"#,
        x = LEFT + CW * f.records.len() as f64 / 2.0,
        y = height - 8.0
    );
    out
}

/// `64K`, `16M`, `1G`: iozone's sizes are powers of two.
fn short(bytes: u64) -> String {
    for (unit, shift) in [("G", 30), ("M", 20), ("K", 10)] {
        if bytes >= 1 << shift && bytes.is_multiple_of(1 << shift) {
            return format!("{}{unit}", bytes >> shift);
        }
    }
    bytes.to_string()
}

/// From a pale to a deep blue.
fn shade(share: f64) -> String {
    let lerp = |a: f64, b: f64| (a + (b - a) * share).round() as u8;
    format!(
        "#{:02x}{:02x}{:02x}",
        lerp(232.0, 11.0),
        lerp(240.0, 63.0),
        lerp(254.0, 145.0)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_store::LatencyStats;
    use serde_json::json;

    fn row(name: &str, size: u64, record: u64, bytes: u64, ns: u64) -> FlowopStats {
        FlowopStats {
            name: name.into(),
            kind: "write".into(),
            ops: bytes / record,
            bytes,
            errors: 0,
            latency: LatencyStats::default(),
            histogram: Vec::new(),
            extra: json!({ "size": size, "record": record, "elapsed_ns": ns }),
        }
    }

    #[test]
    fn cells_are_means_per_figure_and_the_svg_labels_them() {
        let mib = 1 << 20;
        let a = vec![row("write", mib, 4096, mib, 1_000_000_000)];
        let b = vec![row("write", mib, 4096, 3 * mib, 1_000_000_000)];
        let c = vec![
            row("write", 4 * mib, 65536, 4 * mib, 2_000_000_000),
            row("read", 4 * mib, 65536, 4 * mib, 1_000_000_000),
        ];
        let mut col = Collector::default();
        col.add(&[&a, &b]);
        col.add(&[&c]);
        let m = col.finish(true).unwrap();
        assert_eq!(m.figures.len(), 2);
        let w = &m.figures[0];
        assert_eq!(w.figure, "write");
        assert_eq!(w.sizes, vec![mib, 4 * mib]);
        assert_eq!(w.records, vec![4096, 65536]);
        assert_eq!(w.cells[0].mib_per_s, 2.0);
        assert_eq!(w.cells[0].runs, 2);
        let mut md = String::new();
        markdown(&mut md, &m);
        assert!(
            md.contains("### write\n\n| file | 4K | 64K |\n|---|---:|---:|\n| 1M | 2.000 |  |\n"),
            "{md}"
        );
        let svg = heatmap(w);
        assert!(svg.contains(">4K<") && svg.contains(">64K<") && svg.contains(">1M<"));
        assert_eq!(svg.matches("<rect").count(), 2, "two cells ran");
        assert!(Collector::default().finish(true).is_none());
        // Several thread counts: a grid per figure and count, named by it.
        let variant = |size: u64, bytes: u64, key: &str, v: serde_json::Value| {
            let mut r = row("write", size, 4096, bytes, 1_000_000_000);
            r.extra[key] = v;
            vec![r]
        };
        let two = variant(mib, 8 * mib, "threads", json!(2));
        let two_large = variant(4 * mib, 8 * mib, "threads", json!(2));
        let mut col = Collector::default();
        col.add(&[&a]);
        col.add(&[&two]);
        // One cell per grid: the runs differ in threads only, which the report draws
        // against the factor instead of as grids of one cell.
        let mut single = Collector::default();
        single.add(&[&a]);
        single.add(&[&two]);
        assert!(single.finish(true).is_none());
        // Unless nothing draws them against their factor (two counts, or no factor listed).
        let mut unswept = Collector::default();
        unswept.add(&[&a]);
        unswept.add(&[&two]);
        assert_eq!(unswept.finish(false).unwrap().figures.len(), 2);
        col.add(&[&two_large]);
        let m = col.finish(true).unwrap();
        let names: Vec<_> = m
            .figures
            .iter()
            .map(|f| (f.figure.as_str(), f.threads))
            .collect();
        assert_eq!(names, [("write, 1 thread", 1), ("write, 2 threads", 2)]);
        assert_eq!(m.figures[1].cells[0].mib_per_s, 8.0);
        // Purged runs are not averaged with the others: the cache's figures and the device's.
        let purged = variant(mib, 2 * mib, "purge", json!("remount"));
        let purged_large = variant(4 * mib, 2 * mib, "purge", json!("remount"));
        let mut col = Collector::default();
        col.add(&[&a]);
        col.add(&[&purged]);
        col.add(&[&purged_large]);
        let m = col.finish(true).unwrap();
        let names: Vec<_> = m.figures.iter().map(|f| f.figure.as_str()).collect();
        assert_eq!(names, ["write, purge none", "write, purge remount"]);
        assert_eq!(m.figures[1].purge, "remount");
        // Rows without the iozone fields are not iozone's.
        let mut other = row("x", 1, 1, 1, 1);
        other.extra = json!({});
        let mut col = Collector::default();
        col.add(&[&vec![other]]);
        assert!(col.finish(true).is_none());
    }
}
