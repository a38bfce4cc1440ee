//! File-list replay (docs/replay.md): `[workload] replay = { install = …, boot = …, days = …,
//! between_days = … }` in an experiment, `iolab replay` on the command line; both read the
//! options of the one table, [`OPTIONS`]. The lists are
//! read and validated together (iolab-replay's simulated namespace) when the plan is made,
//! so a bad list stops the experiment before anything runs; a run replays the install, then
//! each day (the boot list, then the day's operations), ending the install and every day with
//! a remount, a cache drop or a syncfs.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::{DayEnd, DayEndReport, ListError, PhaseKind, Program, ReplayResult};
use iolab_check::{Access, SyncScope};
use iolab_engine::stats::LatencySummary;
use iolab_metrics::{Better, MetricDef};
use iolab_monitor::diskstats::DiskCounters;
use iolab_store::{FlowopStats, MonitorSeries, RunRecord};
use iolab_sys::DevT;
use iolab_util::option::{intern_path, OptionDef, OptionKind, OptionValue};
use serde_json::{json, Value};

use iolab_kind::input::error::ExperimentError;
use iolab_kind::input::read::Ctx;
use iolab_kind::input::tree::Entry;
use iolab_kind::record::{headline, metric, Totals};
use iolab_kind::table::{self, OptionTable, TableKind, PLACEHOLDER_DIR};
use iolab_kind::Intent;
use iolab_kind::Runs;
use iolab_kind::UsageError;
use iolab_kind::{LoadContext, Workload};
use iolab_kind::{RunCtx, RunFailure, SutControl};

/// The `[workload]` key.
pub const KEY: &str = "replay";

/// How a day ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BetweenDays {
    /// Unmount (its writeback timed as part of the day) and mount again: the page cache,
    /// dentries and inodes of the filesystem are gone.
    Remount,
    /// `syncfs` (timed), then drop the page cache, dentries and inodes (not timed).
    DropCaches,
    /// `syncfs` (timed) only: the next day starts with whatever is cached.
    None,
}

impl BetweenDays {
    pub const NAMES: [&'static str; 3] = ["remount", "drop_caches", "none"];

    pub fn name(self) -> &'static str {
        match self {
            BetweenDays::Remount => "remount",
            BetweenDays::DropCaches => "drop_caches",
            BetweenDays::None => "none",
        }
    }

    pub fn parse(s: &str) -> Option<BetweenDays> {
        match s {
            "remount" => Some(BetweenDays::Remount),
            "drop_caches" => Some(BetweenDays::DropCaches),
            "none" => Some(BetweenDays::None),
            _ => None,
        }
    }
}

/// The kind's metrics: per day (means over the days) and for the install.
pub const METRICS: &[MetricDef] = &[
    MetricDef::new(
        "day_s",
        "s",
        Some(Better::Lower),
        "Time per day",
        "mean over the days of the time from the mount to the completed unmount (the boot list, the day's operations and the flush that ends the day)",
    )
    .headline(),
    MetricDef::new(
        "days_total_s",
        "s",
        Some(Better::Lower),
        "All days",
        "the days' times (mount to completed unmount) added up",
    ),
    MetricDef::new(
        "install_s",
        "s",
        Some(Better::Lower),
        "Install",
        "the install list's time, with the flush that ends it",
    ),
    MetricDef::new(
        "install_mib_per_s",
        "MiB/s",
        Some(Better::Higher),
        "Install throughput",
        "bytes the install list writes per second of its operations (the flush excluded)",
    ),
    MetricDef::new(
        "boot_mib_per_s",
        "MiB/s",
        Some(Better::Higher),
        "Boot throughput",
        "mean over the days of the bytes the boot list reads per second of its operations",
    ),
    MetricDef::new(
        "boot_files_per_s",
        "files/s",
        Some(Better::Higher),
        "Boot files",
        "mean over the days of the files the boot list reads per second",
    ),
    MetricDef::new(
        "work_mib_per_s",
        "MiB/s",
        Some(Better::Higher),
        "Day's work throughput",
        "mean over the days of the bytes a day's own operations read and write per second",
    ),
    MetricDef::new(
        "work_files_per_s",
        "files/s",
        Some(Better::Higher),
        "Day's work files",
        "mean over the days of the files a day's own operations create, read and delete per second",
    ),
    MetricDef::new(
        "flush_s",
        "s",
        Some(Better::Lower),
        "Flush per day",
        "mean over the days of the flush that ends a day: the unmount (remount) or syncfs (otherwise)",
    ),
];

/// The replay kind.
pub static REPLAY: TableKind = TableKind {
    key: KEY,
    noun: "file-list replays",
    example: "replay = { install = \"install.list\", days = \"days.list\" }",
    metrics: || METRICS,
    misplaced: |key| match key {
        "time" => "a replay runs its lists to the end: remove it",
        _ => "remove it: give the replay's settings inside replay = { … }",
    },
    needs_target: true,
    resolve: |cx, entry, at| read(cx, entry, at).map(iolab_kind::erase),
};

/// The lists of a replay and how its days end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplaySpec {
    pub install: Option<PathBuf>,
    pub boot: Option<PathBuf>,
    pub days: Option<PathBuf>,
    pub between_days: BetweenDays,
}

/// One option of a replay, declared once: `--NAME VALUE` for `iolab replay`, `NAME = VALUE`
/// in an experiment's `[workload] replay = { … }`, and what the stored spec holds.
pub type ReplayOption = OptionDef<ReplaySpec>;

/// A list's option: its path in `field` of the spec.
macro_rules! list_option {
    ($name:literal, $field:ident, $help:literal) => {
        ReplayOption {
            name: $name,
            value_name: "FILE",
            kind: OptionKind::Path,
            default: None,
            aliases: &[],
            help: $help,
            original: "",
            apply: |s, v| {
                if let Some(p) = v.path() {
                    s.$field = Some(p.to_path_buf());
                }
            },
            get: |s| {
                s.$field
                    .as_deref()
                    .map(|p| OptionValue::Path(intern_path(p)))
            },
        }
    };
}

/// Every replay option, in the order help lists them. `between_days` defaults to `remount`
/// in an experiment; `iolab replay` has its own default, `none` (see the command).
pub const OPTIONS: &[ReplayOption] = &[
    list_option!(
        "install",
        install,
        "The install list: run once, before the first day"
    ),
    list_option!("boot", boot, "The boot list: run at the start of every day"),
    list_option!(
        "days",
        days,
        "The days list (`[day N]` sections): each day's own operations"
    ),
    ReplayOption {
        name: "between_days",
        value_name: "HOW",
        kind: OptionKind::Choice(&BetweenDays::NAMES),
        default: Some("remount"),
        aliases: &[],
        help: "How the install and each day end: `none` (syncfs, timed), `drop_caches` \
               (syncfs, timed, then drop the caches; root), `remount` (experiments with a \
               mounted target only)",
        original: "",
        apply: |s, v| s.between_days = BetweenDays::parse(v.name()).unwrap_or(s.between_days),
        get: |s| Some(OptionValue::Name(s.between_days.name())),
    },
];

/// The lists' options, as `--install, --boot, --days` or `install = "…", …` would write
/// them (`each` writes one), for the hints of a replay without a list.
pub(crate) fn lists(each: impl Fn(&ReplayOption) -> String) -> String {
    OPTIONS
        .iter()
        .filter(|o| o.kind == OptionKind::Path)
        .map(each)
        .collect::<Vec<_>>()
        .join(", ")
}

/// A replay names no list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NoList;

impl std::fmt::Display for NoList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("no list to replay")
    }
}

impl iolab_util::setting::Worded for NoList {
    fn phrase(&self) -> iolab_util::setting::Phrase {
        iolab_util::setting::Phrase::text(self.to_string())
    }
}

/// replay's one option table. Its spec is checked only for naming a list: the lists
/// themselves are loaded and checked together when the plan is made (`read`,
/// [`from_command_line`]), where their errors are located in the list files.
pub struct ReplayTable;

impl OptionTable for ReplayTable {
    type Spec = ReplaySpec;
    type Plan = ();
    type Error = NoList;
    const KIND: &'static str = KEY;
    /// No option names another tool's flag.
    const TOOL: &'static str = "";

    fn options() -> &'static [ReplayOption] {
        OPTIONS
    }

    /// The lists are not placed in the run's directory: they are read when the plan is made.
    fn defaults(_dir: PathBuf, _seed: u64) -> ReplaySpec {
        ReplaySpec {
            install: None,
            boot: None,
            days: None,
            between_days: BetweenDays::Remount,
        }
    }

    fn validate(spec: &ReplaySpec) -> Result<(), NoList> {
        if spec.install.is_none() && spec.boot.is_none() && spec.days.is_none() {
            return Err(NoList);
        }
        Ok(())
    }

    /// Any list would do; the first.
    fn fault(_: &NoList, _: &dyn Fn(&str) -> bool) -> &'static str {
        "install"
    }
}

/// A validated replay.
#[derive(Debug, Clone)]
pub struct ReplayWorkload {
    pub spec: ReplaySpec,
    pub program: Arc<Program>,
}

/// Reads `replay = { … }`: the lists (paths relative to the experiment file's directory),
/// loaded and validated together; `between_days`, which must be possible on the target.
fn read(cx: &mut Ctx, entry: &Entry, at: &LoadContext) -> Option<ReplayWorkload> {
    let mut spec = ReplayTable::defaults(PLACEHOLDER_DIR.into(), 0);
    let t = cx.options(entry, "workload.replay", OPTIONS, &mut spec)?;
    table::resolve_paths(OPTIONS, &mut spec, at.base);
    if ReplayTable::validate(&spec).is_err() {
        cx.error_hint(
            &entry.node.span,
            "`workload.replay` names no list",
            format!(
                "give at least one of {}",
                lists(|o| format!("{} = \"…\"", o.name))
            ),
        );
        return None;
    }
    if spec.between_days == BetweenDays::Remount && at.remountable == Some(false) {
        let span = t
            .get("between_days")
            .map_or(entry.node.span.clone(), |e| e.node.span.clone());
        cx.error_hint(
            &span,
            "`workload.replay.between_days` = \"remount\" needs a filesystem iolab mounts and that keeps its files (this target is a directory or a tmpfs)",
            "use a loop_image or block_device target, or between_days = \"drop_caches\" (or \"none\")",
        );
        return None;
    }
    let (line, col) = cx.src.line_col(entry.node.span.start);
    let named_at = format!(
        "in the replay named by `workload.replay` at {}:{line}:{col}",
        cx.src.path.display()
    );
    match load(&spec) {
        Ok(program) => {
            if let Some(cap) = at.target_bytes.filter(|&c| program.peak_bytes > c) {
                cx.error_hint(
                    &entry.node.span,
                    format!(
                        "`workload.replay`: its files reach {} at once, more than the {} target",
                        iolab_util::units::format_bytes(program.peak_bytes),
                        iolab_util::units::format_bytes(cap)
                    ),
                    "make the target larger",
                );
                return None;
            }
            Some(ReplayWorkload {
                spec,
                program: Arc::new(program),
            })
        }
        Err(e) => {
            let hint = e.hint.clone().unwrap_or_default();
            cx.push(
                ExperimentError::new(&e.file, e.line, e.col, e.message).hint(format!(
                    "{hint}{}{named_at}",
                    if hint.is_empty() { "" } else { "; " }
                )),
            );
            None
        }
    }
}

fn load(spec: &ReplaySpec) -> Result<Program, ListError> {
    crate::load(
        spec.install.as_deref(),
        spec.boot.as_deref(),
        spec.days.as_deref(),
    )
}

/// `iolab replay`: the lists (paths as given), validated, as the one-run plan for `dir`.
pub fn from_command_line(
    spec: ReplaySpec,
    dir: &Path,
    seed: u64,
) -> Result<Runs<ReplayResult>, UsageError> {
    ReplayTable::validate(&spec).map_err(|e| {
        UsageError::new(e.to_string()).hint(format!(
            "give at least one of {}",
            lists(|o| format!("--{}", o.flag()))
        ))
    })?;
    if spec.between_days == BetweenDays::Remount {
        return Err(UsageError::new(
            "--between-days remount: iolab does not remount a --dir it did not mount",
        )
        .hint("use --between-days drop_caches (as root) or none, or an experiment file with a loop_image target"));
    }
    let program = load(&spec).map_err(list_usage)?;
    let name = format!(
        "replay {} days between={}",
        program.days,
        spec.between_days.name()
    );
    let workload_json = json!({ KEY: spec_json(&spec) });
    Ok(Runs::one(
        name,
        "iolab replay",
        dir.to_path_buf(),
        seed,
        ReplayWorkload {
            spec,
            program: Arc::new(program),
        },
        workload_json,
    ))
}

/// A bad list on the command line: located at its line, exit 2, with its hint.
pub(crate) fn list_usage(e: ListError) -> UsageError {
    let err = UsageError::located(e.to_string());
    match e.hint {
        Some(h) => err.hint(h),
        None => err,
    }
}

/// The spec as stored, from the table: the lists' paths made absolute, so that the stored
/// spec names the files wherever it is read.
fn spec_json(spec: &ReplaySpec) -> Value {
    let mut stored = spec.clone();
    for p in [&mut stored.install, &mut stored.boot, &mut stored.days]
        .into_iter()
        .flatten()
    {
        if let Ok(absolute) = std::fs::canonicalize(&*p) {
            *p = absolute;
        }
    }
    table::options_json::<ReplayTable>(&stored)
}

/// Ends the install and every day as `between_days` says.
struct Ender<'a> {
    sut: &'a mut dyn SutControl,
    between: BetweenDays,
    /// The block device under the directory, and its counters when the day started. The
    /// device's counters rather than the files' residency in the page cache tell whether a
    /// day started cold: measuring residency would open the files, and so read their inodes
    /// and directories back into memory for the next day.
    dev: Option<DevT>,
    last: Option<DiskCounters>,
}

impl<'a> Ender<'a> {
    fn new(sut: &'a mut dyn SutControl, between: BetweenDays, dir: &Path) -> Self {
        let dev = DevT::of_file(dir).ok();
        Ender {
            sut,
            between,
            dev,
            last: device_counters(dev),
        }
    }
}

/// The counters of the block device `dev` (`None` without one: tmpfs).
fn device_counters(dev: Option<DevT>) -> Option<DiskCounters> {
    let dev = dev?;
    iolab_monitor::diskstats::read()
        .ok()?
        .get_dev(dev)
        .map(|d| d.counters)
}

impl DayEnd for Ender<'_> {
    fn end_of_day(&mut self, dir: &Path, _day: u32) -> Result<DayEndReport, String> {
        let mut r = DayEndReport::default();
        match self.between {
            BetweenDays::Remount => {
                let m = self.sut.remount()?;
                r.flush_ns = m.unmount.as_nanos() as u64;
                r.other_ns = m.mount.as_nanos() as u64;
                r.mount_id = m.mount_id;
            }
            BetweenDays::DropCaches => {
                r.flush_ns = iolab_sut::cache::syncfs(dir)?.as_nanos() as u64;
                r.other_ns = iolab_sut::cache::drop_all(&[], "between_days = \"drop_caches\"")?
                    .as_nanos() as u64;
            }
            BetweenDays::None => r.flush_ns = iolab_sut::cache::syncfs(dir)?.as_nanos() as u64,
        }
        let now = device_counters(self.dev);
        if let (Some(a), Some(b)) = (self.last, now) {
            r.device_read_bytes = Some(b.sectors_read.saturating_sub(a.sectors_read) * 512);
            r.device_write_bytes = Some(b.sectors_written.saturating_sub(a.sectors_written) * 512);
        }
        self.last = now;
        Ok(r)
    }
}

impl Workload for ReplayWorkload {
    type Output = ReplayResult;

    fn kind(&self) -> &'static str {
        KEY
    }

    fn needs_root(&self) -> Option<String> {
        (self.spec.between_days == BetweenDays::DropCaches).then(|| {
            "dropping the page cache between days (workload.replay.between_days = \
             \"drop_caches\")"
                .to_string()
        })
    }

    fn metrics(&self) -> &'static [MetricDef] {
        METRICS
    }

    fn intent(&self, base: Intent) -> Intent {
        let fsyncs = self.program.phases.iter().any(|p| {
            p.steps.iter().any(|(_, s)| {
                matches!(
                    s,
                    crate::check::Step::Fsync | crate::check::Step::Create { fsync: true, .. }
                )
            })
        });
        let (reads, writes) = self.program.phases.iter().fold((0u64, 0u64), |(r, w), p| {
            (
                r.saturating_add(p.read_bytes),
                w.saturating_add(p.write_bytes),
            )
        });
        Intent {
            access: Some(match (reads > 0, writes > 0) {
                (true, false) => Access::Read,
                (false, true) => Access::Write,
                _ => Access::Mixed,
            }),
            sync_requested: fsyncs,
            sync_scope: Some(if fsyncs {
                SyncScope::SomeWrites
            } else {
                SyncScope::Never
            }),
            writes_in_flight_per_file: Some(1),
            // A replay that empties the caches every day does so itself: files that fit in
            // memory are what it models, and within a day a re-read may be served from the
            // cache as on the real machine, so the dataset-to-memory rule (`cache-fit`) does
            // not apply. Without it (`none`) the rule stands.
            dataset_bytes: (self.spec.between_days == BetweenDays::None)
                .then_some(self.program.peak_bytes),
            threads: Some(1),
            ..base
        }
    }

    fn planned_duration(&self) -> Option<Duration> {
        None
    }

    fn describe(&self) -> serde_json::Map<String, Value> {
        let mut m = serde_json::Map::new();
        m.insert("replay".into(), spec_json(&self.spec));
        m.insert("days".into(), json!(self.program.days));
        m
    }

    fn run(&self, run: &mut RunCtx<'_>) -> Result<Self::Output, RunFailure> {
        run.hooks.timed_start();
        let mut ender = Ender::new(&mut *run.sut, self.spec.between_days, run.dir);
        let r = crate::replay(&self.program, run.dir, run.cancel, &mut ender);
        run.hooks.timed_end();
        let r = r.map_err(|e| RunFailure {
            message: e.to_string(),
            hint: e.hint().map(str::to_string),
            bad_input: e.is_bad_input(),
            interrupted: e.is_interrupted(),
            located: false,
        })?;
        add_record(run.record, &r);
        Ok(r)
    }
}

/// `(ns since the replay started, value)`, one per day.
type Points = Vec<(i64, f64)>;

fn mean(v: impl Iterator<Item = f64>) -> f64 {
    let (mut s, mut n) = (0.0, 0u32);
    for x in v.filter(|x| x.is_finite()) {
        s += x;
        n += 1;
    }
    if n == 0 {
        f64::NAN
    } else {
        s / f64::from(n)
    }
}

/// Adds a replay's measurements to `record`: the common metrics over the whole replay, the
/// kind's own, one flowop row per day (kind `replay_day`) and per phase (`replay_phase`),
/// and per-day series (`replay.*`, one point at each day's end).
fn add_record(record: &mut RunRecord, r: &ReplayResult) {
    record.run.elapsed_ns = r.elapsed_ns;
    let phases = || r.all().flat_map(|d| d.phases.iter());
    let files: u64 = phases().map(|p| p.files).sum();
    let bytes: u64 = phases().map(|p| p.read_bytes + p.write_bytes).sum();
    headline(
        record,
        Totals {
            ops: files,
            bytes,
            elapsed_ns: r.elapsed_ns,
            latency: &LatencySummary::default(),
            cpu: r.usage.cpu(),
        },
    );
    let phase_of =
        |k: PhaseKind| move |d: &crate::DayResult| d.phases.iter().find(|p| p.kind == k).cloned();
    let days = &r.days;
    let mut put = |name: &str, v: f64| record.metrics.push(metric(METRICS, name, v));
    put("day_s", mean(days.iter().map(|d| d.time_ns as f64 / 1e9)));
    // Summed in whole nanoseconds: a float sum of no days would be -0.
    put(
        "days_total_s",
        days.iter().map(|d| d.time_ns).sum::<u64>() as f64 / 1e9,
    );
    if let Some(i) = &r.install {
        put("install_s", i.time_ns as f64 / 1e9);
        put(
            "install_mib_per_s",
            mean(i.phases.iter().map(|p| p.mib_per_s())),
        );
    }
    for (name, kind, files) in [
        ("boot_mib_per_s", PhaseKind::Boot, false),
        ("boot_files_per_s", PhaseKind::Boot, true),
        ("work_mib_per_s", PhaseKind::Work, false),
        ("work_files_per_s", PhaseKind::Work, true),
    ] {
        let v: Vec<f64> = days
            .iter()
            .filter_map(phase_of(kind))
            .map(|p| {
                if files {
                    p.files_per_s()
                } else {
                    p.mib_per_s()
                }
            })
            .collect();
        if !v.is_empty() {
            put(name, mean(v.into_iter()));
        }
    }
    put(
        "flush_s",
        mean(days.iter().map(|d| d.end.flush_ns as f64 / 1e9)),
    );

    // Per day, at its end (ns since the replay started).
    let mut at = 0u64;
    let mut series: Vec<(&str, &str, Points)> = vec![
        ("replay.day_s", "s", Vec::new()),
        ("replay.flush_s", "s", Vec::new()),
        ("replay.boot_mib_per_s", "MiB/s", Vec::new()),
        ("replay.work_mib_per_s", "MiB/s", Vec::new()),
        ("replay.work_files_per_s", "files/s", Vec::new()),
        ("replay.device_read_mib", "MiB", Vec::new()),
        ("replay.device_write_mib", "MiB", Vec::new()),
    ];
    for d in r.all() {
        at += d.time_ns + d.end.other_ns;
        let t = i64::try_from(at).unwrap_or(i64::MAX);
        let boot = phase_of(PhaseKind::Boot)(d);
        let work = phase_of(PhaseKind::Work)(d);
        let values = [
            Some(d.time_ns as f64 / 1e9),
            Some(d.end.flush_ns as f64 / 1e9),
            boot.as_ref().map(|p| p.mib_per_s()),
            work.as_ref().map(|p| p.mib_per_s()),
            work.as_ref().map(|p| p.files_per_s()),
            d.end.device_read_bytes.map(|b| b as f64 / 1048576.0),
            d.end.device_write_bytes.map(|b| b as f64 / 1048576.0),
        ];
        if d.day == 0 {
            continue;
        }
        for (s, v) in series.iter_mut().zip(values) {
            if let Some(v) = v {
                s.2.push((t, v));
            }
        }
    }
    for (name, unit, points) in series {
        if !points.is_empty() {
            record.monitor.push(MonitorSeries {
                metric: name.into(),
                unit: unit.into(),
                points,
            });
        }
    }

    let none = LatencySummary::default();
    for d in r.all() {
        let label = if d.day == 0 {
            "install".to_string()
        } else {
            format!("day {}", d.day)
        };
        let (files, bytes) = d.phases.iter().fold((0, 0), |(f, b), p| {
            (f + p.files, b + p.read_bytes + p.write_bytes)
        });
        record.flowops.push(FlowopStats {
            name: label.clone(),
            kind: "replay_day".into(),
            ops: files,
            bytes,
            errors: 0,
            latency: none,
            histogram: Vec::new(),
            extra: json!(d.summary()),
        });
        for p in &d.phases {
            record.flowops.push(FlowopStats {
                name: format!("{label} {}", p.kind.name()),
                kind: "replay_phase".into(),
                ops: p.files,
                bytes: p.read_bytes + p.write_bytes,
                errors: 0,
                latency: none,
                histogram: Vec::new(),
                extra: json!(p.figures()),
            });
        }
    }
}

/// A replay run for the tests of this place: real files, real system calls.
#[cfg(test)]
pub(crate) mod fixture {
    use super::*;

    /// Replays the lists (`[day N]` sections in `days`) in a fresh directory, each day ended
    /// with a `syncfs`, and records the run as the runner does.
    pub fn replayed(
        install: Option<&str>,
        boot: Option<&str>,
        days: Option<&str>,
    ) -> (ReplayResult, RunRecord) {
        let dir = tempfile::tempdir().unwrap();
        let l = |t: Option<&str>, r| t.map(|t| crate::parse(Path::new("x"), t, r).unwrap());
        let program = crate::check(&crate::Lists {
            install: l(install, crate::Role::Plain),
            boot: l(boot, crate::Role::Plain),
            days: l(days, crate::Role::Days),
        })
        .unwrap();
        let mut no_sut = iolab_kind::NoSut;
        let mut ender = Ender::new(&mut no_sut, BetweenDays::None, dir.path());
        let r = crate::replay(
            &program,
            dir.path(),
            &std::sync::atomic::AtomicBool::new(false),
            &mut ender,
        )
        .unwrap();
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert!(left.is_empty(), "the replay left {left:?}");
        let mut rec = iolab_kind::record::testing::record();
        add_record(&mut rec, &r);
        (r, rec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_kind::record::testing;

    #[test]
    fn a_replay_records_its_declared_metrics_and_a_row_per_day() {
        let (_, rec) = super::fixture::replayed(
            Some("a/b, 5000, c\n"),
            Some("a/b, 5000, s\n"),
            Some("[day 1]\nc, 10, c\n[day 2]\nc, 10, d\n"),
        );
        testing::assert_declared(&rec, METRICS);
        for d in METRICS {
            assert!(rec.metrics.iter().any(|m| m.name == d.name), "{}", d.name);
        }
        let days: Vec<_> = rec
            .flowops
            .iter()
            .filter(|f| f.kind == "replay_day")
            .map(|f| f.name.as_str())
            .collect();
        assert_eq!(days, ["install", "day 1", "day 2"]);
        let s = rec
            .monitor
            .iter()
            .find(|m| m.metric == "replay.day_s")
            .unwrap();
        assert_eq!(s.points.len(), 2);
    }

    #[test]
    fn the_tables_getters_undo_its_appliers() {
        iolab_kind::table::testing::get_undoes_apply::<ReplayTable>();
    }

    /// An experiment's lists start in its file's directory (not the working directory), and
    /// the stored spec names them absolutely and reads back as the spec that ran.
    #[test]
    fn relative_lists_start_at_the_experiment_and_are_stored_absolute() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(base.join("lists")).unwrap();
        std::fs::create_dir_all(base.join("target")).unwrap();
        std::fs::write(base.join("lists/install.list"), "a, 10, c\n").unwrap();
        std::fs::write(base.join("days.list"), "[day 1]\na, 10, s\n").unwrap();
        let days = base.join("days.list");
        let text = format!(
            "[sut]\ntarget = {{ kind = \"directory\", path = \"target\" }}\n[workload]\n\
             replay = {{ install = \"lists/../lists/install.list\", days = {:?}, \
             between_days = \"none\" }}\n",
            days.display().to_string()
        );
        let file = base.join("e.toml");
        let p = iolab_experiment::load_str(&file, &text).unwrap();
        let stored = p.stored_workload(0);
        assert_eq!(
            stored["replay"],
            json!({
                "install": base.join("lists/install.list").display().to_string(),
                "days": days.display().to_string(),
                "between_days": "none",
            })
        );
        let spec = table::from_stored::<ReplayTable>(stored).unwrap();
        assert_eq!(
            spec,
            ReplaySpec {
                install: Some(base.join("lists/install.list")),
                boot: None,
                days: Some(days),
                between_days: BetweenDays::None,
            }
        );
        // Unset, `between_days` is an experiment's default, `remount`, which a directory
        // target cannot do.
        let e = iolab_experiment::load_str(&file, &text.replace("between_days = \"none\"", ""))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("`workload.replay.between_days` = \"remount\""),
            "{e}"
        );
    }

    #[test]
    fn the_command_line_refuses_a_remount_of_a_directory() {
        let spec = ReplaySpec {
            install: None,
            boot: None,
            days: Some("x".into()),
            between_days: BetweenDays::Remount,
        };
        let e = from_command_line(spec, &std::env::temp_dir(), 1).unwrap_err();
        assert!(e.message.contains("--between-days remount"), "{e:?}");
    }
}
