//! Hand-written inline SVG charts: bar charts with confidence whiskers, line charts (linear,
//! log or ordinal x, with optional whiskers), nothing fetched, every label escaped. Geometry
//! is computed by pure functions that the tests check (whiskers stay in the plot, bar heights
//! are proportional to the values).

use std::fmt::Write;

use crate::escape::escape_html as esc;
use crate::num;
use iolab_util::{units::format_bytes, units::format_ns};

/// Okabe & Ito's colour-blind-safe palette (2008), without its black and yellow.
pub const PALETTE: [&str; 6] = [
    "#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9",
];

pub fn colour(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// The plot area inside the SVG's view box.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Plot {
    pub width: f64,
    pub height: f64,
    pub left: f64,
    pub right: f64,
    pub top: f64,
    pub bottom: f64,
}

impl Plot {
    pub fn new(width: f64, height: f64) -> Plot {
        Plot {
            width,
            height,
            left: 64.0,
            right: 16.0,
            top: 28.0,
            bottom: 44.0,
        }
    }
    pub fn x0(&self) -> f64 {
        self.left
    }
    pub fn x1(&self) -> f64 {
        self.width - self.right
    }
    pub fn y0(&self) -> f64 {
        self.height - self.bottom
    }
    pub fn y1(&self) -> f64 {
        self.top
    }
    pub fn inner_width(&self) -> f64 {
        self.x1() - self.x0()
    }
    pub fn inner_height(&self) -> f64 {
        self.y0() - self.y1()
    }
}

/// One bar's input: the mean, its interval, and the individual values.
#[derive(Debug, Clone, PartialEq)]
pub struct BarInput {
    pub label: String,
    pub mean: f64,
    pub ci: Option<(f64, f64)>,
    /// `(value, is_outlier)`.
    pub points: Vec<(f64, bool)>,
}

/// Where a bar and its whisker go.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BarGeom {
    pub x: f64,
    pub width: f64,
    /// Top of the bar (= `y_base` when the mean is not finite).
    pub y: f64,
    pub y_base: f64,
    /// `(top, bottom)` of the whisker, clamped to the plot.
    pub whisker: Option<(f64, f64)>,
}

/// "Nice" axis maximum and tick step for data up to `max` (1-2-5 steps, about 5 ticks).
pub fn nice_axis(max: f64) -> (f64, f64) {
    let max = if max.is_finite() && max > 0.0 {
        max
    } else {
        1.0
    };
    let raw = max / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    ((max / step).ceil() * step, step)
}

/// Lays out the bars on a zero-based linear scale up to a nice maximum covering every mean,
/// interval bound and value.
pub fn bar_layout(bars: &[BarInput], plot: &Plot) -> (f64, f64, Vec<BarGeom>) {
    let mut max = 0f64;
    for b in bars {
        let mut consider = |v: f64| {
            if v.is_finite() {
                max = max.max(v);
            }
        };
        consider(b.mean);
        if let Some((lo, hi)) = b.ci {
            consider(lo);
            consider(hi);
        }
        for &(v, _) in &b.points {
            consider(v);
        }
    }
    let (y_max, step) = nice_axis(max);
    let n = bars.len().max(1) as f64;
    let slot = plot.inner_width() / n;
    let width = (slot * 0.6).min(90.0);
    let geoms = bars
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let x = plot.x0() + slot * (i as f64 + 0.5) - width / 2.0;
            let y = if b.mean.is_finite() {
                y_of(b.mean, y_max, plot)
            } else {
                plot.y0()
            };
            let whisker = b.ci.and_then(|(lo, hi)| {
                (lo.is_finite() && hi.is_finite())
                    .then(|| (y_of(hi, y_max, plot), y_of(lo, y_max, plot)))
            });
            BarGeom {
                x,
                width,
                y,
                y_base: plot.y0(),
                whisker,
            }
        })
        .collect();
    (y_max, step, geoms)
}

/// The y of a value on a 0..`y_max` scale, clamped to the plot.
fn y_of(v: f64, y_max: f64, plot: &Plot) -> f64 {
    let f = (v / y_max).clamp(0.0, 1.0);
    plot.y0() - f * plot.inner_height()
}

/// The `font-size` that fits a title of `chars` characters (13 px bold, about 7.5 px each)
/// into `width` pixels with a margin, if 13 px does not; never below 9 px.
fn title_size(chars: usize, width: f64) -> Option<f64> {
    let room = width - 16.0;
    let need = 7.5 * chars as f64;
    (need > room).then(|| (13.0 * room / need).max(9.0))
}

fn open(out: &mut String, plot: &Plot, title: &str) {
    let style = title_size(title.chars().count(), plot.width).map_or(String::new(), |px| {
        format!(r#" style="font-size:{px:.1}px""#)
    });
    let _ = write!(
        out,
        r#"<svg class="chart" viewBox="0 0 {w} {h}" role="img"><title>{t}</title><text class="ct" x="{cx}" y="16" text-anchor="middle"{style}>{t}</text>"#,
        w = plot.width,
        h = plot.height,
        cx = plot.width / 2.0,
        t = esc(title)
    );
}

fn y_axis(out: &mut String, plot: &Plot, y_max: f64, step: f64, fmt: &dyn Fn(f64) -> String) {
    let mut v = 0.0;
    let mut guard = 0;
    while v <= y_max * 1.000_001 && guard < 50 {
        let y = y_of(v, y_max, plot);
        let _ = write!(
            out,
            r#"<line class="grid" x1="{x0}" x2="{x1}" y1="{y:.1}" y2="{y:.1}"/><text class="tick" x="{tx}" y="{ty:.1}" text-anchor="end">{l}</text>"#,
            x0 = plot.x0(),
            x1 = plot.x1(),
            tx = plot.x0() - 4.0,
            ty = y + 4.0,
            l = esc(&fmt(v))
        );
        v += step;
        guard += 1;
    }
    let _ = write!(
        out,
        r#"<line class="axis" x1="{x0}" x2="{x0}" y1="{y1}" y2="{y0}"/><line class="axis" x1="{x0}" x2="{x1}" y1="{y0}" y2="{y0}"/>"#,
        x0 = plot.x0(),
        x1 = plot.x1(),
        y0 = plot.y0(),
        y1 = plot.y1()
    );
}

/// A bar chart of means with 95% whiskers; each run's value as a dot, outliers as red rings.
pub fn bar_chart(title: &str, bars: &[BarInput]) -> String {
    let plot = Plot::new(480.0, 300.0);
    let (y_max, step, geoms) = bar_layout(bars, &plot);
    let mut out = String::new();
    open(&mut out, &plot, title);
    y_axis(&mut out, &plot, y_max, step, &num::fmt);
    for (i, (b, g)) in bars.iter().zip(&geoms).enumerate() {
        let cx = g.x + g.width / 2.0;
        if b.mean.is_finite() {
            let _ = write!(
                out,
                r#"<rect x="{x:.1}" y="{y:.1}" width="{w:.1}" height="{h:.1}" fill="{c}" opacity="0.8"><title>{l}: {m}</title></rect>"#,
                x = g.x,
                y = g.y,
                w = g.width,
                h = g.y_base - g.y,
                c = colour(i),
                l = esc(&b.label),
                m = esc(&num::fmt(b.mean)),
            );
        } else {
            let _ = write!(
                out,
                r#"<text class="tick" x="{cx:.1}" y="{y:.1}" text-anchor="middle">no data</text>"#,
                y = g.y_base - 6.0
            );
        }
        if let Some((top, bottom)) = g.whisker {
            let _ = write!(
                out,
                r#"<path class="whisker" d="M{cx:.1} {top:.1}V{bottom:.1}M{a:.1} {top:.1}H{b:.1}M{a:.1} {bottom:.1}H{b:.1}"/>"#,
                a = cx - 6.0,
                b = cx + 6.0
            );
        }
        let k = b.points.len().max(1) as f64;
        for (j, &(v, outlier)) in b.points.iter().enumerate() {
            if !v.is_finite() {
                continue;
            }
            let y_max_v = y_of(v, y_max, &plot);
            let px = g.x + g.width * (0.15 + 0.7 * (j as f64 + 0.5) / k);
            if outlier {
                let _ = write!(
                    out,
                    r#"<circle class="outlier" cx="{px:.1}" cy="{y_max_v:.1}" r="4.5"><title>outlier: {v}</title></circle>"#,
                    v = esc(&num::fmt(v))
                );
            } else {
                let _ = write!(
                    out,
                    r#"<circle class="pt" cx="{px:.1}" cy="{y_max_v:.1}" r="2"/>"#
                );
            }
        }
        let _ = write!(
            out,
            r#"<text class="tick" x="{cx:.1}" y="{y:.1}" text-anchor="middle">{l}</text>"#,
            y = plot.y0() + 16.0,
            l = esc(&shorten(&b.label, 18))
        );
    }
    out.push_str("</svg>");
    out
}

fn shorten(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(n - 1).collect();
        t.push('…');
        t
    }
}

/// A line of a line chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    pub label: String,
    pub colour: &'static str,
    pub points: Vec<(f64, f64)>,
    /// Draw dots only (no line).
    pub dots: bool,
    /// Intervals `(x, low, high)` drawn as whiskers in the line's colour (95% CIs).
    pub whiskers: Vec<(f64, f64, f64)>,
}

/// How the x ticks of a numeric axis are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum XFormat {
    #[default]
    Number,
    /// Nanoseconds as durations (`format_ns`).
    Ns,
    /// Bytes with binary units, ticks at round multiples of a KiB, MiB, GiB….
    Bytes,
}

/// Options of a line chart.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LineOpts {
    pub x_label: String,
    /// Vertical separators `(x, label)`, e.g. run boundaries.
    pub separators: Vec<(f64, String)>,
    /// Logarithmic x axis (for latency CDFs).
    pub log_x: bool,
    /// Fixed y maximum (e.g. 1 for a CDF, 100 for %).
    pub y_max: Option<f64>,
    /// A value the (nice) y axis reaches at least, whatever the lines: charts drawn side by
    /// side on one scale.
    pub y_cover: f64,
    pub x_fmt: XFormat,
    /// An ordinal x axis when not empty: these labels equally spaced in this order, and a
    /// point's x is the index of its level (a fraction sets it beside the level, as dodged
    /// whiskers are). Powers of two and words (`full`) are spaced alike. Labels that do not
    /// fit side by side are slanted ([`level_labels`]).
    pub x_levels: Vec<String>,
    /// Width of the view box (default 720): a chart drawn two abreast is narrower, so that
    /// its text keeps its size.
    pub width: Option<f64>,
}

/// Keeps at most `max` points, evenly spaced (the first and last always kept).
pub fn thin(points: &[(f64, f64)], max: usize) -> Vec<(f64, f64)> {
    if points.len() <= max || max < 2 {
        return points.to_vec();
    }
    let step = (points.len() - 1) as f64 / (max - 1) as f64;
    (0..max)
        .map(|i| points[((i as f64 * step).round() as usize).min(points.len() - 1)])
        .collect()
}

/// Width of a tick label of `chars` characters at the charts' 11 px font, with a gap.
fn label_width(chars: usize) -> f64 {
    6.5 * chars as f64 + 8.0
}

/// Longest ordinal tick label written whole (longer ones end in `…`).
const LEVEL_CHARS: usize = 28;

/// Longest legend entry written whole: `policy=clock:m=16,s=1,i=16` must not be cut where it
/// would read as `policy=clock:m=16,s=1,i=1`.
const LEGEND_CHARS: usize = 40;

/// Horizontal room a slanted label needs: about its line height.
const SLANTED_ROOM: f64 = 14.0;

/// How an ordinal axis writes its level labels.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LevelLabels {
    /// Slanted at 35° because they do not fit side by side.
    pub slanted: bool,
    /// Every how many levels a label is written (1: all of them).
    pub stride: usize,
    /// Room the labels take below the axis beyond a flat row's, in pixels.
    pub depth: f64,
}

/// The labels of an ordinal axis of `labels` over `width` pixels: flat when they fit side by
/// side, else slanted (long words like `clock:m=16,s=1,i=16` stay whole), and only every
/// k-th when even slanted ones would overlap.
pub fn level_labels(labels: &[String], width: f64) -> LevelLabels {
    let n = labels.len().max(1);
    let slot = width / n as f64;
    let widest = labels
        .iter()
        .map(|l| shorten(l, LEVEL_CHARS).chars().count())
        .max()
        .unwrap_or(0);
    if label_width(widest) <= slot {
        return LevelLabels {
            slanted: false,
            stride: 1,
            depth: 0.0,
        };
    }
    LevelLabels {
        slanted: true,
        stride: ((SLANTED_ROOM / slot).ceil() as usize).clamp(1, n),
        depth: 6.5 * widest as f64 * 35f64.to_radians().sin(),
    }
}

/// Tick positions of a linear byte axis up to `max`: round multiples of the largest binary
/// unit that `max` reaches, 1-2-5 steps of it.
fn byte_ticks(max: f64) -> Vec<f64> {
    let mut unit = 1.0;
    while unit * 1024.0 <= max {
        unit *= 1024.0;
    }
    let (_, step) = nice_axis(max / unit);
    (0..=50)
        .map(|i| f64::from(i) * step * unit)
        .take_while(|&x| x <= max * 1.000_001)
        .collect()
}

/// A line chart; non-finite points are skipped (they break the line).
pub fn line_chart(title: &str, lines: &[Line], opts: &LineOpts) -> String {
    let mut plot = Plot::new(720.0, 260.0);
    let ordinal = !opts.x_levels.is_empty();
    let log_x = opts.log_x && !ordinal;
    let tx = |x: f64| if log_x { x.max(1.0).log10() } else { x };
    let mut x_min = f64::INFINITY;
    let mut x_max = f64::NEG_INFINITY;
    let mut y_data_max = 0f64;
    for l in lines {
        for &(x, y) in &l.points {
            if x.is_finite() && y.is_finite() {
                x_min = x_min.min(tx(x));
                x_max = x_max.max(tx(x));
                y_data_max = y_data_max.max(y);
            }
        }
        for &(_, _, hi) in &l.whiskers {
            if hi.is_finite() {
                y_data_max = y_data_max.max(hi);
            }
        }
    }
    for (x, _) in &opts.separators {
        if x.is_finite() {
            x_max = x_max.max(tx(*x));
            x_min = x_min.min(tx(*x));
        }
    }
    if !x_min.is_finite() {
        x_min = 0.0;
        x_max = 1.0;
    }
    if !log_x {
        x_min = x_min.min(0.0);
    }
    if ordinal {
        // Each level in the middle of an equal slot.
        x_min = -0.5;
        x_max = opts.x_levels.len() as f64 - 0.5;
    }
    if x_max <= x_min {
        x_max = x_min + 1.0;
    }
    let (y_max, step) = match opts.y_max {
        Some(m) => (m, m / 5.0),
        None => nice_axis(y_data_max.max(opts.y_cover)),
    };
    if let Some(w) = opts.width {
        plot.width = w;
    }
    // The legend goes above the plot, where it hides no data: a band of rows.
    let legend = legend_rows(lines, &plot);
    let band = LEGEND_ROW * legend.len() as f64;
    plot.top += band;
    plot.height += band;
    let levels = level_labels(&opts.x_levels, plot.inner_width());
    plot.bottom += levels.depth;
    plot.height += levels.depth;
    let px = |x: f64| plot.x0() + (tx(x) - x_min) / (x_max - x_min) * plot.inner_width();
    let mut out = String::new();
    open(&mut out, &plot, title);
    y_axis(&mut out, &plot, y_max, step, &num::fmt);
    let tick = |out: &mut String, p: f64, label: &str| {
        let _ = write!(
            out,
            r#"<text class="tick" x="{p:.1}" y="{y:.1}" text-anchor="middle">{l}</text>"#,
            y = plot.y0() + 14.0,
            l = esc(label)
        );
    };
    let fmt_x = |x: f64| match opts.x_fmt {
        XFormat::Number => num::fmt(x),
        XFormat::Ns => format_ns(x),
        XFormat::Bytes => format_bytes(x.max(0.0).round() as u64),
    };
    if ordinal {
        for (i, level) in opts.x_levels.iter().enumerate() {
            let p = px(i as f64);
            let _ = write!(
                out,
                r#"<line class="axis" x1="{p:.1}" x2="{p:.1}" y1="{y0}" y2="{y:.1}"/>"#,
                y0 = plot.y0(),
                y = plot.y0() + 3.0
            );
            if i % levels.stride != 0 {
                continue;
            }
            let text = shorten(level, LEVEL_CHARS);
            if levels.slanted {
                let y = plot.y0() + 12.0;
                let _ = write!(
                    out,
                    r#"<text class="tick" x="{p:.1}" y="{y:.1}" text-anchor="end" transform="rotate(-35 {p:.1} {y:.1})">{l}</text>"#,
                    l = esc(&text)
                );
            } else {
                tick(&mut out, p, &text);
            }
        }
    } else if log_x {
        // Decades.
        let mut d = x_min.floor();
        while d <= x_max.ceil() {
            let x = 10f64.powf(d);
            let p = px(x);
            if p >= plot.x0() - 0.5 && p <= plot.x1() + 0.5 {
                tick(&mut out, p, &fmt_x(x));
            }
            d += 1.0;
        }
    } else if opts.x_fmt == XFormat::Bytes {
        for x in byte_ticks(x_max) {
            tick(&mut out, px(x), &fmt_x(x));
        }
    } else {
        // 6 evenly spaced.
        for i in 0..=5 {
            let x = x_min + (x_max - x_min) * i as f64 / 5.0;
            tick(&mut out, px(x), &fmt_x(x));
        }
    }
    let _ = write!(
        out,
        r#"<text class="tick" x="{cx:.1}" y="{y:.1}" text-anchor="middle">{l}</text>"#,
        cx = (plot.x0() + plot.x1()) / 2.0,
        y = plot.height - 14.0,
        l = esc(&opts.x_label)
    );
    for (x, label) in &opts.separators {
        if !x.is_finite() {
            continue;
        }
        let p = px(*x);
        let _ = write!(
            out,
            r#"<line class="sep" x1="{p:.1}" x2="{p:.1}" y1="{y1}" y2="{y0}"><title>{l}</title></line>"#,
            y0 = plot.y0(),
            y1 = plot.y1(),
            l = esc(label)
        );
    }
    for l in lines {
        for &(x, lo, hi) in &l.whiskers {
            if !(x.is_finite() && lo.is_finite() && hi.is_finite() && hi > lo) {
                continue;
            }
            let (p, top, bottom) = (px(x), y_of(hi, y_max, &plot), y_of(lo, y_max, &plot));
            let _ = write!(
                out,
                r#"<path class="ci" stroke="{c}" d="M{p:.1} {top:.1}V{bottom:.1}M{a:.1} {top:.1}H{b:.1}M{a:.1} {bottom:.1}H{b:.1}"/>"#,
                c = l.colour,
                a = p - 4.0,
                b = p + 4.0
            );
        }
        let pts: Vec<(f64, f64)> = l
            .points
            .iter()
            .copied()
            .filter(|(x, y)| x.is_finite() && y.is_finite())
            .collect();
        let pts = thin(&pts, 1000);
        if l.dots || ordinal {
            // An ordinal axis has few points: each is marked, so that one alone shows.
            let r = if l.dots { 3.0 } else { 2.5 };
            for &(x, y) in &pts {
                let _ = write!(
                    out,
                    r#"<circle cx="{:.1}" cy="{:.1}" r="{r}" fill="{}"><title>{}</title></circle>"#,
                    px(x),
                    y_of(y, y_max, &plot),
                    l.colour,
                    esc(&l.label)
                );
            }
        }
        if !l.dots && !pts.is_empty() {
            let _ = write!(
                out,
                r#"<polyline fill="none" stroke="{}" stroke-width="1.5" points=""#,
                l.colour
            );
            for &(x, y) in &pts {
                let _ = write!(out, "{:.1},{:.1} ", px(x), y_of(y, y_max, &plot));
            }
            let _ = write!(out, r#""><title>{}</title></polyline>"#, esc(&l.label));
        }
    }
    // Legend right-aligned above the plot, in rows.
    for (row, items) in legend.iter().enumerate() {
        let y = plot.y1() - LEGEND_ROW * (legend.len() - row) as f64;
        for &(lx, i) in items {
            let l = &lines[i];
            let _ = write!(
                out,
                r#"<rect x="{lx:.1}" y="{y:.1}" width="9" height="9" fill="{c}"/><text class="tick" x="{tx:.1}" y="{ty:.1}">{t}</text>"#,
                c = l.colour,
                tx = lx + 12.0,
                ty = y + 8.0,
                t = esc(&shorten(&l.label, LEGEND_CHARS))
            );
        }
    }
    out.push_str("</svg>");
    out
}

/// Height of a legend row.
const LEGEND_ROW: f64 = 14.0;

/// The legend's rows, from the top: each entry's x and line index. The lines in reading
/// order, a row filled before the next starts; each row right-aligned.
fn legend_rows(lines: &[Line], plot: &Plot) -> Vec<Vec<(f64, usize)>> {
    let width =
        |l: &Line| 12.0 + 6.5 * shorten(&l.label, LEGEND_CHARS).chars().count() as f64 + 8.0;
    let mut rows: Vec<Vec<usize>> = Vec::new();
    let mut used = f64::INFINITY;
    for (i, l) in lines.iter().enumerate() {
        let w = width(l);
        if w > plot.inner_width() {
            continue;
        }
        if used + w > plot.inner_width() {
            rows.push(Vec::new());
            used = 0.0;
        }
        used += w;
        rows.last_mut().expect("pushed above").push(i);
    }
    rows.into_iter()
        .map(|row| {
            let mut lx = plot.x1() - row.iter().map(|&i| width(&lines[i])).sum::<f64>();
            row.into_iter()
                .map(|i| {
                    let at = (lx, i);
                    lx += width(&lines[i]);
                    at
                })
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bar(mean: f64, ci: Option<(f64, f64)>) -> BarInput {
        BarInput {
            label: "c".into(),
            mean,
            ci,
            points: vec![],
        }
    }

    #[test]
    fn bars_are_proportional_and_whiskers_stay_in_the_plot() {
        let plot = Plot::new(480.0, 300.0);
        let bars = [
            bar(100.0, Some((90.0, 110.0))),
            bar(50.0, Some((-20.0, 120.0))),
            bar(25.0, None),
        ];
        let (y_max, _, g) = bar_layout(&bars, &plot);
        assert!(y_max >= 120.0);
        let h = |g: &BarGeom| g.y_base - g.y;
        assert!((h(&g[0]) / h(&g[1]) - 2.0).abs() < 1e-9);
        assert!((h(&g[1]) / h(&g[2]) - 2.0).abs() < 1e-9);
        for b in &g {
            assert!(b.x >= plot.x0() && b.x + b.width <= plot.x1());
            if let Some((top, bottom)) = b.whisker {
                assert!(
                    top >= plot.y1() && bottom <= plot.y0() && top <= bottom,
                    "{b:?}"
                );
            }
        }
        // The negative lower bound is clamped to the axis.
        assert_eq!(g[1].whisker.unwrap().1, plot.y0());
        assert!(g[2].whisker.is_none());
    }

    #[test]
    fn nan_and_empty_bars_do_not_panic() {
        let plot = Plot::new(480.0, 300.0);
        let (y_max, _, g) = bar_layout(&[bar(f64::NAN, Some((f64::NAN, 1.0)))], &plot);
        assert_eq!(y_max, 1.0);
        assert_eq!(g[0].y, g[0].y_base);
        assert!(g[0].whisker.is_none());
        assert!(bar_layout(&[], &plot).2.is_empty());
        let svg = bar_chart("<t>", &[bar(f64::NAN, None)]);
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
        assert!(svg.contains("&lt;t&gt;") && !svg.contains("<t>"));
        let svg = line_chart("empty", &[], &LineOpts::default());
        assert!(svg.ends_with("</svg>"));
        let svg = line_chart(
            "nan",
            &[Line {
                label: "x".into(),
                colour: colour(0),
                points: vec![(f64::NAN, 1.0), (1.0, f64::INFINITY)],
                dots: false,
                whiskers: Vec::new(),
            }],
            &LineOpts {
                log_x: true,
                ..LineOpts::default()
            },
        );
        assert!(!svg.contains("NaN") && !svg.contains("inf"));
    }

    #[test]
    fn nice_axis_covers_the_data() {
        for m in [0.3, 1.0, 7.0, 99.0, 101.0, 123_456.0] {
            let (max, step) = nice_axis(m);
            assert!(
                max >= m && step > 0.0 && max / step <= 10.0,
                "{m} → {max} {step}"
            );
        }
        assert_eq!(nice_axis(f64::NAN), (1.0, 0.2));
    }

    /// Associativity 2 … 131072 and `full`: eighteen labels slanted so they do not overlap,
    /// five written flat, two hundred thinned; whiskers and points stay inside the plot.
    #[test]
    fn an_ordinal_axis_spaces_levels_equally_and_thins_crowded_labels() {
        let levels: Vec<String> = (1..=17)
            .map(|i| (1u64 << i).to_string())
            .chain(["full".to_string()])
            .collect();
        let plot = Plot::new(720.0, 260.0);
        let l = level_labels(&levels, plot.inner_width());
        assert!(l.slanted && l.stride == 1 && l.depth > 0.0, "{l:?}");
        let few: Vec<String> = ["2", "8", "64", "512", "full"].map(String::from).into();
        let flat = level_labels(&few, plot.inner_width());
        assert_eq!((flat.slanted, flat.stride, flat.depth), (false, 1, 0.0));
        let crowded: Vec<String> = (0..200).map(|i| i.to_string()).collect();
        let k = level_labels(&crowded, plot.inner_width()).stride;
        assert!(k >= 2 && crowded.len() / k * 14 <= 656, "{k}");

        let line = Line {
            label: "lru".into(),
            colour: colour(0),
            points: (0..levels.len()).map(|i| (i as f64, 10.0)).collect(),
            dots: false,
            whiskers: vec![(0.0, 5.0, 15.0), (1.0, 10.0, 10.0)],
        };
        let svg = line_chart(
            "t",
            &[line],
            &LineOpts {
                x_levels: levels.clone(),
                ..LineOpts::default()
            },
        );
        let written: Vec<&String> = levels
            .iter()
            .filter(|l| svg.contains(&format!(">{l}</text>")))
            .collect();
        assert_eq!(written.len(), levels.len(), "{written:?}");
        assert_eq!(svg.matches("rotate(-35").count(), levels.len());
        // A zero-width interval draws nothing.
        assert_eq!(svg.matches("class=\"ci\"").count(), 1);
        assert_eq!(svg.matches("<circle").count(), levels.len());
        for x in svg
            .split("<circle cx=\"")
            .skip(1)
            .map(|s| s[..s.find('"').unwrap()].parse::<f64>().unwrap())
        {
            assert!(x > plot.x0() && x < plot.x1(), "{x}");
        }
    }

    #[test]
    fn long_titles_are_set_smaller_to_fit() {
        assert_eq!(title_size(20, 540.0), None);
        let px = title_size(72, 540.0).unwrap();
        assert!(
            (9.0..13.0).contains(&px) && 72.0 * 7.5 * px / 13.0 <= 524.0,
            "{px}"
        );
        assert_eq!(title_size(500, 540.0), Some(9.0));
    }

    #[test]
    fn byte_ticks_are_round_binary_sizes() {
        let t = byte_ticks(400.0 * 1048576.0);
        assert_eq!(t.first(), Some(&0.0));
        assert!(t.iter().all(|x| (x / 1048576.0).fract() == 0.0), "{t:?}");
        assert!(t.len() >= 3 && t.len() <= 11, "{t:?}");
        assert_eq!(byte_ticks(3000.0), [0.0, 1024.0, 2048.0]);
    }

    #[test]
    fn thinning_keeps_the_ends() {
        let pts: Vec<_> = (0..10_000).map(|i| (i as f64, 0.0)).collect();
        let t = thin(&pts, 100);
        assert_eq!(t.len(), 100);
        assert_eq!((t[0].0, t[99].0), (0.0, 9999.0));
    }
}
