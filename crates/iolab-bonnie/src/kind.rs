//! bonnie++'s phases (docs/bonnie.md): `[workload] bonnie = { … }` in an experiment, `iolab
//! bonnie` on the command line; both read the options of iolab-bonnie's one table,
//! [`crate::OPTIONS`].

use std::path::{Path, PathBuf};

use crate::{
    run_bonnie_cancellable, BonnieError, BonniePlan, BonnieResult, BonnieSpec, BonnieSpecError,
    Phase, OPTIONS,
};
use iolab_check::{Access, SyncScope};
use iolab_engine::stats::LatencyHistogram;
use iolab_metrics::{Better, MetricDef};
use iolab_store::{FlowopStats, RunRecord};
use iolab_util::option::{OptionDef, OptionValue};
use serde_json::json;

use iolab_kind::input::read::Ctx;
use iolab_kind::input::tree::Entry;
use iolab_kind::record::{headline, metric, Totals};
use iolab_kind::table::{self, OptionTable, TableKind, TableRun, TableWorkload};
use iolab_kind::Intent;
use iolab_kind::LoadContext;
use iolab_kind::Runs;
use iolab_kind::{Origin, UsageError};
use iolab_kind::{RunCtx, RunFailure};
use iolab_util::phrase;
use iolab_util::setting::{opt, Phrase, Worded};

/// The `[workload]` key.
pub const KEY: &str = "bonnie";

/// A phase's metric names start with its label, or with the name given after `as` (the
/// rewrite's, whose plain name another kind's rewrite pass already has).
macro_rules! metric_prefix {
    ($label:literal) => {
        $label
    };
    ($label:literal, $name:literal) => {
        $name
    };
}

/// Four metrics per phase: its rate, its CPU use, its slowest operation and its elapsed
/// time, named after bonnie++'s CSV labels (`crate::Phase`'s names; a test keeps them
/// in step).
macro_rules! phase_metrics {
    ($(($label:literal $(as $name:literal)?, $rate:literal, $unit:literal, $title:literal, $what:literal $(, $headline:ident)?)),* $(,)?) => {
        &[$(
            MetricDef::new(
                concat!(metric_prefix!($label $(, $name)?), $rate),
                $unit,
                Some(Better::Higher),
                $title,
                concat!($what, " over the phase's elapsed time (bonnie++'s `", $label, "`)"),
            )$(.$headline())?,
            MetricDef::new(
                concat!(metric_prefix!($label $(, $name)?), "_cpu_pct"),
                "%",
                Some(Better::Lower),
                concat!($title, ": CPU"),
                concat!("CPU time of the threads doing the `", $label, "` phase over its elapsed time (bonnie++'s %CP)"),
            ),
            MetricDef::new(
                concat!(metric_prefix!($label $(, $name)?), "_lat_max_ns"),
                "ns",
                Some(Better::Lower),
                concat!($title, ": max latency"),
                concat!("the slowest operation of the `", $label, "` phase (bonnie++'s latency line)"),
            ),
            MetricDef::new(
                concat!(metric_prefix!($label $(, $name)?), "_elapsed_s"),
                "s",
                None,
                concat!($title, ": elapsed"),
                concat!("the `", $label, "` phase's timed region: under 0.5 s bonnie++ prints +++++"),
            ),
        )*]
    };
}

/// What bonnie runs record besides the common metrics.
pub const METRICS: &[MetricDef] = phase_metrics![
    (
        "putc",
        "_mib_per_s",
        "MiB/s",
        "Per-char output",
        "bytes written one `write` each, in MiB,"
    ),
    (
        "put_block",
        "_mib_per_s",
        "MiB/s",
        "Block output",
        "bytes written a chunk per `write`, in MiB,",
        headline
    ),
    (
        "rewrite" as "rewrite_block",
        "_mib_per_s",
        "MiB/s",
        "Rewrite",
        "bytes read and rewritten in place, in MiB (each chunk counted once),"
    ),
    (
        "getc",
        "_mib_per_s",
        "MiB/s",
        "Per-char input",
        "bytes read one `read` each, in MiB,"
    ),
    (
        "get_block",
        "_mib_per_s",
        "MiB/s",
        "Block input",
        "bytes read a chunk per `read`, in MiB,",
        headline
    ),
    (
        "seeks",
        "_per_s",
        "op/s",
        "Random seeks",
        "seeks (lseek + chunk read, one in ten rewritten) of all seekers"
    ),
    (
        "seq_create",
        "_per_s",
        "op/s",
        "Sequential create",
        "files created in creation order, with the final sync(),"
    ),
    (
        "seq_stat",
        "_per_s",
        "op/s",
        "Sequential stat",
        "files stat()ed (and read) in readdir order"
    ),
    (
        "seq_del",
        "_per_s",
        "op/s",
        "Sequential delete",
        "files deleted in readdir order, with the final sync(),"
    ),
    (
        "ran_create",
        "_per_s",
        "op/s",
        "Random create",
        "files with random-prefixed names created, with the final sync(),"
    ),
    (
        "ran_stat",
        "_per_s",
        "op/s",
        "Random stat",
        "files stat()ed (and read) in a shuffled order"
    ),
    (
        "ran_del",
        "_per_s",
        "op/s",
        "Random delete",
        "files deleted in a shuffled order, with the final sync(),"
    ),
];

/// The bonnie kind.
pub static BONNIE: TableKind = TableKind {
    key: KEY,
    noun: "bonnie runs",
    example: "bonnie = { … }",
    metrics: || METRICS,
    misplaced: |key| match key {
        "time" => {
            "bonnie runs its phases to the end: remove it (size the run with `size`, `files`, \
             `seeks`)"
        }
        _ => "remove it: give bonnie's options inside bonnie = { … }",
    },
    needs_target: true,
    resolve: |cx, entry, at| {
        read(cx, entry, at)
            .map(|spec| iolab_kind::erase(TableWorkload::<BonnieTable>::new(spec, Origin::File)))
    },
};

/// bonnie's one option table.
pub struct BonnieTable;

impl OptionTable for BonnieTable {
    type Spec = BonnieSpec;
    type Plan = BonniePlan;
    type Error = BonnieSpecError;
    const KIND: &'static str = KEY;
    const TOOL: &'static str = "bonnie++";

    fn options() -> &'static [OptionDef<BonnieSpec>] {
        OPTIONS
    }

    fn defaults(dir: PathBuf, seed: u64) -> BonnieSpec {
        BonnieSpec::with_defaults(dir, seed)
    }

    fn validate(spec: &BonnieSpec) -> Result<BonniePlan, BonnieSpecError> {
        spec.validate()
    }

    /// bonnie++'s rule is a file of twice the memory that could cache it: with a page-cache
    /// cap that is twice the cap (cheap), not twice the machine's memory.
    fn fit_to(spec: &mut BonnieSpec, at: &LoadContext) {
        if let (None, Some(cap)) = (spec.size, at.cache_limit) {
            spec.size = Some(
                cap.saturating_mul(2)
                    .next_multiple_of(spec.chunk_size.max(1)),
            );
        }
    }

    fn fault(e: &BonnieSpecError, _given: &dyn Fn(&str) -> bool) -> &'static str {
        match e {
            BonnieSpecError::ZeroChunk | BonnieSpecError::HugeChunk(_) => "chunk_size",
            BonnieSpecError::ZeroFileChunk | BonnieSpecError::HugeFileChunk(_) => "file_chunk_size",
            BonnieSpecError::ZeroSize { .. }
            | BonnieSpecError::SizeNotMultiple { .. }
            | BonnieSpecError::UnknownMemory => "size",
            BonnieSpecError::CharSizeNotMultiple { .. }
            | BonnieSpecError::CharSizeAboveSize { .. } => "char_size",
            BonnieSpecError::MinAboveMax { .. } => "min_file_size",
            BonnieSpecError::HugeFiles(_) => "max_file_size",
            BonnieSpecError::NoFiles => "files",
            BonnieSpecError::DirsAboveFiles { .. } => "dirs",
            BonnieSpecError::DirectPerChar
            | BonnieSpecError::DirectUnaligned { .. }
            | BonnieSpecError::DirectWithoutIo => "direct",
        }
    }
}

impl TableRun for BonnieTable {
    type Output = BonnieResult;
    type RunError = BonnieError;

    fn metrics() -> &'static [MetricDef] {
        METRICS
    }

    fn place(spec: &mut BonnieSpec, dir: &Path, seed: u64) {
        spec.dir = dir.to_path_buf();
        spec.seed = seed;
    }

    fn intent(plan: &BonniePlan, base: Intent) -> Intent {
        intent(plan, base)
    }

    fn run_files(plan: &BonniePlan) -> Vec<PathBuf> {
        vec![crate::data_file(&plan.dir)]
    }

    fn run(plan: &BonniePlan, run: &mut RunCtx<'_>) -> Result<BonnieResult, BonnieError> {
        run_bonnie_cancellable(plan, run.hooks, run.cancel)
    }

    /// An error in the user's words: flags on the command line, keys in a file.
    fn failure(e: &BonnieError, spec: &BonnieSpec, origin: Origin) -> RunFailure {
        let word = |p: &Phrase| table::word::<BonnieTable>(origin, p);
        let einval = matches!(e, BonnieError::Engine(e) if e.os_error() == Some(libc::EINVAL));
        let hint = if einval && spec.direct {
            Some(phrase!(
                "with {}, chunks must be multiples of the device's logical block size and the \
                 filesystem must take O_DIRECT: try {} 4k, or drop {}",
                opt("direct"),
                opt("chunk_size"),
                opt("direct")
            ))
        } else {
            e.advice()
        };
        RunFailure {
            message: word(&e.phrase()),
            hint: hint.as_ref().map(word),
            bad_input: e.is_bad_input(),
            interrupted: e.is_interrupted(),
            located: false,
        }
    }

    fn record(record: &mut RunRecord, r: &BonnieResult) {
        add_record(record, r);
    }
}

/// Reads `bonnie = { … }` (see [`table::read`]) and checks its data against the target's
/// size.
fn read(cx: &mut Ctx, entry: &Entry, at: &LoadContext) -> Option<BonnieSpec> {
    let r = table::read::<BonnieTable>(cx, entry, at)?;
    let bytes = r.plan.dataset_bytes();
    let k = if r.plan.size >= bytes {
        "size"
    } else {
        "files"
    };
    let hint = if r.spec.size.is_none() {
        // fit_to leaves the size unset only without a page-cache cap.
        "the default `size` is twice the memory (bonnie++'s rule): set `sut.cache_limit` \
         (the default becomes twice the cap), give a `size`, or make the target larger"
    } else {
        "make the target larger or the bonnie workload smaller"
    };
    r.fits(cx, k, bytes, at.target_bytes, hint)
        .then_some(r.spec)
}

/// `iolab bonnie`: the given option values over the table's defaults, validated (the
/// messages name the flags), as the one-run plan for `dir` with `seed`.
pub fn from_command_line(
    values: &[(&'static OptionDef<BonnieSpec>, OptionValue)],
    dir: &Path,
    seed: u64,
) -> Result<Runs<BonnieResult>, UsageError> {
    let (spec, plan) = table::from_values::<BonnieTable>(values, dir.to_path_buf(), seed)?;
    let name = format!(
        "bonnie size={} chunk={} files={}k",
        plan.size, plan.chunk_size, plan.files_k
    );
    Ok(table::command_run::<BonnieTable>(
        spec,
        name,
        "iolab bonnie",
        dir.to_path_buf(),
        seed,
    ))
}

/// Adds a bonnie run's measurements to `record`: the common metrics over all phases, each
/// phase's rate, CPU and slowest operation, and one flowop row per phase.
fn add_record(record: &mut RunRecord, r: &BonnieResult) {
    record.run.elapsed_ns = r.elapsed_ns;
    let mut all = LatencyHistogram::default();
    let (mut ops, mut bytes) = (0u64, 0u64);
    for p in &r.phases {
        all.merge(&p.latency);
        ops += p.ops;
        bytes += p.bytes;
    }
    headline(
        record,
        Totals {
            ops,
            bytes,
            elapsed_ns: r.elapsed_ns,
            latency: &all.summary(),
            cpu: r.usage().cpu(),
        },
    );
    for p in &r.phases {
        let f = p.figures();
        let ph = p.phase;
        record
            .metrics
            .push(metric(METRICS, ph.rate_metric(), f.rate));
        record
            .metrics
            .push(metric(METRICS, ph.cpu_metric(), f.cpu_pct));
        record.metrics.push(metric(
            METRICS,
            ph.latency_metric(),
            f.max_latency_ns as f64,
        ));
        record.metrics.push(metric(
            METRICS,
            ph.elapsed_metric(),
            p.elapsed_ns as f64 / 1e9,
        ));
        let lat = p.latency.summary();
        record.flowops.push(FlowopStats {
            name: ph.label().into(),
            kind: flowop_kind(ph).into(),
            ops: p.ops,
            bytes: p.bytes,
            errors: 0,
            latency: lat,
            histogram: p.latency.buckets(),
            extra: json!({
                "read": ph.reads(),
                "write": ph.writes(),
                "elapsed_ns": p.elapsed_ns,
                "rate": f.rate,
                "cpu_pct": f.cpu_pct,
                "short": f.short,
                "timing_error_ns": p.timing_error_ns,
                "rel_error": f.rel_error,
                "threads": p.threads,
                "operation": ph.operation(),
            }),
        });
    }
}

/// The flowop kind a phase is stored under (filebench's names, so reports treat the I/O
/// phases as data-moving).
fn flowop_kind(p: Phase) -> &'static str {
    match p {
        Phase::Putc | Phase::PutBlock | Phase::Rewrite => "write",
        Phase::Getc | Phase::GetBlock | Phase::Seeks => "read",
        Phase::SeqCreate | Phase::RanCreate => "createfile",
        Phase::SeqStat | Phase::RanStat => "statfile",
        Phase::SeqDel | Phase::RanDel => "deletefile",
    }
}

/// What a bonnie run means to do, for the checks: it reads and writes its test file, and
/// each I/O phase ends with an fsync.
pub fn intent(plan: &BonniePlan, base: Intent) -> Intent {
    Intent {
        access: Some(Access::Mixed),
        // O_DIRECT is on the test file only, which the file phases alone do not use.
        o_direct: plan.direct && plan.size > 0,
        sync_requested: true,
        sync_scope: Some(SyncScope::EndOfPass),
        // The seekers share one file.
        writes_in_flight_per_file: Some(if plan.size > 0 { plan.seekers } else { 1 }),
        dataset_bytes: Some(plan.dataset_bytes()),
        threads: Some(plan.seekers.max(1)),
        ..base
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_kind::table::testing;

    #[test]
    fn the_docs_list_the_bonnie_options_of_the_one_table() {
        let all = testing::doc("experiments.md");
        let text = &all[all.find("`bonnie` (see").expect("the bonnie table")..];
        for o in crate::OPTIONS {
            let r = testing::row(text, o.name)
                .unwrap_or_else(|| panic!("docs/experiments.md has no row for `{}`", o.name));
            let last = r.trim_end_matches('|').rsplit('|').next().unwrap().trim();
            match o.default {
                Some(d) => assert_eq!(last, format!("`{d}`"), "default of `{}`", o.name),
                None => assert_eq!(last, "twice the memory", "default of `{}`", o.name),
            }
        }
        let bonnie = testing::doc("bonnie.md");
        for o in crate::OPTIONS {
            assert!(
                testing::row(&bonnie, o.name).is_some(),
                "docs/bonnie.md has no row for `{}`",
                o.name
            );
        }
    }

    #[test]
    fn the_tables_getters_undo_its_appliers() {
        testing::get_undoes_apply::<BonnieTable>();
    }

    #[test]
    fn the_stored_spec_has_every_option() {
        let mut spec = BonnieSpec::with_defaults(PathBuf::from("/d"), 1);
        spec.size = Some(1 << 20);
        let stored = table::options_json::<BonnieTable>(&spec);
        for o in crate::OPTIONS {
            assert!(stored.get(o.name).is_some(), "`{}` is not stored", o.name);
        }
    }

    #[test]
    fn metrics_are_the_phases_names() {
        for p in Phase::ALL {
            for name in [
                p.rate_metric(),
                p.cpu_metric(),
                p.latency_metric(),
                p.elapsed_metric(),
            ] {
                assert!(
                    iolab_metrics::find(METRICS, name).is_some(),
                    "{name} is not declared"
                );
            }
        }
        assert_eq!(METRICS.len(), 4 * Phase::ALL.len());
    }

    #[test]
    fn a_run_records_every_phase_with_declared_units() {
        let _hang = iolab_testkit::timeout(300);
        let dir = tempfile_dir();
        let mut spec = BonnieSpec::with_defaults(dir.clone(), 1);
        spec.size = Some(256 << 10);
        spec.char_size = 16 << 10;
        spec.files = 1;
        spec.seeks = 100;
        let r = crate::run_bonnie(&spec.validate().unwrap(), &mut ()).unwrap();
        std::fs::remove_dir(&dir).unwrap();
        let mut rec = RunRecord::new(iolab_store::NewRun {
            config: iolab_store::ConfigId(1),
            repetition: 0,
            seed: 1,
            status: iolab_store::RunStatus::Ok,
            error: None,
            started_at: iolab_store::Timestamp(0),
            ended_at: iolab_store::Timestamp(0),
            elapsed_ns: 0,
            environment: json!({}),
        });
        add_record(&mut rec, &r);
        let defs = iolab_metrics::with_common(METRICS);
        for m in &rec.metrics {
            let d = iolab_metrics::find(&defs, &m.name)
                .unwrap_or_else(|| panic!("{} is not declared", m.name));
            assert_eq!(m.unit, d.unit, "{}", m.name);
        }
        for d in METRICS {
            assert!(rec.metrics.iter().any(|m| m.name == d.name), "{}", d.name);
        }
        assert_eq!(rec.flowops.len(), 12);
        let get = |n: &str| rec.metrics.iter().find(|m| m.name == n).unwrap().value;
        assert_eq!(
            get("ops"),
            r.phases.iter().map(|p| p.ops).sum::<u64>() as f64
        );
    }

    fn tempfile_dir() -> PathBuf {
        let d = std::env::temp_dir().join(format!("iolab-bonnie-kind-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn without_a_size_the_file_is_twice_the_page_cache_cap() {
        let text = |cap: &str| {
            format!(
                "[sut]\ntarget = {{ kind = \"tmpfs\", size = \"1G\" }}\n{cap}\n\
                 [workload]\nbonnie = {{ files = 1 }}\n"
            )
        };
        let size = |t: &str| {
            let p = iolab_experiment::load_str(Path::new("b.toml"), t).unwrap();
            table::from_stored::<BonnieTable>(p.stored_workload(0))
                .unwrap()
                .size
        };
        assert_eq!(size(&text("cache_limit = \"100M\"")), Some(200 << 20));
        // Without a cap the rule is twice the machine's memory, which a 1 GiB tmpfs refuses.
        let e = iolab_experiment::load_str(Path::new("b.toml"), &text("")).unwrap_err();
        assert!(e.to_string().contains("set `sut.cache_limit`"), "{e}");
    }

    #[test]
    fn the_command_line_plan_is_one_run_and_errors_name_the_flags() {
        let dir = std::env::temp_dir();
        let size = crate::option("size").unwrap();
        let p = iolab_experiment::plan::single::single(
            from_command_line(&[(size, OptionValue::Bytes(64 << 20))], &dir, 3)
                .unwrap()
                .plan,
        )
        .unwrap();
        assert_eq!(p.configs.len(), 1);
        assert!(p.repetitions.is_single());
        assert_eq!(p.resolved["workload"]["bonnie"]["size"], json!(64 << 20));
        let e = from_command_line(&[(size, OptionValue::Bytes(10_000))], &dir, 1).unwrap_err();
        assert!(e.message.contains("--size 10000"), "{e}");
        assert!(e.message.contains("--chunk-size 8192"), "{e}");
        let spec = BonnieSpec::with_defaults(dir.clone(), 1);
        let e = BonnieError::TooManyFiles {
            dir: dir.clone(),
            files: 10,
            free: 2,
        };
        let f = BonnieTable::failure(&e, &spec, Origin::File);
        assert!(
            f.message.contains("`workload.bonnie.files`"),
            "{}",
            f.message
        );
        assert!(f.bad_input);
    }
}
