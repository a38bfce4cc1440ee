//! What commands print: nothing panics when the reader of stdout has gone (`| head -1`),
//! every JSON document carries its stamp, and `iolab show` of a single run says what it is.
//! Rootless: micro runs on a directory in /var/tmp.

mod common;

use std::path::PathBuf;
use std::process::{Output, Stdio};

use common::{stderr, stdout, Scratch};
use serde_json::Value;

/// Runs `args` with stdout a pipe whose reader is already gone: what `| head -1` does to a
/// writer once head has its line. Every write to it fails with EPIPE.
fn with_closed_stdout(s: &Scratch, args: &[&str]) -> Output {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    s.cmd()
        .args(args)
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .unwrap()
}

/// A two-configuration experiment on a directory (no root), for `iolab check`.
fn experiment_file(s: &Scratch) -> PathBuf {
    let target = s.path().join("target");
    std::fs::create_dir_all(&target).unwrap();
    s.write(
        "exp.toml",
        &format!(
            r#"
name = "pipe"
[factors]
sync = ["normal", "fdatasync"]
[sut]
target = {{ kind = "directory", path = "{}" }}
[workload]
micro = {{ access = "randwrite", sync = "${{sync}}", bs = "4k", size = "8m" }}
[repetitions]
min = 2
max = 2
[procedure]
drop_caches = false
"#,
            target.display()
        ),
    )
}

/// One stored micro run of 1 MiB; returns its directory.
fn micro(s: &Scratch) -> PathBuf {
    let dir = s.path().join("micro");
    std::fs::create_dir_all(&dir).unwrap();
    // 300 ms, not the few milliseconds 1 MiB takes: the system summary's CPU shares need
    // /proc/stat's clock ticks (10 ms) to advance during the run, and short-run still fires.
    let o = s.run(&[
        "micro",
        "--dir",
        dir.to_str().unwrap(),
        "--size",
        "1m",
        "--loops",
        "1000000",
        "--time",
        "300ms",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    dir
}

#[track_caller]
fn survived(o: &Output, what: &str) {
    let err = stderr(o);
    assert!(
        o.status.success() && !err.contains("panicked"),
        "iolab {what} | head -1: {:?}\n{err}",
        o.status
    );
}

/// `iolab workloads | head -1`, `iolab check FILE | head -1` and the other printing commands
/// exit normally when head has gone: a closed pipe is the reader's choice, not an error
/// (`println!` panicked on it).
#[test]
fn every_command_survives_a_closed_stdout() {
    let s = Scratch::new();
    let file = experiment_file(&s);
    let file = file.to_str().unwrap();
    for args in [
        vec!["workloads"],
        vec!["check", file],
        vec!["check", file, "--json"],
    ] {
        survived(&with_closed_stdout(&s, &args), &args.join(" "));
    }
    micro(&s);
    for args in [
        vec!["list"],
        vec!["list", "--json"],
        vec!["show"],
        vec!["show", "--json"],
        vec!["export"],
        vec!["export", "--format", "csv"],
        vec!["compare"],
        vec!["compare", "--json"],
    ] {
        survived(&with_closed_stdout(&s, &args), &args.join(" "));
    }
}

/// Every `--json` document (and `export --format json`, `report -o x.json`) starts with its
/// `schema` stamp.
#[test]
fn every_json_document_is_stamped() {
    let s = Scratch::new();
    let file = experiment_file(&s);
    micro(&s);
    let report = s.path().join("r.json");
    let cases: [(Vec<&str>, &str); 6] = [
        (vec!["check", file.to_str().unwrap(), "--json"], "check"),
        (vec!["list", "--json"], "list"),
        (vec!["show", "--json"], "show"),
        (vec!["export"], "export"),
        (vec!["compare", "--json"], "compare"),
        (vec!["report", "-o", report.to_str().unwrap()], "report"),
    ];
    for (args, kind) in cases {
        let o = s.run(&args);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        let text = if kind == "report" {
            std::fs::read_to_string(&report).unwrap()
        } else {
            stdout(&o)
        };
        assert!(
            text.starts_with(&format!("{{\n  \"schema\": \"iolab.{kind}/1\",\n")),
            "{args:?}: {}",
            &text[..text.len().min(200)]
        );
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["iolab_version"], env!("CARGO_PKG_VERSION"), "{args:?}");
    }
    let check: Value =
        serde_json::from_slice(&s.run(&["check", file.to_str().unwrap(), "--json"]).stdout)
            .unwrap();
    let labels: Vec<&str> = check["configs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["sync=normal", "sync=fdatasync"]);
}

/// `iolab show` of a single micro run: plain values (no "(n=1)" on each), "done (single
/// run)" rather than "not finished", no interval claimed. Its JSON has the findings, per run
/// and per configuration, and the system summary the table prints.
#[test]
fn show_of_a_single_run_says_single_run_and_has_the_findings() {
    let s = Scratch::new();
    micro(&s);
    let o = s.run(&["show"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(!text.contains("(n=1)"), "{text}");
    assert!(!text.contains("not finished"), "{text}");
    assert!(!text.contains('±'), "no interval from one value: {text}");
    let row = text
        .lines()
        .find(|l| l.starts_with("default "))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(row.ends_with("done (single run)"), "{row}");
    // A 1 MiB run lasts milliseconds: short-run fires on it, and the table says so.
    assert!(text.contains("warning short-run ×1"), "{text}");

    let v = s.show();
    assert_eq!(v["schema"], "iolab.show/1");
    assert_eq!(v["single_run"], true);
    let config = &v["configs"][0];
    assert_eq!(config["state"], "done (single run)");
    assert_eq!(config["metrics"]["ops_per_s"]["n"], 1);
    assert_eq!(
        config["metrics"]["ops_per_s"]["ci95_half_width"],
        Value::Null
    );
    let checks: Vec<&str> = config["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["check"].as_str().unwrap())
        .collect();
    assert!(checks.contains(&"short-run"), "{checks:?}");
    assert!(
        config["findings"].is_array(),
        "configuration-level findings"
    );
    let run = &v["runs"][0];
    let found: Vec<&str> = run["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["check"].as_str().unwrap())
        .collect();
    assert!(found.contains(&"short-run"), "{found:?}");
    assert!(run["findings"][0]["explanation"].is_string());
    assert!(
        config["system"]["cpu.usr_pct"].is_number(),
        "{}",
        config["system"]
    );
}
