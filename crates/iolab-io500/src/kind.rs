//! IO500 as a workload kind (docs/io500.md): `[workload] io500 = { … }` in an experiment,
//! `iolab io500` on the command line; both read the one option table, [`crate::OPTIONS`].
//! Under MPI each rank runs its share and [`Io500Table`]'s `merge_ranks` scores the whole.

use std::path::{Path, PathBuf};

use iolab_check::{Access, SyncScope};
use iolab_metrics::MetricDef;
use iolab_store::{Metric, RunRecord};
use iolab_util::option::{OptionDef, OptionValue};

use iolab_kind::input::read::Ctx;
use iolab_kind::input::tree::Entry;
use iolab_kind::record::{headline, metric, series, Totals};
use iolab_kind::table::{self, OptionTable, TableKind, TableRun, TableWorkload};
use iolab_kind::{Intent, LoadContext, Origin, RunCtx, RunFailure, Runs, UsageError};

use crate::merge;
use crate::options::{Io500Plan, Io500Spec, Io500SpecError, OPTIONS};
use crate::phases::{Group, METRICS};
use crate::run::{self, Io500Error, Io500Result};

/// The `[workload]` key.
pub const KEY: &str = "io500";

/// The io500 kind.
pub static IO500: TableKind = TableKind {
    key: KEY,
    noun: "IO500 runs",
    example: "io500 = { … }",
    metrics: || &METRICS,
    misplaced: |key| match key {
        "time" => "an io500 run's write phases end at its `stonewall`: remove it",
        _ => "remove it: give io500's options inside io500 = { … }",
    },
    needs_target: true,
    resolve: |cx, entry, at| {
        read(cx, entry, at).map(|spec| iolab_kind::erase(Io500Workload::new(spec, Origin::File)))
    },
};

/// io500's one option table.
pub struct Io500Table;

impl OptionTable for Io500Table {
    type Spec = Io500Spec;
    type Plan = Io500Plan;
    type Error = Io500SpecError;
    const KIND: &'static str = KEY;
    const TOOL: &'static str = "IO500";

    fn options() -> &'static [OptionDef<Io500Spec>] {
        OPTIONS
    }

    fn defaults(dir: PathBuf, seed: u64) -> Io500Spec {
        Io500Spec::with_defaults(dir, seed)
    }

    fn validate(spec: &Io500Spec) -> Result<Io500Plan, Io500SpecError> {
        spec.validate()
    }

    fn fault(e: &Io500SpecError, _given: &dyn Fn(&str) -> bool) -> &'static str {
        e.key()
    }
}

/// Reads `io500 = { … }` and checks its data against the target's size (one rank's).
fn read(cx: &mut Ctx, entry: &Entry, at: &LoadContext) -> Option<Io500Spec> {
    let r = table::read::<Io500Table>(cx, entry, at)?;
    let bytes = r.plan.bytes_per_rank();
    let key = if r.spec.ior_easy_block.is_some() {
        "ior_easy_block"
    } else {
        "scale"
    };
    r.fits(
        cx,
        key,
        bytes,
        at.target_bytes,
        "make the target larger, or the io500 run smaller (`scale`, or the sizes themselves)",
    )
    .then_some(r.spec)
}

/// A validated io500 workload; the runner gives each run its directory and seed.
pub type Io500Workload = TableWorkload<Io500Table>;

impl TableRun for Io500Table {
    type Output = Io500Result;
    type RunError = Io500Error;

    fn metrics() -> &'static [MetricDef] {
        &METRICS
    }

    fn place(spec: &mut Io500Spec, dir: &Path, seed: u64) {
        spec.dir = dir.to_path_buf();
        spec.seed = seed;
    }

    fn intent(plan: &Io500Plan, base: Intent) -> Intent {
        intent(plan, base)
    }

    /// Its data directory, named by the run once made.
    fn run_files(_plan: &Io500Plan) -> Vec<PathBuf> {
        Vec::new()
    }

    fn run(plan: &Io500Plan, run: &mut RunCtx<'_>) -> Result<Io500Result, Io500Error> {
        run::run(plan, run)
    }

    fn failure(e: &Io500Error, _spec: &Io500Spec, _origin: Origin) -> RunFailure {
        e.failure()
    }

    fn record(record: &mut RunRecord, out: &Io500Result) {
        add_record(record, out);
    }

    fn merge_ranks(spec: &Io500Spec, ranks: &[RunRecord]) -> Vec<Metric> {
        merge::merge(ranks, spec.stonewall)
    }

    /// IO500's phases name each rank's files and items by its rank.
    fn divides_among_ranks() -> bool {
        true
    }
}

/// `iolab io500`: the given option values over the table's defaults, validated (the
/// messages name the flags), as one run in `dir` with `seed`.
pub fn from_command_line(
    values: &[(&'static OptionDef<Io500Spec>, OptionValue)],
    dir: &Path,
    seed: u64,
) -> Result<Runs<Io500Result>, UsageError> {
    let (spec, plan) = table::from_values::<Io500Table>(values, dir.to_path_buf(), seed)?;
    let name = format!(
        "io500 stonewall={} ior-easy={} ior-hard={}x47008 mdtest={}/{}",
        iolab_util::units::duration_text(plan.stonewall),
        iolab_util::units::format_bytes(plan.ior_easy.block),
        plan.ior_hard.segments,
        plan.mdtest_easy.items,
        plan.mdtest_hard.items
    );
    Ok(table::command_run::<Io500Table>(
        spec,
        name,
        "iolab io500",
        dir.to_path_buf(),
        seed,
    ))
}

/// Adds one rank's measurements to its record: the common metrics over its phases, each
/// phase's work, start and end (what the merge of all ranks reads) and progress series, and
/// the phases' rates and scores over this rank alone (under MPI the merge replaces them).
pub fn add_record(record: &mut RunRecord, r: &Io500Result) {
    record.run.elapsed_ns = r.elapsed_ns;
    let bytes = r
        .phases
        .iter()
        .filter(|p| p.def.group == Group::Bandwidth)
        .map(|p| p.work)
        .sum();
    headline(
        record,
        Totals {
            ops: r.phases.iter().map(|p| p.ops).sum(),
            bytes,
            elapsed_ns: r.elapsed_ns,
            latency: &Default::default(),
            cpu: r.cpu,
        },
    );
    for p in &r.phases {
        let d = p.def;
        let mut named = vec![
            (d.work(), p.work as f64),
            ("start_s", p.start_ns as f64 / 1e9),
            ("end_s", p.end_ns as f64 / 1e9),
        ];
        if d.group == Group::Bandwidth {
            named.push(("ops", p.ops as f64));
        }
        if matches!(d.step, crate::phases::Step::Ior(_, iolab_ior::Access::Read)) {
            named.push(("stamp_errors", p.stamp_errors as f64));
        }
        if matches!(d.step, crate::phases::Step::Find) {
            named.push(("found", p.found as f64));
        }
        record.metrics.extend(
            named
                .into_iter()
                .map(|(n, v)| metric(&METRICS, &format!("{}.{n}", d.key), v)),
        );
        record
            .series
            .push(series(d.key, p.width_ns, p.progress.iter().copied()));
    }
    let own = merge::phases_and_scores(std::slice::from_ref(record), r.plan.stonewall);
    // The merge gives the sums again: keep one of each name.
    record
        .metrics
        .retain(|m| !own.iter().any(|o| o.name == m.name));
    record.metrics.extend(own);
}

/// What an io500 run means to do, for the checks: large writes and reads, then small files.
pub fn intent(plan: &Io500Plan, base: Intent) -> Intent {
    Intent {
        access: Some(Access::Mixed),
        sync_requested: true,
        sync_scope: Some(SyncScope::EndOfPass),
        writes_in_flight_per_file: Some(1),
        dataset_bytes: Some(plan.bytes_per_rank()),
        threads: Some(1),
        // Each file is read once, after the page cache was dropped (when the run drops
        // caches): no read is served by an earlier one's pages.
        cache_purged_each_pass: base.caches_dropped,
        ..base
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_kind::table::testing;

    #[test]
    fn the_docs_list_every_option_and_metric() {
        let doc = testing::doc("io500.md");
        for o in OPTIONS {
            assert!(
                testing::row(&doc, o.name).is_some(),
                "docs/io500.md has no row for `{}`",
                o.name
            );
        }
        for m in METRICS.iter() {
            let short = m.name.split_once('.').map_or(&*m.name, |(_, s)| s);
            assert!(
                doc.contains(&format!("`{}`", m.name)) || doc.contains(&format!("`P.{short}`")),
                "docs/io500.md: {}",
                m.name
            );
        }
    }

    #[test]
    fn the_tables_getters_undo_its_appliers() {
        testing::get_undoes_apply::<Io500Table>();
    }

    #[test]
    fn a_run_that_does_not_fit_the_target_is_refused_where_its_size_is() {
        let e = iolab_experiment::load_str(
            Path::new("i.toml"),
            "[sut]\ntarget = { kind = \"tmpfs\", size = \"64M\" }\n\
             [workload]\nio500 = { scale = 2 }\n",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("i.toml:4:") && e.contains("do not fit"), "{e}");
    }
}
