//! The processes section: `define process` with its threads and their flowops, and the
//! composite flowops (`define flowop`) they use — checked as defined, and again at each use
//! with its `$local` arguments bound.

use std::collections::{HashMap, HashSet};

use iolab_workload::model::FlowopKind;

use crate::ast::*;
use crate::env::{Locals, StaticValue};
use crate::error::{elsewhere, ErrorKind, WarningKind};
use crate::schema;
use iolab_util::suggest::{closest, did_you_mean, suggestion};

use super::context::{Ctx, Scope, MAX_DEPTH};

/// Checks the processes and composite flowops in file order.
#[derive(Default)]
pub(super) struct Processes<'a> {
    /// The composite flowops defined so far.
    seen: HashSet<&'a str>,
    /// Unknown filesets of threads that never start: the warning's index, and the other
    /// places the name is used.
    dormant_unknown: HashMap<String, (usize, Vec<Span>)>,
}

impl<'a> Processes<'a> {
    /// Checks `define flowop name=X { … }`, command `idx` of the file, and its flowops as
    /// defined (each use checks them again with its arguments bound).
    pub(super) fn composite_def(&mut self, cx: &mut Ctx<'a>, d: &'a CompositeDef, idx: usize) {
        cx.attrs(
            &d.attrs,
            schema::COMPOSITE_DEF_ATTRS,
            "`define flowop`",
            None,
        );
        let name = cx.literal_name(&d.attrs);
        match (find_attr(&d.attrs, "name"), name) {
            (None, _) => {
                cx.required(&d.attrs, "name", d.span, "define", "`define flowop`");
            }
            (Some(a), None) => {
                let span = a.value.as_ref().map_or(a.span, |v| v.span);
                cx.error(
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
                    cx.error(ErrorKind::Duplicate, span, n, msg).hint =
                        Some("give the composite flowop another name".into());
                } else if !self.seen.insert(n) {
                    let msg = format!("composite flowop `{n}` is already defined");
                    cx.error(ErrorKind::Duplicate, span, n, msg);
                }
            }
        }
        // As defined, every local is unknown: a use may override its default. Uses are
        // checked again with the values bound.
        let mut locals = Locals::new();
        for l in &d.locals {
            if let Some(v) = &l.value {
                cx.value_refs(v, None);
            }
            if locals
                .insert(l.name.clone(), StaticValue::Unknown)
                .is_some()
            {
                let msg = format!("local variable `${}` is declared twice", l.name);
                cx.error(ErrorKind::Duplicate, l.span, &format!("${}", l.name), msg);
            }
        }
        if d.flowops.is_empty() {
            cx.error(
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
            self.flowop(cx, f, &scope);
        }
    }

    /// Checks `define process … { thread … { flowop … } }`, command `idx` of the file: the
    /// composites defined above it are usable.
    pub(super) fn process(&mut self, cx: &mut Ctx<'a>, proc_: &ProcessDef, idx: usize) {
        let scope = &Scope {
            limit: idx,
            locals: Locals::new(),
            inside: None,
            depth: 0,
            dormant: false,
        };
        cx.attrs(
            &proc_.attrs,
            schema::PROCESS_ATTRS,
            "`define process`",
            None,
        );
        cx.required(
            &proc_.attrs,
            "name",
            proc_.span,
            "define",
            "`define process`",
        );
        let process_dormant = Self::zero_instances(cx, &proc_.attrs, "process");
        if proc_.threads.is_empty() {
            cx.error(
                ErrorKind::MissingAttribute,
                proc_.span,
                "define",
                "process has no threads",
            )
            .hint = Some("add `thread name=… { flowop … }` inside the braces".into());
        }
        for t in &proc_.threads {
            cx.attrs(&t.attrs, schema::THREAD_ATTRS, "`thread`", None);
            cx.required(&t.attrs, "name", t.span, "thread", "`thread`");
            let dormant = Self::zero_instances(cx, &t.attrs, "thread") || process_dormant;
            if t.flowops.is_empty() {
                cx.error(
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
                self.flowop(cx, f, &scope);
            }
        }
    }

    /// Warns about `instances=0`; returns whether that is the case.
    fn zero_instances(cx: &mut Ctx<'_>, attrs: &[Attr], what: &str) -> bool {
        if let Some(v) = find_attr(attrs, "instances").and_then(|a| a.value.as_ref()) {
            if cx.resolve(v, None) == StaticValue::Int(0) {
                cx.warn(
                    WarningKind::Suspicious,
                    v.span,
                    format!("`instances=0`: this {what} never runs"),
                );
                return true;
            }
        }
        false
    }

    /// A flowop of a thread or a composite: a built-in one, or a composite defined above.
    fn flowop(&mut self, cx: &mut Ctx<'a>, f: &FlowopUse, scope: &Scope) {
        let op = f.op.as_str();
        if let Some(kind) = FlowopKind::parse(op) {
            self.builtin_flowop(cx, f, &kind, scope);
            return;
        }
        match cx.composites.get(op).copied() {
            Some((idx, d)) if idx < scope.limit && scope.inside != Some(op) => {
                self.composite_use(cx, f, d, scope)
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
                        let mut usable: Vec<&str> = cx
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
                cx.error(ErrorKind::UnknownFlowop, f.op_span, op, msg).hint = hint;
            }
        }
    }

    /// A built-in flowop: its attributes, and the fileset and target it names.
    fn builtin_flowop(
        &mut self,
        cx: &mut Ctx<'a>,
        f: &FlowopUse,
        kind: &FlowopKind,
        scope: &Scope,
    ) {
        let op = f.op.as_str();
        let ctx = format!("flowop `{op}`");
        if let Some(l) = f.locals.first() {
            let msg = format!("`${}=` arguments only apply to composite flowops", l.name);
            cx.error(ErrorKind::Syntax, l.span, &format!("${}", l.name), msg)
                .hint = Some(format!("`{op}` is a built-in flowop"));
        }
        cx.attrs(&f.attrs, &schema::flowop_attrs(kind), &ctx, Some(scope));
        cx.required(&f.attrs, "name", f.op_span, op, &ctx);
        if schema::needs_fileset(kind) {
            cx.required(&f.attrs, "filesetname", f.op_span, op, &ctx);
        }
        if schema::needs_target(kind) {
            cx.required(&f.attrs, "target", f.op_span, op, &ctx);
        }
        if schema::needs_value(kind) && find_attr(&f.attrs, "value").is_none() {
            cx.warn(
                WarningKind::Suspicious,
                f.op_span,
                format!("`{op}` without `value` finishes the thread at once"),
            );
        }
        if let Some(v) = find_attr(&f.attrs, "filesetname").and_then(|a| a.value.as_ref()) {
            if let StaticValue::Str(name) = cx.resolve(v, Some(scope)) {
                if cx.filesets_complete && !cx.filesets.contains_key(&name) && scope.dormant {
                    // Once per name: every flowop of a dormant thread names the same set.
                    if let Some((_, also)) = self.dormant_unknown.get_mut(&name) {
                        also.push(v.span);
                    } else {
                        self.dormant_unknown
                            .insert(name.clone(), (cx.warnings.len(), Vec::new()));
                        cx.warn(
                            WarningKind::Suspicious,
                            v.span,
                            format!(
                                "unknown fileset `{name}`: no error because this thread never \
                                 starts (`instances=0`), and filebench looks filesets up when \
                                 a thread starts"
                            ),
                        );
                    }
                } else if cx.filesets_complete && !cx.filesets.contains_key(&name) {
                    let hint = did_you_mean(&name, cx.filesets.keys().map(String::as_str))
                        .or_else(|| {
                            Some(format!(
                                "define it with `define fileset name={name}, path=…` or `define file`"
                            ))
                        });
                    let msg = format!("unknown fileset `{name}`");
                    cx.error(ErrorKind::UnknownFileset, v.span, &name, msg).hint = hint;
                }
            }
        }
        if let Some(v) = find_attr(&f.attrs, "target").and_then(|a| a.value.as_ref()) {
            if let StaticValue::Str(name) = cx.resolve(v, Some(scope)) {
                if cx.flowop_names_complete && !cx.flowop_names.contains(&name) {
                    let hint = did_you_mean(&name, cx.flowop_names.iter().map(String::as_str))
                        .or_else(|| Some("`target=` names another flowop by its `name`".into()));
                    let msg = format!("unknown flowop target `{name}`");
                    cx.error(ErrorKind::UnknownTarget, v.span, &name, msg).hint = hint;
                }
            }
        }
    }

    /// A use of a composite flowop: its `$local` arguments, then the composite's flowops
    /// again with them bound.
    fn composite_use(
        &mut self,
        cx: &mut Ctx<'a>,
        f: &FlowopUse,
        d: &'a CompositeDef,
        scope: &Scope,
    ) {
        let op = f.op.as_str();
        let ctx = format!("composite flowop `{op}`");
        cx.attrs(&f.attrs, &schema::composite_use_attrs(), &ctx, Some(scope));
        cx.required(&f.attrs, "name", f.op_span, op, &ctx);
        let mut bound = Locals::new();
        for l in &d.locals {
            let v = l
                .value
                .as_ref()
                .map_or(StaticValue::Unknown, |v| cx.resolve(v, None));
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
                cx.error(
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
                    if !cx.value_refs(v, Some(scope)) {
                        continue;
                    }
                    cx.resolve(v, Some(scope))
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
                cx.error(ErrorKind::MissingAttribute, f.op_span, op, msg)
                    .hint = Some(format!("add `${}=…` to this flowop", l.name));
            }
        }
        if scope.depth >= MAX_DEPTH {
            return;
        }
        let (limit, _) = cx.composites[op];
        // filebench resolves a composite's filesets where it is used, started or not.
        let inner = Scope {
            limit,
            locals: bound,
            inside: Some(op),
            depth: scope.depth + 1,
            dormant: false,
        };
        let first_new = cx.errors.len();
        for g in &d.flowops {
            self.flowop(cx, g, &inner);
        }
        // Errors inside the composite that only this use causes: say which use.
        let note = format!("in composite flowop `{op}` as used at {}", f.op_span);
        for e in &mut cx.errors[first_new..] {
            e.hint = Some(match e.hint.take() {
                Some(h) if !h.contains(" as used at ") => format!("{h} ({note})"),
                Some(h) => h,
                None => note.clone(),
            });
        }
    }

    /// Ends the section: a warning about a dormant thread's unknown fileset lists the other
    /// places that name it.
    pub(super) fn finish(self, cx: &mut Ctx<'_>) {
        for (at, mut also) in self.dormant_unknown.into_values() {
            if !also.is_empty() {
                // A composite used twice reports its inner flowops twice.
                also.sort();
                also.dedup();
                also.retain(|s| *s != cx.warnings[at].span);
                cx.warnings[at].message.push_str(&elsewhere(&also));
            }
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
                iolab_util::suggest::list(FlowopKind::names())
            );
            if !composites.is_empty() {
                hint.push_str(&format!(
                    ", and the composite flowops defined above: {}",
                    iolab_util::suggest::list(composites.iter().copied())
                ));
            }
            hint
        }
    }
}
