//! The one JSON stamp. Every JSON document iolab writes (`--json`, `--format json`,
//! `export --format json`, `report -o x.json`) starts with `"schema": "iolab.<kind>/<n>"` and
//! `"iolab_version"` at its root ([`iolab_kind::output::json`]). The binary's own documents'
//! kinds and versions are declared here, each workload kind's with its formats; docs/json.md
//! lists each's fields (a test below checks it names them all).
//!
//! A kind's version goes up when a field changes meaning or goes away; new fields may appear
//! within a version.

use std::io::{self, Write};

use serde::Serialize;

use super::Formatter;

/// The kinds of JSON document, one per result kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Show,
    List,
    Compare,
    Trace,
    Syscalls,
    Check,
    Export,
    Import,
    Report,
    Reports,
    Reparse,
}

impl Kind {
    #[cfg(test)]
    const ALL: [Kind; 11] = [
        Kind::Show,
        Kind::List,
        Kind::Compare,
        Kind::Trace,
        Kind::Syscalls,
        Kind::Check,
        Kind::Export,
        Kind::Import,
        Kind::Report,
        Kind::Reports,
        Kind::Reparse,
    ];

    /// The stamp, `iolab.<kind>/<version>`.
    pub const fn schema(self) -> &'static str {
        match self {
            Kind::Show => "iolab.show/1",
            Kind::List => "iolab.list/1",
            Kind::Compare => "iolab.compare/1",
            Kind::Trace => "iolab.trace/1",
            Kind::Syscalls => "iolab.syscalls/1",
            Kind::Check => "iolab.check/1",
            Kind::Export => "iolab.export/1",
            Kind::Import => "iolab.import/1",
            Kind::Report => "iolab.report/1",
            Kind::Reports => "iolab.reports/1",
            Kind::Reparse => "iolab.reparse/1",
        }
    }
}

/// A result with a JSON form: the document is the result itself (it must serialize as a
/// map), stamped with its kind.
pub trait Document: Serialize {
    const KIND: Kind;
}

/// The JSON format of any [`Document`].
pub struct Json;

impl<R: Document> Formatter<R> for Json {
    fn write(&self, result: &R, out: &mut dyn Write) -> io::Result<()> {
        write(R::KIND, result, out)
    }
}

/// Writes `doc` as pretty JSON with the stamp of `kind` first at its root (the one stamp,
/// [`iolab_kind::output::json::write`]), and a final newline.
pub fn write<T: Serialize + ?Sized>(kind: Kind, doc: &T, out: &mut dyn Write) -> io::Result<()> {
    iolab_kind::output::json::write(kind.schema(), doc, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stamp_comes_first_and_keeps_the_fields() {
        #[derive(Serialize)]
        struct Doc {
            b: u32,
            a: &'static str,
        }
        let mut out = Vec::new();
        write(Kind::List, &Doc { b: 1, a: "x" }, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.starts_with("{\n  \"schema\": \"iolab.list/1\",\n  \"iolab_version\": "),
            "{text}"
        );
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!((v["a"].as_str(), v["b"].as_u64()), (Some("x"), Some(1)));
    }

    #[test]
    fn every_kind_is_distinct_and_documented() {
        let docs = include_str!("../../../../docs/json.md");
        let mut seen = std::collections::BTreeSet::new();
        let kinds = iolab_kinds::schemas();
        for s in Kind::ALL.iter().map(|k| k.schema()).chain(kinds) {
            assert!(seen.insert(s), "{s} twice");
            let (name, version) = s
                .strip_prefix("iolab.")
                .and_then(|r| r.split_once('/'))
                .unwrap_or_else(|| panic!("{s} is not iolab.<kind>/<n>"));
            assert!(!name.is_empty() && version.parse::<u32>().is_ok(), "{s}");
            assert!(
                docs.contains(&format!("`{s}`")),
                "docs/json.md does not describe {s}"
            );
        }
    }
}
