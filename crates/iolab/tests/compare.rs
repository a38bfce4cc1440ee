//! `iolab compare` and `iolab import` end to end, without root: experiments on a directory
//! target (no filesystem of their own, no cache dropping), state in a temporary directory.
//!
//! The injected difference is exact by construction: a WML thread reads a 4 KiB file once per
//! event of a rate-limited event generator (`eventgen rate=$rate` + `flowop eventlimit`, a
//! virtual token bucket, docs/wml.md), so ops/s is the rate, 1000 or 900, to within a few
//! tenths of an op/s.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

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

struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    fn new() -> Scratch {
        Scratch {
            dir: tempfile::Builder::new()
                .prefix("iolab-compare-test")
                .tempdir()
                .unwrap(),
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn db(&self, name: &str) -> PathBuf {
        self.path().join(name)
    }

    fn data(&self) -> PathBuf {
        let d = self.path().join("data");
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn write(&self, name: &str, text: &str) -> PathBuf {
        let p = self.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    /// iolab with its state here and `--db`-less commands going to `db`.
    fn iolab(&self, db: &str, args: &[&str]) -> Output {
        common::iolab()
            .env("IOLAB_DB", self.db(db))
            .env("IOLAB_STATE_DIR", self.path().join("state"))
            .args(args)
            .output()
            .unwrap()
    }

    fn run_ok(&self, db: &str, args: &[&str]) -> String {
        let o = self.iolab(db, args);
        assert!(
            o.status.success(),
            "iolab {args:?}: {}\n{}",
            text(&o.stderr),
            text(&o.stdout)
        );
        text(&o.stdout)
    }

    fn compare_json(&self, db: &str, args: &[&str]) -> Value {
        let mut a = vec!["compare", "--json"];
        a.extend_from_slice(args);
        serde_json::from_str(&self.run_ok(db, &a)).unwrap()
    }

    /// A rate-limited WML experiment: `factors` is the `[factors]` body, `set` the
    /// `set = {…}` table body.
    fn rate_experiment(&self, name: &str, factors: &str, set: &str, seed: u64) -> PathBuf {
        self.write("rate.f", RATE_WML);
        self.write(
            name,
            &format!(
                r#"
name = "{name}"
seed = {seed}
[factors]
{factors}
[sut]
target = {{ kind = "directory", path = "{}" }}
[workload]
wml = "rate.f"
set = {{ {set} }}
time = "1s"
[repetitions]
min = 5
max = 5
[procedure]
drop_caches = false
"#,
                self.data().display()
            ),
        )
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn row<'a>(c: &'a Value, metric: &str, label: &str) -> &'a Value {
    let m = c["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["metric"] == metric)
        .unwrap_or_else(|| panic!("no metric {metric} in {c}"));
    m["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["label"] == label)
        .unwrap_or_else(|| panic!("no row {label} in {m}"))
}

/// Tests 1 and 3: rate 900 against rate 1000 is "slower" on ops/s with a ratio interval
/// around 0.9; `--fail-if-slower 5` fails (exit 1, naming it), `--fail-if-slower 20` passes.
#[test]
fn injected_difference_is_found_and_gates() {
    let s = Scratch::new();
    let f = s.rate_experiment("rate.toml", "rate = [1000, 900]", r#"rate = "${rate}""#, 1);
    s.run_ok("r.db", &["run", f.to_str().unwrap()]);

    let c = s.compare_json("r.db", &[]);
    assert_eq!(c["baseline"], "rate=1000");
    // The headline metric comes first, then the other defaults that were recorded.
    let names: Vec<&str> = c["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["metric"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["ops_per_s", "mib_per_s", "lat_mean_ns", "lat_p99_ns"]
    );
    let r = row(&c, "ops_per_s", "rate=900");
    assert_eq!(r["verdict"], "slower", "{r}");
    assert_eq!(r["n"], 5);
    let (lo, hi) = (
        r["ratio_ci"][0].as_f64().unwrap(),
        r["ratio_ci"][1].as_f64().unwrap(),
    );
    // The token bucket is exact up to the run's edges: allow 1% for them.
    assert!(lo < hi && hi < 1.0, "{r}");
    assert!(
        lo <= 0.909 && hi >= 0.891,
        "ratio CI [{lo}, {hi}] should be about 0.9"
    );
    assert!(r["p_adjusted"].as_f64().unwrap() < 0.05, "{r}");
    assert_eq!(r["converged"], true);
    assert_eq!(row(&c, "ops_per_s", "rate=1000")["verdict"], "baseline");

    // The table.
    let t = s.run_ok("r.db", &["compare"]);
    assert!(t.contains("Throughput (higher is better)"), "{t}");
    assert!(t.contains("p99 latency (lower is better)"), "{t}");
    assert!(
        t.lines()
            .any(|l| l.starts_with("rate=900") && l.contains("slower")),
        "{t}"
    );

    // The other configuration as baseline: rate=1000 is faster.
    let c = s.compare_json("r.db", &["--baseline", "rate=900", "--metric", "ops_per_s"]);
    assert_eq!(c["metrics"].as_array().unwrap().len(), 1);
    assert_eq!(row(&c, "ops_per_s", "rate=1000")["verdict"], "faster");

    // The gate.
    let o = s.iolab("r.db", &["compare", "--fail-if-slower", "5"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("rate=900"), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("slower"),
        "the table is still printed"
    );
    let o = s.iolab("r.db", &["compare", "--fail-if-slower", "20"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    // Against the slower one as baseline nothing regressed.
    let o = s.iolab(
        "r.db",
        &["compare", "--baseline", "rate=900", "--fail-if-slower", "5"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));

    // Bad input is a usage error.
    for args in [
        &["compare", "--metric", "no_such_metric"][..],
        &["compare", "--baseline", "rate=1"],
        &["compare", "42"],
        &["compare", "--fail-if-slower", "150"],
    ] {
        let o = s.iolab("r.db", args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o.stderr));
    }
}

/// Test 2: two configurations that differ only in a WML variable nothing uses. The verdict
/// may wrongly claim a difference with probability ≤ α = 5% (that is what α means); a second,
/// independently seeded experiment makes a spurious failure of this test ≤ 0.25%.
#[test]
fn identical_configurations_show_no_difference() {
    let s = Scratch::new();
    let mut verdicts = Vec::new();
    for seed in [1, 2] {
        let f = s.rate_experiment(
            &format!("same{seed}.toml"),
            r#"note = ["a", "b"]"#,
            r#"note = "${note}""#,
            seed,
        );
        let db = format!("same{seed}.db");
        s.run_ok(&db, &["run", f.to_str().unwrap()]);
        let c = s.compare_json(&db, &["--metric", "ops_per_s"]);
        let r = row(&c, "ops_per_s", "note=b").clone();
        if r["verdict"] == "no_significant_difference" {
            let ci = &r["ratio_ci"];
            assert!(ci[0].as_f64().unwrap() <= 1.0 && ci[1].as_f64().unwrap() >= 1.0);
            let t = s.run_ok(&db, &["compare", "--metric", "ops_per_s"]);
            assert!(t.contains("no significant difference"), "{t}");
            return;
        }
        verdicts.push(r);
    }
    panic!("a difference claimed in both seeded experiments: {verdicts:?}");
}

/// Test 4: the same experiment file run into two databases (two "machines"); importing one
/// into the other, then comparing across both experiments with `#ID:` labels.
#[test]
fn import_then_compare_across_experiments() {
    let s = Scratch::new();
    let f = s.write("null.toml", &common::null_experiment(&s.data()));
    s.run_ok("a.db", &["run", f.to_str().unwrap()]);
    s.run_ok("b.db", &["run", f.to_str().unwrap()]);

    let b = s.db("b.db");
    let out = s.run_ok("a.db", &["import", b.to_str().unwrap()]);
    assert!(
        out.contains("imported 1 experiment(s) (6 runs), skipped 0"),
        "{out}"
    );
    assert!(out.contains("imported #2 (was #1"), "{out}");
    // Again: nothing new; as JSON, stamped like every JSON document iolab writes.
    let json: serde_json::Value =
        serde_json::from_str(&s.run_ok("a.db", &["import", b.to_str().unwrap(), "--json"]))
            .unwrap();
    assert_eq!(json["schema"], "iolab.import/1");
    assert_eq!(json["skipped"].as_array().map(Vec::len), Some(1));
    let out = s.run_ok("a.db", &["import", b.to_str().unwrap()]);
    assert!(
        out.contains("imported 0 experiment(s) (0 runs), skipped 1"),
        "{out}"
    );
    // Importing a file into itself, or a missing file, is refused.
    let a = s.db("a.db");
    assert_eq!(
        s.iolab("a.db", &["import", a.to_str().unwrap()])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(
        s.iolab("a.db", &["import", "/nonexistent/x.db"])
            .status
            .code(),
        Some(2)
    );
    // A file that is no database: the library names the database setting, each command words
    // it — the file `iolab import` reads, or `--db`.
    let junk = s.write(
        "junk.db",
        "not a database at all, but long enough to be read as one",
    );
    let o = s.iolab("a.db", &["import", junk.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("is not an SQLite database"), "{err}");
    assert!(
        err.contains("hint: `iolab import` takes a results database written by iolab"),
        "{err}"
    );
    let o = s.iolab("junk.db", &["list"]);
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(
        err.contains("hint: --db takes a results database written by iolab"),
        "{err}"
    );

    let c = s.compare_json("a.db", &["1", "2"]);
    let labels: Vec<&str> = c["metrics"][0]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["#1:bs=4k", "#1:bs=8k", "#2:bs=4k", "#2:bs=8k"]);
    assert_eq!(c["baseline"], "#1:bs=4k");
    for r in c["metrics"][0]["rows"].as_array().unwrap() {
        assert_eq!(r["n"], 3);
        assert_ne!(r["verdict"], "too_few_runs");
    }
    // The same configuration on the other "machine" as baseline, by its displayed label.
    let c = s.compare_json("a.db", &["1", "2", "--baseline", "#2:bs=4k"]);
    assert_eq!(c["baseline"], "#2:bs=4k");
    // A bare label that names two configurations is refused.
    let o = s.iolab("a.db", &["compare", "1", "2", "--baseline", "bs=4k"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("error: --baseline: configuration label \"bs=4k\" is ambiguous"),
        "{}",
        text(&o.stderr)
    );
    let o = s.iolab("a.db", &["compare", "1", "--metric", "nope"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("error: --metric: no metric \"nope\""),
        "{}",
        text(&o.stderr)
    );
    // One experiment alone keeps its plain labels.
    let c = s.compare_json("a.db", &["2"]);
    assert_eq!(c["baseline"], "bs=4k");
    let t = s.run_ok("a.db", &["compare", "1", "2"]);
    assert!(t.contains("experiment: #1 null, #2 null"), "{t}");
}
