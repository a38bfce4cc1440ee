//! Parameter sweeps: each headline metric drawn against each factor of three or more levels.
//!
//! The x axis is ordinal — the factor's levels in the experiment file's order, equally spaced
//! — so powers of two (associativity 2 … 131072) and words (`full`) read alike. y is a
//! configuration's mean over its ok runs, its 95% interval a whisker (none for one run or a
//! deterministic metric). Each line is one combination of the other factors' levels. A chart
//! keeps at most [`MAX_LINES`] lines, one colour each: when the other factors span more
//! combinations, the factor with the fewest levels splits the chart into one per level (then
//! the next fewest, …), and a single factor with more levels than that is drawn in parts of
//! equal size.
//! The Markdown report has the same numbers as tables: a row per combination of the other
//! factors, a column per level.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use iolab_store::Config;
use serde::Serialize;
use serde_json::Value;

use crate::escape::{escape_html as esc, escape_md as md};
use crate::model::{ConfigReport, MetricSummary, ReportData};
use crate::svg::{self, Line, LineOpts};

/// Lines in one chart: one per colour of the palette.
pub const MAX_LINES: usize = svg::PALETTE.len();

/// A factor and its levels' names, in the experiment file's order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FactorLevels {
    pub name: String,
    pub levels: Vec<String>,
}

/// The experiment's factors and each configuration's level of each (`None`: the
/// configuration has no such factor), as [`iolab_compare::factors`] reads them from the
/// resolved specification and the configurations.
pub(crate) fn factors(
    spec: &Value,
    configs: &[Config],
) -> (Vec<FactorLevels>, Vec<Vec<Option<usize>>>) {
    let factors = iolab_compare::factors(spec, configs.iter().map(|c| &c.factors));
    let at = configs
        .iter()
        .map(|c| factors.iter().map(|f| f.level_of(&c.factors)).collect())
        .collect();
    let factors = factors
        .into_iter()
        .map(|f| FactorLevels {
            name: f.name,
            levels: f.levels.into_iter().map(|l| l.name).collect(),
        })
        .collect();
    (factors, at)
}

/// Configurations along one factor that share the levels of the others: a line.
#[derive(Debug, Clone, PartialEq)]
struct Series {
    /// `name=level` of the other factors that tell the lines apart.
    label: String,
    /// Per level of the factor, the configuration (an index into the report's).
    configs: Vec<Option<usize>>,
}

/// The lines of one chart (or table), with the levels of the factors it is split by.
#[derive(Debug, Clone, PartialEq)]
struct Panel {
    /// `name=level` of the splitting factors; empty when not split.
    split: String,
    /// 1-based part of a split that has more lines than fit in one chart; 0 when whole.
    part: usize,
    series: Vec<Series>,
}

fn pairs(data: &ReportData, factors: &[usize], levels: &[Option<usize>]) -> String {
    factors
        .iter()
        .zip(levels)
        .map(|(&f, l)| {
            let f = &data.factors[f];
            let l = l.map_or("–", |l| f.levels[l].as_str());
            format!("{}={l}", f.name)
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The panels of factor `f`, at most `max_lines` lines each.
fn panels(data: &ReportData, f: usize, max_lines: usize) -> Vec<Panel> {
    let n_levels = |g: usize| data.factors[g].levels.len();
    // The other factors that vary, in the file's order; those that split the chart leave
    // the legend, fewest levels first.
    let mut legend: Vec<usize> = (0..data.factors.len())
        .filter(|&g| g != f && n_levels(g) > 1)
        .collect();
    let mut split = Vec::new();
    let lines = |legend: &[usize]| legend.iter().map(|&g| n_levels(g)).product::<usize>();
    while legend.len() > 1 && lines(&legend) > max_lines {
        let (i, _) = legend
            .iter()
            .enumerate()
            .min_by_key(|&(i, &g)| (n_levels(g), i))
            .expect("more than one");
        split.push(legend.remove(i));
    }
    split.sort_unstable();
    type Key = Vec<Option<usize>>;
    let mut groups: BTreeMap<Key, BTreeMap<Key, Vec<Option<usize>>>> = BTreeMap::new();
    for (ci, c) in data.configs.iter().enumerate() {
        let Some(level) = c.levels.get(f).copied().flatten() else {
            continue;
        };
        let key = |gs: &[usize]| -> Key {
            gs.iter()
                .map(|&g| c.levels.get(g).copied().flatten())
                .collect()
        };
        let slot = groups
            .entry(key(&split))
            .or_default()
            .entry(key(&legend))
            .or_insert_with(|| vec![None; n_levels(f)]);
        if slot[level].is_none() {
            slot[level] = Some(ci);
        }
    }
    let mut out = Vec::new();
    for (split_key, lines) in groups {
        let series: Vec<Series> = lines
            .into_iter()
            .map(|(legend_key, configs)| Series {
                label: pairs(data, &legend, &legend_key),
                configs,
            })
            .collect();
        // Parts of equal size: seven policies are drawn as 4 + 3 lines, not 6 + 1.
        let parts = series.len().div_ceil(max_lines.max(1));
        let per_part = series.len().div_ceil(parts.max(1)).max(1);
        for (i, chunk) in series.chunks(per_part).enumerate() {
            out.push(Panel {
                split: pairs(data, &split, &split_key),
                part: if parts > 1 { i + 1 } else { 0 },
                series: chunk.to_vec(),
            });
        }
    }
    out
}

/// Factors with three or more levels, and the headline metrics with a value somewhere.
pub(crate) fn swept(data: &ReportData) -> (Vec<usize>, Vec<usize>) {
    let factors = (0..data.factors.len())
        .filter(|&f| data.factors[f].levels.len() >= 3)
        .collect();
    let metrics = (0..data.headline.len())
        .filter(|&k| data.configs.iter().any(|c| c.metrics[k].mean.is_finite()))
        .collect();
    (factors, metrics)
}

fn metric(c: &ConfigReport, k: usize) -> &MetricSummary {
    &c.metrics[k]
}

/// The section "Headline metrics by factor" (nothing without a factor of ≥ 3 levels).
pub(crate) fn render(h: &mut String, data: &ReportData) {
    let (factors, metrics) = swept(data);
    if factors.is_empty() || metrics.is_empty() {
        return;
    }
    h.push_str(
        "<section id=\"sweep\"><h2>Headline metrics by factor</h2><p class=\"muted\">Each \
         metric against each factor of three or more levels, in the experiment's order, equally \
         spaced. Points: a configuration's mean over its ok runs; whiskers: 95% confidence \
         intervals (none for a single run or a deterministic metric), set slightly apart so \
         they do not hide each other; one line per combination of the other factors' levels. \
         A chart holds at most six lines: more combinations are split into charts by the \
         factor with the fewest levels, on one scale (a log scale when the metric's values \
         span two decades or more).</p>",
    );
    for &f in &factors {
        let factor = &data.factors[f];
        let _ = write!(
            h,
            "<h3>by {}</h3><div class=\"charts wide\">",
            esc(&factor.name)
        );
        let panels = panels(data, f, MAX_LINES);
        for &k in &metrics {
            let d = &data.headline[k];
            let title = crate::num::title(&d.title, &d.unit);
            // The panels of a metric share one scale, to be compared across: from the
            // smallest mean to the highest bound, log when they span decades.
            let (mut low, mut top) = (f64::INFINITY, 0f64);
            for c in &data.configs {
                let m = metric(c, k);
                if m.mean.is_finite() {
                    low = low.min(m.mean);
                    top = top.max(m.ci.map_or(m.mean, |(_, hi)| hi.max(m.mean)));
                }
            }
            let scale = Scale {
                low,
                top,
                log: svg::spans_decades(low, top),
            };
            for (p, same) in distinct_panels(data, k, &panels) {
                chart(h, data, k, &title, factor, (p, &same), &scale);
            }
        }
        h.push_str("</div>");
    }
    h.push_str("</section>");
}

/// The panels of metric `k` that differ, each with the splits of the later panels that draw
/// exactly the same lines (write-through and write-back give the same miss ratios: one chart,
/// not two alike).
fn distinct_panels<'a>(
    data: &ReportData,
    k: usize,
    panels: &'a [Panel],
) -> Vec<(&'a Panel, Vec<String>)> {
    // Per line its label and, per level, the bits of the mean and of the interval.
    type Bits = Option<(u64, Option<(u64, u64)>)>;
    let key = |p: &Panel| -> Vec<(String, Vec<Bits>)> {
        p.series
            .iter()
            .map(|s| {
                let values = s
                    .configs
                    .iter()
                    .map(|c| {
                        c.map(|ci| {
                            let m = metric(&data.configs[ci], k);
                            (
                                m.mean.to_bits(),
                                m.ci.map(|(lo, hi)| (lo.to_bits(), hi.to_bits())),
                            )
                        })
                    })
                    .collect();
                (s.label.clone(), values)
            })
            .collect()
    };
    let mut out: Vec<(&Panel, Vec<String>)> = Vec::new();
    let mut keys = Vec::new();
    for p in panels {
        let kp = (p.part, key(p));
        match keys.iter().position(|x| *x == kp) {
            Some(i) if !p.split.is_empty() => out[i].1.push(p.split.clone()),
            _ => {
                keys.push(kp);
                out.push((p, Vec::new()));
            }
        }
    }
    out
}

/// The y scale the panels of one metric share.
struct Scale {
    low: f64,
    top: f64,
    log: bool,
}

fn chart(
    h: &mut String,
    data: &ReportData,
    k: usize,
    title: &str,
    factor: &FactorLevels,
    (p, same): (&Panel, &[String]),
    scale: &Scale,
) {
    let n = p.series.len();
    let whiskers = p.series.iter().any(|s| {
        s.configs.iter().flatten().any(|&ci| {
            metric(&data.configs[ci], k)
                .ci
                .is_some_and(|(lo, hi)| hi > lo)
        })
    });
    let lines: Vec<Line> = p
        .series
        .iter()
        .enumerate()
        .map(|(j, s)| {
            // Dodged by up to a fifth of a level's slot, only when whiskers could overlap.
            let dx = if whiskers && n > 1 {
                (j as f64 - (n - 1) as f64 / 2.0) * 0.4 / n as f64
            } else {
                0.0
            };
            let mut points = Vec::new();
            let mut ci = Vec::new();
            for (level, c) in s.configs.iter().enumerate() {
                let Some(m) = c.map(|ci| metric(&data.configs[ci], k)) else {
                    continue;
                };
                let x = level as f64 + dx;
                points.push((x, m.mean));
                if let Some((lo, hi)) = m.ci {
                    ci.push((x, lo, hi));
                }
            }
            Line {
                label: if s.label.is_empty() {
                    data.headline[k].title.to_string()
                } else {
                    s.label.clone()
                },
                colour: svg::colour(j),
                points,
                dots: false,
                whiskers: ci,
            }
        })
        .collect();
    let mut t = format!("{title} by {}", factor.name);
    if !p.split.is_empty() {
        let _ = write!(t, " — {}", p.split);
        for other in same {
            let _ = write!(t, " = {other}");
        }
    }
    if p.part > 0 {
        let _ = write!(t, " (part {})", p.part);
    }
    h.push_str(&svg::line_chart(
        &t,
        &lines,
        &LineOpts {
            x_label: factor.name.clone(),
            x_levels: factor.levels.clone(),
            width: Some(600.0),
            y_cover: scale.top,
            y_cover_low: scale.log.then_some(scale.low),
            y_scale: if scale.log {
                svg::YScale::Log
            } else {
                svg::YScale::Linear
            },
            y_unit: data.headline[k].unit.to_string(),
            ..LineOpts::default()
        },
    ));
}

/// The same as tables: per factor and metric, a row per combination of the other factors.
pub(crate) fn markdown(s: &mut String, data: &ReportData) {
    let (factors, metrics) = swept(data);
    if factors.is_empty() || metrics.is_empty() {
        return;
    }
    s.push_str("\n## Headline metrics by factor\n\nMean ± half-width of the 95% confidence interval over the ok runs, per level of each factor with three or more levels; a row per combination of the other factors' levels.\n");
    for &f in &factors {
        let factor = &data.factors[f];
        let panels = panels(data, f, usize::MAX);
        for &k in &metrics {
            let _ = write!(
                s,
                "\n### {} by {}\n\n| |",
                md(&crate::num::title(
                    &data.headline[k].title,
                    &data.headline[k].unit
                )),
                md(&factor.name)
            );
            for l in &factor.levels {
                let _ = write!(s, " {} |", md(l));
            }
            s.push_str("\n|---|");
            s.push_str(&"---:|".repeat(factor.levels.len()));
            s.push('\n');
            for p in &panels {
                for series in &p.series {
                    let label = [p.split.as_str(), series.label.as_str()]
                        .iter()
                        .filter(|x| !x.is_empty())
                        .copied()
                        .collect::<Vec<_>>()
                        .join(" ");
                    let _ = write!(s, "| {} |", md(&label));
                    for c in &series.configs {
                        let v =
                            c.map_or(String::new(), |ci| metric(&data.configs[ci], k).ci_text());
                        let _ = write!(s, " {v} |");
                    }
                    s.push('\n');
                }
            }
        }
    }
}
