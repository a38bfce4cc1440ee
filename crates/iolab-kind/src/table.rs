//! What the kinds whose settings are one option table share: reading
//! `KIND = { … }` into their spec and validating it with located errors, the target-size
//! check, and turning a command line's values into the spec. Each kind says only what is
//! its own ([`OptionTable`]); the reading is written once here.

use std::fmt::Display;
use std::path::PathBuf;
use std::sync::Arc;

use iolab_metrics::MetricDef;
use iolab_util::option::{intern_path, OptionDef, OptionValue};
use iolab_util::setting::{Phrase, Worded};

use crate::command::{Origin, UsageError};
use crate::input::read::Ctx;
use crate::input::tree::{Entry, Span, Table};
use crate::intent::Intent;
use crate::kind::{DynWorkload, Kind, LoadContext, Workload};
use crate::run::{RunCtx, RunFailure};

/// Stand-in for the run directory (`$dir`) until the runner knows it.
pub const PLACEHOLDER_DIR: &str = "/nonexistent-iolab-dir";

/// A kind's one option table: the spec it fills, how the spec is validated, and which
/// option is at fault for each error. A kind implements it on a unit type of its own.
pub trait OptionTable: 'static {
    /// What the options fill.
    type Spec: 'static;
    type Plan;
    /// Names the options at fault ([`Worded`]); its `Display` is the command line's words.
    type Error: Worded + Display;
    /// The `[workload]` key of the kind.
    const KIND: &'static str;
    /// The tool whose flags the table's `original` fields name (for help: `[TOOL -x]`).
    const TOOL: &'static str;
    fn options() -> &'static [OptionDef<Self::Spec>];
    /// The table's defaults, in `dir` with `seed`.
    fn defaults(dir: PathBuf, seed: u64) -> Self::Spec;
    fn validate(spec: &Self::Spec) -> Result<Self::Plan, Self::Error>;
    /// The option at fault for `e` (`given` tells which keys the file sets).
    fn fault(e: &Self::Error, given: &dyn Fn(&str) -> bool) -> &'static str;
    /// Fills what depends on the configuration (before validation); nothing by default.
    fn fit_to(_spec: &mut Self::Spec, _at: &LoadContext) {}
}

/// `phrase` in `origin`'s words, naming the options of `T`'s table.
pub fn word<T: OptionTable>(origin: Origin, phrase: &Phrase) -> String {
    let options: Vec<&str> = T::options().iter().map(|o| o.name).collect();
    origin.word(phrase, T::KIND, &options)
}

/// A spec read from an experiment file, with its plan and the table it came from.
pub struct Read<'t, T: OptionTable> {
    pub spec: T::Spec,
    pub plan: T::Plan,
    table: &'t Table,
    entry: &'t Entry,
}

impl<T: OptionTable> Read<'_, T> {
    /// Where key `k` is written (the kind's own key when it is not).
    pub fn at(&self, k: &str) -> Span {
        self.table
            .get(k)
            .map_or(self.entry.key_span.clone(), |e| e.node.span.clone())
    }

    /// Reports the run's data (`bytes`, decided by key `k`) not fitting on a target of
    /// `cap` bytes, with `hint`; false then.
    pub fn fits(&self, cx: &mut Ctx, k: &str, bytes: u64, cap: Option<u64>, hint: &str) -> bool {
        let Some(cap) = cap.filter(|&cap| bytes > cap) else {
            return true;
        };
        cx.error_hint(
            &self.at(k),
            format!(
                "`workload.{}.{k}`: {} of data do not fit on the {} target",
                T::KIND,
                iolab_util::units::format_bytes(bytes),
                iolab_util::units::format_bytes(cap)
            ),
            hint,
        );
        false
    }
}

/// Reads `KIND = { … }`: every key of the kind's table, typed as the table says, then
/// validated as the kind's command would; the error is located at the key at fault and
/// names keys, not flags.
pub fn read<'t, T: OptionTable>(
    cx: &mut Ctx,
    entry: &'t Entry,
    at: &LoadContext,
) -> Option<Read<'t, T>> {
    let path = format!("workload.{}", T::KIND);
    // The runner gives every run its own directory and seed.
    let mut spec = T::defaults(PLACEHOLDER_DIR.into(), 0);
    let table = cx.options(entry, &path, T::options(), &mut spec)?;
    resolve_paths(T::options(), &mut spec, at.base);
    T::fit_to(&mut spec, at);
    match T::validate(&spec) {
        Ok(plan) => Some(Read {
            spec,
            plan,
            table,
            entry,
        }),
        Err(e) => {
            let k = T::fault(&e, &|k| table.get(k).is_some());
            let key = format!("`{path}.{k}`");
            let message = word::<T>(Origin::File, &e.phrase());
            let message = if message.starts_with(&key) {
                message
            } else {
                format!("{key}: {message}")
            };
            let at = table
                .get(k)
                .map_or(entry.key_span.clone(), |e| e.node.span.clone());
            match e.advice() {
                Some(h) => cx.error_hint(&at, message, word::<T>(Origin::File, &h)),
                None => cx.error(&at, message),
            }
            None
        }
    }
}

/// Makes the relative paths of `spec`'s path options (as an experiment file wrote them)
/// start in `base`, the file's directory; absolute ones stay.
pub fn resolve_paths<S>(options: &[OptionDef<S>], spec: &mut S, base: &std::path::Path) {
    for o in options {
        if let Some(p) = (o.get)(spec).and_then(OptionValue::path) {
            o.apply(spec, OptionValue::Path(intern_path(&base.join(p))));
        }
    }
}

/// What a spec adds to its configuration's stored `[workload]` section: the whole spec, every
/// option with its default filled in ([`options_json`]), under the kind's key — so that the
/// stored experiment says exactly what ran, and [`from_stored`] reads it back.
pub fn describe<T: OptionTable>(spec: &T::Spec) -> serde_json::Map<String, serde_json::Value> {
    let mut m = serde_json::Map::new();
    m.insert(T::KIND.to_string(), options_json::<T>(spec));
    m
}

/// The spec a stored `[workload]` section holds (as [`options_json`] wrote it under the
/// kind's key), read again with the table: the stored spec is the spec.
pub fn from_stored<T: OptionTable>(
    workload: &serde_json::Value,
) -> Result<T::Spec, crate::input::error::ExperimentErrors> {
    crate::input::reread(workload, T::KIND, |cx, _, entry| {
        let mut spec = T::defaults(PLACEHOLDER_DIR.into(), 0);
        cx.options(
            entry,
            &format!("workload.{}", T::KIND),
            T::options(),
            &mut spec,
        )?;
        Some(spec)
    })
}

/// A command line's option values over the table's defaults, in `dir` with `seed`,
/// validated (the messages name the flags).
pub fn from_values<T: OptionTable>(
    values: &[(&'static OptionDef<T::Spec>, OptionValue)],
    dir: PathBuf,
    seed: u64,
) -> Result<(T::Spec, T::Plan), UsageError> {
    let mut spec = T::defaults(dir, seed);
    for (o, v) in values {
        o.apply(&mut spec, *v);
    }
    let plan = T::validate(&spec).map_err(|e| UsageError::new(e.to_string()))?;
    Ok((spec, plan))
}

/// A spec as `KIND = { … }` would write it, from the kind's one option table: every option
/// that is set, names and durations as text, sizes and counts as numbers, flags as booleans,
/// a set as its names comma-separated. Stored with every configuration.
pub fn options_json<T: OptionTable>(spec: &T::Spec) -> serde_json::Value {
    use iolab_util::option::OptionKind;
    use serde_json::json;
    let mut o = serde_json::Map::new();
    for def in T::options() {
        let Some(v) = (def.get)(spec) else {
            continue;
        };
        let value = match v {
            OptionValue::Name(n) => json!(n),
            OptionValue::Bytes(b) | OptionValue::Count(b) => json!(b),
            OptionValue::Duration(d) => json!(iolab_util::units::duration_text(d)),
            OptionValue::Flag(f) => json!(f),
            OptionValue::Path(p) => json!(p.display().to_string()),
            OptionValue::Text(t) => json!(t),
            OptionValue::Set(_) => {
                let names = match def.kind {
                    OptionKind::Set { names, .. } => names,
                    _ => &[],
                };
                json!(v
                    .set_members()
                    .filter_map(|i| names.get(i).copied())
                    .collect::<Vec<_>>()
                    .join(","))
            }
        };
        o.insert(def.name.to_string(), value);
    }
    serde_json::Value::Object(o)
}

/// What a kind whose settings are one option table adds to the table to run: the one
/// [`Workload`] of all such kinds ([`TableWorkload`]) asks it the rest.
pub trait TableRun: OptionTable<Spec: Clone + std::fmt::Debug + Send + Sync> {
    /// What a run gives back for the kind's formats.
    type Output: Send + 'static;
    /// How a run fails.
    type RunError;
    /// The metrics its runs record besides [`iolab_metrics::COMMON`].
    fn metrics() -> &'static [MetricDef];
    /// The common metrics in the kind's words (see [`Workload::common_as`]).
    fn common_as() -> &'static [MetricDef] {
        &[]
    }
    /// Whether the common headline metrics are headline ones for this kind (see
    /// [`Workload::common_headline`]).
    fn common_headline() -> bool {
        true
    }
    /// Puts the run's directory and seed into the spec.
    fn place(spec: &mut Self::Spec, dir: &std::path::Path, seed: u64);
    /// What the plan means to do, for the checks.
    fn intent(plan: &Self::Plan, base: Intent) -> Intent;
    /// The timed region's planned length, when it is known beforehand.
    fn planned_duration(_spec: &Self::Spec) -> Option<std::time::Duration> {
        None
    }
    /// What it does that needs root (see [`Workload::needs_root`]).
    fn needs_root(_spec: &Self::Spec) -> Option<String> {
        None
    }
    /// Fields the stored experiment keeps besides the spec.
    fn describe(_spec: &Self::Spec) -> serde_json::Map<String, serde_json::Value> {
        serde_json::Map::new()
    }
    /// The files (or trees) the run works on: dropping caches checks that they left the page
    /// cache. None: the run names them itself (`run.hooks.run_files`), as a kind whose files
    /// depend on its rank does.
    fn run_files(plan: &Self::Plan) -> Vec<std::path::PathBuf>;
    /// Runs the plan once, calling `run.hooks` around its timed region; `run.sut` for what
    /// it asks of the system under test.
    fn run(plan: &Self::Plan, run: &mut RunCtx<'_>) -> Result<Self::Output, Self::RunError>;
    /// A run's failure in the words of where the settings came from.
    fn failure(e: &Self::RunError, spec: &Self::Spec, origin: Origin) -> RunFailure;
    /// Adds a run's measurements to its record.
    fn record(record: &mut iolab_store::RunRecord, output: &Self::Output);
    /// Under MPI, the run's metrics as a whole from every rank's record (see
    /// [`Workload::merge_ranks`]); none by default.
    fn merge_ranks(
        _spec: &Self::Spec,
        _ranks: &[iolab_store::RunRecord],
    ) -> Vec<iolab_store::Metric> {
        Vec::new()
    }
    /// Whether the kind shares the work among MPI ranks itself (see
    /// [`Workload::divides_among_ranks`]); no by default.
    fn divides_among_ranks() -> bool {
        false
    }
}

/// A validated workload of a [`TableRun`] kind; the runner gives each run its directory and
/// seed.
pub struct TableWorkload<T: TableRun> {
    pub spec: T::Spec,
    origin: Origin,
}

impl<T: TableRun> TableWorkload<T> {
    /// A workload of `spec`, whose settings came from `origin`.
    pub fn new(spec: T::Spec, origin: Origin) -> TableWorkload<T> {
        TableWorkload { spec, origin }
    }
}

impl<T: TableRun> std::fmt::Debug for TableWorkload<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TableWorkload")
            .field("kind", &T::KIND)
            .field("spec", &self.spec)
            .field("origin", &self.origin)
            .finish()
    }
}

impl<T: TableRun> Workload for TableWorkload<T> {
    type Output = T::Output;

    fn kind(&self) -> &'static str {
        T::KIND
    }

    fn metrics(&self) -> &'static [MetricDef] {
        T::metrics()
    }

    fn common_as(&self) -> &'static [MetricDef] {
        T::common_as()
    }

    fn common_headline(&self) -> bool {
        T::common_headline()
    }

    fn intent(&self, base: Intent) -> Intent {
        match T::validate(&self.spec) {
            Ok(plan) => T::intent(&plan, base),
            Err(_) => base,
        }
    }

    fn planned_duration(&self) -> Option<std::time::Duration> {
        T::planned_duration(&self.spec)
    }

    fn needs_root(&self) -> Option<String> {
        T::needs_root(&self.spec)
    }

    /// The whole spec (every option, defaults included) and what the kind adds.
    fn describe(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut m = describe::<T>(&self.spec);
        m.extend(T::describe(&self.spec));
        m
    }

    fn run(&self, run: &mut RunCtx<'_>) -> Result<T::Output, RunFailure> {
        let mut spec = self.spec.clone();
        T::place(&mut spec, run.dir, run.seed);
        // Validated when the plan was made; the directory and seed do not change that.
        let plan = T::validate(&spec)
            .map_err(|e| RunFailure::bad_input(word::<T>(self.origin, &e.phrase())))?;
        let files = T::run_files(&plan);
        if !files.is_empty() {
            run.hooks.run_files(files);
        }
        let out = T::run(&plan, run).map_err(|e| T::failure(&e, &self.spec, self.origin))?;
        T::record(run.record, &out);
        Ok(out)
    }

    fn merge_ranks(&self, ranks: &[iolab_store::RunRecord]) -> Vec<iolab_store::Metric> {
        T::merge_ranks(&self.spec, ranks)
    }

    fn divides_among_ranks(&self) -> bool {
        T::divides_among_ranks()
    }
}

/// A command's one run of `spec` (settings from the command line) in `dir` with `seed`, named
/// `name` as `iolab list` shows it, from command `source` (`iolab KIND`).
pub fn command_run<T: TableRun>(
    spec: T::Spec,
    name: String,
    source: &str,
    dir: PathBuf,
    seed: u64,
) -> crate::command::Runs<T::Output> {
    let workload_json = serde_json::json!({ T::KIND: options_json::<T>(&spec) });
    crate::command::Runs::one(
        name,
        source,
        dir,
        seed,
        TableWorkload::<T>::new(spec, Origin::CommandLine),
        workload_json,
    )
}

/// A kind that reads everything from its own `KIND = { … }` entry, as the loader sees it: what
/// it is called, its metrics, whether it needs a target, and how it makes a workload of the
/// entry. The kinds with one option table use it, and so do others that read their own entry.
pub struct TableKind {
    pub key: &'static str,
    pub noun: &'static str,
    /// How to write it, for hints: `KIND = { … }`.
    pub example: &'static str,
    pub metrics: fn() -> &'static [MetricDef],
    /// Advice for a `[workload]` key of another kind given with this one.
    pub misplaced: fn(&str) -> &'static str,
    /// See [`Kind::needs_target`].
    pub needs_target: bool,
    pub resolve: fn(&mut Ctx, &Entry, &LoadContext) -> Option<Arc<dyn DynWorkload>>,
}

impl Kind for TableKind {
    fn key(&self) -> &'static str {
        self.key
    }

    fn noun(&self) -> &'static str {
        self.noun
    }

    fn example(&self) -> &'static str {
        self.example
    }

    fn keys(&self) -> &'static [&'static str] {
        &[]
    }

    fn misplaced_hint(&self, key: &str) -> Option<&'static str> {
        Some((self.misplaced)(key))
    }

    fn metrics(&self) -> &'static [MetricDef] {
        (self.metrics)()
    }

    fn needs_target(&self) -> bool {
        self.needs_target
    }

    fn resolve(
        &self,
        cx: &mut Ctx,
        _section: &Table,
        entry: &Entry,
        at: &LoadContext,
    ) -> Option<Arc<dyn DynWorkload>> {
        (self.resolve)(cx, entry, at)
    }
}

/// For each kind's tests of its option table.
pub mod testing {
    use super::*;

    /// The text of the repository's `docs/NAME`.
    pub fn doc(name: &str) -> String {
        let p = format!("{}/../../docs/{name}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
    }

    /// The row of a Markdown table whose first cell is `` `key` ``.
    pub fn row<'a>(text: &'a str, key: &str) -> Option<&'a str> {
        text.lines()
            .find(|l| l.starts_with(&format!("| `{key}` |")))
    }
    use iolab_util::option::OptionKind;

    /// Values of every kind an option can take, to put in and take out again.
    fn samples(kind: OptionKind) -> Vec<OptionValue> {
        match kind {
            OptionKind::Choice(names) => names.iter().map(|&n| OptionValue::Name(n)).collect(),
            OptionKind::Size => vec![OptionValue::Bytes(12288)],
            OptionKind::Count { min, max } => {
                vec![
                    OptionValue::Count(min),
                    OptionValue::Count(max.min(min + 1)),
                ]
            }
            OptionKind::Duration => vec![OptionValue::Duration(std::time::Duration::from_secs(2))],
            OptionKind::Flag => vec![OptionValue::Flag(true), OptionValue::Flag(false)],
            OptionKind::Text => vec![OptionValue::Text("text")],
            OptionKind::Set { names, .. } => (0..names.len())
                .map(|i| OptionValue::set_of([i]))
                .chain([OptionValue::set_of(0..names.len())])
                .collect(),
            OptionKind::Path => vec![OptionValue::Path(intern_path("lists/a.list".as_ref()))],
        }
    }

    /// Every option of `T`'s table gives back, through `get`, what `apply` put in: the
    /// stored spec is the spec.
    pub fn get_undoes_apply<T: OptionTable>() {
        for def in T::options() {
            for v in samples(def.kind) {
                let mut spec = T::defaults(PLACEHOLDER_DIR.into(), 0);
                def.apply(&mut spec, v);
                assert_eq!((def.get)(&spec), Some(v), "{}::{}", T::KIND, def.name);
            }
            // A default is stored as the default.
            if let Some(d) = def.default {
                let spec = T::defaults(PLACEHOLDER_DIR.into(), 0);
                assert_eq!(
                    (def.get)(&spec),
                    def.parse(d).ok(),
                    "{}::{}",
                    T::KIND,
                    def.name
                );
            }
        }
    }
}
