//! Reading an experiment file's keys with located errors: the spanned TOML tree ([`tree`]),
//! the typed getters that report a mistake where it was written ([`read::Ctx`]), and the
//! errors themselves ([`error`]). A kind reads its `[workload]` keys with these; the plan
//! reads everything else with the same.

pub mod error;
pub mod read;
pub mod tree;

use serde_json::Value;

use error::{one, ExperimentError, ExperimentErrors, Source};
use read::Ctx;
use tree::{Entry, Table};

/// Reads a stored `[workload]` section (an experiment's resolved JSON keeps one per
/// configuration) with a kind's own reader, as if it had been written in a file: `key` is
/// the kind's key. What the stored experiment ran, typed again; errors as a file's would be.
pub fn reread<T>(
    workload: &Value,
    key: &str,
    read: impl FnOnce(&mut Ctx, &Table, &Entry) -> Option<T>,
) -> Result<T, ExperimentErrors> {
    let path = std::path::Path::new("stored workload");
    let mut text = String::from("[workload]\n");
    if let Value::Object(o) = workload {
        for (k, v) in o {
            if !v.is_null() {
                text.push_str(&format!("{} = {}\n", toml_key(k), toml_value(v)));
            }
        }
    }
    let src = Source::new(path, &text);
    let root = tree::parse(&text).map_err(|e| one(src.error(&e.span, e.message)))?;
    let mut cx = Ctx::new(&src);
    let t = root
        .value
        .as_table()
        .and_then(|t| t.get("workload"))
        .and_then(|w| w.node.value.as_table());
    let out = t
        .and_then(|t| Some((t, t.get(key)?)))
        .and_then(|(t, e)| read(&mut cx, t, e));
    match (out, ExperimentErrors::from_vec(cx.diag.errors, path)) {
        (Some(v), None) => Ok(v),
        (_, Some(errs)) => Err(errs),
        (None, None) => Err(one(ExperimentError::new(
            path,
            0,
            0,
            format!("the stored workload has no `{key}`"),
        ))),
    }
}

fn toml_key(k: &str) -> String {
    if !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        k.to_string()
    } else {
        toml_string(k)
    }
}

/// A TOML basic string. Not JSON's form: JSON leaves DEL (U+007F) raw, which TOML forbids in
/// a string, so a stored `"\u007f"` would not read again.
fn toml_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() && (c as u32) < 0x80 => {
                out.push_str(&format!("\\u{:04x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A JSON value as TOML: JSON's strings, numbers and booleans are TOML's; objects become
/// inline tables.
fn toml_value(v: &Value) -> String {
    match v {
        Value::Object(o) => {
            let items: Vec<String> = o
                .iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| format!("{} = {}", toml_key(k), toml_value(v)))
                .collect();
            format!("{{ {} }}", items.join(", "))
        }
        Value::Array(a) => {
            let items: Vec<String> = a.iter().map(toml_value).collect();
            format!("[{}]", items.join(", "))
        }
        Value::String(s) => toml_string(s),
        other => other.to_string(),
    }
}
