//! Workload kinds: what runs in the prepared directory.
//!
//! Each kind is one module here, behind two small traits: [`Kind`] reads its `[workload]`
//! keys (with located errors) into a validated plan, a [`Workload`]; a [`Workload`] says what
//! it means to do (for the checks), which metrics it records besides the common ones, and
//! runs once on the engine. A kind that has a subcommand (`iolab micro`, `iolab run FILE.f`)
//! also maps that subcommand's values to its plan, in its module. The loader and the runner
//! never name a kind: adding one is a module and a line in [`KINDS`] (docs/architecture.md).

pub mod bonnie;
pub mod cachesim;
pub mod iozone;
pub mod micro;
mod pagecache;
pub mod replay;
pub mod sqlite;
mod table;
pub mod wml;

use std::any::Any;
use std::fmt::Debug;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use iolab_metrics::MetricDef;
use serde_json::{Map, Value};

use crate::plan::read::{join, Ctx};
use crate::plan::tree::{Entry, Node, Table};
use crate::run::monitor::Intent;
use crate::run::{KindRun, Ran, RunFailure};

/// Every kind, in the order messages list them. A new kind is one line here.
pub(crate) static KINDS: &[&dyn Kind] = &[
    &wml::WML,
    &wml::BUILTIN,
    &micro::MICRO,
    &iozone::IOZONE,
    &sqlite::SQLITE,
    &bonnie::BONNIE,
    &replay::REPLAY,
    &cachesim::CACHESIM,
];

/// A kind of workload, as experiment files name it.
pub(crate) trait Kind: Sync {
    /// The `[workload]` key that selects it (`micro`, `wml`, `builtin`); exactly one is given.
    fn key(&self) -> &'static str;
    /// What its workloads are called in messages: `micro tests`.
    fn noun(&self) -> &'static str;
    /// How to write it, for hints: `micro = { … }`.
    fn example(&self) -> &'static str;
    /// The other `[workload]` keys it reads.
    fn keys(&self) -> &'static [&'static str];
    /// Advice for a key another kind reads, given with this one (default: remove it).
    fn misplaced_hint(&self, _key: &str) -> Option<&'static str> {
        None
    }
    /// The metrics its runs record besides [`iolab_metrics::COMMON`].
    fn metrics(&self) -> &'static [MetricDef];
    /// Whether its runs do I/O in the target's directory (default). A kind that does not (a
    /// simulation) may be given without `[sut]`: its runs then get the experiment file's
    /// directory, untouched, and the page cache is not dropped unless the file asks.
    fn needs_target(&self) -> bool {
        true
    }
    /// Reads one configuration's substituted `[workload]` table (`entry` is its own key),
    /// reporting every mistake in `cx`; `None` after an error.
    fn resolve(
        &self,
        cx: &mut Ctx,
        section: &Table,
        entry: &Entry,
        at: &LoadContext,
    ) -> Option<Arc<dyn Workload>>;
}

/// What a kind may need to know about the rest of the configuration.
pub(crate) struct LoadContext<'a> {
    /// The experiment file's directory: relative workload paths start there.
    pub base: &'a Path,
    /// The target's capacity when known (tmpfs and loop image sizes).
    pub target_bytes: Option<u64>,
    /// The page-cache cap of the configuration (`sut.cache_limit`), if any.
    pub cache_limit: Option<u64>,
    /// Whether iolab mounts the target and its files survive a remount (`Some(false)` for
    /// a directory or a tmpfs; `None` when the target is not known).
    pub remountable: Option<bool>,
    /// Whether the target keeps its files in memory (a tmpfs: `Some(true)`), where the page
    /// cache cannot be emptied; `None` when not known (a directory).
    pub memory_fs: Option<bool>,
}

/// A validated workload, ready to run any number of times.
pub trait Workload: Debug + Send + Sync {
    /// The `[workload]` key of its kind.
    fn kind(&self) -> &'static str;
    /// The metrics its runs record besides [`iolab_metrics::COMMON`].
    fn metrics(&self) -> &'static [MetricDef];
    /// What it means to do, for the checks (before running, in `iolab check`, and after).
    fn intent(&self, base: Intent) -> Intent;
    /// The timed region's planned length, when it is known beforehand.
    fn planned_duration(&self) -> Option<Duration>;
    /// Whether every run gives the same values (a simulation): the stopping rule then
    /// accepts one run as exact and says so (default: no).
    fn deterministic(&self) -> bool {
        false
    }
    /// Whether the common headline metrics (throughput, bandwidth, latency) are headline
    /// ones for this kind too (default: yes). A simulation's throughput is its speed and it
    /// has no latency: its own results are what tables and charts show.
    fn common_headline(&self) -> bool {
        true
    }
    /// What this workload does that needs root, in the words of the runner's list ("dropping
    /// the page cache between passes (…)"), checked before anything is touched (default:
    /// nothing).
    fn needs_root(&self) -> Option<String> {
        None
    }
    /// Fields added to the workload's entry in the stored experiment (e.g. the resolved
    /// path of a WML file).
    fn describe(&self) -> Map<String, Value> {
        Map::new()
    }
    /// Runs once in `run.dir`, adding its measurements to `run.record`.
    fn run(&self, run: &mut KindRun<'_>) -> Result<Ran, RunFailure>;
    /// For callers that know the kind (its command, tests).
    fn as_any(&self) -> &dyn Any;
}

/// A key of some kind that is given with another.
fn owner_of(key: &str) -> Option<&'static dyn Kind> {
    KINDS.iter().copied().find(|k| k.keys().contains(&key))
}

/// `wml = "file.f", builtin = "webserver" or micro = { … }`.
fn examples() -> String {
    let all: Vec<&str> = KINDS.iter().map(|k| k.example()).collect();
    match all.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => all.join(""),
    }
}

/// Which kind `[workload]` names, with its keys checked (before substitution); `None` after
/// an error.
pub(crate) fn select(cx: &mut Ctx, entry: Option<&Entry>) -> Option<&'static dyn Kind> {
    let Some(entry) = entry else {
        cx.error_hint(
            &(0..0),
            "the experiment has no [workload] section",
            format!("add [workload] with {}", examples()),
        );
        return None;
    };
    let before = cx.errors();
    let t = cx.table(entry, "workload")?;
    let mut known: Vec<&str> = Vec::new();
    for k in KINDS {
        for key in std::iter::once(k.key()).chain(k.keys().iter().copied()) {
            if !known.contains(&key) {
                known.push(key);
            }
        }
    }
    cx.unknown_keys(t, &known, "workload");
    let named: Vec<(&Entry, &'static dyn Kind)> = t
        .entries
        .iter()
        .filter_map(|e| Some((e, *KINDS.iter().find(|k| k.key() == e.key)?)))
        .collect();
    let kind = match named.as_slice() {
        [] => {
            cx.error_hint(
                &entry.key_span,
                "[workload] names no workload",
                format!("give one of {}", examples()),
            );
            return None;
        }
        [(first, _), (second, _), ..] => {
            let keys: Vec<&str> = KINDS.iter().map(|k| k.key()).collect();
            cx.error_hint(
                &second.key_span,
                format!(
                    "`workload.{}` and `workload.{}` are both given",
                    first.key, second.key
                ),
                format!("a workload is exactly one of {}", or_list(&keys)),
            );
            return None;
        }
        [(_, kind)] => *kind,
    };
    for e in &t.entries {
        let key = e.key.as_str();
        if key == kind.key() || kind.keys().contains(&key) {
            continue;
        }
        if let Some(owner) = owner_of(key) {
            let hint = kind.misplaced_hint(key).map_or_else(
                || format!("remove it: {} do not read it", kind.noun()),
                str::to_string,
            );
            cx.error_hint(
                &e.key_span,
                format!(
                    "`{}` applies to {}, not {}",
                    join("workload", key),
                    owner.noun(),
                    kind.noun()
                ),
                hint,
            );
        }
    }
    (cx.errors() == before).then_some(kind)
}

/// `a, b or c`.
fn or_list(items: &[&str]) -> String {
    match items.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => items.join(""),
    }
}

/// Reads one configuration's substituted `[workload]` table with its (already selected) kind.
pub(crate) fn resolve(
    cx: &mut Ctx,
    w: &Node,
    kind: &dyn Kind,
    at: &LoadContext,
) -> Option<Arc<dyn Workload>> {
    let t = w.value.as_table()?;
    let entry = t.get(kind.key())?;
    kind.resolve(cx, t, entry, at)
}

/// The metric names `repetitions.metric` may name: those with a direction among the common
/// ones and `kind`'s (every kind's when the kind is not known).
/// The stopping metric of an experiment that names none: a deterministic kind's first exact
/// headline metric (a simulation's speed varies, its miss ratio does not), else throughput.
pub(crate) fn default_metric(kind: Option<&dyn Kind>) -> &'static str {
    kind.and_then(|k| {
        k.metrics()
            .iter()
            .find(|d| d.exact && d.headline && d.better.is_some())
    })
    .and_then(|d| match &d.name {
        std::borrow::Cow::Borrowed(n) => Some(*n),
        std::borrow::Cow::Owned(_) => None,
    })
    .unwrap_or(crate::plan::DEFAULT_METRIC)
}

pub(crate) fn stopping_metrics(kind: Option<&dyn Kind>) -> Vec<&'static str> {
    let own: Vec<&'static MetricDef> = match kind {
        Some(k) => k.metrics().iter().collect(),
        None => KINDS.iter().flat_map(|k| k.metrics()).collect(),
    };
    let mut names: Vec<&'static str> = Vec::new();
    for d in iolab_metrics::COMMON.iter().chain(own) {
        if let (Some(_), std::borrow::Cow::Borrowed(n)) = (d.better, &d.name) {
            if !names.contains(n) {
                names.push(n);
            }
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(name: &str) -> String {
        let p = format!("{}/../../docs/{name}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
    }

    /// The row of a Markdown table whose first cell is `` `key` ``.
    fn row<'a>(text: &'a str, key: &str) -> Option<&'a str> {
        text.lines()
            .find(|l| l.starts_with(&format!("| `{key}` |")))
    }

    #[test]
    fn the_docs_list_the_micro_options_of_the_one_table() {
        let all = doc("experiments.md");
        // The micro table, after the `[workload]` one (which has a `time` row too).
        let text = &all[all.find("`micro` (see").expect("the micro table")..];
        for o in iolab_workload::micro::OPTIONS {
            let r = row(text, o.name)
                .unwrap_or_else(|| panic!("docs/experiments.md has no row for `{}`", o.name));
            if let Some(d) = o.default {
                let last = r.trim_end_matches('|').rsplit('|').next().unwrap().trim();
                assert_eq!(last, format!("`{d}`"), "default of `{}`", o.name);
            }
        }
    }

    #[test]
    fn the_docs_list_the_bonnie_options_of_the_one_table() {
        let all = doc("experiments.md");
        let text = &all[all.find("`bonnie` (see").expect("the bonnie table")..];
        for o in iolab_bonnie::OPTIONS {
            let r = row(text, o.name)
                .unwrap_or_else(|| panic!("docs/experiments.md has no row for `{}`", o.name));
            let last = r.trim_end_matches('|').rsplit('|').next().unwrap().trim();
            match o.default {
                Some(d) => assert_eq!(last, format!("`{d}`"), "default of `{}`", o.name),
                None => assert_eq!(last, "twice the memory", "default of `{}`", o.name),
            }
        }
        let bonnie = doc("bonnie.md");
        for o in iolab_bonnie::OPTIONS {
            assert!(
                row(&bonnie, o.name).is_some(),
                "docs/bonnie.md has no row for `{}`",
                o.name
            );
        }
    }

    #[test]
    fn the_docs_list_the_iozone_options_of_the_one_table() {
        for (page, start) in [
            ("experiments.md", "`iozone` (see"),
            ("iozone.md", "## Options"),
        ] {
            let all = doc(page);
            let text = &all[all.find(start).expect("the iozone table")..];
            for o in iolab_iozone::OPTIONS {
                let r = row(text, o.name)
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
    fn the_docs_list_the_sqlite_options_of_the_one_table() {
        for (file, start) in [
            ("experiments.md", "`sqlite` (see"),
            ("sqlite.md", "## Options"),
        ] {
            let all = doc(file);
            let text = &all[all
                .find(start)
                .unwrap_or_else(|| panic!("docs/{file} has no `{start}`"))..];
            for o in iolab_sqlite::OPTIONS {
                let r = row(text, o.name)
                    .unwrap_or_else(|| panic!("docs/{file} has no row for `{}`", o.name));
                if let Some(d) = o.default {
                    let last = r.trim_end_matches('|').rsplit('|').next().unwrap().trim();
                    assert_eq!(
                        last,
                        format!("`{d}`"),
                        "docs/{file}: default of `{}`",
                        o.name
                    );
                }
            }
        }
    }

    #[test]
    fn the_docs_list_exactly_the_stopping_metrics() {
        let text = doc("experiments.md");
        let r = row(&text, "metric").expect("a `metric` row");
        let mut listed: Vec<&str> = r.split('`').skip(1).step_by(2).collect();
        // The key and its default.
        listed.retain(|m| !["metric", "\"ops_per_s\""].contains(m));
        listed.sort_unstable();
        let mut want = stopping_metrics(None);
        want.sort_unstable();
        assert_eq!(listed, want);
    }

    #[test]
    fn every_declared_metric_is_documented() {
        let text = doc("metrics.md");
        for k in KINDS {
            for d in iolab_metrics::COMMON.iter().chain(k.metrics()) {
                assert!(
                    text.contains(&format!("`{}`", d.name)),
                    "docs/metrics.md does not describe `{}`",
                    d.name
                );
            }
        }
    }

    #[test]
    fn kinds_have_distinct_keys_and_their_metrics_are_new() {
        let mut keys: Vec<&str> = KINDS.iter().map(|k| k.key()).collect();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), KINDS.len());
        for k in KINDS {
            for d in k.metrics() {
                assert!(
                    iolab_metrics::find(iolab_metrics::COMMON, &d.name).is_none(),
                    "{} redeclares {}",
                    k.key(),
                    d.name
                );
            }
        }
    }
}
