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
    let request =
        iolab_experiment::run::worker::Request::new(&plan, 0, 7, 1, 0, &dir, None, false).unwrap();
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
