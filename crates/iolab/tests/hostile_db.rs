//! A results database from another host is input like any other: its names may hold HTML
//! and terminal control sequences, its numbers may be the largest there are, and its schema
//! may not be iolab's. `iolab import` copies it or refuses it with a clear error;
//! `iolab show` and `compare` print control characters escaped, never raw to the terminal;
//! `iolab report` escapes everything in its HTML.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::{stderr, stdout, Scratch};
use rusqlite::{params, Connection};

/// A script tag, an attribute breaker and terminal sequences (clear the screen, set the
/// window title), a NUL and a C1 control (CSI).
const EVIL: &str = "<script>alert(1)</script>\"'><img src=x onerror=alert(2)>\u{1b}[2J\u{1b}]0;pwned\u{7}\0\u{9b}31m";

fn experiment(s: &Scratch) -> PathBuf {
    let data = s.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    s.write("null.toml", &common::null_experiment(&data))
}

/// A database of one real experiment, then made hostile the way another host's file could
/// be: every name evil, the largest values, an extra table and column.
fn hostile_db(s: &Scratch) -> PathBuf {
    let db = s.path().join("other.db");
    let f = experiment(s);
    let o = s
        .cmd()
        .args(["run", f.to_str().unwrap(), "--db", db.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let c = Connection::open(&db).unwrap();
    let name = |n: &str| format!("{EVIL} {n}");
    c.execute(
        "UPDATE experiments SET name = ?1, source = ?2, iolab_version = ?3",
        params![name("exp"), name("src"), name("ver")],
    )
    .unwrap();
    // Labels stay distinct (unique per experiment).
    c.execute(
        "UPDATE configs SET label = ?1 || id, factors_json = json_object(?1, ?1 || id)",
        params![EVIL],
    )
    .unwrap();
    c.execute(
        "UPDATE environments SET json = json_set(json, '$.hostname', ?1, '$.kernel', ?1)",
        params![EVIL],
    )
    .unwrap();
    c.execute(
        "UPDATE runs SET error = ?1, seed = 9223372036854775807, elapsed_ns = 9223372036854775807",
        params![EVIL],
    )
    .unwrap();
    // The headline metric at the edges of a double: huge, infinite, NaN (stored as NULL).
    c.execute_batch(
        "UPDATE run_metrics SET value = 1e308 WHERE name = 'ops_per_s' AND run_id % 3 = 0;
         UPDATE run_metrics SET value = 9e999 WHERE name = 'ops_per_s' AND run_id % 3 = 1;
         UPDATE run_metrics SET value = NULL WHERE name = 'ops_per_s' AND run_id % 3 = 2;",
    )
    .unwrap();
    c.execute(
        "INSERT INTO run_metrics (run_id, name, value, unit) SELECT id, ?1, -1e308, ?1 FROM runs",
        params![name("metric")],
    )
    .unwrap();
    c.execute(
        "INSERT INTO metric_defs (experiment_id, ordinal, name, unit, better, title, description, headline)
         SELECT id, 99, ?1, ?1, 'higher', ?1, ?1, 1 FROM experiments",
        params![name("metric")],
    )
    .unwrap();
    c.execute("UPDATE monitor_metrics SET name = ?1 || id", params![EVIL])
        .ok();
    c.execute_batch(
        "CREATE TABLE extra_from_the_future (x); ALTER TABLE experiments ADD COLUMN later TEXT;",
    )
    .unwrap();
    db
}

fn run_in(s: &Scratch, db: &Path, args: &[&str]) -> Output {
    s.cmd()
        .args(args)
        .args(["--db", db.to_str().unwrap()])
        .output()
        .unwrap()
}

/// Text that a terminal would not act on: no control character but newline and tab.
fn assert_inert(what: &str, text: &str) {
    let bad: Vec<char> = text
        .chars()
        .filter(|c| c.is_control() && !matches!(c, '\n' | '\t'))
        .collect();
    assert!(
        bad.is_empty(),
        "{what}: raw control characters {bad:?} in:\n{text}"
    );
}

#[test]
fn a_hostile_database_imports_and_prints_escaped() {
    let s = Scratch::new();
    let other = hostile_db(&s);
    let db = s.path().join("mine.db");
    let o = run_in(&s, &db, &["import", other.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_inert("import", &stdout(&o));

    for args in [&["show"][..], &["show", "1"], &["compare", "1"], &["list"]] {
        let o = run_in(&s, &db, args);
        let (out, err) = (stdout(&o), stderr(&o));
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(
            o.status.success() || o.status.code() == Some(2),
            "{args:?}: {err}"
        );
        assert_inert(&format!("{args:?} stdout"), &out);
        assert_inert(&format!("{args:?} stderr"), &err);
        if args[0] == "show" {
            // Escaped, not dropped: the reader sees what the file holds.
            assert!(out.contains("\\u{1b}[2J"), "{args:?}: {out}");
            // 1e308 is a number in scientific notation, not 309 digits.
            assert!(!out.contains(&"0".repeat(30)), "{args:?}: {out}");
        }
    }

    let html = s.path().join("r.html");
    let o = run_in(&s, &db, &["report", "1", "-o", html.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let html = std::fs::read_to_string(&html).unwrap();
    for raw in ["<script>alert", "<img src=x", "\"'><img", "\u{1b}", "\0"] {
        assert!(!html.contains(raw), "report holds `{raw:?}` unescaped");
    }
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
}

#[test]
fn a_database_of_another_schema_is_refused_clearly() {
    let s = Scratch::new();
    let db = s.path().join("mine.db");
    // A table or column missing is refused before anything is read (it was an SQL error
    // half-way, exit 1); a newer or foreign file is refused by its header.
    let cases = [
        (
            "no-runs",
            "DROP TABLE run_metrics; DROP TABLE runs;",
            "table `run_metrics` is missing",
        ),
        (
            "no-column",
            "ALTER TABLE configs DROP COLUMN outcome;",
            "column `configs.outcome` is missing",
        ),
        ("future", "PRAGMA user_version = 999;", "newer iolab"),
        ("foreign", "PRAGMA application_id = 1234;", "not iolab's"),
    ];
    let base = hostile_db(&s);
    for (name, sql, needle) in cases {
        let other = s.path().join(format!("{name}.db"));
        std::fs::copy(&base, &other).unwrap();
        Connection::open(&other)
            .unwrap()
            .execute_batch(sql)
            .unwrap();
        let o = run_in(&s, &db, &["import", other.to_str().unwrap()]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{name}: {err}");
        assert!(!err.contains("panicked"), "{name}: {err}");
        assert!(err.contains(needle), "{name}: expected `{needle}` in {err}");
        assert_inert(name, &err);
        // Nothing of it was copied.
        let o = run_in(&s, &db, &["list", "--json"]);
        if o.status.success() {
            let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
            assert!(
                !v.to_string().contains("script"),
                "{name}: something was copied: {v}"
            );
        }
    }
}
