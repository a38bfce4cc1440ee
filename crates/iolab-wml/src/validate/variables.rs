//! The variables section: `set $x = …` (values, 1.4 arithmetic, `randvar(…)`, `cvar(…)`;
//! the legacy `define randvar` is parsed as one).

use std::collections::HashSet;

use crate::ast::*;
use crate::env::StaticValue;
use crate::error::ErrorKind;
use crate::schema;
use iolab_util::suggest::did_you_mean;

use super::context::Ctx;
use super::values::{describe, token_of};

/// Checks the `set` commands in file order.
pub(super) struct Variables {
    /// The variables set above the command being checked, and the predefined ones: a `set`
    /// evaluates its right-hand side at once, so only those count there.
    set_so_far: HashSet<String>,
}

impl Variables {
    pub(super) fn new(cx: &Ctx<'_>) -> Variables {
        Variables {
            set_so_far: cx.predefined.clone(),
        }
    }

    /// Checks `set $name = value`, which sets `$name` for the commands below it.
    pub(super) fn visit(&mut self, cx: &mut Ctx<'_>, s: &SetVar) {
        match &s.value.kind {
            ValueKind::Randvar(r) => randvar(cx, r, &s.value),
            ValueKind::Cvar(c) => cvar(cx, c, &s.value),
            ValueKind::Var(_) | ValueKind::Expr(_) => {
                if cx.value_refs(&s.value, None) {
                    self.refs_before(cx, s, &s.value);
                }
            }
            _ => {
                cx.value_refs(&s.value, None);
            }
        }
        self.set_so_far.insert(s.name.clone());
    }

    /// A `set` copies and computes at once (as filebench 1.4's arithmetic does): a variable
    /// on its right must already be set, not set later or by this very `set`.
    fn refs_before(&self, cx: &mut Ctx<'_>, s: &SetVar, v: &Value) {
        let mut refs = Vec::new();
        collect_var_refs(v, &mut refs);
        for (name, span) in refs {
            if self.set_so_far.contains(name) {
                continue;
            }
            let hint = if name == s.name {
                format!(
                    "`${name}` has no value yet: set it to a value first, e.g. `set ${name} = …`"
                )
            } else {
                let first = cx.first_set.get(name).copied().unwrap_or_default();
                format!(
                    "`${name}` is first set at {first}: the right-hand side of `set` is \
                     evaluated at once, so move that `set` above this one"
                )
            };
            let msg = format!("unknown variable `${name}`");
            cx.error(ErrorKind::UnknownVariable, span, &format!("${name}"), msg)
                .hint = Some(hint);
        }
    }
}

/// `randvar(…)`: its attributes, and a `randtable` that goes with its type and whose
/// percentages sum to 100.
fn randvar(cx: &mut Ctx<'_>, r: &RandvarDef, at: &Value) {
    cx.attrs(&r.attrs, schema::RANDVAR_ATTRS, "`randvar`", None);
    let ty = find_attr(&r.attrs, "type")
        .and_then(|a| a.value.as_ref())
        .map(|v| cx.resolve(v, None));
    let table_attr = find_attr(&r.attrs, "randtable");
    match (&ty, table_attr) {
        (Some(StaticValue::Str(t)), None) if t == "tabular" => {
            cx.error(
                ErrorKind::MissingAttribute,
                at.span,
                "randvar",
                "a tabular randvar needs `randtable = {{percent, low, high}, …}`",
            );
        }
        (Some(StaticValue::Str(t)), Some(a)) if t != "tabular" => {
            let msg = format!("`randtable` needs `type=tabular`, not `{t}`");
            cx.error(ErrorKind::InvalidValue, a.span, "randtable", msg);
        }
        _ => {}
    }
    let Some(rows) = r.table() else { return };
    let mut sum = Some(0i64);
    for row in rows {
        let mut nums = [None; 3];
        for (i, (v, what)) in [
            (&row.percent, "a percentage"),
            (&row.low, "a low bound"),
            (&row.high, "a high bound"),
        ]
        .into_iter()
        .enumerate()
        {
            match cx.resolve(v, None) {
                StaticValue::Int(n) if n < 0 => {
                    let msg = format!("randtable entries must not be negative, found {n}");
                    cx.error(ErrorKind::OutOfRange, v.span, &token_of(v), msg);
                }
                StaticValue::Int(n) => nums[i] = Some(n),
                StaticValue::Unknown => {}
                other => {
                    let msg = format!(
                        "expected {what} in the randtable row, found {}",
                        describe(v, &other)
                    );
                    cx.error(ErrorKind::InvalidValue, v.span, &token_of(v), msg);
                }
            }
        }
        sum = sum.zip(nums[0]).map(|(s, p)| s + p);
        if let (Some(lo), Some(hi)) = (nums[1], nums[2]) {
            if lo > hi {
                let msg = format!("randtable row has its low bound {lo} above its high bound {hi}");
                cx.error(ErrorKind::InvalidValue, row.span, "{", msg);
            }
        }
    }
    if let (Some(sum), Some(a)) = (sum, table_attr) {
        if sum != 100 {
            let span = a.value.as_ref().map_or(a.span, |v| v.span);
            let msg = format!("randtable percentages sum to {sum}, not 100");
            cx.error(ErrorKind::InvalidValue, span, "{", msg);
        }
    }
}

/// `cvar(…)`: its type, and the parameters of that type, each a number.
fn cvar(cx: &mut Ctx<'_>, c: &CvarDef, at: &Value) {
    cx.attrs(&c.attrs, schema::CVAR_ATTRS, "`cvar`", None);
    let Some(tv) = find_attr(&c.attrs, "type").and_then(|a| a.value.as_ref()) else {
        cx.error(
            ErrorKind::MissingAttribute,
            at.span,
            "cvar",
            "`cvar(…)` needs `type=cvar-…`",
        )
        .hint = Some("e.g. `cvar(type=cvar-gamma, parameters=mean:16384;gamma:1.5)`".into());
        return;
    };
    let StaticValue::Str(ty) = cx.resolve(tv, None) else {
        return;
    };
    let Some((_, params)) = schema::CVAR_TYPES.iter().find(|(n, _)| *n == ty) else {
        let hint =
            did_you_mean(&ty, schema::CVAR_TYPES.iter().map(|(n, _)| *n)).unwrap_or_else(|| {
                let all: Vec<&str> = schema::CVAR_TYPES.iter().map(|(n, _)| *n).collect();
                format!("cvar types are {}", all.join(", "))
            });
        cx.error(
            ErrorKind::InvalidValue,
            tv.span,
            &ty,
            format!("unknown cvar type `{ty}`"),
        )
        .hint = Some(hint);
        return;
    };
    let Some(pv) = find_attr(&c.attrs, "parameters").and_then(|a| a.value.as_ref()) else {
        return;
    };
    let StaticValue::Str(text) = cx.resolve(pv, None) else {
        return;
    };
    // Point into a bare word at the offending key; quoted or variable values at the value.
    let offset_span = |off: usize| match pv.kind {
        ValueKind::Str(_) => Span::new(pv.span.line, pv.span.col + off as u32),
        _ => pv.span,
    };
    let mut off = 0usize;
    for item in text.split(';') {
        let item_off = off;
        off += item.chars().count() + 1;
        if item.trim().is_empty() {
            continue;
        }
        let (key, val) = item.split_once(':').unwrap_or((item, ""));
        if !params.contains(&key) {
            let hint = did_you_mean(key, params.iter().copied())
                .unwrap_or_else(|| format!("`{ty}` takes {}", params.join(", ")));
            cx.error(
                ErrorKind::InvalidValue,
                offset_span(item_off),
                key,
                format!("`{ty}` has no parameter `{key}`"),
            )
            .hint = Some(hint);
        } else if val.trim().parse::<f64>().is_err() {
            cx.error(
                ErrorKind::InvalidValue,
                offset_span(item_off),
                item,
                format!("parameter `{key}` needs a number, found `{val}`"),
            )
            .hint = Some("parameters are written `key:number;key:number`".into());
        }
    }
}

/// The `$variable`s a `set` right-hand side reads, in order.
fn collect_var_refs<'v>(v: &'v Value, out: &mut Vec<(&'v str, Span)>) {
    fn expr<'v>(e: &'v Expr, out: &mut Vec<(&'v str, Span)>) {
        match e {
            Expr::Operand(v) => collect_var_refs(v, out),
            Expr::Binary { lhs, rhs, .. } => {
                expr(lhs, out);
                expr(rhs, out);
            }
        }
    }
    match &v.kind {
        ValueKind::Var(name) => out.push((name, v.span)),
        ValueKind::Expr(e) => expr(e, out),
        _ => {}
    }
}
