//! Miss-ratio curves of the saved block traces (docs/traces.md): with
//! `[procedure] save_block_trace = true`, each stored run's block-trace row carries the exact
//! LRU miss-ratio curve of its trace (`saved.mrc`: `block_size`, `requests`,
//! `distinct_blocks`, `points` as `[cache bytes, miss ratio]`). The report draws, per
//! configuration, the curve of its last ok run that has one: the runs of a configuration
//! repeat the same workload, and a mean of curves over different sizes would be a curve of no
//! trace.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use iolab_store::{FlowopStats, Run, RunId, RunStatus};
use iolab_util::units::format_bytes;
use serde::Serialize;
use serde_json::Value;

use crate::escape::{escape_html as esc, escape_md as md};
use crate::num;
use crate::svg::{self, Line, LineOpts, XFormat};

/// Every configuration's curve.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct MissRatioCurves {
    pub configs: Vec<ConfigCurve>,
}

/// One configuration's curve: that of the trace of one of its runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConfigCurve {
    pub label: String,
    pub run: RunId,
    /// Cache block size in bytes.
    pub block_size: u64,
    /// Block requests in the trace (requests split into blocks).
    pub requests: u64,
    /// Distinct blocks: every first access misses at any size.
    pub distinct_blocks: u64,
    /// `(cache size in bytes, miss ratio)`, ascending sizes.
    pub points: Vec<(u64, f64)>,
}

impl ConfigCurve {
    /// Reads a block-trace row's `saved.mrc`; `None` without one or if it is malformed.
    fn from_row(label: &str, run: RunId, f: &FlowopStats) -> Option<ConfigCurve> {
        let m = f.extra.get("saved")?.get("mrc")?;
        let u = |k: &str| m.get(k).and_then(Value::as_u64);
        let points = m
            .get("points")?
            .as_array()?
            .iter()
            .map(|p| Some((p.get(0)?.as_u64()?, p.get(1)?.as_f64()?)))
            .collect::<Option<Vec<_>>>()?;
        Some(ConfigCurve {
            label: label.to_string(),
            run,
            block_size: u("block_size")?,
            requests: u("requests")?,
            distinct_blocks: u("distinct_blocks")?,
            points,
        })
    }

    /// The miss ratio of the largest cache of at most `bytes` on the curve.
    fn at(&self, bytes: u64) -> Option<f64> {
        self.points
            .iter()
            .take_while(|p| p.0 <= bytes)
            .last()
            .map(|p| p.1)
    }
}

/// Collects the curves configuration by configuration.
#[derive(Default)]
pub(crate) struct Collector {
    configs: Vec<ConfigCurve>,
}

impl Collector {
    /// Adds the curve of the configuration's last ok run that has one.
    pub fn add(&mut self, label: &str, runs: &[&Run], flowops: &BTreeMap<RunId, Vec<FlowopStats>>) {
        let curve = runs
            .iter()
            .rev()
            .filter(|r| r.status == RunStatus::Ok)
            .find_map(|r| {
                flowops
                    .get(&r.id)?
                    .iter()
                    .filter(|f| f.kind == "trace")
                    .find_map(|f| ConfigCurve::from_row(label, r.id, f))
            });
        self.configs.extend(curve);
    }

    pub fn finish(self) -> Option<MissRatioCurves> {
        (!self.configs.is_empty()).then_some(MissRatioCurves {
            configs: self.configs,
        })
    }
}

/// Fractions of a trace's footprint at which the Markdown table gives the miss ratio.
const FOOTPRINT_FRACTIONS: [(u64, &str); 4] =
    [(10, "10%"), (25, "25%"), (50, "50%"), (100, "100%")];

/// The chart: one line per configuration.
pub(crate) fn render(h: &mut String, c: &MissRatioCurves) {
    h.push_str(
        "<section id=\"mrc\"><h2>Miss-ratio curves of the saved traces</h2><p class=\"muted\">\
         The miss ratio of an LRU cache of each size over the block trace saved with the run \
         (exact, from stack distances), per configuration the curve of its last ok run. The \
         curve ends at the trace's footprint (its distinct blocks): there only first accesses \
         miss.</p>",
    );
    let block_sizes: Vec<u64> = {
        let mut v: Vec<u64> = c.configs.iter().map(|x| x.block_size).collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    let lines: Vec<Line> = c
        .configs
        .iter()
        .enumerate()
        .map(|(i, x)| Line {
            label: x.label.clone(),
            colour: svg::colour(i),
            points: x.points.iter().map(|&(b, r)| (b as f64, r)).collect(),
            dots: false,
            whiskers: Vec::new(),
        })
        .collect();
    // One chart per palette's worth of configurations, so that colours stay distinct.
    let parts = lines.len().div_ceil(svg::PALETTE.len());
    for (i, chunk) in lines.chunks(svg::PALETTE.len()).enumerate() {
        let mut title = match block_sizes.as_slice() {
            [b] => format!("LRU miss ratio, {} blocks", format_bytes(*b)),
            _ => "LRU miss ratio".to_string(),
        };
        if parts > 1 {
            let _ = write!(title, " (part {})", i + 1);
        }
        h.push_str(&svg::line_chart(
            &title,
            chunk,
            &LineOpts {
                x_label: "cache size".into(),
                x_fmt: XFormat::Bytes,
                // A ratio: 0 … 1 on one scale for every chart.
                y_max: Some(1.0),
                ..LineOpts::default()
            },
        ));
    }
    h.push_str("<div class=\"scroll\"><table><thead><tr><th>configuration</th><th>run</th><th>block requests</th><th>footprint</th>");
    for (_, f) in FOOTPRINT_FRACTIONS {
        let _ = write!(h, "<th>miss ratio at {f}</th>");
    }
    h.push_str("</tr></thead><tbody>");
    for x in &c.configs {
        let cells = row(x);
        let _ = write!(h, "<tr><td>{}</td>", esc(&x.label));
        for (i, v) in cells.iter().enumerate() {
            let class = if i == 0 { "" } else { " class=\"n\"" };
            let _ = write!(h, "<td{class}>{}</td>", esc(v));
        }
        h.push_str("</tr>");
    }
    h.push_str("</tbody></table></div></section>");
}

/// A configuration's row after its label: run, requests, footprint, the miss ratios.
fn row(x: &ConfigCurve) -> Vec<String> {
    let footprint = x.distinct_blocks.saturating_mul(x.block_size);
    let mut v = vec![
        x.run.to_string(),
        num::fmt_count(x.requests),
        format!(
            "{} ({} blocks)",
            format_bytes(footprint),
            num::fmt_count(x.distinct_blocks)
        ),
    ];
    for (pct, _) in FOOTPRINT_FRACTIONS {
        let at = x.at(footprint.saturating_mul(pct) / 100);
        v.push(at.map_or("–".into(), num::fmt));
    }
    v
}

/// The table of the chart, in Markdown.
pub(crate) fn markdown(s: &mut String, c: &MissRatioCurves) {
    s.push_str("\n## Miss-ratio curves of the saved traces\n\nExact LRU miss ratio of the block trace saved with each configuration's last ok run, at fractions of the trace's footprint (its distinct blocks).\n\n| configuration | run | block requests | footprint |");
    for (_, f) in FOOTPRINT_FRACTIONS {
        let _ = write!(s, " miss ratio at {f} |");
    }
    s.push_str("\n|---|---:|---:|---:|");
    s.push_str(&"---:|".repeat(FOOTPRINT_FRACTIONS.len()));
    s.push('\n');
    for x in &c.configs {
        let _ = write!(s, "| {} |", md(&x.label));
        for v in row(x) {
            let _ = write!(s, " {} |", md(&v));
        }
        s.push('\n');
    }
}
