//! Checks a parsed file for everything the grammar cannot see: unknown flowops and
//! attributes, references to filesets, flowops and variables that do not exist, values of
//! the wrong type or out of range, and missing required attributes.
//!
//! Only what filebench would execute is checked: commands after the first `run`, `psrun`
//! or `quit` are never reached. Composite flowops are checked once as defined and again at
//! each use with their local variables bound, so that `filesetname=$fs` is checked against
//! the fileset actually passed in.

use std::collections::{HashMap, HashSet};

use iolab_workload::model::FlowopKind;

use crate::ast::*;
use crate::env::{Env, Locals, StaticValue};
use crate::error::{elsewhere, ErrorKind, Warning, WarningKind, WmlError, WmlErrors};
use crate::schema::{self, AttrSpec, Ty};
use iolab_workload::suggest::{closest, did_you_mean, suggestion};

/// Knobs for [`validate_with`].
#[derive(Debug, Clone, Default)]
pub struct ValidateOptions {
    /// Variables the caller will set (e.g. `--set dir=/mnt`), so references to them are not
    /// errors when the file itself does not set them.
    pub predefined: Vec<String>,
}

/// Validates with default options. See [`validate_with`].
pub fn validate(parsed: &Parsed) -> Result<Vec<Warning>, WmlErrors> {
    validate_with(parsed, &ValidateOptions::default())
}

/// Returns all warnings (the parser's and validation's, sorted by location), or every
/// error found.
pub fn validate_with(parsed: &Parsed, opts: &ValidateOptions) -> Result<Vec<Warning>, WmlErrors> {
    let env = Env::new(parsed);
    let mut v = Validator::new(parsed, env, opts);
    v.run();
    let Validator {
        errors,
        mut warnings,
        dormant_unknown,
        ..
    } = v;
    for (at, mut also) in dormant_unknown.into_values() {
        if !also.is_empty() {
            // A composite used twice reports its inner flowops twice.
            also.sort();
            also.dedup();
            also.retain(|s| *s != warnings[at].span);
            warnings[at].message.push_str(&elsewhere(&also));
        }
    }
    if let Some(errors) = WmlErrors::from_vec(errors) {
        return Err(errors);
    }
    warnings.extend(parsed.warnings.iter().cloned());
    warnings.sort_by(|a, b| (a.span, &a.message).cmp(&(b.span, &b.message)));
    warnings.dedup();
    Ok(warnings)
}

/// Composites nest at most this deep (they can only use earlier ones, so this only bounds
/// pathological files).
const MAX_DEPTH: usize = 32;

struct Validator<'a> {
    p: &'a Parsed,
    env: Env,
    /// Variables set before `run` (or predefined).
    known_vars: HashSet<String>,
    /// Variables set only after `run`, for a better hint.
    late_vars: HashMap<String, Span>,
    /// Where each live variable is first set.
    first_set: HashMap<String, Span>,
    /// Variables the caller sets (`--set`, `--dir`).
    predefined: HashSet<String>,
    /// Fileset names (first definition) and whether every fileset name could be resolved.
    filesets: HashMap<String, Span>,
    filesets_complete: bool,
    /// Composite definitions by name, with the index of their command.
    composites: HashMap<&'a str, (usize, &'a CompositeDef)>,
    /// Names of all flowops that exist at run time, for `target=`.
    flowop_names: HashSet<String>,
    flowop_names_complete: bool,
    /// Unknown filesets of threads that never start: the warning's index, and the other
    /// places the name is used.
    dormant_unknown: HashMap<String, (usize, Vec<Span>)>,
    errors: Vec<WmlError>,
    warnings: Vec<Warning>,
}

/// Where flowops are being checked: which composites are usable and the local variables.
#[derive(Clone)]
struct Scope<'s> {
    /// Composites whose definition command index is below this are usable.
    limit: usize,
    locals: Locals,
    /// The composite being checked, to reject self-use.
    inside: Option<&'s str>,
    depth: usize,
    /// In a process or thread with `instances=0`, which never starts.
    dormant: bool,
}

impl<'a> Validator<'a> {
    fn new(p: &'a Parsed, env: Env, opts: &ValidateOptions) -> Self {
        let live = p.live_commands();
        let predefined: HashSet<String> = opts.predefined.iter().cloned().collect();
        let mut known_vars = predefined.clone();
        let mut first_set = HashMap::new();
        for c in live {
            if let CommandKind::Set(s) = &c.kind {
                known_vars.insert(s.name.clone());
                first_set.entry(s.name.clone()).or_insert(s.name_span);
            }
        }
        let mut late_vars = HashMap::new();
        for c in &p.commands[live.len()..] {
            if let CommandKind::Set(s) = &c.kind {
                late_vars.entry(s.name.clone()).or_insert(s.name_span);
            }
        }
        Validator {
            p,
            env,
            known_vars,
            late_vars,
            first_set,
            predefined,
            filesets: HashMap::new(),
            filesets_complete: true,
            composites: HashMap::new(),
            flowop_names: HashSet::new(),
            flowop_names_complete: true,
            dormant_unknown: HashMap::new(),
            errors: Vec::new(),
            warnings: Vec::new(),
        }
    }

    fn error(
        &mut self,
        kind: ErrorKind,
        span: Span,
        token: &str,
        msg: impl Into<String>,
    ) -> &mut WmlError {
        self.errors
            .push(WmlError::new(kind, &self.p.file, span, token, msg));
        self.errors.last_mut().expect("just pushed")
    }

    fn warn(&mut self, kind: WarningKind, span: Span, msg: impl Into<String>) {
        self.warnings
            .push(Warning::new(kind, &self.p.file, span, msg));
    }

    fn resolve(&self, v: &Value, scope: Option<&Scope>) -> StaticValue {
        self.env.resolve_in(v, scope.map(|s| &s.locals))
    }

    fn run(&mut self) {
        let p = self.p;
        let live = p.live_commands();
        if let (Some(end), Some(after)) = (live.last(), p.commands.get(live.len())) {
            self.warn(
                WarningKind::Suspicious,
                after.span,
                format!(
                    "never executed: filebench stops reading the file at the `{}` on line {}",
                    end.kind.keyword(),
                    end.span.line
                ),
            );
        }
        self.collect_names(live);
        for (arith_span, msg) in self.env.errors.clone() {
            self.error(ErrorKind::InvalidValue, arith_span, "/", msg);
        }
        let mut seen_filesets: HashMap<String, Span> = HashMap::new();
        let mut seen_composites: HashSet<&str> = HashSet::new();
        // `set` evaluates its right-hand side at once: only what is set above it counts.
        let mut set_so_far: HashSet<String> = self.predefined.clone();
        for (idx, c) in live.iter().enumerate() {
            let scope = Scope {
                limit: idx,
                locals: Locals::new(),
                inside: None,
                depth: 0,
                dormant: false,
            };
            match &c.kind {
                CommandKind::Set(s) => {
                    self.set(s, &set_so_far);
                    set_so_far.insert(s.name.clone());
                }
                CommandKind::SetNoUseStats => self.warn(
                    WarningKind::Ignored,
                    c.span,
                    "`set mode nousestats` has no effect in iolab",
                ),
                CommandKind::DefineFileset(f) => self.fileset(f, &mut seen_filesets),
                CommandKind::DefineComposite(d) => self.composite_def(d, idx, &mut seen_composites),
                CommandKind::DefineProcess(proc_) => self.process(proc_, &scope),
                // A bare `run` is filebench's 60 s; `run 0` would measure nothing.
                CommandKind::Run(n) => {
                    if let Some(n) = n {
                        self.count(n, "`run`", 1);
                    }
                }
                CommandKind::Psrun { period, seconds } => {
                    if let Some(p) = period {
                        self.count(p, "the `psrun` period", i64::MIN);
                    }
                    if let Some(s) = seconds {
                        self.count(s, "`psrun`", 1);
                    }
                }
                CommandKind::Sleep(n) => self.count(n, "`sleep`", 0),
                CommandKind::Debug(n) => self.count(n, "`debug`", 0),
                CommandKind::Echo(t) | CommandKind::System(t) => self.text_vars(t),
                CommandKind::Eventgen(attrs) => {
                    self.attrs(attrs, schema::EVENTGEN_ATTRS, "`eventgen`", None)
                }
                CommandKind::EnableMulti(attrs) => {
                    self.attrs(attrs, schema::MULTI_ATTRS, "`enable multi`", None);
                    self.warn(
                        WarningKind::Ignored,
                        c.span,
                        "filebench's multi-client synchronisation is not supported; ignored",
                    );
                }
                CommandKind::DoMultiSync(attrs) => {
                    self.attrs(attrs, schema::MULTISYNC_ATTRS, "`domultisync`", None);
                    self.warn(
                        WarningKind::Ignored,
                        c.span,
                        "filebench's multi-client synchronisation is not supported; ignored",
                    );
                }
                CommandKind::SetMode(_)
                | CommandKind::CreateFiles
                | CommandKind::EnableLathist
                | CommandKind::List(_)
                | CommandKind::Version
                | CommandKind::Quit
                | CommandKind::Ignored(_) => {}
            }
        }
    }

    /// First pass: names of filesets, composites and flowops, so that references may point
    /// forward (filebench resolves most of them lazily).
    fn collect_names(&mut self, live: &'a [Command]) {
        for (idx, c) in live.iter().enumerate() {
            match &c.kind {
                CommandKind::DefineFileset(f) => {
                    match find_attr(&f.attrs, "name").and_then(|a| a.value.as_ref()) {
                        Some(v) => match self.resolve(v, None) {
                            StaticValue::Str(s) => {
                                self.filesets.entry(s).or_insert(v.span);
                            }
                            _ => self.filesets_complete = false,
                        },
                        None => self.filesets_complete = false,
                    }
                }
                CommandKind::DefineComposite(d) => {
                    if let Some(name) = self.literal_name(&d.attrs) {
                        let name: &'a str = name;
                        self.composites.entry(name).or_insert((idx, d));
                    }
                }
                _ => {}
            }
        }
        for c in live {
            if let CommandKind::DefineProcess(proc_) = &c.kind {
                for t in &proc_.threads {
                    for f in &t.flowops {
                        self.collect_flowop_names(f, "", 0);
                    }
                }
            }
        }
        // Inner flowops of composites exist under their plain names too (filebench keeps the
        // definitions in its flowop list).
        let defs: Vec<&CompositeDef> = self.composites.values().map(|(_, d)| *d).collect();
        for d in defs {
            for f in &d.flowops {
                self.collect_flowop_names(f, "", MAX_DEPTH);
            }
        }
    }

    /// A bare-word or quoted `name=`; composites must be named literally.
    fn literal_name(&self, attrs: &'a [Attr]) -> Option<&'a str> {
        match &find_attr(attrs, "name")?.value.as_ref()?.kind {
            ValueKind::Str(s) => Some(s),
            ValueKind::Text(t) => match t.parts.as_slice() {
                [TextPart::Lit(s)] => Some(s),
                _ => None,
            },
            _ => None,
        }
    }

    /// Adds `prefix + name` of `f` and, for a composite, `name.inner` for its flowops.
    fn collect_flowop_names(&mut self, f: &FlowopUse, prefix: &str, depth: usize) {
        let name = match find_attr(&f.attrs, "name").and_then(|a| a.value.as_ref()) {
            Some(v) => match self.resolve(v, None) {
                StaticValue::Str(s) => s,
                _ => {
                    self.flowop_names_complete = false;
                    return;
                }
            },
            None => return,
        };
        let full = format!("{prefix}{name}");
        self.flowop_names.insert(full.clone());
        if depth < MAX_DEPTH {
            if let Some((_, d)) = self.composites.get(f.op.as_str()).copied() {
                for inner in &d.flowops {
                    self.collect_flowop_names(inner, &format!("{full}."), depth + 1);
                }
            }
        }
    }

    /// `set_so_far`: the variables set above this command (and the predefined ones).
    fn set(&mut self, s: &SetVar, set_so_far: &HashSet<String>) {
        match &s.value.kind {
            ValueKind::Randvar(r) => self.randvar(r, &s.value),
            ValueKind::Cvar(c) => self.cvar(c, &s.value),
            ValueKind::Var(_) | ValueKind::Expr(_) => {
                if self.value_refs(&s.value, None) {
                    self.set_refs_before(s, &s.value, set_so_far);
                }
            }
            _ => {
                self.value_refs(&s.value, None);
            }
        }
    }

    /// A `set` copies and computes at once (as filebench 1.4's arithmetic does): a variable
    /// on its right must already be set, not set later or by this very `set`.
    fn set_refs_before(&mut self, s: &SetVar, v: &Value, set_so_far: &HashSet<String>) {
        let mut refs = Vec::new();
        collect_var_refs(v, &mut refs);
        for (name, span) in refs {
            if set_so_far.contains(name) {
                continue;
            }
            let hint = if name == s.name {
                format!(
                    "`${name}` has no value yet: set it to a value first, e.g. `set ${name} = …`"
                )
            } else {
                let first = self.first_set.get(name).copied().unwrap_or_default();
                format!(
                    "`${name}` is first set at {first}: the right-hand side of `set` is \
                     evaluated at once, so move that `set` above this one"
                )
            };
            let msg = format!("unknown variable `${name}`");
            self.error(ErrorKind::UnknownVariable, span, &format!("${name}"), msg)
                .hint = Some(hint);
        }
    }

    /// Reports references to undefined variables inside `v`. Returns false if there were any.
    fn value_refs(&mut self, v: &Value, scope: Option<&Scope>) -> bool {
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

    fn expr_refs(&mut self, e: &Expr, scope: Option<&Scope>) -> bool {
        match e {
            Expr::Operand(v) => self.value_refs(v, scope),
            Expr::Binary { lhs, rhs, .. } => {
                let l = self.expr_refs(lhs, scope);
                self.expr_refs(rhs, scope) && l
            }
        }
    }

    fn var_ref(&mut self, name: &str, span: Span, scope: Option<&Scope>) -> bool {
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

    /// Variables in echo/system strings: filebench prints unknown ones literally, so warn.
    fn text_vars(&mut self, t: &Text) {
        for p in &t.parts {
            if let TextPart::Var { name, span } = p {
                if !self.known_vars.contains(name) {
                    self.warn(
                        WarningKind::Suspicious,
                        *span,
                        format!("`${name}` is not set; it is printed as is"),
                    );
                }
            }
        }
    }

    /// A whole-number command argument (`run`, `sleep`, `debug`).
    fn count(&mut self, v: &Value, what: &str, min: i64) {
        if !self.value_refs(v, None) {
            return;
        }
        match self.resolve(v, None) {
            StaticValue::Int(n) if n < min => {
                // Only the run time has a positive minimum.
                let (need, hint) = if min > 0 {
                    (
                        format!("a run time of at least {min} s"),
                        Some("a run of 0 s measures nothing; a bare `run` runs 60 s".to_string()),
                    )
                } else {
                    ("a number that is not negative".to_string(), None)
                };
                self.error(
                    ErrorKind::OutOfRange,
                    v.span,
                    &n.to_string(),
                    format!("{what} needs {need}, found {n}"),
                )
                .hint = hint;
            }
            StaticValue::Int(_) | StaticValue::Unknown => {}
            other => {
                self.error(
                    ErrorKind::InvalidValue,
                    v.span,
                    &other.describe(),
                    format!("{what} needs a whole number, found {}", describe(v, &other)),
                );
            }
        }
    }

    /// Checks an attribute list against `specs`: names known, values typed and in range.
    fn attrs(&mut self, attrs: &[Attr], specs: &[AttrSpec], ctx: &str, scope: Option<&Scope>) {
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

    fn out_of_range(&mut self, v: &Value, name: &str, n: i64, min: Option<i64>, max: Option<i64>) {
        let msg = match (min, max) {
            (Some(0), None) => format!("`{name}` must not be negative, found {n}"),
            (Some(lo), Some(hi)) => format!("`{name}` must be between {lo} and {hi}, found {n}"),
            (Some(lo), None) => format!("`{name}` must be at least {lo}, found {n}"),
            (None, Some(hi)) => format!("`{name}` must be at most {hi}, found {n}"),
            (None, None) => return,
        };
        self.error(ErrorKind::OutOfRange, v.span, &token_of(v), msg);
    }

    fn required(&mut self, attrs: &[Attr], name: &str, span: Span, token: &str, ctx: &str) -> bool {
        if find_attr(attrs, name).is_some() {
            return true;
        }
        let msg = format!("{ctx} needs `{name}`");
        self.error(ErrorKind::MissingAttribute, span, token, msg)
            .hint = Some(format!("add `{name}=…`"));
        false
    }

    fn fileset(&mut self, f: &FilesetDef, seen: &mut HashMap<String, Span>) {
        let (specs, ctx) = match f.kind {
            FilesetKind::Fileset => (schema::FILESET_ATTRS, "`define fileset`"),
            FilesetKind::File => (schema::FILE_ATTRS, "`define file`"),
        };
        self.attrs(&f.attrs, specs, ctx, None);
        self.required(&f.attrs, "name", f.span, "define", ctx);
        self.required(&f.attrs, "path", f.span, "define", ctx);
        if let Some(v) = find_attr(&f.attrs, "name").and_then(|a| a.value.as_ref()) {
            if let StaticValue::Str(name) = self.resolve(v, None) {
                if let Some(prev) = seen.get(&name) {
                    let msg = format!("fileset `{name}` is already defined at {prev}");
                    self.error(ErrorKind::Duplicate, v.span, &name, msg).hint =
                        Some("give each file and fileset its own name".into());
                } else {
                    seen.insert(name, v.span);
                }
            }
        }
        if f.kind == FilesetKind::Fileset {
            match find_attr(&f.attrs, "dirwidth") {
                None => self.warn(
                    WarningKind::Suspicious,
                    f.span,
                    "fileset without `dirwidth`: filebench puts every file in its own directory",
                ),
                Some(Attr { value: Some(v), .. })
                    if self.resolve(v, None) == StaticValue::Int(0) =>
                {
                    self.warn(
                        WarningKind::Suspicious,
                        v.span,
                        "`dirwidth=0`: filebench puts every file in its own directory",
                    )
                }
                _ => {}
            }
        }
    }

    fn randvar(&mut self, r: &RandvarDef, at: &Value) {
        self.attrs(&r.attrs, schema::RANDVAR_ATTRS, "`randvar`", None);
        let ty = find_attr(&r.attrs, "type")
            .and_then(|a| a.value.as_ref())
            .map(|v| self.resolve(v, None));
        let table_attr = find_attr(&r.attrs, "randtable");
        match (&ty, table_attr) {
            (Some(StaticValue::Str(t)), None) if t == "tabular" => {
                self.error(
                    ErrorKind::MissingAttribute,
                    at.span,
                    "randvar",
                    "a tabular randvar needs `randtable = {{percent, low, high}, …}`",
                );
            }
            (Some(StaticValue::Str(t)), Some(a)) if t != "tabular" => {
                let msg = format!("`randtable` needs `type=tabular`, not `{t}`");
                self.error(ErrorKind::InvalidValue, a.span, "randtable", msg);
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
                match self.resolve(v, None) {
                    StaticValue::Int(n) if n < 0 => {
                        let msg = format!("randtable entries must not be negative, found {n}");
                        self.error(ErrorKind::OutOfRange, v.span, &token_of(v), msg);
                    }
                    StaticValue::Int(n) => nums[i] = Some(n),
                    StaticValue::Unknown => {}
                    other => {
                        let msg = format!(
                            "expected {what} in the randtable row, found {}",
                            describe(v, &other)
                        );
                        self.error(ErrorKind::InvalidValue, v.span, &token_of(v), msg);
                    }
                }
            }
            sum = sum.zip(nums[0]).map(|(s, p)| s + p);
            if let (Some(lo), Some(hi)) = (nums[1], nums[2]) {
                if lo > hi {
                    let msg =
                        format!("randtable row has its low bound {lo} above its high bound {hi}");
                    self.error(ErrorKind::InvalidValue, row.span, "{", msg);
                }
            }
        }
        if let (Some(sum), Some(a)) = (sum, table_attr) {
            if sum != 100 {
                let span = a.value.as_ref().map_or(a.span, |v| v.span);
                let msg = format!("randtable percentages sum to {sum}, not 100");
                self.error(ErrorKind::InvalidValue, span, "{", msg);
            }
        }
    }

    fn cvar(&mut self, c: &CvarDef, at: &Value) {
        self.attrs(&c.attrs, schema::CVAR_ATTRS, "`cvar`", None);
        let Some(tv) = find_attr(&c.attrs, "type").and_then(|a| a.value.as_ref()) else {
            self.error(
                ErrorKind::MissingAttribute,
                at.span,
                "cvar",
                "`cvar(…)` needs `type=cvar-…`",
            )
            .hint = Some("e.g. `cvar(type=cvar-gamma, parameters=mean:16384;gamma:1.5)`".into());
            return;
        };
        let StaticValue::Str(ty) = self.resolve(tv, None) else {
            return;
        };
        let Some((_, params)) = schema::CVAR_TYPES.iter().find(|(n, _)| *n == ty) else {
            let hint = did_you_mean(&ty, schema::CVAR_TYPES.iter().map(|(n, _)| *n))
                .unwrap_or_else(|| {
                    let all: Vec<&str> = schema::CVAR_TYPES.iter().map(|(n, _)| *n).collect();
                    format!("cvar types are {}", all.join(", "))
                });
            self.error(
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
        let StaticValue::Str(text) = self.resolve(pv, None) else {
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
                self.error(
                    ErrorKind::InvalidValue,
                    offset_span(item_off),
                    key,
                    format!("`{ty}` has no parameter `{key}`"),
                )
                .hint = Some(hint);
            } else if val.trim().parse::<f64>().is_err() {
                self.error(
                    ErrorKind::InvalidValue,
                    offset_span(item_off),
                    item,
                    format!("parameter `{key}` needs a number, found `{val}`"),
                )
                .hint = Some("parameters are written `key:number;key:number`".into());
            }
        }
    }

    fn composite_def(&mut self, d: &'a CompositeDef, idx: usize, seen: &mut HashSet<&'a str>) {
        self.attrs(
            &d.attrs,
            schema::COMPOSITE_DEF_ATTRS,
            "`define flowop`",
            None,
        );
        let name = self.literal_name(&d.attrs);
        match (find_attr(&d.attrs, "name"), name) {
            (None, _) => {
                self.required(&d.attrs, "name", d.span, "define", "`define flowop`");
            }
            (Some(a), None) => {
                let span = a.value.as_ref().map_or(a.span, |v| v.span);
                self.error(
                    ErrorKind::InvalidValue,
                    span,
                    &a.written,
                    "a composite flowop needs a literal name",
                );
            }
            (Some(a), Some(n)) => {
                let span = a.value.as_ref().map_or(a.span, |v| v.span);
                if FlowopKind::parse(n).is_some() {
                    let msg = format!("`{n}` is a built-in flowop");
                    self.error(ErrorKind::Duplicate, span, n, msg).hint =
                        Some("give the composite flowop another name".into());
                } else if !seen.insert(n) {
                    let msg = format!("composite flowop `{n}` is already defined");
                    self.error(ErrorKind::Duplicate, span, n, msg);
                }
            }
        }
        // As defined, every local is unknown: a use may override its default. Uses are
        // checked again with the values bound.
        let mut locals = Locals::new();
        for l in &d.locals {
            if let Some(v) = &l.value {
                self.value_refs(v, None);
            }
            if locals
                .insert(l.name.clone(), StaticValue::Unknown)
                .is_some()
            {
                let msg = format!("local variable `${}` is declared twice", l.name);
                self.error(ErrorKind::Duplicate, l.span, &format!("${}", l.name), msg);
            }
        }
        if d.flowops.is_empty() {
            self.error(
                ErrorKind::MissingAttribute,
                d.span,
                "define",
                "composite flowop has no flowops",
            );
        }
        let scope = Scope {
            limit: idx,
            locals,
            inside: name,
            depth: 0,
            dormant: false,
        };
        for f in &d.flowops {
            self.flowop(f, &scope);
        }
    }

    fn process(&mut self, proc_: &ProcessDef, scope: &Scope) {
        self.attrs(
            &proc_.attrs,
            schema::PROCESS_ATTRS,
            "`define process`",
            None,
        );
        self.required(
            &proc_.attrs,
            "name",
            proc_.span,
            "define",
            "`define process`",
        );
        let process_dormant = self.zero_instances(&proc_.attrs, "process");
        if proc_.threads.is_empty() {
            self.error(
                ErrorKind::MissingAttribute,
                proc_.span,
                "define",
                "process has no threads",
            )
            .hint = Some("add `thread name=… { flowop … }` inside the braces".into());
        }
        for t in &proc_.threads {
            self.attrs(&t.attrs, schema::THREAD_ATTRS, "`thread`", None);
            self.required(&t.attrs, "name", t.span, "thread", "`thread`");
            let dormant = self.zero_instances(&t.attrs, "thread") || process_dormant;
            if t.flowops.is_empty() {
                self.error(
                    ErrorKind::MissingAttribute,
                    t.span,
                    "thread",
                    "thread has no flowops",
                )
                .hint = Some("add `flowop …` lines inside the braces".into());
            }
            let scope = Scope {
                dormant,
                ..scope.clone()
            };
            for f in &t.flowops {
                self.flowop(f, &scope);
            }
        }
    }

    /// Warns about `instances=0`; returns whether that is the case.
    fn zero_instances(&mut self, attrs: &[Attr], what: &str) -> bool {
        if let Some(v) = find_attr(attrs, "instances").and_then(|a| a.value.as_ref()) {
            if self.resolve(v, None) == StaticValue::Int(0) {
                self.warn(
                    WarningKind::Suspicious,
                    v.span,
                    format!("`instances=0`: this {what} never runs"),
                );
                return true;
            }
        }
        false
    }

    fn flowop(&mut self, f: &FlowopUse, scope: &Scope) {
        let op = f.op.as_str();
        if let Some(kind) = FlowopKind::parse(op) {
            self.builtin_flowop(f, &kind, scope);
            return;
        }
        match self.composites.get(op).copied() {
            Some((idx, d)) if idx < scope.limit && scope.inside != Some(op) => {
                self.composite_use(f, d, scope)
            }
            found => {
                let hint = match found {
                    Some(_) if scope.inside == Some(op) => {
                        Some(format!("composite flowop `{op}` cannot use itself"))
                    }
                    Some((_, d)) => Some(format!(
                        "composite flowop `{op}` is defined at {}; define it before its use",
                        d.span
                    )),
                    None => {
                        let mut usable: Vec<&str> = self
                            .composites
                            .iter()
                            .filter(|(_, (i, _))| *i < scope.limit)
                            .map(|(n, _)| *n)
                            .collect();
                        usable.sort_unstable();
                        let builtin = FlowopKind::names().map(|n| -> &str { n });
                        did_you_mean(op, builtin.chain(usable.iter().copied()))
                            .or_else(|| Some(unknown_flowop_hint(op, &usable)))
                    }
                };
                let msg = format!("unknown flowop `{op}`");
                self.error(ErrorKind::UnknownFlowop, f.op_span, op, msg)
                    .hint = hint;
            }
        }
    }

    fn builtin_flowop(&mut self, f: &FlowopUse, kind: &FlowopKind, scope: &Scope) {
        let op = f.op.as_str();
        let ctx = format!("flowop `{op}`");
        if let Some(l) = f.locals.first() {
            let msg = format!("`${}=` arguments only apply to composite flowops", l.name);
            self.error(ErrorKind::Syntax, l.span, &format!("${}", l.name), msg)
                .hint = Some(format!("`{op}` is a built-in flowop"));
        }
        self.attrs(&f.attrs, &schema::flowop_attrs(kind), &ctx, Some(scope));
        self.required(&f.attrs, "name", f.op_span, op, &ctx);
        if schema::needs_fileset(kind) {
            self.required(&f.attrs, "filesetname", f.op_span, op, &ctx);
        }
        if schema::needs_target(kind) {
            self.required(&f.attrs, "target", f.op_span, op, &ctx);
        }
        if schema::needs_value(kind) && find_attr(&f.attrs, "value").is_none() {
            self.warn(
                WarningKind::Suspicious,
                f.op_span,
                format!("`{op}` without `value` finishes the thread at once"),
            );
        }
        if let Some(v) = find_attr(&f.attrs, "filesetname").and_then(|a| a.value.as_ref()) {
            if let StaticValue::Str(name) = self.resolve(v, Some(scope)) {
                if self.filesets_complete && !self.filesets.contains_key(&name) && scope.dormant {
                    // Once per name: every flowop of a dormant thread names the same set.
                    if let Some((_, also)) = self.dormant_unknown.get_mut(&name) {
                        also.push(v.span);
                    } else {
                        self.dormant_unknown
                            .insert(name.clone(), (self.warnings.len(), Vec::new()));
                        self.warn(
                            WarningKind::Suspicious,
                            v.span,
                            format!(
                                "unknown fileset `{name}`: no error because this thread never \
                                 starts (`instances=0`), and filebench looks filesets up when \
                                 a thread starts"
                            ),
                        );
                    }
                } else if self.filesets_complete && !self.filesets.contains_key(&name) {
                    let hint = did_you_mean(&name, self.filesets.keys().map(String::as_str))
                        .or_else(|| {
                            Some(format!(
                                "define it with `define fileset name={name}, path=…` or `define file`"
                            ))
                        });
                    let msg = format!("unknown fileset `{name}`");
                    self.error(ErrorKind::UnknownFileset, v.span, &name, msg)
                        .hint = hint;
                }
            }
        }
        if let Some(v) = find_attr(&f.attrs, "target").and_then(|a| a.value.as_ref()) {
            if let StaticValue::Str(name) = self.resolve(v, Some(scope)) {
                if self.flowop_names_complete && !self.flowop_names.contains(&name) {
                    let hint = did_you_mean(&name, self.flowop_names.iter().map(String::as_str))
                        .or_else(|| Some("`target=` names another flowop by its `name`".into()));
                    let msg = format!("unknown flowop target `{name}`");
                    self.error(ErrorKind::UnknownTarget, v.span, &name, msg)
                        .hint = hint;
                }
            }
        }
    }

    fn composite_use(&mut self, f: &FlowopUse, d: &'a CompositeDef, scope: &Scope) {
        let op = f.op.as_str();
        let ctx = format!("composite flowop `{op}`");
        self.attrs(&f.attrs, &schema::composite_use_attrs(), &ctx, Some(scope));
        self.required(&f.attrs, "name", f.op_span, op, &ctx);
        let mut bound = Locals::new();
        for l in &d.locals {
            let v = l
                .value
                .as_ref()
                .map_or(StaticValue::Unknown, |v| self.resolve(v, None));
            bound.insert(l.name.clone(), v);
        }
        for arg in &f.locals {
            if !d.locals.iter().any(|l| l.name == arg.name) {
                let declared: Vec<String> =
                    d.locals.iter().map(|l| format!("${}", l.name)).collect();
                let hint = closest(&arg.name, d.locals.iter().map(|l| l.name.as_str()))
                    .map(|c| suggestion(&format!("${c}")))
                    .unwrap_or_else(|| {
                        if declared.is_empty() {
                            format!("`{op}` declares no local variables")
                        } else {
                            format!("`{op}` declares {}", declared.join(", "))
                        }
                    });
                let msg = format!(
                    "composite flowop `{op}` has no local variable `${}`",
                    arg.name
                );
                self.error(
                    ErrorKind::UnknownVariable,
                    arg.span,
                    &format!("${}", arg.name),
                    msg,
                )
                .hint = Some(hint);
                continue;
            }
            let v = match &arg.value {
                Some(v) => {
                    if !self.value_refs(v, Some(scope)) {
                        continue;
                    }
                    self.resolve(v, Some(scope))
                }
                None => StaticValue::Unknown,
            };
            bound.insert(arg.name.clone(), v);
        }
        for l in &d.locals {
            if l.value.is_none() && !f.locals.iter().any(|a| a.name == l.name) {
                let msg = format!(
                    "composite flowop `{op}` needs `${}`: it has no default",
                    l.name
                );
                self.error(ErrorKind::MissingAttribute, f.op_span, op, msg)
                    .hint = Some(format!("add `${}=…` to this flowop", l.name));
            }
        }
        if scope.depth >= MAX_DEPTH {
            return;
        }
        let (limit, _) = self.composites[op];
        // filebench resolves a composite's filesets where it is used, started or not.
        let inner = Scope {
            limit,
            locals: bound,
            inside: Some(op),
            depth: scope.depth + 1,
            dormant: false,
        };
        let first_new = self.errors.len();
        for g in &d.flowops {
            self.flowop(g, &inner);
        }
        // Errors inside the composite that only this use causes: say which use.
        let note = format!("in composite flowop `{op}` as used at {}", f.op_span);
        for e in &mut self.errors[first_new..] {
            e.hint = Some(match e.hint.take() {
                Some(h) if !h.contains(" as used at ") => format!("{h} ({note})"),
                Some(h) => h,
                None => note.clone(),
            });
        }
    }
}

/// The hint for a flowop no spelling fix explains (`deletefilesync`): the built-in flowop its
/// name contains, else the flowops there are.
fn unknown_flowop_hint(op: &str, composites: &[&str]) -> String {
    let within = FlowopKind::names()
        .filter(|b| op.contains(b))
        .max_by_key(|b| b.len());
    match within {
        Some(b) => format!("filebench has no flowop `{op}`; did you mean `{b}`?"),
        None => {
            let mut hint = format!(
                "the flowops are {}",
                iolab_workload::suggest::list(FlowopKind::names())
            );
            if !composites.is_empty() {
                hint.push_str(&format!(
                    ", and the composite flowops defined above: {}",
                    iolab_workload::suggest::list(composites.iter().copied())
                ));
            }
            hint
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

fn token_of(v: &Value) -> String {
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
fn describe(v: &Value, r: &StaticValue) -> String {
    match &v.kind {
        ValueKind::Var(n) => format!("`${n}` (= {})", r.describe()),
        _ => format!("`{}`", token_of(v)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse_str;

    const FILE: &str = "define file name=f1,path=/tmp,size=1m\n";

    fn check(src: &str) -> Result<Vec<Warning>, WmlErrors> {
        validate(&parse_str("t.f", src).unwrap())
    }

    fn warnings(src: &str) -> Vec<String> {
        match check(src) {
            Ok(w) => w.into_iter().map(|w| w.message).collect(),
            Err(e) => panic!("{e}"),
        }
    }

    fn errors(src: &str) -> Vec<WmlError> {
        check(src).expect_err("expected errors").into_vec()
    }

    fn process(body: &str) -> String {
        format!("{FILE}define process name=p {{ thread name=t {{ {body} }} }}\n")
    }

    #[test]
    fn all_errors_are_reported_in_order() {
        let e = errors(&process(
            "flowop read name=r,filesetname=nope,fd=300\n flowop bogus name=b",
        ));
        let msgs: Vec<&str> = e.iter().map(|e| e.message.as_str()).collect();
        assert_eq!(msgs.len(), 3, "{msgs:?}");
        assert!(msgs[0].contains("unknown fileset `nope`"));
        assert!(msgs[1].contains("`fd` must be between 0 and 127"));
        assert!(msgs[2].contains("unknown flowop `bogus`"));
    }

    #[test]
    fn ignored_and_suspicious_constructs_warn() {
        let w = warnings(
            "set mode nousestats\nenable multi master=a, client=b\n\
             define fileset name=a,path=/tmp,entries=1,cached=true\n\
             run 5\necho \"done\"\n",
        );
        assert_eq!(w.len(), 5, "{w:?}");
        assert!(w[0].contains("nousestats"));
        assert!(w[1].contains("multi-client"));
        assert!(w[2].contains("without `dirwidth`"));
        assert!(w[3].contains("`cached`"));
        assert!(w[4].starts_with("never executed"));
    }

    #[test]
    fn predefined_variables_are_known() {
        let p = parse_str("t.f", "define fileset name=a,path=$dir,dirwidth=1").unwrap();
        assert!(validate(&p).is_err());
        let opts = ValidateOptions {
            predefined: vec!["dir".into()],
        };
        assert!(validate_with(&p, &opts).is_ok());
    }

    #[test]
    fn set_reads_only_what_is_set_above_it() {
        let e = errors("set $a = $a\n");
        assert_eq!(e.len(), 1, "{e:?}");
        assert_eq!(e[0].kind, ErrorKind::UnknownVariable);
        assert_eq!(e[0].message, "unknown variable `$a`");
        assert_eq!(e[0].span, Span::new(1, 10));
        assert!(e[0].hint.as_deref().unwrap().contains("has no value yet"));
        let e = errors("set $b = $a * 2\nset $a = 4\n");
        assert_eq!(e[0].span, Span::new(1, 10));
        assert!(
            e[0].hint.as_deref().unwrap().contains("first set at 2:5"),
            "{:?}",
            e[0].hint
        );
        // In order, or set by the caller: fine.
        warnings("set $a = 4\nset $b = $a * 2\nset $a = $a + 1\n");
        let p = parse_str("t.f", "set $a = $a + 1\n").unwrap();
        let opts = ValidateOptions {
            predefined: vec!["a".into()],
        };
        assert!(validate_with(&p, &opts).is_ok());
    }

    #[test]
    fn run_needs_a_positive_time() {
        let e = errors("run 0\n");
        assert_eq!(
            e[0].message,
            "`run` needs a run time of at least 1 s, found 0"
        );
        assert_eq!(e[0].span, Span::new(1, 5));
        let e = errors("psrun 10 0\n");
        assert_eq!(
            e[0].message,
            "`psrun` needs a run time of at least 1 s, found 0"
        );
        warnings("run\n");
        warnings("psrun -10\n");
    }

    #[test]
    fn forward_references_are_fine() {
        // filebench resolves lazily: the fileset and the variable may come later.
        warnings(
            "define process name=p { thread name=t { flowop read name=r,filesetname=late,iosize=$io } }\n\
             define file name=late,path=/tmp\nset $io = 4k\nrun 1\n"
        );
    }

    #[test]
    fn composite_inner_flowops_are_targets() {
        warnings(&format!(
            "{FILE}define flowop name=c {{ flowop block name=wait }}\n\
             define process name=p {{\n\
               thread name=a {{ flowop c name=outer }}\n\
               thread name=b {{ flowop wakeup name=w,target=outer.wait }}\n}}\n"
        ));
    }

    #[test]
    fn composite_must_be_defined_before_use() {
        let e = errors(&format!(
            "{}define flowop name=later {{ flowop hog name=h,value=1 }}\n",
            process("flowop later name=x")
        ));
        assert_eq!(e.len(), 1);
        assert!(e[0]
            .hint
            .as_deref()
            .unwrap()
            .contains("define it before its use"));
    }

    #[test]
    fn composite_use_drops_io_attributes_with_a_warning() {
        let w = warnings(&format!(
            "define flowop name=c {{ flowop hog name=h,value=1 }}\n{}",
            process("flowop c name=x,iosize=4k")
        ));
        assert!(w.iter().any(|m| m.contains("`iosize` is ignored")), "{w:?}");
    }

    #[test]
    fn composite_arguments_are_checked_where_used() {
        // `fd=$slot` is fine as defined; the value 300 passed in is out of range.
        let e = errors(&format!(
            "define flowop name=c, $slot {{ flowop closefile name=cl,fd=$slot }}\n{}",
            process("flowop c name=x, $slot=300")
        ));
        assert_eq!(e.len(), 1);
        assert!(e[0].message.contains("found 300"));
        assert_eq!(e[0].span, Span::new(1, 59));
        assert_eq!(
            e[0].hint.as_deref(),
            Some("in composite flowop `c` as used at 3:48")
        );
    }

    #[test]
    fn variables_resolve_for_type_checks() {
        let e = errors(&format!(
            "set $mode = fast\n{}",
            process("flowop read name=r,filesetname=f1,random=$mode")
        ));
        assert!(e[0].message.contains("`$mode` (= \"fast\")"), "{}", e[0]);
        warnings(&format!(
            "set $directio = 0\nset $fd = 3\n{}",
            process("flowop read name=r,filesetname=f1,directio=$directio,fd=$fd")
        ));
    }

    #[test]
    fn print_takes_a_string_value() {
        warnings(&process("flowop print name=p,value=hello"));
        let e = errors(&process("flowop hog name=h,value=hello"));
        assert!(e[0].message.contains("expected a number for `value`"));
    }

    #[test]
    fn every_builtin_flowop_is_known_by_its_one_name() {
        for name in FlowopKind::names() {
            let src = process(&format!(
                "flowop {name} name=x,filesetname=f1,target=x,value=1"
            ));
            let e = check(&src).err().map(|e| e.to_string()).unwrap_or_default();
            assert!(!e.contains("unknown flowop"), "{name}: {e}");
            let def = format!("define flowop name={name} {{ flowop hog name=h,value=1 }}\n");
            assert!(
                errors(&def)[0].message.contains("is a built-in flowop"),
                "{name}"
            );
        }
    }

    /// iolab issue 25: `deletefilesync` (no filebench flowop has that name) got no hint.
    #[test]
    fn an_unknown_flowop_always_gets_a_hint() {
        let e = errors(&process("flowop deletefilesync name=d,filesetname=f1"));
        assert_eq!(e[0].message, "unknown flowop `deletefilesync`");
        assert_eq!(
            e[0].hint.as_deref(),
            Some("filebench has no flowop `deletefilesync`; did you mean `deletefile`?")
        );
        let e = errors(&format!(
            "define flowop name=mine {{ flowop hog name=h,value=1 }}\n{}",
            process("flowop frobnicate name=x")
        ));
        let hint = e[0].hint.as_deref().unwrap();
        assert!(hint.starts_with("the flowops are `"), "{hint}");
        assert!(hint.contains("`readwholefile`"), "{hint}");
        assert!(
            hint.ends_with("the composite flowops defined above: `mine`"),
            "{hint}"
        );
        // A misspelling keeps its suggestion.
        let e = errors(&process("flowop readwholfile name=r,filesetname=f1"));
        assert_eq!(e[0].hint.as_deref(), Some("did you mean `readwholefile`?"));
    }

    /// iolab issue 25: the warning came once per flowop of the thread.
    #[test]
    fn an_unknown_fileset_of_a_thread_that_never_starts_is_warned_once() {
        let w = warnings(&format!(
            "{FILE}define process name=p,instances=0 {{ thread name=t {{\n\
               flowop read name=r,filesetname=nope,iosize=1k\n\
               flowop write name=w,filesetname=nope,iosize=1k\n\
               flowop statfile name=s,filesetname=nope\n\
               flowop statfile name=s2,filesetname=other\n}} }}\n"
        ));
        let nope: Vec<&String> = w.iter().filter(|m| m.contains("`nope`")).collect();
        assert_eq!(nope.len(), 1, "{w:?}");
        assert!(
            nope[0].ends_with("(and 2 more at 4:33, 5:36)"),
            "{}",
            nope[0]
        );
        assert_eq!(
            w.iter().filter(|m| m.contains("`other`")).count(),
            1,
            "{w:?}"
        );
    }

    #[test]
    fn repeated_attribute_warns() {
        let w = warnings(&process(
            "flowop read name=r,filesetname=f1,iosize=1k,iosize=2k",
        ));
        assert!(w[0].contains("given twice"), "{w:?}");
    }

    #[test]
    fn finish_without_value_warns() {
        let w = warnings(&process("flowop finishoncount name=f"));
        assert!(w[0].contains("finishes the thread at once"), "{w:?}");
    }

    #[test]
    fn file_takes_fileset_attributes_with_a_warning() {
        let w = warnings("define file name=a,path=/tmp,entries=5\n");
        assert!(w[0].contains("no effect on `define file`"), "{w:?}");
    }

    #[test]
    fn randvar_choices_and_sources() {
        warnings("set $r = randvar(type=uniform, min=1, mean=5, randsrc=urandom, seed=3)\n");
        let e = errors("set $r = randvar(type=gamma, randsrc=dev)\n");
        assert!(e[0].message.contains("unknown `randsrc` `dev`"), "{}", e[0]);
        let e = errors("set $r = randvar(type=uniform, randtable={{100,1,2}})\n");
        assert!(e[0].message.contains("needs `type=tabular`"));
    }

    #[test]
    fn cvar_parameters_must_be_numbers() {
        let e = errors("set $c = cvar(type=cvar-normal, parameters=mean:x;sigma:1)\n");
        assert_eq!(e.len(), 1);
        assert!(e[0].message.contains("needs a number"));
        assert_eq!(e[0].span, Span::new(1, 44));
    }

    #[test]
    fn unknown_echo_variable_is_only_a_warning() {
        let w = warnings("echo \"dir is $dir\"\n");
        assert!(w[0].contains("`$dir` is not set"));
    }

    #[test]
    fn display_of_all_errors() {
        let e = check("define fileset name=a\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.f:1:1: error: `define fileset` needs `path`\n  hint: add `path=…`"
        );
    }
}
