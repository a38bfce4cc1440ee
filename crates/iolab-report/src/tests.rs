//! Rendering whole reports from real (in-memory) databases, including degenerate ones.

use iolab_store::*;
use serde_json::json;

use crate::testing::*;
use crate::*;

#[test]
fn experiment_without_runs_renders() {
    let (store, exp, _) = store_with(&["a", "b"]);
    let data = load(&store, exp, &[]).unwrap();
    let (html, md, json) = render_all(&data);
    assert_structure(&html);
    assert!(html.contains("&lt;b&gt;x&lt;/b&gt; &amp; &quot;y&quot;"));
    assert!(md.contains("## Summary"));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["configs"].as_array().unwrap().len(), 2);

    let (store, exp, _) = store_with(&[]);
    assert_structure(&render_all(&load(&store, exp, &[]).unwrap()).0);
}

#[test]
fn failed_runs_only_render() {
    let (mut store, exp, c) = store_with(&["only failed"]);
    store
        .record_run(&record(c[0], 0, RunStatus::Failed, 100.0))
        .unwrap();
    let data = load(&store, exp, &[]).unwrap();
    assert_eq!(data.configs[0].runs.failed, 1);
    assert_eq!(data.configs[0].metrics[0].n, 0);
    let (html, md, _) = render_all(&data);
    assert_structure(&html);
    assert!(html.contains("no data"));
    assert!(md.contains("| only failed | 0/1/0 | 0 |"));
}

#[test]
fn full_report_has_charts_outliers_and_escaped_labels() {
    let (mut store, exp, c) = store_with(&["fsync <a>", "fdatasync"]);
    for (i, &config) in c.iter().enumerate() {
        for rep in 0..6 {
            let ops = if i == 0 && rep == 5 {
                5000.0
            } else {
                1000.0 + f64::from(rep) * (i as f64 + 1.0)
            };
            store
                .record_run(&record(config, rep, RunStatus::Ok, ops))
                .unwrap();
        }
    }
    let data = load(&store, exp, &[]).unwrap();
    let m = &data.configs[0].metrics[0];
    assert_eq!(m.n, 6);
    assert_eq!(m.outliers.len(), 1);
    assert_eq!(data.findings.len(), 1);
    assert_eq!(data.findings[0].hits.len(), 2);
    assert_eq!(data.findings[0].hits[0].runs, 6);
    assert_eq!(
        data.configs[0].latency_histogram,
        [(1000, 360), (5000, 234), (9000, 6)]
    );
    assert_eq!(data.configs[0].size_histogram, [(4096, 48), (65536, 12)]);
    let (html, md, json) = render_all(&data);
    assert_structure(&html);
    assert!(html.contains("id=\"blocktrace\""));
    assert!(html.matches("<svg").count() >= 4);
    assert!(html.contains("class=\"outlier\""));
    assert!(html.contains("fsync &lt;a&gt;") && !html.contains("fsync <a>"));
    assert!(md.contains("fsync &lt;a&gt;"));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["configs"].as_array().unwrap().len(), 2);
}

#[test]
fn time_series_use_the_real_length_of_a_partial_interval() {
    let (mut store, exp, c) = store_with(&["1 MiB write"]);
    // Two runs of 1 MiB in ~9 ms (headline ~116 MiB/s), one 1 s interval each: drawn as a
    // flat 1.0 MiB/s line when divided by the interval's width.
    for (rep, elapsed) in [(0u32, 9_000_000u64), (1, 8_600_000)] {
        let mut r = record(c[0], rep, RunStatus::Ok, 1000.0);
        r.run.elapsed_ns = elapsed;
        r.series[0] = Series {
            name: "io".into(),
            width_ns: 1_000_000_000,
            ops: vec![256],
            bytes: vec![1 << 20],
        };
        store.record_run(&r).unwrap();
    }
    let data = load(&store, exp, &[]).unwrap();
    let t = &data.configs[0].timeline;
    assert_eq!(t.len(), 2);
    for (run, elapsed_s) in t.iter().zip([0.009, 0.0086]) {
        assert_eq!(run.mib_per_s.len(), 1);
        let (at, rate) = run.mib_per_s[0];
        assert!((at - elapsed_s).abs() < 1e-12, "{at}");
        assert!((rate - 1.0 / elapsed_s).abs() < 1e-9, "{rate} MiB/s");
        assert!(rate > 100.0);
    }
    let (html, _, _) = render_all(&data);
    assert_structure(&html);
}

#[test]
fn cdf_is_monotone_and_ends_at_one() {
    let c = crate::html::cdf(&[(10, 1), (20, 2), (40, 1)]);
    assert_eq!(c, [(10.0, 0.25), (20.0, 0.75), (40.0, 1.0)]);
    assert!(crate::html::cdf(&[]).is_empty());
    assert!(crate::html::cdf(&[(1, 0)]).is_empty());
}

/// What every finding of `check` says, whatever its numbers: the part that used to be
/// repeated per configuration.
fn because(check: &str) -> String {
    format!(
        "Because {check} fired, the number may not measure what the experiment meant to measure."
    )
}

fn finding(check: &str, severity: Severity, config: usize, run: u32) -> Finding {
    Finding {
        check: check.into(),
        severity,
        evidence: json!({
            "dataset_bytes": 1u64 << 30,
            "ratio": 0.5 + f64::from(run) / 10.0,
            "config": config,
            "suggested": null,
        }),
        explanation: format!("Configuration {config} run {run}: {}", because(check)),
        fix: format!("fix {check}"),
    }
}

/// Seed report 000's example, scaled: 6 configurations × 4 checks on every run used to print
/// 24 long explanations before the summary. Grouped by check, each explanation and fix is
/// printed once, with one line of evidence per configuration, and the summary comes first.
#[test]
fn findings_are_grouped_by_check_and_explained_once_after_the_summary() {
    let labels: Vec<String> = (0..6).map(|i| format!("config {i}")).collect();
    let refs: Vec<&str> = labels.iter().map(String::as_str).collect();
    let (mut store, exp, c) = store_with(&refs);
    let checks = [
        ("cache-fit", Severity::Warning),
        ("cache-served", Severity::Warning),
        ("short-run", Severity::Info),
        ("loop-cached", Severity::Warning),
    ];
    for (i, &config) in c.iter().enumerate() {
        for rep in 0..2 {
            let mut r = record(config, rep, RunStatus::Ok, 1000.0 + f64::from(rep));
            r.findings = checks
                .iter()
                .map(|&(check, sev)| finding(check, sev, i, rep))
                .collect();
            store.record_run(&r).unwrap();
        }
    }
    // A configuration-level finding on two of them.
    for &config in &c[..2] {
        store
            .add_config_findings(
                config,
                &[finding("did-not-converge", Severity::Error, 9, 9)],
            )
            .unwrap();
    }
    let data = load(&store, exp, &[]).unwrap();
    let got: Vec<(&str, usize)> = data
        .findings
        .iter()
        .map(|g| (g.check.as_str(), g.hits.len()))
        .collect();
    assert_eq!(
        got,
        [
            ("did-not-converge", 2),
            ("cache-fit", 6),
            ("cache-served", 6),
            ("loop-cached", 6),
            ("short-run", 6)
        ],
        "most severe first, then the most widespread"
    );
    let fit = &data.findings[1];
    assert_eq!(fit.worded_for.as_deref(), Some("config 0"));
    assert_eq!((fit.hits[3].runs, fit.hits[3].total_runs), (2, 2));
    let dnc = &data.findings[0];
    assert!(dnc.hits[0].about_config && dnc.hits[0].runs == 0);
    assert_eq!(dnc.worded_for, None, "all its findings say the same");

    let (html, md, json) = render_all(&data);
    assert_structure(&html);
    let checks = data.findings.len();
    assert_eq!(html.matches("class=\"explanation\"").count(), checks);
    assert_eq!(html.matches("class=\"fix\"").count(), checks);
    for g in &data.findings {
        assert_eq!(html.matches(&because(&g.check)).count(), 1, "{}", g.check);
        assert_eq!(md.matches(&because(&g.check)).count(), 1, "{}", g.check);
    }
    // One line of evidence per configuration a check fired on: 4 × 6 + 2.
    assert_eq!(html.matches("<td class=\"evidence\">").count(), 26);
    // Numbers that differ between runs are shown as a range; bytes with units; nulls not.
    assert!(html.contains(
        "<td class=\"evidence\">config 3 · dataset_bytes 1 GiB · ratio 0.5000–0.6000</td>"
    ));
    assert!(!html.contains("suggested"));
    // The summary comes before the first explanation, and right after the compact list.
    let summary = html.find("id=\"summary\"").unwrap();
    let first = data
        .findings
        .iter()
        .filter_map(|g| html.find(&because(&g.check)))
        .min()
        .unwrap();
    assert!(summary < first);
    assert!(html.find("id=\"findings\"").unwrap() < summary);
    let summary = md.find("## Summary").unwrap();
    assert!(md.find("## Findings").unwrap() < summary);
    assert!(md.find("Because ").unwrap() > summary);
    assert_eq!(md.matches("**Fix:**").count(), checks);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let fit = &v["findings"][1]["hits"][0]["evidence"];
    assert_eq!(fit["ratio"], json!({"min": 0.5, "max": 0.6}));
    assert_eq!(fit["dataset_bytes"], 1u64 << 30);
}

fn section<'a>(html: &'a str, id: &str) -> &'a str {
    let s = &html[html
        .find(&format!("<section id=\"{id}\""))
        .unwrap_or_else(|| panic!("no #{id}"))..];
    &s[..s.find("</section>").unwrap()]
}

/// The seed-004 sweep in small: assoc (four levels, one a word) × policy. Each metric is drawn
/// against assoc with its levels in the file's order, one line per policy, whiskers where a
/// configuration ran more than once; policy has two levels and gets no chart.
#[test]
fn a_sweep_draws_each_metric_against_each_factor_of_three_or_more_levels() {
    let assoc: &[&str] = &["2", "8", "64", "full"];
    let policy: &[&str] = &["lru", "fifo"];
    let mut configs = matrix(&[("policy", policy), ("assoc", assoc)]);
    // Stored out of order: the axis follows the file's order, not the configurations'.
    configs.reverse();
    let factors = json!([
        {"name": "assoc", "levels": assoc},
        {"name": "policy", "levels": policy},
    ]);
    let (mut store, exp, ids) = sweep_store(factors, &configs);
    for (i, (label, _)) in configs.iter().enumerate() {
        // lru: one deterministic run; fifo: three runs that differ.
        let reps = if label.contains("lru") { 1 } else { 3 };
        for rep in 0..reps {
            let ops = 1000.0 * (i + 1) as f64 + f64::from(rep) * 10.0;
            store
                .record_run(&record(ids[i], rep, RunStatus::Ok, ops))
                .unwrap();
        }
    }
    let data = load(&store, exp, &[]).unwrap();
    let names: Vec<(&str, usize)> = data
        .factors
        .iter()
        .map(|f| (f.name.as_str(), f.levels.len()))
        .collect();
    assert_eq!(names, [("assoc", 4), ("policy", 2)]);
    assert_eq!(data.factors[0].levels, assoc);
    // The first stored configuration is the last of the matrix: policy=fifo assoc=full.
    assert_eq!(data.configs[0].levels, [Some(3), Some(1)]);

    let (html, md, json) = render_all(&data);
    assert_structure(&html);
    let sweep = section(&html, "sweep");
    assert!(html.find("id=\"charts\"") < html.find("id=\"sweep\""));
    // ops, MiB/s and mean latency have values; p99 is NaN everywhere and is not drawn.
    let drawn: Vec<String> = data.headline[..3]
        .iter()
        .map(|d| format!("{} by assoc", crate::num::title(&d.title, &d.unit)))
        .collect();
    for t in &drawn {
        assert!(
            sweep.contains(&format!("<title>{}</title>", crate::escape_html(t))),
            "{t}"
        );
    }
    assert!(!sweep.contains("by policy"), "two levels: no chart");
    assert!(!sweep.contains(data.headline[3].title.as_ref()));
    assert_eq!(sweep.matches("<svg").count(), 3);
    assert_eq!(
        sweep.matches("<polyline").count(),
        3 * 2,
        "a line per policy"
    );
    for l in ["policy=lru", "policy=fifo"] {
        assert_eq!(
            sweep.matches(&format!(">{l}</text>")).count(),
            3,
            "legend {l}"
        );
    }
    // Whiskers for fifo's four configurations only.
    assert_eq!(sweep.matches("class=\"ci\"").count(), 3 * 4);
    // The ticks, in the file's order, equally spaced.
    let svg = &sweep[sweep.find("<svg").unwrap()..];
    let svg = &svg[..svg.find("</svg>").unwrap()];
    let ticks: Vec<(f64, &str)> = assoc
        .iter()
        .map(|l| {
            let at = svg
                .find(&format!("text-anchor=\"middle\">{l}</text>"))
                .unwrap_or_else(|| panic!("tick {l}"));
            let x = svg[..at].rsplit("x=\"").next().unwrap();
            (x[..x.find('"').unwrap()].parse().unwrap(), *l)
        })
        .collect();
    let gaps: Vec<f64> = ticks.windows(2).map(|w| w[1].0 - w[0].0).collect();
    assert!(
        gaps.iter().all(|g| (g - gaps[0]).abs() < 0.2 && *g > 0.0),
        "{ticks:?}"
    );

    assert!(md.contains("## Headline metrics by factor"), "{md}");
    assert!(md.contains("| | 2 | 8 | 64 | full |"), "{md}");
    let lru = md
        .lines()
        .find(|l| l.starts_with("| policy=lru |"))
        .unwrap_or_else(|| panic!("{md}"));
    assert!(!lru.contains('±'), "one run: no interval: {lru}");
    assert!(md
        .lines()
        .any(|l| l.starts_with("| policy=fifo |") && l.matches('±').count() == 4));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["factors"][0]["levels"], json!(assoc));
    assert_eq!(v["configs"][0]["levels"], json!([3, 1]));
}

/// More combinations of the other factors than colours: split by the factor with the fewest
/// levels; one factor with more levels than colours is drawn in parts.
#[test]
fn a_sweep_with_many_combinations_is_split_into_readable_charts() {
    let a: &[&str] = &["1", "2", "3"];
    let b: &[&str] = &["x", "y"];
    let c: &[&str] = &["p", "q", "r", "s"];
    let configs = matrix(&[("a", a), ("b", b), ("c", c)]);
    let factors = json!([
        {"name": "a", "levels": a}, {"name": "b", "levels": b}, {"name": "c", "levels": c},
    ]);
    let (mut store, exp, ids) = sweep_store(factors, &configs);
    for (i, &id) in ids.iter().enumerate() {
        // b=y (the second four of every eight) ten times b=x.
        let base = if i % 8 >= 4 { 1000.0 } else { 100.0 };
        store
            .record_run(&record(id, 0, RunStatus::Ok, base + i as f64))
            .unwrap();
    }
    let data = load(&store, exp, &[]).unwrap();
    let (html, _, _) = render_all(&data);
    let sweep = section(&html, "sweep");
    let title = |t: &str| sweep.contains(&format!("<title>Throughput (op/s) by {t}</title>"));
    // by a: b × c = 8 lines → one chart per level of b, four lines each.
    assert!(title("a — b=x") && title("a — b=y"), "{sweep}");
    // by c: a × b = 6 lines fit one chart.
    assert!(title("c"));
    // Three metrics with values × (2 charts by a + 1 by c).
    assert_eq!(sweep.matches("<svg").count(), 9);
    assert_eq!(sweep.matches("<polyline").count(), 3 * (4 + 4 + 6));
    assert!(sweep.contains(">a=1 b=x</text>"));
    // The two charts of a metric split by b share one y scale.
    let y_ticks = |t: &str| -> Vec<&str> {
        let svg = &sweep[sweep.find(&format!("<title>{t}</title>")).unwrap()..];
        let svg = &svg[..svg.find("</svg>").unwrap()];
        svg.split("text-anchor=\"end\">")
            .skip(1)
            .map(|x| &x[..x.find('<').unwrap()])
            .collect()
    };
    let x = y_ticks("Throughput (op/s) by a — b=x");
    assert!(x.len() >= 3, "{x:?}");
    assert_eq!(x, y_ticks("Throughput (op/s) by a — b=y"));

    // Eight levels of the only other factor: two parts.
    let d: Vec<String> = (0..8).map(|i| format!("d{i}")).collect();
    let d: Vec<&str> = d.iter().map(String::as_str).collect();
    let configs = matrix(&[("a", a), ("d", &d)]);
    let factors = json!([{"name": "a", "levels": a}, {"name": "d", "levels": d}]);
    let (mut store, exp, ids) = sweep_store(factors, &configs);
    for &id in &ids {
        store
            .record_run(&record(id, 0, RunStatus::Ok, 100.0))
            .unwrap();
    }
    let (html, md, _) = render_all(&load(&store, exp, &[]).unwrap());
    let sweep = section(&html, "sweep");
    let title = |t: &str| sweep.contains(&format!("<title>Throughput (op/s) by {t}</title>"));
    assert!(title("a (part 1)") && title("a (part 2)"), "{sweep}");
    // Eight lines in two equal parts, not six and two.
    let part = |n: usize| {
        let t = format!("<title>Throughput (op/s) by a (part {n})</title>");
        let svg = &sweep[sweep.find(&t).unwrap()..];
        svg[..svg.find("</svg>").unwrap()]
            .matches("<polyline")
            .count()
    };
    assert_eq!((part(1), part(2)), (4, 4));
    assert!(title("d"));
    // The Markdown table has every combination in one table.
    let table = &md[md.find("### Throughput (op/s) by a").unwrap()..];
    let table = &table[..table.find("\n\n###").unwrap()];
    assert_eq!(table.lines().filter(|l| l.starts_with("| d=")).count(), 8);
}

/// Without a factor of three levels there is no such section.
#[test]
fn no_sweep_section_without_a_factor_of_three_levels() {
    let configs = matrix(&[("j", &["a", "b"])]);
    let (mut store, exp, ids) = sweep_store(json!([{"name": "j", "levels": ["a", "b"]}]), &configs);
    store
        .record_run(&record(ids[0], 0, RunStatus::Ok, 100.0))
        .unwrap();
    let (html, md, _) = render_all(&load(&store, exp, &[]).unwrap());
    assert!(!html.contains("id=\"sweep\"") && !md.contains("by factor"));
    assert!(!html.contains("id=\"mrc\""));

    // A command's experiment (a kind's matrix mode) lists no factors, whatever its
    // configurations carry; a database without the list takes the configurations'.
    let configs = matrix(&[("size", &["64", "128", "256"])]);
    for (spec, want) in [(json!([]), 0), (serde_json::Value::Null, 1)] {
        let (mut store, exp, ids) = sweep_store(spec, &configs);
        for &id in &ids {
            store
                .record_run(&record(id, 0, RunStatus::Ok, 100.0))
                .unwrap();
        }
        let data = load(&store, exp, &[]).unwrap();
        assert_eq!(data.factors.len(), want);
        let (html, _, _) = render_all(&data);
        assert_eq!(html.contains("id=\"sweep\""), want == 1);
        if want == 1 {
            assert_eq!(data.factors[0].levels, ["64", "128", "256"]);
        }
    }
}

fn with_curve(mut r: RunRecord, points: serde_json::Value) -> RunRecord {
    let t = r.flowops.iter_mut().find(|f| f.kind == "trace").unwrap();
    t.extra = json!({"saved": {"path": "/x/run-1.iolt", "requests": 10, "mrc": {
        "block_size": 4096, "requests": 40, "distinct_blocks": 10, "points": points,
    }}});
    r
}

/// Saved traces' curves: one line per configuration, from its last ok run with a curve;
/// x in bytes.
#[test]
fn miss_ratio_curves_of_saved_traces_are_drawn_per_configuration() {
    let (mut store, exp, c) = store_with(&["ext4", "xfs <b>", "no trace"]);
    let curve = |r: f64| {
        json!((1..=10)
            .map(|i| json!([i * 4096, (r - 0.04 * f64::from(i)).max(0.25)]))
            .collect::<Vec<_>>())
    };
    store
        .record_run(&with_curve(
            record(c[0], 0, RunStatus::Ok, 100.0),
            curve(0.9),
        ))
        .unwrap();
    store
        .record_run(&with_curve(
            record(c[0], 1, RunStatus::Ok, 100.0),
            curve(0.8),
        ))
        .unwrap();
    // A later failed run's curve is not the configuration's.
    store
        .record_run(&with_curve(
            record(c[0], 2, RunStatus::Failed, 100.0),
            curve(0.1),
        ))
        .unwrap();
    store
        .record_run(&with_curve(
            record(c[1], 0, RunStatus::Ok, 100.0),
            curve(0.7),
        ))
        .unwrap();
    store
        .record_run(&record(c[2], 0, RunStatus::Ok, 100.0))
        .unwrap();
    let data = load(&store, exp, &[]).unwrap();
    let m = data.miss_ratio_curves.as_ref().expect("curves");
    let got: Vec<(&str, RunId, f64)> = m
        .configs
        .iter()
        .map(|x| (x.label.as_str(), x.run, x.points[0].1))
        .collect();
    assert_eq!(got[0].0, "ext4");
    assert!((got[0].2 - 0.76).abs() < 1e-9, "the second run's: {got:?}");
    assert_eq!(got[1].0, "xfs <b>");
    assert_eq!(got.len(), 2);

    let (html, md, json) = render_all(&data);
    assert_structure(&html);
    let s = section(&html, "mrc");
    assert!(s.contains("Miss-ratio curves of the saved traces"));
    assert!(
        s.contains("<title>LRU miss ratio, 4 KiB blocks</title>"),
        "{s}"
    );
    assert_eq!(s.matches("<polyline").count(), 2);
    assert!(s.contains(">xfs &lt;b&gt;</text>") && !s.contains("xfs <b>"));
    assert!(
        s.contains(">cache size</text>") && s.contains(" KiB</text>"),
        "{s}"
    );
    // The footprint and the miss ratio at half of it.
    assert!(s.contains("40 KiB (10 blocks)"), "{s}");
    assert!(
        md.contains("## Miss-ratio curves of the saved traces"),
        "{md}"
    );
    assert!(md.contains("| ext4 |"), "{md}");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["miss_ratio_curves"]["configs"][1]["distinct_blocks"], 10);
}

/// Past 40 configurations the summary table is folded, and with charts by factor the bar
/// charts (a bar per configuration) are left out; with fewer, both are shown as always.
#[test]
fn a_large_sweep_folds_its_table_and_draws_no_bars() {
    let a: Vec<String> = (1..=21).map(|i| i.to_string()).collect();
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let b: &[&str] = &["x", "y"];
    for (levels, many) in [(&a[..], true), (&a[..3], false)] {
        let configs = matrix(&[("a", levels), ("b", b)]);
        let factors = json!([{"name": "a", "levels": levels}, {"name": "b", "levels": b}]);
        let (mut store, exp, ids) = sweep_store(factors, &configs);
        for (i, &id) in ids.iter().enumerate() {
            store
                .record_run(&record(id, 0, RunStatus::Ok, 100.0 + i as f64))
                .unwrap();
        }
        let data = load(&store, exp, &[]).unwrap();
        let (html, _, _) = render_all(&data);
        let summary = section(&html, "summary");
        let charts = section(&html, "charts");
        assert_eq!(
            summary.contains("<details><summary>The table of all 42 configurations"),
            many
        );
        assert_eq!(summary.matches("<tr>").count(), configs.len() + 1);
        assert_eq!(charts.contains("too many bars to read"), many);
        assert_eq!(charts.contains("<svg"), !many);
        assert!(section(&html, "sweep").contains("<svg"));
    }
}

/// The review's reports at 1400 px: bar labels over each other (`journajournajourna…`), y
/// ticks and titles cut at the chart's edge. Every label of every chart drawn lies inside its
/// chart and clear of every other, at 2, 12 and 182 configurations.
#[test]
fn chart_labels_stay_inside_their_chart_and_apart_at_any_size() {
    for n in [2, 12, 182] {
        let (html, _, _) = render_all(&seed_like(n));
        assert_structure(&html);
        assert!(html.matches("<svg").count() >= 4, "{n}");
        let problems = svg_label_problems(&html);
        assert!(problems.is_empty(), "{n} configurations: {problems:#?}");
    }
    // The check sees what it is meant to: labels drawn on top of each other and off the edge.
    let crowded = svg::bar_chart("t", &[], "")
        .replace("</svg>", r#"<text class="tick" x="10" y="20">abc</text><text class="tick" x="12" y="21">abc</text><text class="tick" x="-30" y="40">cut</text></svg>"#);
    assert_eq!(svg_label_problems(&crowded).len(), 2, "{crowded}");
}

/// The review's seed-004 report: 182 empty "Time series" headings (a simulation has none),
/// an "Outliers: None." heading, empty sections.
#[test]
fn no_section_or_heading_is_empty_at_any_size() {
    for n in [2, 12, 182] {
        let (html, _, _) = render_all(&seed_like(n));
        let empty = empty_parts(&html);
        assert!(empty.is_empty(), "{n} configurations: {empty:#?}");
        assert!(!html.contains(">None.<"));
    }
    // A simulation has no time series: no section for them.
    let (html, _, _) = render_all(&seed_like(182));
    assert!(!html.contains("id=\"timeseries\""));
    // The check sees an empty heading.
    assert_eq!(
        empty_parts("<section id=\"x\"><h2>X</h2><h3>a</h3></section>").len(),
        2
    );
}

/// The review's summary: latencies as raw nanoseconds (`3,326,103,438 ± 2,535,106,510`) in a
/// table wider than the page, p99 and `converged` behind a scrollbar.
#[test]
fn the_summary_is_narrow_and_writes_durations_in_their_units() {
    let data = seed_like(12);
    let (html, md, _) = render_all(&data);
    let summary = section(&html, "summary");
    let head = &summary[..summary.find("</thead>").unwrap()];
    // configuration, runs, the headline metrics, converged.
    assert_eq!(
        head.matches("<th>").count(),
        3 + data.headline.len(),
        "{head}"
    );
    assert!(!head.contains("(ns)"), "{head}");
    for text in [summary, md.as_str()] {
        // No number of a million or more: 1,234,567.
        let digits: Vec<char> = text.chars().collect();
        for w in digits.windows(8) {
            let s: String = w.iter().collect();
            let b = s.as_bytes();
            assert!(
                !(b[0] == b','
                    && b[4] == b','
                    && b[1..4].iter().chain(&b[5..8]).all(u8::is_ascii_digit)),
                "a raw number: …{s}…"
            );
        }
    }
    // The slowest configuration's p99: 3e9 / 50 op/s = 60 ms.
    assert!(
        summary.contains(" ms</span></td>") && summary.contains(" µs</span></td>"),
        "{summary}"
    );
}

/// The review's seed-000 report: three screens of `key value` evidence before any chart.
#[test]
fn the_evidence_is_folded_after_the_charts() {
    let (html, _, _) = render_all(&seed_like(12));
    let at = |id: &str| {
        html.find(&format!("id=\"{id}\""))
            .unwrap_or_else(|| panic!("#{id}"))
    };
    assert!(at("findings") < at("summary"));
    for charts in ["charts", "sweep", "latency"] {
        assert!(at(charts) < at("checks"), "{charts}");
    }
    let checks = section(&html, "checks");
    assert!(
        checks.contains("<details class=\"fold\"><summary>Evidence (12 configurations)</summary>")
    );
    // Each evidence table is inside its fold.
    assert_eq!(
        checks.matches("<table>").count(),
        checks.matches("<details class=\"fold\">").count()
    );
    // And durations and sizes in the evidence have units.
    assert!(checks.contains("elapsed_ns 5.00 s") && checks.contains("cache_bytes 23.5 GiB"));
}

/// The review's seed-000 report: 60 time-series charts one after another.
#[test]
fn time_series_are_folded_per_configuration() {
    let data = seed_like(12);
    let (html, _, _) = render_all(&data);
    let ts = section(&html, "timeseries");
    assert_eq!(ts.matches("<details class=\"fold\">").count(), 12);
    assert_eq!(ts.matches("<h3").count(), 0);
    let before_first_fold = &ts[..ts.find("<details").unwrap()];
    assert!(!before_first_fold.contains("<svg"));
}

/// The review's 12-line latency CDF reused the 6 colours; with more lines than a chart can
/// tell apart, small multiples.
#[test]
fn every_line_of_the_latency_cdf_has_its_own_style() {
    let (html, _, _) = render_all(&seed_like(12));
    let lat = section(&html, "latency");
    assert_eq!(lat.matches("<svg").count(), 1);
    let styles: std::collections::BTreeSet<(String, String)> = lat
        .split("<polyline")
        .skip(1)
        .map(|p| {
            let tag = &p[..p.find("points").unwrap()];
            let get = |k: &str| {
                tag.split(&format!("{k}=\""))
                    .nth(1)
                    .map_or(String::new(), |v| v[..v.find('"').unwrap()].to_string())
            };
            (get("stroke"), get("stroke-dasharray"))
        })
        .collect();
    assert_eq!(styles.len(), 12, "{styles:?}");
    let (html, _, _) = render_all(&seed_like(182));
    let lat = section(&html, "latency");
    assert!(lat.matches("<svg").count() >= 182 / 6, "small multiples");
    assert!(lat.contains("<details class=\"fold\">"));
}

/// The review's seed-004 report drew identical charts twice: write-through and write-back
/// have the same miss ratios. Those panels are one chart, titled for both.
#[test]
fn identical_sweep_panels_are_drawn_once() {
    let (html, _, _) = render_all(&seed_like(182));
    let sweep = section(&html, "sweep");
    let titles: Vec<&str> = sweep
        .split("<svg")
        .skip(1)
        .map(|s| {
            let t = &s[s.find("<title>").unwrap() + 7..];
            &t[..t.find("</title>").unwrap()]
        })
        .collect();
    assert!(!titles.is_empty());
    for t in &titles {
        assert!(
            t.contains("write_policy=write-through = write_policy=write-back"),
            "{t}"
        );
    }
}

/// The review's charts: linear scales flattening all but the largest series (latencies of
/// 100 µs to 3 s), and ticks like `0.2000` on an axis of repetitions.
#[test]
fn values_spanning_decades_get_a_log_scale_and_integer_axes_integer_ticks() {
    let (html, _, _) = render_all(&seed_like(12));
    let labels = svg_labels(&html);
    let mean_latency = labels
        .iter()
        .find(|(t, _, _)| t.starts_with("Mean latency"))
        .expect("a bar chart of the mean latency");
    let ticks: Vec<&str> = mean_latency.2.iter().map(|l| l.text.as_str()).collect();
    for decade in ["100 µs", "1 ms", "10 ms", "100 ms"] {
        assert!(ticks.contains(&decade), "{ticks:?}");
    }
    let per_run: Vec<_> = labels
        .iter()
        .filter(|(t, _, _)| t.contains("p99 latency per run"))
        .collect();
    assert_eq!(per_run.len(), 12);
    for (t, _, l) in per_run {
        // The repetitions (plain numbers; the y ticks carry a unit).
        let plain = |t: &str| {
            t.chars()
                .all(|c| c.is_ascii_digit() || c == '.' || c == ',')
        };
        for x in l.iter().filter(|l| plain(&l.text)) {
            assert!(!x.text.contains('.'), "{t}: {:?}", x.text);
        }
    }
}

/// What a reader sees of a section before unfolding anything: the text outside `<details>`.
fn unfolded(html: &str) -> String {
    let mut out = String::new();
    let mut rest = html;
    while let Some(i) = rest.find("<details") {
        out.push_str(&rest[..i]);
        let end = rest[i..].find("</details>").expect("closed") + i;
        rest = &rest[end + "</details>".len()..];
    }
    out.push_str(rest);
    out
}

/// Seed 004's answer opened the report with a wall of sentences (13 associativities × 7
/// policies × the headline metrics), seed 002's with 38 (3 factors × 7 metrics): each factor
/// shows its effect on the stopping metric — a factor of more than four levels in one
/// sentence — and folds its other metrics and every level's sentence below.
#[test]
fn the_answer_of_a_sweep_is_a_sentence_per_factor_and_metric_with_the_levels_folded() {
    let data = seed_like(182);
    let (html, md, _) = render_all(&data);
    let answer = section(&html, "answer");
    let shown = unfolded(answer);
    let a = crate::answer::answers(&data).unwrap();
    let metrics = a.factors[0].metrics.len();
    assert!(metrics > 1);
    // assoc and policy summed up, write_policy (2 levels) one sentence: on the stopping metric.
    assert_eq!(shown.matches("<li>").count(), 3, "{shown}");
    assert_eq!(shown.matches("<h3>").count(), 3, "{shown}");
    assert!(
        shown.contains("the 12 other levels of assoc against assoc=2: "),
        "{shown}"
    );
    // Each factor's other metrics, folded under one line that names them.
    assert_eq!(
        answer
            .matches("<details class=\"fold\"><summary>assoc on ")
            .count(),
        1,
        "{answer}"
    );
    assert!(answer.contains("<details class=\"fold\"><summary>Every level, one sentence each ("));
    let folded = &answer[answer.find("Every level, one sentence each").unwrap()..];
    assert_eq!(folded.matches("<li>").count(), (12 + 6 + 1) * metrics);
    let md_answer = &md[md.find("## Answer").unwrap()..];
    let md_answer = &md_answer[..md_answer[3..]
        .find("\n## ")
        .map_or(md_answer.len(), |i| i + 3)];
    let md_shown = unfolded(md_answer);
    assert_eq!(md_shown.matches("\n- ").count(), 3, "{md_shown}");
    // Small experiments keep a sentence per level.
    let (html, _, _) = render_all(&seed_like(12));
    let answer = section(&html, "answer");
    assert!(!answer.contains("other levels of"), "{answer}");
    assert!(
        !answer.contains("Every level, one sentence each"),
        "{answer}"
    );
}

/// `render_html_many` and `render_markdown_many` of `parts`, as text.
fn render_many(parts: &[ReportData]) -> (String, String) {
    let (mut h, mut m) = (Vec::new(), Vec::new());
    render_html_many(parts, &mut h).unwrap();
    render_markdown_many(parts, &mut m).unwrap();
    (String::from_utf8(h).unwrap(), String::from_utf8(m).unwrap())
}

#[test]
fn the_default_is_the_newest_experiment_with_the_stages_of_its_run_before_it() {
    let mut store = Store::open_in_memory().unwrap();
    assert_eq!(latest_file_run(&store).unwrap(), []);
    let mut add = |source: &str, stage: Option<u64>| {
        let spec = stage.map_or(json!({}), |s| json!({ "stage": s }));
        add_experiment(&mut store, "e", source, spec, &["default"]).0
    };
    // An earlier run of the file, then a new one with another file's experiment (another
    // `iolab run` on the same database) between its stages.
    let _old = [add("a.toml", None), add("a.toml", Some(2))];
    let s1 = add("a.toml", None);
    let other = add("b.toml", None);
    let s2 = add("a.toml", Some(2));
    let s3 = add("a.toml", Some(3));
    assert_eq!(latest_file_run(&store).unwrap(), [s1, s2, s3]);
    // The newest is a file without stages: it alone.
    let b = add_experiment(&mut store, "b", "b.toml", json!({}), &[]).0;
    assert_eq!(latest_file_run(&store).unwrap(), [b]);
    // A first stage (its second has not started): it alone, not the run before it.
    let a = add_experiment(&mut store, "a", "a.toml", json!({}), &[]).0;
    assert_eq!(latest_file_run(&store).unwrap(), [a]);
    assert_ne!(other, b);
}

#[test]
fn stages_in_one_report_have_a_contents_block_and_unique_ids() {
    let (mut store, first, c1) = store_with(&["sync=normal", "sync=fdatasync"]);
    let (second, c2) = add_experiment(
        &mut store,
        "block sizes <2>",
        "exp.toml",
        json!({"stage": 2, "workload": {"cachesim": {"size": "1m"}}}),
        &["bs=4k"],
    );
    for (i, c) in c1.iter().chain(&c2).enumerate() {
        for rep in 0..2 {
            let r = record(*c, rep, RunStatus::Ok, 1000.0 * (i + 1) as f64);
            store.record_run(&r).unwrap();
        }
    }
    let parts = [
        load(&store, first, &[]).unwrap(),
        load(&store, second, &[]).unwrap(),
    ];
    let (html, md) = render_many(&parts);
    assert_eq!(id_problems(&html), Vec::<String>::new());
    assert_structure_many(&html);
    // The file's name, then a row per stage linking to its part.
    assert!(html.contains("<h1>exp.toml</h1>"), "{html}");
    assert_eq!(html.matches("<h1").count(), 1);
    let contents = &html[html.find("id=\"contents\"").unwrap()..html.find("</header>").unwrap()];
    assert!(
        contents.contains("2 stages of <code>exp.toml</code>"),
        "{contents}"
    );
    assert!(contents.contains("<a href=\"#e1\">&lt;b&gt;x&lt;/b&gt; &amp; &quot;y&quot;</a>"));
    assert!(contents.contains("<div class=\"note\">stage 1 · experiment 1</div>"));
    assert!(contents.contains("<a href=\"#e2\">block sizes &lt;2&gt;</a>"));
    assert!(contents.contains("<code>cachesim</code>"));
    // Neither finished: each says so under its runs.
    assert!(
        contents.contains(">2 / 4<div class=\"note bad\">running</div>")
            && contents.contains(">1 / 2<div class=\"note bad\">running</div>"),
        "{contents}"
    );
    // Without factors, the headline: one configuration's mean, or the range over several.
    assert!(contents.contains("Throughput (op/s): 3,000"), "{contents}");
    assert!(
        contents.contains("from 1,000 (sync=normal) to 2,000 (sync=fdatasync)"),
        "{contents}"
    );
    // Each report whole, one heading level down, its ids prefixed.
    for (id, part) in [("e1", &parts[0]), ("e2", &parts[1])] {
        for section in ["experiment", "findings", "summary", "charts", "flowops"] {
            assert!(
                html.contains(&format!(" id=\"{id}-{section}\"")),
                "#{id}-{section}"
            );
        }
        assert!(html.contains(&format!("<a href=\"#{id}-check-cache-fit\">")));
        let name = escape_html(&part.experiment.name).into_owned();
        assert!(html.contains(&format!("<h2>{name}</h2>")), "{name}");
    }
    assert!(html.contains("<h3>Summary</h3>") && !html.contains("<h2>Summary</h2>"));
    assert!(html.find(" id=\"e1\"") < html.find(" id=\"e2\""));
    assert!(html.contains("Generated by iolab") && html.contains("from experiments 1 ("));

    assert!(md.starts_with("# exp.toml\n"), "{md}");
    assert!(md.contains("| [block sizes &lt;2&gt;](#e2) | stage 2 · experiment 2 | cachesim | 1 / 2 (running) |"), "{md}");
    assert!(
        md.contains("<a id=\"e1\"></a>\n\n## &lt;b&gt;x&lt;/b&gt;"),
        "{md}"
    );
    assert_eq!(md.matches("\n### Summary\n").count(), 2, "{md}");
    assert!(!md.contains("\n## Summary"));
}

#[test]
fn any_experiments_in_one_report_have_unique_ids_even_when_given_twice() {
    // Two databases' experiments (both id 1), each with factors: the contents has answers.
    let parts = [seed_like(2), seed_like(12), seed_like(2)];
    let (html, md) = render_many(&parts);
    assert_eq!(id_problems(&html), Vec::<String>::new());
    assert_structure_many(&html);
    assert!(html.contains("<h1>sweep.toml</h1>"));
    assert!(html.contains("3 experiments of <code>sweep.toml</code>"));
    for a in ["e1", "e1p2", "e1p3"] {
        assert!(html.contains(&format!("<a href=\"#{a}\">")), "{a}");
        assert!(html.contains(&format!(" id=\"{a}-summary\"")), "{a}");
    }
    let contents = &html[..html.find("</header>").unwrap()];
    let lead = |data: &ReportData| {
        let (h, _, _) = render_all(data);
        let answer = &h[h.find("<section id=\"answer\"").unwrap()..];
        let li = &answer[answer.find("<li>").unwrap() + 4..];
        li[..li.find("</li>").unwrap()].to_string()
    };
    // Each part's answer as its report opens it; seed 000's three factors, one shown.
    assert!(
        contents.contains(&format!("<div>{}</div>", lead(&parts[0]))),
        "{contents}"
    );
    assert!(
        contents.contains(&format!("<div>{}</div>", lead(&parts[1]))),
        "{contents}"
    );
    assert!(
        contents.contains("(and 2 other factors: see its Answer)"),
        "{contents}"
    );
    assert!(md.contains("<a id=\"e1p3\"></a>"));
}

/// A page of several reports: well formed, each part's sections there, nothing empty.
fn assert_structure_many(html: &str) {
    assert!(html.starts_with("<!DOCTYPE html>") && html.trim_end().ends_with("</html>"));
    assert_eq!(
        html.matches("<article class=\"part\"").count(),
        html.matches("↑ contents").count()
    );
    assert_eq!(html.matches("<svg").count(), html.matches("</svg>").count());
    assert!(!html.contains("<script"));
    assert!(!html.contains("NaN") && !html.contains("inf\""));
    let empty = empty_parts(html);
    assert!(empty.is_empty(), "{empty:#?}");
}

#[test]
fn the_host_summary_names_mpi_ranks_and_their_hosts() {
    let host = serde_json::json!({"mpi": {"ranks": 4, "hosts": [
        {"hostname": "a"}, {"hostname": "a"}, {"hostname": "b"}, {"hostname": "b"}
    ]}});
    let h = crate::model::HostSummary::from_host(&host);
    assert_eq!(
        h.ranks.as_deref(),
        Some("4 MPI ranks on 2 hosts: a ×2, b ×2")
    );
    assert_eq!(
        crate::model::HostSummary::from_host(&serde_json::json!({})).ranks,
        None
    );
}
