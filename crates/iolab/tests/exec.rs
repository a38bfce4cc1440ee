//! The `exec` kind end to end through the binary: another program run under the runner,
//! repeated by the stopping rule, its raw output stored and read again by `iolab reparse`,
//! and every way a tool can go wrong — exit non-zero, print nothing, print garbage, hang —
//! a failed run with the reason, nothing left behind.

mod common;

use std::path::{Path, PathBuf};

use common::{run_metric as metric, stderr, stdout, Scratch};
use serde_json::Value;

/// A generic tool: a shell script that prints a result line.
fn generic(script: &str, extra: &str) -> String {
    format!(
        r#"
name = "generic"
[sut]
target = {{ kind = "directory", path = "{{target}}" }}
[workload]
exec = {{ tool = "generic", command = ["sh", "-c", '{script}'], {extra}
          metrics = [{{ name = "score_per_s", unit = "op/s", better = "higher", regex = 'score: ([0-9.]+)' }}] }}
[repetitions]
min = 3
max = 3
[procedure]
drop_caches = false
"#
    )
}

fn run_file(s: &Scratch, f: &Path) -> std::process::Output {
    s.run(&["run", f.to_str().unwrap()])
}

/// The scratch directories the exec kind made and did not remove.
fn scratch_dirs() -> Vec<PathBuf> {
    std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&format!("iolab-exec-{}-", std::process::id())))
        })
        .collect()
}

#[test]
fn a_generic_tool_is_repeated_stored_and_read_again() {
    let s = Scratch::new();
    // The score depends on the run: the values differ, the parser reads each.
    let f = s.directory_experiment(
        "e.toml",
        &generic(r#"echo warming up; echo "score: $((100 + IOLAB_RUN))""#, ""),
    );
    let o = run_file(&s, &f);
    assert!(o.status.success(), "{}", stderr(&o));
    let exp = s.latest();
    let runs = exp["configs"][0]["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 3);
    let mut scores: Vec<f64> = runs
        .iter()
        .map(|r| {
            assert_eq!(r["status"], "ok", "{}", r["error"]);
            metric(r, "score_per_s").unwrap()
        })
        .collect();
    scores.sort_by(f64::total_cmp);
    assert_eq!(scores, [100.0, 101.0, 102.0]);
    // The export carries what the tool printed, and how its run went.
    let outputs = runs[0]["outputs"]
        .as_array()
        .expect("the raw outputs exported");
    let names: Vec<&str> = outputs.iter().filter_map(|o| o["name"].as_str()).collect();
    assert_eq!(names, ["exec.json", "stdout", "stderr"]);
    let stdout_text = outputs[1]["text"].as_str().unwrap();
    assert!(
        stdout_text.starts_with("warming up\nscore: 10"),
        "{stdout_text}"
    );
    let meta: Value = serde_json::from_str(outputs[0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(meta["tool"], "generic");
    assert_eq!(meta["exit_code"], 0);
    // The raw output was kept: reading it again changes nothing.
    let o = s.run(&["reparse", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["schema"], "iolab.reparse/1");
    let verdicts: Vec<&str> = v["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["verdict"].as_str().unwrap())
        .collect();
    assert_eq!(verdicts, ["same", "same", "same"]);
    let o = s.run(&["reparse"]);
    assert!(
        stdout(&o).contains("3 run(s) read again: 3 unchanged"),
        "{}",
        stdout(&o)
    );
    assert!(scratch_dirs().is_empty(), "{:?}", scratch_dirs());
}

/// A parser that reads the same output differently says so, run by run, and `--apply`
/// stores the new values. The generic adapter's parser is its configuration: the stored
/// experiment's regex is changed as a fixed parser would change.
#[test]
fn a_changed_parser_reports_what_changed_and_applies_it() {
    let s = Scratch::new();
    let f = s.directory_experiment("e.toml", &generic(r#"echo "score: 7 other: 9""#, ""));
    let o = run_file(&s, &f);
    assert!(o.status.success(), "{}", stderr(&o));
    let id = s.latest()["experiment"]["id"].as_i64().unwrap();
    let changed = change_stored_spec(&s.db(), id, "score: ([0-9.]+)", "other: ([0-9.]+)");
    assert_eq!(changed, 1, "the stored spec was changed");
    let o = s.run(&["reparse"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("score_per_s: 7 -> 9"), "{text}");
    assert!(text.contains("3 with changed values"), "{text}");
    assert!(text.contains("add --apply"), "{text}");
    let o = s.run(&["reparse", "--apply"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let runs = s.latest()["configs"][0]["runs"].clone();
    for r in runs.as_array().unwrap() {
        assert_eq!(metric(r, "score_per_s"), Some(9.0));
    }
    let o = s.run(&["reparse", "--json"]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["runs"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["verdict"] == "same"));
}

/// Replaces `from` by `to` in experiment `id`'s stored specification; the number of rows
/// changed.
fn change_stored_spec(db: &Path, id: i64, from: &str, to: &str) -> usize {
    // The spec is JSON: a backslash of the regex is doubled in it.
    let json = |s: &str| s.replace('\\', "\\\\");
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.execute(
        "UPDATE experiments SET spec_json = replace(spec_json, ?1, ?2) WHERE id = ?3",
        rusqlite::params![json(from), json(to), id],
    )
    .unwrap()
}

/// Each way a tool's run can go wrong is a failed run with the reason, never a number, and
/// the experiment says so (exit 1); nothing is left behind.
#[test]
fn a_tool_that_fails_prints_nothing_prints_garbage_or_hangs_fails_its_run() {
    let s = Scratch::new();
    let pidfile = s.path().join("hung.pid");
    for (name, script, extra, reason) in [
        (
            "exit",
            "echo boom >&2; exit 3",
            "",
            "exited with code 3: boom",
        ),
        ("nothing", "true", "", "matched nothing"),
        ("garbage", "echo score: 1.2.3.x", "", "not a finite number"),
        (
            "hang",
            &format!("echo $$ > {}; exec sleep 60", pidfile.display()),
            "timeout = \"1s\",",
            "ran past its timeout",
        ),
    ] {
        let f = s.directory_experiment(&format!("{name}.toml"), &generic(script, extra));
        let o = run_file(&s, &f);
        assert_eq!(o.status.code(), Some(1), "{name}: {}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
        let run = &s.latest()["configs"][0]["runs"][0];
        assert_eq!(run["status"], "failed", "{name}");
        let err = run["error"].as_str().unwrap();
        assert!(err.contains(reason), "{name}: {err}");
        assert_eq!(metric(run, "score_per_s"), None, "{name}");
    }
    // The hung tool's process group was killed.
    let pid: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists(),
        "the hung tool {pid} is still running"
    );
    assert!(scratch_dirs().is_empty(), "{:?}", scratch_dirs());
    // Its output was kept with the failed run: reparse reads it again.
    let o = s.run(&["reparse", "--json"]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["runs"][0]["verdict"], "still-invalid", "{v}");
}

#[test]
fn bad_input_is_located_before_anything_runs() {
    let s = Scratch::new();
    for (name, text, code, needle) in [
        (
            "adapter",
            r#"exec = { tool = "fiio" }"#,
            2,
            "`exec.tool`: unknown value \"fiio\"",
        ),
        (
            "placeholder",
            r#"exec = { tool = "generic", command = ["echo"], args = ["{directory}"] }"#,
            2,
            "unknown placeholder `{directory}`",
        ),
        (
            "key",
            r#"exec = { tool = "generic", command = ["echo"], jobb = "x" }"#,
            2,
            "unknown key `jobb` in `exec`",
        ),
        (
            "program",
            r#"exec = { tool = "generic", command = ["no-such-tool-iolab"] }"#,
            2,
            "`no-such-tool-iolab`",
        ),
        (
            "jobfile",
            r#"exec = { tool = "fio", job = "no-such-job.fio" }"#,
            2,
            "no-such-job.fio: no such file",
        ),
    ] {
        let f = s.directory_experiment(
            &format!("{name}.toml"),
            &format!(
                "name = \"x\"\n[sut]\ntarget = {{ kind = \"directory\", path = \"{{target}}\" }}\n\
                 [workload]\n{text}\n"
            ),
        );
        let o = run_file(&s, &f);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(code), "{name}: {err}");
        assert!(err.contains(needle), "{name}: {err}");
        assert!(
            err.contains(&format!("{name}.toml:5:")),
            "{name}: located: {err}"
        );
        assert!(!err.contains("panicked"), "{err}");
    }
    // Nothing was stored.
    let o = s.run(&["list", "--json"]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
    assert!(
        v["experiments"].as_array().is_none_or(|a| a.is_empty()),
        "{v}"
    );
}

/// The raw outputs named `name` of the latest experiment's ok runs, by run id.
fn stored_outputs(db: &Path, name: &str) -> Vec<(i64, Vec<u8>)> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut st = conn
        .prepare(
            "SELECT o.run_id, o.content FROM run_outputs o JOIN runs r ON r.id = o.run_id \
             WHERE o.name = ?1 AND r.status = 'ok' ORDER BY o.run_id",
        )
        .unwrap();
    st.query_map([name], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// The exported run with id `id`.
fn run_by_id(exp: &Value, id: i64) -> Value {
    exp["configs"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["runs"].as_array().unwrap().iter())
        .find(|r| r["id"] == id)
        .cloned()
        .unwrap()
}

/// fio under the runner, on tmpfs and with O_DIRECT on a loop device attached with direct
/// I/O: repeated by the stopping rule, and each run's operations and bytes are exactly
/// what fio's own JSON (kept with the run) says.
#[test]
#[ignore = "needs root: tmpfs, loop device, ext4; fio"]
fn fio_runs_under_the_runner_and_its_numbers_are_fios() {
    common::require_root();
    iolab_testkit::require_tool("fio");
    let s = Scratch::new();
    let f = s.write(
        "fio.toml",
        r#"
name = "fio"
[factors]
where = [
  { name = "tmpfs", target = { kind = "tmpfs", size = "128M" }, fs = { kind = "tmpfs" }, direct = 0 },
  { name = "loop", target = { kind = "loop_image", size = "256M", direct_io = true }, fs = { kind = "ext4" }, direct = 1 },
]
[sut]
target = "${where.target}"
fs = "${where.fs}"
[workload]
exec = { tool = "fio", time = "2s", job = """
[randread]
rw=randread
bs=4k
size=32m
ioengine=psync
direct=${where.direct}
filename=fio.dat
""" }
[repetitions]
min = 2
max = 3
target = 0.5
"#,
    );
    let o = run_file(&s, &f);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(s.mounts().is_empty() && s.loops().is_empty());
    let exp = s.latest();
    for c in exp["configs"].as_array().unwrap() {
        let ok = c["runs"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["status"] == "ok")
            .count();
        assert!(ok >= 2, "{}: {ok} ok runs", c["label"]);
    }
    let jsons = stored_outputs(&s.db(), "file:fio.json");
    assert!(jsons.len() >= 4, "{} fio.json kept", jsons.len());
    for (id, content) in jsons {
        let v: Value = serde_json::from_slice(&content).unwrap();
        let (mut ios, mut bytes) = (0.0, 0.0);
        for j in v["jobs"].as_array().unwrap() {
            ios += j["read"]["total_ios"].as_f64().unwrap();
            bytes += j["read"]["io_bytes"].as_f64().unwrap();
        }
        let run = run_by_id(&exp, id);
        assert!(ios > 0.0);
        assert_eq!(metric(&run, "ops"), Some(ios), "run {id}");
        assert_eq!(metric(&run, "bytes"), Some(bytes), "run {id}");
        assert_eq!(
            metric(&run, "read_iops").map(f64::round),
            v["jobs"][0]["read"]["iops"].as_f64().map(f64::round)
        );
    }
    // What fio printed was kept: read again, it says the same.
    let o = s.run(&["reparse", "--json"]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let runs = v["runs"].as_array().unwrap();
    assert!(runs.len() >= 4);
    assert!(runs.iter().all(|r| r["verdict"] == "same"), "{v}");
}

/// iperf3 with its server on loopback and across a pair of network namespaces iolab
/// creates: both measured, repeated and stored; no namespace, no server left.
#[test]
#[ignore = "needs root: network namespaces; iperf3"]
fn iperf3_runs_over_loopback_and_between_two_namespaces() {
    common::require_root();
    iolab_testkit::require_tool("iperf3");
    let s = Scratch::new();
    let f = s.write(
        "iperf3.toml",
        r#"
name = "iperf3"
[factors]
network = ["loopback", "namespaces"]
[sut]
target = { kind = "tmpfs", size = "16M" }
[workload]
exec = { tool = "iperf3", time = "1s", network = "${network}" }
[repetitions]
min = 2
max = 2
metric = "received_bits_per_s"
"#,
    );
    let o = run_file(&s, &f);
    assert!(o.status.success(), "{}", stderr(&o));
    let exp = s.latest();
    for c in exp["configs"].as_array().unwrap() {
        let runs = c["runs"].as_array().unwrap();
        assert_eq!(runs.len(), 2, "{}", c["label"]);
        for r in runs {
            assert_eq!(r["status"], "ok", "{}", r["error"]);
            assert!(metric(r, "received_bits_per_s").unwrap() > 0.0);
        }
    }
    let ns = std::process::Command::new("ip")
        .args(["netns", "list"])
        .output()
        .unwrap();
    assert!(!stdout(&ns).contains("iolab-"), "left: {}", stdout(&ns));
    let tcp = std::fs::read_to_string("/proc/net/tcp").unwrap();
    let port = format!(":{:04X} ", 5301);
    assert!(
        !tcp.lines()
            .any(|l| l.contains(&port) && l.split_whitespace().nth(3) == Some("0A")),
        "a server still listens on 5301"
    );
}

/// sysbench fileio: prepare, the timed run, cleanup, under the runner.
#[test]
#[ignore = "needs root: tmpfs; sysbench"]
fn sysbench_fileio_runs_with_its_prepare_and_cleanup() {
    common::require_root();
    iolab_testkit::require_tool("sysbench");
    let s = Scratch::new();
    let f = s.write(
        "sysbench.toml",
        r#"
name = "sysbench"
[sut]
target = { kind = "tmpfs", size = "128M" }
[workload]
exec = { tool = "sysbench", test = "fileio", file_test_mode = "rndrw", file_total_size = "16M", time = "1s" }
[repetitions]
min = 2
max = 3
target = 0.5
"#,
    );
    let o = run_file(&s, &f);
    assert!(o.status.success(), "{}", stderr(&o));
    let exp = s.latest();
    let runs = exp["configs"][0]["runs"].as_array().unwrap();
    assert!(runs.len() >= 2);
    for r in runs {
        assert_eq!(r["status"], "ok", "{}", r["error"]);
        assert!(metric(r, "reads_per_s").unwrap() > 0.0);
        assert!(metric(r, "writes_per_s").unwrap() > 0.0);
    }
    assert_eq!(stored_outputs(&s.db(), "stdout").len(), runs.len());
}

/// A tool no package registry has: `$VAR` (its path), else `name` on PATH; `None` (and the
/// test part listed as not run, with how to get it) when neither.
fn built_tool(var: &str, name: &str, how: &str) -> Option<String> {
    if let Some(p) = std::env::var_os(var) {
        return Some(p.to_string_lossy().into_owned());
    }
    if iolab_testkit::has_tool(name) {
        return Some(name.to_string());
    }
    iolab_testkit::tool_absent(name, &format!("{how}; or set {var}"));
    None
}

/// iozone, filebench and UnixBench (built from source, not in any registry) under the
/// runner where they are present: a valid run each, stored with its raw output.
#[test]
#[ignore = "needs root: tmpfs; iozone, filebench, UnixBench where present"]
fn tools_built_from_source_run_live_where_present() {
    common::require_root();
    let s = Scratch::new();
    let mut cases: Vec<(&str, String, &str)> = Vec::new();
    if let Some(p) = built_tool(
        "IOLAB_IOZONE",
        "iozone",
        "make linux-AMD64 in iozone3's src/current",
    ) {
        cases.push((
            "iozone",
            format!(r#"exec = {{ tool = "iozone", program = "{p}", tests = [0, 1], size = "8m", record = "64k", flush = true }}"#),
            "iozone_write_mib_per_s",
        ));
    }
    if let Some(p) = built_tool(
        "IOLAB_FILEBENCH",
        "filebench",
        "build github.com/filebench/filebench",
    ) {
        cases.push((
            "filebench",
            format!(
                r#"exec = {{ tool = "filebench", program = "{p}", time = "2s", workload = """
set $dir=/tmp
define fileset name=f,path=$dir,size=64k,entries=100,dirwidth=10,prealloc=100
define process name=p,instances=1 {{
  thread name=t,memsize=1m,instances=1 {{
    flowop openfile name=open,filesetname=f,fd=1
    flowop readwholefile name=read,fd=1,iosize=64k
    flowop closefile name=close,fd=1
  }}
}}
run 2
""" }}"#
            ),
            "filebench_read_ops_per_s",
        ));
    }
    if let Some(dir) = built_tool(
        "IOLAB_UNIXBENCH",
        "Run",
        "UnixBench: make in byte-unixbench's UnixBench/ and give that directory",
    ) {
        cases.push((
            "unixbench",
            format!(r#"exec = {{ tool = "unixbench", path = "{dir}", tests = ["syscall"] }}"#),
            "unixbench_syscall",
        ));
    }
    for (name, workload, metric) in cases {
        let f = s.write(
            &format!("{name}.toml"),
            &format!(
                "name = \"{name}\"\n[sut]\ntarget = {{ kind = \"tmpfs\", size = \"256M\" }}\n\
                 [workload]\n{workload}\n[repetitions]\nmin = 1\nmax = 1\n"
            ),
        );
        let o = run_file(&s, &f);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        let exp = s.latest();
        let run = &exp["configs"][0]["runs"][0];
        assert_eq!(run["status"], "ok", "{name}: {}", run["error"]);
        assert!(metric_of(run, metric) > 0.0, "{name}: {metric}");
        assert!(!stored_outputs(&s.db(), "stdout").is_empty(), "{name}");
    }
    let shm: Vec<_> = std::fs::read_dir("/tmp")
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("filebench-shm-")
        })
        .collect();
    assert!(
        shm.is_empty(),
        "filebench's shared memory file was left behind"
    );
}

fn metric_of(run: &Value, name: &str) -> f64 {
    metric(run, name).unwrap_or_else(|| panic!("no {name}"))
}

/// Seed report 001 with the real iozone: its write figure without `-e`, on a file that fits
/// in the page cache, claims bytes the device had not written when iozone exited, and
/// `flush-untimed` says so; with `-e -I` on a loop device attached with direct I/O the
/// device wrote them all within the run, and it is silent.
#[test]
#[ignore = "needs root: loop device, ext4; iozone where present"]
fn iozones_untimed_write_figure_is_flagged_and_e_i_is_not() {
    common::require_root();
    let Some(p) = built_tool(
        "IOLAB_IOZONE",
        "iozone",
        "make linux-AMD64 in iozone3's src/current",
    ) else {
        return;
    };
    let s = Scratch::new();
    let f = s.write(
        "iozone.toml",
        &format!(
            r#"
name = "iozone -e -I"
[factors]
mode = [
  {{ name = "plain", flush = false, direct = false }},
  {{ name = "e-I", flush = true, direct = true }},
]
[sut]
target = {{ kind = "loop_image", size = "512M", direct_io = true }}
fs = {{ kind = "ext4" }}
tunables = {{ "vm.dirty_expire_centisecs" = 3000, "vm.dirty_background_ratio" = 50 }}
[workload]
exec = {{ tool = "iozone", program = "{p}", tests = [0], size = "64m", record = "64k",
          flush = "${{mode.flush}}", direct = "${{mode.direct}}" }}
[repetitions]
min = 1
max = 1
"#
        ),
    );
    let o = run_file(&s, &f);
    assert!(o.status.success(), "{}", stderr(&o));
    let exp = s.latest();
    for c in exp["configs"].as_array().unwrap() {
        let run = &c["runs"][0];
        assert_eq!(run["status"], "ok", "{}", run["error"]);
        let fired = run["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["check"] == "flush-untimed");
        let plain = c["label"] == "mode=plain";
        assert_eq!(fired, plain, "{}: {:#}", c["label"], run["findings"]);
    }
}

/// bonnie++ (Debian's) under the runner: its CSV line read, a phase too fast to measure left
/// unset rather than 0, the block figures stored; and its raw output read again unchanged.
#[test]
#[ignore = "needs root: loop device, ext4; bonnie++"]
fn bonnie_runs_under_the_runner() {
    common::require_root();
    iolab_testkit::require_tool("bonnie++");
    let s = Scratch::new();
    let f = s.write(
        "bonnie.toml",
        r#"
name = "bonnie++"
[sut]
target = { kind = "loop_image", size = "2G", direct_io = true }
fs = { kind = "ext4" }
[workload]
# Large enough for the block phases to last the 0.5 s bonnie++ needs to print a rate; the
# file phases (a few files) are too fast and print +++++.
exec = { tool = "bonnie", size = 1024, ram = 512, files = 1, fast = true }
[repetitions]
min = 1
max = 1
"#,
    );
    let o = run_file(&s, &f);
    assert!(o.status.success(), "{}", stderr(&o));
    let exp = s.latest();
    for r in exp["configs"][0]["runs"].as_array().unwrap() {
        assert_eq!(r["status"], "ok", "{}", r["error"]);
        assert!(metric(r, "bonnie_put_block_mib_per_s").unwrap() > 0.0);
        // -f: no per-char phases, and the file phases too fast to time: nothing stored for
        // them (never 0).
        assert_eq!(metric(r, "bonnie_putc_mib_per_s"), None);
        assert_eq!(metric(r, "bonnie_seq_stat_per_s"), None);
    }
    assert_eq!(
        exp["experiment"]["spec"]["repetitions"]["metric"],
        "bonnie_put_block_mib_per_s"
    );
    let o = s.run(&["reparse", "--json"]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        v["runs"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["verdict"] == "same"),
        "{v}"
    );
}

/// iolab killed (SIGKILL) while a tool runs leaves nothing that `iolab recover` cannot put
/// back. Found by bench/soak.sh: fio outlived iolab with its files open on the run's
/// filesystem (its jobs in sessions of their own, out of reach of a signal to the tool's
/// process group), so recover could only unmount it lazily and not detach its loop device;
/// and the run's scratch directory (`{out}`) stayed in $TMPDIR for good. Now recover kills
/// what the run left on iolab's filesystem, and the scratch directory is journalled.
#[test]
#[ignore = "needs root: mounts a tmpfs"]
fn a_tool_killed_with_iolab_leaves_nothing_after_recover() {
    common::require_root();
    let s = Scratch::new();
    let tmp = s.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    // A process in a session of its own, as fio's jobs are, with its cwd on the run's
    // filesystem and a file open there; its pid written where the test finds it.
    let f = s.write(
        "killed.toml",
        r#"
name = "killed"
[sut]
target = { kind = "tmpfs", size = "16M" }
fs = { kind = "tmpfs" }
[workload]
exec = { tool = "generic", command = ["sh", "-c", 'setsid sh -c "exec sleep 300 >held" & echo $! >pid.tmp; mv pid.tmp pid; sleep 300'],
         metrics = [{ name = "score_per_s", unit = "op/s", better = "higher", regex = 'score: ([0-9.]+)' }] }
[repetitions]
min = 2
max = 2
"#,
    );
    let mut child = s
        .cmd()
        .env("TMPDIR", &tmp)
        .args(["run", f.to_str().unwrap()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let _hang = iolab_testkit::timeout(120);
    let pid_file = loop {
        assert!(child.try_wait().unwrap().is_none(), "iolab ended early");
        let found = s
            .mounts()
            .iter()
            .map(|m| m.mount_point.join("pid"))
            .find(|p| p.exists());
        if let Some(p) = found {
            break p;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let left: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_eq!(
        common::entries(&tmp).len(),
        1,
        "the run's scratch directory"
    );
    // iolab itself, not the `timeout` it runs under.
    let kids = std::fs::read_to_string(format!("/proc/{0}/task/{0}/children", child.id())).unwrap();
    let iolab: i32 = kids.split_whitespace().next().unwrap().parse().unwrap();
    // SAFETY: kill(2) on the iolab this test started.
    unsafe { libc::kill(iolab, libc::SIGKILL) };
    child.wait().unwrap();
    let o = s.run(&["recover"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("lazily"), "{}", stderr(&o));
    assert!(s.mounts().is_empty(), "left mounted: {:?}", s.mounts());
    assert!(
        common::entries(&tmp).is_empty(),
        "left in TMPDIR: {:?}",
        common::entries(&tmp)
    );
    // Killed (it may be a zombie a moment, until init reaps it).
    let state = std::fs::read_to_string(format!("/proc/{left}/status")).unwrap_or_default();
    assert!(
        state.is_empty() || state.contains("State:\tZ"),
        "the tool's process {left} outlived recover: {state}"
    );
}
