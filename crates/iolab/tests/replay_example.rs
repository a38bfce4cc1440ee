//! examples/replay-workdays.toml: its lists are what the generators make from the commands
//! its comment gives (the generators stay deterministic across versions), it loads without
//! errors, and (as root) it runs end to end and its report draws the time per day of both
//! configurations.

mod common;

use common::{examples, require_root, run, stderr, Scratch};

#[test]
fn the_example_lists_are_what_the_generators_make() {
    common::assert_example_lists_generated("replay-workdays.toml");
}

#[test]
fn the_example_loads() {
    let o = run(&[
        "check",
        examples().join("replay-workdays.toml").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // Without a remount the files stay in memory: iolab says so before running.
    let out = common::stdout(&o);
    assert!(
        out.contains("warning [cache-fit] on between=none:\n"),
        "{out}"
    );
    assert!(out.contains("between=remount: nothing to report"), "{out}");
}

#[test]
#[ignore = "needs root: loop device, mkfs, mount"]
fn the_example_runs_and_its_report_draws_the_days() {
    require_root();
    iolab_testkit::require_tool("mkfs.ext4");
    let _hang = iolab_testkit::timeout(900);
    let s = Scratch::new();
    // One run per configuration: the example's own repetitions take minutes.
    let text = std::fs::read_to_string(examples().join("replay-workdays.toml"))
        .unwrap()
        .replace("min = 3\nmax = 5", "min = 1\nmax = 1");
    let f = s.write("replay-workdays.toml", &text);
    common::copy_example_lists("replay", s.path());
    let o = s.run(&["run", f.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(s.mounts().is_empty() && s.loops().is_empty());
    let html = s.path().join("r.html");
    let o = s.run(&["report", "-o", html.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("Replay: time per day"));
    assert!(page.contains("between=remount") && page.contains("between=none"));
    common::chromium_renders(s.path(), &html, &["experiment", "summary", "replay"]);
    let e = s.latest();
    for c in e["configs"].as_array().unwrap() {
        let days = c["runs"][0]["flowops"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["kind"] == "replay_day")
            .count();
        assert_eq!(days, 7, "the install and six days");
    }
}
