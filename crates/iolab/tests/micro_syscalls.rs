//! The syscalls of each micro mode, as strace sees them, match docs/micro.md:
//! open flags, one transfer call per record, the per-record sync and the final sync — in the
//! worker thread, where the timed loop runs (files are pre-filled by the main thread).

mod common;

use std::collections::HashMap;

use common::iolab;

const RECORDS: usize = 16;

/// The calls one thread made: name → count, plus the raw lines for messages.
#[derive(Default, Debug)]
struct Calls {
    counts: HashMap<String, usize>,
    lines: Vec<String>,
}

impl Calls {
    fn n(&self, name: &str) -> usize {
        self.counts.get(name).copied().unwrap_or(0)
    }

    fn matching(&self, name: &str, needle: &str) -> Vec<&String> {
        self.lines
            .iter()
            .filter(|l| l.starts_with(&format!("{name}(")) && l.contains(needle))
            .collect()
    }
}

/// Runs iolab under `strace -f` and returns the calls of the worker thread.
fn trace(args: &[&str]) -> Calls {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("strace.out");
    let data = tempfile::tempdir().unwrap();
    let status = iolab_testkit::bounded("strace", common::HUNG)
        .args(["-f", "-qq", "-o"])
        .arg(&out)
        .args([
            "-e",
            // execve first, so that the first line is always the main thread's.
            "trace=execve,openat,read,write,pread64,pwrite64,lseek,fsync,fdatasync,msync,mmap,\
             ftruncate,io_uring_setup,io_uring_enter",
        ])
        .arg(env!("CARGO_BIN_EXE_iolab"))
        .args(["micro", "--dir"])
        .arg(data.path())
        .args(["--bs", "4k", "--size", &format!("{}k", RECORDS * 4)])
        .args(["--format", "mobibench"])
        // Only the engine's threads: no sampler thread, no database writes.
        .args(["--no-monitor", "--no-db"])
        .args(args)
        .output()
        .expect("strace runs");
    assert!(
        status.status.success(),
        "iolab {args:?} failed under strace: {}",
        String::from_utf8_lossy(&status.stderr)
    );
    let text = std::fs::read_to_string(&out).unwrap();
    let mut worker = Calls::default();
    for (_, call) in common::strace_thread_calls(&text) {
        let Some(name) = call.split('(').next() else {
            continue;
        };
        *worker.counts.entry(name.to_string()).or_default() += 1;
        worker.lines.push(call.to_string());
    }
    worker
}

struct Expect {
    access: &'static str,
    sync: &'static str,
}

impl Expect {
    fn writes(&self) -> bool {
        !matches!(self.access, "read" | "randread")
    }
    fn mmap(&self) -> bool {
        self.sync.starts_with("mmap")
    }

    fn check(&self, c: &Calls) {
        let ctx = format!(
            "--access {} --sync {}: {:#?}",
            self.access, self.sync, c.lines
        );
        let r = RECORDS;
        // Open: exactly once, with the mode's flags.
        let opens = c.matching("openat", "iolab-micro.0");
        assert_eq!(opens.len(), 1, "one open of the data file; {ctx}");
        let flags = opens[0];
        let has = |f: &str| flags.split(['|', ',', ' ']).any(|t| t == f);
        assert_eq!(
            has("O_RDONLY"),
            !self.writes(),
            "read-only open iff reading; {ctx}"
        );
        assert_eq!(
            has("O_SYNC"),
            matches!(self.sync, "osync" | "osync+direct"),
            "O_SYNC; {ctx}"
        );
        assert_eq!(
            has("O_DIRECT"),
            matches!(self.sync, "direct" | "osync+direct"),
            "O_DIRECT; {ctx}"
        );
        assert_eq!(has("O_DSYNC"), self.sync == "dsync", "O_DSYNC; {ctx}");

        // Transfers: one call per record, or none at all through a shared mapping.
        if self.mmap() {
            assert_eq!(
                c.matching("mmap", "MAP_SHARED").len(),
                1,
                "one shared mapping; {ctx}"
            );
            assert_eq!(
                c.n("pread64") + c.n("pwrite64"),
                0,
                "no syscalls per record; {ctx}"
            );
        } else if self.writes() {
            assert_eq!(c.n("pwrite64"), r, "pwrite per record; {ctx}");
            assert_eq!(c.n("pread64"), 0, "{ctx}");
        } else {
            assert_eq!(c.n("pread64"), r, "pread per record; {ctx}");
            assert_eq!(c.n("pwrite64"), 0, "{ctx}");
        }
        assert_eq!(
            c.n("read") + c.n("write") + c.n("lseek"),
            0,
            "psync never uses read/write/lseek; {ctx}"
        );

        // Syncs: per record, then one final sync inside the timed region; reads never sync.
        let (fsync, fdatasync, ms_async, ms_sync) = match (self.writes(), self.sync) {
            (false, _) => (0, 0, 0, 0),
            (true, "fsync") => (r + 1, 0, 0, 0),
            (true, "fdatasync") => (1, r, 0, 0),
            (true, "mmap") => (0, 0, 0, 1),
            (true, "mmap-async") => (0, 0, r, 1),
            (true, "mmap-sync") => (0, 0, 0, r + 1),
            (true, _) => (1, 0, 0, 0),
        };
        assert_eq!(c.n("fsync"), fsync, "fsync calls; {ctx}");
        assert_eq!(c.n("fdatasync"), fdatasync, "fdatasync calls; {ctx}");
        assert_eq!(
            c.matching("msync", "MS_ASYNC").len(),
            ms_async,
            "msync(MS_ASYNC); {ctx}"
        );
        assert_eq!(
            c.matching("msync", "MS_SYNC").len(),
            ms_sync,
            "msync(MS_SYNC); {ctx}"
        );
    }
}

#[test]
#[ignore = "needs strace (scripts/test.sh installs it as root)"]
fn every_sync_mode_and_access_issues_the_spec_syscalls() {
    iolab_testkit::require_tool("strace");
    let accesses = ["write", "randwrite", "read", "randread", "append"];
    let syncs = [
        "normal",
        "osync",
        "fsync",
        "direct",
        "osync+direct",
        "mmap",
        "mmap-async",
        "mmap-sync",
        "fdatasync",
        "dsync",
    ];
    for access in accesses {
        for sync in syncs {
            let calls = trace(&["--access", access, "--sync", sync]);
            Expect { access, sync }.check(&calls);
        }
    }
}

#[test]
#[ignore = "needs strace (scripts/test.sh installs it as root)"]
fn sync_engine_uses_read_write_and_seeks_only_when_needed() {
    iolab_testkit::require_tool("strace");
    let seq = trace(&["--engine", "sync", "--access", "write"]);
    assert_eq!(seq.n("write"), RECORDS, "{seq:#?}");
    assert_eq!(
        seq.n("lseek"),
        0,
        "sequential records need no seek: {seq:#?}"
    );
    assert_eq!(seq.n("pwrite64"), 0);

    let rand = trace(&["--engine", "sync", "--access", "randread"]);
    assert_eq!(rand.n("read"), RECORDS, "{rand:#?}");
    assert!(
        rand.n("lseek") >= RECORDS / 2,
        "random records seek: {rand:#?}"
    );
    assert_eq!(rand.n("pread64"), 0);
}

#[test]
#[ignore = "needs strace (scripts/test.sh installs it as root)"]
fn io_uring_engine_moves_records_through_the_ring() {
    iolab_testkit::require_tool("strace");
    let c = trace(&[
        "--engine",
        "io_uring",
        "--iodepth",
        "4",
        "--access",
        "randwrite",
        "--sync",
        "fdatasync",
    ]);
    assert_eq!(c.n("io_uring_setup"), 1, "{c:#?}");
    assert!(c.n("io_uring_enter") >= RECORDS / 4, "{c:#?}");
    assert_eq!(
        c.n("pwrite64") + c.n("write") + c.n("fdatasync"),
        0,
        "{c:#?}"
    );
    // The final sync is a plain fsync after the ring drained.
    assert_eq!(c.n("fsync"), 1, "{c:#?}");
}

#[test]
fn null_engine_issues_no_io() {
    let dir = tempfile::tempdir().unwrap();
    let o = iolab()
        .args([
            "micro",
            "--dir",
            dir.path().to_str().unwrap(),
            "--engine",
            "null",
            "--size",
            "1m",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", common::stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["result"]["ops"], 256);
    assert_eq!(v["result"]["files"].as_array().unwrap().len(), 0);
    assert!(common::entries(dir.path()).is_empty(), "no file was made");
}
