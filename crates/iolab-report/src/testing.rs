//! Whole reports from real (in-memory) databases, for the tests of this crate and of the
//! sections other crates contribute.

use iolab_store::*;
use serde_json::json;

use crate::*;

/// A database in memory with an experiment of `configs` (labels).
pub fn store_with(configs: &[&str]) -> (Store, ExperimentId, Vec<ConfigId>) {
    let mut store = Store::open_in_memory().unwrap();
    let spec = json!({"note": "<script>alert(1)</script>"});
    let (exp, ids) = add_experiment(&mut store, "<b>x</b> & \"y\"", "exp.toml", spec, configs);
    (store, exp, ids)
}

/// Another experiment in `store`, from experiment file `source`, with configurations
/// `configs` (labels, no factors).
pub fn add_experiment(
    store: &mut Store,
    name: &str,
    source: &str,
    spec: serde_json::Value,
    configs: &[&str],
) -> (ExperimentId, Vec<ConfigId>) {
    let exp = store
        .create_experiment(&NewExperiment {
            name: name.into(),
            source: source.into(),
            spec,
            seed: 7,
            created_at: Timestamp(1_700_000_000_000_000_000),
            iolab_version: "0.1.0".into(),
            host: json!({"kernel_release": "6.1.0"}),
        })
        .unwrap();
    let ids = configs
        .iter()
        .map(|l| {
            store
                .add_config(&NewConfig {
                    experiment: exp,
                    label: (*l).into(),
                    factors: Default::default(),
                })
                .unwrap()
        })
        .collect();
    (exp, ids)
}

/// A run of `config` at `ops` op/s, with a flowop, a trace row, a series, a monitor series
/// and a finding.
pub fn record(config: ConfigId, rep: u32, status: RunStatus, ops: f64) -> RunRecord {
    let mut r = RunRecord::new(NewRun {
        config,
        repetition: rep,
        seed: 1,
        status,
        error: None,
        started_at: Timestamp(0),
        ended_at: Timestamp(2_000_000_000),
        elapsed_ns: 2_000_000_000,
        environment: json!({}),
    });
    r.metrics.push(Metric::new("ops_per_s", ops, "op/s"));
    r.metrics
        .push(Metric::new("mib_per_s", ops / 256.0, "MiB/s"));
    r.metrics.push(Metric::new("lat_mean_ns", 1e9 / ops, "ns"));
    r.metrics.push(Metric::new("lat_p99_ns", f64::NAN, "ns"));
    r.flowops.push(FlowopStats {
        name: "w<1>".into(),
        kind: "write".into(),
        ops: 100,
        bytes: 409_600,
        errors: 0,
        latency: LatencyStats {
            count: 100,
            mean_ns: 1000.0,
            p99_ns: 5000,
            max_ns: 9000,
            ..LatencyStats::default()
        },
        histogram: vec![(1000, 60), (5000, 39), (9000, 1)],
        extra: json!({}),
    });
    r.flowops.push(FlowopStats {
        name: "block trace".into(),
        kind: "trace".into(),
        ops: 10,
        bytes: 40960,
        errors: 0,
        latency: LatencyStats::default(),
        histogram: vec![(4096, 8), (65536, 2)],
        extra: json!({}),
    });
    r.series.push(Series {
        name: "io".into(),
        width_ns: 1_000_000_000,
        ops: vec![50, 50],
        bytes: vec![204_800, 204_800],
    });
    r.monitor.push(MonitorSeries {
        metric: "cpu.usr_pct".into(),
        unit: "%".into(),
        points: vec![(1_000_000_000, 10.0), (2_000_000_000, f64::NAN)],
    });
    r.findings.push(Finding {
        check: "cache-fit".into(),
        severity: Severity::Warning,
        evidence: json!({}),
        explanation: "fits in <cache>".into(),
        fix: "use a bigger file".into(),
    });
    r
}

/// An experiment whose resolved specification lists `factors` (name, levels) and whose
/// configurations are `configs`, each `(label, factor values)`.
pub fn sweep_store(
    factors: serde_json::Value,
    configs: &[(String, serde_json::Map<String, serde_json::Value>)],
) -> (Store, ExperimentId, Vec<ConfigId>) {
    let mut store = Store::open_in_memory().unwrap();
    let exp = store
        .create_experiment(&NewExperiment {
            name: "sweep".into(),
            source: "sweep.toml".into(),
            spec: json!({ "factors": factors }),
            seed: 7,
            created_at: Timestamp(1_700_000_000_000_000_000),
            iolab_version: "0.1.0".into(),
            host: json!({}),
        })
        .unwrap();
    let ids = configs
        .iter()
        .map(|(label, factors)| {
            store
                .add_config(&NewConfig {
                    experiment: exp,
                    label: label.clone(),
                    factors: factors.clone(),
                })
                .unwrap()
        })
        .collect();
    (store, exp, ids)
}

/// Every combination of `levels` (the first factor outermost), as labels and factor maps.
pub fn matrix(
    levels: &[(&str, &[&str])],
) -> Vec<(String, serde_json::Map<String, serde_json::Value>)> {
    let mut out = vec![(Vec::<String>::new(), serde_json::Map::new())];
    for &(name, ls) in levels {
        out = out
            .into_iter()
            .flat_map(|(label, map)| {
                ls.iter().map(move |l| {
                    let mut label = label.clone();
                    label.push(format!("{name}={l}"));
                    let mut map = map.clone();
                    map.insert(name.into(), json!(l));
                    (label, map)
                })
            })
            .collect();
    }
    out.into_iter().map(|(l, m)| (l.join(" "), m)).collect()
}

/// An experiment shaped like a seed example, of 2, 12 or 182 configurations: two journal
/// modes; journal mode × readers × setup (seed 000); associativity × policy × write policy
/// (seed 004's sweep, a simulation: no time series, and the write policy changes nothing it
/// measures). Throughput and latency span decades (100 readers are 1000× slower), each
/// configuration ran twice, and a check fired on every run with evidence.
pub fn seed_like(n: usize) -> ReportData {
    let assoc: Vec<String> = (1..=12)
        .map(|i| (1u64 << i).to_string())
        .chain(["full".to_string()])
        .collect();
    let assoc: Vec<&str> = assoc.iter().map(String::as_str).collect();
    let policy: &[&str] = &[
        "lru",
        "fifo",
        "clock:m=4,s=1,i=1",
        "clock:m=4,s=1,i=4",
        "clock:m=16,s=1,i=1",
        "clock:m=16,s=1,i=16",
        "belady",
    ];
    let factors: Vec<(&str, &[&str])> = match n {
        2 => vec![("journal", &["ordered", "writeback"])],
        12 => vec![
            ("journal", &["journal", "ordered", "writeback"]),
            ("readers", &["1", "100"]),
            ("setup", &["seed", "corrected"]),
        ],
        182 => vec![
            ("assoc", &assoc),
            ("policy", policy),
            ("write_policy", &["write-through", "write-back"]),
        ],
        _ => unreachable!("2, 12 or 182"),
    };
    let configs = matrix(&factors);
    assert_eq!(configs.len(), n);
    let spec: Vec<serde_json::Value> = factors
        .iter()
        .map(|(name, levels)| json!({"name": name, "levels": levels}))
        .collect();
    let (mut store, exp, ids) = sweep_store(json!(spec), &configs);
    let simulation = n == 182;
    for (i, ((label, _), &id)) in configs.iter().zip(&ids).enumerate() {
        let slow = if label.contains("readers=100") {
            1e-3
        } else {
            1.0
        };
        // The write policy changes nothing here: both halves of the sweep are alike.
        let k = if simulation { i / 2 } else { i };
        for rep in 0..2u32 {
            let ops = (50_000.0 + 7_000.0 * k as f64 + 900.0 * f64::from(rep)) * slow;
            let mut r = record(id, rep, RunStatus::Ok, ops);
            r.metrics.retain(|m| m.name != "lat_p99_ns");
            if !simulation {
                r.metrics.push(Metric::new("lat_p99_ns", 3e9 / ops, "ns"));
            }
            r.findings[0].evidence = json!({"dataset_bytes": 523_239_424u64 + i as u64,
                "cache_bytes": 25_232_932_864u64, "ratio": 0.02, "elapsed_ns": 5_000_000_000u64});
            if simulation {
                r.series.clear();
                r.monitor.clear();
            }
            store.record_run(&r).unwrap();
        }
        // The stopping rule's note as `iolab run` words it: long.
        let note = format!(
            "did not converge: the maximum of 2 runs was reached; the 95% CI of ops_per_s is ±{}.{}%",
            100 + i,
            i % 10
        );
        store
            .set_config_outcome(
                id,
                &ConfigOutcome {
                    converged: false,
                    note,
                },
            )
            .unwrap();
    }
    load(&store, exp, &[]).unwrap()
}

/// HTML, Markdown, and the model as JSON.
pub fn render_all(data: &ReportData) -> (String, String, String) {
    let mut h = Vec::new();
    render_html(data, &mut h).unwrap();
    let mut m = Vec::new();
    render_markdown(data, &mut m).unwrap();
    (
        String::from_utf8(h).unwrap(),
        String::from_utf8(m).unwrap(),
        serde_json::to_string_pretty(data).unwrap(),
    )
}

/// The sections every report has, and a well-formed, escaped document with no empty section
/// or heading ([`empty_parts`]). The other sections (time series, latency, flowops) are there
/// only when the experiment has something to show in them.
pub fn assert_structure(html: &str) {
    for id in ["experiment", "findings", "summary", "charts"] {
        assert!(html.contains(&format!("id=\"{id}\"")), "missing #{id}");
    }
    assert!(html.starts_with("<!DOCTYPE html>") && html.trim_end().ends_with("</html>"));
    assert_eq!(html.matches("<svg").count(), html.matches("</svg>").count());
    assert!(
        !html.contains("<script"),
        "a user string got through unescaped"
    );
    assert!(!html.contains("NaN") && !html.contains("inf\""));
    // Findings come right after the header.
    assert!(html.find("id=\"findings\"") < html.find("id=\"summary\""));
    let empty = empty_parts(html);
    assert!(empty.is_empty(), "{empty:#?}");
}

/// A text label of a chart and the box it covers: its width estimated from its font size ×
/// its characters ([`crate::svg::text_width`], 0.6 em each), from 0.8 em above its baseline to
/// 0.25 em below; `angle` its rotation in degrees about `(cx, cy)`.
#[derive(Debug, Clone, PartialEq)]
pub struct LabelBox {
    pub text: String,
    pub x0: f64,
    pub x1: f64,
    pub y0: f64,
    pub y1: f64,
    pub angle: f64,
    pub cx: f64,
    pub cy: f64,
}

impl LabelBox {
    /// The box's corners after its rotation.
    fn corners(&self) -> [(f64, f64); 4] {
        let (s, c) = self.angle.to_radians().sin_cos();
        let r = |x: f64, y: f64| {
            let (dx, dy) = (x - self.cx, y - self.cy);
            (self.cx + dx * c - dy * s, self.cy + dx * s + dy * c)
        };
        [
            r(self.x0, self.y0),
            r(self.x1, self.y0),
            r(self.x1, self.y1),
            r(self.x0, self.y1),
        ]
    }

    /// The box's extent in a frame turned by `-angle` about the origin (where boxes of that
    /// angle are upright), or in the page's frame for angle 0.
    fn extent(&self, angle: f64) -> (f64, f64, f64, f64) {
        let (s, c) = (-angle).to_radians().sin_cos();
        let pts = self.corners().map(|(x, y)| (x * c - y * s, x * s + y * c));
        let xs = pts.map(|p| p.0);
        let ys = pts.map(|p| p.1);
        let min = |v: [f64; 4]| v.into_iter().fold(f64::INFINITY, f64::min);
        let max = |v: [f64; 4]| v.into_iter().fold(f64::NEG_INFINITY, f64::max);
        (min(xs), max(xs), min(ys), max(ys))
    }
}

/// The value of attribute `name` in the tag text `tag`.
fn attr<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let key = format!(" {name}=\"");
    let at = tag.find(&key)? + key.len();
    Some(&tag[at..at + tag[at..].find('"')?])
}

/// Characters a browser draws for `text` (entities count one, tags none).
fn drawn_chars(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if c == '<' {
            // A nested <title> is a tooltip, not drawn.
            if rest.starts_with("<title>") {
                rest = rest
                    .find("</title>")
                    .map_or("", |e| &rest[e + "</title>".len()..]);
            } else {
                rest = rest.find('>').map_or("", |e| &rest[e + 1..]);
            }
            continue;
        }
        if c == '&' {
            if let Some(e) = rest.find(';').filter(|&e| e < 10) {
                out.push('x');
                rest = &rest[e + 1..];
                continue;
            }
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// Each SVG of `html`: its title, view box size, and the boxes of its text labels.
pub fn svg_labels(html: &str) -> Vec<(String, (f64, f64), Vec<LabelBox>)> {
    let mut out = Vec::new();
    for chunk in html.split("<svg").skip(1) {
        let svg = &chunk[..chunk.find("</svg>").unwrap_or(chunk.len())];
        let head = &svg[..svg.find('>').unwrap_or(0)];
        let size = attr(head, "viewBox")
            .map(|v| {
                let n: Vec<f64> = v.split(' ').filter_map(|x| x.parse().ok()).collect();
                (
                    n.get(2).copied().unwrap_or(0.0),
                    n.get(3).copied().unwrap_or(0.0),
                )
            })
            .unwrap_or((0.0, 0.0));
        let title = svg
            .find("<title>")
            .map(|i| {
                let t = &svg[i + 7..];
                t[..t.find("</title>").unwrap_or(0)].to_string()
            })
            .unwrap_or_default();
        let mut labels = Vec::new();
        for t in svg.split("<text").skip(1) {
            let Some(end) = t.find('>') else { continue };
            let tag = &t[..end];
            let body = &t[end + 1..t.find("</text>").unwrap_or(t.len())];
            let text = drawn_chars(body);
            if text.trim().is_empty() {
                continue;
            }
            let num = |k: &str| attr(tag, k).and_then(|v| v.parse::<f64>().ok());
            let (x, y) = (num("x").unwrap_or(0.0), num("y").unwrap_or(0.0));
            let px = attr(tag, "style")
                .and_then(|s| s.split("font-size:").nth(1))
                .and_then(|s| s.trim_end_matches(';').trim_end_matches("px").parse().ok())
                .or_else(|| num("font-size"))
                .unwrap_or(if attr(tag, "class") == Some("ct") {
                    crate::svg::TITLE_PX
                } else {
                    crate::svg::TICK_PX
                });
            let w = crate::svg::text_width(text.chars().count(), px);
            let x0 = match attr(tag, "text-anchor") {
                Some("middle") => x - w / 2.0,
                Some("end") => x - w,
                _ => x,
            };
            let (angle, cx, cy) = attr(tag, "transform")
                .and_then(|tr| tr.strip_prefix("rotate("))
                .map(|r| {
                    let n: Vec<f64> = r
                        .trim_end_matches(')')
                        .split([' ', ','])
                        .filter_map(|v| v.parse().ok())
                        .collect();
                    (
                        n.first().copied().unwrap_or(0.0),
                        n.get(1).copied().unwrap_or(0.0),
                        n.get(2).copied().unwrap_or(0.0),
                    )
                })
                .unwrap_or((0.0, 0.0, 0.0));
            labels.push(LabelBox {
                text,
                x0,
                x1: x0 + w,
                y0: y - 0.8 * px,
                y1: y + 0.25 * px,
                angle,
                cx,
                cy,
            });
        }
        out.push((title, size, labels));
    }
    out
}

/// What is wrong with the labels of the charts of `html`: a label whose box leaves its
/// chart's view box (clipped), and two labels whose boxes overlap. Empty when every label
/// is whole and apart.
pub fn svg_label_problems(html: &str) -> Vec<String> {
    const SLACK: f64 = 0.5;
    let mut problems = Vec::new();
    for (title, (w, h), labels) in svg_labels(html) {
        for l in &labels {
            let (x0, x1, y0, y1) = l.extent(0.0);
            if x0 < -SLACK || y0 < -SLACK || x1 > w + SLACK || y1 > h + SLACK {
                problems.push(format!(
                    "{title}: {:?} at [{x0:.1}, {x1:.1}] × [{y0:.1}, {y1:.1}] leaves the {w} × {h} chart",
                    l.text
                ));
            }
        }
        for (i, a) in labels.iter().enumerate() {
            for b in &labels[i + 1..] {
                // Boxes of one slant are compared upright; others by their outlines.
                let angle = if a.angle == b.angle { a.angle } else { 0.0 };
                let (ax0, ax1, ay0, ay1) = a.extent(angle);
                let (bx0, bx1, by0, by1) = b.extent(angle);
                let dx = ax1.min(bx1) - ax0.max(bx0);
                let dy = ay1.min(by1) - ay0.max(by0);
                if dx > SLACK && dy > SLACK {
                    problems.push(format!("{title}: {:?} overlaps {:?}", a.text, b.text));
                }
            }
        }
    }
    problems
}

/// The sections, headings and folds of `html` that show nothing: a `<section>` with only its
/// heading, a heading followed by nothing before the next heading of its level or the end of
/// its container, an empty chart grid, table body or fold.
pub fn empty_parts(html: &str) -> Vec<String> {
    let mut out = Vec::new();
    for s in html.split("<section").skip(1) {
        let body = &s[..s.find("</section>").unwrap_or(s.len())];
        let id = attr(&format!(" {}", &body[..body.find('>').unwrap_or(0)]), "id")
            .unwrap_or("?")
            .to_string();
        let rest = body.find("</h2>").map_or(body, |i| &body[i + 5..]);
        if ![
            "<p", "<table", "<svg", "<details", "<div", "<dl", "<ul", "<article",
        ]
        .iter()
        .any(|t| rest.contains(t))
        {
            out.push(format!("section #{id} is empty"));
        }
    }
    for level in 2..=5 {
        let close = format!("</h{level}>");
        for (i, _) in html.match_indices(&close) {
            let next = html[i + close.len()..].trim_start();
            let heading_at_or_above = (2..=level).any(|l| next.starts_with(&format!("<h{l}")));
            let closes = [
                "</section>",
                "</details>",
                "</div>",
                "</article>",
                "</main>",
            ]
            .iter()
            .any(|c| next.starts_with(c));
            if heading_at_or_above || closes || next.is_empty() {
                let start = html[..i].rfind(&format!("<h{level}")).unwrap_or(i);
                out.push(format!(
                    "heading with nothing under it: {}",
                    &html[start..i + close.len()]
                ));
            }
        }
    }
    for empty in [
        "<div class=\"charts\"></div>",
        "<div class=\"charts wide\"></div>",
        "<tbody></tbody>",
    ] {
        if html.contains(empty) {
            out.push(format!("empty {empty}"));
        }
    }
    for (i, _) in html.match_indices("</summary>") {
        if html[i + "</summary>".len()..]
            .trim_start()
            .starts_with("</details>")
        {
            out.push("a fold with nothing in it".to_string());
        }
    }
    out
}

/// Every element id of `html` (` id="…"`), in document order, repeats included.
pub fn element_ids(html: &str) -> Vec<&str> {
    html.split(" id=\"")
        .skip(1)
        .map(|s| &s[..s.find('"').unwrap_or(s.len())])
        .collect()
}

/// What is wrong with the ids of `html`: an id given to two elements, or a link within the
/// page (`href="#…"`) to an id no element has.
pub fn id_problems(html: &str) -> Vec<String> {
    let ids = element_ids(html);
    let mut seen = std::collections::BTreeSet::new();
    let mut out: Vec<String> = ids
        .iter()
        .filter(|id| !seen.insert(**id))
        .map(|id| format!("id {id:?} twice"))
        .collect();
    for link in html.split("href=\"#").skip(1) {
        let target = &link[..link.find('"').unwrap_or(link.len())];
        if !seen.contains(target) {
            out.push(format!("link to #{target}, which no element has"));
        }
    }
    out
}
