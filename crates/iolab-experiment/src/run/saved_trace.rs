//! `[procedure] save_block_trace = true`: where each run's request-level block trace goes.
//!
//! Traces live next to the results database, in `<DB>.traces/` (`results.db` →
//! `results.db.traces/`), one file per measured run named by its run id:
//! `run-<ID>.iolt`, iolab's trace format. The run id exists only once the run is stored,
//! so the tracer writes `.pending-<PID>-<N>.iolt` first; after the run is stored it is
//! renamed and its path recorded in the run (the `saved.path` of the `block trace`
//! flowop). Warm-up, failed and interrupted runs keep no trace. A `.pending-*` file left
//! behind is the trace of a run that iolab did not get to store (killed).
//!
//! Before the run is stored, the exact LRU miss-ratio curve of its trace is computed (one
//! pass, [`iolab_cachesim::mrc`]) and stored with it as `saved.mrc`, which the report draws.

use std::path::{Path, PathBuf};

use iolab_mrc::{even_sizes, exact_of_file};
use iolab_store::{ExperimentId, RunId, RunRecord, RunStatus, Store};
use serde_json::{json, Value};

/// Cache block size of the miss-ratio curve stored with a saved trace: the page size, the
/// block size of the kernel's caches.
pub const MRC_BLOCK_SIZE: u64 = 4096;

/// Cache sizes on that curve, evenly spaced up to the trace's footprint (its distinct
/// blocks).
pub const MRC_POINTS: u64 = 50;

/// The traces directory of a database, `None` for an in-memory one (`--no-db`).
pub fn traces_dir(db: &Path) -> Option<PathBuf> {
    if db.as_os_str() == ":memory:" || db.as_os_str().is_empty() {
        return None;
    }
    let mut name = db.file_name()?.to_os_string();
    name.push(".traces");
    Some(db.with_file_name(name))
}

/// Where the tracer writes the trace of the `n`th run of this process.
pub fn pending_path(dir: &Path, n: u64) -> PathBuf {
    dir.join(format!(".pending-{}-{n}.iolt", std::process::id()))
}

/// The final name of a run's trace.
pub fn run_path(dir: &Path, run: RunId) -> PathBuf {
    dir.join(format!("run-{run}.iolt"))
}

/// Whether the record's block trace was saved (the tracer may have failed to start).
pub fn was_saved(rec: &RunRecord) -> bool {
    rec.flowops
        .iter()
        .any(|f| f.kind == "trace" && f.extra.get("saved").is_some_and(|s| !s.is_null()))
}

/// Computes the exact LRU miss-ratio curve of the saved trace at `trace` and stores it in
/// the record's block-trace row as `saved.mrc`: `block_size`, `requests` (block requests),
/// `distinct_blocks`, and `points`, `[cache bytes, miss ratio]` at [`MRC_POINTS`] sizes.
pub fn add_mrc(rec: &mut RunRecord, trace: &Path) -> Result<(), String> {
    let mrc = exact_of_file(trace, MRC_BLOCK_SIZE)
        .map_err(|e| format!("no miss-ratio curve of the saved block trace: {e}"))?;
    let distinct = mrc.cold.round() as u64;
    let points: Vec<Value> = mrc
        .curve(&even_sizes(distinct.max(1), MRC_POINTS))
        .into_iter()
        .map(|(blocks, ratio)| json!([blocks * MRC_BLOCK_SIZE, ratio]))
        .collect();
    let curve = json!({
        "block_size": MRC_BLOCK_SIZE,
        "requests": mrc.requests.round() as u64,
        "distinct_blocks": distinct,
        "points": points,
    });
    for f in rec.flowops.iter_mut().filter(|f| f.kind == "trace") {
        if let Some(saved) = f.extra.get_mut("saved").and_then(Value::as_object_mut) {
            saved.insert("mrc".into(), curve.clone());
        }
    }
    Ok(())
}

/// Rename a stored run's pending trace to its run id and record the path; a message if
/// that failed (the run itself stays stored). A trace that cannot take its name is removed:
/// nothing would ever find it under its pending one.
pub fn keep(store: &mut Store, pending: &Path, run: RunId) -> Result<PathBuf, String> {
    let dir = pending.parent().unwrap_or(Path::new("."));
    let path = run_path(dir, run);
    std::fs::rename(pending, &path).map_err(|e| {
        let _ = std::fs::remove_file(pending);
        format!(
            "cannot rename the block trace {} to {}: {e}; the run is stored without it",
            pending.display(),
            path.display()
        )
    })?;
    let abs = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
    store
        .set_saved_trace_path(run, &abs)
        .map_err(|e| format!("block trace saved as {}, but {e}", abs.display()))?;
    Ok(abs)
}

/// The block trace of the experiment's last ok run that saved one: what `${previous.trace}`
/// of the stage after it stands for. The message says why there is none.
pub fn latest(store: &Store, experiment: ExperimentId) -> Result<PathBuf, String> {
    let fail = |e: iolab_store::StoreError| e.to_string();
    let ok: std::collections::BTreeSet<RunId> = store
        .runs(experiment)
        .map_err(fail)?
        .into_iter()
        .filter(|r| r.status == RunStatus::Ok)
        .map(|r| r.id)
        .collect();
    let flowops = store.experiment_flowops(experiment).map_err(fail)?;
    flowops
        .iter()
        .rev()
        .filter(|(id, _)| ok.contains(id))
        .find_map(|(_, fs)| {
            fs.iter().filter(|f| f.kind == "trace").find_map(|f| {
                f.extra
                    .pointer("/saved/path")
                    .and_then(|p| p.as_str())
                    .map(PathBuf::from)
            })
        })
        .filter(|p| p.exists())
        .ok_or_else(|| {
            format!(
                "experiment {} has no ok run with a saved block trace on disk",
                experiment.0
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::record::testing::record;
    use iolab_store::{FlowopStats, LatencyStats};
    use iolab_tracefile::{BlockRequest, Flags, IolabWriter, Op, TraceInfo};

    fn trace_row(extra: Value) -> FlowopStats {
        FlowopStats {
            name: "block trace".into(),
            kind: "trace".into(),
            ops: 5,
            bytes: 0,
            errors: 0,
            latency: LatencyStats::default(),
            histogram: Vec::new(),
            extra,
        }
    }

    /// A saved trace's curve is computed from the file and stored with the run's block-trace
    /// row, next to the rest of `saved`; hand-computed on five block requests.
    #[test]
    fn a_saved_trace_gets_its_miss_ratio_curve() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".pending-1-1.iolt");
        let mut w = IolabWriter::create(&path, &TraceInfo::default()).unwrap();
        let req = |offset: u64, len: u32, op: Op| BlockRequest {
            time_ns: 0,
            offset,
            len,
            latency_ns: Some(1000),
            op,
            flags: Flags::default(),
        };
        // Blocks 0, 1 2, (flush), 0, 1: three first accesses, then two at stack distance 2.
        for r in [
            req(0, 4096, Op::Write),
            req(4096, 8192, Op::Read),
            req(0, 0, Op::Flush),
            req(0, 4096, Op::Read),
            req(4096, 4096, Op::Read),
        ] {
            w.write(&r).unwrap();
        }
        w.finish().unwrap();

        let mut rec = record();
        rec.flowops
            .push(trace_row(json!({"saved": {"path": null, "requests": 5}})));
        assert!(was_saved(&rec));
        add_mrc(&mut rec, &path).unwrap();
        let saved = &rec.flowops[0].extra["saved"];
        assert_eq!(saved["requests"], 5, "the rest of `saved` stays");
        assert_eq!(
            saved["mrc"],
            json!({
                "block_size": 4096,
                "requests": 5,
                "distinct_blocks": 3,
                "points": [[4096, 1.0], [8192, 1.0], [12288, 0.6]],
            })
        );

        // A trace that cannot be read: a message, the record as it was.
        let mut rec = record();
        rec.flowops
            .push(trace_row(json!({"saved": {"requests": 0}})));
        let before = rec.clone();
        let e = add_mrc(&mut rec, &dir.path().join("missing.iolt")).unwrap_err();
        assert!(e.contains("no miss-ratio curve"), "{e}");
        assert_eq!(rec.flowops, before.flowops);
    }

    /// Found by failing iolab's system calls one at a time (crates/iolab/tests/syscall_faults.rs):
    /// when the rename failed, the pending trace stayed behind for ever.
    #[test]
    fn a_trace_that_cannot_be_renamed_is_removed() {
        let dir = tempfile::tempdir().unwrap();
        let pending = pending_path(dir.path(), 1);
        std::fs::write(&pending, b"trace").unwrap();
        // Its final name is taken by a directory that is not empty: rename(2) fails.
        let taken = run_path(dir.path(), RunId(7));
        std::fs::create_dir(&taken).unwrap();
        std::fs::write(taken.join("x"), b"").unwrap();
        let mut store = Store::open_in_memory().unwrap();
        let e = keep(&mut store, &pending, RunId(7)).unwrap_err();
        assert!(e.contains("cannot rename the block trace"), "{e}");
        assert!(!pending.exists(), "the pending trace is left: {e}");
        assert!(taken.join("x").exists(), "what had the name is untouched");
    }

    #[test]
    fn traces_go_next_to_the_database() {
        assert_eq!(
            traces_dir(Path::new("/x/results.db")),
            Some(PathBuf::from("/x/results.db.traces"))
        );
        assert_eq!(
            traces_dir(Path::new("iolab.db")),
            Some(PathBuf::from("iolab.db.traces"))
        );
        assert_eq!(traces_dir(Path::new(":memory:")), None);
        assert_eq!(
            run_path(Path::new("/x/r.db.traces"), RunId(17)),
            PathBuf::from("/x/r.db.traces/run-17.iolt")
        );
    }
}
