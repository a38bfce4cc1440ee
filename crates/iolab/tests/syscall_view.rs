//! The syscall view of runs (`--trace-syscalls`, `[procedure] trace_syscalls`): iolab's own
//! kinds and another tool alike, counted exactly; and seed report 001's example, whose
//! report sets the three views side by side and whose check says why the write figure of
//! the small file is memory's.

mod common;

use common::{run_metric as metric, stderr, Scratch};
use serde_json::Value;

fn only_run(s: &Scratch) -> Value {
    let exp = s.latest();
    let run = exp["configs"][0]["runs"][0].clone();
    assert_eq!(run["status"], "ok", "{}", run["error"]);
    run
}

/// iolab's micro write of 64 MiB in 4 KiB records: 16,384 writes of 64 MiB, not one more
/// (iolab's progress, its sampler and reading the counts are not the workload's calls).
#[test]
#[ignore = "needs root: bpf(2), tmpfs"]
fn a_micro_write_is_counted_call_for_call() {
    common::require_root();
    let s = Scratch::new();
    let f = s.write(
        "micro.toml",
        r#"
name = "micro"
[sut]
target = { kind = "tmpfs", size = "128M" }
[workload]
micro = { access = "write", size = "64m", bs = "4k" }
[repetitions]
min = 1
max = 1
[procedure]
trace_syscalls = true
"#,
    );
    let o = s.run(&["run", f.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let run = only_run(&s);
    let writes = metric(&run, "sys.pwrite64.calls").unwrap_or(0.0)
        + metric(&run, "sys.write.calls").unwrap_or(0.0);
    assert_eq!(writes, 16384.0);
    assert_eq!(metric(&run, "sys.write_bytes"), Some(64.0 * 1048576.0));
    assert_eq!(metric(&run, "sys.read_bytes"), Some(0.0));
    assert!(metric(&run, "sys.tracer_ns").is_some());
}

/// Another tool through the exec kind, and the same flag on the command line: dd's 64
/// writes of 1 MiB are its, with the few bytes of its report on stderr; iolab's thread that
/// waits for it is not counted.
#[test]
#[ignore = "needs root: bpf(2), tmpfs"]
fn another_tools_process_tree_is_counted() {
    common::require_root();
    let s = Scratch::new();
    let f = s.write(
        "dd.toml",
        r#"
name = "dd"
[sut]
target = { kind = "tmpfs", size = "128M" }
[workload]
exec = { tool = "generic", command = ["sh", "-c", "dd if=/dev/zero of=F bs=1M count=64 && echo score: 1"],
         metrics = [{ name = "score", unit = "", better = "higher", regex = 'score: ([0-9]+)' }] }
[repetitions]
min = 1
max = 1
"#,
    );
    let o = s.run(&["run", f.to_str().unwrap(), "--trace-syscalls"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let run = only_run(&s);
    let mib = 1048576.0;
    let written = metric(&run, "sys.write_bytes").unwrap();
    // 64 MiB of data, and dd's three report lines and the shell's echo.
    assert!(
        (64.0 * mib..64.0 * mib + 512.0).contains(&written),
        "{written}"
    );
    let writes = metric(&run, "sys.write.calls").unwrap();
    assert!((65.0..=70.0).contains(&writes), "{writes}");
    assert!(
        metric(&run, "sys.execve.calls").unwrap() >= 2.0,
        "sh and dd"
    );
    // The process tree: sh, dd (and nothing of iolab's: no bpf or wait calls of its thread).
    assert_eq!(metric(&run, "sys.bpf.calls"), None);
    assert_eq!(metric(&run, "sys.waitid.calls"), None);
}

/// Seed report 001 on this machine: its example runs end to end, the report sets what
/// iozone claims, what its calls moved and what the device moved side by side, and
/// `flush-untimed` says why the small file's write figure is memory's (and only there).
#[test]
#[ignore = "needs root: loop device, ext4, memory cgroup, bpf(2)"]
fn the_seed_001_example_shows_the_three_views_and_the_finding() {
    common::require_root();
    let s = Scratch::new();
    let example = common::examples().join("seed001-active.toml");
    let f = s.write(
        "seed001.toml",
        &std::fs::read_to_string(&example)
            .unwrap()
            .replace("max = 5", "max = 3"),
    );
    let o = s.run(&["run", f.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let exp = s.latest();
    for c in exp["configs"].as_array().unwrap() {
        let label = c["label"].as_str().unwrap();
        for run in c["runs"].as_array().unwrap() {
            assert_eq!(run["status"], "ok", "{}", run["error"]);
            let fired = run["findings"]
                .as_array()
                .unwrap()
                .iter()
                .any(|f| f["check"] == "flush-untimed");
            assert_eq!(
                fired,
                label == "file=fits",
                "{label}: {:#}",
                run["findings"]
            );
            // The calls moved what iozone's passes wrote.
            let claimed: f64 = run["flowops"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|f| f["kind"] == "write")
                .map(|f| f["bytes"].as_f64().unwrap())
                .sum();
            assert_eq!(metric(run, "sys.write_bytes"), Some(claimed), "{label}");
        }
    }
    let html = s.report_html();
    let views = common::html_section(&html, "three-views");
    for label in ["file=fits", "file=3x-cache", "file=fits-e-I"] {
        assert!(views.contains(label), "{label}");
    }
    assert!(views.contains("192 MiB"), "{views}");
    assert!(html.contains("flush-untimed"));
}
