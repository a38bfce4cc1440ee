//! `${factor}` and `${factor.field}` placeholders in the `[sut]` and `[workload]` sections.
//!
//! A string that is exactly one placeholder becomes the level's value with its type (so
//! `threads = "${t}"` is an integer, and `target = "${target}"` can be a whole table); a
//! placeholder inside other text is replaced by the value's text. There is no escape: `${`
//! always starts a placeholder, since nothing in a SUT or workload section needs it literally.

use crate::plan::factors::Factor;
use crate::plan::read::Ctx;
use crate::plan::tree::{Entry, Node, Span, Table, Value};
use iolab_util::suggest;

/// One `${…}` in a string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Placeholder {
    /// Byte range of `${…}` in the string.
    pub start: usize,
    pub end: usize,
    pub factor: String,
    /// `${case.access}` → `["access"]`.
    pub fields: Vec<String>,
}

/// A malformed placeholder: byte offset in the string and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ScanError {
    pub at: usize,
    pub message: String,
}

/// Finds the placeholders of a string.
pub(crate) fn scan(s: &str) -> Result<Vec<Placeholder>, ScanError> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = s[from..].find("${") {
        let start = from + i;
        let Some(len) = s[start + 2..].find('}') else {
            return Err(ScanError {
                at: start,
                message: format!("unterminated placeholder `{}`", &s[start..]),
            });
        };
        let end = start + 2 + len + 1;
        let inner = &s[start + 2..end - 1];
        let mut parts = inner.split('.').map(str::trim);
        let factor = parts.next().unwrap_or_default().to_string();
        let fields: Vec<String> = parts.map(str::to_string).collect();
        if factor.is_empty() || fields.iter().any(String::is_empty) {
            return Err(ScanError {
                at: start,
                message: format!(
                    "`{}` is not a placeholder: write ${{factor}} or ${{factor.field}}",
                    &s[start..end]
                ),
            });
        }
        out.push(Placeholder {
            start,
            end,
            factor,
            fields,
        });
        from = end;
    }
    Ok(out)
}

fn is_whole(s: &str, phs: &[Placeholder]) -> bool {
    matches!(phs, [p] if p.start == 0 && p.end == s.len())
}

/// Where the `${` of the placeholder starting at byte `start` of `decoded` is in the file:
/// found by counting `${` in the raw text, which escapes cannot break unless they spell `${`
/// themselves (then the string's start is close enough).
fn placeholder_span(src: &str, span: &Span, decoded: &str, start: usize) -> Span {
    let nth = decoded[..start].matches("${").count();
    if let Some(raw) = src.get(span.clone()) {
        if raw.matches("${").count() == decoded.matches("${").count() {
            if let Some((pos, _)) = raw.match_indices("${").nth(nth) {
                return span.start + pos..span.start + pos + 2;
            }
        }
    }
    span.clone()
}

/// The value a placeholder stands for in level `level` of `factor` (`None` if a field is
/// missing: the second element names it).
fn lookup<'a>(factor: &'a Factor, level: usize, fields: &[String]) -> Result<Node, &'a str> {
    let level = &factor.levels[level];
    if fields.is_empty() {
        return Ok(level.substitute_value());
    }
    let mut node = &level.node;
    for f in fields {
        match node.value.as_table().and_then(|t| t.get(f)) {
            Some(e) => node = &e.node,
            None => return Err(level.name.as_str()),
        }
    }
    Ok(node.clone())
}

/// Checks every placeholder under `node` against the factors, reporting located errors, and
/// marks the factors used.
pub(crate) fn check(cx: &mut Ctx, node: &Node, factors: &[Factor], used: &mut [bool]) {
    match &node.value {
        Value::String(s) => check_string(cx, node, s, factors, used),
        Value::Array(a) => a.iter().for_each(|n| check(cx, n, factors, used)),
        Value::Table(t) => t
            .entries
            .iter()
            .for_each(|e| check(cx, &e.node, factors, used)),
        _ => {}
    }
}

fn check_string(cx: &mut Ctx, node: &Node, s: &str, factors: &[Factor], used: &mut [bool]) {
    let src = &cx.src.text;
    let phs = match scan(s) {
        Ok(p) => p,
        Err(e) => {
            let at = placeholder_span(src, &node.span, s, e.at);
            cx.error_hint(
                &at,
                e.message,
                "a placeholder is ${factor} or ${factor.field}, closed by `}`",
            );
            return;
        }
    };
    let whole = is_whole(s, &phs);
    for p in &phs {
        let at = placeholder_span(&cx.src.text, &node.span, s, p.start);
        let text = &s[p.start..p.end];
        let Some(fi) = factors.iter().position(|f| f.name == p.factor) else {
            let hint = if p.factor == "previous" {
                "${previous.trace} names the stage before's block trace: it works in a [[then]] \
                 stage only (docs/experiments.md, \"Stages\")"
                    .to_string()
            } else if factors.is_empty() {
                "declare the factor in [factors]".to_string()
            } else {
                suggest::did_you_mean_or_list(&p.factor, factors.iter().map(|f| f.name.as_str()))
            };
            cx.error_hint(
                &at,
                format!("`{text}` names an unknown factor `{}`", p.factor),
                hint,
            );
            continue;
        };
        used[fi] = true;
        let f = &factors[fi];
        if !f.tables && !p.fields.is_empty() {
            cx.error_hint(
                &at,
                format!(
                    "`{text}`: the levels of `{}` are single values, without fields",
                    f.name
                ),
                format!("write ${{{}}}", f.name),
            );
            continue;
        }
        for level in 0..f.levels.len() {
            match lookup(f, level, &p.fields) {
                Err(_) if f.name == "previous" => {
                    cx.error_hint(
                        &at,
                        format!("`{text}`: a stage knows only ${{previous.trace}}"),
                        "the stage before leaves its block trace; write ${previous.trace}",
                    );
                    break;
                }
                Err(name) => {
                    cx.error_hint(
                        &at,
                        format!(
                            "`{text}`: level `{name}` of factor `{}` has no field `{}`",
                            f.name,
                            p.fields.join(".")
                        ),
                        "every level of the factor must have the field",
                    );
                    break;
                }
                Ok(v) if !whole && v.value.scalar_text().is_none() => {
                    let what = if p.fields.is_empty() {
                        format!("the levels of `{}` are tables", f.name)
                    } else {
                        format!(
                            "in level `{}` it is {}",
                            f.levels[level].name,
                            v.value.type_name()
                        )
                    };
                    cx.error_hint(
                        &at,
                        format!("`{text}` cannot be put into text: {what}"),
                        "name a single-value field, e.g. ${factor.field}, or make the placeholder the whole string",
                    );
                    break;
                }
                Ok(_) => {}
            }
        }
    }
}

/// `node` with every placeholder replaced by the levels of `combo` (one level index per
/// factor). Call only after [`check`] found no errors; anything it would have rejected is
/// left as written.
pub(crate) fn substitute(node: &Node, factors: &[Factor], combo: &[usize]) -> Node {
    let value = match &node.value {
        Value::String(s) => return substitute_string(node, s, factors, combo),
        Value::Array(a) => Value::Array(a.iter().map(|n| substitute(n, factors, combo)).collect()),
        Value::Table(t) => Value::Table(Table {
            entries: t
                .entries
                .iter()
                .map(|e| Entry {
                    key: e.key.clone(),
                    key_span: e.key_span.clone(),
                    node: substitute(&e.node, factors, combo),
                })
                .collect(),
        }),
        v => v.clone(),
    };
    Node {
        span: node.span.clone(),
        value,
    }
}

fn substitute_string(node: &Node, s: &str, factors: &[Factor], combo: &[usize]) -> Node {
    let Ok(phs) = scan(s) else {
        return node.clone();
    };
    let value_of = |p: &Placeholder| {
        let fi = factors.iter().position(|f| f.name == p.factor)?;
        lookup(&factors[fi], combo[fi], &p.fields).ok()
    };
    if is_whole(s, &phs) {
        if let Some(v) = value_of(&phs[0]) {
            return v.respanned(&node.span);
        }
    }
    let mut out = String::with_capacity(s.len());
    let mut last = 0;
    for p in &phs {
        out.push_str(&s[last..p.start]);
        match value_of(p).and_then(|v| v.value.scalar_text()) {
            Some(t) => out.push_str(&t),
            None => out.push_str(&s[p.start..p.end]),
        }
        last = p.end;
    }
    out.push_str(&s[last..]);
    Node {
        span: node.span.clone(),
        value: Value::String(out),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::error::Source;
    use crate::plan::factors::read_factors;
    use crate::plan::tree;
    use std::path::Path;

    const FACTORS: &str = "[factors]\nj = [\"ordered\", \"writeback\"]\nt = [1, 4]\n\
        case = [ { name = \"a\", access = \"write\", opts = { x = 1 } }, { name = \"b\", access = \"read\", opts = { x = 2 } } ]\n";

    /// Checks and substitutes `[w]` of `text` (appended to FACTORS) for the given combo.
    fn run(w: &str, combo: &[usize]) -> Result<serde_json::Value, Vec<String>> {
        let text = format!("{FACTORS}[w]\n{w}\n");
        let src = Source::new(Path::new("t.toml"), &text);
        let root = tree::parse(&text).ok().unwrap();
        let t = root.value.as_table().unwrap();
        let mut cx = Ctx::new(&src);
        let factors = read_factors(&mut cx, t.get("factors").unwrap()).unwrap();
        let w = &t.get("w").unwrap().node;
        let mut used = vec![false; factors.len()];
        check(&mut cx, w, &factors, &mut used);
        if cx.errors() > 0 {
            return Err(cx.diag.errors.iter().map(|e| e.to_string()).collect());
        }
        Ok(substitute(w, &factors, combo).to_json())
    }

    #[test]
    fn scan_finds_placeholders() {
        let p = scan("data=${j},x=${case.opts.x}").unwrap();
        assert_eq!(p.len(), 2);
        assert_eq!((p[0].start, p[0].end, p[0].factor.as_str()), (5, 9, "j"));
        assert_eq!(p[1].fields, ["opts", "x"]);
        assert_eq!(scan("plain").unwrap(), []);
        assert_eq!(scan("a ${j").unwrap_err().at, 2);
        assert!(scan("${}").is_err());
        assert!(scan("${a.}").is_err());
    }

    #[test]
    fn whole_placeholder_keeps_the_type() {
        let v = run(
            "threads = \"${t}\"\nmount = \"data=${j}\"\naccess = \"${case.access}\"\nopts = \"${case.opts}\"\nx = \"n${case.opts.x}\"",
            &[1, 1, 0],
        )
        .unwrap();
        assert_eq!(
            v,
            serde_json::json!({"threads": 4, "mount": "data=writeback", "access": "write",
                                "opts": {"x": 1}, "x": "n1"})
        );
    }

    #[test]
    fn whole_table_level_drops_its_name() {
        let v = run("c = \"${case}\"", &[0, 0, 1]).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"c": {"access": "read", "opts": {"x": 2}}})
        );
    }

    #[test]
    fn errors_point_at_the_placeholder() {
        // Line 6 is the first line of [w]; column 11 is the `$` of `${jj}`.
        let e = run("m = \"data=${jj}\"", &[0, 0, 0]).unwrap_err();
        assert_eq!(
            e,
            ["t.toml:6:11: `${jj}` names an unknown factor `jj`\n  hint: did you mean `j`?"]
        );
        let e = run("m = \"x ${t\"", &[0, 0, 0]).unwrap_err();
        assert!(
            e[0].starts_with("t.toml:6:8: unterminated placeholder `${t`"),
            "{e:?}"
        );
        let e = run("m = \"${case.sync}\"", &[0, 0, 0]).unwrap_err();
        assert!(
            e[0].contains("level `a` of factor `case` has no field `sync`"),
            "{e:?}"
        );
        let e = run("m = \"x ${case}\"", &[0, 0, 0]).unwrap_err();
        assert!(e[0].contains("cannot be put into text"), "{e:?}");
        let e = run("m = \"${t.x}\"", &[0, 0, 0]).unwrap_err();
        assert!(e[0].contains("single values"), "{e:?}");
    }
}
