//! `iolab sqlite --format mobibench` prints Mobibench's DB-mode report: the same lines, with
//! the same labels and the same number of fields, as Mobibench's real output captured in
//! tests/data/sqlite/ (its status lines `setState: N` and `Err string : …` aside).

mod common;

use std::path::Path;

use common::{run, stderr};

/// A line's shape: the database path and every number replaced, labels and separators kept.
fn shape(line: &str) -> String {
    let line = match line.split_once("[DB information of db ") {
        Some((before, _)) => format!("{before}[DB information of db PATH]"),
        None => line.to_string(),
    };
    let mut out = String::new();
    let mut number = String::new();
    let flush = |number: &mut String, out: &mut String| {
        if number.chars().any(|c| c.is_ascii_digit()) {
            out.push('N');
        } else {
            out.push_str(number);
        }
        number.clear();
    };
    for c in line.chars() {
        if c.is_ascii_digit() || c == '.' {
            number.push(c);
        } else {
            flush(&mut number, &mut out);
            out.push(c);
        }
    }
    flush(&mut number, &mut out);
    out
}

fn shapes(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.starts_with("setState:") && !l.starts_with("Err string"))
        .map(shape)
        .collect()
}

fn captured(name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/sqlite")
        .join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn check(capture: &str, args: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let mut a = vec![
        "sqlite",
        "--dir",
        d,
        "--format",
        "mobibench",
        "--no-db",
        "--no-monitor",
    ];
    a.extend(args);
    let o = run(&a);
    assert!(o.status.success(), "{}", stderr(&o));
    let ours = String::from_utf8(o.stdout).unwrap();
    let theirs = captured(capture);
    assert_eq!(
        shapes(&ours),
        shapes(&theirs),
        "iolab:\n{ours}\nMobibench ({capture}):\n{theirs}"
    );
}

#[test]
fn one_thread_wal_is_mobibench_s_report() {
    check(
        "mobibench_d0_j3_s2.txt",
        &[
            "--journal",
            "wal",
            "--synchronous",
            "full",
            "--transactions",
            "100",
        ],
    );
}

#[test]
fn threads_databases_and_a_pause_are_mobibench_s_report() {
    check(
        "mobibench_d0_j0_t2_D2_i1.txt",
        &[
            "--journal",
            "delete",
            "--transactions",
            "40",
            "--threads",
            "2",
            "--databases",
            "2",
            "--sleep",
            "1ms",
        ],
    );
}

#[test]
fn shapes_keep_labels_and_count_fields() {
    assert_eq!(
        shape("[TIME] :       0 sec 134055us. \t745.96 Transactions/sec"),
        "[TIME] :       N sec Nus. \tN Transactions/sec"
    );
    assert_eq!(
        shape("[DB information of db /tmp/x/test.db0_0]"),
        "[DB information of db PATH]"
    );
    assert_ne!(
        shape("[CPU] : Active,Idle,IoWait : 1.00 2.00"),
        shape("[CPU] : Active,Idle,IoWait : 1.00 2.00 3.00")
    );
}
