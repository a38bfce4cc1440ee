//! A SQLite experiment as its reader sees it (seed report 002): `iolab show` and the report
//! count transactions in txn/s, and show the system calls per transaction that explain the
//! journal modes (fsyncs, directory fsyncs, unlinks, ftruncates), not only `--json`.

mod common;

use common::{stderr, stdout, Scratch};

#[test]
fn show_and_the_report_give_transactions_and_their_system_calls() {
    let s = Scratch::new();
    let target = s.path().join("target");
    std::fs::create_dir(&target).unwrap();
    let f = s.write(
        "sqlite.toml",
        &format!(
            r#"
name = "journal modes"
[factors]
journal = ["delete", "truncate", "wal"]
[sut]
target = {{ kind = "directory", path = "{}" }}
[workload]
sqlite = {{ transactions = 40, journal = "${{journal}}" }}
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
    let shown = stdout(&o);
    let head = shown
        .lines()
        .find(|l| l.starts_with("configuration"))
        .unwrap();
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
    let row = |label: &str| {
        shown
            .lines()
            .find(|l| l.starts_with(label))
            .unwrap_or_else(|| panic!("no {label} row: {shown}"))
            .to_string()
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
