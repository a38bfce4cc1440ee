//! `[procedure] save_block_trace = true`: where each run's request-level block trace goes.
//!
//! Traces live next to the results database, in `<DB>.traces/` (`results.db` →
//! `results.db.traces/`), one file per measured run named by its run id:
//! `run-<ID>.iolt`, iolab's trace format. The run id exists only once the run is stored,
//! so the tracer writes `.pending-<PID>-<N>.iolt` first; after the run is stored it is
//! renamed and its path recorded in the run (the `saved.path` of the `block trace`
//! flowop). Warm-up, failed and interrupted runs keep no trace. A `.pending-*` file left
//! behind is the trace of a run that iolab did not get to store (killed).

use std::path::{Path, PathBuf};

use iolab_store::{ExperimentId, RunId, RunRecord, RunStatus, Store};

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

/// Rename a stored run's pending trace to its run id and record the path; a message if
/// that failed (the run itself stays stored).
pub fn keep(store: &mut Store, pending: &Path, run: RunId) -> Result<PathBuf, String> {
    let dir = pending.parent().unwrap_or(Path::new("."));
    let path = run_path(dir, run);
    std::fs::rename(pending, &path).map_err(|e| {
        format!(
            "cannot rename the block trace {} to {}: {e}",
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
