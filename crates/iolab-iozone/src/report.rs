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

use iolab_report::escape::{escape_html as esc, escape_md};
use iolab_report::num;
use iolab_report::section::{Placement, Section, SectionInput, SectionView};
use iolab_report::{MetricSummary, ReportData};
use iolab_util::units::format_bytes;

use crate::Figure;

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

/// The report's `iozone_passes` section: each configuration's figures, test by test, with
/// how much of the file the page cache held as each pass began — what tells a figure of the
/// device from one of memory.
pub struct IozonePassesSection;

impl Section for IozonePassesSection {
    fn key(&self) -> &'static str {
        "iozone_passes"
    }

    fn placement(&self) -> Placement {
        Placement::Summary
    }

    fn collect(&self, input: &SectionInput<'_>) -> Option<Box<dyn SectionView>> {
        let configs: Vec<ConfigPasses> = input
            .configs
            .iter()
            .map(|c| ConfigPasses {
                label: c.label.to_string(),
                passes: passes(c.ok_metrics, c.ok_flowops),
            })
            .collect();
        if configs.iter().all(|c| c.passes.is_empty()) {
            return None;
        }
        Some(Box::new(IozonePasses { configs }))
    }
}

/// One figure of one configuration, over its ok runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Pass {
    /// The figure: `write`, `reread`, `random_read`, …
    pub figure: String,
    /// iolab's rate of the pass (`<figure>_mib_per_s`), MiB/s.
    pub rate: MetricSummary,
    /// Bytes of the files the page cache held as the pass began, mean over the runs that
    /// measured it (`None`: not measured).
    pub cached_bytes: Option<f64>,
    /// Bytes of the files (size × threads).
    pub file_bytes: Option<u64>,
}

impl Pass {
    /// The share of the files the cache held as the pass began, in percent.
    pub fn cached_pct(&self) -> Option<f64> {
        let (c, f) = (self.cached_bytes?, self.file_bytes?);
        (f > 0).then(|| c / f as f64 * 100.0)
    }
}

#[derive(Debug, Clone, PartialEq)]
struct ConfigPasses {
    label: String,
    passes: Vec<Pass>,
}

/// A configuration's iozone passes, in the order it ran them (none for other kinds).
pub fn passes(
    ok: &BTreeMap<String, iolab_store::MetricValues>,
    runs: &[&Vec<FlowopStats>],
) -> Vec<Pass> {
    let mut order: Vec<&str> = Vec::new();
    for f in runs.iter().flat_map(|r| r.iter()) {
        if Figure::NAMES.contains(&f.name.as_str())
            && f.extra.get("elapsed_ns").is_some()
            && !order.contains(&f.name.as_str())
        {
            order.push(&f.name);
        }
    }
    order
        .into_iter()
        .filter_map(|name| {
            let metric = format!("{name}_mib_per_s");
            let v = ok.get(&metric)?;
            let rows = runs
                .iter()
                .flat_map(|r| r.iter())
                .filter(|f| f.name == name);
            let cached: Vec<f64> = rows
                .clone()
                .filter_map(|f| f.extra.get("cached_bytes")?.as_u64())
                .map(|b| b as f64)
                .collect();
            let file_bytes = rows.clone().find_map(|f| {
                let size = f.extra.get("size")?.as_u64()?;
                let threads = f.extra.get("threads").and_then(|t| t.as_u64()).unwrap_or(1);
                Some(size * threads)
            });
            Some(Pass {
                figure: name.to_string(),
                rate: MetricSummary::new(&metric, &v.unit, &v.values, &v.runs),
                cached_bytes: (!cached.is_empty())
                    .then(|| cached.iter().sum::<f64>() / cached.len() as f64),
                file_bytes,
            })
        })
        .collect()
}

/// Every configuration's passes.
#[derive(Debug)]
struct IozonePasses {
    configs: Vec<ConfigPasses>,
}

const PASSES_NOTE: &str = "Each test's own figure (MiB/s, mean ± half-width of the 95% interval \
                           over the ok runs), and how much of the file the page cache held as \
                           the pass began (cached_bytes): a read of a file the cache holds \
                           measures memory, not the device (docs/iozone.md).";

/// The figures run by any configuration, in the order of the first that ran them.
fn columns(configs: &[ConfigPasses]) -> Vec<&str> {
    let mut v: Vec<&str> = Vec::new();
    for p in configs.iter().flat_map(|c| &c.passes) {
        if !v.contains(&p.figure.as_str()) {
            v.push(&p.figure);
        }
    }
    v
}

fn rate_text(m: &MetricSummary) -> String {
    match m.ci {
        Some((lo, hi)) => format!("{} ± {}", num::fmt(m.mean), num::fmt((hi - lo) / 2.0)),
        None => num::fmt(m.mean),
    }
}

/// `8 MiB cached (100%)`, `nothing cached`, or nothing when not measured.
fn cached_text(p: &Pass) -> String {
    let Some(c) = p.cached_bytes else {
        return String::new();
    };
    if c < 1.0 {
        return "nothing cached".to_string();
    }
    let bytes = format_bytes(c.round() as u64);
    match p.cached_pct() {
        Some(pct) => format!("{bytes} cached ({pct:.0}%)"),
        None => format!("{bytes} cached"),
    }
}

/// `random_read` → `random read`.
fn heading(figure: &str) -> String {
    figure.replace('_', " ")
}

impl SectionView for IozonePasses {
    fn html(&self, h: &mut String, _data: &ReportData) {
        let cols = columns(&self.configs);
        let _ = write!(
            h,
            "<section id=\"iozone_passes\"><h2>iozone tests</h2><p class=\"muted\">{}</p><table \
             class=\"iozone-passes\"><thead><tr><th>configuration</th>",
            esc(PASSES_NOTE)
        );
        for c in &cols {
            let _ = write!(h, "<th>{} (MiB/s)</th>", esc(&heading(c)));
        }
        h.push_str("</tr></thead><tbody>");
        for c in &self.configs {
            if c.passes.is_empty() {
                continue;
            }
            let _ = write!(h, "<tr><td>{}</td>", esc(&c.label));
            for f in &cols {
                match c.passes.iter().find(|p| p.figure == *f) {
                    Some(p) => {
                        let _ = write!(
                            h,
                            "<td class=\"n\">{}<br><span class=\"muted\">{}</span></td>",
                            esc(&rate_text(&p.rate)),
                            esc(&cached_text(p))
                        );
                    }
                    None => h.push_str("<td></td>"),
                }
            }
            h.push_str("</tr>");
        }
        h.push_str("</tbody></table></section>");
    }

    fn markdown(&self, s: &mut String, _data: &ReportData) {
        let _ = write!(
            s,
            "\n## iozone tests\n\n{PASSES_NOTE}\n\n| configuration | test | MiB/s | cached at \
             the start |\n|---|---|---:|---:|\n"
        );
        for c in &self.configs {
            for p in &c.passes {
                let _ = writeln!(
                    s,
                    "| {} | {} | {} | {} |",
                    escape_md(&c.label),
                    heading(&p.figure),
                    rate_text(&p.rate),
                    cached_text(p)
                );
            }
        }
    }

    /// The configuration's passes, in its entry of the JSON report.
    fn config_json(&self, i: usize) -> Option<serde_json::Value> {
        serde_json::to_value(&self.configs.get(i)?.passes).ok()
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
    // Title (13 px) and captions (11 px) at ~0.6 em a character: the chart is at least as
    // wide as they are, and the two captions take a line each, so that a matrix of one
    // record size clips neither its title nor its captions.
    let title = format!("{} (MiB/s)", f.figure);
    let text_w = |chars: usize, px: f64| 16.0 + chars as f64 * 0.6 * px;
    let width = (LEFT + CW * f.records.len() as f64 + 10.0)
        .max(text_w(title.chars().count(), 13.0))
        .max(text_w("rows: file size".len(), 11.0));
    let height = TOP + CH * f.sizes.len() as f64 + 44.0;
    let max = f
        .cells
        .iter()
        .map(|c| c.mib_per_s)
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max);
    let mut out = String::new();
    let _ = write!(
        out,
        r#"<svg class="chart heatmap" viewBox="0 0 {width:.0} {height:.0}" role="img" aria-label="{t}"><text class="ct" x="8" y="18">{tt}</text>"#,
        t = esc(&f.figure),
        tt = esc(&title)
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
        r#"<text class="tick" x="{x:.1}" y="{y:.1}" text-anchor="middle">record size</text><text class="tick" x="8" y="{y2:.1}">rows: file size</text></svg>"#,
        x = (LEFT + CW * f.records.len() as f64 / 2.0)
            .max(8.0 + text_w("record size".len(), 11.0) / 2.0),
        y = height - 24.0,
        y2 = height - 8.0
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

    /// The seed-001 review: the summary mixed every test into one op/s, and `cached_bytes`
    /// was only in `export --format json`.
    #[test]
    fn the_passes_section_gives_each_tests_figure_and_what_the_cache_held() {
        use iolab_report::load;
        use iolab_report::testing::{assert_structure, record, render_all, store_with};
        use iolab_store::{Metric, RunStatus};
        let mib = 1u64 << 20;
        let (mut store, exp, c) = store_with(&["file=fits", "file=3x-cache", "other"]);
        for rep in 0..2 {
            for (config, size, cached) in [(c[0], 8 * mib, 8 * mib), (c[1], 64 * mib, 0)] {
                let mut r = record(config, rep, RunStatus::Ok, 100.0);
                for (i, name) in ["write", "read", "reread"].iter().enumerate() {
                    r.metrics.push(Metric::new(
                        format!("{name}_mib_per_s"),
                        100.0 * (i + 1) as f64 + rep as f64,
                        "MiB/s",
                    ));
                    let mut f = row(name, size, 65536, size, 1_000_000_000);
                    f.extra["cached_bytes"] = json!(if *name == "write" { 0 } else { cached });
                    r.flowops.push(f);
                }
                store.record_run(&r).unwrap();
            }
        }
        store
            .record_run(&record(c[2], 0, RunStatus::Ok, 100.0))
            .unwrap();
        let data = load(&store, exp, &[&IozonePassesSection]).unwrap();
        let (html, md, json) = render_all(&data);
        assert_structure(&html);
        let section = &html[html.find("id=\"iozone_passes\"").expect("the section")..];
        let section = &section[..section.find("</section>").unwrap()];
        for h in ["write (MiB/s)", "read (MiB/s)", "reread (MiB/s)"] {
            assert!(section.contains(h), "{h}: {section}");
        }
        assert!(!section.contains(">other<"));
        assert!(section.contains("8 MiB cached (100%)"), "{section}");
        assert!(section.contains("nothing cached"), "{section}");
        assert!(
            md.contains("| file=fits | reread | 300.5 ± 6.353 | 8 MiB cached (100%) |"),
            "{md}"
        );
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        let reread = &v["configs"][0]["iozone_passes"][2];
        assert_eq!(reread["figure"], "reread");
        assert_eq!(reread["cached_bytes"], 8.0 * mib as f64);
        assert_eq!(reread["rate"]["n"], 2);
        // No iozone runs, no section.
        let (store, exp, _) = store_with(&["a"]);
        let (html, _, _) = render_all(&load(&store, exp, &[&IozonePassesSection]).unwrap());
        assert!(!html.contains("id=\"iozone_passes\""));
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
        // Issue 26: a matrix of one record size clipped its title, and the two captions
        // overlapped; every label now lies inside the chart, apart from the others.
        let one = vec![row("random read", 96 * mib, 4096, 96 * mib, 1_000_000_000)];
        let mut col = Collector::default();
        col.add(&[&one]);
        let m = col.finish(true).unwrap();
        for f in &m.figures {
            let page = format!("<h3>{}</h3>{}", f.figure, heatmap(f));
            let problems = iolab_report::testing::svg_label_problems(&page);
            assert!(problems.is_empty(), "{problems:#?}");
        }
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
