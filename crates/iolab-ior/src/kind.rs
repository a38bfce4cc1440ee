//! IOR's workload (docs/ior.md): `[workload] ior = { … }` in an experiment, `iolab ior` on the
//! command line; both read the options of the one table, [`crate::OPTIONS`]. Under MPI each
//! rank runs its share and [`IorTable`]'s `merge_ranks` puts the ranks' phases together.

use std::path::{Path, PathBuf};

use iolab_check::{Access, SyncScope};
use iolab_engine::stats::LatencyHistogram;
use iolab_metrics::{Better, MetricDef};
use iolab_store::{FlowopStats, Metric, RunRecord};
use iolab_util::option::{OptionDef, OptionValue};
use iolab_util::phrase;
use iolab_util::setting::{opt, Phrase, Worded};

use iolab_kind::input::read::Ctx;
use iolab_kind::input::tree::Entry;
use iolab_kind::record::{headline, metric, series, Totals};
use iolab_kind::table::{self, OptionTable, TableKind, TableRun, TableWorkload};
use iolab_kind::{Intent, LoadContext, Origin, RunCtx, RunFailure, Runs, UsageError};

use crate::merge::{self, RankPhase};
use crate::options::{IorPlan, IorSpec, IorSpecError, OPTIONS};
use crate::run::{self, IorError, IorResult, PhaseResult, PROGRESS_WIDTH};

/// The `[workload]` key.
pub const KEY: &str = "ior";

/// The metrics of each phase, named `write.…` and `read.…`.
macro_rules! phase_metrics {
    ($($p:literal: $P:literal),*) => {
        &[$(
            MetricDef::new(concat!($p, ".bytes"), "B", Some(Better::Higher), concat!($P, ": bytes"),
                concat!("bytes the ", $p, " phase moved (all ranks)")),
            MetricDef::new(concat!($p, ".ops"), "", Some(Better::Higher), concat!($P, ": transfers"),
                concat!("transfers of the ", $p, " phase (all ranks)")),
            MetricDef::new(concat!($p, ".mib_per_s"), "MiB/s", Some(Better::Higher), concat!($P, " bandwidth"),
                concat!("IOR's ", $p, " bandwidth: all bytes over the first rank's open to the last rank's close"))
                .headline(),
            MetricDef::new(concat!($p, ".ops_per_s"), "op/s", Some(Better::Higher), concat!($P, ": transfers/s"),
                concat!("the ", $p, " phase's transfers over the same time")),
            MetricDef::new(concat!($p, ".elapsed_s"), "s", None, concat!($P, ": elapsed"),
                concat!("the ", $p, " phase from the first rank's open to the last rank's close")),
            MetricDef::new(concat!($p, ".open_s"), "s", Some(Better::Lower), concat!($P, ": open"),
                concat!("the slowest rank's open of the ", $p, " phase")),
            MetricDef::new(concat!($p, ".close_s"), "s", Some(Better::Lower), concat!($P, ": close"),
                concat!("the slowest rank's close of the ", $p, " phase")),
            MetricDef::new(concat!($p, ".start_s"), "s", None, concat!($P, ": start"),
                concat!("the first open of the ", $p, " phase after its barrier's release")),
            MetricDef::new(concat!($p, ".end_s"), "s", None, concat!($P, ": end"),
                concat!("the last close of the ", $p, " phase after its barrier's release")),
            MetricDef::new(concat!($p, ".stonewall_ops"), "", None, concat!($P, ": transfers by the stonewall"),
                "transfers done by the stonewall's deadline (all of them without one)"),
            MetricDef::new(concat!($p, ".lat_mean_ns"), "ns", Some(Better::Lower), concat!($P, ": mean latency"),
                concat!("mean time of a ", $p, " transfer")),
            MetricDef::new(concat!($p, ".lat_p99_ns"), "ns", Some(Better::Lower), concat!($P, ": p99 latency"),
                concat!("99th percentile of a ", $p, " transfer's time (the worst rank's)")),
            MetricDef::new(concat!($p, ".lat_max_ns"), "ns", Some(Better::Lower), concat!($P, ": max latency"),
                concat!("the slowest ", $p, " transfer")),
            MetricDef::new(concat!($p, ".window_s"), "s", None, concat!($P, ": all-running window"),
                concat!("the time every rank was in the ", $p, " phase (latest start to earliest end)")),
            MetricDef::new(concat!($p, ".window_mib_per_s"), "MiB/s", Some(Better::Higher), concat!($P, ": all-running rate"),
                "bytes of all ranks inside that window over its length"),
            MetricDef::new(concat!($p, ".first_done_mib_per_s"), "MiB/s", Some(Better::Higher), concat!($P, ": first-done rate"),
                "bytes of all ranks until the first rank finished, over that time (elbencho's first done)"),
            MetricDef::new(concat!($p, ".last_done_mib_per_s"), "MiB/s", Some(Better::Higher), concat!($P, ": last-done rate"),
                "all bytes until the last rank finished, over that time (elbencho's last done; IOR's bandwidth)"),
            MetricDef::new(concat!($p, ".rank_min_mib_per_s"), "MiB/s", Some(Better::Higher), concat!($P, ": slowest rank"),
                "the slowest rank's bytes over its own open-to-close time"),
            MetricDef::new(concat!($p, ".rank_max_mib_per_s"), "MiB/s", Some(Better::Higher), concat!($P, ": fastest rank"),
                "the fastest rank's bytes over its own open-to-close time"),
            MetricDef::new(concat!($p, ".rank_mean_mib_per_s"), "MiB/s", Some(Better::Higher), concat!($P, ": mean rank"),
                "the mean of the ranks' own rates"),
        )*
        MetricDef::new("read.stamp_errors", "", Some(Better::Lower), "Read: foreign data",
            "transfers read whose data was not stamped with the offset and writer expected (0 when \
             the run wrote what it read)"),
        ]
    };
}

/// What ior runs record besides the common metrics.
pub const METRICS: &[MetricDef] = phase_metrics!("write": "Write", "read": "Read");

/// The ior kind.
pub static IOR: TableKind = TableKind {
    key: KEY,
    noun: "IOR runs",
    example: "ior = { … }",
    metrics: || METRICS,
    misplaced: |key| match key {
        "time" => "an ior run ends with its work or at its `stonewall`: remove it",
        _ => "remove it: give ior's options inside ior = { … }",
    },
    needs_target: true,
    resolve: |cx, entry, at| {
        read(cx, entry, at).map(|spec| iolab_kind::erase(IorWorkload::new(spec, Origin::File)))
    },
};

/// ior's one option table.
pub struct IorTable;

impl OptionTable for IorTable {
    type Spec = IorSpec;
    type Plan = IorPlan;
    type Error = IorSpecError;
    const KIND: &'static str = KEY;
    const TOOL: &'static str = "IOR";

    fn options() -> &'static [OptionDef<IorSpec>] {
        OPTIONS
    }

    fn defaults(dir: PathBuf, seed: u64) -> IorSpec {
        IorSpec::with_defaults(dir, seed)
    }

    fn validate(spec: &IorSpec) -> Result<IorPlan, IorSpecError> {
        spec.validate()
    }

    fn fault(e: &IorSpecError, given: &dyn Fn(&str) -> bool) -> &'static str {
        match e {
            IorSpecError::ZeroTransfer | IorSpecError::TransferNotWords(_) => "transfer",
            IorSpecError::ZeroBlock | IorSpecError::BlockNotMultiple { .. } => {
                if given("block") || !given("transfer") {
                    "block"
                } else {
                    "transfer"
                }
            }
            IorSpecError::ZeroSegments | IorSpecError::TooLarge => "segments",
            IorSpecError::RandomOneTransferPerBlock(_) => "random",
            IorSpecError::RandomReorderShared => {
                if given("reorder") {
                    "reorder"
                } else {
                    "random"
                }
            }
            IorSpecError::NothingToDo => "write",
            IorSpecError::WearOutWithoutStonewall => "wear_out",
            IorSpecError::PresetFixes { key, .. } => key,
            IorSpecError::BadFile(_) => "file",
        }
    }
}

/// Reads `ior = { … }` (see [`table::read`]) and checks its data against the target's size
/// (for one rank: under MPI every rank's target is its own or shared, as the file says).
fn read(cx: &mut Ctx, entry: &Entry, at: &LoadContext) -> Option<IorSpec> {
    let r = table::read::<IorTable>(cx, entry, at)?;
    let bytes = r.plan.bytes_per_rank();
    r.fits(
        cx,
        "block",
        bytes,
        at.target_bytes,
        "make the target larger, or the ior workload smaller (block × segments per rank)",
    )
    .then_some(r.spec)
}

/// A validated ior workload; the runner gives each run its directory and seed.
pub type IorWorkload = TableWorkload<IorTable>;

impl TableRun for IorTable {
    type Output = IorResult;
    type RunError = IorError;

    fn metrics() -> &'static [MetricDef] {
        METRICS
    }

    fn place(spec: &mut IorSpec, dir: &Path, seed: u64) {
        spec.dir = dir.to_path_buf();
        spec.seed = seed;
    }

    fn intent(plan: &IorPlan, base: Intent) -> Intent {
        intent(plan, base)
    }

    /// Each rank's files depend on its rank: the run names them.
    fn run_files(_plan: &IorPlan) -> Vec<PathBuf> {
        Vec::new()
    }

    fn run(plan: &IorPlan, run: &mut RunCtx<'_>) -> Result<IorResult, IorError> {
        run::run(plan, run)
    }

    /// A run's failure in the words of where the settings came from.
    fn failure(e: &IorError, spec: &IorSpec, origin: Origin) -> RunFailure {
        let word = |p: &Phrase| table::word::<IorTable>(origin, p);
        match e {
            IorError::Io { call, path, source } => {
                // The plan's `direct` and `write` are the spec's as given.
                let hint = if source.raw_os_error() == Some(libc::EINVAL) && spec.direct {
                    Some(phrase!(
                        "with {}, transfers must be multiples of the device's logical block size \
                         and the filesystem must take O_DIRECT: try {} 1m, or drop {}",
                        opt("direct"),
                        opt("transfer"),
                        opt("direct")
                    ))
                } else if source.kind() == std::io::ErrorKind::NotFound && !spec.write {
                    Some(phrase!(
                        "a read-only run reads the files a run with {} left: run one first",
                        opt("keep")
                    ))
                } else if source.raw_os_error() == Some(libc::ENOSPC) {
                    Some(phrase!(
                        "make {} or {} smaller, or the filesystem larger",
                        opt("block"),
                        opt("segments")
                    ))
                } else {
                    None
                };
                RunFailure {
                    bad_input: hint.is_some(),
                    hint: hint.as_ref().map(word),
                    ..RunFailure::failed(format!("{call} {}: {source}", path.display()))
                }
            }
            IorError::Short { path, offset } => RunFailure::failed(format!(
                "{} ends before offset {offset}: it holds less than this run reads",
                path.display()
            ))
            .hint(Some(word(&phrase!(
                "read what a run with the same {}, {} and {} wrote",
                opt("transfer"),
                opt("block"),
                opt("segments")
            )))),
            IorError::Interrupted => RunFailure {
                interrupted: true,
                ..RunFailure::failed("interrupted")
            },
            IorError::Ranks(f) => f.clone(),
        }
    }

    fn record(record: &mut RunRecord, out: &IorResult) {
        add_record(record, out);
    }

    fn merge_ranks(_spec: &IorSpec, ranks: &[RunRecord]) -> Vec<Metric> {
        merge::merge(ranks)
    }

    /// Each rank's files are named by its rank, as IOR's and mdtest's are.
    fn divides_among_ranks() -> bool {
        true
    }
}

/// `iolab ior`: the given option values over the table's defaults, validated (the messages
/// name the flags), as one run per iteration (IOR's `-i`) in `dir` with `seed`.
pub fn from_command_line(
    values: &[(&'static OptionDef<IorSpec>, OptionValue)],
    dir: &Path,
    seed: u64,
    iterations: u32,
) -> Result<Runs<IorResult>, UsageError> {
    let mut spec = IorSpec::with_defaults(dir.to_path_buf(), seed);
    for (o, v) in values {
        o.apply(&mut spec, *v);
    }
    // As table::from_values, with the advice kept as the hint.
    let plan = spec.validate().map_err(|e| {
        let u = UsageError::new(e.to_string());
        match e.advice() {
            Some(a) => u.hint(a.to_string()),
            None => u,
        }
    })?;
    let name = format!(
        "ior -t {} -b {} -s {}{}",
        plan.transfer,
        plan.block,
        plan.segments,
        if plan.file_per_process { " -F" } else { "" }
    );
    let mut runs = table::command_run::<IorTable>(spec, name, "iolab ior", dir.to_path_buf(), seed);
    // IOR's repetitions: the same configuration again, each its own run.
    let first = runs.plan.configs[0].workload.clone();
    let json = runs.plan.configs[0].workload_json.clone();
    if iterations > 1 {
        runs.plan.configs[0].label = "i1".into();
        for i in 2..=iterations {
            runs.plan.configs.push(iolab_kind::CommandConfig {
                label: format!("i{i}"),
                factors: serde_json::Map::new(),
                workload: first.clone(),
                workload_json: json.clone(),
            });
        }
    }
    Ok(runs)
}

/// One rank's phase for [`merge::aggregates`].
fn rank_phase<'a>(p: &PhaseResult, buckets: &'a [u64]) -> RankPhase<'a> {
    RankPhase {
        start: p.start_ns as f64 / 1e9,
        end: p.end_ns as f64 / 1e9,
        bytes: p.bytes as f64,
        progress: Some((buckets, PROGRESS_WIDTH.as_secs_f64())),
    }
}

/// Adds one rank's measurements to its record: the common metrics over its phases, each
/// phase's figures (its aggregates over this rank alone; the merge replaces them with all
/// ranks'), one progress series and one flowop row per phase.
pub fn add_record(record: &mut RunRecord, r: &IorResult) {
    let elapsed_ns = r.elapsed_ns();
    record.run.elapsed_ns = elapsed_ns;
    let mut all = LatencyHistogram::default();
    let (mut ops, mut bytes) = (0, 0);
    for p in r.phases() {
        all.merge(&p.latency);
        ops += p.ops;
        bytes += p.bytes;
    }
    headline(
        record,
        Totals {
            ops,
            bytes,
            elapsed_ns,
            latency: &all.summary(),
            cpu: r.cpu,
        },
    );
    for p in r.phases() {
        let name = p.access.name();
        let lat = p.latency.summary();
        let nan_if_none = |v: f64| if lat.count == 0 { f64::NAN } else { v };
        let secs = |ns: u64| ns as f64 / 1e9;
        let el = p.elapsed_ns();
        let mut named = vec![
            ("bytes", p.bytes as f64),
            ("ops", p.ops as f64),
            (
                "mib_per_s",
                iolab_kind::record::per_second(p.bytes as f64, el) / 1048576.0,
            ),
            (
                "ops_per_s",
                iolab_kind::record::per_second(p.ops as f64, el),
            ),
            ("elapsed_s", secs(el)),
            ("open_s", secs(p.open_ns)),
            ("close_s", secs(p.close_ns)),
            ("start_s", secs(p.start_ns)),
            ("end_s", secs(p.end_ns)),
            ("stonewall_ops", p.pairs_at_deadline as f64),
            ("lat_mean_ns", nan_if_none(lat.mean_ns)),
            ("lat_p99_ns", nan_if_none(lat.p99_ns as f64)),
            ("lat_max_ns", nan_if_none(lat.max_ns as f64)),
        ];
        if p.access == run::Access::Read {
            named.push(("stamp_errors", p.stamp_errors as f64));
        }
        record.metrics.extend(
            named
                .into_iter()
                .map(|(n, v)| metric(METRICS, &format!("{name}.{n}"), v)),
        );
        let buckets: Vec<u64> = p.progress.iter().map(|b| b.bytes).collect();
        record
            .metrics
            .extend(merge::aggregates(name, &[rank_phase(p, &buckets)]));
        record.series.push(series(
            name,
            PROGRESS_WIDTH.as_nanos() as u64,
            p.progress.iter().map(|b| (b.ops, b.bytes)),
        ));
        record.flowops.push(FlowopStats {
            name: name.into(),
            kind: name.into(),
            ops: p.ops,
            bytes: p.bytes,
            errors: 0,
            latency: lat,
            histogram: p.latency.buckets(),
            extra: serde_json::json!({
                "read": p.access == run::Access::Read,
                "write": p.access == run::Access::Write,
                "elapsed_ns": p.elapsed_ns(),
                "stonewalled": p.stonewalled,
            }),
        });
    }
}

/// What an ior run means to do, for the checks: it writes its files and reads them back.
pub fn intent(plan: &IorPlan, base: Intent) -> Intent {
    let access = match (plan.write, plan.read) {
        (true, true) => Access::Mixed,
        (true, false) => Access::Write,
        _ => Access::Read,
    };
    Intent {
        access: Some(access),
        o_direct: plan.direct,
        sync_requested: plan.fsync,
        sync_scope: plan.fsync.then_some(SyncScope::EndOfPass),
        writes_in_flight_per_file: Some(1),
        dataset_bytes: Some(plan.bytes_per_rank()),
        threads: Some(1),
        // Every byte is read once, after the write phase, with the page cache dropped in
        // between when the run drops caches: no read is served by an earlier one's pages.
        cache_purged_each_pass: base.caches_dropped,
        ..base
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_kind::table::testing;

    #[test]
    fn the_docs_list_every_option_of_the_one_table() {
        let doc = testing::doc("ior.md");
        for o in OPTIONS {
            let row = testing::row(&doc, o.name)
                .unwrap_or_else(|| panic!("docs/ior.md has no row for `{}`", o.name));
            if !o.original.is_empty() {
                assert!(row.contains(&format!("`{}`", o.original)), "{row}");
            }
        }
        for m in METRICS {
            let short = m
                .name
                .strip_prefix("write.")
                .or_else(|| m.name.strip_prefix("read."))
                .unwrap_or(&m.name);
            assert!(
                doc.contains(&format!("`{short}`")) || doc.contains(&format!("`{}`", m.name)),
                "docs/ior.md: {}",
                m.name
            );
        }
    }

    #[test]
    fn the_tables_getters_undo_its_appliers() {
        testing::get_undoes_apply::<IorTable>();
    }

    #[test]
    fn the_stored_spec_reads_back_as_the_spec() {
        let p = iolab_experiment::load_str(
            Path::new("i.toml"),
            "[sut]\ntarget = { kind = \"tmpfs\", size = \"1G\" }\n\
             [workload]\nior = { preset = \"ior-hard\", segments = 20, stonewall = \"2s\" }\n",
        )
        .unwrap();
        let spec = table::from_stored::<IorTable>(p.stored_workload(0)).unwrap();
        let plan = spec.validate().unwrap();
        assert_eq!((plan.transfer, plan.segments), (47008, 20));
        assert!(plan.wear_out && plan.reorder && !plan.file_per_process);
    }

    #[test]
    fn a_run_that_does_not_fit_the_target_is_refused_where_the_block_is() {
        let e = iolab_experiment::load_str(
            Path::new("i.toml"),
            "[sut]\ntarget = { kind = \"tmpfs\", size = \"1M\" }\n\
             [workload]\nior = { block = \"4m\" }\n",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("i.toml:4:") && e.contains("do not fit"), "{e}");
    }
}
