//! iozone's tests (docs/iozone.md): `[workload] iozone = { … }` in an experiment, `iolab
//! iozone` on the command line; both read the options of iolab-iozone's one table,
//! [`crate::OPTIONS`].
//!
//! A run is one cell of iozone's matrix — one file size and one record size — running the
//! chosen tests in iozone's order. Auto mode's matrix is configurations (factors `size` ×
//! `record`, see [`crate::matrix`]), each with its own repetitions; the report draws
//! the matrix from them.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use crate::matrix::Cell;
use crate::options::Direction;
use crate::{
    run_iozone, BetweenPasses, Figure, IozoneOption, IozonePlan, IozoneResult, IozoneSpec,
    IozoneSpecError, Purge, OPTIONS,
};
use iolab_check::{Access as CheckAccess, DatasetAdvice, SyncScope};
use iolab_engine::EngineError;
use iolab_metrics::{Better, MetricDef};
use iolab_store::{FlowopStats, RunRecord};
use iolab_util::option::OptionValue;
use serde_json::{json, Map, Value};

use iolab_kind::input::read::Ctx;
use iolab_kind::input::tree::Entry;
use iolab_kind::record::{headline, metric, Totals};
use iolab_kind::table::{self, OptionTable, TableKind, TableRun, TableWorkload};
use iolab_kind::Intent;
use iolab_kind::LoadContext;
use iolab_kind::{CommandConfig, CommandPlan, Outputs, Runs};
use iolab_kind::{Origin, UsageError};
use iolab_kind::{RunCtx, RunFailure, SutControl};
use iolab_util::phrase;
use iolab_util::setting::{opt, Phrase, Setting, Worded};

/// The `[workload]` key.
pub const KEY: &str = "iozone";

pub static IOZONE: TableKind = TableKind {
    key: KEY,
    noun: "iozone tests",
    example: "iozone = { … }",
    metrics: || &METRICS,
    misplaced: |_| "remove it, or give it inside iozone = { … } (docs/iozone.md lists the keys)",
    needs_target: true,
    resolve: |cx, entry, at| {
        read(cx, entry, at)
            .map(|spec| iolab_kind::erase(TableWorkload::<IozoneTable>::new(spec, Origin::File)))
    },
};

/// iozone's one option table.
pub struct IozoneTable;

impl OptionTable for IozoneTable {
    type Spec = IozoneSpec;
    type Plan = IozonePlan;
    type Error = IozoneSpecError;
    const KIND: &'static str = KEY;
    const TOOL: &'static str = "iozone";

    fn options() -> &'static [IozoneOption] {
        OPTIONS
    }

    fn defaults(dir: PathBuf, seed: u64) -> IozoneSpec {
        IozoneSpec::with_defaults(dir, seed)
    }

    fn validate(spec: &IozoneSpec) -> Result<IozonePlan, IozoneSpecError> {
        spec.validate()
    }

    fn fault(e: &IozoneSpecError, _given: &dyn Fn(&str) -> bool) -> &'static str {
        e.option()
    }
}

/// Each figure's iolab throughput: `<figure>_mib_per_s`, in [`Figure::ALL`]'s order.
pub const FIGURE_METRICS: [&str; 18] = [
    "write_mib_per_s",
    "rewrite_mib_per_s",
    "read_mib_per_s",
    "reread_mib_per_s",
    "random_read_mib_per_s",
    "random_write_mib_per_s",
    "backward_read_mib_per_s",
    "record_rewrite_mib_per_s",
    "stride_read_mib_per_s",
    "fwrite_mib_per_s",
    "refwrite_mib_per_s",
    "fread_mib_per_s",
    "refread_mib_per_s",
    "random_mix_mib_per_s",
    "pwrite_mib_per_s",
    "repwrite_mib_per_s",
    "pread_mib_per_s",
    "repread_mib_per_s",
];

/// The metric of a figure's iolab throughput.
pub fn figure_metric(f: Figure) -> &'static str {
    FIGURE_METRICS[f as usize]
}

/// The throughput-mode metrics of a figure: iozone's two figures and its min xfer.
pub fn throughput_metrics(f: Figure) -> [String; 3] {
    [
        format!("{f}_children_mib_per_s"),
        format!("{f}_parent_mib_per_s"),
        format!("{f}_min_xfer_mib"),
    ]
}

/// The figures `iolab show` and the report's summary show, each on its own (iozone's default
/// tests, `write,read,random`): one rate over all the passes of a run would mix a write to the
/// device with a re-read from memory. The others are in the report's iozone section.
pub const HEADLINE_FIGURES: [Figure; 6] = [
    Figure::Write,
    Figure::Rewrite,
    Figure::Read,
    Figure::Reread,
    Figure::RandomRead,
    Figure::RandomWrite,
];

/// Every iozone metric: per figure, iolab's throughput (all runs) and, in throughput mode,
/// iozone's "children see", "parent sees" and "min xfer".
pub static METRICS: LazyLock<Vec<MetricDef>> = LazyLock::new(|| {
    let mut v = Vec::new();
    for f in Figure::ALL {
        let d = MetricDef::new(
            figure_metric(f),
            "MiB/s",
            Some(Better::Higher),
            f.title(),
            "iozone test pass: all the bytes of every thread over the whole timed region \
             (fsync + close inside it, the fsync only with `flush = \"fsync\"`, neither with \
             `flush = \"excluded\"`)",
        );
        v.push(if HEADLINE_FIGURES.contains(&f) {
            d.headline()
        } else {
            d
        });
    }
    for f in Figure::ALL {
        let [children, parent, min_xfer] = throughput_metrics(f);
        v.push(owned(
            children,
            "MiB/s",
            Some(Better::Higher),
            format!("{} (children see)", f.title()),
            "iozone's \"children see\" (throughput mode): the sum of each thread's own rate, \
             taken when the first thread finished (stone-walling)",
        ));
        v.push(owned(
            parent,
            "MiB/s",
            Some(Better::Higher),
            format!("{} (parent sees)", f.title()),
            "iozone's \"parent sees\" (throughput mode): the bytes done at the stone-wall over \
             the time from the release until every thread ended (untimed flush included)",
        ));
        v.push(owned(
            min_xfer,
            "MiB",
            None,
            format!("{} (min xfer)", f.title()),
            "iozone's \"min xfer\" (throughput mode): the fewest bytes a thread had done at \
             the stone-wall",
        ));
    }
    v
});

fn owned(
    name: String,
    unit: &'static str,
    better: Option<Better>,
    title: String,
    description: &'static str,
) -> MetricDef {
    MetricDef {
        name: Cow::Owned(name),
        unit: Cow::Borrowed(unit),
        better,
        title: Cow::Owned(title),
        description: Cow::Borrowed(description),
        headline: false,
        exact: false,
    }
}

/// Why an iozone run failed.
#[derive(Debug)]
pub enum IozoneRunError {
    Engine(EngineError),
    /// A purge asked of a directory on a tmpfs, found only when the run has its directory.
    MemoryFsPurge(Purge),
}

impl TableRun for IozoneTable {
    type Output = IozoneResult;
    type RunError = IozoneRunError;

    fn metrics() -> &'static [MetricDef] {
        &METRICS
    }

    /// The common rate and latency sum up every pass of a run: the figures are iozone's
    /// headline instead ([`HEADLINE_FIGURES`]).
    fn common_headline() -> bool {
        false
    }

    fn place(spec: &mut IozoneSpec, dir: &Path, seed: u64) {
        spec.dir = dir.to_path_buf();
        spec.seed = seed;
    }

    fn intent(plan: &IozonePlan, base: Intent) -> Intent {
        intent(plan, base)
    }

    fn needs_root(spec: &IozoneSpec) -> Option<String> {
        (spec.purge == Purge::DropCaches).then(|| {
            "dropping the page cache between passes (workload.iozone.purge = \"drop_caches\")"
                .to_string()
        })
    }

    fn describe(spec: &IozoneSpec) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert(
            "iozone_figures".into(),
            json!(spec
                .validate()
                .map(|p| p.figures().map(Figure::name).collect::<Vec<_>>())
                .unwrap_or_default()),
        );
        m
    }

    fn run_files(plan: &IozonePlan) -> Vec<PathBuf> {
        (0..plan.threads)
            .map(|t| crate::run::data_file(&plan.dir, t))
            .collect()
    }

    fn run(plan: &IozonePlan, run: &mut RunCtx<'_>) -> Result<IozoneResult, IozoneRunError> {
        if plan.purge != Purge::None && memory_fs(&plan.dir) {
            return Err(IozoneRunError::MemoryFsPurge(plan.purge));
        }
        let mut between = Between { sut: run.sut };
        run_iozone(plan, run.hooks, &mut between, run.cancel).map_err(IozoneRunError::Engine)
    }

    /// An error in the user's words.
    fn failure(e: &IozoneRunError, spec: &IozoneSpec, origin: Origin) -> RunFailure {
        let word = |p: &Phrase| table::word::<IozoneTable>(origin, p);
        let e = match e {
            IozoneRunError::Engine(e) => e,
            IozoneRunError::MemoryFsPurge(how) => {
                let (message, hint) = memory_fs_purge_phrases(*how);
                return RunFailure::bad_input(word(&message)).hint(Some(word(&hint)));
            }
        };
        let hint = match (e, e.os_error()) {
            (EngineError::IoAt { .. } | EngineError::Io { .. }, Some(libc::ENOSPC)) => {
                Some(phrase!(
                    "the filesystem is full: use a smaller {} or fewer {}, or another {}",
                    opt("size"),
                    opt("threads"),
                    Setting::Dir
                ))
            }
            (_, Some(libc::EINVAL)) if spec.direct => Some(phrase!(
                "with {}, records must be multiples of the device's logical block size: try \
                 {} 4k",
                opt("direct"),
                opt("record")
            )),
            _ => e.advice(),
        };
        let mut f = e.failure(hint.as_ref().map(word));
        f.message = word(&e.phrase());
        f
    }

    fn record(record: &mut RunRecord, r: &IozoneResult) {
        add_record(record, r);
    }
}

/// Between passes: the purge, through the runner's system under test, and how much of the
/// data files the page cache holds.
struct Between<'a> {
    sut: &'a mut dyn SutControl,
}

impl BetweenPasses for Between<'_> {
    fn purge(&mut self, how: Purge, files: &[PathBuf]) -> Result<(), String> {
        match how {
            Purge::None => Ok(()),
            Purge::Fadvise => fadvise_dontneed(files),
            Purge::DropCaches => {
                iolab_sut::cache::drop_all(files, "purge = \"drop_caches\"").map(|_| ())
            }
            Purge::Remount => self.sut.remount().map(|_| ()),
        }
    }

    fn cached_bytes(&mut self, files: &[PathBuf]) -> Option<u64> {
        Some(
            iolab_sut::residency::RunFiles::open(files)
                .residency()
                .resident_bytes(),
        )
    }
}

/// Writes the files' dirty pages, then asks the kernel to drop their cached ones: the run's
/// own pages only, no root needed. A page held for an instant in a CPU's LRU batch can survive
/// one advice: it is given again, as iolab's cache drop does. A file not written yet has
/// nothing cached.
fn fadvise_dontneed(files: &[PathBuf]) -> Result<(), String> {
    for path in files {
        let f = match std::fs::File::open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(format!("opening {}: {e}", path.display())),
        };
        // Dirty pages are not dropped: write them first.
        f.sync_data()
            .map_err(|e| format!("fdatasync {}: {e}", path.display()))?;
    }
    let run = iolab_sut::residency::RunFiles::open(files);
    for _ in 0..iolab_sut::cache::DROP_ATTEMPTS {
        run.evict();
        if run.residency().resident_bytes() == 0 {
            break;
        }
    }
    Ok(())
}

/// Reads `iozone = { … }` (see [`table::read`]) and checks its files against the target's
/// size.
fn read(cx: &mut Ctx, entry: &Entry, at: &LoadContext) -> Option<IozoneSpec> {
    let r = table::read::<IozoneTable>(cx, entry, at)?;
    if r.spec.purge != Purge::None && at.memory_fs == Some(true) {
        cx.error_hint(
            &r.at("purge"),
            format!(
                "`workload.iozone.purge` = \"{}\" cannot empty a tmpfs: its files live in \
                 the page cache",
                r.spec.purge.name()
            ),
            "use a loop_image or block_device target to measure the device, or purge = \"none\"",
        );
        return None;
    }
    if r.spec.purge == Purge::Remount && at.remountable == Some(false) {
        cx.error_hint(
            &r.at("purge"),
            "`workload.iozone.purge` = \"remount\" needs a filesystem iolab mounts and that \
             keeps its files (this target is a directory or a tmpfs)",
            "use a loop_image or block_device target, or purge = \"fadvise\" (or \
             \"drop_caches\", as root)",
        );
        return None;
    }
    let total = r.spec.size.saturating_mul(u64::from(r.spec.threads));
    r.fits(
        cx,
        "size",
        total,
        at.target_bytes,
        "make the target larger, or the files smaller or fewer",
    )
    .then_some(r.spec)
}

/// Whether `dir` keeps its files in memory (tmpfs, ramfs).
fn memory_fs(dir: &Path) -> bool {
    iolab_sut::residency::is_memory_fs(dir) == Some(true)
}

fn memory_fs_purge(how: Purge) -> UsageError {
    let (message, hint) = memory_fs_purge_phrases(how);
    UsageError::new(message.to_string()).hint(hint.to_string())
}

/// A purge on a tmpfs, and what to do instead.
fn memory_fs_purge_phrases(how: Purge) -> (Phrase, Phrase) {
    (
        phrase!(
            "{} {}: the directory is on a tmpfs, whose files live in the page cache; no purge \
             can empty it",
            opt("purge"),
            how.name()
        ),
        phrase!(
            "give a {} on a disk's filesystem to measure the device, or drop {}",
            Setting::Dir,
            opt("purge")
        ),
    )
}

/// A purge the command line cannot do: `remount` (iolab does not remount a `--dir` it did
/// not mount) and, without root, `drop_caches`.
fn refuse_purge(spec: &IozoneSpec) -> Result<(), UsageError> {
    if spec.purge != Purge::None && memory_fs(&spec.dir) {
        return Err(memory_fs_purge(spec.purge));
    }
    match spec.purge {
        Purge::Remount => Err(UsageError::new(
            "--purge remount: iolab does not remount a --dir it did not mount",
        )
        .hint(
            "use --purge fadvise (or drop_caches, as root), or an experiment file with a \
             loop_image target and purge = \"remount\"",
        )),
        // SAFETY: geteuid has no preconditions.
        Purge::DropCaches if unsafe { libc::geteuid() } != 0 => Err(UsageError::new(
            "--purge drop_caches needs root: only root may drop the kernel's caches",
        )
        .hint("run as root, or use --purge fadvise (the run's own files, no root needed)")),
        _ => Ok(()),
    }
}

/// `iolab iozone`: the given option values over the table's defaults, validated (the
/// messages name the flags), as the one-run plan for `dir` with `seed`.
pub fn from_command_line(
    values: &[(&'static IozoneOption, OptionValue)],
    dir: &Path,
    seed: u64,
) -> Result<Runs<IozoneResult>, UsageError> {
    let spec = spec_from(values, dir, seed)?;
    let name = format!(
        "iozone {} size={} record={} threads={} flush={}",
        test_names(&spec),
        spec.size,
        spec.record,
        spec.threads,
        spec.flush.name()
    );
    Ok(table::command_run::<IozoneTable>(
        spec,
        name,
        "iolab iozone",
        dir.to_path_buf(),
        seed,
    ))
}

/// The spec of the given values over the defaults, validated.
pub fn spec_from(
    values: &[(&'static IozoneOption, OptionValue)],
    dir: &Path,
    seed: u64,
) -> Result<IozoneSpec, UsageError> {
    let (spec, _) = table::from_values::<IozoneTable>(values, dir.to_path_buf(), seed)?;
    refuse_purge(&spec)?;
    Ok(spec)
}

fn usage(e: &IozoneSpecError) -> UsageError {
    UsageError::new(e.to_string())
}

/// The cells of auto mode for `iolab iozone --auto`: the given values, with `size` and
/// `record` taken from each cell; every cell is validated.
pub fn auto_specs(
    values: &[(&'static IozoneOption, OptionValue)],
    cells: &[Cell],
    dir: &Path,
    seed: u64,
) -> Result<Vec<IozoneSpec>, UsageError> {
    cells
        .iter()
        .map(|c| {
            let mut spec = spec_from(values, dir, seed)?;
            spec.size = c.size;
            spec.record = c.record;
            spec.validate().map_err(|e| usage(&e))?;
            Ok(spec)
        })
        .collect()
}

/// The cells of `bounds`, or why there are none: a bound of 0, a minimum above its maximum,
/// or no record that fits in a file.
fn auto_cells(b: &crate::matrix::Bounds) -> Result<Vec<Cell>, UsageError> {
    let size = |v: u64| iolab_util::units::format_bytes(v).replace(' ', "");
    for (name, v) in [
        ("--auto-min-size", b.min_size),
        ("--auto-max-size", b.max_size),
        ("--auto-min-record", b.min_record),
        ("--auto-max-record", b.max_record),
    ] {
        if v == 0 {
            return Err(UsageError::new(format!("{name} must be at least 1 byte")));
        }
    }
    for (what, min, max) in [
        ("size", b.min_size, b.max_size),
        ("record", b.min_record, b.max_record),
    ] {
        if min > max {
            return Err(UsageError::new(format!(
                "--auto-min-{what} {} is above --auto-max-{what} {}: the matrix would be empty",
                size(min),
                size(max)
            )));
        }
    }
    let cells = crate::matrix::cells(b);
    if let Some(c) = cells.iter().find(|c| !c.size.is_multiple_of(c.record)) {
        return Err(UsageError::new(format!(
            "the auto matrix has files of {} in records of {}, which is not whole records: \
             give --auto-min-size and --auto-min-record whose doublings divide each other \
             (powers of two do; iozone would silently leave out the rest of the file)",
            size(c.size),
            size(c.record)
        )));
    }
    if cells.is_empty() {
        return Err(UsageError::new(format!(
            "the auto matrix is empty: no record size from {} to {} fits in a file of {} to {} \
             (files above 16 MiB also skip records below 64 KiB unless --auto-all-records)",
            size(b.min_record),
            size(b.max_record),
            size(b.min_size),
            size(b.max_size)
        )));
    }
    Ok(cells)
}

/// `iolab iozone --auto`: one configuration per cell of the matrix (factors `size` and
/// `record`), each run once, in the matrix's order — the experiment an `[factors]` table of
/// file sizes × record sizes would give.
pub fn from_command_line_auto(
    values: &[(&'static IozoneOption, OptionValue)],
    bounds: &crate::matrix::Bounds,
    dir: &Path,
    seed: u64,
) -> Result<Runs<IozoneResult>, UsageError> {
    let cells = auto_cells(bounds)?;
    let specs = auto_specs(values, &cells, dir, seed)?;
    let name = format!(
        "iozone auto {} sizes {}..{}",
        test_names(&specs[0]),
        bounds.min_size,
        bounds.max_size
    );
    let bytes = |v: u64| iolab_util::units::format_bytes(v).replace(' ', "");
    Ok(configurations(dir, seed, name, specs, |spec| {
        (
            format!("size={} record={}", bytes(spec.size), bytes(spec.record)),
            [("size", spec.size), ("record", spec.record)],
        )
    }))
}

/// `iolab iozone --threads MIN --threads-max MAX` (iozone `-l MIN -u MAX`): one
/// configuration per thread count from `min` to `max` (factor `threads`), each in throughput
/// mode, one thread included, run once in order.
pub fn from_command_line_thread_range(
    values: &[(&'static IozoneOption, OptionValue)],
    max: u32,
    dir: &Path,
    seed: u64,
) -> Result<Runs<IozoneResult>, UsageError> {
    let base = spec_from(values, dir, seed)?;
    let min = base.threads;
    if max < min {
        return Err(UsageError::new(format!(
            "--threads-max {max} is below --threads {min}: the range of thread counts would \
             be empty"
        )));
    }
    if u64::from(max) > crate::options::MAX_THREADS {
        return Err(UsageError::new(format!(
            "--threads-max {max} is above {}, the most threads iolab runs",
            crate::options::MAX_THREADS
        )));
    }
    let specs = (min..=max)
        .map(|threads| {
            let mut spec = base.clone();
            spec.threads = threads;
            spec.throughput = true;
            spec.validate().map_err(|e| usage(&e))?;
            Ok(spec)
        })
        .collect::<Result<Vec<_>, UsageError>>()?;
    let name = format!(
        "iozone {} threads {min}..{max} size={} record={}",
        test_names(&base),
        base.size,
        base.record
    );
    let mut runs = configurations(dir, seed, name, specs, |spec| {
        (
            format!("threads={}", spec.threads),
            [("threads", u64::from(spec.threads))],
        )
    });
    // Listed as the experiment's factor, so that the report draws each metric against the
    // thread count (the auto matrix is drawn as heatmaps instead).
    runs.plan.factors =
        vec![json!({ "name": "threads", "levels": (min..=max).collect::<Vec<_>>() })];
    Ok(runs)
}

fn test_names(spec: &IozoneSpec) -> String {
    spec.tests
        .iter()
        .map(|t| t.name())
        .collect::<Vec<_>>()
        .join(",")
}

/// The command line's runs with one configuration per spec, labelled and with the factors
/// `label_factors` gives, each run once, in order.
fn configurations<const N: usize>(
    dir: &Path,
    seed: u64,
    name: String,
    specs: Vec<IozoneSpec>,
    label_factors: impl Fn(&IozoneSpec) -> (String, [(&'static str, u64); N]),
) -> Runs<IozoneResult> {
    let outputs = Outputs::default();
    let configs = specs
        .into_iter()
        .map(|spec| {
            let (label, given) = label_factors(&spec);
            let factors: Map<String, Value> = given
                .iter()
                .map(|&(k, v)| (k.to_string(), json!(v)))
                .collect();
            CommandConfig {
                label,
                factors,
                workload_json: json!({ KEY: table::options_json::<IozoneTable>(&spec) }),
                workload: outputs
                    .wrap(TableWorkload::<IozoneTable>::new(spec, Origin::CommandLine)),
            }
        })
        .collect();
    Runs {
        plan: CommandPlan {
            name,
            source: "iolab iozone".into(),
            dir: dir.to_path_buf(),
            seed,
            configs,
            factors: Vec::new(),
        },
        outputs,
    }
}

/// The metrics' MiB (and the formats').
pub(crate) const MIB: f64 = 1048576.0;

/// Adds a run's measurements to `record`: the common metrics over every pass, each figure's
/// throughput (and iozone's throughput-mode figures), one flowop row per figure.
pub(crate) fn add_record(record: &mut RunRecord, r: &IozoneResult) {
    let elapsed = r.elapsed_ns();
    record.run.elapsed_ns = elapsed;
    let mut lat = iolab_engine::stats::LatencyHistogram::default();
    let mut usage = iolab_engine::usage::Usage::default();
    let (mut ops, mut bytes) = (0, 0);
    for f in &r.figures {
        lat.merge(&f.latency);
        usage = usage + f.usage;
        ops += f.ops();
        bytes += f.bytes();
    }
    let defs: &[MetricDef] = &METRICS;
    headline(
        record,
        Totals {
            ops,
            bytes,
            elapsed_ns: elapsed,
            latency: &lat.summary(),
            cpu: usage.cpu(),
        },
    );
    let throughput = r.plan.throughput_mode();
    for f in &r.figures {
        record
            .metrics
            .push(metric(defs, figure_metric(f.figure), f.rate() / MIB));
        if throughput {
            let [children, parent, min_xfer] = throughput_metrics(f.figure);
            record
                .metrics
                .push(metric(defs, &children, f.children_see() / MIB));
            record
                .metrics
                .push(metric(defs, &parent, f.parent_sees() / MIB));
            record
                .metrics
                .push(metric(defs, &min_xfer, f.min_xfer() as f64 / MIB));
        }
        let s = f.latency.summary();
        let reads = f.children.iter().any(|c| c.reads);
        let writes = f.children.iter().any(|c| !c.reads);
        record.flowops.push(FlowopStats {
            name: f.figure.name().into(),
            kind: match f.figure.direction() {
                Direction::Read => "read",
                Direction::Write => "write",
                Direction::PerThread => "mix",
            }
            .into(),
            ops: f.ops(),
            bytes: f.bytes(),
            errors: 0,
            latency: s,
            histogram: f.latency.buckets(),
            extra: json!({
                "read": reads,
                "write": writes,
                "elapsed_ns": f.elapsed_ns,
                "parent_ns": f.parent_ns,
                "flush_ns": f.flush_ns(),
                "flush": r.plan.flush.name(),
                "threads": r.plan.threads,
                "record": r.plan.record,
                "size": r.plan.size,
                "children_see_mib_per_s": f.children_see() / MIB,
                "parent_sees_mib_per_s": f.parent_sees() / MIB,
                "min_xfer_bytes": f.min_xfer(),
                "purge": r.plan.purge.name(),
                "purge_ns": f.purge_ns,
                "cached_bytes": f.cached_bytes,
                "cpu_s": f.usage.cpu_ns() as f64 / 1e9,
                "cpu_utilization_percent": f.cpu_utilization(),
            }),
        });
    }
}

/// What iozone tests mean to do, for the checks.
pub fn intent(plan: &IozonePlan, base: Intent) -> Intent {
    let (reads, writes) = (plan.reads(), plan.writes());
    Intent {
        dataset_advice: Some(DatasetAdvice {
            grow: Some(
                "raise the files' `size` (× `threads`) above {needed} (`size = \"{value}\"` with \
                 one thread)"
                    .into(),
            ),
            // iozone reads the files it has just written: the page cache holds them unless
            // they are larger than it, whether caches were dropped before the run or not.
            why: Some(
                "iozone reads the files it has just written, and writes without the flush in \
                 their timing end in the page cache: both measure memory unless the files are \
                 larger than the cache"
                    .into(),
            ),
            other_fixes: Some(
                "; or empty the files' cache before every pass (iozone `purge = \"fadvise\"`, \
                 or `\"remount\"` as iozone -U does); or read with O_DIRECT (iozone \
                 `direct = true`)."
                    .into(),
            ),
        }),
        access: Some(match (reads, writes) {
            (true, true) => CheckAccess::Mixed,
            (false, _) => CheckAccess::Write,
            (true, false) => CheckAccess::Read,
        }),
        o_direct: plan.direct,
        // Every write pass ends with an fsync (inside the timing or after it).
        sync_requested: writes,
        sync_scope: Some(if !writes {
            SyncScope::Never
        } else if plan.osync {
            SyncScope::EachWrite
        } else {
            SyncScope::EndOfPass
        }),
        writes_in_flight_per_file: Some(1),
        dataset_bytes: Some(plan.size * u64::from(plan.threads)),
        threads: Some(plan.threads),
        // iozone reads what it has just written: only files larger than the cache make those
        // reads reach the device (its own rule: files of 3× the cache).
        reads_meant_cold: true,
        cache_purged_each_pass: plan.purge != Purge::None,
        ..base
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_kind::table::testing;

    #[test]
    fn the_docs_list_the_iozone_options_of_the_one_table() {
        for (page, start) in [
            ("experiments.md", "`iozone` (see"),
            ("iozone.md", "## Options"),
        ] {
            let all = testing::doc(page);
            let text = &all[all.find(start).expect("the iozone table")..];
            for o in crate::OPTIONS {
                let r = testing::row(text, o.name)
                    .unwrap_or_else(|| panic!("docs/{page} has no row for `{}`", o.name));
                if let Some(d) = o.default {
                    assert!(
                        r.contains(&format!("`{d}`")),
                        "default of `{}` in {page}",
                        o.name
                    );
                }
            }
        }
    }

    #[test]
    fn the_tables_getters_undo_its_appliers() {
        testing::get_undoes_apply::<IozoneTable>();
    }

    use std::sync::atomic::AtomicBool;

    #[test]
    fn the_stored_spec_has_every_option() {
        let mut spec = IozoneSpec::with_defaults(PathBuf::from("/d"), 1);
        spec.mix_read_percent = Some(50);
        let stored = table::options_json::<IozoneTable>(&spec);
        for o in crate::OPTIONS {
            assert!(stored.get(o.name).is_some(), "`{}` is not stored", o.name);
        }
    }

    #[test]
    fn metrics_are_declared_with_units_and_iozone_figures_only_in_throughput_mode() {
        let _hang = iolab_testkit::timeout(120);
        let dir = tempfile::tempdir().unwrap();
        // One thread, one thread in throughput mode (iozone -t 1), two threads.
        for (threads, throughput) in [(1, false), (1, true), (2, false)] {
            let mut s = IozoneSpec::with_defaults(dir.path().to_path_buf(), 1);
            s.tests = vec![crate::Test::Write, crate::Test::Random];
            s.size = 256 << 10;
            s.threads = threads;
            s.throughput = throughput;
            let r = run_iozone(
                &s.validate().unwrap(),
                &mut (),
                &mut (),
                &AtomicBool::new(false),
            )
            .unwrap();
            let mut rec = iolab_kind::record::testing::record();
            add_record(&mut rec, &r);
            let defs = iolab_metrics::with_common(&METRICS);
            for m in &rec.metrics {
                let d = iolab_metrics::find(&defs, &m.name)
                    .unwrap_or_else(|| panic!("{} is not declared", m.name));
                assert_eq!(m.unit, d.unit, "{}", m.name);
            }
            let get = |n: &str| rec.metrics.iter().find(|m| m.name == n).map(|m| m.value);
            assert_eq!(get("ops"), Some(4.0 * 64.0 * f64::from(threads)));
            assert!(get("random_write_mib_per_s").unwrap() > 0.0);
            assert_eq!(
                get("write_children_mib_per_s").is_some(),
                threads > 1 || throughput
            );
            assert_eq!(rec.flowops.len(), 4);
            assert_eq!(rec.flowops[0].name, "write");
        }
    }

    #[test]
    fn the_command_line_plan_is_one_run_and_bad_values_name_the_flag() {
        let dir = std::env::temp_dir();
        let record = crate::options::option("record").unwrap();
        let size = crate::options::option("size").unwrap();
        let p = iolab_experiment::plan::single::single(
            from_command_line(&[(record, OptionValue::Bytes(8192))], &dir, 9)
                .unwrap()
                .plan,
        )
        .unwrap();
        assert_eq!(p.configs.len(), 1);
        assert_eq!(p.resolved["workload"]["iozone"]["record"], json!(8192));
        let e = from_command_line(
            &[
                (record, OptionValue::Bytes(1 << 20)),
                (size, OptionValue::Bytes(64 << 10)),
            ],
            &dir,
            1,
        )
        .unwrap_err();
        assert!(
            e.message
                .contains("--record 1048576 is larger than the file"),
            "{e}"
        );
    }

    #[test]
    fn a_workload_that_drops_caches_needs_root_even_in_a_directory() {
        use iolab_experiment::run::root_requirements;
        let dir = tempfile::tempdir().unwrap();
        let plan = |workload: &str| {
            let text = format!(
                "[sut]\ntarget = {{ kind = \"directory\", path = \"{}\" }}\n\
                 [procedure]\ndrop_caches = false\n[workload]\n{workload}\n",
                dir.path().display()
            );
            iolab_experiment::load_str(&dir.path().join("x.toml"), &text).unwrap()
        };
        assert!(root_requirements(&plan("iozone = { size = \"1m\" }")).is_empty());
        let need = root_requirements(&plan("iozone = { size = \"1m\", purge = \"drop_caches\" }"));
        assert_eq!(
            need,
            ["dropping the page cache between passes (workload.iozone.purge = \"drop_caches\")"]
        );
        assert!(
            root_requirements(&plan("iozone = { size = \"1m\", purge = \"fadvise\" }")).is_empty()
        );
    }

    #[test]
    fn intent_says_reads_are_meant_for_the_device() {
        let s = IozoneSpec::with_defaults("/tmp".into(), 1);
        let i = intent(&s.validate().unwrap(), Intent::default());
        assert!(i.reads_meant_cold);
        assert_eq!(i.access, Some(CheckAccess::Mixed));
        assert_eq!(i.dataset_bytes, Some(64 << 20));
    }
}
