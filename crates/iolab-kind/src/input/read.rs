//! Typed reading of tree entries: each getter reports a located error and returns `None`
//! when the value has the wrong type or range, so reading goes on and finds further errors.

use std::time::Duration;

use crate::input::error::{Diag, ExperimentError, Source};
use crate::input::tree::{Entry, Span, Table, Value};
use iolab_util::option::{intern, intern_path, OptionDef, OptionKind, OptionValue};
use iolab_util::suggest;

/// The file being read and the errors found so far.
pub struct Ctx<'s> {
    pub src: &'s Source,
    pub diag: Diag,
}

impl<'s> Ctx<'s> {
    pub fn new(src: &'s Source) -> Self {
        Ctx {
            src,
            diag: Diag::default(),
        }
    }

    /// Records an error at `span`.
    pub fn error(&mut self, span: &Span, message: impl Into<String>) {
        let e = self.src.error(span, message);
        self.diag.push(e);
    }

    /// Records an error with a hint.
    pub fn error_hint(&mut self, span: &Span, message: impl Into<String>, hint: impl Into<String>) {
        let e = self.src.error(span, message).hint(hint);
        self.diag.push(e);
    }

    pub fn push(&mut self, e: ExperimentError) {
        self.diag.push(e);
    }

    pub fn errors(&self) -> usize {
        self.diag.len()
    }

    /// Reports every key of `t` not in `known`. `path` names the table (`""` for the top
    /// level, `sut.target`, …).
    pub fn unknown_keys(&mut self, t: &Table, known: &[&str], path: &str) {
        for e in &t.entries {
            if known.contains(&e.key.as_str()) {
                continue;
            }
            let message = if path.is_empty() {
                format!("unknown top-level key `{}`", e.key)
            } else {
                format!("unknown key `{}` in `{path}`", e.key)
            };
            let hint = suggest::did_you_mean_or_list(&e.key, known.iter().copied());
            self.error_hint(&e.key_span, message, hint);
        }
    }

    fn wrong_type(&mut self, e: &Entry, path: &str, expected: &str) {
        let found = e.node.value.type_name();
        self.error(
            e.point(),
            format!("`{path}` must be {expected}, not {found}"),
        );
    }

    pub fn table<'a>(&mut self, e: &'a Entry, path: &str) -> Option<&'a Table> {
        match &e.node.value {
            Value::Table(t) => Some(t),
            _ => {
                self.wrong_type(e, path, "a table");
                None
            }
        }
    }

    pub fn string<'a>(&mut self, e: &'a Entry, path: &str) -> Option<&'a str> {
        match &e.node.value {
            Value::String(s) => Some(s),
            _ => {
                self.wrong_type(e, path, "a string");
                None
            }
        }
    }

    pub fn boolean(&mut self, e: &Entry, path: &str) -> Option<bool> {
        match e.node.value {
            Value::Boolean(b) => Some(b),
            _ => {
                self.wrong_type(e, path, "a boolean (true or false)");
                None
            }
        }
    }

    /// An integer in `min..=max`.
    pub fn integer(&mut self, e: &Entry, path: &str, min: i64, max: i64) -> Option<i64> {
        match e.node.value {
            Value::Integer(i) if (min..=max).contains(&i) => Some(i),
            Value::Integer(i) => {
                let range = if max == i64::MAX {
                    format!("at least {min}")
                } else {
                    format!("between {min} and {max}")
                };
                self.error(&e.node.span, format!("`{path}` must be {range}, not {i}"));
                None
            }
            _ => {
                self.wrong_type(e, path, "an integer");
                None
            }
        }
    }

    /// A finite number (integer or float).
    pub fn number(&mut self, e: &Entry, path: &str) -> Option<f64> {
        match e.node.value {
            Value::Integer(i) => Some(i as f64),
            Value::Float(f) if f.is_finite() => Some(f),
            Value::Float(f) => {
                self.error(&e.node.span, format!("`{path}` must be finite, not {f}"));
                None
            }
            _ => {
                self.wrong_type(e, path, "a number");
                None
            }
        }
    }

    /// `"30s"`, `"500ms"`, `"2m"`, or a number of seconds.
    pub fn duration(&mut self, e: &Entry, path: &str) -> Option<Duration> {
        let parsed = match &e.node.value {
            Value::String(s) => iolab_util::units::parse_duration(s).map_err(|err| err.to_string()),
            Value::Integer(i) if *i >= 0 => Ok(Duration::from_secs(*i as u64)),
            Value::Float(f) => {
                Duration::try_from_secs_f64(*f).map_err(|_| format!("{f} is not a duration"))
            }
            Value::Integer(i) => Err(format!("{i} is not a duration")),
            _ => {
                self.wrong_type(e, path, "a duration such as \"30s\"");
                return None;
            }
        };
        match parsed {
            Ok(d) if d.is_zero() => {
                self.error(&e.node.span, format!("`{path}` must be longer than zero"));
                None
            }
            Ok(d) => Some(d),
            Err(m) => {
                self.error(&e.node.span, format!("`{path}`: {m}"));
                None
            }
        }
    }

    /// `"4k"`, `"64m"`, or a number of bytes.
    pub fn size(&mut self, e: &Entry, path: &str) -> Option<u64> {
        let parsed = match &e.node.value {
            Value::String(s) => iolab_util::units::parse_size(s).map_err(|err| err.to_string()),
            Value::Integer(i) if *i >= 0 => Ok(*i as u64),
            Value::Integer(i) => Err(format!("{i} is not a size")),
            _ => {
                self.wrong_type(e, path, "a size such as \"64m\"");
                return None;
            }
        };
        match parsed {
            Ok(b) => Some(b),
            Err(m) => {
                self.error(&e.node.span, format!("`{path}`: {m}"));
                None
            }
        }
    }

    /// The value of an option declared in a kind's option table, typed as its kind says.
    pub fn option(
        &mut self,
        e: &Entry,
        path: &str,
        kind: OptionKind,
        aliases: &[(&'static str, &'static str)],
    ) -> Option<OptionValue> {
        match kind {
            OptionKind::Choice(names) => {
                // Another spelling of a name (a tool's own word for it) means that name.
                if let Value::String(s) = &e.node.value {
                    if let Some((_, name)) = aliases.iter().find(|(a, _)| a == s) {
                        return Some(OptionValue::Name(name));
                    }
                }
                self.choice(e, path, names).map(OptionValue::Name)
            }
            OptionKind::Size => self.size(e, path).map(OptionValue::Bytes),
            // A maximum that is only the type's limit is not worth saying ("at least 1"),
            // but is still enforced.
            OptionKind::Count { min, max } if max == u64::from(u32::MAX) => {
                let n = self.integer(e, path, min as i64, i64::MAX)?;
                if n as u64 > max {
                    self.error(
                        &e.node.span,
                        format!("`{path}` must be at most {max}, not {n}"),
                    );
                    return None;
                }
                Some(OptionValue::Count(n as u64))
            }
            OptionKind::Count { min, max } => {
                let max = i64::try_from(max).unwrap_or(i64::MAX);
                self.integer(e, path, min as i64, max)
                    .map(|n| OptionValue::Count(n as u64))
            }
            OptionKind::Duration => self.duration(e, path).map(OptionValue::Duration),
            OptionKind::Flag => self.boolean(e, path).map(OptionValue::Flag),
            // As written: the kind resolves it against the file's directory
            // (`table::resolve_paths`), which the reader does not know.
            OptionKind::Path => self
                .string(e, path)
                .map(|s| OptionValue::Path(intern_path(std::path::Path::new(s)))),
            // The kind checks what the text means when it validates its spec.
            OptionKind::Text => match &e.node.value {
                Value::String(s) => Some(OptionValue::Text(intern(s))),
                Value::Integer(i) => Some(OptionValue::Text(intern(&i.to_string()))),
                _ => {
                    self.wrong_type(e, path, "a string");
                    None
                }
            },
            // `"a,b"` or `["a", "b"]`.
            OptionKind::Set { .. } => {
                let joined;
                let text = match &e.node.value {
                    Value::Array(items) => {
                        let mut names = Vec::with_capacity(items.len());
                        for item in items {
                            match &item.value {
                                Value::String(s) => names.push(s.as_str()),
                                other => {
                                    self.error(
                                        &item.span,
                                        format!(
                                            "`{path}`: each item must be a string, not {}",
                                            other.type_name()
                                        ),
                                    );
                                    return None;
                                }
                            }
                        }
                        joined = names.join(",");
                        joined.as_str()
                    }
                    _ => self.string(e, path)?,
                };
                match kind.parse(text, aliases) {
                    Ok(v) => Some(v),
                    Err(m) => {
                        self.error(&e.node.span, format!("`{path}`: {m}"));
                        None
                    }
                }
            }
        }
    }

    /// Reads a kind's options table (`KIND = { … }`; `path` names it) into
    /// `spec`: every key of `options`, typed as its kind says, other keys reported. The table
    /// when it was read without an error.
    pub fn options<'t, S>(
        &mut self,
        entry: &'t Entry,
        path: &str,
        options: &[OptionDef<S>],
        spec: &mut S,
    ) -> Option<&'t Table> {
        let before = self.errors();
        let t = self.table(entry, path)?;
        let names: Vec<&str> = options.iter().map(|o| o.name).collect();
        self.unknown_keys(t, &names, path);
        for o in options {
            let Some(e) = t.get(o.name) else { continue };
            if let Some(v) = self.option(e, &join(path, o.name), o.kind, o.aliases) {
                o.apply(spec, v);
            }
        }
        (self.errors() == before).then_some(t)
    }

    /// One of `names`, with a "did you mean" hint otherwise.
    pub fn choice<'n>(&mut self, e: &Entry, path: &str, names: &[&'n str]) -> Option<&'n str> {
        let s = self.string(e, path)?;
        match names.iter().find(|n| **n == s) {
            Some(n) => Some(n),
            None => {
                self.error_hint(
                    &e.node.span,
                    format!("`{path}`: unknown value {s:?}"),
                    suggest::did_you_mean_or_list(s, names.iter().copied()),
                );
                None
            }
        }
    }
}

/// `a.b` for messages, from a parent path and a key (quoted when it is not a bare key).
pub fn join(parent: &str, key: &str) -> String {
    let bare = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    let key = if bare {
        key.to_string()
    } else {
        format!("{key:?}")
    };
    if parent.is_empty() {
        key
    } else {
        format!("{parent}.{key}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::tree;
    use std::path::Path;

    fn with<T>(text: &str, f: impl FnOnce(&mut Ctx, &Table) -> T) -> (T, Vec<String>) {
        let src = Source::new(Path::new("t.toml"), text);
        let root = tree::parse(text).ok().unwrap();
        let mut cx = Ctx::new(&src);
        let out = f(&mut cx, root.value.as_table().unwrap());
        let msgs = cx.diag.errors.iter().map(|e| e.to_string()).collect();
        (out, msgs)
    }

    #[test]
    fn getters_report_located_errors() {
        let (v, errs) = with("a = \"x\"\nb = 5\nc = -1\n", |cx, t| {
            (
                cx.integer(t.get("a").unwrap(), "a", 0, 9),
                cx.integer(t.get("b").unwrap(), "b", 0, 9),
                cx.integer(t.get("c").unwrap(), "c", 0, i64::MAX),
            )
        });
        assert_eq!(v, (None, Some(5), None));
        assert_eq!(
            errs,
            [
                "t.toml:1:5: `a` must be an integer, not a string",
                "t.toml:3:5: `c` must be at least 0, not -1"
            ]
        );
    }

    #[test]
    fn durations_and_sizes() {
        let (v, errs) = with(
            "a = \"30s\"\nb = 2\nc = \"3 parsecs\"\nd = \"4k\"\n",
            |cx, t| {
                (
                    cx.duration(t.get("a").unwrap(), "a"),
                    cx.duration(t.get("b").unwrap(), "b"),
                    cx.duration(t.get("c").unwrap(), "c"),
                    cx.size(t.get("d").unwrap(), "d"),
                )
            },
        );
        assert_eq!(
            v,
            (
                Some(Duration::from_secs(30)),
                Some(Duration::from_secs(2)),
                None,
                Some(4096)
            )
        );
        assert_eq!(errs.len(), 1);
        assert!(errs[0].starts_with("t.toml:3:5: `c`: `3 parsecs` is not a duration"));
    }

    #[test]
    fn a_path_is_a_string_as_written() {
        let (v, errs) = with("a = \"lists/x y.list \"\nb = 3\n", |cx, t| {
            (
                cx.option(t.get("a").unwrap(), "a", OptionKind::Path, &[]),
                cx.option(t.get("b").unwrap(), "b", OptionKind::Path, &[]),
            )
        });
        assert_eq!(
            v.0.and_then(OptionValue::path),
            Some(Path::new("lists/x y.list "))
        );
        assert_eq!(v.1, None);
        assert_eq!(errs, ["t.toml:2:5: `b` must be a string, not an integer"]);
    }

    #[test]
    fn a_set_is_a_comma_separated_string_or_an_array_of_names() {
        const SET: OptionKind = OptionKind::Set {
            names: &["create", "stat", "remove"],
            what: "phase",
        };
        let (v, errs) = with(
            "a = \"create,remove\"\nb = [\"create\", \"remove\"]\nc = [\"stat\", 2]\n",
            |cx, t| {
                (
                    cx.option(t.get("a").unwrap(), "a", SET, &[]),
                    cx.option(t.get("b").unwrap(), "b", SET, &[]),
                    cx.option(t.get("c").unwrap(), "c", SET, &[]),
                )
            },
        );
        assert_eq!(v.0, Some(OptionValue::set_of([0, 2])));
        assert_eq!(v.1, v.0);
        assert_eq!(v.2, None);
        assert_eq!(
            errs,
            ["t.toml:3:14: `c`: each item must be a string, not an integer"]
        );
    }

    #[test]
    fn unknown_keys_suggest() {
        let (_, errs) = with("seeed = 1\n", |cx, t| {
            cx.unknown_keys(t, &["seed", "name"], "")
        });
        assert_eq!(
            errs,
            ["t.toml:1:1: unknown top-level key `seeed`\n  hint: did you mean `seed`?"]
        );
    }

    #[test]
    fn join_quotes_odd_keys() {
        assert_eq!(
            join("sut.tunables", "vm.dirty_ratio"),
            "sut.tunables.\"vm.dirty_ratio\""
        );
        assert_eq!(join("", "sut"), "sut");
    }
}
