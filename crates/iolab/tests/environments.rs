//! Where a run executes (`[sut] environment`): the worker protocol, containers, VMs, and the
//! mistakes refused before anything is created (docs/environments.md).

mod common;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use common::*;
use serde_json::Value;

/// `iolab __worker` runs one run of an experiment file for the runner, over its standard
/// input and output, and answers with the run's record: what a container or a VM runs.
#[test]
fn a_worker_runs_one_run_and_answers_with_its_record() {
    let s = Scratch::new();
    let exp = s.directory_experiment(
        "w.toml",
        r#"
[sut]
target = { kind = "directory", path = "{target}" }
[workload]
micro = { access = "write", bs = "4k", size = "1m" }
[procedure]
drop_caches = false
"#,
    );
    let plan = iolab_experiment::load(&exp).unwrap();
    let dir = s.path().join("target");
    let request = iolab_experiment::run::worker::Request::new(
        &plan,
        iolab_experiment::run::worker::RunOf {
            config: 0,
            seed: 7,
            number: 1,
            repetition: 0,
        },
        &dir,
        None,
        false,
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_iolab"))
        .arg("__worker")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut to = child.stdin.take().unwrap();
    writeln!(to, "{}", serde_json::to_string(&request).unwrap()).unwrap();
    let mut from = BufReader::new(child.stdout.take().unwrap());
    let (mut hello, mut timed, mut record) = (Value::Null, false, None);
    let mut line = String::new();
    while from.read_line(&mut line).unwrap() > 0 {
        let msg: Value = serde_json::from_str(line.trim_end()).unwrap();
        if msg == "timed_start" {
            timed = true;
            writeln!(to, "\"go\"").unwrap();
        } else if let Some(h) = msg.get("hello") {
            hello = h.clone();
        } else if let Some(d) = msg.get("done") {
            record = Some(d["record"].as_str().unwrap().to_string());
            break;
        } else if let Some(f) = msg.get("failed") {
            panic!("the worker failed: {f}");
        }
        line.clear();
    }
    drop(to);
    assert!(child.wait().unwrap().success());
    assert!(
        timed,
        "the worker waited for the runner at the timed region's start"
    );
    assert_eq!(hello["pid"], child.id());
    assert_eq!(
        hello["kernel"].as_str(),
        Some(
            std::fs::read_to_string("/proc/sys/kernel/osrelease")
                .unwrap()
                .trim()
        )
    );
    let bytes = iolab_store::transfer::from_hex(&record.expect("a record")).unwrap();
    let rec = iolab_store::transfer::run_from_bytes(&bytes, s.path()).unwrap();
    let written: u64 = rec.flowops.iter().map(|f| f.bytes).sum();
    assert_eq!(written, 1 << 20, "{:?}", rec.flowops);
    assert_eq!((rec.run.seed, rec.run.repetition), (7, 0));
    assert!(rec
        .metrics
        .iter()
        .any(|m| m.name == "ops_per_s" && m.value > 0.0));
}

fn metric(run: &Value, name: &str) -> Option<f64> {
    run_metric(run, name)
}

fn finding(run: &Value, id: &str) -> Option<Value> {
    run["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["check"] == id)
        .cloned()
}

/// iolab's container cgroups on this machine (under every v1 hierarchy).
fn container_cgroups() -> Vec<String> {
    let mut found = Vec::new();
    for c in ["cpu", "cpuacct", "cpuset", "memory", "pids", "blkio"] {
        let root = std::path::Path::new("/sys/fs/cgroup").join(c);
        let mut stack = vec![root];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
                if e.file_type().is_ok_and(|t| t.is_dir()) {
                    let name = e.file_name().to_string_lossy().into_owned();
                    if name.starts_with("iolab-ctr-") {
                        found.push(e.path().display().to_string());
                    }
                    stack.push(e.path());
                }
            }
        }
    }
    found
}

/// A loop-image experiment with `environment` and `micro`, run once per configuration.
fn env_experiment(s: &Scratch, name: &str, environment: &str, micro: &str) -> std::path::PathBuf {
    s.write(
        &format!("{name}.toml"),
        &format!(
            r#"
name = "{name}"
seed = 1
[sut]
target = {{ kind = "loop_image", size = "256M" }}
fs = {{ kind = "ext4" }}
environment = {environment}
[workload]
micro = {micro}
[repetitions]
min = 1
max = 1
"#
        ),
    )
}

/// In a container the workload is PID 1 of its own namespace, with its own hostname and
/// only `lo`; what the container used is stored with the run; afterwards no cgroup, mount or
/// loop device is left.
#[test]
#[ignore = "needs root: loop devices, mounts, cgroups, namespaces"]
fn a_container_run_sees_only_itself_and_leaves_nothing() {
    require_root();
    let s = Scratch::new();
    let f = env_experiment(
        &s,
        "alone",
        r#"{ kind = "container", hostname = "bench-1" }"#,
        r#"{ access = "randread", bs = "4k", size = "8m" }"#,
    );
    let runs = s.run_ok_once(&f);
    let run = &runs[0].1;
    let env = &run["environment"]["environment"];
    assert_eq!(env["kind"], "container", "{env}");
    let seen = &env["worker"];
    assert_eq!(seen["pid"], 1, "{seen}");
    assert_eq!(seen["hostname"], "bench-1", "{seen}");
    assert_eq!(seen["net"], serde_json::json!(["lo"]), "{seen}");
    assert_eq!(
        env["container"]["namespaces"],
        serde_json::json!(["mnt", "pid", "net", "uts", "ipc"])
    );
    // The same CPU set as a host run of the experiment would get, recorded.
    assert!(env["cpuset"].is_string(), "{env}");
    assert!(
        metric(run, "container.cpu_s").is_some_and(|v| v > 0.0),
        "{run}"
    );
    assert!(metric(run, "ops").is_some_and(|v| v == 2048.0), "{run}");
    // Its cgroups are gone (other tests' containers may exist meanwhile).
    let mine: Vec<&str> = env["container"]["cgroups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["path"].as_str().unwrap())
        .collect();
    assert_eq!(mine.len(), 6, "{env}");
    let left = container_cgroups();
    assert!(
        mine.iter().all(|m| !left.iter().any(|l| l == m)),
        "left: {left:?}"
    );
}

/// A 10 MB/s write limit on the container's device holds O_DIRECT writes to it. (The
/// kernel lets a throttled group start a time slice with up to one slice's worth of credit,
/// about 0.1 s: over a 6 s region that is under 2 %.)
#[test]
#[ignore = "needs root: loop devices, mounts, blkio cgroups"]
fn a_container_write_limit_holds_direct_writes() {
    require_root();
    let s = Scratch::new();
    let f = env_experiment(
        &s,
        "limited",
        r#"{ kind = "container", io = { write_bps = 10000000 } }"#,
        r#"{ access = "write", sync = "direct", bs = "1m", size = "64m" }"#,
    );
    let runs = s.run_ok_once(&f);
    let run = &runs[0].1;
    let mb_per_s = metric(run, "bytes").unwrap() / metric(run, "elapsed_s").unwrap() / 1e6;
    assert!((9.0..=11.0).contains(&mb_per_s), "{mb_per_s} MB/s: {run}");
    let charged = metric(run, "throttle.charged_write_bytes").unwrap();
    assert!(charged >= (64 << 20) as f64, "{charged}");
    assert!(finding(run, "throttle-bypassed").is_none(), "{run}");
}

/// A memory limit the workload cannot live within fails the run with the reason (not a
/// hang); a CPU quota that throttled the workload is recorded and reported.
#[test]
#[ignore = "needs root: loop devices, mounts, cgroups"]
fn container_limits_are_enforced_and_reported() {
    require_root();
    let s = Scratch::new();
    let f = env_experiment(
        &s,
        "small",
        r#"{ kind = "container", memory = "24M" }"#,
        r#"{ access = "write", bs = "64m", size = "64m" }"#,
    );
    let o = s.run(&["run", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let run = &s.latest()["configs"][0]["runs"][0];
    assert_eq!(run["status"], "failed");
    let error = run["error"].as_str().unwrap();
    assert!(
        error.contains("memory limit (24 MiB) was reached"),
        "{error}"
    );
    assert!(s.mounts().is_empty() && s.loops().is_empty());

    let f = env_experiment(
        &s,
        "quota",
        r#"{ kind = "container", cpus = 0.1 }"#,
        r#"{ access = "write", bs = "4k", size = "8m", time = "1s", loops = 1000000 }"#,
    );
    let runs = s.run_ok_once(&f);
    let run = &runs[0].1;
    assert!(
        metric(run, "container.cpu_throttled_periods").is_some_and(|v| v > 0.0),
        "{run}"
    );
    let f = finding(run, "cpu-throttled").unwrap_or_else(|| panic!("{run}"));
    assert_eq!(f["evidence"]["cpu_quota_cpus"], 0.1, "{f}");
}

/// Mistakes about environments are found when the file is read: located, exit 2, nothing
/// created.
#[test]
fn bad_environments_are_refused_before_anything_is_made() {
    let s = Scratch::new();
    for (env, needle) in [
        (
            r#""jail""#,
            "`sut.environment.kind`: unknown environment \"jail\"",
        ),
        (
            r#"{ kind = "container", cpuset = "4000" }"#,
            "`sut.environment.cpuset`: CPU 4000 is not online",
        ),
        (
            r#"{ kind = "container", vcpus = 2 }"#,
            "`vcpus` is a setting of a vm",
        ),
        (
            r#"{ kind = "vm", cache = "fast" }"#,
            "unknown cache mode \"fast\"",
        ),
        (
            r#"{ kind = "vm", kernel = "/nonexistent/vmlinuz" }"#,
            "/nonexistent/vmlinuz is not a file",
        ),
    ] {
        let f = env_experiment(
            &s,
            "bad",
            env,
            r#"{ access = "read", bs = "4k", size = "1m" }"#,
        );
        let o = s.run(&["run", f.to_str().unwrap()]);
        assert_clean_failure(&o, 2, needle);
        assert!(
            stderr(&o).contains("bad.toml:"),
            "not located: {}",
            stderr(&o)
        );
        assert!(!s.state().join("mnt").exists() || s.mounts().is_empty());
        assert!(
            !s.db().exists(),
            "a database was made for a file with mistakes"
        );
    }
}

/// qemu and a guest kernel are here (scripts/test.sh installs qemu and runs
/// scripts/vm-kernel.sh as root); else the test says it did not run (under CI: fails).
fn vm_ready() -> bool {
    let qemu = std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("qemu-system-x86_64").is_file()));
    if !qemu {
        iolab_testkit::not_run(
            "qemu-system-x86_64 is not installed (apt-get install qemu-system-x86)",
        );
        return false;
    }
    if let Err(e) = iolab_vm::kernel::find(None) {
        iolab_testkit::not_run(format!(
            "no guest kernel: {e} (run scripts/vm-kernel.sh as root)"
        ));
        return false;
    }
    true
}

/// A guest boots from what iolab builds, runs a micro workload and then a fio job on its
/// virtio disk (the run's loop device), and its results, environment and findings land in the
/// host's database like any other run's; the guest powers off cleanly. Asserts results, never
/// a speed (TCG here).
#[test]
#[ignore = "needs root: loop devices, qemu (TCG here), a guest kernel"]
fn a_vm_runs_iolab_and_fio_on_its_virtio_disk() {
    require_root();
    if !vm_ready() {
        return;
    }
    let s = Scratch::new();
    s.write(
        "job.fio",
        "[global]\nioengine=psync\ndirect=1\nsize=16m\nfilename=fio.dat\n[rw]\nrw=randrw\nbs=4k\n",
    );
    let f = s.write(
        "vm.toml",
        r#"
name = "in a vm"
seed = 1
[sut]
target = { kind = "loop_image", size = "256M" }
fs = { kind = "ext4" }
environment = { kind = "vm", cache = "none", memory = "512M" }
[workload]
micro = { access = "randwrite", sync = "fdatasync", bs = "4k", size = "4m", time = "2s" }
[repetitions]
min = 1
max = 1

[[then]]
name = "fio in a vm"
[then.sut]
target = { kind = "loop_image", size = "256M" }
fs = { kind = "ext4" }
environment = { kind = "vm", cache = "unsafe" }
[then.workload]
exec = { tool = "fio", job = "job.fio", time = "2s" }
[then.repetitions]
min = 1
max = 1
"#,
    );
    let o = s.run(&["run", f.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(s.mounts().is_empty() && s.loops().is_empty());
    let list = s.run(&["list", "--json"]);
    let ids: Vec<String> = serde_json::from_slice::<Value>(&list.stdout).unwrap()["experiments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].to_string())
        .collect();
    assert_eq!(ids.len(), 2, "{}", stdout(&list));
    for (id, cache, metric_name) in [(&ids[0], "none", "ops"), (&ids[1], "unsafe", "ops")] {
        let o = s.run(&["export", id, "--format", "json"]);
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        let run = &v["configs"][0]["runs"][0];
        assert_eq!(run["status"], "ok", "{run}");
        let env = &run["environment"]["environment"];
        assert_eq!(env["kind"], "vm", "{env}");
        assert_eq!(env["vm"]["cache"], cache, "{env}");
        assert_eq!(env["power_off"]["clean"], true, "{env}");
        assert_eq!(env["worker"]["net"], serde_json::json!(["lo"]), "{env}");
        assert!(
            env["worker"]["kernel"]
                .as_str()
                .is_some_and(|k| !k.is_empty()),
            "{env}"
        );
        assert!(metric(run, metric_name).is_some_and(|v| v > 0.0), "{run}");
        let accel = env["vm"]["accelerator"].as_str().unwrap();
        assert_eq!(finding(run, "tcg").is_some(), accel == "tcg", "{run}");
        if cache == "unsafe" {
            assert!(finding(run, "vm-cache-mode").is_some(), "{run}");
        }
    }
}

/// A guest that does not power off within its bound is killed, and the run fails with the
/// reason (and the console's last lines); nothing is left.
#[test]
#[ignore = "needs root: loop devices, qemu, a guest kernel"]
fn a_guest_past_its_bound_is_killed_and_the_run_fails() {
    require_root();
    if !vm_ready() {
        return;
    }
    let s = Scratch::new();
    // A guest takes longer than 50 ms to boot, under KVM too: the bound ends it first.
    let f = env_experiment(
        &s,
        "hung",
        r#"{ kind = "vm", timeout = "50ms" }"#,
        r#"{ access = "read", bs = "4k", size = "1m" }"#,
    );
    let o = s.run(&["run", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let run = &s.latest()["configs"][0]["runs"][0];
    assert_eq!(run["status"], "failed");
    let error = run["error"].as_str().unwrap();
    assert!(error.contains("did not power off within 50ms"), "{error}");
    assert!(s.mounts().is_empty() && s.loops().is_empty());
    let qemus = Command::new("pgrep")
        .args(["-f", s.path().to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        qemus.stdout.is_empty(),
        "left running: {}",
        String::from_utf8_lossy(&qemus.stdout)
    );
}
