//! What the kinds with one option table (micro, iozone, sqlite, bonnie) share: reading
//! `KIND = { … }` into their spec and validating it with located errors, the target-size
//! check, and turning a command line's values into the spec. Each kind says only what is
//! its own ([`TableSpec`]); the reading is written once here.

use std::fmt::Display;
use std::path::PathBuf;
use std::sync::Arc;

use iolab_metrics::MetricDef;
use iolab_workload::option::{OptionDef, OptionValue};

use super::{Kind, LoadContext, Workload};
use crate::plan::read::Ctx;
use crate::plan::tree::{Entry, Span, Table};
use crate::plan::{Origin, UsageError};

/// Stand-in for the run directory (`$dir`) until the runner knows it.
pub(crate) const PLACEHOLDER_DIR: &str = "/nonexistent-iolab-dir";

/// A kind's spec, filled from its one option table.
pub(crate) trait TableSpec: Sized + 'static {
    type Plan;
    type Error: Display;
    /// The `[workload]` key of the kind.
    const KIND: &'static str;
    fn options() -> &'static [OptionDef<Self>];
    /// The table's defaults, in `dir` with `seed`.
    fn defaults(dir: PathBuf, seed: u64) -> Self;
    fn validate(&self) -> Result<Self::Plan, Self::Error>;
    /// The option at fault for `e` (`given` tells which keys the file sets).
    fn fault(e: &Self::Error, given: &dyn Fn(&str) -> bool) -> &'static str;
    /// Fills what depends on the configuration (before validation); nothing by default.
    fn fit_to(&mut self, _at: &LoadContext) {}
}

/// `text` (written with the command line's flags) in `origin`'s words.
pub(crate) fn rewrite<S: TableSpec>(origin: Origin, text: &str) -> String {
    let flags: Vec<String> = S::options().iter().map(OptionDef::flag).collect();
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    origin.rewrite(text, S::KIND, &flags)
}

/// A spec read from an experiment file, with its plan and the table it came from.
pub(crate) struct Read<'t, S: TableSpec> {
    pub spec: S,
    pub plan: S::Plan,
    table: &'t Table,
    entry: &'t Entry,
}

impl<S: TableSpec> Read<'_, S> {
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
                S::KIND,
                iolab_workload::format_bytes(bytes),
                iolab_workload::format_bytes(cap)
            ),
            hint,
        );
        false
    }
}

/// Reads `KIND = { … }`: every key of the kind's table, typed as the table says, then
/// validated as the kind's command would; the error is located at the key at fault and
/// names keys, not flags.
pub(crate) fn read<'t, S: TableSpec>(
    cx: &mut Ctx,
    entry: &'t Entry,
    at: &LoadContext,
) -> Option<Read<'t, S>> {
    let path = format!("workload.{}", S::KIND);
    // The runner gives every run its own directory and seed.
    let mut spec = S::defaults(PLACEHOLDER_DIR.into(), 0);
    let table = cx.options(entry, &path, S::options(), &mut spec)?;
    spec.fit_to(at);
    match spec.validate() {
        Ok(plan) => Some(Read {
            spec,
            plan,
            table,
            entry,
        }),
        Err(e) => {
            let k = S::fault(&e, &|k| table.get(k).is_some());
            let key = format!("`{path}.{k}`");
            let message = rewrite::<S>(Origin::File, &e.to_string());
            let message = if message.starts_with(&key) {
                message
            } else {
                format!("{key}: {message}")
            };
            let at = table
                .get(k)
                .map_or(entry.key_span.clone(), |e| e.node.span.clone());
            cx.error(&at, message);
            None
        }
    }
}

/// A command line's option values over the table's defaults, in `dir` with `seed`,
/// validated (the messages name the flags).
pub(crate) fn from_values<S: TableSpec>(
    values: &[(&'static OptionDef<S>, OptionValue)],
    dir: PathBuf,
    seed: u64,
) -> Result<(S, S::Plan), UsageError> {
    let mut spec = S::defaults(dir, seed);
    for (o, v) in values {
        o.apply(&mut spec, *v);
    }
    let plan = spec
        .validate()
        .map_err(|e| UsageError::new(e.to_string()))?;
    Ok((spec, plan))
}

/// A spec as `KIND = { … }` would write it, from the kind's one option table: every option
/// that is set, names and durations as text, sizes and counts as numbers, flags as booleans,
/// a set as its names comma-separated. Stored with every configuration.
pub(crate) fn options_json<S: TableSpec>(spec: &S) -> serde_json::Value {
    use iolab_workload::option::OptionKind;
    use serde_json::json;
    let mut o = serde_json::Map::new();
    for def in S::options() {
        let Some(v) = (def.get)(spec) else {
            continue;
        };
        let value = match v {
            OptionValue::Name(n) => json!(n),
            OptionValue::Bytes(b) | OptionValue::Count(b) => json!(b),
            OptionValue::Duration(d) => json!(iolab_workload::duration_text(d)),
            OptionValue::Flag(f) => json!(f),
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

/// A kind that reads everything from its own `KIND = { … }` entry, as the loader sees it: what
/// it is called, its metrics, whether it needs a target, and how it makes a workload of the
/// entry. The kinds with one option table use it, and so do replay and cachesim.
pub(crate) struct TableKind {
    pub key: &'static str,
    pub noun: &'static str,
    /// How to write it, for hints: `micro = { … }`.
    pub example: &'static str,
    pub metrics: fn() -> &'static [MetricDef],
    /// Advice for a `[workload]` key of another kind given with this one.
    pub misplaced: fn(&str) -> &'static str,
    /// See [`Kind::needs_target`].
    pub needs_target: bool,
    pub resolve: fn(&mut Ctx, &Entry, &LoadContext) -> Option<Arc<dyn Workload>>,
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
    ) -> Option<Arc<dyn Workload>> {
        (self.resolve)(cx, entry, at)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use iolab_workload::option::OptionKind;

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
            OptionKind::Set { names, .. } => (0..names.len())
                .map(|i| OptionValue::set_of([i]))
                .chain([OptionValue::set_of(0..names.len())])
                .collect(),
        }
    }

    /// Every option of `S`'s table gives back, through `get`, what `apply` put in: the
    /// stored spec is the spec.
    pub(crate) fn get_undoes_apply<S: TableSpec>() {
        for def in S::options() {
            for v in samples(def.kind) {
                let mut spec = S::defaults(PLACEHOLDER_DIR.into(), 0);
                def.apply(&mut spec, v);
                assert_eq!((def.get)(&spec), Some(v), "{}::{}", S::KIND, def.name);
            }
            // A default is stored as the default.
            if let Some(d) = def.default {
                let spec = S::defaults(PLACEHOLDER_DIR.into(), 0);
                assert_eq!(
                    (def.get)(&spec),
                    def.parse(d).ok(),
                    "{}::{}",
                    S::KIND,
                    def.name
                );
            }
        }
    }

    #[test]
    fn every_tables_getters_undo_its_appliers() {
        get_undoes_apply::<iolab_workload::micro::MicroSpec>();
        get_undoes_apply::<iolab_sqlite::SqliteSpec>();
        get_undoes_apply::<iolab_bonnie::BonnieSpec>();
        get_undoes_apply::<iolab_iozone::IozoneSpec>();
    }
}
