//! `iolab report` of several experiments: the stages of one experiment file, run for real on
//! a directory target (no root), reported as one HTML page, one Markdown document and one
//! `iolab.reports/1` document — by default and by ids.

mod common;

use common::{assert_clean_failure, Scratch};
use iolab_report::testing::{element_ids, id_problems};
use serde_json::Value;

/// Stage 1: a micro random-write test across sync modes; stage 2: a micro read across
/// block sizes. Two repetitions each, small files: a second or so.
const TWO_STAGES: &str = r#"
name = "sync modes"
seed = 5
[factors]
sync = ["normal", "fdatasync"]
[sut]
target = { kind = "directory", path = "{target}" }
[workload]
micro = { access = "randwrite", sync = "${sync}", bs = "4k", size = "4m" }
[repetitions]
min = 2
max = 2
[procedure]
drop_caches = false

[[then]]
name = "block sizes"
[then.factors]
bs = ["4k", "64k"]
[then.sut]
target = { kind = "directory", path = "{target}" }
[then.workload]
micro = { access = "read", bs = "${bs}", size = "4m" }
[then.repetitions]
min = 2
max = 2
[then.procedure]
drop_caches = false
"#;

/// The same file without its second stage, under another name.
fn one_stage() -> String {
    TWO_STAGES[..TWO_STAGES.find("[[then]]").unwrap()].replace("sync modes", "alone")
}

fn report(s: &Scratch, args: &[&str], file: &str) -> String {
    let out = s.path().join(file);
    let mut all = vec!["report"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["-o", out.to_str().unwrap()]);
    let o = s.run(&all);
    assert!(o.status.success(), "{}", common::stderr(&o));
    std::fs::read_to_string(out).unwrap()
}

#[test]
fn the_stages_of_a_file_in_one_report() {
    let s = Scratch::new();
    let file = s.directory_experiment("two.toml", TWO_STAGES);
    let o = s.run(&["run", file.to_str().unwrap()]);
    assert!(o.status.success(), "{}", common::stderr(&o));

    // By default: the newest experiment (stage 2) and stage 1 before it.
    let html = report(&s, &[], "r.html");
    assert_eq!(id_problems(&html), Vec::<String>::new());
    let ids = element_ids(&html);
    for id in [
        "contents",
        "e1",
        "e1-summary",
        "e2",
        "e2-summary",
        "e2-answer",
    ] {
        assert!(ids.contains(&id), "no #{id} in {ids:?}");
    }
    // The first screen: the file's name and a row per stage linking to its part.
    let contents = &html[html.find("<header id=\"contents\">").unwrap()..];
    let contents = &contents[..contents.find("</header>").unwrap()];
    assert!(contents.contains("<h1>two.toml</h1>"), "{contents}");
    assert!(contents.contains("2 stages of <code>"), "{contents}");
    for (anchor, name, stage) in [("e1", "sync modes", 1), ("e2", "block sizes", 2)] {
        assert!(
            contents.contains(&format!("<a href=\"#{anchor}\">{name}</a>")),
            "{contents}"
        );
        assert!(contents.contains(&format!("stage {stage} · experiment {stage}")));
    }
    assert_eq!(contents.matches("<code>micro</code>").count(), 2);
    assert!(contents.contains(">2 / 4</td>"), "{contents}");
    // Each stage's answer on its stopping metric, as its own report opens it (its verdict is
    // the data's: with 2 runs on a busy machine it may be "too few runs to tell").
    let answers: Vec<&str> = contents.split("<td class=\"answer\">").skip(1).collect();
    assert_eq!(answers.len(), 2, "{contents}");
    assert!(
        answers[0].contains("sync=fdatasync") && answers[0].contains("sync=normal"),
        "{contents}"
    );
    assert!(
        answers[1].contains("bs=64k") && answers[1].contains("bs=4k"),
        "{contents}"
    );
    // Both reports whole below, their headings a level down.
    assert!(html.contains("<h2>sync modes</h2>") && html.contains("<h2>block sizes</h2>"));
    assert_eq!(html.matches("<h3>Summary</h3>").count(), 2);
    assert!(html.find(" id=\"e1-summary\"") < html.find(" id=\"e2-summary\""));

    // The same two by id: the same page.
    assert_eq!(report(&s, &["1", "2"], "by-id.html"), html);

    let md = report(&s, &[], "r.md");
    assert!(md.starts_with("# two.toml\n"), "{md}");
    assert!(md.contains("| [block sizes](#e2) | stage 2 · experiment 2 | micro | 2 / 4 |"));
    assert_eq!(md.matches("\n### Summary\n").count(), 2, "{md}");

    let v: Value = serde_json::from_str(&report(&s, &["--format", "json"], "r.txt")).unwrap();
    assert_eq!(v["schema"], "iolab.reports/1");
    let parts = v["experiments"].as_array().unwrap();
    assert_eq!(parts.len(), 2);
    for (p, (id, stage)) in parts.iter().zip([(1, Value::Null), (2, Value::from(2))]) {
        assert_eq!(p["schema"], "iolab.report/1");
        assert_eq!(p["experiment"]["id"], id);
        assert_eq!(p["experiment"]["spec"]["stage"], stage);
        assert_eq!(p["configs"].as_array().unwrap().len(), 2);
    }

    // One id: that experiment's report alone, as before.
    let one = report(&s, &["2"], "one.html");
    assert!(one.contains("<header id=\"experiment\"><h1>block sizes</h1>"));
    assert!(!one.contains("id=\"contents\"") && !one.contains("id=\"e2-"));
    assert!(one.contains("<section id=\"summary\"><h2>Summary</h2>"));
    let v: Value =
        serde_json::from_str(&report(&s, &["2", "--format", "json"], "one.txt")).unwrap();
    assert_eq!(v["schema"], "iolab.report/1");
    assert_eq!(v["experiment"]["name"], "block sizes");

    // Bad ids: exit 2, the id named, nothing written.
    let bad = s.path().join("bad.html");
    let bad_arg = bad.to_str().unwrap();
    for (args, needle) in [
        (vec!["1", "9"], "9"),
        (vec!["1", "no-such-uuid"], "no experiment \"no-such-uuid\""),
        (
            vec!["2", "1", "2"],
            "experiment 2 is named twice (ID 1 and ID 3",
        ),
    ] {
        let mut all = vec!["report"];
        all.extend(args);
        all.extend(["-o", bad_arg]);
        assert_clean_failure(&s.run(&all), 2, needle);
        assert!(!bad.exists());
    }

    // A file without stages run after it: the default is that experiment alone; any
    // experiments by id, in the order given.
    let alone = s.directory_experiment("alone.toml", &one_stage());
    let o = s.run(&["run", alone.to_str().unwrap()]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let v: Value = serde_json::from_str(&report(&s, &["--format", "json"], "3.txt")).unwrap();
    assert_eq!(v["schema"], "iolab.report/1");
    assert_eq!(v["experiment"]["name"], "alone");
    let html = report(&s, &["3", "1"], "mixed.html");
    assert_eq!(id_problems(&html), Vec::<String>::new());
    assert!(html.contains("<h1>2 experiments</h1>"));
    assert!(html.find(" id=\"e3\"") < html.find(" id=\"e1\""));
    assert!(html.contains("experiment 3</div>"));
}
