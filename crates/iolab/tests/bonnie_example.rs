//! examples/bonnie.toml runs to completion as root, as shipped, and its HTML report shows
//! bonnie++'s tables (rendered by a headless Chromium with the network blocked).

mod common;

use std::path::Path;

use common::{stderr, Scratch};

#[test]
#[ignore = "needs root: the example's loop images, ext4 and the page-cache cap; chromium"]
fn the_bonnie_example_runs_and_its_report_draws_bonnies_table() {
    common::require_root();
    iolab_testkit::require_tool("chromium");
    let s = Scratch::new();
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/bonnie.toml");
    let o = s.run(&["run", example.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = s.latest();
    let configs = v["configs"].as_array().unwrap();
    assert_eq!(configs.len(), 2);
    for c in configs {
        for r in c["runs"].as_array().unwrap() {
            assert_eq!(r["status"], "ok", "{}", c["label"]);
            let names: Vec<&str> = r["metrics"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|m| m["name"].as_str())
                .collect();
            for m in [
                "putc_mib_per_s",
                "seeks_per_s",
                "ran_del_per_s",
                "rewrite_block_cpu_pct",
            ] {
                assert!(names.contains(&m), "{m} in {names:?}");
            }
            let findings = r["findings"].as_array().unwrap();
            assert!(
                !findings.iter().any(|f| f["check"] == "cache-fit"),
                "the file is more than three times the cache cap: {findings:?}"
            );
        }
    }
    let html = s.path().join("bonnie.html");
    let o = s.cmd().args(["report", "-o"]).arg(&html).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&html).unwrap();
    assert!(text.contains("id=\"bonnie\""), "a bonnie section");
    for h in [
        "Sequential Output",
        "Sequential Input",
        "Random Create",
        "%CP",
    ] {
        assert!(text.contains(h), "{h}");
    }
    for l in ["journal=ordered", "journal=journal"] {
        assert!(text.contains(l), "{l}");
    }
    assert!(!text.contains(">+++++<"), "no +++++ in a cell");
    let dom = common::chromium_dom(s.path(), &html);
    assert!(
        dom.contains("id=\"bonnie\""),
        "the browser drew the bonnie section"
    );
}
