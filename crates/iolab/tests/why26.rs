//! Issue 26's defects that had no test of the binary's own output, rootless (on a directory):
//! * `iolab check` on an experiment of many configurations repeated the same paragraph for
//!   each of them and printed a "nothing to report" line per clean configuration (183 of them
//!   for seed 004);
//! * seed 001's report summary gave one op/s over all six iozone tests (a write to the device
//!   and a re-read from memory in one number); only a root test of the example checked it;
//! * seed 000's bar charts cut their labels and drew them over each other
//!   (`journajournajourna…`) with no legend, so no bar or CDF line could be told apart.

mod common;

use common::{html_section, stderr, stdout, Scratch};

/// Twelve configurations: the six with a 1 s run are too short (`short-run` before running),
/// the six with 10 s have nothing to report. Direct reads keep `cache-fit` out of it.
#[test]
fn check_prints_each_message_once_and_one_line_for_the_clean_configurations() {
    let s = Scratch::new();
    let f = s.directory_experiment(
        "check.toml",
        r#"
name = "check once"
[factors]
bs = ["4k", "8k", "16k", "32k", "64k", "128k"]
t = ["1s", "10s"]
[sut]
target = { kind = "directory", path = "{target}" }
[workload]
micro = { access = "read", sync = "direct", bs = "${bs}", size = "16m", time = "${t}" }
[repetitions]
min = 2
max = 3
"#,
    );
    let o = s.run(&["check", f.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    // The explanation and its fix once, not once per configuration.
    assert_eq!(out.matches("[short-run]").count(), 1, "{out}");
    assert_eq!(out.matches("fewer than 5").count(), 1, "{out}");
    assert_eq!(out.matches("fix: ").count(), 1, "{out}");
    // One line for the clean ones, naming them by what they share.
    let clean: Vec<&str> = out
        .lines()
        .filter(|l| l.contains("nothing to report"))
        .collect();
    assert_eq!(clean.len(), 1, "{out}");
    assert!(clean[0].contains("t=10s"), "{out}");
    // The JSON still has every configuration's findings.
    let o = s.run(&["check", f.to_str().unwrap(), "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stdout(&o).matches("\"short-run\"").count(),
        6,
        "{}",
        stdout(&o)
    );
}

/// The seed-001 example's workload in small, on a directory: `iolab show` and the report's
/// summary give each iozone test's MiB/s on its own and no rate mixing all of them.
#[test]
fn iozone_summaries_give_each_tests_figure_not_one_rate_over_all() {
    let s = Scratch::new();
    let f = s.directory_experiment(
        "iozone.toml",
        r#"
name = "iozone summary"
[factors]
file = ["1m", "2m"]
[sut]
target = { kind = "directory", path = "{target}" }
[workload]
iozone = { tests = "write,read,random", size = "${file}", record = "64k" }
[repetitions]
min = 1
max = 1
metric = "read_mib_per_s"
[procedure]
drop_caches = false
"#,
    );
    let o = s.run(&["run", "-q", f.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = s.run(&["show"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let shown = stdout(&o);
    // The tables' headings (show spills what does not fit 120 columns into a second table).
    let head: String = shown
        .lines()
        .filter(|l| l.starts_with("configuration"))
        .collect::<Vec<_>>()
        .join("\n");
    assert!(!head.is_empty(), "{shown}");
    for figure in ["write (MiB/s)", "re-read (MiB/s)", "random write (MiB/s)"] {
        assert!(head.contains(figure), "no {figure} in {head}");
    }
    assert!(!head.contains("op/s"), "one rate over every test: {head}");

    let page = s.report_html();
    let summary = html_section(&page, "summary");
    for figure in ["Write (MiB/s)", "Re-read (MiB/s)", "Random write (MiB/s)"] {
        assert!(summary.contains(figure), "no {figure} in {summary}");
    }
    assert!(
        !summary.contains("op/s"),
        "one rate over every test: {summary}"
    );
}

/// The texts an SVG draws (a nested `<title>` is a tooltip, not drawn; tags are dropped).
fn drawn_texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .map(|t| {
            let body = &t[t.find('>').unwrap() + 1..t.find("</text>").unwrap()];
            let mut out = String::new();
            let mut rest = body;
            while let Some(open) = rest.find('<') {
                out.push_str(&rest[..open]);
                rest = &rest[open..];
                rest = match rest.strip_prefix("<title>") {
                    Some(r) => &r[r.find("</title>").unwrap() + "</title>".len()..],
                    None => &rest[rest.find('>').unwrap() + 1..],
                };
            }
            out.push_str(rest);
            out.trim().to_string()
        })
        .collect()
}

/// Twelve configurations of seed 000's shape (three factors, labels of 25 characters): every
/// bar of the report's bar charts and every line of its latency CDF is named by its whole
/// configuration label, drawn on the chart. The null engine makes the runs quick.
#[test]
fn every_bar_and_cdf_line_is_named_by_its_whole_configuration() {
    let s = Scratch::new();
    let f = s.directory_experiment(
        "bars.toml",
        r#"
name = "bars"
[factors]
bs = ["4k", "8k", "16k"]
size = ["1m", "2m"]
access = ["write", "read"]
[sut]
target = { kind = "directory", path = "{target}" }
[workload]
micro = { access = "${access}", sync = "normal", bs = "${bs}", size = "${size}", engine = "null" }
[repetitions]
min = 2
max = 2
[procedure]
drop_caches = false
"#,
    );
    let o = s.run(&["run", "-q", f.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let page = s.report_html();
    let mut labels = Vec::new();
    for bs in ["4k", "8k", "16k"] {
        for size in ["1m", "2m"] {
            for access in ["write", "read"] {
                labels.push(format!("bs={bs} size={size} access={access}"));
            }
        }
    }
    let section = |id: &str| html_section(&page, id);
    let bars: Vec<&str> = section("charts").split("<svg").skip(1).collect();
    assert!(bars.len() >= 2, "{}", section("charts"));
    let cdf: Vec<&str> = section("latency").split("<svg").skip(1).collect();
    assert_eq!(cdf.len(), 1, "one CDF of 12 lines");
    for svg in bars.iter().chain(&cdf) {
        let svg = &svg[..svg.find("</svg>").unwrap()];
        let texts = drawn_texts(svg);
        for l in &labels {
            assert!(texts.contains(l), "no {l:?} drawn in {texts:?}");
        }
    }
}
