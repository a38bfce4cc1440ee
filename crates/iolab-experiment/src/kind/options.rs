//! Reading a kind's `[workload] KIND = { … }` with its one option table
//! ([`iolab_workload::OptionTable`]: micro's, bonnie's): unknown keys, every value typed as
//! its option says, and the spans that locate the kind's later validation errors.

use iolab_workload::micro::{KindOption, OptionKind, OptionTable, OptionValue};

use crate::plan::read::Ctx;
use crate::plan::tree::{Entry, Span, Table};

/// Stand-in for the run directory until the runner knows it (a spec read from a file gets
/// its directory and seed for every run).
pub(crate) const PLACEHOLDER_DIR: &str = "/nonexistent-iolab-dir";

/// A kind's table as read, for locating errors found after reading it.
pub(crate) struct Options<'e> {
    pub table: &'e Table,
    entry: &'e Entry,
    kind: &'static str,
}

/// Reads `KIND = { … }` into `spec` (which holds the table's defaults). `None` after an
/// error (each one reported in `cx`).
pub(crate) fn read<'e, S: OptionTable>(
    cx: &mut Ctx,
    entry: &'e Entry,
    kind: &'static str,
    spec: &mut S,
) -> Option<Options<'e>> {
    let before = cx.errors();
    let path = format!("workload.{kind}");
    let table = cx.table(entry, &path)?;
    let names: Vec<&str> = S::OPTIONS.iter().map(|o| o.name).collect();
    cx.unknown_keys(table, &names, &path);
    let t = Options { table, entry, kind };
    for o in S::OPTIONS {
        let Some(e) = table.get(o.name) else { continue };
        if let Some(v) = value(cx, e, o, &t.key(o.name)) {
            o.apply(spec, v);
        }
    }
    (cx.errors() == before).then_some(t)
}

impl Options<'_> {
    /// `workload.KIND.k`.
    pub fn key(&self, k: &str) -> String {
        format!("workload.{}.{k}", self.kind)
    }

    /// Where `k`'s value is, or the kind's own key when `k` is not given.
    pub fn at(&self, k: &str) -> Span {
        self.table
            .get(k)
            .map_or(self.entry.key_span.clone(), |e| e.node.span.clone())
    }

    /// Reports that `bytes` of data (set by `k`) do not fit on a target of `cap` bytes.
    pub fn too_big(&self, cx: &mut Ctx, k: &str, bytes: u64, cap: u64) {
        cx.error_hint(
            &self.at(k),
            format!(
                "`{}`: {} of data do not fit on the {} target",
                self.key(k),
                iolab_workload::format_bytes(bytes),
                iolab_workload::format_bytes(cap)
            ),
            format!(
                "make the target larger or the {} workload smaller",
                self.kind
            ),
        );
    }
}

/// One option's value in an experiment file, with the type its option asks for.
fn value<S>(cx: &mut Ctx, e: &Entry, o: &KindOption<S>, key: &str) -> Option<OptionValue> {
    match o.kind {
        OptionKind::Choice(names) => cx.choice(e, key, names).map(OptionValue::Name),
        OptionKind::Size => cx.size(e, key).map(OptionValue::Bytes),
        OptionKind::Count { min, max } => {
            let max = i64::try_from(max).unwrap_or(i64::MAX);
            cx.integer(e, key, min as i64, max)
                .map(|n| OptionValue::Count(n as u64))
        }
        OptionKind::Duration => cx.duration(e, key).map(OptionValue::Duration),
    }
}
