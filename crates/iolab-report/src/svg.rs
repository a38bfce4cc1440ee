//! Hand-written inline SVG charts: horizontal bar charts with confidence whiskers, line charts
//! (linear, log or ordinal x, with optional whiskers), nothing fetched, every label escaped.
//! Geometry is computed by pure functions that the tests check (whiskers stay in the plot,
//! bar lengths are proportional to the values), and every text is placed from an estimate of
//! its width ([`text_width`]) so that no label leaves the chart or covers another — whether a
//! chart has 2 bars or 200, 1 line or 12 (the tests check the boxes of every label drawn).

use std::fmt::Write;

use crate::escape::escape_html as esc;
use crate::num;
use iolab_util::units::{format_bytes, human_unit};

/// Okabe & Ito's colour-blind-safe palette (2008), without its black and yellow.
pub const PALETTE: [&str; 6] = [
    "#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9",
];

pub fn colour(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// Dash patterns that tell apart lines of one chart drawn in the same colour: the first line
/// of a colour is solid, the next dashed, then dotted, then dash-dotted — so a chart of up to
/// 24 lines has no two alike.
const DASHES: [&str; 4] = ["", "8 4", "2 3", "10 3 2 3"];

/// Lines one chart draws with distinct colour and dash.
pub const MAX_STYLES: usize = PALETTE.len() * DASHES.len();

/// Font size of tick labels, legends and bar labels (`svg .tick` in the report's CSS).
pub const TICK_PX: f64 = 11.0;
/// Font size of a chart's title (`svg .ct`).
pub const TITLE_PX: f64 = 13.0;

/// Estimated width of `chars` characters of the charts' sans-serif at `px`: 0.6 em each,
/// more than the average letter or digit of the usual system fonts, so that text placed by it
/// does not overlap.
pub fn text_width(chars: usize, px: f64) -> f64 {
    0.6 * px * chars as f64
}

fn tick_width(s: &str) -> f64 {
    text_width(s.chars().count(), TICK_PX)
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

/// Values spanning at least this ratio (two decades) are drawn on a log scale: on a linear one
/// all but the largest would lie flat on the axis.
pub const LOG_SPAN: f64 = 100.0;

/// Whether values from `min` to `max` are drawn on a log scale: all positive and spanning
/// [`LOG_SPAN`] or more.
pub fn spans_decades(min: f64, max: f64) -> bool {
    min.is_finite() && max.is_finite() && min > 0.0 && max / min >= LOG_SPAN
}

/// A value axis: linear from 0 (or the fixed range) or logarithmic over whole decades, and its
/// ticks `(value, label)`.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    pub log: bool,
    pub lo: f64,
    pub hi: f64,
    pub ticks: Vec<(f64, String)>,
}

impl Axis {
    /// 0 to a nice maximum covering `max`, or to `fixed` (1 for a CDF, 100 for %).
    pub fn linear(max: f64, fixed: Option<f64>, unit: &str) -> Axis {
        let (hi, step) = match fixed {
            Some(m) if m > 0.0 => (m, m / 5.0),
            _ => {
                // Round steps in the unit the ticks are written in: 1 min, not 50 s.
                let size = human_unit(unit, max).map_or(1.0, |u| u.0);
                let (hi, step) = nice_axis(max / size);
                (hi * size, step * size)
            }
        };
        let f = num::tick_format(unit, hi, step);
        let ticks = (0..=50)
            .map(|i| f64::from(i) * step)
            .take_while(|&v| v <= hi * 1.000_001)
            .map(|v| (v, f(v)))
            .collect();
        Axis {
            log: false,
            lo: 0.0,
            hi,
            ticks,
        }
    }

    /// Whole decades from below `min` to above `max` (both > 0); 2 and 5 times each decade
    /// too when there are few.
    pub fn log(min: f64, max: f64, unit: &str) -> Axis {
        let lo = 10f64.powf(min.log10().floor());
        let mut hi = 10f64.powf(max.log10().ceil());
        if hi <= lo {
            hi = lo * 10.0;
        }
        let decades = (hi / lo).log10().round() as i32;
        let mults: &[f64] = if decades <= 2 {
            &[1.0, 2.0, 5.0]
        } else {
            &[1.0]
        };
        let mut ticks = Vec::new();
        for d in 0..=decades {
            for &m in mults {
                let v = lo * 10f64.powi(d) * m;
                if v <= hi * 1.000_001 {
                    ticks.push((v, num::tick_format(unit, v, v)(v)));
                }
            }
        }
        Axis {
            log: true,
            lo,
            hi,
            ticks,
        }
    }

    /// A log axis when `values` span decades ([`spans_decades`]), else a linear one from 0;
    /// either covers `cover` too.
    pub fn fit(values: impl IntoIterator<Item = f64>, cover: f64, unit: &str) -> Axis {
        let (mut min, mut max, mut any_nonpositive) = (f64::INFINITY, 0f64, false);
        for v in values.into_iter().filter(|v| v.is_finite()) {
            if v <= 0.0 {
                any_nonpositive = true;
            } else {
                min = min.min(v);
            }
            max = max.max(v);
        }
        if cover.is_finite() {
            max = max.max(cover);
        }
        if !any_nonpositive && spans_decades(min, max) {
            Axis::log(min, max, unit)
        } else {
            Axis::linear(max, None, unit)
        }
    }

    /// Where `v` lies on the axis, 0 … 1, clamped (a value ≤ 0 on a log axis sits at its start).
    pub fn frac(&self, v: f64) -> f64 {
        let f = if self.log {
            if v <= 0.0 {
                0.0
            } else {
                (v / self.lo).log10() / (self.hi / self.lo).log10()
            }
        } else {
            (v - self.lo) / (self.hi - self.lo)
        };
        if f.is_finite() {
            f.clamp(0.0, 1.0)
        } else {
            0.0
        }
    }

    /// The widest tick label, in pixels.
    fn label_width(&self) -> f64 {
        self.ticks
            .iter()
            .map(|(_, l)| tick_width(l))
            .fold(0.0, f64::max)
    }
}

/// Keeps the ticks whose labels, centred at `pos(value)`, do not overlap the last one kept
/// (an axis of many or long labels writes every second or fifth).
fn spaced_ticks<'a>(
    ticks: &'a [(f64, String)],
    pos: &dyn Fn(f64) -> f64,
) -> Vec<&'a (f64, String)> {
    let mut kept: Vec<&(f64, String)> = Vec::new();
    let mut right = f64::NEG_INFINITY;
    for t in ticks {
        let w = tick_width(&t.1);
        let p = pos(t.0);
        if p - w / 2.0 >= right + 4.0 {
            kept.push(t);
            right = p + w / 2.0;
        }
    }
    kept
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

/// Where a (horizontal) bar and its whisker go.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BarGeom {
    /// Top of the bar's row band and the bar's thickness.
    pub y: f64,
    pub height: f64,
    /// Where the bar starts (the axis) and ends (= `x_base` when the mean is not finite).
    pub x_base: f64,
    pub x: f64,
    /// `(left, right)` of the whisker, clamped to the plot.
    pub whisker: Option<(f64, f64)>,
}

/// Height of a bar's row.
const BAR_ROW: f64 = 22.0;
/// Longest bar label written whole.
const BAR_LABEL_CHARS: usize = 48;

/// The value axis of bars: log when their values span decades, else linear from 0; covering
/// every mean, interval bound and value.
pub fn bar_axis(bars: &[BarInput], unit: &str) -> Axis {
    let mut values = Vec::new();
    for b in bars {
        values.push(b.mean);
        if let Some((_, hi)) = b.ci {
            values.push(hi);
        }
        values.extend(b.points.iter().map(|p| p.0));
    }
    Axis::fit(values, 0.0, unit)
}

/// Lays out one bar per row, its length proportional to its value on `axis`.
pub fn bar_layout(bars: &[BarInput], axis: &Axis, plot: &Plot) -> Vec<BarGeom> {
    let x_of = |v: f64| plot.x0() + axis.frac(v) * plot.inner_width();
    bars.iter()
        .enumerate()
        .map(|(i, b)| {
            let y = plot.y1() + BAR_ROW * i as f64;
            let x = if b.mean.is_finite() {
                x_of(b.mean)
            } else {
                plot.x0()
            };
            let whisker = b.ci.and_then(|(lo, hi)| {
                (lo.is_finite() && hi.is_finite()).then(|| (x_of(lo), x_of(hi)))
            });
            BarGeom {
                y,
                height: BAR_ROW * 0.6,
                x_base: plot.x0(),
                x,
                whisker,
            }
        })
        .collect()
}

/// The title at the top, set smaller (down to 9 px) when long, and cut when even that does
/// not fit.
fn open(out: &mut String, plot: &Plot, title: &str) {
    let room = plot.width - 16.0;
    let chars = title.chars().count();
    let px = title_size(chars, plot.width).unwrap_or(TITLE_PX);
    let fits = (room / (0.6 * px)).floor() as usize;
    let shown = shorten(title, fits.max(4));
    let style = if px < TITLE_PX {
        format!(r#" style="font-size:{px:.1}px""#)
    } else {
        String::new()
    };
    let _ = write!(
        out,
        r#"<svg class="chart" viewBox="0 0 {w} {h}" role="img"><title>{t}</title><text class="ct" x="{cx}" y="16" text-anchor="middle"{style}>{s}</text>"#,
        w = plot.width,
        h = plot.height,
        cx = plot.width / 2.0,
        t = esc(title),
        s = esc(&shown)
    );
}

/// The `font-size` that fits a title of `chars` characters (13 px bold, 0.6 em each) into
/// `width` pixels with a margin, if 13 px does not; never below 9 px.
fn title_size(chars: usize, width: f64) -> Option<f64> {
    let room = width - 16.0;
    let need = text_width(chars, TITLE_PX);
    (need > room).then(|| (TITLE_PX * room / need).max(9.0))
}

/// The y axis of a line chart: grid lines and tick labels right-aligned left of the plot.
/// The y and x axis lines of the plot area.
fn axis_lines(out: &mut String, plot: &Plot) {
    let _ = write!(
        out,
        r#"<line class="axis" x1="{x0}" x2="{x0}" y1="{y1}" y2="{y0}"/><line class="axis" x1="{x0}" x2="{x1}" y1="{y0}" y2="{y0}"/>"#,
        x0 = plot.x0(),
        x1 = plot.x1(),
        y0 = plot.y0(),
        y1 = plot.y1()
    );
}

fn y_axis(out: &mut String, plot: &Plot, axis: &Axis) {
    let y_of = |v: f64| plot.y0() - axis.frac(v) * plot.inner_height();
    // Ticks at least a line apart, from the bottom.
    let mut last = f64::INFINITY;
    for (v, label) in &axis.ticks {
        let y = y_of(*v);
        let _ = write!(
            out,
            r#"<line class="grid" x1="{x0}" x2="{x1}" y1="{y:.1}" y2="{y:.1}"/>"#,
            x0 = plot.x0(),
            x1 = plot.x1(),
        );
        if last - y < TICK_PX + 3.0 {
            continue;
        }
        last = y;
        let _ = write!(
            out,
            r#"<text class="tick" x="{tx}" y="{ty:.1}" text-anchor="end">{l}</text>"#,
            tx = plot.x0() - 5.0,
            ty = y + 4.0,
            l = esc(label)
        );
    }
    axis_lines(out, plot);
}

/// A horizontal bar chart of means with 95% whiskers, one row per bar with its label on the
/// left and its mean on the right (so 2 or 200 labels never overlap and need no legend);
/// each run's value as a dot, outliers as red rings. Values in `unit` (durations and sizes
/// are written in their own units); a log scale when the values span decades.
pub fn bar_chart(title: &str, bars: &[BarInput], unit: &str) -> String {
    let axis = bar_axis(bars, unit);
    let labels: Vec<String> = bars
        .iter()
        .map(|b| shorten(&b.label, BAR_LABEL_CHARS))
        .collect();
    let values: Vec<String> = bars
        .iter()
        .map(|b| {
            if b.mean.is_finite() {
                num::with_unit(b.mean, unit)
            } else {
                "no data".to_string()
            }
        })
        .collect();
    let width = 640.0;
    let label_w = labels.iter().map(|l| tick_width(l)).fold(0.0, f64::max);
    let value_w = values.iter().map(|l| tick_width(l)).fold(0.0, f64::max);
    let last_tick = axis.ticks.last().map_or(0.0, |t| tick_width(&t.1));
    let mut plot = Plot::new(width, 0.0);
    plot.left = (label_w + 12.0).clamp(40.0, width * 0.5);
    plot.right = (value_w + 12.0).max(last_tick / 2.0 + 4.0);
    plot.top = 30.0;
    plot.bottom = 26.0;
    plot.height = plot.top + BAR_ROW * bars.len().max(1) as f64 + plot.bottom;
    let geoms = bar_layout(bars, &axis, &plot);
    let x_of = |v: f64| plot.x0() + axis.frac(v) * plot.inner_width();
    let mut out = String::new();
    open(&mut out, &plot, title);
    // Grid and ticks along the bottom.
    for (v, _) in &axis.ticks {
        let x = x_of(*v);
        let _ = write!(
            out,
            r#"<line class="grid" x1="{x:.1}" x2="{x:.1}" y1="{y1}" y2="{y0}"/>"#,
            y1 = plot.y1(),
            y0 = plot.y0()
        );
    }
    for (v, label) in spaced_ticks(&axis.ticks, &x_of) {
        let _ = write!(
            out,
            r#"<text class="tick" x="{x:.1}" y="{y:.1}" text-anchor="middle">{l}</text>"#,
            x = x_of(*v),
            y = plot.y0() + 15.0,
            l = esc(label)
        );
    }
    axis_lines(&mut out, &plot);
    for (i, (b, g)) in bars.iter().zip(&geoms).enumerate() {
        let cy = g.y + BAR_ROW / 2.0;
        if b.mean.is_finite() {
            let _ = write!(
                out,
                r#"<rect x="{x:.1}" y="{y:.1}" width="{w:.1}" height="{h:.1}" fill="{c}" opacity="0.8"><title>{l}: {m}</title></rect>"#,
                x = g.x_base,
                y = cy - g.height / 2.0,
                w = (g.x - g.x_base).max(0.0),
                h = g.height,
                c = PALETTE[0],
                l = esc(&b.label),
                m = esc(&values[i]),
            );
        }
        if let Some((left, right)) = g.whisker {
            let _ = write!(
                out,
                r#"<path class="whisker" d="M{left:.1} {cy:.1}H{right:.1}M{left:.1} {a:.1}V{b:.1}M{right:.1} {a:.1}V{b:.1}"/>"#,
                a = cy - 5.0,
                b = cy + 5.0
            );
        }
        for (j, &(v, outlier)) in b.points.iter().enumerate() {
            if !v.is_finite() {
                continue;
            }
            let px = x_of(v);
            // Runs of one value side by side, a little apart vertically.
            let py = cy + (j % 3) as f64 * 3.0 - 3.0;
            if outlier {
                let _ = write!(
                    out,
                    r#"<circle class="outlier" cx="{px:.1}" cy="{py:.1}" r="4.5"><title>outlier: {v}</title></circle>"#,
                    v = esc(&num::with_unit(v, unit))
                );
            } else {
                let _ = write!(
                    out,
                    r#"<circle class="pt" cx="{px:.1}" cy="{py:.1}" r="2"/>"#
                );
            }
        }
        let _ = write!(
            out,
            r#"<text class="tick" x="{x:.1}" y="{y:.1}" text-anchor="end"><title>{full}</title>{l}</text><text class="tick" x="{vx:.1}" y="{y:.1}">{v}</text>"#,
            x = plot.x0() - 6.0,
            y = cy + 4.0,
            full = esc(&b.label),
            l = esc(&shorten(
                &labels[i],
                chars_within(plot.left - 12.0, TICK_PX)
            )),
            vx = plot.x1() + 6.0,
            v = esc(&values[i])
        );
    }
    out.push_str("</svg>");
    out
}

/// How many characters [`text_width`] fits in `px` pixels. The column was sized by the same
/// estimate, so its longest label fits exactly; a plain `as usize` of the quotient lost one
/// character to rounding (250.8 / 6.6 = 37.999…) and cut the longest label.
fn chars_within(px: f64, font_px: f64) -> usize {
    (px / text_width(1, font_px) + 1e-6).floor().max(0.0) as usize
}

fn shorten(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(n.saturating_sub(1)).collect();
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
    /// Nanoseconds as durations (`2 ms`).
    Ns,
    /// Bytes with binary units, ticks at round multiples of a KiB, MiB, GiB….
    Bytes,
}

/// The y scale of a line chart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum YScale {
    /// Log when the values span decades ([`spans_decades`]) and a fixed `y_max` is not set,
    /// else linear from 0.
    #[default]
    Auto,
    Linear,
    Log,
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
    /// On a log y axis, a value it reaches down to at least (the other end of `y_cover`).
    pub y_cover_low: Option<f64>,
    pub y_scale: YScale,
    /// The unit of the y values: durations (`ns`, `s`) and sizes (`B`, …) are written in the
    /// unit that suits the axis (`2 s`, `4 h`, `512 MiB`); others as plain numbers.
    pub y_unit: String,
    pub x_fmt: XFormat,
    /// The x range drawn at least (small multiples on one scale).
    pub x_cover: Option<(f64, f64)>,
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
    text_width(chars, TICK_PX) + 8.0
}

/// Longest ordinal tick label written whole (longer ones end in `…`).
const LEVEL_CHARS: usize = 28;

/// Longest legend entry written whole: `policy=clock:m=16,s=1,i=16` must not be cut where it
/// would read as `policy=clock:m=16,s=1,i=1`.
const LEGEND_CHARS: usize = 48;

/// Horizontal room a slanted label needs: about its line height.
const SLANTED_ROOM: f64 = 14.0;

/// The slant of level labels that do not fit side by side.
const SLANT_DEG: f64 = 35.0;

/// How an ordinal axis writes its level labels.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LevelLabels {
    /// Slanted at 35° because they do not fit side by side.
    pub slanted: bool,
    /// Every how many levels a label is written (1: all of them).
    pub stride: usize,
    /// Room the labels take below the axis beyond a flat row's, in pixels.
    pub depth: f64,
    /// Room the first (slanted) label needs left of its level, in pixels.
    pub reach_left: f64,
}

/// The labels of an ordinal axis of `labels` over `width` pixels: flat when they fit side by
/// side, else slanted (long words like `clock:m=16,s=1,i=16` stay whole), and only every
/// k-th when even slanted ones would overlap.
pub fn level_labels(labels: &[String], width: f64) -> LevelLabels {
    let n = labels.len().max(1);
    let slot = width / n as f64;
    let chars = |l: &String| shorten(l, LEVEL_CHARS).chars().count();
    let widest = labels.iter().map(chars).max().unwrap_or(0);
    if label_width(widest) <= slot {
        return LevelLabels {
            slanted: false,
            stride: 1,
            depth: 0.0,
            reach_left: labels.first().map_or(0.0, |l| label_width(chars(l)) / 2.0),
        };
    }
    let (sin, cos) = SLANT_DEG.to_radians().sin_cos();
    LevelLabels {
        slanted: true,
        stride: ((SLANTED_ROOM / slot).ceil() as usize).clamp(1, n),
        depth: text_width(widest, TICK_PX) * sin,
        reach_left: labels
            .first()
            .map_or(0.0, |l| text_width(chars(l), TICK_PX) * cos),
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

/// Ticks of a linear x axis from `lo` to `hi`: nice 1-2-5 steps, whole numbers only when
/// every x is one (days, repetitions: never `4.000 … 20.00` nor `0.9003`).
fn x_ticks(lo: f64, hi: f64, integers: bool) -> (Vec<f64>, f64) {
    let (_, mut step) = nice_axis(hi - lo);
    if integers {
        step = step.max(1.0).round();
    }
    let first = (lo / step).ceil() * step;
    let ticks = (0..=60)
        .map(|i| first + f64::from(i) * step)
        .take_while(|&x| x <= hi + step * 1e-6)
        .collect();
    (ticks, step)
}

/// A line chart; non-finite points are skipped (they break the line). Lines that share a
/// colour are told apart by their dash ([`MAX_STYLES`] distinct lines).
pub fn line_chart(title: &str, lines: &[Line], opts: &LineOpts) -> String {
    let mut plot = Plot::new(opts.width.unwrap_or(720.0), 260.0);
    let ordinal = !opts.x_levels.is_empty();
    let log_x = opts.log_x && !ordinal;
    let tx = |x: f64| if log_x { x.max(1.0).log10() } else { x };
    let mut x_min = f64::INFINITY;
    let mut x_max = f64::NEG_INFINITY;
    let mut ys = Vec::new();
    let mut integers = true;
    for l in lines {
        for &(x, y) in &l.points {
            if x.is_finite() && y.is_finite() {
                x_min = x_min.min(tx(x));
                x_max = x_max.max(tx(x));
                integers &= x.fract() == 0.0;
                ys.push(y);
            }
        }
        for &(_, _, hi) in &l.whiskers {
            if hi.is_finite() {
                ys.push(hi);
            }
        }
    }
    for (x, _) in &opts.separators {
        if x.is_finite() {
            x_max = x_max.max(tx(*x));
            x_min = x_min.min(tx(*x));
        }
    }
    if let Some((lo, hi)) = opts.x_cover {
        x_min = x_min.min(tx(lo));
        x_max = x_max.max(tx(hi));
    }
    if !x_min.is_finite() {
        x_min = 0.0;
        x_max = 1.0;
    }
    if !log_x && !ordinal && x_min > 0.0 && x_min < (x_max - x_min) {
        // Starting at 0 costs little room here and gives the axis a familiar origin.
        x_min = 0.0;
    }
    if ordinal {
        // Each level in the middle of an equal slot.
        x_min = -0.5;
        x_max = opts.x_levels.len() as f64 - 0.5;
    }
    if x_max <= x_min {
        x_max = x_min + 1.0;
    }
    let axis = match (opts.y_max, opts.y_scale) {
        (Some(m), _) => Axis::linear(m, Some(m), &opts.y_unit),
        (None, YScale::Linear) => {
            let max = ys.iter().copied().fold(opts.y_cover, f64::max);
            Axis::linear(max, None, &opts.y_unit)
        }
        (None, YScale::Log) => {
            let pos = ys.iter().copied().filter(|&y| y > 0.0);
            let min = pos
                .clone()
                .fold(opts.y_cover_low.unwrap_or(f64::INFINITY), f64::min);
            let max = pos.fold(opts.y_cover, f64::max);
            if min.is_finite() && max > 0.0 {
                Axis::log(min, max.max(min), &opts.y_unit)
            } else {
                Axis::linear(max, None, &opts.y_unit)
            }
        }
        (None, YScale::Auto) => Axis::fit(
            ys.iter().copied().chain(opts.y_cover_low),
            opts.y_cover,
            &opts.y_unit,
        ),
    };
    // Room for the widest y tick label.
    plot.left = (axis.label_width() + 12.0).max(64.0);
    // The x ticks and their labels.
    let fmt_x: Box<dyn Fn(f64) -> String> = match opts.x_fmt {
        XFormat::Number => Box::new(num::tick_format("", 1.0, 1.0)),
        XFormat::Ns => Box::new(|x| num::tick_format("ns", x, x)(x)),
        XFormat::Bytes => Box::new(|x| format_bytes(x.max(0.0).round() as u64)),
    };
    let x_ticks: Vec<(f64, String)> = if ordinal {
        Vec::new()
    } else if log_x {
        let mut v = Vec::new();
        let mut d = x_min.floor();
        while d <= x_max.ceil() {
            if d >= x_min - 1e-9 && d <= x_max + 1e-9 {
                let x = 10f64.powf(d);
                v.push((x, fmt_x(x)));
            }
            d += 1.0;
        }
        v
    } else if opts.x_fmt == XFormat::Bytes {
        byte_ticks(x_max)
            .into_iter()
            .filter(|&x| x >= x_min)
            .map(|x| (x, fmt_x(x)))
            .collect()
    } else {
        let size = match opts.x_fmt {
            XFormat::Ns => human_unit("ns", x_max).map_or(1.0, |u| u.0),
            _ => 1.0,
        };
        let (t, step) = x_ticks(x_min / size, x_max / size, integers && size == 1.0);
        let (t, step): (Vec<f64>, f64) = (t.into_iter().map(|x| x * size).collect(), step * size);
        let f: Box<dyn Fn(f64) -> String> = match opts.x_fmt {
            XFormat::Ns => Box::new(num::tick_format("ns", x_max, step)),
            _ => Box::new(num::tick_format("", x_max, step)),
        };
        t.into_iter().map(|x| (x, f(x))).collect()
    };
    // The last x label must not stick out on the right, nor the first on the left.
    let half = |t: Option<&(f64, String)>| t.map_or(0.0, |t| tick_width(&t.1) / 2.0 + 2.0);
    plot.right = plot.right.max(half(x_ticks.last()));
    plot.left = plot.left.max(half(x_ticks.first()));
    // The legend goes above the plot, where it hides no data: a band of rows.
    let legend = legend_rows(lines, &plot);
    let band = LEGEND_ROW * legend.len() as f64;
    plot.top += band;
    plot.height += band;
    let levels = level_labels(&opts.x_levels, plot.inner_width());
    if ordinal {
        let slot = plot.inner_width() / opts.x_levels.len().max(1) as f64;
        let need = levels.reach_left - slot / 2.0 + 4.0;
        if need > plot.left {
            plot.left = need;
        }
    }
    let levels = level_labels(&opts.x_levels, plot.inner_width());
    plot.bottom += levels.depth;
    plot.height += levels.depth;
    let px = |x: f64| plot.x0() + (tx(x) - x_min) / (x_max - x_min) * plot.inner_width();
    let py = |y: f64| plot.y0() - axis.frac(y) * plot.inner_height();
    let mut out = String::new();
    open(&mut out, &plot, title);
    y_axis(&mut out, &plot, &axis);
    let tick = |out: &mut String, p: f64, label: &str| {
        let _ = write!(
            out,
            r#"<text class="tick" x="{p:.1}" y="{y:.1}" text-anchor="middle">{l}</text>"#,
            // Below the lowest y tick label's box, even at the axis's corner.
            y = plot.y0() + 17.0,
            l = esc(label)
        );
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
                    r#"<text class="tick" x="{p:.1}" y="{y:.1}" text-anchor="end" transform="rotate(-{SLANT_DEG} {p:.1} {y:.1})">{l}</text>"#,
                    l = esc(&text)
                );
            } else {
                tick(&mut out, p, &text);
            }
        }
    } else {
        for (x, label) in spaced_ticks(&x_ticks, &|x| px(x)) {
            tick(&mut out, px(*x), label);
        }
    }
    let _ = write!(
        out,
        r#"<text class="tick" x="{cx:.1}" y="{y:.1}" text-anchor="middle">{l}</text>"#,
        cx = (plot.x0() + plot.x1()) / 2.0,
        y = plot.height - 10.0,
        l = esc(&shorten(
            &opts.x_label,
            (plot.inner_width() / (0.6 * TICK_PX)) as usize
        ))
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
    let dashes = dash_patterns(lines);
    for (l, dash) in lines.iter().zip(&dashes) {
        for &(x, lo, hi) in &l.whiskers {
            if !(x.is_finite() && lo.is_finite() && hi.is_finite() && hi > lo) {
                continue;
            }
            let (p, top, bottom) = (px(x), py(hi), py(lo));
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
                    py(y),
                    l.colour,
                    esc(&l.label)
                );
            }
        }
        if !l.dots && !pts.is_empty() {
            let dash = if dash.is_empty() {
                String::new()
            } else {
                format!(r#" stroke-dasharray="{dash}""#)
            };
            let _ = write!(
                out,
                r#"<polyline fill="none" stroke="{}" stroke-width="1.5"{dash} points=""#,
                l.colour
            );
            for &(x, y) in &pts {
                let _ = write!(out, "{:.1},{:.1} ", px(x), py(y));
            }
            let _ = write!(out, r#""><title>{}</title></polyline>"#, esc(&l.label));
        }
    }
    // Legend right-aligned above the plot, in rows.
    for (row, items) in legend.iter().enumerate() {
        let y = plot.y1() - LEGEND_ROW * (legend.len() - row) as f64;
        for &(lx, i, chars) in items {
            let l = &lines[i];
            if l.dots {
                let _ = write!(
                    out,
                    r#"<circle cx="{cx:.1}" cy="{cy:.1}" r="3" fill="{c}"/>"#,
                    cx = lx + 8.0,
                    cy = y + 4.0,
                    c = l.colour
                );
            } else {
                let dash = if dashes[i].is_empty() {
                    String::new()
                } else {
                    format!(r#" stroke-dasharray="{}""#, dashes[i])
                };
                let _ = write!(
                    out,
                    r#"<line x1="{lx:.1}" x2="{x2:.1}" y1="{cy:.1}" y2="{cy:.1}" stroke="{c}" stroke-width="2.5"{dash}/>"#,
                    x2 = lx + LEGEND_SWATCH,
                    cy = y + 4.0,
                    c = l.colour
                );
            }
            let _ = write!(
                out,
                r#"<text class="tick" x="{tx:.1}" y="{ty:.1}">{t}</text>"#,
                tx = lx + LEGEND_SWATCH + 4.0,
                ty = y + 8.0,
                t = esc(&shorten(&l.label, chars))
            );
        }
    }
    out.push_str("</svg>");
    out
}

/// Each line's dash: the n-th line drawn in a colour gets the n-th pattern (dots need none).
fn dash_patterns(lines: &[Line]) -> Vec<&'static str> {
    let mut seen: Vec<&str> = Vec::new();
    lines
        .iter()
        .map(|l| {
            if l.dots {
                return "";
            }
            let n = seen.iter().filter(|&&c| c == l.colour).count();
            seen.push(l.colour);
            DASHES[n % DASHES.len()]
        })
        .collect()
}

/// Height of a legend row.
const LEGEND_ROW: f64 = 14.0;
/// Length of a legend entry's line sample.
const LEGEND_SWATCH: f64 = 18.0;

/// The legend's rows, from the top: each entry's x, line index and the characters of its
/// label written (long ones cut to fit the chart). The lines in reading order, a row filled
/// before the next starts; each row right-aligned.
fn legend_rows(lines: &[Line], plot: &Plot) -> Vec<Vec<(f64, usize, usize)>> {
    let room = plot.inner_width();
    let entry = |l: &Line| {
        let fits = ((room - LEGEND_SWATCH - 14.0) / (0.6 * TICK_PX)).floor() as usize;
        let chars = shorten(&l.label, LEGEND_CHARS.min(fits)).chars().count();
        (
            LEGEND_SWATCH + 4.0 + text_width(chars, TICK_PX) + 10.0,
            chars,
        )
    };
    let mut rows: Vec<Vec<usize>> = Vec::new();
    let mut used = f64::INFINITY;
    for (i, l) in lines.iter().enumerate() {
        let (w, _) = entry(l);
        if used + w > room {
            rows.push(Vec::new());
            used = 0.0;
        }
        used += w;
        rows.last_mut().expect("pushed above").push(i);
    }
    rows.into_iter()
        .map(|row| {
            let mut lx = plot.x1() - row.iter().map(|&i| entry(&lines[i]).0).sum::<f64>() + 10.0;
            row.into_iter()
                .map(|i| {
                    let (w, chars) = entry(&lines[i]);
                    let at = (lx, i, chars);
                    lx += w;
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

    /// Seed 000's quick look drew `journal=writeback workload=videoserv…` though its label
    /// column was sized for the whole label.
    #[test]
    fn the_longest_bar_label_is_drawn_whole_when_its_column_fits_it() {
        for label in [
            "journal=writeback workload=videoserver",
            "journal=ordered workload=webserver",
            "a=1",
        ] {
            let bars = [BarInput {
                label: label.into(),
                ..bar(1.0, None)
            }];
            let svg = bar_chart("t", &bars, "op/s");
            assert!(svg.contains(&format!(">{label}</text>")), "{label}: {svg}");
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
        let axis = bar_axis(&bars, "");
        assert!(!axis.log && axis.hi >= 120.0);
        let g = bar_layout(&bars, &axis, &plot);
        let len = |g: &BarGeom| g.x - g.x_base;
        assert!((len(&g[0]) / len(&g[1]) - 2.0).abs() < 1e-9);
        assert!((len(&g[1]) / len(&g[2]) - 2.0).abs() < 1e-9);
        for b in &g {
            assert!(b.x >= plot.x0() && b.x <= plot.x1());
            if let Some((left, right)) = b.whisker {
                assert!(
                    left >= plot.x0() && right <= plot.x1() && left <= right,
                    "{b:?}"
                );
            }
        }
        // The negative lower bound is clamped to the axis.
        assert_eq!(g[1].whisker.unwrap().0, plot.x0());
        assert!(g[2].whisker.is_none());
    }

    #[test]
    fn nan_and_empty_bars_do_not_panic() {
        let plot = Plot::new(480.0, 300.0);
        let bars = [bar(f64::NAN, Some((f64::NAN, 1.0)))];
        let axis = bar_axis(&bars, "");
        let g = bar_layout(&bars, &axis, &plot);
        assert_eq!(axis.hi, 1.0);
        assert_eq!(g[0].x, g[0].x_base);
        assert!(g[0].whisker.is_none());
        assert!(bar_layout(&[], &axis, &plot).is_empty());
        let svg = bar_chart("<t>", &[bar(f64::NAN, None)], "");
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
        assert!(svg.contains("&lt;t&gt;") && !svg.contains("<t>"));
        assert!(svg.contains("no data"));
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

    /// The review's bar charts: one latency of 3 s among ones of 1 ms drew all but one bar
    /// flat on the axis.
    #[test]
    fn values_spanning_decades_are_drawn_on_a_log_scale() {
        let bars = [bar(3.3e9, None), bar(1.2e6, None), bar(2.0e6, None)];
        let axis = bar_axis(&bars, "ns");
        assert!(axis.log, "{axis:?}");
        assert!(axis.lo <= 1.2e6 && axis.hi >= 3.3e9);
        // The small bars are told apart: 1.2 ms and 2 ms differ by more than 20 px (on a
        // linear axis to 4 s, by a fifth of a pixel).
        let plot = Plot::new(640.0, 200.0);
        let g = bar_layout(&bars, &axis, &plot);
        assert!(g[2].x - g[1].x > 20.0, "{g:?}");
        assert!(axis.ticks.iter().any(|t| t.1 == "1 s"), "{:?}", axis.ticks);
        // Close values stay linear, from 0.
        let axis = bar_axis(&[bar(10.0, None), bar(300.0, None)], "");
        assert!(!axis.log && axis.lo == 0.0);
        // A zero among them: linear (a log axis cannot show it).
        assert!(!Axis::fit([0.0, 1.0, 1e6], 0.0, "").log);
    }

    /// The review's 12-line latency CDF drew lines 7–12 in the colours of lines 1–6.
    #[test]
    fn lines_sharing_a_colour_are_dashed_apart() {
        let lines: Vec<Line> = (0..MAX_STYLES)
            .map(|i| Line {
                label: format!("c{i}"),
                colour: colour(i),
                points: vec![(1.0, 0.5), (10.0, 1.0)],
                dots: false,
                whiskers: Vec::new(),
            })
            .collect();
        let styles: Vec<(&str, &str)> = lines
            .iter()
            .zip(dash_patterns(&lines))
            .map(|(l, d)| (l.colour, d))
            .collect();
        let mut distinct = styles.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), MAX_STYLES, "{styles:?}");
        let svg = line_chart("cdf", &lines[..12], &LineOpts::default());
        assert_eq!(svg.matches("stroke-dasharray=\"8 4\"").count(), 2 * 6);
    }

    /// The review's time-per-day chart had ticks `4.000 … 20.00` for days 1 … 20.
    #[test]
    fn integer_axes_have_integer_ticks() {
        let (t, step) = x_ticks(0.0, 20.0, true);
        assert_eq!(step, 5.0);
        assert_eq!(t, [0.0, 5.0, 10.0, 15.0, 20.0]);
        let (t, _) = x_ticks(0.0, 3.0, true);
        assert_eq!(t, [0.0, 1.0, 2.0, 3.0]);
        let line = Line {
            label: "day".into(),
            colour: colour(0),
            points: (1..=20).map(|d| (f64::from(d), 5.0)).collect(),
            dots: false,
            whiskers: Vec::new(),
        };
        let svg = line_chart("t", &[line], &LineOpts::default());
        for bad in [">4.000<", ">20.00<", ">0.9003<"] {
            assert!(!svg.contains(bad), "{bad}");
        }
        assert!(svg.contains(">20</text>"));
    }

    #[test]
    fn thinning_keeps_the_ends() {
        let pts: Vec<_> = (0..10_000).map(|i| (i as f64, 0.0)).collect();
        let t = thin(&pts, 100);
        assert_eq!(t.len(), 100);
        assert_eq!((t[0].0, t[99].0), (0.0, 9999.0));
    }
}
