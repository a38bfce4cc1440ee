//! `iolab mdtest` with mdtest's own flags, and `[workload] mdtest = { … }` through `iolab run`:
//! mdtest's layout on disk, its summary table, the stored metrics, and errors that name the
//! flag or key at fault.

mod common;

use common::{assert_clean_failure, entries, run, stderr, stdout, Scratch};

#[test]
fn an_mdtest_line_runs_and_prints_mdtests_summary() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let o = run(&[
        "mdtest", "-n", "200", "-F", "-w", "3901", "-e", "3901", "-d", d, "-i", "2", "--no-db",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("SUMMARY rate: (of 2 iterations)"), "{out}");
    for op in ["File creation", "File stat", "File read", "File removal"] {
        assert!(out.contains(op), "{op}: {out}");
    }
    assert!(!out.contains("Directory creation"), "-F: files only: {out}");
    assert!(
        entries(dir.path()).is_empty(),
        "the remove phase leaves nothing"
    );
}

#[test]
fn create_only_leaves_the_files_where_mdtest_puts_them() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let o = run(&["mdtest", "-n", "5", "-u", "-F", "-C", "-d", d, "--no-db"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let tree = dir.path().join("test-dir.0-0").join("mdtest_tree.0.0");
    let mut want: Vec<String> = (0..5).map(|i| format!("file.mdtest.0.{i}")).collect();
    want.sort();
    assert_eq!(entries(&tree), want);
    // Then stat, read and remove them, as mdtest -T -E -r does.
    let o = run(&[
        "mdtest", "-n", "5", "-u", "-F", "-T", "-E", "-r", "-d", d, "--json", "--no-db",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(doc["schema"], "iolab.mdtest/1");
    let ops: Vec<&str> = doc["summary"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["phase"].as_str().unwrap())
        .collect();
    assert_eq!(ops, ["stat", "read", "remove"]);
    assert_eq!(doc["iterations"][0]["metrics"]["stat.items"], 5.0);
    assert!(entries(dir.path()).is_empty());
}

#[test]
fn bad_mdtest_lines_name_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    assert_clean_failure(
        &run(&["mdtest", "-n", "5", "-S", "-d", d, "--no-db"]),
        2,
        "'-S'",
    );
    let o = run(&["mdtest", "-n", "5", "-e", "10", "-d", d, "--no-db"]);
    assert_clean_failure(&o, 2, "-e 10 is more than -w 0");
    assert_clean_failure(
        &run(&["mdtest", "-n", "5", "-z", "2", "-d", d, "--no-db"]),
        2,
        "-z 2 is not supported yet",
    );
    assert!(entries(dir.path()).is_empty());
}

#[test]
fn an_experiment_runs_mdtest_and_stores_its_phases() {
    let s = Scratch::new();
    let file = s.directory_experiment(
        "md.toml",
        "name = \"md\"\n[sut]\ntarget = { kind = \"directory\", path = \"{target}\" }\n\
         [workload]\nmdtest = { items = 30, preset = \"mdtest-hard\" }\n\
         [procedure]\ndrop_caches = false\n",
    );
    let o = s.run(&["run", file.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = s.run(&["export", "--format", "csv"]);
    let text = stdout(&o);
    for m in [
        "create.agg_ops_per_s",
        "read.items",
        "remove.window_ops_per_s",
    ] {
        assert!(text.contains(m), "{m} is stored");
    }
    assert!(entries(&s.path().join("target")).is_empty());
}

#[test]
fn experiment_files_get_located_errors() {
    let s = Scratch::new();
    let file = s.directory_experiment(
        "md.toml",
        "name = \"bad\"\n[sut]\ntarget = { kind = \"directory\", path = \"{target}\" }\n\
         [workload]\nmdtest = { items = 30, read_bytes = \"4k\" }\n",
    );
    let o = s.run(&["run", file.to_str().unwrap()]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains(
            "`workload.mdtest.read_bytes` 4096 is more than `workload.mdtest.write_bytes` 0"
        ),
        "{err}"
    );
    assert!(err.contains("md.toml:5:"), "located: {err}");
}
