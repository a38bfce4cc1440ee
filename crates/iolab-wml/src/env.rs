//! Static resolution of variables: what a value is known to be before anything runs.
//!
//! `set` commands are evaluated in order, each right-hand side against the variables set so
//! far (filebench 1.4 evaluates arithmetic eagerly). References from definitions see the
//! last value set before `run`, since filebench reads most attributes lazily.

use std::collections::HashMap;

use crate::ast::{BinOp, CommandKind, Expr, Parsed, Span, TextPart, Value, ValueKind};

/// What a value is known to be.
#[derive(Debug, Clone, PartialEq)]
pub enum StaticValue {
    Int(i64),
    Float(f64),
    Bool(bool),
    Str(String),
    /// A `randvar(…)` or `cvar(…)`: a number, different at each read.
    Random,
    /// Depends on something not known statically (a composite's local, a variable set later).
    Unknown,
}

impl StaticValue {
    /// For messages: `16384`, `true`, `/tmp`, `a random variable`.
    pub fn describe(&self) -> String {
        match self {
            StaticValue::Int(n) => n.to_string(),
            StaticValue::Float(f) => f.to_string(),
            StaticValue::Bool(b) => b.to_string(),
            StaticValue::Str(s) => format!("\"{s}\""),
            StaticValue::Random => "a random variable".to_string(),
            StaticValue::Unknown => "unknown".to_string(),
        }
    }
}

/// Local variables of a composite flowop being checked.
pub(crate) type Locals = HashMap<String, StaticValue>;

/// The global variables of a file, as set before its `run`.
#[derive(Debug, Clone, Default)]
pub struct Env {
    vars: HashMap<String, (StaticValue, Span)>,
    /// Arithmetic that cannot be evaluated (division by zero, overflow): span and message.
    pub(crate) errors: Vec<(Span, String)>,
}

impl Env {
    /// Evaluates the `set` commands of `parsed` that filebench would execute.
    pub fn new(parsed: &Parsed) -> Env {
        Env::with_overrides(parsed, &HashMap::new())
    }

    /// Like [`Env::new`], but the given values win over the file's own `set`s for those
    /// names (the command line's `--set var=value`), and later `set`s see them.
    pub fn with_overrides(parsed: &Parsed, overrides: &HashMap<String, StaticValue>) -> Env {
        let mut env = Env::default();
        for (name, v) in overrides {
            env.vars.insert(name.clone(), (v.clone(), Span::default()));
        }
        for c in parsed.live_commands() {
            if let CommandKind::Set(s) = &c.kind {
                if overrides.contains_key(&s.name) {
                    continue;
                }
                let v = env.eval(&s.value, None);
                env.vars.insert(s.name.clone(), (v, s.name_span));
            }
        }
        env
    }

    /// The last value set for `$name`.
    pub fn get(&self, name: &str) -> Option<&StaticValue> {
        self.vars.get(name).map(|(v, _)| v)
    }

    /// Where `$name` was last set.
    pub fn span_of(&self, name: &str) -> Option<Span> {
        self.vars.get(name).map(|(_, s)| *s)
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.vars.keys().map(String::as_str)
    }

    /// Resolves a value in the global scope.
    pub fn resolve(&self, v: &Value) -> StaticValue {
        self.resolve_in(v, None)
    }

    pub(crate) fn resolve_in(&self, v: &Value, locals: Option<&Locals>) -> StaticValue {
        match &v.kind {
            ValueKind::Int(n) => StaticValue::Int(*n),
            ValueKind::Float(f) => StaticValue::Float(*f),
            ValueKind::Bool(b) => StaticValue::Bool(*b),
            ValueKind::Str(s) => StaticValue::Str(s.clone()),
            ValueKind::Text(t) => {
                let mut s = String::new();
                for p in &t.parts {
                    match p {
                        TextPart::Lit(l) => s.push_str(l),
                        TextPart::Var { name, .. } => match self.var(name, locals) {
                            StaticValue::Str(v) => s.push_str(&v),
                            StaticValue::Int(n) => s.push_str(&n.to_string()),
                            StaticValue::Bool(b) => s.push_str(&b.to_string()),
                            _ => return StaticValue::Unknown,
                        },
                    }
                }
                StaticValue::Str(s)
            }
            ValueKind::Var(name) => self.var(name, locals),
            ValueKind::Randvar(_) | ValueKind::Cvar(_) => StaticValue::Random,
            ValueKind::Expr(e) => match self.expr(e, locals) {
                Ok(Some(n)) => StaticValue::Int(n),
                _ => StaticValue::Unknown,
            },
            ValueKind::Table(_) => StaticValue::Unknown,
        }
    }

    fn var(&self, name: &str, locals: Option<&Locals>) -> StaticValue {
        if let Some(v) = locals.and_then(|l| l.get(name)) {
            return v.clone();
        }
        self.get(name).cloned().unwrap_or(StaticValue::Unknown)
    }

    /// Like `resolve_in`, recording arithmetic errors.
    fn eval(&mut self, v: &Value, locals: Option<&Locals>) -> StaticValue {
        if let ValueKind::Expr(e) = &v.kind {
            return match self.expr(e, locals) {
                Ok(Some(n)) => StaticValue::Int(n),
                Ok(None) => StaticValue::Unknown,
                Err(err) => {
                    self.errors.push(err);
                    StaticValue::Unknown
                }
            };
        }
        self.resolve_in(v, locals)
    }

    /// Integer arithmetic; `Ok(None)` when an operand is not a known integer.
    fn expr(&self, e: &Expr, locals: Option<&Locals>) -> Result<Option<i64>, (Span, String)> {
        match e {
            Expr::Operand(v) => Ok(match self.resolve_in(v, locals) {
                StaticValue::Int(n) => Some(n),
                StaticValue::Bool(b) => Some(i64::from(b)),
                _ => None,
            }),
            Expr::Binary { op, span, lhs, rhs } => {
                let (Some(l), Some(r)) = (self.expr(lhs, locals)?, self.expr(rhs, locals)?) else {
                    return Ok(None);
                };
                let v = match op {
                    BinOp::Add => l.checked_add(r),
                    BinOp::Sub => l.checked_sub(r),
                    BinOp::Mul => l.checked_mul(r),
                    BinOp::Div if r == 0 => return Err((*span, "division by zero".into())),
                    BinOp::Div => l.checked_div(r),
                };
                v.map(Some)
                    .ok_or_else(|| (*span, format!("`{l} {} {r}` overflows", op.symbol())))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse_str;

    #[test]
    fn eager_arithmetic_and_last_assignment() {
        let p = parse_str(
            "t.f",
            "set $a = 10\nset $b = $a * 3 + 1\nset $a = 2\nset $s = \"x$a\"\nset $r = randvar(type=gamma)\n",
        )
        .unwrap();
        let env = Env::new(&p);
        assert_eq!(env.get("a"), Some(&StaticValue::Int(2)));
        assert_eq!(env.get("b"), Some(&StaticValue::Int(31)));
        assert_eq!(env.get("s"), Some(&StaticValue::Str("x2".into())));
        assert_eq!(env.get("r"), Some(&StaticValue::Random));
        assert_eq!(env.span_of("a"), Some(Span::new(3, 5)));
        assert!(env.errors.is_empty());
    }

    #[test]
    fn division_by_zero_is_recorded() {
        let p = parse_str("t.f", "set $a = 4 / 0").unwrap();
        let env = Env::new(&p);
        assert_eq!(
            env.errors,
            vec![(Span::new(1, 12), "division by zero".into())]
        );
        assert_eq!(env.get("a"), Some(&StaticValue::Unknown));
    }

    #[test]
    fn sets_after_run_do_not_count() {
        let p = parse_str("t.f", "set $a = 1\nrun 5\nset $a = 2\n").unwrap();
        assert_eq!(Env::new(&p).get("a"), Some(&StaticValue::Int(1)));
    }
}
