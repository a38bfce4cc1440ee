//! examples/seed004-cache.toml and experiment stages: the example's lists are what the
//! generators make, the file loads with both stages checked, and (as root) both stages run —
//! the replay saves its trace, the sweep simulates exactly that trace — and `--resume` knows
//! that every stage is done.

mod common;

use std::path::Path;

use common::{examples, require_root, run, stderr, stdout, Scratch};

#[test]
fn the_example_lists_are_what_the_generators_make() {
    common::assert_example_lists_generated("seed004-cache.toml");
}

#[test]
fn the_example_loads_with_both_stages() {
    let o = run(&[
        "check",
        examples().join("seed004-cache.toml").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    // One line for the clean configurations, not one per configuration (183 of them).
    assert!(
        out.contains("all 183 configurations: nothing to report before running\n"),
        "{out}"
    );
    assert_eq!(out.lines().count(), 2, "{out}");
    assert!(out.contains("183 configurations, 0 findings"), "{out}");
}

#[test]
#[ignore = "needs root: loop device, mkfs, mount, blkio throttle, block tracing; chromium"]
fn the_example_runs_end_to_end_and_its_reports_draw_the_days_and_the_sweep() {
    require_root();
    iolab_testkit::require_tool("mkfs.ext4");
    iolab_testkit::require_tool("chromium");
    let _hang = iolab_testkit::timeout(1200);
    let s = Scratch::new();
    // Scaled for a test: one replay run, three associativities instead of thirteen.
    let mut text = std::fs::read_to_string(examples().join("seed004-cache.toml")).unwrap();
    for (from, to) in [
        ("min = 3\nmax = 5", "min = 1\nmax = 1"),
        (
            r#"assoc = ["2", "4", "8", "16", "32", "64", "128", "256", "512", "1024", "2048", "4096", "full"]"#,
            r#"assoc = ["2", "64", "full"]"#,
        ),
    ] {
        assert!(text.contains(from), "the example no longer has {from}");
        text = text.replace(from, to);
    }
    let f = s.write("seed004-cache.toml", &text);
    common::copy_example_lists("seed004", s.path());
    let o = s.run(&["run", f.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(s.mounts().is_empty() && s.loops().is_empty());
    let err = stderr(&o);
    assert!(
        err.contains("42 configurations, one run each: deterministic, miss_ratio is exact"),
        "{err}"
    );

    // Stage 1: the install and 20 days, each day's time stored.
    let o = s.run(&["export", "--format", "json", "1"]);
    let first: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let days = first["configs"][0]["runs"][0]["flowops"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == "replay_day")
        .count();
    assert_eq!(days, 21, "the install and 20 days");
    let days_html = s.path().join("days.html");
    let o = s.run(&["report", "1", "-o", days_html.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let days_page = std::fs::read_to_string(&days_html).unwrap();
    assert!(days_page.contains("Replay: time per day"));
    // At the section's width, a tick per day.
    let days_section = &days_page[days_page.find("id=\"replay\"").unwrap()..];
    assert!(!days_section[..days_section.find("</svg>").unwrap()].contains("class=\"charts\""));
    assert!(days_section.contains(">20</text>"));
    assert!(days_page.contains("Miss-ratio curves of the saved traces"));

    // Stage 2: every configuration simulated once, exactly; the report draws the sweep.
    let sweep = s.latest();
    assert_eq!(sweep["configs"].as_array().unwrap().len(), 42);
    let html = s.path().join("sweep.html");
    // Stage 2 alone (without an id the report has both stages: tests/report_stages.rs).
    let o = s.run(&["report", "2", "-o", html.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("seed 004: the cache swept by simulation"));
    // The sweep is drawn by factor: miss ratio and service time against the associativity.
    assert!(page.contains("id=\"sweep\""), "no charts by factor");
    assert!(
        page.contains("Miss ratio by assoc"),
        "no miss ratio by assoc"
    );
    // Durations carry their unit on the axis (`2 min`), not in the title.
    assert!(page.contains("Estimated service time by assoc"));
    // A simulation's speed is not one of its headline results.
    assert!(!page.contains("Throughput (op/s) by assoc"));
    // The traffic, the dirty evictions and the metadata memory are drawn too, and what the
    // estimate charges write-back for is said.
    for title in [
        "Origin writes by assoc",
        "Dirty evictions by assoc",
        "Metadata memory by assoc",
    ] {
        assert!(page.contains(title), "no {title}");
    }
    assert!(page.contains("id=\"cachesim\"") && page.contains("wrote dirty blocks back"));
    common::chromium_renders(s.path(), &html, &["experiment", "summary", "charts"]);
}

/// A two-stage file small enough for a test: a direct write traced on a loop device, then
/// simulations of that trace.
const STAGED: &str = r#"
name = "write"
[sut]
target = { kind = "loop_image", size = "64M" }
fs = { kind = "ext4" }
[workload]
micro = { access = "write", sync = "direct", bs = "64k", size = "8m" }
[repetitions]
min = 1
max = 1
[procedure]
save_block_trace = true

[[then]]
name = "sweep"
[then.factors]
assoc = ["2", "full"]
[then.workload]
cachesim = { trace = "${previous.trace}", size = "1m", block_size = "4k", assoc = "${assoc}" }
"#;

#[test]
#[ignore = "needs root: loop device, mkfs, mount, block tracing"]
fn stages_run_in_order_on_the_trace_the_first_saved() {
    require_root();
    iolab_testkit::require_tool("mkfs.ext4");
    let _hang = iolab_testkit::timeout(600);
    let s = Scratch::new();
    let f = s.write("staged.toml", STAGED);
    let o = s.run(&["run", f.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("stage 1 of 2: write"), "{err}");
    assert!(err.contains("stage 2 of 2: sweep"), "{err}");
    assert!(s.mounts().is_empty() && s.loops().is_empty());

    // The sweep (the newest experiment) simulated the trace the write run saved.
    let sweep = s.latest();
    assert_eq!(sweep["experiment"]["spec"]["stage"], 2, "{sweep}");
    assert_eq!(sweep["experiment"]["name"], "sweep");
    let trace = sweep["experiment"]["spec"]["configs"][0]["workload"]["cachesim"]["trace"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        trace.ends_with(".iolt") && Path::new(&trace).exists(),
        "{trace}"
    );
    let o = s.run(&["export", "--format", "json", "1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let first: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(first["experiment"]["name"], "write");
    let saved = first["configs"][0]["runs"][0]["flowops"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == "trace")
        .map(|f| f["extra"]["saved"]["path"].as_str().unwrap().to_string());
    assert_eq!(saved.as_deref(), Some(trace.as_str()));
    // 8 MiB written once in 4 KiB blocks: at least 2048 block requests and as many write
    // misses in a 1 MiB cache (the filesystem's own metadata writes come on top).
    for c in sweep["configs"].as_array().unwrap() {
        let m = &c["runs"][0]["metrics"];
        let get = |name: &str| {
            m.as_array()
                .unwrap()
                .iter()
                .find(|x| x["name"] == name)
                .and_then(|x| x["value"].as_f64())
                .unwrap_or_else(|| panic!("no {name} in {m}"))
        };
        assert!(get("ops") >= 2048.0, "{m}");
        assert!(get("write_misses") >= 2048.0, "{m}");
        let outcome = c["outcome"]["note"].as_str().unwrap_or_default();
        assert!(outcome.starts_with("deterministic: miss_ratio"), "{c}");
    }

    // Everything is done: --resume has nothing to do, and says so.
    let o = s.run(&["run", f.to_str().unwrap(), "--resume"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("done before, as experiment 1"), "{err}");
    assert!(err.contains("nothing to resume: every stage"), "{err}");
}
