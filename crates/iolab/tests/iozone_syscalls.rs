//! The syscalls of iozone's tests, as strace sees them, match docs/iozone.md: each pass runs
//! in a worker thread of its own, its timed region bracketed by `getrusage(RUSAGE_THREAD)`
//! (which measures the region's CPU time); the write test starts from an unlinked, newly
//! created and fsynced file; the flush is inside the region by default and after it with
//! `--flush excluded`; record rewrite hits one offset, stride read moves by stride × record,
//! backward read descends, random read visits every record once.

mod common;

use std::collections::HashMap;

const RECORD: u64 = 4096;

/// One worker thread's calls, in order.
#[derive(Debug, Default)]
struct Pass {
    calls: Vec<String>,
}

impl Pass {
    /// Positions of the two `getrusage` calls that bracket the timed region.
    fn region(&self) -> (usize, usize) {
        let marks: Vec<usize> = self
            .calls
            .iter()
            .enumerate()
            .filter(|(_, c)| c.starts_with("getrusage(RUSAGE_THREAD"))
            .map(|(i, _)| i)
            .collect();
        assert_eq!(marks.len(), 2, "two getrusage marks: {self:#?}");
        (marks[0], marks[1])
    }

    fn timed(&self) -> &[String] {
        let (a, b) = self.region();
        &self.calls[a + 1..b]
    }

    fn before(&self) -> &[String] {
        &self.calls[..self.region().0]
    }

    fn after(&self) -> &[String] {
        &self.calls[self.region().1 + 1..]
    }
}

fn named<'a>(calls: &'a [String], name: &str) -> Vec<&'a String> {
    calls
        .iter()
        .filter(|c| c.starts_with(&format!("{name}(")))
        .collect()
}

/// The offsets of the `lseek` calls among `calls`.
fn seeks(calls: &[String]) -> Vec<u64> {
    named(calls, "lseek")
        .iter()
        .map(|c| {
            let args = c.split('(').nth(1).unwrap();
            let mut parts = args.split(',').map(str::trim);
            parts.next();
            let off = parts.next().unwrap().parse().unwrap();
            assert!(
                parts.next().is_some_and(|w| w.starts_with("SEEK_SET)")),
                "absolute seeks: {c}"
            );
            off
        })
        .collect()
}

/// Runs `iolab iozone` under `strace -f` and returns the worker threads' calls, one pass
/// per thread (one thread per pass), in order.
fn trace(args: &[&str]) -> Vec<Pass> {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("strace.out");
    let data = tempfile::tempdir().unwrap();
    let o = iolab_testkit::bounded("strace", common::HUNG)
        .args(["-f", "-qq", "-o"])
        .arg(&out)
        .args([
            "-e",
            "trace=execve,openat,unlink,unlinkat,read,write,pread64,pwrite64,lseek,fsync,close,\
             getrusage",
        ])
        .arg(env!("CARGO_BIN_EXE_iolab"))
        .args(["iozone", "--dir"])
        .arg(data.path())
        .args([
            "--record",
            "4k",
            "--format",
            "iozone",
            "--no-monitor",
            "--no-db",
        ])
        .args(args)
        .output()
        .expect("strace runs");
    assert!(
        o.status.success(),
        "iolab iozone {args:?} failed under strace: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        common::entries(data.path()).is_empty(),
        "the files are removed"
    );
    let text = std::fs::read_to_string(&out).unwrap();
    let mut main_pid = None;
    let mut order: Vec<String> = Vec::new();
    let mut by_pid: HashMap<String, Pass> = HashMap::new();
    for line in text.lines() {
        let Some((pid, call)) = line.split_once(' ') else {
            continue;
        };
        let main = main_pid.get_or_insert_with(|| pid.to_string()).clone();
        let call = call.trim_start();
        if pid == main || call.starts_with("<...") || call.starts_with("+++") {
            continue;
        }
        if !by_pid.contains_key(pid) {
            order.push(pid.to_string());
        }
        by_pid
            .entry(pid.to_string())
            .or_default()
            .calls
            .push(call.to_string());
    }
    order
        .into_iter()
        .map(|p| by_pid.remove(&p).unwrap())
        // Threads that are not passes (none expected) have no timed region.
        .filter(|p| p.calls.iter().any(|c| c.starts_with("getrusage(")))
        .collect()
}

#[test]
#[ignore = "needs strace (scripts/test.sh installs it as root)"]
fn the_write_test_times_no_fsync_unless_asked() {
    iolab_testkit::require_tool("strace");
    for flush in ["excluded", "fsync", "included"] {
        let passes = trace(&["--tests", "write", "--size", "64k", "--flush", flush]);
        assert_eq!(passes.len(), 2, "write and rewrite: {passes:#?}");
        for (i, p) in passes.iter().enumerate() {
            let ctx = format!("--flush {flush}, pass {i}: {p:#?}");
            let before = p.before();
            if i == 0 {
                // A fresh file: unlink, create, fsync of the empty file, then the timer.
                let unlink = before
                    .iter()
                    .position(|c| c.starts_with("unlink") && c.contains("iolab-iozone.0"))
                    .unwrap_or_else(|| panic!("unlink first; {ctx}"));
                let create = before
                    .iter()
                    .position(|c| c.starts_with("openat(") && c.contains("O_CREAT"))
                    .unwrap_or_else(|| panic!("create; {ctx}"));
                let fsync = before
                    .iter()
                    .position(|c| c.starts_with("fsync("))
                    .unwrap_or_else(|| panic!("fsync of the empty file; {ctx}"));
                assert!(unlink < create && create < fsync, "{ctx}");
            }
            let timed = p.timed();
            assert_eq!(named(timed, "write").len(), 16, "a write per record; {ctx}");
            assert!(named(timed, "lseek").is_empty(), "sequential; {ctx}");
            let in_fsync = named(timed, "fsync").len();
            let out_fsync = named(p.after(), "fsync").len();
            let last = timed.last().unwrap();
            let after_close = named(p.after(), "close").len();
            match flush {
                // iozone's default: the timer stops after the last write.
                "excluded" => {
                    assert_eq!((in_fsync, out_fsync), (0, 1), "fsync after; {ctx}");
                    assert!(last.starts_with("write("), "{ctx}");
                    assert_eq!(after_close, 1, "{ctx}");
                }
                // iozone -e: after the fsync, before the close.
                "fsync" => {
                    assert_eq!((in_fsync, out_fsync), (1, 0), "fsync timed; {ctx}");
                    assert!(last.starts_with("fsync("), "fsync ends the region; {ctx}");
                    assert_eq!(after_close, 1, "close after the timer; {ctx}");
                }
                // iozone -e -c: after the close.
                _ => {
                    assert_eq!((in_fsync, out_fsync), (1, 0), "fsync timed; {ctx}");
                    assert!(last.starts_with("close("), "close ends the region; {ctx}");
                    assert_eq!(after_close, 0, "{ctx}");
                }
            }
        }
    }
}

#[test]
#[ignore = "needs strace (scripts/test.sh installs it as root)"]
fn access_patterns_follow_iozone() {
    iolab_testkit::require_tool("strace");
    let records = 64u64;
    let passes = trace(&[
        "--tests",
        "write,random,backward,record-rewrite,stride",
        "--size",
        "256k",
    ]);
    let names = [
        "write",
        "rewrite",
        "random read",
        "random write",
        "backward read",
        "record rewrite",
        "stride read",
    ];
    assert_eq!(passes.len(), names.len(), "{passes:#?}");
    let pass = |name: &str| &passes[names.iter().position(|n| *n == name).unwrap()];
    let all: Vec<u64> = (0..records).map(|r| r * RECORD).collect();

    // Random read: lseek + read, every record once, not in order.
    let p = pass("random read");
    let mut offs = seeks(p.timed());
    assert_eq!(named(p.timed(), "read").len(), records as usize, "{p:#?}");
    assert_ne!(offs, all, "a permutation, not the sequential order");
    offs.sort_unstable();
    assert_eq!(offs, all, "every record once: {p:#?}");
    let p = pass("random write");
    assert_eq!(named(p.timed(), "write").len(), records as usize, "{p:#?}");
    let mut offs = seeks(p.timed());
    offs.sort_unstable();
    assert_eq!(offs, all, "every record once: {p:#?}");

    // Backward read: from the last record down to the first.
    let p = pass("backward read");
    let offs = seeks(p.timed());
    let descending: Vec<u64> = all.iter().rev().copied().collect();
    assert_eq!(offs, descending, "{p:#?}");
    assert_eq!(named(p.timed(), "read").len(), records as usize);

    // Record rewrite: one offset, over and over.
    let p = pass("record rewrite");
    assert_eq!(named(p.timed(), "write").len(), records as usize, "{p:#?}");
    let offs = seeks(p.timed());
    assert_eq!(offs.len(), records as usize, "{p:#?}");
    assert!(offs.iter().all(|&o| o == 0), "all at offset 0: {offs:?}");

    // Stride read: 17 records apart; when the next would reach the last record, start again
    // one record further than the pass's last start.
    let p = pass("stride read");
    let offs = seeks(p.timed());
    assert_eq!(offs.len(), records as usize, "{p:#?}");
    assert_eq!(&offs[..3], &[0, 17 * RECORD, 34 * RECORD], "{offs:?}");
    let mut starts = 0;
    for w in offs.windows(2) {
        if w[1] == w[0] + 17 * RECORD {
            continue;
        }
        starts += 1;
        assert_eq!(w[1], starts * RECORD, "a new start one further: {offs:?}");
        assert!(
            w[0] / RECORD + 1 + 17 >= records - 1,
            "wraps only near the end: {offs:?}"
        );
    }
    assert!(starts > 0, "{offs:?}");
}

#[test]
#[ignore = "needs strace (scripts/test.sh installs it as root)"]
fn stdio_and_positional_tests_use_their_calls() {
    iolab_testkit::require_tool("strace");
    let passes = trace(&[
        "--tests",
        "fwrite,pwrite,pread",
        "--size",
        "64k",
        "--stride",
        "5",
    ]);
    // fwrite, re-fwrite, pwrite, re-pwrite, pread, re-pread.
    assert_eq!(passes.len(), 6, "{passes:#?}");
    for p in &passes[..2] {
        // A buffer of one record: each fwrite is one write(2) of a record.
        assert_eq!(named(p.timed(), "write").len(), 16, "{p:#?}");
    }
    for p in &passes[2..4] {
        let w = named(p.timed(), "pwrite64");
        assert_eq!(w.len(), 16, "{p:#?}");
        assert!(
            w[1].ends_with(&format!(", 4096, {RECORD}) = 4096")),
            "{p:#?}"
        );
    }
    for p in &passes[4..] {
        assert_eq!(named(p.timed(), "pread64").len(), 16, "{p:#?}");
    }
}
