//! The context every section's visitor shares: the file, the symbol tables a first pass
//! builds (variables, filesets, composite flowops, flowop names) so that references may point
//! forward, and the diagnostics found so far.

use std::collections::{HashMap, HashSet};

use crate::ast::*;
use crate::env::{Env, Locals, StaticValue};
use crate::error::{ErrorKind, Warning, WarningKind, WmlError};

use super::ValidateOptions;

/// Composites nest at most this deep (they can only use earlier ones, so this only bounds
/// pathological files).
pub(super) const MAX_DEPTH: usize = 32;

/// What the visitors share: the file, its symbol tables and the diagnostics.
pub(super) struct Ctx<'a> {
    pub(super) p: &'a Parsed,
    pub(super) env: Env,
    /// Variables set before `run` (or predefined).
    pub(super) known_vars: HashSet<String>,
    /// Variables set only after `run`, for a better hint.
    pub(super) late_vars: HashMap<String, Span>,
    /// Where each live variable is first set.
    pub(super) first_set: HashMap<String, Span>,
    /// Variables the caller sets (`--set`, `--dir`).
    pub(super) predefined: HashSet<String>,
    /// Fileset names (first definition) and whether every fileset name could be resolved.
    pub(super) filesets: HashMap<String, Span>,
    pub(super) filesets_complete: bool,
    /// Composite definitions by name, with the index of their command.
    pub(super) composites: HashMap<&'a str, (usize, &'a CompositeDef)>,
    /// Names of all flowops that exist at run time, for `target=`.
    pub(super) flowop_names: HashSet<String>,
    pub(super) flowop_names_complete: bool,
    pub(super) errors: Vec<WmlError>,
    pub(super) warnings: Vec<Warning>,
}

/// Where flowops are being checked: which composites are usable and the local variables.
#[derive(Clone)]
pub(super) struct Scope<'s> {
    /// Composites whose definition command index is below this are usable.
    pub(super) limit: usize,
    pub(super) locals: Locals,
    /// The composite being checked, to reject self-use.
    pub(super) inside: Option<&'s str>,
    pub(super) depth: usize,
    /// In a process or thread with `instances=0`, which never starts.
    pub(super) dormant: bool,
}

impl<'a> Ctx<'a> {
    /// The context of `p`, its symbol tables built; no diagnostics yet.
    pub(super) fn new(p: &'a Parsed, opts: &ValidateOptions) -> Self {
        let env = Env::new(p);
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
        let mut cx = Ctx {
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
            errors: Vec::new(),
            warnings: Vec::new(),
        };
        cx.collect_names(live);
        cx
    }

    /// Records an error at `span`; the caller may add a hint.
    pub(super) fn error(
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

    /// Records a warning at `span`.
    pub(super) fn warn(&mut self, kind: WarningKind, span: Span, msg: impl Into<String>) {
        self.warnings
            .push(Warning::new(kind, &self.p.file, span, msg));
    }

    /// The value of `v` as far as it is known before the run, with `scope`'s locals.
    pub(super) fn resolve(&self, v: &Value, scope: Option<&Scope>) -> StaticValue {
        self.env.resolve_in(v, scope.map(|s| &s.locals))
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
    pub(super) fn literal_name(&self, attrs: &'a [Attr]) -> Option<&'a str> {
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
}
