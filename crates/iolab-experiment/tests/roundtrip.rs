//! Round trips of an experiment's stored spec (`experiments.spec_json`): what the results
//! database keeps of a plan reads back as the same plan. `iolab run --resume` finds its
//! experiment by comparing the stored spec with the file loaded again, and every
//! configuration's stored `[workload]` section is what its kind reads again (`from_stored`,
//! `iolab rerun`): a spec that changed on the way would refuse to resume or rerun something
//! else.

use std::path::{Path, PathBuf};

use iolab_experiment::{load, ExperimentPlan};
use iolab_kind::kind::LoadContext;
use iolab_store::{Store, Timestamp};
use serde_json::Value;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn tomls(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries {
        let p = e.expect("a readable directory entry").path();
        if p.is_dir() {
            tomls(&p, out);
        } else if p.extension().is_some_and(|x| x == "toml") {
            out.push(p);
        }
    }
}

/// The spec as the database gives it back after storing it.
fn stored_spec(plan: &ExperimentPlan) -> Value {
    let mut store = Store::open_in_memory().unwrap();
    let id = store
        .create_experiment(&plan.new_experiment(
            plan.source.display().to_string(),
            Timestamp(1),
            "test".into(),
            serde_json::json!({}),
        ))
        .unwrap();
    store.experiment(id).unwrap().spec
}

/// Reads configuration `i`'s stored `[workload]` section again with its kind, as a stored
/// experiment is read back (relative paths start at the stored source's directory, as
/// `iolab reparse` reads them), and checks that what the kind adds describes it the same.
fn reread_workload(plan: &ExperimentPlan, spec: &Value, i: usize) -> Result<(), String> {
    let stored = &spec["configs"][i]["workload"];
    let kind = iolab_kinds::kinds()
        .find(|k| stored.get(k.key()).is_some())
        .ok_or_else(|| format!("no kind for {stored}"))?;
    let source = Path::new(spec["source"].as_str().expect("a stored source"));
    let at = LoadContext {
        base: source.parent().expect("the source's directory"),
        target_bytes: None,
        remountable: None,
        memory_fs: None,
        cache_limit: None,
    };
    let w = iolab_kind::input::reread(stored, kind.key(), |cx, t, e| kind.resolve(cx, t, e, &at))
        .map_err(|e| format!("does not read again: {e}\n--- stored: {stored}"))?;
    assert_eq!(w.kind(), plan.configs[i].workload.kind());
    for (k, v) in w.describe() {
        if stored.get(&k) != Some(&v) {
            return Err(format!(
                "`{k}` reads back as {v}, stored {:?}",
                stored.get(&k)
            ));
        }
    }
    Ok(())
}

#[test]
fn every_experiment_file_round_trips_through_the_database() {
    let root = repo_root();
    let mut files = Vec::new();
    tomls(&root.join("examples"), &mut files);
    tomls(
        &root.join("crates/iolab-experiment/tests/good_files"),
        &mut files,
    );
    files.sort();
    let mut loaded = 0;
    let mut failures = Vec::new();
    for f in &files {
        let Ok(plan) = load(f) else {
            // Not an experiment file (a tool's own configuration), or one that needs what
            // this machine may not have: the loaders' own tests cover those.
            continue;
        };
        loaded += 1;
        let spec = stored_spec(&plan);
        if spec != plan.resolved {
            failures.push(format!("{}: the stored spec differs", f.display()));
            continue;
        }
        let again = load(f).unwrap();
        if again.resolved != spec {
            failures.push(format!("{}: loading again gives another spec", f.display()));
        }
        for i in 0..plan.configs.len() {
            if let Err(e) = reread_workload(&plan, &spec, i) {
                failures.push(format!("{}: config {i}: {e}", f.display()));
            }
        }
    }
    assert!(
        loaded >= 15,
        "only {loaded} of {} files loaded",
        files.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
