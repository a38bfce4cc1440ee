//! The system calls of a SQLite transaction, as strace sees them, match docs/sqlite.md for
//! insert × {WAL, DELETE, TRUNCATE} × synchronous FULL: the calls of every transaction, in
//! order, and iolab's own counts (its hooks into SQLite's unix VFS) equal strace's.
//!
//! The timed region of the worker thread is told by its two `getrusage(RUSAGE_THREAD)` calls
//! (iolab reads the thread's CPU time right before the first transaction and right after the
//! checkpoint); the set-up before it is left out.

mod common;

use std::path::Path;

use serde_json::Value;

const TRANSACTIONS: usize = 20;

/// One call of the worker thread in the timed region: its name and what it was on (`db`,
/// `journal`, `wal`, `shm`, `dir`, or `other`).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Call {
    name: String,
    on: &'static str,
}

fn classify(args: &str, dir: &str) -> &'static str {
    // A named file is the first non-empty quoted argument (openat, unlink: openat's
    // `AT_FDCWD</cwd>` comes before it); otherwise, with -y, the descriptor's `3</path>`
    // (written data is `""...` with -s 0).
    let quoted = args.split('"').nth(1).filter(|p| !p.is_empty());
    let path = quoted
        .or_else(|| {
            args.split_once('<')
                .and_then(|(_, rest)| rest.split_once('>'))
                .map(|(p, _)| p)
        })
        .unwrap_or("");
    if path.ends_with("-journal") {
        "journal"
    } else if path.ends_with("-wal") {
        "wal"
    } else if path.ends_with("-shm") {
        "shm"
    } else if path.ends_with(".db") {
        "db"
    } else if path == dir {
        "dir"
    } else {
        "other"
    }
}

/// `iolab sqlite --json` under `strace -f -y`: the worker's calls in the timed region, and
/// iolab's JSON result.
fn trace(journal: &str) -> (Vec<Call>, Value) {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("strace.out");
    let data = tempfile::tempdir().unwrap();
    let dir = data.path().canonicalize().unwrap();
    let n = TRANSACTIONS.to_string();
    let o = iolab_testkit::bounded("strace", common::HUNG)
        .args(["-f", "-qq", "-y", "-s", "0", "-o"])
        .arg(&out)
        .args([
            "-e",
            "trace=execve,getrusage,openat,close,fsync,fdatasync,unlink,unlinkat,ftruncate,\
             write,pwrite64,pwritev",
        ])
        .arg(env!("CARGO_BIN_EXE_iolab"))
        .args(["sqlite", "--dir"])
        .arg(&dir)
        .args([
            "--mode",
            "insert",
            "--journal",
            journal,
            "--synchronous",
            "full",
        ])
        .args(["--transactions", &n, "--json", "--no-monitor", "--no-db"])
        .output()
        .expect("strace runs");
    assert!(
        o.status.success(),
        "iolab sqlite --journal {journal} failed under strace: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let json: Value = serde_json::from_slice(&o.stdout).expect("JSON on stdout");
    let text = std::fs::read_to_string(&out).unwrap();
    let dir = dir.to_str().unwrap();
    let mut worker: Option<&str> = None;
    let mut markers = 0;
    let mut calls = Vec::new();
    for (pid, call) in common::strace_thread_calls(&text) {
        let Some((name, args)) = call.split_once('(') else {
            continue;
        };
        if name == "getrusage" && args.starts_with("RUSAGE_THREAD") {
            match worker {
                None => worker = Some(pid),
                Some(w) if w != pid => panic!("two threads read their CPU time: {text}"),
                _ => {}
            }
            markers += 1;
            continue;
        }
        if worker != Some(pid) || markers != 1 {
            continue;
        }
        calls.push(Call {
            name: name.to_string(),
            on: classify(args, dir),
        });
    }
    assert_eq!(
        markers, 2,
        "the timed region's two getrusage calls:\n{text}"
    );
    (calls, json)
}

/// `name on`, with runs of writes to one file as one `write+ on`: how many writes a page
/// image takes is SQLite's business, the order of writes and syncs is the semantics.
fn tokens(calls: &[Call]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in calls {
        let write = matches!(c.name.as_str(), "write" | "pwrite64" | "pwritev");
        let t = if write {
            format!("write+ {}", c.on)
        } else {
            format!("{} {}", c.name.replace("fdatasync", "fsync"), c.on)
        };
        if !(write && out.last() == Some(&t)) {
            out.push(t);
        }
    }
    out
}

fn count(calls: &[Call], names: &[&str]) -> u64 {
    calls
        .iter()
        .filter(|c| names.contains(&c.name.as_str()))
        .count() as u64
}

/// Checks that the timed region is `TRANSACTIONS` times `per_tx`, then `tail`, and that
/// iolab counted what strace saw.
fn check(journal: &str, per_tx: &[&str], tail: &[&str], fsyncs_per_tx: u64) {
    let (calls, json) = trace(journal);
    let t = tokens(&calls);
    let want: Vec<String> = std::iter::repeat_n(per_tx, TRANSACTIONS)
        .flatten()
        .chain(tail)
        .map(|s| s.to_string())
        .collect();
    if t != want {
        let first = t
            .iter()
            .zip(&want)
            .position(|(a, b)| a != b)
            .unwrap_or(t.len().min(want.len()));
        panic!(
            "--journal {journal}: the timed region differs from {TRANSACTIONS} × {per_tx:?} + \
             {tail:?} at call {first} (transaction {}):\n got: {:?}\nwant: {:?}",
            first / per_tx.len(),
            &t[first.saturating_sub(3)..(first + 12).min(t.len())],
            &want[first.saturating_sub(3)..(first + 12).min(want.len())]
        );
    }
    // The fsyncs of the transactions themselves, per transaction, as docs/sqlite.md says.
    let per_tx_fsyncs = per_tx.iter().filter(|s| s.starts_with("fsync ")).count() as u64;
    assert_eq!(per_tx_fsyncs, fsyncs_per_tx, "--journal {journal}");
    // iolab's counts are strace's, call for call.
    let got = &json["result"]["syscalls"];
    let strace = [
        ("fsync", count(&calls, &["fsync", "fdatasync"])),
        (
            "dir_fsync",
            calls
                .iter()
                .filter(|c| c.name == "fsync" && c.on == "dir")
                .count() as u64,
        ),
        ("unlink", count(&calls, &["unlink", "unlinkat"])),
        ("ftruncate", count(&calls, &["ftruncate"])),
        ("write", count(&calls, &["write", "pwrite64", "pwritev"])),
    ];
    for (name, n) in strace {
        assert_eq!(
            got[name].as_u64(),
            Some(n),
            "--journal {journal}: iolab counted {} {name} calls, strace saw {n}",
            got[name]
        );
    }
    assert_eq!(json["result"]["transactions"], TRANSACTIONS as u64);
}

#[test]
#[ignore = "needs strace (scripts/test.sh installs it as root)"]
fn insert_wal_full_appends_frames_and_syncs_the_wal_once() {
    iolab_testkit::require_tool("strace");
    check(
        "wal",
        &["write+ wal", "fsync wal"],
        // The checkpoint after the last transaction: the WAL synced, its pages copied into
        // the database, the database cut to its size in pages, and synced.
        &["fsync wal", "write+ db", "ftruncate db", "fsync db"],
        1,
    );
}

#[test]
#[ignore = "needs strace (scripts/test.sh installs it as root)"]
fn insert_delete_full_creates_syncs_and_unlinks_the_journal() {
    iolab_testkit::require_tool("strace");
    check(
        "delete",
        &[
            "openat journal",
            "write+ journal",
            "fsync journal",
            // The new journal's directory entry made durable.
            "openat dir",
            "fsync dir",
            "close dir",
            // The header's record count, then the journal synced again.
            "write+ journal",
            "fsync journal",
            "write+ db",
            "fsync db",
            "close journal",
            "unlink journal",
        ],
        &[],
        4,
    );
}

#[test]
#[ignore = "needs strace (scripts/test.sh installs it as root)"]
fn insert_truncate_full_empties_the_journal_instead_of_unlinking_it() {
    iolab_testkit::require_tool("strace");
    check(
        "truncate",
        &[
            "openat journal",
            "write+ journal",
            "fsync journal",
            "openat dir",
            "fsync dir",
            "close dir",
            "write+ journal",
            "fsync journal",
            "write+ db",
            "fsync db",
            "ftruncate journal",
            "fsync journal",
            "close journal",
        ],
        &[],
        5,
    );
}

#[test]
fn the_classifier_reads_strace_s_paths() {
    let d = "/tmp/x";
    assert_eq!(
        classify("5</tmp/x/iolab-sqlite.0.0.db-wal>, \"\"...", d),
        "wal"
    );
    assert_eq!(
        classify("\"/tmp/x/iolab-sqlite.0.0.db-journal\"", d),
        "journal"
    );
    assert_eq!(classify("6</tmp/x>", d), "dir");
    assert_eq!(
        classify(
            "AT_FDCWD</root>, \"/tmp/x/iolab-sqlite.0.0.db-journal\", O_RDWR",
            d
        ),
        "journal"
    );
    assert_eq!(classify("AT_FDCWD</root>, \"/tmp/x\", O_RDONLY", d), "dir");
    assert_eq!(
        classify("3</tmp/x/iolab-sqlite.0.0.db>, \"\"..., 4096, 0", d),
        "db"
    );
    let calls = [
        Call {
            name: "pwrite64".into(),
            on: "wal",
        },
        Call {
            name: "pwrite64".into(),
            on: "wal",
        },
        Call {
            name: "fdatasync".into(),
            on: "wal",
        },
    ];
    assert_eq!(tokens(&calls), ["write+ wal", "fsync wal"]);
    assert!(Path::new(d).is_absolute());
}
