//! Micro tests: one access pattern under one sync mode (docs/micro.md). `[workload] micro =
//! { … }` in an experiment, `iolab micro` on the command line; both read the options of the
//! one table, [`crate::OPTIONS`].

use std::path::{Path, PathBuf};
use std::time::Duration;

use iolab_check::{Access as CheckAccess, DatasetAdvice, SyncScope};
use iolab_engine::backend::RecordSync;
use iolab_engine::EngineError;
use iolab_metrics::{Better, MetricDef};
use iolab_store::{FlowopStats, RunRecord};
use iolab_util::option::OptionValue;
use serde_json::json;

use iolab_kind::input::read::Ctx;
use iolab_kind::input::tree::Entry;
use iolab_kind::record::{headline, metric, series, Totals};
use iolab_kind::table::{self, OptionTable, TableKind, TableRun, TableWorkload};
use iolab_kind::Intent;
use iolab_kind::LoadContext;
use iolab_kind::Runs;
use iolab_kind::{Origin, UsageError};
use iolab_kind::{RunCtx, RunFailure};
use iolab_util::setting::{Phrase, Worded};

use crate::{
    run_micro_cancellable, MicroOption, MicroPlan, MicroResult, MicroSpec, MicroSpecError, OPTIONS,
};

/// The `[workload]` key.
pub const KEY: &str = "micro";

/// What micro tests record besides the common metrics.
pub const METRICS: &[MetricDef] = &[MetricDef::new(
    "final_sync_ns",
    "ns",
    Some(Better::Lower),
    "Final sync",
    "the longest final fsync/msync of a write pass (inside the timed region)",
)];

/// The micro test kind.
pub static MICRO: TableKind = TableKind {
    key: KEY,
    noun: "micro tests",
    example: "micro = { … }",
    metrics: || METRICS,
    misplaced: |key| match key {
        "time" => "give a micro test's time limit inside it: micro = { …, time = \"30s\" }",
        "engine" | "iodepth" => {
            "give a micro test's engine inside it: micro = { …, engine = \"io_uring\", \
             iodepth = 32 }"
        }
        _ => "remove it: micro tests have no WML variables, filesets or file picking",
    },
    needs_target: true,
    resolve: |cx, entry, at| {
        read(cx, entry, at)
            .map(|spec| iolab_kind::erase(TableWorkload::<MicroTable>::new(spec, Origin::File)))
    },
};

/// micro's one option table.
pub struct MicroTable;

impl OptionTable for MicroTable {
    type Spec = MicroSpec;
    type Plan = MicroPlan;
    type Error = MicroSpecError;
    const KIND: &'static str = KEY;
    const TOOL: &'static str = "mobibench";

    fn options() -> &'static [MicroOption] {
        OPTIONS
    }

    fn defaults(dir: PathBuf, seed: u64) -> MicroSpec {
        MicroSpec::with_defaults(dir, seed)
    }

    fn validate(spec: &MicroSpec) -> Result<MicroPlan, MicroSpecError> {
        spec.validate()
    }

    fn fault(e: &MicroSpecError, given: &dyn Fn(&str) -> bool) -> &'static str {
        match e {
            MicroSpecError::ZeroBlockSize | MicroSpecError::HugeBlockSize { .. } => "bs",
            MicroSpecError::ZeroSize { .. }
            | MicroSpecError::SizeNotMultiple { .. }
            | MicroSpecError::PerThreadNotMultiple { .. } => "size",
            MicroSpecError::ZeroThreads => "threads",
            MicroSpecError::MmapNeedsMmapEngine { .. } => "engine",
            MicroSpecError::MmapEngineNeedsMmapSync { .. } => {
                if given("sync") {
                    "sync"
                } else {
                    "engine"
                }
            }
            MicroSpecError::Depth(_) => "iodepth",
            MicroSpecError::ZeroLoops => "loops",
            MicroSpecError::ZeroTime => "time",
        }
    }
}

impl TableRun for MicroTable {
    type Output = MicroResult;
    type RunError = EngineError;

    fn metrics() -> &'static [MetricDef] {
        METRICS
    }

    fn place(spec: &mut MicroSpec, dir: &Path, seed: u64) {
        spec.dir = dir.to_path_buf();
        spec.seed = seed;
    }

    fn intent(plan: &MicroPlan, base: Intent) -> Intent {
        intent(plan, base)
    }

    fn planned_duration(spec: &MicroSpec) -> Option<Duration> {
        spec.time_limit
    }

    fn run_files(plan: &MicroPlan) -> Vec<PathBuf> {
        (0..plan.threads)
            .map(|t| crate::data_file(&plan.dir, t))
            .collect()
    }

    fn run(plan: &MicroPlan, run: &mut RunCtx<'_>) -> Result<MicroResult, EngineError> {
        run_micro_cancellable(plan, run.hooks, run.cancel)
    }

    /// An error and its hint in the user's words.
    fn failure(e: &EngineError, _spec: &MicroSpec, origin: Origin) -> RunFailure {
        let word = |p: &Phrase| table::word::<MicroTable>(origin, p);
        let mut f = e.failure(e.advice().as_ref().map(word));
        f.message = word(&e.phrase());
        f
    }

    fn record(record: &mut RunRecord, r: &MicroResult) {
        add_record(record, r);
    }
}

/// Reads `micro = { … }` (see [`table::read`]) and checks its size against the target's.
fn read(cx: &mut Ctx, entry: &Entry, at: &LoadContext) -> Option<MicroSpec> {
    let r = table::read::<MicroTable>(cx, entry, at)?;
    r.fits(
        cx,
        "size",
        r.spec.size,
        at.target_bytes,
        "make the target larger or the micro test smaller",
    )
    .then_some(r.spec)
}

/// `iolab micro`: the given option values over the table's defaults, validated (the
/// messages name the flags), as the one-run plan for `dir` with `seed`.
pub fn from_command_line(
    values: &[(&'static MicroOption, OptionValue)],
    dir: &Path,
    seed: u64,
) -> Result<Runs<MicroResult>, UsageError> {
    let (spec, _) = table::from_values::<MicroTable>(values, dir.to_path_buf(), seed)?;
    let name = format!(
        "micro {} {} bs={} size={} threads={}",
        spec.access.name(),
        spec.sync.name(),
        spec.bs,
        spec.size,
        spec.threads
    );
    Ok(table::command_run::<MicroTable>(
        spec,
        name,
        "iolab micro",
        dir.to_path_buf(),
        seed,
    ))
}

/// Adds a micro test's measurements to `record`: the common metrics, `final_sync_ns`, one
/// flowop row for the records (and one for their per-record syncs), the `io` series.
pub(crate) fn add_record(record: &mut RunRecord, r: &MicroResult) {
    record.run.elapsed_ns = r.elapsed_ns;
    let lat = r.latency.summary();
    headline(
        record,
        Totals {
            ops: r.ops,
            bytes: r.bytes,
            elapsed_ns: r.elapsed_ns,
            latency: &lat,
            cpu: r.usage.cpu(),
        },
    );
    record
        .metrics
        .push(metric(METRICS, "final_sync_ns", r.final_sync_ns as f64));
    let p = &r.plan;
    record.flowops.push(FlowopStats {
        name: p.access.name().into(),
        kind: if p.writes() { "write" } else { "read" }.into(),
        ops: r.ops,
        bytes: r.bytes,
        errors: 0,
        latency: lat,
        histogram: r.latency.buckets(),
        extra: json!({
            "sync": p.sync.name(),
            "engine": p.engine.name(),
            "bs": p.bs,
            "threads": p.threads,
            "time_limited": r.time_limited,
            "reused_files": r.reused_files,
        }),
    });
    if r.sync_latency.count() > 0 {
        let s = r.sync_latency.summary();
        record.flowops.push(FlowopStats {
            name: "record sync".into(),
            kind: "sync".into(),
            ops: s.count,
            bytes: 0,
            errors: 0,
            latency: s,
            histogram: r.sync_latency.buckets(),
            extra: json!({ "sync": p.sync.name() }),
        });
    }
    record.series.push(series(
        "io",
        r.interval_ns,
        r.intervals.iter().map(|b| (b.ops, b.bytes)),
    ));
}

/// What a micro test means to do, for the checks.
pub fn intent(plan: &MicroPlan, base: Intent) -> Intent {
    let flags = plan.sync.open_flags();
    // msync(MS_ASYNC) after a record makes nothing durable.
    let each_write = plan.writes()
        && (flags.o_sync
            || flags.o_dsync
            || matches!(
                plan.record_sync(),
                Some(RecordSync::Fsync | RecordSync::Fdatasync | RecordSync::MsyncSync)
            ));
    Intent {
        dataset_advice: Some(DatasetAdvice {
            grow: Some("raise `size` above {needed} (`size = \"{value}\"`)".into()),
            why: None,
            other_fixes: Some("; or read with O_DIRECT (micro `sync = \"direct\"`).".into()),
        }),
        access: Some(if plan.writes() {
            CheckAccess::Write
        } else {
            CheckAccess::Read
        }),
        o_direct: flags.o_direct,
        sync_requested: plan.record_sync().is_some()
            || plan.final_sync().is_some()
            || flags.o_sync
            || flags.o_dsync,
        sync_scope: Some(if each_write {
            SyncScope::EachWrite
        } else if plan.final_sync().is_some() {
            SyncScope::EndOfPass
        } else {
            SyncScope::Never
        }),
        // Each thread writes its own file; only io_uring keeps more than one record in flight.
        writes_in_flight_per_file: Some(plan.iodepth),
        dataset_bytes: Some(plan.file_size * u64::from(plan.threads)),
        threads: Some(plan.threads),
        no_io: plan.engine.caps().no_io,
        ..base
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_kind::table::testing;

    #[test]
    fn the_docs_list_the_micro_options_of_the_one_table() {
        let all = testing::doc("experiments.md");
        // The micro table, after the `[workload]` one (which has a `time` row too).
        let text = &all[all.find("`micro` (see").expect("the micro table")..];
        for o in crate::OPTIONS {
            let r = testing::row(text, o.name)
                .unwrap_or_else(|| panic!("docs/experiments.md has no row for `{}`", o.name));
            if let Some(d) = o.default {
                let last = r.trim_end_matches('|').rsplit('|').next().unwrap().trim();
                assert_eq!(last, format!("`{d}`"), "default of `{}`", o.name);
            }
        }
    }

    #[test]
    fn the_tables_getters_undo_its_appliers() {
        testing::get_undoes_apply::<MicroTable>();
    }

    use crate::{Access as A, DataPattern, SyncMode};
    use iolab_engine::backend::EngineKind;

    fn spec(
        access: A,
        sync: SyncMode,
        engine: Option<EngineKind>,
        depth: Option<u32>,
    ) -> MicroSpec {
        MicroSpec {
            access,
            sync,
            bs: 4096,
            size: 1 << 20,
            threads: 2,
            dir: "/tmp".into(),
            engine,
            iodepth: depth,
            time_limit: None,
            loops: 1,
            seed: 1,
            data: DataPattern::Zeros,
        }
    }

    fn plan(access: A, sync: SyncMode, engine: Option<EngineKind>, depth: Option<u32>) -> Intent {
        intent(
            &spec(access, sync, engine, depth).validate().unwrap(),
            Intent::default(),
        )
    }

    #[test]
    fn sync_scopes() {
        use SyncMode::*;
        for (m, want) in [
            (Normal, SyncScope::EndOfPass),
            (Direct, SyncScope::EndOfPass),
            (Mmap, SyncScope::EndOfPass),
            (MmapAsync, SyncScope::EndOfPass),
            (MmapSync, SyncScope::EachWrite),
            (Fsync, SyncScope::EachWrite),
            (Fdatasync, SyncScope::EachWrite),
            (Osync, SyncScope::EachWrite),
            (OsyncDirect, SyncScope::EachWrite),
            (Dsync, SyncScope::EachWrite),
        ] {
            let i = plan(A::Randwrite, m, None, None);
            assert_eq!(i.sync_scope, Some(want), "{m:?}");
            assert_eq!(i.writes_in_flight_per_file, Some(1));
            let r = plan(A::Randread, m, None, None);
            assert_eq!(r.sync_scope, Some(SyncScope::Never), "{m:?} read");
        }
        let u = plan(A::Randwrite, Fsync, Some(EngineKind::IoUring), Some(32));
        assert_eq!(u.writes_in_flight_per_file, Some(32));
    }

    #[test]
    fn metrics_are_the_engine_totals_over_elapsed_with_declared_units() {
        let _hang = iolab_testkit::timeout(120);
        let mut s = spec(A::Write, SyncMode::Normal, Some(EngineKind::Null), None);
        s.size = 4096 * 1000;
        s.dir = "/nonexistent".into();
        let r = crate::run_micro(&s.validate().unwrap(), &mut ()).unwrap();
        let mut rec = iolab_kind::record::testing::record();
        add_record(&mut rec, &r);
        let get = |n: &str| rec.metrics.iter().find(|m| m.name == n).unwrap().value;
        assert_eq!(get("ops"), 1000.0);
        assert_eq!(get("bytes"), 4096.0 * 1000.0);
        let expect = 1000.0 / (r.elapsed_ns as f64 / 1e9);
        assert!((get("ops_per_s") - expect).abs() < 1e-6 * expect);
        iolab_kind::record::testing::assert_declared(&rec, METRICS);
        assert_eq!(rec.flowops[0].ops, 1000);
        assert_eq!(rec.series[0].ops.iter().sum::<u64>(), 1000);
    }

    #[test]
    fn engine_hints_name_the_setting_as_the_user_wrote_it() {
        let full = EngineError::Io {
            op: "write",
            path: "/x/iolab-micro.0".into(),
            source: std::io::Error::from_raw_os_error(libc::ENOSPC),
        };
        let s = spec(A::Write, SyncMode::Normal, None, None);
        let failure = |e: &EngineError, origin| MicroTable::failure(e, &s, origin);
        let cli = failure(&full, Origin::CommandLine);
        assert_eq!(
            cli.hint.as_deref(),
            Some("the filesystem is full: use a smaller --size or another --dir")
        );
        let file = failure(&full, Origin::File);
        assert_eq!(
            file.hint.as_deref(),
            Some(
                "the filesystem is full: use a smaller `workload.micro.size` or another \
                 `sut.target`"
            )
        );
        assert!(!file.bad_input);
        let unaligned = EngineError::DirectIoUnaligned {
            bs: 1000,
            align: 512,
            path: "/x".into(),
        };
        let f = failure(&unaligned, Origin::File);
        assert!(
            f.message
                .starts_with("`workload.micro.bs` 1000 is not a multiple"),
            "{}",
            f.message
        );
        assert!(f.bad_input);
    }

    #[test]
    fn the_command_line_plan_is_one_run_on_the_directory() {
        let dir = std::env::temp_dir();
        let threads = crate::option("threads").unwrap();
        let p = iolab_experiment::plan::single::single(
            from_command_line(&[(threads, OptionValue::Count(2))], &dir, 9)
                .unwrap()
                .plan,
        )
        .unwrap();
        assert_eq!(p.configs.len(), 1);
        assert!(p.repetitions.is_single());
        assert!(!p.procedure.drop_caches && !p.procedure.fresh_fs);
        assert_eq!(p.seed, 9);
        assert_eq!(p.name, "micro write normal bs=4096 size=67108864 threads=2");
        assert!(!p.configs[0].sut.changes_machine());
        let spec = table::from_stored::<MicroTable>(p.stored_workload(0)).unwrap();
        assert_eq!(spec.threads, 2);
        assert_eq!(p.resolved["workload"]["micro"]["threads"], json!(2));
        let bs = crate::option("bs").unwrap();
        let e = from_command_line(&[(bs, OptionValue::Bytes(3000))], &dir, 1).unwrap_err();
        assert!(e.message.contains("--bs 3000"), "{e}");
        let runs = from_command_line(&[], Path::new("/nonexistent/iolab"), 1).unwrap();
        let e = iolab_experiment::plan::single::single(runs.plan).unwrap_err();
        assert_eq!(e.message, "directory /nonexistent/iolab does not exist");
    }
}
