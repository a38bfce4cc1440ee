//! Hand-written inline SVG charts: bar charts with confidence whiskers, line charts (linear or
//! log x), nothing fetched, every label escaped. Geometry is computed by pure functions that
//! the tests check (whiskers stay in the plot, bar heights are proportional to the values).

use std::fmt::Write;

use crate::escape::escape_html as esc;
use crate::num;
use iolab_workload::format_ns;

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

fn open(out: &mut String, plot: &Plot, title: &str) {
    let _ = write!(
        out,
        r#"<svg class="chart" viewBox="0 0 {w} {h}" role="img"><title>{t}</title><text class="ct" x="{cx}" y="16" text-anchor="middle">{t}</text>"#,
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
    pub x_fmt_ns: bool,
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

/// A line chart; non-finite points are skipped (they break the line).
pub fn line_chart(title: &str, lines: &[Line], opts: &LineOpts) -> String {
    let plot = Plot::new(720.0, 260.0);
    let tx = |x: f64| if opts.log_x { x.max(1.0).log10() } else { x };
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
    if !opts.log_x {
        x_min = x_min.min(0.0);
    }
    if x_max <= x_min {
        x_max = x_min + 1.0;
    }
    let (y_max, step) = match opts.y_max {
        Some(m) => (m, m / 5.0),
        None => nice_axis(y_data_max),
    };
    let px = |x: f64| plot.x0() + (tx(x) - x_min) / (x_max - x_min) * plot.inner_width();
    let mut out = String::new();
    open(&mut out, &plot, title);
    y_axis(&mut out, &plot, y_max, step, &num::fmt);
    // x ticks: 6 evenly spaced (decades on a log axis).
    if opts.log_x {
        let mut d = x_min.floor();
        while d <= x_max.ceil() {
            let x = 10f64.powf(d);
            let p = px(x);
            if p >= plot.x0() - 0.5 && p <= plot.x1() + 0.5 {
                let _ = write!(
                    out,
                    r#"<text class="tick" x="{p:.1}" y="{y:.1}" text-anchor="middle">{l}</text>"#,
                    y = plot.y0() + 14.0,
                    l = esc(&if opts.x_fmt_ns {
                        format_ns(x)
                    } else {
                        num::fmt(x)
                    })
                );
            }
            d += 1.0;
        }
    } else {
        for i in 0..=5 {
            let x = x_min + (x_max - x_min) * i as f64 / 5.0;
            let _ = write!(
                out,
                r#"<text class="tick" x="{p:.1}" y="{y:.1}" text-anchor="middle">{l}</text>"#,
                p = px(x),
                y = plot.y0() + 14.0,
                l = esc(&num::fmt(x))
            );
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
        let pts: Vec<(f64, f64)> = l
            .points
            .iter()
            .copied()
            .filter(|(x, y)| x.is_finite() && y.is_finite())
            .collect();
        let pts = thin(&pts, 1000);
        if l.dots {
            for &(x, y) in &pts {
                let _ = write!(
                    out,
                    r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{}"><title>{}</title></circle>"#,
                    px(x),
                    y_of(y, y_max, &plot),
                    l.colour,
                    esc(&l.label)
                );
            }
        } else if !pts.is_empty() {
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
    // Legend along the top right.
    let mut lx = plot.x1();
    for l in lines.iter().rev() {
        let text = shorten(&l.label, 24);
        let w = 12.0 + 6.5 * text.chars().count() as f64;
        lx -= w + 8.0;
        if lx < plot.x0() {
            break;
        }
        let _ = write!(
            out,
            r#"<rect x="{lx:.1}" y="{y:.1}" width="9" height="9" fill="{c}"/><text class="tick" x="{tx:.1}" y="{ty:.1}">{t}</text>"#,
            y = plot.y1() + 2.0,
            c = l.colour,
            tx = lx + 12.0,
            ty = plot.y1() + 10.0,
            t = esc(&text)
        );
    }
    out.push_str("</svg>");
    out
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

    #[test]
    fn thinning_keeps_the_ends() {
        let pts: Vec<_> = (0..10_000).map(|i| (i as f64, 0.0)).collect();
        let t = thin(&pts, 100);
        assert_eq!(t.len(), 100);
        assert_eq!((t[0].0, t[99].0), (0.0, 9999.0));
    }
}
