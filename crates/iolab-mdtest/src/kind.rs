//! mdtest's phases (docs/mdtest.md): `[workload] mdtest = { … }` in an experiment, `iolab
//! mdtest` on the command line; both read the one option table, [`crate::OPTIONS`].

use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use iolab_check::{Access, SyncScope};
use iolab_metrics::{Better, MetricDef};
use iolab_store::{FlowopStats, Metric, RunRecord};
use iolab_util::option::OptionDef;
use iolab_util::setting::{Phrase, Setting, Words};
use serde_json::json;

use iolab_kind::input::read::Ctx;
use iolab_kind::input::tree::Entry;
use iolab_kind::record::{headline, metric, series, Totals};
use iolab_kind::table::{self, OptionTable, TableKind, TableRun, TableWorkload};
use iolab_kind::{Intent, LoadContext, Origin, RunCtx, RunFailure};

use crate::merge;
use crate::options::{MdtestPlan, MdtestSpec, MdtestSpecError, OPTIONS};
use crate::run::{run_mdtest, MdtestError, MdtestResult, Phase, BUCKET_NS};

/// The `[workload]` key.
pub const KEY: &str = "mdtest";

/// A metric's name and what it is, per phase: (suffix, unit, better, title, description).
type PhaseMetric = (
    &'static str,
    &'static str,
    Option<Better>,
    &'static str,
    &'static str,
);

/// What each rank records of each phase it runs (under MPI the merge makes them all ranks').
const RANK: &[PhaseMetric] = &[
    ("items", "", None, "items", "items of the phase (all ranks' under MPI)"),
    ("ops_per_s", "op/s", Some(Better::Higher), "rate",
     "the phase's items over its time from the barrier's release to the last item (under MPI \
      all ranks' over the first start to the last end: mdtest's rate)"),
    ("elapsed_s", "s", None, "time",
     "the time from the release of the phase's barrier to the last item (the last rank's under \
      MPI)"),
    ("start_s", "s", None, "rank start",
     "when this rank's phase started, from the release of the phase's barrier: the release itself (0), every rank's origin"),
    ("end_s", "s", None, "rank end",
     "when this rank ended its last item, from the release of the phase's barrier"),
];

/// A phase's aggregates over the ranks ([`merge::aggregates`]; a single rank's own).
const AGGREGATE: &[PhaseMetric] = &[
    ("agg_ops_per_s", "op/s", Some(Better::Higher), "aggregate rate",
     "all ranks' items over the first rank's start to the last rank's end (mdtest's rate; last-done)"),
    ("last_done_s", "s", None, "wall time",
     "the first rank's start to the last rank's end"),
    ("window_s", "s", None, "all-running window",
     "the time every rank was running: the last start to the first end"),
    ("window_ops_per_s", "op/s", Some(Better::Higher), "window rate",
     "all ranks' items inside the all-running window over its length"),
    ("first_done_s", "s", None, "first done",
     "the first start to the first rank's end"),
    ("first_done_ops_per_s", "op/s", Some(Better::Higher), "first-done rate",
     "all ranks' items until the first rank ended over that time (elbencho's first-done)"),
    ("rank_min_ops_per_s", "op/s", Some(Better::Higher), "slowest rank",
     "the lowest of the ranks' own rates"),
    ("rank_max_ops_per_s", "op/s", Some(Better::Higher), "fastest rank",
     "the highest of the ranks' own rates"),
    ("rank_mean_ops_per_s", "op/s", Some(Better::Higher), "mean rank rate",
     "the mean of the ranks' own rates"),
];

/// What the create phases add with a stonewall.
const STONEWALL: &[PhaseMetric] = &[
    (
        "stonewall_items",
        "",
        None,
        "items at the stonewall",
        "items this rank had done when the stonewall hit (all of them when it did not)",
    ),
    (
        "stonewall_s",
        "s",
        None,
        "stonewall time",
        "when the stonewall hit this rank, from the phase's barrier (NaN when it did not)",
    ),
];

/// What mdtest runs record besides the common metrics: per phase, each rank's own figures
/// and the aggregates. Names are `PHASE.SUFFIX` (`create.agg_ops_per_s`).
pub static METRICS: LazyLock<Vec<MetricDef>> = LazyLock::new(|| {
    let mut v = Vec::new();
    for p in Phase::ALL {
        let own = if matches!(p, Phase::DirCreate | Phase::Create) {
            STONEWALL
        } else {
            &[]
        };
        for &(suffix, unit, better, title, what) in RANK.iter().chain(AGGREGATE).chain(own) {
            let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
            let d = MetricDef::new(
                leak(format!("{}.{suffix}", p.name())),
                unit,
                better,
                leak(format!("{}: {title}", p.title())),
                leak(format!("{} (mdtest's `{}`)", what, p.title())),
            );
            let main = suffix == "agg_ops_per_s"
                && matches!(p, Phase::Create | Phase::Stat | Phase::Remove);
            v.push(if main { d.headline() } else { d });
        }
    }
    v
});

/// The mdtest kind.
pub static MDTEST: TableKind = TableKind {
    key: KEY,
    noun: "mdtest runs",
    example: "mdtest = { … }",
    metrics: || &METRICS,
    misplaced: |key| match key {
        "time" => {
            "mdtest runs its items to the end: remove it (a `stonewall` stops the create phase)"
        }
        _ => "remove it: give mdtest's options inside mdtest = { … }",
    },
    needs_target: true,
    resolve: |cx, entry, at| read(cx, entry, at),
};

/// mdtest's one option table.
pub struct MdtestTable;

impl OptionTable for MdtestTable {
    type Spec = MdtestSpec;
    type Plan = MdtestPlan;
    type Error = MdtestSpecError;
    const KIND: &'static str = KEY;
    const TOOL: &'static str = "mdtest";

    fn options() -> &'static [OptionDef<MdtestSpec>] {
        OPTIONS
    }

    fn defaults(dir: PathBuf, seed: u64) -> MdtestSpec {
        MdtestSpec::with_defaults(dir, seed)
    }

    fn validate(spec: &MdtestSpec) -> Result<MdtestPlan, MdtestSpecError> {
        spec.validate()
    }

    fn fault(e: &MdtestSpecError, _given: &dyn Fn(&str) -> bool) -> &'static str {
        e.key()
    }
}

fn read(
    cx: &mut Ctx,
    entry: &Entry,
    at: &LoadContext,
) -> Option<std::sync::Arc<dyn iolab_kind::DynWorkload>> {
    let r = table::read::<MdtestTable>(cx, entry, at)?;
    Some(iolab_kind::erase(MdtestWorkload::new(r.spec, Origin::File)))
}

/// mdtest's flag for an option, where it has one.
pub fn mdtest_flag(name: &str) -> Option<&'static str> {
    match name {
        "phases" => Some("-C/-T/-E/-r"),
        _ => OPTIONS
            .iter()
            .find(|o| o.name == name && !o.original.is_empty())
            .map(|o| o.original),
    }
}

struct MdtestWords;

impl Words for MdtestWords {
    fn setting(&self, s: Setting) -> String {
        match s {
            Setting::Dir => "-d".into(),
            Setting::Option(n) => mdtest_flag(n).map_or_else(
                || iolab_util::setting::CommandLine.setting(s),
                str::to_string,
            ),
            s => iolab_util::setting::CommandLine.setting(s),
        }
    }
}

/// `phrase` in the words of an mdtest command line (`iolab mdtest -n … -u …`): options
/// named by mdtest's flags.
pub fn in_mdtest_flags(phrase: &Phrase) -> String {
    phrase.render(&MdtestWords)
}

/// A validated mdtest workload; the runner gives each run its directory and seed. One from an
/// mdtest command line is [`Origin::CommandLine`]'s: its spec was validated in mdtest's flags
/// ([`in_mdtest_flags`]) before, and the run's directory and seed do not change that.
pub type MdtestWorkload = TableWorkload<MdtestTable>;

impl TableRun for MdtestTable {
    type Output = MdtestResult;
    type RunError = MdtestError;

    fn metrics() -> &'static [MetricDef] {
        &METRICS
    }

    /// A run's answer is each phase's rate: the common throughput mixes the phases' items
    /// over the whole run, and its bandwidth is 0 for empty files (mdtest-easy).
    fn common_headline() -> bool {
        false
    }

    fn place(spec: &mut MdtestSpec, dir: &Path, seed: u64) {
        spec.dir = dir.to_path_buf();
        spec.seed = seed;
    }

    fn intent(plan: &MdtestPlan, base: Intent) -> Intent {
        intent(plan, base)
    }

    /// Its test directory, named by the run once made.
    fn run_files(_plan: &MdtestPlan) -> Vec<PathBuf> {
        Vec::new()
    }

    fn run(plan: &MdtestPlan, run: &mut RunCtx<'_>) -> Result<MdtestResult, MdtestError> {
        run_mdtest(plan, run)
    }

    fn failure(e: &MdtestError, _spec: &MdtestSpec, _origin: Origin) -> RunFailure {
        match e {
            MdtestError::Interrupted => RunFailure {
                interrupted: true,
                ..RunFailure::failed("interrupted")
            },
            e => RunFailure::failed(e.to_string()).hint(e.hint().map(str::to_string)),
        }
    }

    fn record(record: &mut RunRecord, out: &MdtestResult) {
        add_record(record, out);
    }

    fn merge_ranks(_spec: &MdtestSpec, ranks: &[RunRecord]) -> Vec<Metric> {
        merge::merge(ranks)
    }

    /// Each rank's files are named by its rank, as IOR's and mdtest's are.
    fn divides_among_ranks() -> bool {
        true
    }
}

/// Adds a run's measurements on this rank: the common metrics over all phases, each
/// phase's own figures, its progress series, its aggregates over this rank alone (under MPI
/// the merge of every rank's replaces them), and one flowop row per phase.
pub fn add_record(record: &mut RunRecord, r: &MdtestResult) {
    record.run.elapsed_ns = r.elapsed_ns;
    let ops = r.phases.iter().map(|p| p.items).sum();
    let bytes = r.phases.iter().map(|p| p.bytes).sum();
    headline(
        record,
        Totals {
            ops,
            bytes,
            elapsed_ns: r.elapsed_ns,
            latency: &Default::default(),
            cpu: r.usage.cpu(),
        },
    );
    for p in &r.phases {
        let name = p.phase.name();
        let mut put = |k: &str, v: f64| {
            record
                .metrics
                .push(metric(&METRICS, &format!("{name}.{k}"), v))
        };
        put("items", p.items as f64);
        put("ops_per_s", p.ops_per_s());
        put("elapsed_s", (p.end_ns - p.start_ns) as f64 / 1e9);
        put("start_s", p.start_ns as f64 / 1e9);
        put("end_s", p.end_ns as f64 / 1e9);
        if matches!(p.phase, Phase::DirCreate | Phase::Create) {
            let (at, when) = p.stonewall.map_or((p.items as f64, f64::NAN), |(n, t)| {
                (n as f64, t as f64 / 1e9)
            });
            put("stonewall_items", at);
            put("stonewall_s", when);
        }
        record
            .series
            .push(series(name, BUCKET_NS, p.buckets.iter().map(|&n| (n, 0))));
        record.flowops.push(FlowopStats {
            name: name.into(),
            kind: flowop_kind(p.phase).into(),
            ops: p.items,
            bytes: p.bytes,
            errors: 0,
            latency: Default::default(),
            histogram: Vec::new(),
            extra: json!({ "elapsed_ns": p.end_ns, "title": p.phase.title() }),
        });
    }
    // The aggregates over this rank alone; the figures it has already recorded stay.
    let own = merge::merge(std::slice::from_ref(record));
    for m in own {
        if !record.metrics.iter().any(|r| r.name == m.name) {
            record.metrics.push(m);
        }
    }
}

/// The flowop kind a phase is stored under (filebench's names).
fn flowop_kind(p: Phase) -> &'static str {
    match p {
        Phase::DirCreate => "makedir",
        Phase::DirRemove => "removedir",
        Phase::Create => "createfile",
        Phase::DirStat | Phase::Stat => "statfile",
        Phase::Read => "read",
        Phase::Remove => "deletefile",
    }
}

/// What an mdtest run means to do, for the checks: metadata operations on small files.
pub fn intent(plan: &MdtestPlan, base: Intent) -> Intent {
    Intent {
        access: Some(Access::Mixed),
        sync_requested: plan.sync,
        sync_scope: Some(if plan.sync {
            SyncScope::EachWrite
        } else {
            SyncScope::Never
        }),
        writes_in_flight_per_file: Some(1),
        dataset_bytes: Some(plan.items * plan.write_bytes),
        threads: Some(1),
        // Each file is read once, after the page cache was dropped (when the run drops
        // caches): no read is served by an earlier one's pages.
        cache_purged_each_pass: base.caches_dropped,
        ..base
    }
}

/// The test directory a run in `dir` makes.
pub fn test_dir(dir: &Path) -> PathBuf {
    dir.join(crate::run::TEST_DIR)
}
