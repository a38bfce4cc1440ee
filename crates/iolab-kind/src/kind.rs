//! The traits a workload kind implements: [`Kind`] reads the kind's `[workload]` keys (with
//! located errors) into a validated [`Workload`]; a workload says what it means to do (for
//! the checks), which metrics it records besides the common ones, and runs once, giving back
//! its kind's own typed result ([`Workload::Output`]).
//!
//! The runner holds workloads of any kind as [`DynWorkload`]s: [`erase`] makes one whose
//! output is dropped (an experiment stores what it needs in the run's record), and
//! [`Outputs::wrap`] one whose outputs a command keeps, by run, for its formats.

use std::fmt::{self, Debug};
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use iolab_metrics::MetricDef;
use iolab_store::{Metric, RunRecord};
use serde_json::{Map, Value};

use crate::input::read::Ctx;
use crate::input::tree::{Entry, Table};
use crate::intent::Intent;
use crate::run::{RunCtx, RunFailure};

/// A kind of workload, as experiment files name it.
pub trait Kind: Sync {
    /// The `[workload]` key that selects it; an experiment gives exactly one.
    fn key(&self) -> &'static str;
    /// What its workloads are called in messages (plural: `file-list replays`).
    fn noun(&self) -> &'static str;
    /// How to write it, for hints: `KIND = { … }`.
    fn example(&self) -> &'static str;
    /// The other `[workload]` keys it reads.
    fn keys(&self) -> &'static [&'static str] {
        &[]
    }
    /// Advice for a key another kind reads, given with this one (default: remove it).
    fn misplaced_hint(&self, _key: &str) -> Option<&'static str> {
        None
    }
    /// The metrics its runs record besides [`iolab_metrics::COMMON`].
    fn metrics(&self) -> &'static [MetricDef];
    /// Whether its runs do I/O in the target's directory (default). A kind that does not (a
    /// simulation) may be given without `[sut]`: its runs then get the experiment file's
    /// directory, untouched, and the page cache is not dropped unless the file asks.
    fn needs_target(&self) -> bool {
        true
    }
    /// Reads one configuration's substituted `[workload]` table (`entry` is its own key),
    /// reporting every mistake in `cx`; `None` after an error.
    fn resolve(
        &self,
        cx: &mut Ctx,
        section: &Table,
        entry: &Entry,
        at: &LoadContext,
    ) -> Option<Arc<dyn DynWorkload>>;
}

/// What a kind may need to know about the rest of the configuration.
pub struct LoadContext<'a> {
    /// The experiment file's directory: relative workload paths start there.
    pub base: &'a Path,
    /// The target's capacity when known (tmpfs and loop image sizes).
    pub target_bytes: Option<u64>,
    /// The page-cache cap of the configuration (`sut.cache_limit`), if any.
    pub cache_limit: Option<u64>,
    /// Whether iolab mounts the target and its files survive a remount (`Some(false)` for
    /// a directory or a tmpfs; `None` when the target is not known).
    pub remountable: Option<bool>,
    /// Whether the target keeps its files in memory (a tmpfs: `Some(true)`), where the page
    /// cache cannot be emptied; `None` when not known (a directory).
    pub memory_fs: Option<bool>,
}

/// A validated workload, ready to run any number of times.
pub trait Workload: Debug + Send + Sync + 'static {
    /// What one run gives back besides its record: the kind's own result, for the formats
    /// of its command.
    type Output: Send + 'static;
    /// The `[workload]` key of its kind.
    fn kind(&self) -> &'static str;
    /// The metrics its runs record besides [`iolab_metrics::COMMON`]: its kind's, or fewer,
    /// or (a tool whose metrics its configuration declares) its own.
    fn metrics(&self) -> &[MetricDef];
    /// What it means to do, for the checks (before running, in `iolab check`, and after).
    fn intent(&self, base: Intent) -> Intent;
    /// The timed region's planned length, when it is known beforehand.
    fn planned_duration(&self) -> Option<Duration>;
    /// Whether every run gives the same values (a simulation): the stopping rule then
    /// accepts one run as exact and says so (default: no).
    fn deterministic(&self) -> bool {
        false
    }
    /// The metric the stopping rule watches when the experiment names none, if not
    /// throughput: another tool that counts no operations (iperf3's bits per second).
    fn stop_metric(&self) -> Option<&str> {
        None
    }
    /// Whether the common headline metrics (throughput, bandwidth, latency) are headline
    /// ones for this kind too (default: yes). A simulation's throughput is its speed and it
    /// has no latency: its own results are what tables and charts show.
    fn common_headline(&self) -> bool {
        true
    }
    /// The common metrics in this kind's words: definitions that replace the common ones of
    /// the same name (default: none). A SQLite run's operations are transactions, so its
    /// rate is `txn/s`, not `op/s`.
    fn common_as(&self) -> &'static [MetricDef] {
        &[]
    }
    /// What this workload does that needs root, in the words of the runner's list ("dropping
    /// the page cache between passes (…)"), checked before anything is touched (default:
    /// nothing).
    fn needs_root(&self) -> Option<String> {
        None
    }
    /// Fields added to the workload's entry in the stored experiment (e.g. the resolved
    /// path of a workload file).
    fn describe(&self) -> Map<String, Value> {
        Map::new()
    }
    /// Runs once in `run.dir`, adding its measurements to `run.record`.
    fn run(&self, run: &mut RunCtx<'_>) -> Result<Self::Output, RunFailure>;
    /// Under MPI, the run's metrics as a whole from every rank's record (rank order): they
    /// replace the runner's of the same name (default: none). The runner adds counts up,
    /// takes rates over the wall time from the first rank's start to the last one's end and
    /// keeps every rank's values (`crate::ranks`); a kind that times its own phases adds
    /// them up here.
    fn merge_ranks(&self, _ranks: &[RunRecord]) -> Vec<Metric> {
        Vec::new()
    }
    /// Whether the kind shares the work among MPI ranks itself, naming each rank's files
    /// (IOR, mdtest): its ranks then get the one target directory. Otherwise (default) every
    /// rank runs the whole workload in a directory of its own under the target
    /// (`rank-N`), so that ranks sharing a filesystem do not write each other's files.
    fn divides_among_ranks(&self) -> bool {
        false
    }
}

/// A shared workload is the workload: a command that keeps a handle on its workload (for
/// its display) runs the same one.
impl<W: Workload> Workload for Arc<W> {
    type Output = W::Output;
    fn kind(&self) -> &'static str {
        (**self).kind()
    }
    fn metrics(&self) -> &[MetricDef] {
        (**self).metrics()
    }
    fn intent(&self, base: Intent) -> Intent {
        (**self).intent(base)
    }
    fn planned_duration(&self) -> Option<Duration> {
        (**self).planned_duration()
    }
    fn deterministic(&self) -> bool {
        (**self).deterministic()
    }
    fn stop_metric(&self) -> Option<&str> {
        (**self).stop_metric()
    }
    fn common_headline(&self) -> bool {
        (**self).common_headline()
    }
    fn common_as(&self) -> &'static [MetricDef] {
        (**self).common_as()
    }
    fn needs_root(&self) -> Option<String> {
        (**self).needs_root()
    }
    fn describe(&self) -> Map<String, Value> {
        (**self).describe()
    }
    fn run(&self, run: &mut RunCtx<'_>) -> Result<Self::Output, RunFailure> {
        (**self).run(run)
    }
    fn merge_ranks(&self, ranks: &[RunRecord]) -> Vec<Metric> {
        (**self).merge_ranks(ranks)
    }
    fn divides_among_ranks(&self) -> bool {
        (**self).divides_among_ranks()
    }
}

/// A workload of any kind, as the runner holds it (see [`Workload`] for each method).
pub trait DynWorkload: Debug + Send + Sync {
    fn kind(&self) -> &'static str;
    fn metrics(&self) -> &[MetricDef];
    fn intent(&self, base: Intent) -> Intent;
    fn planned_duration(&self) -> Option<Duration>;
    fn deterministic(&self) -> bool;
    fn stop_metric(&self) -> Option<&str>;
    fn common_headline(&self) -> bool;
    fn common_as(&self) -> &'static [MetricDef];
    fn needs_root(&self) -> Option<String>;
    fn describe(&self) -> Map<String, Value>;
    /// Runs once; the output goes where the workload was made to send it.
    fn run(&self, run: &mut RunCtx<'_>) -> Result<(), RunFailure>;
    fn merge_ranks(&self, ranks: &[RunRecord]) -> Vec<Metric>;
    fn divides_among_ranks(&self) -> bool;
}

/// `workload` for the runner, its outputs dropped.
pub fn erase<W: Workload>(workload: W) -> Arc<dyn DynWorkload> {
    Arc::new(Erased {
        workload,
        keep: None,
    })
}

/// The outputs of a command's runs, kept by run number ([`RunCtx::number`]) for its formats.
pub struct Outputs<O>(Arc<Mutex<Vec<(u64, O)>>>);

impl<O> Clone for Outputs<O> {
    fn clone(&self) -> Self {
        Outputs(Arc::clone(&self.0))
    }
}

impl<O: Send + 'static> Default for Outputs<O> {
    fn default() -> Self {
        Outputs(Arc::new(Mutex::new(Vec::new())))
    }
}

impl<O: Send + 'static> Outputs<O> {
    /// `workload` for the runner, its outputs kept here.
    pub fn wrap<W: Workload<Output = O>>(&self, workload: W) -> Arc<dyn DynWorkload> {
        Arc::new(Erased {
            workload,
            keep: Some(self.clone()),
        })
    }

    /// The output of run `number`, taken out.
    pub fn take(&self, number: u64) -> Option<O> {
        let mut v = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let i = v.iter().position(|(n, _)| *n == number)?;
        Some(v.swap_remove(i).1)
    }

    fn put(&self, number: u64, output: O) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((number, output));
    }
}

struct Erased<W: Workload> {
    workload: W,
    keep: Option<Outputs<W::Output>>,
}

impl<W: Workload> Debug for Erased<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.workload.fmt(f)
    }
}

impl<W: Workload> DynWorkload for Erased<W> {
    fn kind(&self) -> &'static str {
        self.workload.kind()
    }
    fn metrics(&self) -> &[MetricDef] {
        self.workload.metrics()
    }
    fn intent(&self, base: Intent) -> Intent {
        self.workload.intent(base)
    }
    fn planned_duration(&self) -> Option<Duration> {
        self.workload.planned_duration()
    }
    fn deterministic(&self) -> bool {
        self.workload.deterministic()
    }
    fn stop_metric(&self) -> Option<&str> {
        self.workload.stop_metric()
    }
    fn common_headline(&self) -> bool {
        self.workload.common_headline()
    }
    fn common_as(&self) -> &'static [MetricDef] {
        self.workload.common_as()
    }
    fn needs_root(&self) -> Option<String> {
        self.workload.needs_root()
    }
    fn describe(&self) -> Map<String, Value> {
        self.workload.describe()
    }
    fn run(&self, run: &mut RunCtx<'_>) -> Result<(), RunFailure> {
        let number = run.number;
        let output = self.workload.run(run)?;
        if let Some(keep) = &self.keep {
            keep.put(number, output);
        }
        Ok(())
    }
    fn merge_ranks(&self, ranks: &[RunRecord]) -> Vec<Metric> {
        self.workload.merge_ranks(ranks)
    }
    fn divides_among_ranks(&self) -> bool {
        self.workload.divides_among_ranks()
    }
}
