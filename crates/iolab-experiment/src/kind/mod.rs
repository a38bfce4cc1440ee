//! The workload kinds as the loader sees them: which kind `[workload]` names, with its keys
//! checked, and the metrics a stopping rule may watch. The kinds themselves are in the
//! registry ([`iolab_kinds::kinds`]), each in its own crate behind the traits of
//! iolab-kind; nothing here names one.

use std::sync::Arc;

use iolab_metrics::MetricDef;

pub use iolab_kind::kind::{DynWorkload, Kind, LoadContext, Workload};

use crate::plan::read::{join, Ctx};
use crate::plan::tree::{Entry, Node};

use iolab_kinds::kinds;

/// A key of some kind that is given with another.
fn owner_of(key: &str) -> Option<&'static dyn Kind> {
    kinds().find(|k| k.keys().contains(&key))
}

/// Every kind's example, for hints: `A, B or C`.
fn examples() -> String {
    let all: Vec<&str> = kinds().map(|k| k.example()).collect();
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
    for k in kinds() {
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
        .filter_map(|e| Some((e, kinds().find(|k| k.key() == e.key)?)))
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
            let keys: Vec<&str> = kinds().map(|k| k.key()).collect();
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
) -> Option<Arc<dyn DynWorkload>> {
    let t = w.value.as_table()?;
    let entry = t.get(kind.key())?;
    kind.resolve(cx, t, entry, at)
}

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

/// The metric names `repetitions.metric` may name: those with a direction among the common
/// ones and `kind`'s (every kind's when the kind is not known).
pub(crate) fn stopping_metrics(kind: Option<&dyn Kind>) -> Vec<&'static str> {
    let own: Vec<&'static MetricDef> = match kind {
        Some(k) => k.metrics().iter().collect(),
        None => kinds().flat_map(|k| k.metrics()).collect(),
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
    fn the_docs_list_exactly_the_stopping_metrics() {
        let text = doc("experiments.md");
        let r = row(&text, "metric").expect("a `metric` row");
        let mut listed: Vec<&str> = r.split('`').skip(1).step_by(2).collect();
        // The key and its default.
        listed.retain(|m| !["metric", "\"ops_per_s\""].contains(m));
        let want = stopping_metrics(None);
        for m in &want {
            assert!(
                listed.contains(m),
                "docs/experiments.md: `metric` does not list `{m}`"
            );
        }
        // The docs may name the metrics of a kind this build does not register; of the
        // registered kinds' metrics, they list only those with a direction.
        for k in kinds() {
            for d in iolab_metrics::COMMON.iter().chain(k.metrics()) {
                assert!(
                    !listed.contains(&&*d.name) || want.contains(&&*d.name),
                    "docs/experiments.md: `metric` lists `{}`, which has no direction",
                    d.name
                );
            }
        }
    }

    #[test]
    fn every_declared_metric_is_documented() {
        let text = doc("metrics.md");
        for k in kinds() {
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
        let mut keys: Vec<&str> = kinds().map(|k| k.key()).collect();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), kinds().count());
        for k in kinds() {
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
