//! A SQLite experiment as its reader sees it (seed report 002): `iolab show` and the report
//! count transactions in txn/s, and show the system calls per transaction that explain the
//! journal modes (fsyncs, directory fsyncs, unlinks, ftruncates), not only `--json`.

mod common;

use common::{stderr, stdout, Scratch};

#[test]
fn show_and_the_report_give_transactions_and_their_system_calls() {
    let s = Scratch::new();
    let shown = run_and_show(
        &s,
        "journal modes",
        r#"journal = ["delete", "truncate", "wal"]"#,
        r#"journal = "${journal}""#,
        40,
    );
    // The table's headings (the metrics that do not fit 120 columns are in a second table).
    let head = shown
        .lines()
        .take_while(|l| !l.starts_with("mean ± "))
        .filter(|l| l.starts_with("configuration"))
        .collect::<Vec<_>>()
        .join("\n");
    for column in [
        "throughput (txn/s)",
        "fsyncs/txn",
        "dir fsyncs/txn",
        "unlinks/txn",
        "ftruncates/txn",
    ] {
        assert!(head.contains(column), "no {column} column: {head}");
    }
    assert!(
        !head.contains("op/s") && !head.contains("MiB/s"),
        "transactions are no operations, and their bytes no headline: {head}"
    );
    // DELETE unlinks its journal at every commit, TRUNCATE cuts it: the columns say so.
    // A configuration's rows of every table, as one.
    let row = |label: &str| {
        let rows: Vec<&str> = shown.lines().filter(|l| l.starts_with(label)).collect();
        assert!(!rows.is_empty(), "no {label} row: {shown}");
        rows.join("  ")
    };
    assert!(row("journal=delete").contains(" 1.0000"), "{shown}");

    let html = s.path().join("r.html");
    let o = s.run(&["report", "-o", html.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let page = std::fs::read_to_string(&html).unwrap();
    let section = &page[page.find("id=\"sqlite\"").expect("a sqlite section")..];
    let section = &section[..section.find("</section>").unwrap()];
    for label in ["journal=delete", "journal=truncate", "journal=wal"] {
        assert!(section.contains(label), "{label}");
    }
    assert!(section.contains("unlinks") && section.contains("ftruncates"));
    assert!(page.contains("Throughput (txn/s)"), "the summary's unit");
}

/// Seed 002's `iolab show` was a table 230 columns wide: with the system calls per
/// transaction and the factors' labels, the metrics that do not fit 120 columns go to a second
/// table, each configuration named again.
#[test]
fn show_of_a_sqlite_experiment_fits_120_columns() {
    let s = Scratch::new();
    let shown = run_and_show(
        &s,
        "journal and synchronous modes",
        "journal = [\"truncate\", \"delete\"]\nsynchronous = [\"normal\", \"full\"]",
        r#"journal = "${journal}", synchronous = "${synchronous}""#,
        30,
    );
    let start = shown.find("\nconfiguration").expect("a table");
    let tables = &shown[start..shown.find("\nmean ± ").expect("the note")];
    for line in tables.lines() {
        assert!(
            line.chars().count() <= 120,
            "{} columns: {line}\n{shown}",
            line.chars().count()
        );
    }
    let heads: Vec<&str> = tables
        .lines()
        .filter(|l| l.starts_with("configuration"))
        .collect();
    assert!(heads.len() >= 2, "{tables}");
    for column in [
        "throughput (txn/s)",
        "p99 latency",
        "fsyncs/txn",
        "unlinks/txn",
        "ftruncates/txn",
    ] {
        assert!(
            heads.iter().any(|h| h.contains(column)),
            "no {column}: {tables}"
        );
    }
    // Every table names every configuration.
    for label in [
        "journal=truncate synchronous=normal",
        "journal=delete synchronous=full",
    ] {
        assert_eq!(tables.matches(label).count(), heads.len(), "{tables}");
    }
}

/// Runs a SQLite experiment of `factors` (TOML lines) and `workload` (the `sqlite` table's
/// settings besides the transactions), two runs per configuration, in a directory of the
/// scratch; returns `iolab show`.
fn run_and_show(
    s: &Scratch,
    name: &str,
    factors: &str,
    workload: &str,
    transactions: u32,
) -> String {
    let target = s.path().join("target");
    std::fs::create_dir(&target).unwrap();
    let f = s.write(
        "sqlite.toml",
        &format!(
            r#"
name = "{name}"
[factors]
{factors}
[sut]
target = {{ kind = "directory", path = "{}" }}
[workload]
sqlite = {{ transactions = {transactions}, {workload} }}
[repetitions]
min = 2
max = 2
[procedure]
drop_caches = false
"#,
            target.display()
        ),
    );
    let o = s.run(&["run", f.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = s.run(&["show"]);
    assert!(o.status.success(), "{}", stderr(&o));
    stdout(&o)
}
