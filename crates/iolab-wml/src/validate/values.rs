//! Checks every section makes: attribute lists against their schema (names, types,
//! ranges) and references to variables.

use std::collections::HashMap;

use crate::ast::*;
use crate::env::StaticValue;
use crate::error::{ErrorKind, WarningKind};
use crate::schema::{AttrSpec, Ty};
use iolab_util::suggest::{closest, did_you_mean, suggestion};

use super::context::{Ctx, Scope};

impl Ctx<'_> {
    /// Reports references to undefined variables inside `v`. Returns false if there were any.
    pub(super) fn value_refs(&mut self, v: &Value, scope: Option<&Scope>) -> bool {
        match &v.kind {
            ValueKind::Var(name) => self.var_ref(name, v.span, scope),
            ValueKind::Text(t) => {
                let mut ok = true;
                for p in &t.parts {
                    if let TextPart::Var { name, span } = p {
                        ok &= self.var_ref(name, *span, scope);
                    }
                }
                ok
            }
            ValueKind::Expr(e) => self.expr_refs(e, scope),
            ValueKind::Table(rows) => {
                let mut ok = true;
                for r in rows {
                    for x in [&r.percent, &r.low, &r.high] {
                        ok &= self.value_refs(x, scope);
                    }
                }
                ok
            }
            _ => true,
        }
    }

    pub(super) fn expr_refs(&mut self, e: &Expr, scope: Option<&Scope>) -> bool {
        match e {
            Expr::Operand(v) => self.value_refs(v, scope),
            Expr::Binary { lhs, rhs, .. } => {
                let l = self.expr_refs(lhs, scope);
                self.expr_refs(rhs, scope) && l
            }
        }
    }

    pub(super) fn var_ref(&mut self, name: &str, span: Span, scope: Option<&Scope>) -> bool {
        if self.known_vars.contains(name) || scope.is_some_and(|s| s.locals.contains_key(name)) {
            return true;
        }
        let hint = if let Some(late) = self.late_vars.get(name) {
            Some(format!(
                "`${name}` is set at {late}, after `run`: filebench never gets there"
            ))
        } else {
            let mut cands: Vec<&str> = self.known_vars.iter().map(String::as_str).collect();
            if let Some(s) = scope {
                cands.extend(s.locals.keys().map(String::as_str));
            }
            closest(name, cands)
                .map(|c| suggestion(&format!("${c}")))
                .or_else(|| Some(format!("set it first: `set ${name} = …`")))
        };
        let msg = format!("unknown variable `${name}`");
        self.error(ErrorKind::UnknownVariable, span, &format!("${name}"), msg)
            .hint = hint;
        false
    }

    /// Checks an attribute list against `specs`: names known, values typed and in range.
    pub(super) fn attrs(
        &mut self,
        attrs: &[Attr],
        specs: &[AttrSpec],
        ctx: &str,
        scope: Option<&Scope>,
    ) {
        let mut seen: HashMap<&str, Span> = HashMap::new();
        for a in attrs {
            let Some(spec) = specs.iter().find(|s| s.name == a.name) else {
                let hint =
                    did_you_mean(&a.written, specs.iter().map(|s| s.name)).unwrap_or_else(|| {
                        let names: Vec<&str> = specs
                            .iter()
                            .filter(|s| s.ignored.is_none())
                            .map(|s| s.name)
                            .collect();
                        format!("{ctx} takes {}", names.join(", "))
                    });
                let msg = format!("unknown attribute `{}` for {ctx}", a.written);
                self.error(ErrorKind::UnknownAttribute, a.span, &a.written, msg)
                    .hint = Some(hint);
                continue;
            };
            if let Some(prev) = seen.insert(&a.name, a.span) {
                self.warn(
                    WarningKind::Suspicious,
                    a.span,
                    format!(
                        "`{}` is given twice (first at {prev}); the last one wins",
                        a.written
                    ),
                );
            }
            if let Some(why) = spec.ignored {
                let kind = if spec.legacy {
                    WarningKind::Legacy
                } else {
                    WarningKind::Ignored
                };
                self.warn(kind, a.span, format!("`{}` is ignored: {why}", a.written));
            }
            self.attr_value(a, spec, scope);
        }
    }

    pub(super) fn out_of_range(
        &mut self,
        v: &Value,
        name: &str,
        n: i64,
        min: Option<i64>,
        max: Option<i64>,
    ) {
        let msg = match (min, max) {
            (Some(0), None) => format!("`{name}` must not be negative, found {n}"),
            (Some(lo), Some(hi)) => format!("`{name}` must be between {lo} and {hi}, found {n}"),
            (Some(lo), None) => format!("`{name}` must be at least {lo}, found {n}"),
            (None, Some(hi)) => format!("`{name}` must be at most {hi}, found {n}"),
            (None, None) => return,
        };
        self.error(ErrorKind::OutOfRange, v.span, &token_of(v), msg);
    }

    pub(super) fn required(
        &mut self,
        attrs: &[Attr],
        name: &str,
        span: Span,
        token: &str,
        ctx: &str,
    ) -> bool {
        if find_attr(attrs, name).is_some() {
            return true;
        }
        let msg = format!("{ctx} needs `{name}`");
        self.error(ErrorKind::MissingAttribute, span, token, msg)
            .hint = Some(format!("add `{name}=…`"));
        false
    }

    fn attr_value(&mut self, a: &Attr, spec: &AttrSpec, scope: Option<&Scope>) {
        let Some(v) = &a.value else {
            if !matches!(spec.ty, Ty::Bool | Ty::Percent) {
                let msg = format!("`{}` needs a value", a.written);
                self.error(ErrorKind::InvalidValue, a.span, &a.written, msg)
                    .hint = Some(format!("write `{}=…`", a.written));
            }
            return;
        };
        if !self.value_refs(v, scope) {
            return;
        }
        let r = self.resolve(v, scope);
        let name = a.written.as_str();
        let expected = match spec.ty {
            Ty::Any => return,
            Ty::Table => {
                if !matches!(v.kind, ValueKind::Table(_)) {
                    Some("a table `{{percent, low, high}, …}`")
                } else {
                    None
                }
            }
            Ty::Str => match r {
                StaticValue::Str(_) | StaticValue::Unknown => None,
                _ => Some("a name"),
            },
            Ty::Bool => match r {
                StaticValue::Bool(_) | StaticValue::Int(_) | StaticValue::Unknown => None,
                _ => Some("`true` or `false`"),
            },
            Ty::Percent => match r {
                StaticValue::Int(n) if !(0..=100).contains(&n) => {
                    self.out_of_range(v, name, n, Some(0), Some(100));
                    None
                }
                StaticValue::Bool(_) | StaticValue::Int(_) | StaticValue::Unknown => None,
                _ => Some("a percentage (0-100) or nothing"),
            },
            Ty::Int | Ty::Num => match r {
                StaticValue::Int(n) => {
                    let below = spec.min.is_some_and(|m| n < m);
                    let above = spec.max.is_some_and(|m| n > m);
                    if below || above {
                        self.out_of_range(v, name, n, spec.min, spec.max);
                    }
                    None
                }
                StaticValue::Float(f) if spec.ty == Ty::Num => {
                    if spec.min.is_some_and(|m| f < m as f64) {
                        self.out_of_range(v, name, f as i64, spec.min, spec.max);
                    }
                    None
                }
                StaticValue::Float(_) => Some("a whole number"),
                StaticValue::Random if !spec.random => {
                    let msg = format!("`{name}` cannot be a random variable");
                    self.error(ErrorKind::InvalidValue, v.span, &token_of(v), msg);
                    None
                }
                StaticValue::Random | StaticValue::Unknown => None,
                StaticValue::Bool(_) | StaticValue::Str(_) => Some("a number"),
            },
            Ty::Choice(options) => match &r {
                StaticValue::Str(s) if !options.contains(&s.as_str()) => {
                    let hint = did_you_mean(s, options.iter().copied())
                        .unwrap_or_else(|| format!("expected one of {}", options.join(", ")));
                    let what = if spec.name == "type" {
                        "randvar type".to_string()
                    } else {
                        format!("`{name}`")
                    };
                    self.error(
                        ErrorKind::InvalidValue,
                        v.span,
                        &token_of(v),
                        format!("unknown {what} `{s}`"),
                    )
                    .hint = Some(hint);
                    None
                }
                StaticValue::Str(_) | StaticValue::Unknown => None,
                _ => Some("a word"),
            },
        };
        if let Some(expected) = expected {
            let msg = format!(
                "expected {expected} for `{name}`, found {}",
                describe(v, &r)
            );
            self.error(ErrorKind::InvalidValue, v.span, &token_of(v), msg);
        }
    }
}

/// The value as written, for error tokens.
pub(super) fn token_of(v: &Value) -> String {
    match &v.kind {
        ValueKind::Int(n) => n.to_string(),
        ValueKind::Float(f) => f.to_string(),
        ValueKind::Bool(b) => b.to_string(),
        ValueKind::Str(s) => s.clone(),
        ValueKind::Var(n) => format!("${n}"),
        ValueKind::Text(t) => t
            .as_literal()
            .map_or_else(|| "\"…\"".into(), |s| format!("\"{s}\"")),
        ValueKind::Randvar(_) => "randvar".into(),
        ValueKind::Cvar(_) => "cvar".into(),
        ValueKind::Expr(_) => "expression".into(),
        ValueKind::Table(_) => "{".into(),
    }
}

/// `` `abc` `` for literals, `` `$dir` (= "/tmp") `` for variables.
pub(super) fn describe(v: &Value, r: &StaticValue) -> String {
    match &v.kind {
        ValueKind::Var(n) => format!("`${n}` (= {})", r.describe()),
        _ => format!("`{}`", token_of(v)),
    }
}
