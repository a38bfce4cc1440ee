//! Whole reports from real (in-memory) databases, for the tests of this crate and of the
//! sections other crates contribute.

use iolab_store::*;
use serde_json::json;

use crate::*;

/// A database in memory with an experiment of `configs` (labels).
pub fn store_with(configs: &[&str]) -> (Store, ExperimentId, Vec<ConfigId>) {
    let mut store = Store::open_in_memory().unwrap();
    let exp = store
        .create_experiment(&NewExperiment {
            name: "<b>x</b> & \"y\"".into(),
            source: "exp.toml".into(),
            spec: json!({"note": "<script>alert(1)</script>"}),
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
    (store, exp, ids)
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

/// The sections every report has, and a well-formed, escaped document.
pub fn assert_structure(html: &str) {
    for id in [
        "experiment",
        "findings",
        "summary",
        "charts",
        "timeseries",
        "latency",
        "flowops",
    ] {
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
}
