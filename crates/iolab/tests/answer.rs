//! The answer first: `iolab show`, `iolab compare` and the report open with one sentence per
//! factor and headline metric — each level against the baseline level, as a ratio with its
//! 95% interval and a verdict.
//!
//! - A known effect: micro reads of 64 KiB and 4 KiB blocks from a tmpfs (root: iolab mounts
//!   it). From a tmpfs a read is a copy from the page cache, so a 4 KiB read completes many
//!   times sooner than a 64 KiB one: the verdict on the p99 latency names 4k faster, its
//!   interval away from 1. (The bandwidth is no good test: both copy at memory speed, and
//!   the throughput of a 2-CPU machine shared with compilers varies from run to run by more
//!   than the difference; a tail latency of one read does not.)
//! - No effect: a rate-limited WML workload (an event generator's virtual token bucket, as in
//!   tests/compare.rs) whose ops/s is the rate to within a few tenths, with two levels of a
//!   variable nothing uses: "no effect within ±x %".
//! - A seed-000-like database (journal mode × readers, latencies in seconds, one noisy
//!   configuration), written with the store's API: `compare` shows per-factor ratios with
//!   positive intervals in human units.

mod common;

use std::path::{Path, PathBuf};

use iolab_store::{
    Metric, NewConfig, NewExperiment, NewRun, RunRecord, RunStatus, Store, Timestamp,
};
use serde_json::{json, Value};

use common::Scratch;

/// What these tests ask of the scratch space besides running iolab.
trait Answering {
    fn ok(&self, args: &[&str]) -> String;
    fn answers_everywhere(&self) -> (String, String, String);
}

impl Answering for Scratch {
    fn ok(&self, args: &[&str]) -> String {
        let o = self.run(args);
        assert!(
            o.status.success(),
            "iolab {args:?}: {}\n{}",
            common::stderr(&o),
            common::stdout(&o)
        );
        common::stdout(&o)
    }

    /// The answer's sentences of `iolab show`, `iolab compare` and both reports' first
    /// section, each checked to come first.
    fn answers_everywhere(&self) -> (String, String, String) {
        let show = self.ok(&["show"]);
        let compare = self.ok(&["compare"]);
        let html_path = self.path().join("r.html");
        let md_path = self.path().join("r.md");
        self.ok(&["report", "-o", html_path.to_str().unwrap()]);
        self.ok(&["report", "-o", md_path.to_str().unwrap()]);
        let html = std::fs::read_to_string(html_path).unwrap();
        let md = std::fs::read_to_string(md_path).unwrap();
        // The report's first section is the answer, before the findings and the charts.
        let first = html.find("<section").expect("a section");
        assert!(
            html[first..].starts_with("<section id=\"answer\"><h2>Answer</h2>"),
            "{html}"
        );
        let first = md.find("\n## ").expect("a section");
        assert!(md[first..].starts_with("\n## Answer\n"), "{md}");
        // show: right after the experiment's two lines; compare: after its one.
        assert!(
            show.lines().nth(2).unwrap().starts_with("answer ("),
            "{show}"
        );
        assert!(
            compare.lines().nth(1).unwrap().starts_with("answer ("),
            "{compare}"
        );
        (show, compare, html + &md)
    }
}

fn micro_experiment(dir: &Scratch) -> PathBuf {
    dir.write(
        "bs.toml",
        r#"
name = "block size"
seed = 1
[factors]
bs = ["64k", "4k"]
[sut]
target = { kind = "tmpfs", size = "64M" }
[workload]
micro = { access = "read", bs = "${bs}", size = "16m", time = "300ms", loops = 100000 }
[repetitions]
min = 5
max = 5
[procedure]
drop_caches = false
"#,
    )
}

#[test]
#[ignore = "needs root: iolab mounts a tmpfs"]
fn a_known_effect_names_the_faster_level_with_an_interval_excluding_one() {
    iolab_testkit::require_root();
    let _hang = iolab_testkit::timeout(300);
    let s = Scratch::new();
    let f = micro_experiment(&s);
    s.ok(&["run", f.to_str().unwrap()]);
    let (show, compare, report) = s.answers_everywhere();
    for text in [&show, &compare, &report] {
        let line = text
            .lines()
            .find(|l| l.contains("p99 latency: bs=4k "))
            .unwrap_or_else(|| panic!("no p99 latency answer in {text}"));
        assert!(line.contains(" faster than bs=64k"), "{line}");
    }
    // Structurally: the interval of the ratio 4k/64k of latencies lies below 1.
    let j: Value = serde_json::from_str(&s.ok(&["compare", "--json"])).unwrap();
    let bs = &j["answers"]["factors"][0];
    assert_eq!(bs["factor"], "bs");
    assert_eq!(bs["baseline"], "64k");
    let p99 = bs["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["metric"] == "lat_p99_ns")
        .expect("p99 latency");
    let l = &p99["levels"][0];
    assert_eq!(l["level"], "4k");
    assert_eq!(l["effect"], "faster");
    let ci = &l["ratio_ci"];
    assert!(ci[1].as_f64().unwrap() < 1.0, "{l}");
    // `show --json` carries the same answers.
    let j: Value = serde_json::from_str(&s.ok(&["show", "--json"])).unwrap();
    assert_eq!(j["answers"]["factors"][0]["factor"], "bs");
    // The flat table stays: every configuration against the first one.
    let flat = s.ok(&["compare", "--flat"]);
    assert!(!flat.contains("answer ("), "{flat}");
    assert!(
        flat.lines()
            .any(|l| l.starts_with("bs=4k") && l.contains("faster")),
        "{flat}"
    );
}

const RATE_WML: &str = "\
set $dir=/tmp
set $rate=1000
set $note=unused
define file name=f1,path=$dir,size=4k,prealloc
define process name=p,instances=1
{
  thread name=t,memsize=1m,instances=1
  {
    flowop read name=r,filename=f1,iosize=4k
    flowop eventlimit name=lim
  }
}
eventgen rate=$rate
";

#[test]
fn two_identical_levels_are_no_effect_within_a_few_percent() {
    let _hang = iolab_testkit::timeout(300);
    let s = Scratch::new();
    let data = s.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    s.write("rate.f", RATE_WML);
    let f = s.write(
        "same.toml",
        &format!(
            r#"
name = "same"
seed = 1
[factors]
note = ["a", "b"]
[sut]
target = {{ kind = "directory", path = "{}" }}
[workload]
wml = "rate.f"
set = {{ note = "${{note}}" }}
time = "1s"
[repetitions]
min = 3
max = 3
[procedure]
drop_caches = false
"#,
            data.display()
        ),
    );
    s.ok(&["run", f.to_str().unwrap()]);
    let (show, compare, report) = s.answers_everywhere();
    for text in [&show, &compare, &report] {
        let line = text
            .lines()
            .find(|l| l.contains("Throughput: note=b vs note=a: "))
            .unwrap_or_else(|| panic!("no throughput answer in {text}"));
        assert!(line.contains("no effect within ±"), "{line}");
    }
    let j: Value = serde_json::from_str(&s.ok(&["compare", "--json"])).unwrap();
    let ops = &j["answers"]["factors"][0]["metrics"][0];
    assert_eq!(ops["metric"], "ops_per_s");
    let l = &ops["levels"][0];
    assert_eq!(l["effect"], "no_effect", "{l}");
    let w = l["within_pct"].as_f64().unwrap();
    assert!(
        w <= j["answers"]["no_effect_band_pct"].as_f64().unwrap(),
        "{l}"
    );
}

/// A seed-000-like database: journal mode × readers, each configuration 3 runs, latencies in
/// nanoseconds (3.3 s at 100 readers), one configuration far too noisy to tell.
fn seed000_like(db: &Path) {
    let mut store = Store::open(db).unwrap();
    let journals = ["journal", "ordered", "writeback"];
    let readers = [1, 100];
    let exp = store
        .create_experiment(&NewExperiment {
            name: "ext4 journal modes".into(),
            source: "ext4-journal-modes.toml".into(),
            spec: json!({"factors": [
                {"name": "journal", "levels": journals},
                {"name": "readers", "levels": readers},
            ]}),
            seed: 1,
            created_at: Timestamp::now(),
            iolab_version: "0".into(),
            host: json!({}),
        })
        .unwrap();
    for (j, journal) in journals.iter().enumerate() {
        for r in readers {
            let cfg = store
                .add_config(&NewConfig {
                    experiment: exp,
                    label: format!("journal={journal} readers={r}"),
                    factors: json!({"journal": journal, "readers": r})
                        .as_object()
                        .unwrap()
                        .clone(),
                })
                .unwrap();
            // Latency: 1 ms with one reader, 3.3 s with 100; the journal mode changes nothing
            // but the noise, and writeback at 100 readers is all over the place.
            let lat: [f64; 3] = match (j, r) {
                (_, 1) => [0.99e6, 1.0e6, 1.01e6],
                (2, 100) => [2.786e9, 5.315e9, 7.844e9],
                _ => [3.30e9, 3.326e9, 3.35e9],
            };
            for (rep, &l) in lat.iter().enumerate() {
                let mut run = RunRecord::new(NewRun {
                    config: cfg,
                    repetition: rep as u32,
                    seed: 1,
                    status: RunStatus::Ok,
                    error: None,
                    started_at: Timestamp::now(),
                    ended_at: Timestamp::now(),
                    elapsed_ns: 10_000_000_000,
                    environment: json!({}),
                });
                run.metrics.push(Metric::new("lat_p99_ns", l, "ns"));
                run.metrics
                    .push(Metric::new("ops_per_s", 1e9 / l * r as f64, "op/s"));
                store.record_run(&run).unwrap();
            }
        }
    }
}

#[test]
fn compare_on_a_seed000_like_database_shows_positive_ratios_in_human_units() {
    let s = Scratch::new();
    seed000_like(&s.db());
    let out = s.ok(&["compare"]);
    // Per factor, within the other.
    assert!(
        out.contains(
            "factor journal (baseline journal=journal, within each combination of readers):"
        ),
        "{out}"
    );
    assert!(
        out.contains("factor readers (baseline readers=1, within each combination of journal):"),
        "{out}"
    );
    // Human units, no exponent, no negative bound.
    assert!(out.contains("3.33 s ± "), "{out}");
    assert!(!out.contains("e9") && !out.contains("e6"), "{out}");
    assert!(!out.contains("[-"), "{out}");
    // The noisy configuration is never "no significant difference" on a ratio spanning 10×.
    let noisy = out
        .lines()
        .find(|l| l.starts_with("journal=writeback readers=100") && l.contains(" s ± "))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(!noisy.contains("no significant difference"), "{noisy}");
    // The answer: readers=100 is slower by about 3,300× at each journal mode.
    assert!(
        out.lines()
            .any(|l| l.contains("p99 latency: readers=100 ")
                && l.contains(" slower than readers=1 ")),
        "{out}"
    );
    let j: Value = serde_json::from_str(&s.ok(&["compare", "--json"])).unwrap();
    for f in j["answers"]["factors"].as_array().unwrap() {
        for m in f["metrics"].as_array().unwrap() {
            for l in m["levels"].as_array().unwrap() {
                for c in l["cells"].as_array().unwrap() {
                    let lo = c["ratio_ci"][0].as_f64().unwrap();
                    assert!(lo > 0.0, "{c}");
                }
            }
        }
    }
    // The flat table too.
    let flat = s.ok(&["compare", "--flat"]);
    assert!(!flat.contains("[-") && !flat.contains("e9"), "{flat}");
}
