//! Lowering: a validated syntax tree becomes an [`iolab_workload::model::Workload`].
//!
//! Every value is resolved here, once: variables (with `--set` overrides), size suffixes,
//! composite flowops with their local variables bound at each use (filebench resolves those
//! at run time and gets them wrong), and random variables turned into [`Rv`]s that the
//! engine samples from the run seed. Names become indices. The engine never sees WML.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use iolab_workload::model::{
    FilesetSpec, FlowopKind, FlowopRef, FlowopSpec, MasterAction, ProcessSpec, QuitMode, RunSpec,
    ThreadSpec, Workload,
};
use iolab_workload::rv::{Cvar, Rv, TableRow};

use crate::ast::{
    find_attr, Attr, CommandKind, CompositeDef, CvarDef, FilesetKind, FlowopUse, Parsed,
    QuitMode as AstQuit, RandvarDef, Span, Text, TextPart, Value, ValueKind,
};
use crate::env::{Env, StaticValue};
use crate::error::{ErrorKind, WmlError, WmlErrors};

/// filebench's default run time for a bare `run`.
const DEFAULT_RUN: Duration = Duration::from_secs(60);

/// What the command line adds to a file.
#[derive(Debug, Clone, Default)]
pub struct LowerOptions {
    /// `--set var=value`, in order; `--dir D` arrives here as `dir=D`.
    pub overrides: Vec<(String, String)>,
}

/// A variable's value during lowering: what `Env` knows, or a random variable.
#[derive(Debug, Clone)]
enum Bound {
    Int(i64),
    Float(f64),
    Bool(bool),
    Str(String),
    Rv(Rv),
    Unknown,
}

/// Reads a `--set` value the way WML would: a size (`4k`), a boolean, or a string.
pub fn parse_override(text: &str) -> StaticValue {
    if let Ok(n) = iolab_util::units::parse_size(text) {
        if let Ok(n) = i64::try_from(n) {
            return StaticValue::Int(n);
        }
    }
    match text {
        "true" => StaticValue::Bool(true),
        "false" => StaticValue::Bool(false),
        _ => StaticValue::Str(text.to_string()),
    }
}

/// Lowers a parsed (and validated) file.
pub fn lower(parsed: &Parsed, opts: &LowerOptions) -> Result<Workload, WmlErrors> {
    let overrides: HashMap<String, StaticValue> = opts
        .overrides
        .iter()
        .map(|(k, v)| (k.trim_start_matches('$').to_string(), parse_override(v)))
        .collect();
    let mut defs = HashMap::new();
    for c in parsed.live_commands() {
        if let CommandKind::Set(s) = &c.kind {
            defs.insert(s.name.as_str(), &s.value);
        }
    }
    let mut l = Lowerer {
        file: &parsed.file,
        env: Env::with_overrides(parsed, &overrides),
        overrides,
        defs,
        composites: parsed
            .composites()
            .filter_map(|c| Some((str_of(&c.attrs, "name")?, c)))
            .collect(),
        filesets: HashMap::new(),
        dormant: false,
        errors: Vec::new(),
    };
    let w = l.workload(parsed);
    if l.errors.is_empty() {
        crate::check::check_with(parsed, &w, crate::check::Checks::Fds)?;
        Ok(w)
    } else {
        l.errors.sort_by_key(|e| e.span);
        Err(WmlErrors::from_vec(l.errors).expect("non-empty"))
    }
}

fn str_of(attrs: &[Attr], name: &str) -> Option<String> {
    find_attr(attrs, name)?.value.as_ref()?.as_literal_str()
}

struct Lowerer<'a> {
    file: &'a str,
    env: Env,
    overrides: HashMap<String, StaticValue>,
    /// The value each variable was last `set` to, for random variables.
    defs: HashMap<&'a str, &'a Value>,
    composites: HashMap<String, &'a CompositeDef>,
    filesets: HashMap<String, usize>,
    /// Lowering a thread with `instances=0` (its own or its process's).
    dormant: bool,
    errors: Vec<WmlError>,
}

type Locals = HashMap<String, Bound>;

impl<'a> Lowerer<'a> {
    fn err(&mut self, kind: ErrorKind, span: Span, token: &str, msg: String) {
        self.errors
            .push(WmlError::new(kind, self.file, span, token, msg));
    }

    fn workload(&mut self, parsed: &'a Parsed) -> Workload {
        let mut filesets = Vec::new();
        for f in parsed.filesets() {
            let spec = self.fileset(f.kind, &f.attrs, f.span);
            self.filesets.insert(spec.name.clone(), filesets.len());
            filesets.push(spec);
        }
        let mut processes = Vec::new();
        let mut prelude = Vec::new();
        let mut run = RunSpec {
            duration: None,
            quit: QuitMode::Timeout,
            report_every: None,
        };
        let mut event_rate = None;
        let mut lathist = false;
        for c in parsed.live_commands() {
            match &c.kind {
                CommandKind::EnableLathist => lathist = true,
                CommandKind::DefineProcess(p) => processes.push(self.process(p)),
                CommandKind::SetMode(q) => {
                    run.quit = match q {
                        AstQuit::Timeout => QuitMode::Timeout,
                        AstQuit::AllDone => QuitMode::AllDone,
                        AstQuit::FirstDone => QuitMode::FirstDone,
                    }
                }
                CommandKind::CreateFiles => prelude.push(MasterAction::CreateFiles),
                CommandKind::Echo(t) => prelude.push(MasterAction::Echo(self.command_text(t))),
                CommandKind::System(t) => prelude.push(MasterAction::System(self.command_text(t))),
                CommandKind::Sleep(v) => {
                    let s = self.uint(v, None, "sleep");
                    prelude.push(MasterAction::Sleep(Duration::from_secs(s)));
                }
                CommandKind::Eventgen(attrs) => {
                    event_rate = Some(self.u64_attr(attrs, "rate", 0, None));
                }
                CommandKind::Run(v) => {
                    run.duration = Some(match v {
                        Some(v) => self.run_time(v, "run"),
                        None => DEFAULT_RUN,
                    });
                }
                CommandKind::Psrun { period, seconds } => {
                    let secs = match seconds {
                        Some(v) => self.run_time(v, "psrun"),
                        None => DEFAULT_RUN,
                    };
                    run.duration = Some(secs);
                    let p = match period {
                        Some(v) => self.int(v, None, "psrun"),
                        None => 10,
                    };
                    let every = Duration::from_secs(p.unsigned_abs().max(1));
                    run.report_every = Some((every, p < 0));
                }
                _ => {}
            }
        }
        // eventgen rate 0 means "no limit" in filebench (which then spins a core).
        let event_rate = event_rate.filter(|&r| r > 0);
        Workload {
            source: self.file.to_string(),
            filesets,
            processes,
            run,
            event_rate,
            prelude,
            lathist,
        }
    }

    fn fileset(&mut self, kind: FilesetKind, attrs: &[Attr], span: Span) -> FilesetSpec {
        let single = kind == FilesetKind::File;
        let name = self.str_attr(attrs, "name", None).unwrap_or_default();
        let path = self.str_attr(attrs, "path", None).unwrap_or_default();
        if path.is_empty() {
            self.err(
                ErrorKind::MissingAttribute,
                span,
                "path",
                format!("fileset `{name}` has no path (is $dir set? pass --dir)"),
            );
        }
        let prealloc = match find_attr(attrs, "prealloc") {
            None => 0,
            Some(Attr { value: None, .. }) => 100,
            Some(a) => {
                let v = a.value.clone().expect("checked");
                self.uint(&v, None, "prealloc").min(100)
            }
        };
        FilesetSpec {
            name,
            path: PathBuf::from(path),
            entries: if single {
                1
            } else {
                self.u64_attr(attrs, "entries", 0, None)
            },
            leafdirs: if single {
                0
            } else {
                self.u64_attr(attrs, "leafdirs", 0, None)
            },
            size: self.rv_attr(attrs, "size", 1024, None),
            dirwidth: self.rv_attr(attrs, "dirwidth", 0, None),
            dirgamma: self.u64_attr(attrs, "dirgamma", 1500, None) as u32,
            dirdepth: find_attr(attrs, "dirdepthrv")
                .is_some()
                .then(|| self.rv_attr(attrs, "dirdepthrv", 0, None)),
            prealloc_pct: prealloc as u8,
            paralloc: self.bool_attr(attrs, "paralloc", None),
            reuse: self.bool_attr(attrs, "reuse", None),
            trusttree: self.bool_attr(attrs, "trusttree", None),
            readonly: self.bool_attr(attrs, "readonly", None),
            writeonly: self.bool_attr(attrs, "writeonly", None),
            single_file: single,
        }
    }

    fn process(&mut self, p: &'a crate::ast::ProcessDef) -> ProcessSpec {
        let instances = self.u64_attr(&p.attrs, "instances", 1, None) as u32;
        let threads = p
            .threads
            .iter()
            .map(|t| {
                let thread_instances = self.u64_attr(&t.attrs, "instances", 1, None) as u32;
                self.dormant = instances == 0 || thread_instances == 0;
                let spec = ThreadSpec {
                    name: self.str_attr(&t.attrs, "name", None).unwrap_or_default(),
                    instances: thread_instances,
                    memsize: self.u64_attr(&t.attrs, "memsize", 1 << 20, None),
                    ioprio: find_attr(&t.attrs, "ioprio")
                        .is_some()
                        .then(|| self.u64_attr(&t.attrs, "ioprio", 0, None) as u8),
                    flowops: t.flowops.iter().map(|f| self.flowop(f, None, 0)).collect(),
                };
                self.dormant = false;
                spec
            })
            .collect();
        ProcessSpec {
            name: self.str_attr(&p.attrs, "name", None).unwrap_or_default(),
            instances,
            nice: self.int_attr(&p.attrs, "nice", 0, None) as i32,
            threads,
        }
    }

    fn flowop(&mut self, f: &'a FlowopUse, locals: Option<&Locals>, depth: u32) -> FlowopSpec {
        let a = &f.attrs;
        let name = self
            .str_attr(a, "name", locals)
            .unwrap_or_else(|| f.op.clone());
        let kind = match FlowopKind::parse(&f.op) {
            Some(FlowopKind::Print(_)) => FlowopKind::Print(
                find_attr(a, "value")
                    .and_then(|v| v.value.as_ref())
                    .map(|v| match self.resolve(v, locals) {
                        Bound::Str(s) => s,
                        Bound::Int(n) => n.to_string(),
                        Bound::Float(x) => x.to_string(),
                        Bound::Bool(b) => b.to_string(),
                        Bound::Rv(_) | Bound::Unknown => String::new(),
                    })
                    .unwrap_or_default(),
            ),
            Some(kind) => kind,
            None => match self.composites.get(f.op.as_str()).copied() {
                Some(def) if depth < 16 => {
                    return self.composite(f, def, locals, name, depth);
                }
                _ => {
                    self.err(
                        ErrorKind::UnknownFlowop,
                        f.op_span,
                        &f.op,
                        format!("unknown flowop `{}`", f.op),
                    );
                    FlowopKind::Hog
                }
            },
        };
        let fileset = self.str_attr(a, "filesetname", locals).and_then(|n| {
            let idx = self.filesets.get(&n).copied();
            // A thread that never starts never looks its fileset up (validation warns).
            if idx.is_none() && !self.dormant {
                self.err(
                    ErrorKind::UnknownFileset,
                    f.span,
                    &n,
                    format!("flowop `{name}` uses fileset `{n}`, which is not defined"),
                );
            }
            idx
        });
        FlowopSpec {
            kind,
            name,
            fileset,
            fd: find_attr(a, "fd").map(|_| self.u64_attr(a, "fd", 0, locals).min(127) as u8),
            srcfd: find_attr(a, "srcfd")
                .map(|_| self.u64_attr(a, "srcfd", 0, locals).min(127) as u8),
            iosize: self.rv_attr(a, "iosize", 0, locals),
            workingset: self.rv_attr(a, "workingset", 0, locals),
            random: self.bool_attr(a, "random", locals),
            dsync: self.bool_attr(a, "dsync", locals),
            directio: self.bool_attr(a, "directio", locals),
            noreadahead: self.bool_attr(a, "noreadahead", locals),
            opennext: self.bool_attr(a, "opennext", locals),
            indexed: find_attr(a, "indexed").map(|_| self.rv_attr(a, "indexed", 0, locals)),
            iters: self.u64_attr(a, "iters", 1, locals).max(1) as u32,
            value: self.rv_attr(a, "value", 0, locals),
            target: self.str_attr(a, "target", locals).map(FlowopRef),
            blocking: self.bool_attr(a, "blocking", locals),
            highwater: self.u64_attr(a, "highwater", 1, locals),
            at: Some(format!("{}:{}", self.file, f.span)),
        }
    }

    /// A use of a composite flowop: its steps lowered with the use's `$local` arguments bound
    /// (falling back to the definition's defaults), all under the use's name.
    fn composite(
        &mut self,
        f: &'a FlowopUse,
        def: &'a CompositeDef,
        outer: Option<&Locals>,
        name: String,
        depth: u32,
    ) -> FlowopSpec {
        let mut locals: Locals = HashMap::new();
        for l in &def.locals {
            if let Some(v) = &l.value {
                let b = self.resolve(v, outer);
                locals.insert(l.name.clone(), b);
            }
        }
        for l in &f.locals {
            if let Some(v) = &l.value {
                let b = self.resolve(v, outer);
                locals.insert(l.name.clone(), b);
            }
        }
        let steps = def
            .flowops
            .iter()
            .map(|s| self.flowop(s, Some(&locals), depth + 1))
            .collect();
        let iters_def = self.u64_attr(&def.attrs, "iters", 1, Some(&locals));
        let iters = if find_attr(&f.attrs, "iters").is_some() {
            self.u64_attr(&f.attrs, "iters", 1, outer)
        } else {
            iters_def
        };
        FlowopSpec {
            kind: FlowopKind::Composite(steps),
            name,
            fileset: None,
            fd: None,
            srcfd: None,
            iosize: Rv::Const(0),
            workingset: Rv::Const(0),
            random: false,
            dsync: false,
            directio: false,
            noreadahead: false,
            opennext: false,
            indexed: None,
            iters: iters.max(1) as u32,
            value: Rv::Const(0),
            target: None,
            blocking: false,
            highwater: 0,
            at: Some(format!("{}:{}", self.file, f.span)),
        }
    }

    // ----- values -----

    fn resolve(&mut self, v: &Value, locals: Option<&Locals>) -> Bound {
        match &v.kind {
            ValueKind::Int(n) => Bound::Int(*n),
            ValueKind::Float(f) => Bound::Float(*f),
            ValueKind::Bool(b) => Bound::Bool(*b),
            ValueKind::Str(s) => Bound::Str(s.clone()),
            ValueKind::Text(t) => Bound::Str(self.text(t, locals)),
            ValueKind::Var(name) => self.var(name, locals, v.span),
            ValueKind::Randvar(r) => match self.randvar(r, v.span) {
                Some(rv) => Bound::Rv(rv),
                None => Bound::Unknown,
            },
            ValueKind::Cvar(c) => match self.cvar(c, v.span) {
                Some(rv) => Bound::Rv(rv),
                None => Bound::Unknown,
            },
            ValueKind::Expr(_) | ValueKind::Table(_) => static_bound(self.env.resolve(v)),
        }
    }

    fn var(&mut self, name: &str, locals: Option<&Locals>, span: Span) -> Bound {
        match self.lookup(name, locals) {
            Some(b) => b,
            None => {
                self.err(
                    ErrorKind::UnknownVariable,
                    span,
                    name,
                    format!("variable `${name}` is not set"),
                );
                Bound::Unknown
            }
        }
    }

    /// The variable's value, `None` when nothing sets it.
    fn lookup(&mut self, name: &str, locals: Option<&Locals>) -> Option<Bound> {
        if let Some(b) = locals.and_then(|l| l.get(name)) {
            return Some(b.clone());
        }
        if let Some(v) = self.overrides.get(name) {
            return Some(static_bound(v.clone()));
        }
        if let Some(def) = self.defs.get(name).copied() {
            if matches!(def.kind, ValueKind::Randvar(_) | ValueKind::Cvar(_)) {
                return Some(self.resolve(def, None));
            }
        }
        self.env.get(name).cloned().map(static_bound)
    }

    /// The text of an `echo` or `system`: an unset `$var` stays as written, as filebench
    /// passes it through (validation warns).
    fn command_text(&mut self, t: &Text) -> String {
        let mut s = String::new();
        for p in &t.parts {
            match p {
                TextPart::Var { name, .. } if self.lookup(name, None).is_none() => {
                    s.push('$');
                    s.push_str(name);
                }
                _ => self.text_part(p, None, &mut s),
            }
        }
        s
    }

    fn text(&mut self, t: &Text, locals: Option<&Locals>) -> String {
        let mut s = String::new();
        for p in &t.parts {
            self.text_part(p, locals, &mut s);
        }
        s
    }

    fn text_part(&mut self, p: &TextPart, locals: Option<&Locals>, s: &mut String) {
        match p {
            TextPart::Lit(l) => s.push_str(l),
            TextPart::Var { name, span } => match self.var(name, locals, *span) {
                Bound::Str(v) => s.push_str(&v),
                Bound::Int(n) => s.push_str(&n.to_string()),
                Bound::Float(x) => s.push_str(&x.to_string()),
                Bound::Bool(b) => s.push_str(&b.to_string()),
                Bound::Rv(_) | Bound::Unknown => {}
            },
        }
    }

    fn num_attr(&mut self, attrs: &[Attr], name: &str, default: f64) -> f64 {
        match find_attr(attrs, name).and_then(|a| a.value.as_ref()) {
            None => default,
            Some(v) => match self.resolve(v, None) {
                Bound::Int(n) => n as f64,
                Bound::Float(x) => x,
                _ => {
                    self.err(
                        ErrorKind::InvalidValue,
                        v.span,
                        name,
                        format!("`{name}` must be a number"),
                    );
                    default
                }
            },
        }
    }

    fn randvar(&mut self, r: &RandvarDef, span: Span) -> Option<Rv> {
        let a = &r.attrs;
        // filebench (parser_gram.y, `parser_randvar_set`): a `randtable` makes it tabular, no
        // `type` makes it gamma.
        let default_type = if r.table().is_some() {
            "tabular"
        } else {
            "gamma"
        };
        let ty = str_of(a, "type").unwrap_or_else(|| default_type.into());
        let min = self.num_attr(a, "min", 0.0);
        let given_mean = find_attr(a, "mean").map(|_| self.num_attr(a, "mean", 0.0));
        let round = self.num_attr(a, "round", 0.0).max(0.0) as u64;
        let rv = match ty.as_str() {
            "uniform" => Rv::Uniform {
                min,
                mean: given_mean.unwrap_or(0.0),
                round,
            },
            "gamma" => {
                let gamma = self.num_attr(a, "gamma", 1500.0);
                // Without `mean`, filebench's mean is the shape, gamma/1000
                // (fb_random.c, `randdist_init`).
                let mean = given_mean.unwrap_or(gamma / 1000.0);
                if given_mean.is_none() && mean < min {
                    let msg = format!(
                        "a gamma randvar without `mean` has filebench's mean gamma/1000 = {mean}, \
                         below its min {min}"
                    );
                    self.errors.push(
                        WmlError::new(ErrorKind::MissingAttribute, self.file, span, "randvar", msg)
                            .with_hint("give it a `mean` of at least its `min`"),
                    );
                    return None;
                }
                Rv::Gamma {
                    min,
                    mean,
                    gamma,
                    round,
                }
            }
            "tabular" => {
                let rows = r.table().unwrap_or(&[]);
                let mut out = Vec::with_capacity(rows.len());
                for row in rows {
                    let mut n = |v: &Value| match self.resolve(v, None) {
                        Bound::Int(n) => n as f64,
                        Bound::Float(x) => x,
                        _ => 0.0,
                    };
                    out.push(TableRow {
                        percent: n(&row.percent),
                        low: n(&row.low),
                        high: n(&row.high),
                    });
                }
                Rv::Tabular { rows: out, round }
            }
            other => {
                self.err(
                    ErrorKind::InvalidValue,
                    span,
                    other,
                    format!("unknown randvar type `{other}` (uniform, gamma or tabular)"),
                );
                return None;
            }
        };
        self.checked(rv, span)
    }

    fn cvar(&mut self, c: &CvarDef, span: Span) -> Option<Rv> {
        let a = &c.attrs;
        let ty = str_of(a, "type").unwrap_or_default();
        let kind = ty.strip_prefix("cvar-").unwrap_or(&ty).to_string();
        let params = match find_attr(a, "parameters").and_then(|p| p.value.as_ref()) {
            Some(v) => match self.resolve(v, None) {
                Bound::Str(s) => s,
                _ => String::new(),
            },
            None => String::new(),
        };
        let dist = match Cvar::from_params(&kind, &params) {
            Ok(d) => d,
            Err(e) => {
                self.err(ErrorKind::InvalidValue, span, &ty, e.to_string());
                return None;
            }
        };
        let opt = |l: &mut Self, n: &str| find_attr(a, n).map(|_| l.num_attr(a, n, 0.0));
        let min = opt(self, "min");
        let max = opt(self, "max");
        let round = self.num_attr(a, "round", 0.0).max(0.0) as u64;
        self.checked(
            Rv::Cvar {
                dist,
                min,
                max,
                round,
            },
            span,
        )
    }

    fn checked(&mut self, rv: Rv, span: Span) -> Option<Rv> {
        match rv.validate() {
            Ok(()) => Some(rv),
            Err(e) => {
                self.err(ErrorKind::InvalidValue, span, "", e.to_string());
                None
            }
        }
    }

    fn int(&mut self, v: &Value, locals: Option<&Locals>, what: &str) -> i64 {
        match self.resolve(v, locals) {
            Bound::Int(n) => n,
            Bound::Bool(b) => i64::from(b),
            Bound::Float(x) if x.fract() == 0.0 => x as i64,
            Bound::Str(s) => match parse_override(&s) {
                StaticValue::Int(n) => n,
                _ => {
                    self.err(
                        ErrorKind::InvalidValue,
                        v.span,
                        &s,
                        format!("`{what}` needs a number, not \"{s}\""),
                    );
                    0
                }
            },
            Bound::Rv(rv) => {
                // Constants-only attributes sample once, like filebench's avd_get_int on a
                // random variable.
                rv.as_const().map(|c| c as i64).unwrap_or(rv.mean() as i64)
            }
            Bound::Float(x) => x as i64,
            Bound::Unknown => 0,
        }
    }

    /// `run N` / `psrun P N`: at least a second (validation checks the file's own value;
    /// this catches `run $t` with `--set t=0`).
    fn run_time(&mut self, v: &Value, what: &str) -> Duration {
        let errors = self.errors.len();
        let n = self.int(v, None, what);
        // Not a number at all is reported already.
        if n < 1 && self.errors.len() == errors {
            self.err(
                ErrorKind::OutOfRange,
                v.span,
                &n.to_string(),
                format!("`{what}` needs a run time of at least 1 s, found {n}"),
            );
        }
        Duration::from_secs(n.max(0) as u64)
    }

    fn uint(&mut self, v: &Value, locals: Option<&Locals>, what: &str) -> u64 {
        let n = self.int(v, locals, what);
        if n < 0 {
            self.err(
                ErrorKind::OutOfRange,
                v.span,
                &n.to_string(),
                format!("`{what}` cannot be negative"),
            );
            return 0;
        }
        n as u64
    }

    fn int_attr(&mut self, attrs: &[Attr], name: &str, default: i64, l: Option<&Locals>) -> i64 {
        match find_attr(attrs, name).and_then(|a| a.value.as_ref()) {
            Some(v) => self.int(v, l, name),
            None => default,
        }
    }

    fn u64_attr(&mut self, attrs: &[Attr], name: &str, default: u64, l: Option<&Locals>) -> u64 {
        match find_attr(attrs, name).and_then(|a| a.value.as_ref()) {
            Some(v) => self.uint(v, l, name),
            None => default,
        }
    }

    fn rv_attr(&mut self, attrs: &[Attr], name: &str, default: u64, l: Option<&Locals>) -> Rv {
        let Some(v) = find_attr(attrs, name).and_then(|a| a.value.as_ref()) else {
            return Rv::Const(default);
        };
        match self.resolve(v, l) {
            Bound::Rv(rv) => rv,
            _ => Rv::Const(self.uint(v, l, name)),
        }
    }

    fn bool_attr(&mut self, attrs: &[Attr], name: &str, l: Option<&Locals>) -> bool {
        match find_attr(attrs, name) {
            None => false,
            Some(Attr { value: None, .. }) => true,
            Some(a) => match self.resolve(a.value.as_ref().expect("checked"), l) {
                Bound::Bool(b) => b,
                Bound::Int(n) => n != 0,
                Bound::Str(s) => s == "true",
                _ => false,
            },
        }
    }

    fn str_attr(&mut self, attrs: &[Attr], name: &str, l: Option<&Locals>) -> Option<String> {
        let v = find_attr(attrs, name)?.value.as_ref()?;
        match self.resolve(v, l) {
            Bound::Str(s) => Some(s),
            Bound::Int(n) => Some(n.to_string()),
            _ => None,
        }
    }
}

fn static_bound(v: StaticValue) -> Bound {
    match v {
        StaticValue::Int(n) => Bound::Int(n),
        StaticValue::Float(x) => Bound::Float(x),
        StaticValue::Bool(b) => Bound::Bool(b),
        StaticValue::Str(s) => Bound::Str(s),
        StaticValue::Random | StaticValue::Unknown => Bound::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse_str;

    fn lowered(text: &str, sets: &[(&str, &str)]) -> Workload {
        let p = parse_str("t.f", text).unwrap();
        crate::validate(&p).unwrap();
        let opts = LowerOptions {
            overrides: sets
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        };
        lower(&p, &opts).unwrap()
    }

    #[test]
    fn filesets_processes_and_run() {
        let w = lowered(
            "set $dir=/tmp\nset $nfiles=100\n\
             define fileset name=fs,path=$dir,size=16k,entries=$nfiles,dirwidth=20,prealloc=80\n\
             define file name=one,path=$dir,size=1m,prealloc\n\
             define process name=p,instances=2 { thread name=t,instances=3,memsize=2m {\n\
               flowop read name=r,filesetname=fs,fd=1,iosize=4k,random\n\
               flowop closefile name=c,fd=1 } }\n\
             set mode quit alldone\nrun 7\n",
            &[("nfiles", "250"), ("dir", "/mnt/x")],
        );
        assert_eq!(w.filesets.len(), 2);
        let fs = &w.filesets[0];
        assert_eq!(fs.entries, 250, "--set overrides the file");
        assert_eq!(fs.path, PathBuf::from("/mnt/x"));
        assert_eq!(fs.size, Rv::Const(16384));
        assert_eq!(fs.prealloc_pct, 80);
        assert_eq!(fs.dirwidth, Rv::Const(20));
        let one = &w.filesets[1];
        assert!(one.single_file);
        assert_eq!((one.entries, one.prealloc_pct), (1, 100));
        let p = &w.processes[0];
        assert_eq!((p.instances, p.threads[0].instances), (2, 3));
        assert_eq!(p.threads[0].memsize, 2 << 20);
        let r = &p.threads[0].flowops[0];
        assert!(matches!(r.kind, FlowopKind::Read));
        assert_eq!((r.fileset, r.fd, r.random), (Some(0), Some(1), true));
        assert_eq!(r.iosize, Rv::Const(4096));
        assert_eq!(w.run.duration, Some(Duration::from_secs(7)));
        assert_eq!(w.run.quit, QuitMode::AllDone);
    }

    #[test]
    fn a_zero_run_time_from_the_command_line_is_located() {
        let src =
            "set $runtime = 5\ndefine process name=p { thread name=t { flowop hog name=h } }\n\
                   run $runtime\n";
        let p = crate::parse_str("t.f", src).unwrap();
        for (value, message) in [
            ("0", "`run` needs a run time of at least 1 s, found 0"),
            ("soon", "`run` needs a number, not \"soon\""),
        ] {
            let opts = LowerOptions {
                overrides: vec![("runtime".into(), value.into())],
            };
            let e = lower(&p, &opts).unwrap_err();
            assert_eq!(e.len(), 1, "{e}");
            assert_eq!(
                (e.first().span, e.first().message.as_str()),
                (Span::new(3, 5), message)
            );
        }
    }

    #[test]
    fn random_variables_reach_attributes() {
        let w = lowered(
            "set $dir=/tmp\n\
             set $sz = randvar(type=gamma, min=1k, mean=16k, gamma=1500)\n\
             define fileset name=fs,path=$dir,size=$sz,entries=10,dirwidth=5\n\
             define process name=p { thread name=t { flowop read name=r,filesetname=fs,iosize=$sz } }\n\
             run 1\n",
            &[],
        );
        let expect = Rv::Gamma {
            min: 1024.0,
            mean: 16384.0,
            gamma: 1500.0,
            round: 0,
        };
        assert_eq!(w.filesets[0].size, expect);
        assert_eq!(w.processes[0].threads[0].flowops[0].iosize, expect);
    }

    /// Issue 11: filebench runs a gamma randvar without `mean` (its mean is then gamma/1000)
    /// and takes a randvar without `type` as gamma; iolab refused the first when it had a
    /// `min` and read the second as uniform.
    #[test]
    fn randvar_defaults_are_filebench_s() {
        let w = lowered(
            "set $dir=/tmp\n\
             set $sz = randvar(type=gamma, min=1, gamma=2500)\n\
             set $io = randvar(min=2k, mean=4k, round=1k)\n\
             set $tab = randvar(randtable={{100, 1, 3}})\n\
             define fileset name=fs,path=$dir,size=$sz,entries=10,dirwidth=5\n\
             define process name=p { thread name=t {\n\
               flowop read name=r,filesetname=fs,iosize=$io,workingset=$tab } }\n\
             run 1\n",
            &[],
        );
        assert_eq!(
            w.filesets[0].size,
            Rv::Gamma {
                min: 1.0,
                mean: 2.5,
                gamma: 2500.0,
                round: 0
            }
        );
        let r = &w.processes[0].threads[0].flowops[0];
        assert_eq!(
            r.iosize,
            Rv::Gamma {
                min: 2048.0,
                mean: 4096.0,
                gamma: 1500.0,
                round: 1024
            }
        );
        assert!(
            matches!(r.workingset, Rv::Tabular { .. }),
            "{:?}",
            r.workingset
        );
        // A mean of gamma/1000 below `min` would draw values below it: refused, and why.
        let p = parse_str(
            "t.f",
            "set $sz = randvar(type=gamma, min=1k)\n\
             define file name=f,path=/tmp,size=$sz\n",
        )
        .unwrap();
        let e = lower(&p, &LowerOptions::default()).unwrap_err();
        assert!(
            e.first()
                .message
                .contains("filebench's mean gamma/1000 = 1.5"),
            "{e}"
        );
    }

    /// Issue 11: a random `dirwidth` (drawn per directory by filebench) was refused.
    #[test]
    fn a_random_dirwidth_reaches_the_fileset() {
        let w = lowered(
            "set $w = randvar(type=uniform, min=10, mean=20)\n\
             define fileset name=fs,path=/tmp,entries=100,dirwidth=$w\n",
            &[],
        );
        assert_eq!(
            w.filesets[0].dirwidth,
            Rv::Uniform {
                min: 10.0,
                mean: 20.0,
                round: 0
            }
        );
    }

    /// Issue 11: filebench passes an unset `$var` in `echo` and `system` text through as
    /// written (the shell then expands it); iolab refused the file.
    #[test]
    fn unset_variables_in_echo_and_system_pass_through() {
        let p = parse_str(
            "t.f",
            "set $aa = 5\necho \"dir is $nope and $aa and $nope.x\"\nsystem \"echo $nope/$aa\"\n",
        )
        .unwrap();
        let w = lower(&p, &LowerOptions::default()).unwrap();
        assert!(
            matches!(&w.prelude[0], MasterAction::Echo(s) if s == "dir is $nope and 5 and $nope.x"),
            "{:?}",
            w.prelude
        );
        assert!(
            matches!(&w.prelude[1], MasterAction::System(s) if s == "echo $nope/5"),
            "{:?}",
            w.prelude
        );
    }

    /// Issue 11: filebench looks a flowop's fileset up when its thread starts, so one named
    /// only in a process with `instances=0` is no error there; iolab refused the file.
    #[test]
    fn an_unknown_fileset_of_a_thread_that_never_starts_is_no_error() {
        let src = "define file name=f,path=/tmp,size=4k\n\
             define process name=idle,instances=0 { thread name=t {\n\
               flowop read name=r,filesetname=nosuch,iosize=4k } }\n\
             define process name=p { thread name=t2,instances=0 {\n\
               flowop read name=r2,filesetname=nosuch2,iosize=4k } }\n\
             define process name=q { thread name=t3 {\n\
               flowop read name=r3,filesetname=f,iosize=4k } }\n\
             run 1\n";
        let p = parse_str("t.f", src).unwrap();
        let warnings = crate::validate(&p).unwrap();
        for (name, at) in [("nosuch", Span::new(3, 32)), ("nosuch2", Span::new(5, 33))] {
            assert!(
                warnings.iter().any(|w| w.span == at
                    && w.message
                        .starts_with(&format!("unknown fileset `{name}`: no error"))),
                "{warnings:#?}"
            );
        }
        let w = lower(&p, &LowerOptions::default()).unwrap();
        assert_eq!(w.processes[0].threads[0].flowops[0].fileset, None);
        // Where the thread does start, it stays an error.
        let p = parse_str(
            "t.f",
            &src.replace("t3 {", "t3,instances=1 {")
                .replace("filesetname=f,", "filesetname=nosuch3,"),
        )
        .unwrap();
        let e = crate::validate(&p).unwrap_err();
        assert_eq!(e.len(), 1, "{e}");
        assert_eq!(e.first().message, "unknown fileset `nosuch3`");
    }

    #[test]
    fn composite_locals_are_bound_per_use() {
        let w = lowered(
            "set $dir=/tmp\n\
             define file name=f,path=$dir,size=1m,prealloc\n\
             define flowop name=rw, $io=4k {\n\
               flowop read name=cr,filesetname=f,iosize=$io\n\
               flowop write name=cw,filesetname=f,iosize=$io }\n\
             define process name=p { thread name=t {\n\
               flowop rw name=small\n\
               flowop rw name=big, $io=1m, iters=3 } }\n\
             run 1\n",
            &[],
        );
        let ops = &w.processes[0].threads[0].flowops;
        let FlowopKind::Composite(small) = &ops[0].kind else {
            panic!()
        };
        let FlowopKind::Composite(big) = &ops[1].kind else {
            panic!()
        };
        assert_eq!(ops[0].name, "small");
        assert_eq!(small[0].iosize, Rv::Const(4096));
        assert_eq!(big[1].iosize, Rv::Const(1 << 20));
        assert_eq!(ops[1].iters, 3);
    }

    #[test]
    fn prelude_and_psrun() {
        let w = lowered(
            "set $dir=/tmp\ndefine file name=f,path=$dir,size=1k\n\
             define process name=p { thread name=t { flowop hog name=h,value=10 } }\n\
             create files\nsystem \"sync\"\necho \"in $dir\"\nsleep 2\neventgen rate=100\npsrun -5 20\n",
            &[],
        );
        assert!(matches!(w.prelude[0], MasterAction::CreateFiles));
        assert!(matches!(&w.prelude[1], MasterAction::System(s) if s == "sync"));
        assert!(matches!(&w.prelude[2], MasterAction::Echo(s) if s == "in /tmp"));
        assert!(matches!(w.prelude[3], MasterAction::Sleep(d) if d == Duration::from_secs(2)));
        assert_eq!(w.event_rate, Some(100));
        assert_eq!(w.run.duration, Some(Duration::from_secs(20)));
        assert_eq!(w.run.report_every, Some((Duration::from_secs(5), true)));
    }

    #[test]
    fn every_corpus_file_lowers() {
        // filebench's own workloads, from $IOLAB_FILEBENCH_CORPUS (see iolab-testkit).
        let Some(dir) = iolab_testkit::filebench_corpus() else {
            return;
        };
        let mut n = 0;
        for e in std::fs::read_dir(dir).unwrap() {
            let path = e.unwrap().path();
            let p = crate::parse_file(&path).unwrap();
            crate::validate(&p).unwrap();
            let opts = LowerOptions {
                overrides: vec![("dir".into(), "/tmp/iolab".into())],
            };
            let w = lower(&p, &opts).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert!(!w.processes.is_empty(), "{}", path.display());
            // The static fd and I/O size checks find mistakes, not filebench's own workloads.
            crate::check(&p, &w).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            n += 1;
        }
        assert_eq!(n, 47);
    }
}
