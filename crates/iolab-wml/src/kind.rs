//! filebench workloads: `wml = "file.f"` and `builtin = "name"` in an experiment, `iolab run
//! FILE.f|NAME` on the command line (docs/wml.md).
//!
//! The WML front end after parsing — validate, lower, scale, check — is [`front_end`], the
//! one sequence every path takes: `iolab run` when it builds its plan, experiments at load
//! time (with a stand-in `$dir`), and every run with its real directory. A file is parsed
//! once; the plan keeps the parsed tree.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::{LowerOptions, Parsed, ValidateOptions, WmlError, WmlErrors};
use iolab_check::{Access, DatasetAdvice, SyncScope};
use iolab_engine::backend::{EngineKind, MAX_IODEPTH};
use iolab_engine::fileset::FilesetError;
use iolab_engine::workload::{
    check_options, run_workload, OptionsError, RunOptions, WorkloadResult,
};
use iolab_engine::EngineError;
use iolab_metrics::{Better, MetricDef};
use iolab_store::{FlowopStats, RunRecord};
use iolab_util::suggest;
use iolab_workload::model::{FlowopKind, FlowopSpec, Workload as Lowered};
use serde_json::{json, Map, Value};

use iolab_kind::input::error::{ExperimentError, ExperimentErrors};
use iolab_kind::input::read::{join, Ctx};
use iolab_kind::input::tree::{Entry, Table, Value as Toml};
use iolab_kind::record::{headline, metric, per_second, series, Totals};
use iolab_kind::Intent;
use iolab_kind::{DynWorkload, Runs};
use iolab_kind::{Kind, LoadContext, Workload};
use iolab_kind::{Origin, UsageError};
use iolab_kind::{RunCtx, RunFailure, SutControl};
use iolab_util::setting::{Phrase, Worded};

/// The two ways an experiment names a WML workload.
pub struct WmlKind {
    builtin: bool,
}

pub static WML: WmlKind = WmlKind { builtin: false };
pub static BUILTIN: WmlKind = WmlKind { builtin: true };

/// The `[workload]` keys both read besides their own.
const KEYS: &[&str] = &[
    "set",
    "time",
    "size_scale",
    "pick",
    "system",
    "engine",
    "iodepth",
];
const PICKS: &[&str] = &["round-robin", "random"];

/// What WML runs record besides the common metrics.
pub const METRICS: &[MetricDef] = &[
    MetricDef::new(
        "read_ops_per_s",
        "op/s",
        Some(Better::Higher),
        "Read throughput",
        "read flowops (read, readwholefile, aioread) per second",
    ),
    MetricDef::new(
        "write_ops_per_s",
        "op/s",
        Some(Better::Higher),
        "Write throughput",
        "write flowops (write, append, whole-file and aio writes) per second",
    ),
    MetricDef::new(
        "threads",
        "",
        None,
        "Threads",
        "threads the workload ran (processes × instances × threads)",
    ),
];

/// How a WML workload runs: what the command line or `[workload]` adds to the file.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// Variable overrides (`--set`, `workload.set`); `$dir` is the run directory's.
    pub sets: Vec<(String, String)>,
    /// Overrides the file's `run N` (required when it has none).
    pub duration: Option<Duration>,
    /// Multiplies every fileset's file sizes.
    pub size_scale: Option<f64>,
    /// Pick files at random instead of round-robin.
    pub pick_random: bool,
    /// Run the file's `system` commands (default); `false` (`--no-system`,
    /// `workload.system = false`) skips and reports each.
    pub run_system: bool,
    /// The backend every flowop's I/O goes through (`--engine`, `workload.engine`); `None`:
    /// psync.
    pub engine: Option<EngineKind>,
    /// Transfers in flight per thread on an engine that queues (`--iodepth`,
    /// `workload.iodepth`).
    pub iodepth: Option<u32>,
}

impl Settings {
    /// The engine's options for a run with `seed` (and no cancel flag).
    fn run_options(&self, seed: u64) -> RunOptions {
        RunOptions {
            duration: self.duration,
            seed,
            pick_random: self.pick_random,
            populate_threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            cancel: None,
            engine: self.engine,
            iodepth: self.iodepth,
            run_system: self.run_system,
        }
    }

    /// The engine options against the workload (an iodepth the engine cannot queue, directio
    /// on a mapping engine), before anything runs: the message and hint for the command
    /// line, and which setting is at fault (`engine` or `iodepth`).
    fn check_engine(&self, w: &Lowered) -> Result<(), (OptionsError, &'static str)> {
        check_options(w, &self.run_options(0)).map_err(|e| {
            let key = match e {
                OptionsError::Depth(_) if self.iodepth.is_some() => "iodepth",
                _ => "engine",
            };
            (e, key)
        })
    }
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            sets: Vec::new(),
            duration: None,
            size_scale: None,
            pick_random: false,
            run_system: true,
            engine: None,
            iodepth: None,
        }
    }
}

/// A workload after the front end.
#[derive(Debug, Clone)]
pub struct FrontEnd {
    pub workload: Lowered,
    /// The parser's and the validator's warnings, each once.
    pub warnings: Vec<String>,
}

/// The WML front end after parsing: validate (the `set` variables and, when given, `$dir`
/// predefined), lower with the overrides and `$dir`, scale the filesets' sizes, and check
/// what only the lowered workload shows (an fd opened twice, an iosize beyond its working
/// set) at the sizes that will run. `dir` `None` keeps the file's own `$dir`.
pub fn front_end(
    parsed: &Parsed,
    settings: &Settings,
    dir: Option<&str>,
) -> Result<FrontEnd, WmlErrors> {
    let mut overrides = settings.sets.clone();
    if let Some(d) = dir {
        overrides.push(("dir".into(), d.into()));
    }
    let predefined = overrides.iter().map(|(k, _)| k.clone()).collect();
    // The parser's warnings and the validator's, each once.
    let warnings = crate::validate_with(parsed, &ValidateOptions { predefined })?
        .iter()
        .map(|w| w.to_string())
        .collect();
    let mut workload = crate::lower(parsed, &LowerOptions { overrides })?;
    if let Some(f) = settings.size_scale {
        for fs in &mut workload.filesets {
            fs.size = std::mem::replace(&mut fs.size, iolab_workload::rv::Rv::Const(0)).scaled(f);
        }
    }
    crate::check(parsed, &workload)?;
    Ok(FrontEnd { workload, warnings })
}

/// The variables of `names` that `parsed` neither sets nor reads (a `set` of one would
/// silently run the defaults), each with a close name it does have.
pub fn unknown_variables<'a>(
    parsed: &Parsed,
    names: impl IntoIterator<Item = &'a str>,
) -> Vec<(&'a str, Option<String>)> {
    let known = parsed.variables();
    names
        .into_iter()
        .filter(|n| *n != "dir" && !known.contains(*n))
        .map(|n| {
            let close = suggest::closest(n, known.iter().map(String::as_str)).map(str::to_string);
            (n, close)
        })
        .collect()
}

/// A validated WML workload.
#[derive(Debug, Clone)]
pub struct WmlWorkload {
    /// The file (resolved) or `builtin:NAME`.
    pub source: String,
    /// Parsed once, when the plan was made.
    pub parsed: Arc<Parsed>,
    pub settings: Settings,
    /// Through the front end with the directory known when the plan was made (a stand-in in
    /// experiments): what it means to do and for how long.
    pub checked: FrontEnd,
    /// Whether each run sets `$dir` to its directory (experiments, `--dir`), or the file's
    /// own `$dir` stays.
    sets_dir: bool,
    origin: Origin,
}

impl WmlWorkload {
    /// The workload a stored `[workload]` section describes (an experiment's resolved JSON
    /// keeps one per configuration; its file's path is stored absolute), read again.
    pub fn from_stored(workload: &Value) -> Result<WmlWorkload, ExperimentErrors> {
        let kind = if workload.get("builtin").is_some() {
            &BUILTIN
        } else {
            &WML
        };
        // The file as it was read (`source`, absolute), not as the experiment named it
        // (relative to the experiment file).
        let mut workload = workload.clone();
        if let (Some(source), false) = (workload.get("source").cloned(), kind.builtin) {
            workload["wml"] = source;
        }
        iolab_kind::input::reread(&workload, kind.key(), |cx, t, e| {
            kind.read(cx, t, e, Path::new("/"))
        })
    }

    /// The parser's and validator's warnings.
    pub fn warnings(&self) -> &[String] {
        &self.checked.warnings
    }

    /// Where the `index`-th `system "cmd"` of the prelude (counting from 0, in the order they
    /// run or are skipped) is written (FILE:LINE:COL), for a warning about it. By position,
    /// not by text: the same command written twice is two places.
    pub fn system_location(&self, index: usize) -> Option<String> {
        self.parsed
            .live_commands()
            .iter()
            .filter(|c| matches!(c.kind, crate::CommandKind::System(_)))
            .nth(index)
            .map(|c| format!("{}:{}", self.parsed.file, c.span))
    }

    /// A run's error in the user's words: `run` and experiments have no record-size flags, and
    /// name the run directory and the workload's size differently. `w` is the workload as it
    /// ran.
    fn failure(&self, e: &EngineError, w: &Lowered) -> RunFailure {
        if let Some(f) = self.no_space(e, w) {
            return f;
        }
        let o = self.origin;
        let (set, scale, time) = match o {
            Origin::CommandLine => ("--set", "--size-scale", "--time"),
            Origin::File => ("`workload.set`", "`workload.size_scale`", "`workload.time`"),
        };
        let room = match o {
            Origin::CommandLine => "use a --dir with more space",
            Origin::File => "make the target larger (`sut.target`)",
        };
        let less = format!(
            "make the workload write less (smaller filesets with {set} or {scale}, a shorter \
             {time})"
        );
        let hint = match e {
            // Population errors carry fileset hints already.
            EngineError::Fileset(_) => e.advice().map(|h| o.word(&h, "", &[])),
            EngineError::Alloc { .. } => {
                Some("each I/O is done from one buffer held in memory: use a smaller iosize".into())
            }
            _ => match e.os_error() {
                Some(libc::ENOSPC) => Some(format!("the filesystem is full: {room}, or {less}")),
                Some(libc::EDQUOT) => Some(format!("a disk quota is exhausted: {less}")),
                Some(libc::EINVAL) => Some(
                    "the kernel rejected the request: with `directio`, check that iosize is a \
                     multiple of the device's block size"
                        .into(),
                ),
                // The engine's other hints are written for a single-pattern command's flags:
                // only those that name none of them apply.
                _ => e
                    .advice()
                    .filter(|h| !h.options().any(|n| ["bs", "size", "sync"].contains(&n)))
                    .map(|h| o.word(&h, "", &[])),
            },
        };
        let mut failure = e.failure(hint);
        // A buffer too large for memory is the flowop's iosize: say where it is written.
        if let EngineError::Alloc { what, .. } = e {
            let at = w
                .processes
                .iter()
                .flat_map(|p| &p.threads)
                .flat_map(|t| &t.flowops)
                .find(|f| *what == format!("flowop `{}`", f.name))
                .and_then(|f| f.at.as_ref());
            if let Some(at) = at {
                failure.message = format!("{at}: error: {}", failure.message);
                failure.located = true;
            }
        }
        failure
    }
}

impl WmlWorkload {
    /// The refusal of filesets that do not fit together, located at the (first) fileset's
    /// `define`, with what makes them fit: a `set` of the variables behind their entries,
    /// size and prealloc, or a `size_scale` that would.
    fn no_space(&self, e: &EngineError, w: &Lowered) -> Option<RunFailure> {
        let EngineError::Fileset(FilesetError::NoSpace {
            filesets, fits_at, ..
        }) = e
        else {
            return None;
        };
        let o = self.origin;
        let defs: Vec<&crate::FilesetDef> = self.parsed.filesets().collect();
        let mut at = None;
        let (mut attrs, mut vars) = (BTreeSet::new(), BTreeSet::new());
        let mut path_is_dir = true;
        for need in filesets {
            // Lowering keeps the definitions' order.
            let Some(def) = w
                .filesets
                .iter()
                .position(|f| f.name == need.name)
                .and_then(|i| defs.get(i))
            else {
                continue;
            };
            at.get_or_insert(def.span);
            for (attr, v) in def.size_variables() {
                attrs.insert(attr);
                vars.extend(v);
            }
            let mut path_vars = BTreeSet::new();
            if let Some(v) = crate::find_attr(&def.attrs, "path").and_then(|a| a.value.as_ref()) {
                v.variables(&mut path_vars);
            }
            path_is_dir &= path_vars.contains("dir");
        }
        let them = if filesets.len() == 1 { "it" } else { "them" };
        let mut ways = Vec::new();
        if !vars.is_empty() {
            let sets: Vec<String> = vars
                .iter()
                .map(|v| match o {
                    Origin::CommandLine => format!("--set {v}=…"),
                    Origin::File => format!("`{}`", join("workload.set", v)),
                })
                .collect();
            let attrs: Vec<String> = attrs.iter().map(|a| format!("`{a}`")).collect();
            ways.push(format!(
                "{} (behind {})",
                sets.join(" or "),
                attrs.join(", ")
            ));
        }
        // The engine's estimate counts whole blocks and metadata; rounded down, the scale
        // still fits.
        if let Some(r) = fits_at {
            let f = two_digits_down(self.settings.size_scale.unwrap_or(1.0) * r);
            ways.push(match o {
                Origin::CommandLine => format!("--size-scale {f} (multiplies every file size)"),
                Origin::File => format!("`workload.size_scale = {f}` (multiplies every file size)"),
            });
        }
        let elsewhere = match (o, path_is_dir) {
            (Origin::CommandLine, true) => "a --dir on a larger filesystem",
            (Origin::File, true) => "a larger target (`sut.target`)",
            (_, false) => "a `path` on a larger filesystem",
        };
        let hint = if ways.is_empty() {
            format!("make {them} smaller, or use {elsewhere}")
        } else {
            format!(
                "make {them} smaller with {}; or use {elsewhere}",
                ways.join(", or ")
            )
        };
        let at = at.map_or(String::new(), |span| format!(":{span}"));
        Some(RunFailure {
            message: format!("{}{at}: error: {e}", self.parsed.file),
            hint: Some(hint),
            bad_input: true,
            interrupted: false,
            located: true,
        })
    }
}

/// `x` rounded down to two significant digits, written without noise (0.45, 0.012, 3.4).
fn two_digits_down(x: f64) -> String {
    let magnitude = x.log10().floor() as i32;
    let step = 10f64.powi(magnitude - 1);
    let decimals = (1 - magnitude).max(0) as usize;
    format!("{:.decimals$}", (x / step).floor() * step)
}

impl Workload for WmlWorkload {
    type Output = WorkloadResult;

    fn kind(&self) -> &'static str {
        if self.source.starts_with("builtin:") {
            "builtin"
        } else {
            "wml"
        }
    }

    fn metrics(&self) -> &'static [MetricDef] {
        METRICS
    }

    fn intent(&self, base: Intent) -> Intent {
        let no_io = self.settings.engine.unwrap_or_default().caps().no_io;
        intent(&self.checked.workload, Intent { no_io, ..base })
    }

    fn planned_duration(&self) -> Option<Duration> {
        self.settings
            .duration
            .or(self.checked.workload.run.duration)
    }

    fn describe(&self) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("source".into(), Value::from(self.source.clone()));
        m
    }

    fn run(&self, run: &mut RunCtx<'_>) -> Result<Self::Output, RunFailure> {
        let dir = run.dir.display().to_string();
        let front = front_end(&self.parsed, &self.settings, self.sets_dir.then_some(&*dir))
            .map_err(|errs| RunFailure {
                located: true,
                ..RunFailure::bad_input(errors_text(&errs))
            })?;
        let opts = RunOptions {
            cancel: Some(Arc::clone(run.cancel)),
            ..self.settings.run_options(run.seed)
        };
        run.hooks.run_files(
            front
                .workload
                .filesets
                .iter()
                .map(|f| f.path.join(&f.name))
                .collect(),
        );
        let made = self.make_paths(&front.workload, run.sut)?;
        let result = run_workload(&front.workload, &opts, run.hooks);
        // Failed, interrupted or not: the run leaves no directory it made.
        let removed = remove_paths(made, run.sut);
        let r = result.map_err(|e| self.failure(&e, &front.workload))?;
        removed?;
        add_record(run.record, &r);
        Ok(r)
    }
}

impl WmlWorkload {
    /// Makes the filesets' `path` directories that do not exist, as filebench does (none on
    /// an engine that does no I/O): the directories made, to remove after the run.
    fn make_paths(
        &self,
        w: &Lowered,
        sut: &mut dyn SutControl,
    ) -> Result<Vec<iolab_sut::WorkDir>, RunFailure> {
        let mut made = Vec::new();
        if self.settings.engine.unwrap_or_default().caps().no_io {
            return Ok(made);
        }
        for f in &w.filesets {
            match sut.make_dir(&f.path) {
                Ok(Some(d)) => made.push(d),
                Ok(None) => {}
                Err(e) => {
                    // Nothing of the run may stay behind; the first error is the one to tell.
                    let _ = remove_paths(made, sut);
                    return Err(RunFailure::failed(format!(
                        "cannot create {}, the path of fileset `{}`: {e}",
                        f.path.display(),
                        f.name
                    )));
                }
            }
        }
        Ok(made)
    }
}

/// Removes the directories [`WmlWorkload::make_paths`] made, the innermost first; the first
/// failure is the error (the others are still tried).
fn remove_paths(made: Vec<iolab_sut::WorkDir>, sut: &mut dyn SutControl) -> Result<(), RunFailure> {
    let mut first = None;
    for d in made.into_iter().rev() {
        let path = d.path().to_path_buf();
        if let Err(e) = sut.remove_dir(d) {
            first.get_or_insert_with(|| {
                RunFailure::failed(format!(
                    "the run made {} for its filesets and could not remove it: {e}",
                    path.display()
                ))
            });
        }
    }
    first.map_or(Ok(()), Err)
}

/// Every error of a list, one per line, and how many there were.
pub fn errors_text(errs: &WmlErrors) -> String {
    let n = errs.len();
    let mut msg = errs.to_string();
    if n > 1 {
        msg.push_str(&format!("\n{n} errors"));
    }
    msg
}

impl Kind for WmlKind {
    fn key(&self) -> &'static str {
        if self.builtin {
            "builtin"
        } else {
            "wml"
        }
    }

    fn noun(&self) -> &'static str {
        "WML workloads"
    }

    fn example(&self) -> &'static str {
        if self.builtin {
            "builtin = \"webserver\""
        } else {
            "wml = \"file.f\""
        }
    }

    fn keys(&self) -> &'static [&'static str] {
        KEYS
    }

    fn metrics(&self) -> &'static [MetricDef] {
        METRICS
    }

    fn resolve(
        &self,
        cx: &mut Ctx,
        t: &Table,
        entry: &Entry,
        at: &LoadContext,
    ) -> Option<Arc<dyn DynWorkload>> {
        self.read(cx, t, entry, at.base).map(iolab_kind::erase)
    }
}

impl WmlKind {
    fn read(&self, cx: &mut Ctx, t: &Table, entry: &Entry, base: &Path) -> Option<WmlWorkload> {
        let before = cx.errors();
        let path = join("workload", self.key());
        let name = cx.string(entry, &path);
        let sets = read_sets(cx, t);
        let duration = t.get("time").and_then(|e| cx.duration(e, "workload.time"));
        let size_scale = t.get("size_scale").and_then(|e| {
            let f = cx.number(e, "workload.size_scale")?;
            if f > 0.0 {
                Some(f)
            } else {
                cx.error(
                    &e.node.span,
                    format!("`workload.size_scale` must be greater than 0, not {f}"),
                );
                None
            }
        });
        let pick_random = t
            .get("pick")
            .and_then(|e| cx.choice(e, "workload.pick", PICKS))
            .is_some_and(|p| p == "random");
        let run_system = t
            .get("system")
            .and_then(|e| cx.boolean(e, "workload.system"))
            .unwrap_or(true);
        let engine = t
            .get("engine")
            .and_then(|e| cx.choice(e, "workload.engine", &EngineKind::NAMES))
            .and_then(EngineKind::parse);
        let iodepth = t
            .get("iodepth")
            .and_then(|e| cx.integer(e, "workload.iodepth", 1, i64::from(MAX_IODEPTH)))
            .map(|d| d as u32);
        let name = name?;
        let (source, file, text) = if self.builtin {
            match crate::builtin::find(name) {
                Some(b) => (
                    format!("builtin:{}", b.name),
                    PathBuf::from(format!("builtin:{}", b.name)),
                    b.text.to_string(),
                ),
                None => {
                    let names = crate::builtin::BUILTIN.iter().map(|b| b.name);
                    cx.error_hint(
                        &entry.node.span,
                        format!("`{path}`: no built-in workload is called {name:?}"),
                        suggest::did_you_mean_or_list(name, names),
                    );
                    return None;
                }
            }
        } else {
            let file = base.join(name);
            match std::fs::read(&file) {
                // filebench reads bytes; a stray Latin-1 byte in a comment should not reject
                // a file (as crate::parse_file).
                Ok(bytes) => {
                    // Stored with every run: without `..` segments.
                    let file = std::fs::canonicalize(&file).unwrap_or(file);
                    (
                        file.display().to_string(),
                        file,
                        String::from_utf8_lossy(&bytes).into_owned(),
                    )
                }
                Err(e) => {
                    let stem = Path::new(name).file_stem().map(|s| s.to_string_lossy());
                    let hint = match stem.as_deref().and_then(crate::builtin::find) {
                        Some(b) => format!(
                            "the path is relative to the experiment file's directory; for the \
                             shipped workload write builtin = {:?}",
                            b.name
                        ),
                        None => "the path is relative to the experiment file's directory".into(),
                    };
                    cx.error_hint(
                        &entry.node.span,
                        format!("`{path}`: cannot read {}: {e}", file.display()),
                        hint,
                    );
                    return None;
                }
            }
        };
        if cx.errors() > before {
            return None;
        }
        let (line, col) = cx.src.line_col(entry.node.span.start);
        let named_at = format!(
            "the workload named by `{path}` at {}:{line}:{col}",
            cx.src.path.display()
        );
        let wml_errors = |cx: &mut Ctx, errs: Vec<WmlError>| {
            for e in errs {
                cx.push(wml_error(&file, e, &named_at));
            }
        };
        let parsed = match crate::parse_str(&source, &text) {
            Ok(p) => p,
            Err(e) => {
                wml_errors(cx, vec![e]);
                return None;
            }
        };
        if let Some(st) = t.get("set").and_then(|e| e.node.value.as_table()) {
            let keys = st.entries.iter().map(|s| s.key.trim_start_matches('$'));
            for (var, close) in unknown_variables(&parsed, keys) {
                let at = st
                    .entries
                    .iter()
                    .find(|s| s.key.trim_start_matches('$') == var)
                    .map_or(&entry.key_span, |s| &s.key_span);
                let known = parsed.variables();
                let hint = match close {
                    Some(c) => suggest::suggestion(&c),
                    None => suggest::did_you_mean_or_list(var, known.iter().map(String::as_str)),
                };
                cx.error_hint(
                    at,
                    format!(
                        "`{}`: {source} has no variable ${var}",
                        join("workload.set", var)
                    ),
                    hint,
                );
            }
            if cx.errors() > before {
                return None;
            }
        }
        let settings = Settings {
            sets,
            duration,
            size_scale,
            pick_random,
            run_system,
            engine,
            iodepth,
        };
        let checked = match front_end(&parsed, &settings, Some(iolab_kind::table::PLACEHOLDER_DIR))
        {
            Ok(f) => f,
            Err(errs) => {
                wml_errors(cx, errs.into_vec());
                return None;
            }
        };
        if let Err((e, key)) = settings.check_engine(&checked.workload) {
            let options = ["engine", "iodepth"];
            let word = |p: &Phrase| Origin::File.word(p, "", &options);
            let at = t.get(key).map_or(&entry.key_span, |e| &e.node.span);
            let message = word(&e.phrase());
            let message = if message.contains("`workload.") {
                message
            } else {
                format!("`workload.{key}`: {message}")
            };
            match e.advice() {
                Some(h) => cx.error_hint(at, message, word(&h)),
                None => cx.error(at, message),
            }
            return None;
        }
        if let Some(e) = crate::no_threads(&parsed, &checked.workload) {
            wml_errors(cx, vec![e]);
            return None;
        }
        if checked.workload.run.duration.is_none() && settings.duration.is_none() {
            cx.error_hint(
                &entry.node.span,
                format!("{source} has no `run` command, so its run time is unknown"),
                "give it in [workload]: time = \"60s\"",
            );
            return None;
        }
        Some(WmlWorkload {
            source,
            parsed: Arc::new(parsed),
            settings,
            checked,
            sets_dir: true,
            origin: Origin::File,
        })
    }
}

/// `workload.set`: scalars, passed to the workload as text like `--set`.
fn read_sets(cx: &mut Ctx, t: &Table) -> Vec<(String, String)> {
    let mut sets = Vec::new();
    let Some(e) = t.get("set") else {
        return sets;
    };
    let Some(st) = cx.table(e, "workload.set") else {
        return sets;
    };
    for s in &st.entries {
        let var = s.key.trim_start_matches('$');
        if var == "dir" {
            cx.error_hint(
                &s.key_span,
                "`$dir` is set by the runner to the prepared directory",
                "remove it from `workload.set`",
            );
            continue;
        }
        match &s.node.value {
            v @ (Toml::String(_) | Toml::Integer(_) | Toml::Float(_) | Toml::Boolean(_)) => {
                sets.push((var.to_string(), v.scalar_text().unwrap_or_default()));
            }
            v => cx.error(
                &s.node.span,
                format!(
                    "`{}` must be a string, number or boolean, not {}",
                    join("workload.set", &s.key),
                    v.type_name()
                ),
            ),
        }
    }
    sets
}

/// A WML error keeps its own file and location; the hint says which experiment line led
/// there when the error has no advice of its own.
fn wml_error(file: &Path, e: WmlError, named_at: &str) -> ExperimentError {
    let hint = e.hint.unwrap_or_else(|| format!("in {named_at}"));
    ExperimentError::new(file, e.span.line, e.span.col, e.message).hint(hint)
}

/// What `iolab run FILE.f|NAME` was given.
#[derive(Debug, Clone)]
pub struct CommandLine {
    /// A `.f` file, or the name of a built-in workload.
    pub file: String,
    pub settings: Settings,
    /// `--dir`: sets `$dir`; without it the file's own `$dir` is the run directory.
    pub dir: Option<PathBuf>,
    pub seed: u64,
}

/// `iolab run FILE.f`: parse, check the `--set`s, the front end, then the one-run plan.
/// Also gives back the workload itself, for the command's display (its warnings, where its
/// `system` commands are written).
pub fn from_command_line(
    c: CommandLine,
) -> Result<(Runs<WorkloadResult>, Arc<WmlWorkload>), UsageError> {
    let parsed = load(&c.file)?;
    if let Some((name, close)) =
        unknown_variables(&parsed, c.settings.sets.iter().map(|(k, _)| k.as_str()))
            .into_iter()
            .next()
    {
        let value = c
            .settings
            .sets
            .iter()
            .find(|(k, _)| k == name)
            .map_or("", |(_, v)| v.as_str());
        let known = parsed.variables();
        let hint = match close {
            Some(c) => suggest::suggestion(&format!("--set {c}={value}")),
            None if known.is_empty() => format!("{} has no variables", parsed.file),
            None => {
                let all: Vec<String> = known.iter().map(|k| format!("${k}")).collect();
                format!("its variables are {}", all.join(", "))
            }
        };
        return Err(UsageError::new(format!(
            "--set {name}={value}: {} has no variable `${name}`",
            parsed.file
        ))
        .hint(hint));
    }
    let given_dir = c.dir.as_ref().map(|d| d.display().to_string());
    let checked = front_end(&parsed, &c.settings, given_dir.as_deref())
        .map_err(|errs| UsageError::located(errors_text(&errs)))?;
    if let Err((e, _)) = c.settings.check_engine(&checked.workload) {
        let e_advice = e.advice();
        let e = UsageError::new(e.to_string());
        return Err(match e_advice {
            Some(h) => e.hint(h.to_string()),
            None => e,
        });
    }
    if let Some(e) = crate::no_threads(&parsed, &checked.workload) {
        return Err(UsageError::located(e.to_string()));
    }
    if checked.workload.run.duration.is_none() && c.settings.duration.is_none() {
        return Err(UsageError::new(format!(
            "{} has no `run` command, so its run time is unknown",
            parsed.file
        ))
        .hint("give one with --time, e.g. --time 60s"));
    }
    // Without --dir the workload's own `$dir` is where it runs (and what is watched).
    let dir = match &c.dir {
        Some(d) => d.clone(),
        None => match crate::Env::new(&parsed).get("dir") {
            Some(crate::StaticValue::Str(d)) => PathBuf::from(d),
            _ => PathBuf::from("."),
        },
    };
    let source = parsed.file.clone();
    let workload_json = command_line_json(&c, &source);
    let workload = Arc::new(WmlWorkload {
        source: source.clone(),
        parsed: Arc::new(parsed),
        settings: c.settings,
        checked,
        sets_dir: c.dir.is_some(),
        origin: Origin::CommandLine,
    });
    let runs = Runs::one(
        format!("run {}", c.file),
        &source,
        dir,
        c.seed,
        Arc::clone(&workload),
        workload_json,
    );
    Ok((runs, workload))
}

/// The `[workload]` section an experiment would have for a command line.
fn command_line_json(c: &CommandLine, source: &str) -> Value {
    let mut w = Map::new();
    match crate::builtin::find(c.file.trim_end_matches(".f")) {
        Some(b) if !Path::new(&c.file).exists() => w.insert("builtin".into(), json!(b.name)),
        _ => w.insert("wml".into(), json!(source)),
    };
    if !c.settings.sets.is_empty() {
        let sets: Map<String, Value> = c
            .settings
            .sets
            .iter()
            .map(|(k, v)| (k.clone(), json!(v)))
            .collect();
        w.insert("set".into(), Value::Object(sets));
    }
    if let Some(t) = c.settings.duration {
        w.insert("time".into(), json!(iolab_util::units::duration_text(t)));
    }
    if let Some(f) = c.settings.size_scale {
        w.insert("size_scale".into(), json!(f));
    }
    if c.settings.pick_random {
        w.insert("pick".into(), json!("random"));
    }
    if !c.settings.run_system {
        w.insert("system".into(), json!(false));
    }
    if let Some(e) = c.settings.engine {
        w.insert("engine".into(), json!(e.name()));
    }
    if let Some(d) = c.settings.iodepth {
        w.insert("iodepth".into(), json!(d));
    }
    Value::Object(w)
}

/// A file path, or the name of a built-in workload (`fileserver`, `varmail.f`), parsed.
fn load(name: &str) -> Result<Parsed, UsageError> {
    let path = Path::new(name);
    if path.exists() {
        return crate::parse_file(path).map_err(|e| UsageError::located(e.to_string()));
    }
    let key = name.trim_end_matches(".f");
    match crate::builtin::find(key) {
        Some(w) => crate::parse_str(&format!("{}.f", w.name), w.text)
            .map_err(|e| UsageError::located(e.to_string())),
        None => Err(
            UsageError::new(format!("{name}: no such file or built-in workload"))
                .hint("`iolab workloads` lists the built-in ones"),
        ),
    }
}

/// Adds a workload run's measurements to `record`: the common metrics are filebench's IO
/// Summary (its I/O flowops), then the read and write rates, and every flowop's own row.
pub(crate) fn add_record(record: &mut RunRecord, r: &WorkloadResult) {
    record.run.elapsed_ns = r.elapsed_ns;
    let (ops, read_ops, write_ops, bytes, _) = r.io_summary();
    let mut io_lat = iolab_engine::stats::LatencyHistogram::default();
    for f in r.flowops.iter().filter(|f| f.is_io) {
        io_lat.merge(&f.latency);
    }
    headline(
        record,
        Totals {
            ops,
            bytes,
            elapsed_ns: r.elapsed_ns,
            latency: &io_lat.summary(),
            cpu: r.usage.cpu(),
        },
    );
    for (name, ops) in [("read_ops_per_s", read_ops), ("write_ops_per_s", write_ops)] {
        let rate = per_second(ops as f64, r.elapsed_ns);
        record.metrics.push(metric(METRICS, name, rate));
    }
    record
        .metrics
        .push(metric(METRICS, "threads", r.threads as f64));
    for f in &r.flowops {
        let lat = f.latency.summary();
        record.flowops.push(FlowopStats {
            name: f.name.clone(),
            kind: f.kind.into(),
            ops: f.ops,
            bytes: f.bytes,
            errors: 0,
            latency: lat,
            histogram: f.latency.buckets(),
            extra: json!({
                "ran_dry": f.ran_dry,
                "in_io_summary": f.is_io,
                "read": f.is_read,
                "write": f.is_write,
                "samples": f.samples,
            }),
        });
    }
    record.series.push(series(
        "io",
        r.interval_ns,
        r.intervals.iter().map(|b| (b.ops, b.bytes)),
    ));
}

/// What a WML workload means to do, for the checks: its flowops' directions and flags, and
/// the bytes its filesets preallocate.
pub fn intent(w: &Lowered, base: Intent) -> Intent {
    #[derive(Default)]
    struct Seen {
        reads: bool,
        writes: bool,
        direct: bool,
        sync: bool,
        /// A flowop opens files without O_SYNC (`dsync`): some writes may be unsynced.
        opens_unsynced: bool,
        aio_writes: bool,
    }
    fn walk(flowops: &[FlowopSpec], s: &mut Seen) {
        for f in flowops {
            match &f.kind {
                FlowopKind::Read | FlowopKind::ReadWholeFile => s.reads = true,
                FlowopKind::Write
                | FlowopKind::WriteWholeFile
                | FlowopKind::AppendFile
                | FlowopKind::AppendFileRand => s.writes = true,
                FlowopKind::AioWrite => {
                    s.writes = true;
                    s.aio_writes = true;
                }
                FlowopKind::Fsync | FlowopKind::FsyncSet => s.sync = true,
                FlowopKind::Composite(steps) => walk(steps, s),
                _ => {}
            }
            s.direct |= f.directio;
            s.sync |= f.dsync;
            // Files are opened by the flowops that name a fileset, with their `dsync`.
            s.opens_unsynced |= f.fileset.is_some() && !f.dsync;
        }
    }
    /// The largest I/O size of a thread's flowops: the buffer it keeps.
    fn largest_io(flowops: &[FlowopSpec]) -> f64 {
        flowops
            .iter()
            .map(|f| match &f.kind {
                FlowopKind::Composite(steps) => largest_io(steps),
                _ => f.iosize.mean(),
            })
            .fold(0.0, f64::max)
    }
    let mut seen = Seen::default();
    let mut threads = 0u32;
    let mut memory = 0f64;
    for p in &w.processes {
        for t in &p.threads {
            let n = p.instances * t.instances;
            threads += n;
            walk(&t.flowops, &mut seen);
            memory += f64::from(n)
                * (largest_io(&t.flowops).max(ENGINE_MIN_BUFFER) + ENGINE_THREAD_OVERHEAD);
        }
    }
    let Seen {
        reads,
        writes,
        direct,
        sync,
        opens_unsynced,
        aio_writes,
    } = seen;
    let dataset: f64 = w
        .filesets
        .iter()
        .map(|f| f.entries as f64 * f.prealloc_pct as f64 / 100.0 * f.size.mean())
        .sum();
    Intent {
        dataset_advice: Some(DatasetAdvice {
            grow: Some(
                "grow the filesets beyond {needed} (`size_scale`, or the filesets' `entries` \
                 and `filesize`)"
                    .into(),
            ),
            ..DatasetAdvice::default()
        }),
        access: Some(match (reads, writes) {
            (true, true) => Access::Mixed,
            (false, true) => Access::Write,
            _ => Access::Read,
        }),
        o_direct: direct,
        sync_requested: sync,
        sync_scope: Some(if writes && !opens_unsynced {
            SyncScope::EachWrite
        } else if sync {
            SyncScope::SomeWrites
        } else {
            SyncScope::Never
        }),
        // Filesets are shared by all threads; aiowrite keeps any number in flight.
        writes_in_flight_per_file: (!aio_writes).then_some(threads),
        dataset_bytes: Some(dataset as u64),
        threads: Some(threads),
        engine_memory_bytes: Some(memory as u64),
        ..base
    }
}

/// The buffer each engine thread starts with (bytes).
const ENGINE_MIN_BUFFER: f64 = 64.0 * 1024.0;

/// What else a thread costs in memory: the stack it touches and its state, about (bytes).
const ENGINE_THREAD_OVERHEAD: f64 = 128.0 * 1024.0;

#[cfg(test)]
mod tests {
    use super::*;

    fn lowered(name: &str, text: &str) -> Lowered {
        let parsed = crate::parse_str(name, text).unwrap();
        front_end(&parsed, &Settings::default(), Some("/tmp/x"))
            .unwrap()
            .workload
    }

    #[test]
    fn sync_scopes() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../workloads/");
        for (f, want, inflight) in [
            ("varmail.f", SyncScope::SomeWrites, true),
            ("oltp.f", SyncScope::SomeWrites, false),
            ("fileserver.f", SyncScope::Never, true),
            ("webserver.f", SyncScope::Never, true),
        ] {
            let text = std::fs::read_to_string(format!("{root}{f}")).unwrap();
            let i = intent(&lowered(f, &text), Intent::default());
            assert_eq!(i.sync_scope, Some(want), "{f}");
            assert_eq!(i.writes_in_flight_per_file.is_some(), inflight, "{f}");
        }
        let text = "define fileset name=f,path=/tmp/x,entries=10,size=1m,prealloc\n\
            define process name=p { thread name=t,instances=3 {\n\
            flowop write name=w,filesetname=f,iosize=4k,random,dsync\n\
            } }\nrun 10\n";
        let i = intent(&lowered("t.f", text), Intent::default());
        assert_eq!(i.sync_scope, Some(SyncScope::EachWrite));
        assert_eq!(i.writes_in_flight_per_file, Some(3));
    }

    #[test]
    fn the_front_end_validates_lowers_scales_and_checks() {
        let text = "set $n = 4\ndefine fileset name=fs,path=$dir,entries=$n,size=1m,prealloc\n\
            define process name=p { thread name=t {\n\
            flowop read name=r,filesetname=fs,iosize=512k,random } }\nrun 5\n";
        let parsed = crate::parse_str("t.f", text).unwrap();
        let s = Settings {
            sets: vec![("n".into(), "8".into())],
            size_scale: Some(2.0),
            ..Settings::default()
        };
        let f = front_end(&parsed, &s, Some("/d")).unwrap();
        assert_eq!(f.workload.filesets[0].entries, 8);
        assert_eq!(f.workload.filesets[0].size.mean(), 2.0 * 1048576.0);
        // `$dir` unset and not given: the validator says so.
        let e = front_end(&parsed, &s, None).unwrap_err();
        assert!(e.first().to_string().contains("$dir"), "{}", e.first());
        // Scaled down, the I/O no longer fits the working set: checked at the sizes run.
        let small = Settings {
            size_scale: Some(0.25),
            ..Settings::default()
        };
        let e = front_end(&parsed, &small, Some("/d")).unwrap_err();
        assert!(e.first().message.contains("does not fit"), "{}", e.first());
        assert_eq!(
            unknown_variables(&parsed, ["n", "m", "dir"]),
            [("m", Some("n".to_string()))]
        );
    }

    #[test]
    fn full_filesystem_hints_name_the_settings_as_the_user_wrote_them() {
        let parsed = crate::parse_str("t.f", "run 5\n").unwrap();
        let w = |origin| WmlWorkload {
            source: "t.f".into(),
            checked: front_end(&parsed, &Settings::default(), Some("/d")).unwrap(),
            parsed: Arc::new(parsed.clone()),
            settings: Settings::default(),
            sets_dir: true,
            origin,
        };
        let full = EngineError::Io {
            op: "write",
            path: "/d/f".into(),
            source: std::io::Error::from_raw_os_error(libc::ENOSPC),
        };
        let ran = front_end(&parsed, &Settings::default(), Some("/d"))
            .unwrap()
            .workload;
        let cli = w(Origin::CommandLine).failure(&full, &ran).hint.unwrap();
        assert!(
            cli.starts_with("the filesystem is full: use a --dir with more space"),
            "{cli}"
        );
        assert!(
            cli.contains("--set or --size-scale, a shorter --time"),
            "{cli}"
        );
        assert!(!cli.contains("--size "), "{cli}");
        let file = w(Origin::File).failure(&full, &ran).hint.unwrap();
        assert!(file.contains("`sut.target`"), "{file}");
        assert!(
            file.contains("`workload.set` or `workload.size_scale`"),
            "{file}"
        );
        assert!(!file.contains("--"), "{file}");
    }
}
