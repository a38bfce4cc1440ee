//! `examples/iozone-cache-rule.toml` (seed report 001) runs to completion as shipped, the
//! `cache-fit` check tells its configurations apart (before running and on every run), the
//! purged one's passes begin with nothing cached, and its HTML report draws the iozone
//! matrix and renders in a browser.

mod common;

use std::path::Path;

use common::Scratch;
use serde_json::Value;

fn ok(o: &std::process::Output) {
    assert!(
        o.status.success(),
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

fn fired(findings: &Value) -> bool {
    findings
        .as_array()
        .is_some_and(|a| a.iter().any(|f| f["check"] == "cache-fit"))
}

#[test]
#[ignore = "needs root: loop device, ext4, memory cgroup; chromium"]
fn the_cache_rule_example_runs_and_its_checks_explain_the_difference() {
    common::require_root();
    iolab_testkit::require_tool("chromium");
    let s = Scratch::new();
    let example =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/iozone-cache-rule.toml");
    let example = example.to_str().unwrap();

    // Before running: the file that fits is flagged, the large one is not.
    let o = s.run(&["check", example, "--json"]);
    let v: Value =
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", common::stderr(&o)));
    let text = v.to_string();
    assert!(text.contains("cache-fit"), "{text}");

    ok(&s.run(&["run", example]));
    let o = s.run(&["export", "1", "--format", "json"]);
    ok(&o);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let configs = v["configs"].as_array().unwrap();
    assert_eq!(configs.len(), 3);
    for c in configs {
        let label = c["label"].as_str().unwrap();
        let runs = c["runs"].as_array().unwrap();
        assert!(runs.len() >= 2, "{label}");
        for r in runs {
            assert_eq!(r["status"], "ok", "{label}");
            assert_eq!(
                fired(&r["findings"]),
                label == "file=fits",
                "cache-fit on a run of {label}"
            );
            let cached = |figure: &str| {
                r["flowops"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|f| f["name"] == figure)
                    .and_then(|f| f["extra"]["cached_bytes"].as_u64())
                    .unwrap_or_else(|| panic!("{label}: {figure}'s cached bytes"))
            };
            match label {
                // The re-read finds the file the read has just read.
                "file=fits" => assert_eq!(cached("reread"), 8 << 20, "{label}"),
                "file=fits-purged" => {
                    for figure in ["write", "rewrite", "read", "reread", "random_read"] {
                        assert_eq!(cached(figure), 0, "{label}: {figure}");
                    }
                }
                _ => {}
            }
        }
    }

    let html = s.path().join("report.html");
    let o = s
        .cmd()
        .args(["report", "1", "-o"])
        .arg(&html)
        .output()
        .unwrap();
    ok(&o);
    let text = std::fs::read_to_string(&html).unwrap();
    assert!(text.contains("id=\"iozone\""), "the matrix section");
    // write, rewrite, read, reread, random read, random write; without and with the purge.
    assert_eq!(text.matches("class=\"chart heatmap\"").count(), 12);
    assert!(
        text.contains("reread, purge remount"),
        "a grid of the purged runs"
    );
    common::chromium_renders(s.path(), &html, &["experiment", "findings", "iozone"]);
}
