//! What the language knows: what built-in flowops need, the attributes of each entity and
//! the cvar types. Declared once here; validation and hints read these tables. The built-in
//! flowops themselves, and their names, are [`FlowopKind::ALL`] (iolab-workload).

use iolab_workload::model::FlowopKind;

/// Flowops that pick an entry or directory of a fileset and cannot work without one.
pub(crate) fn needs_fileset(k: &FlowopKind) -> bool {
    matches!(
        k,
        FlowopKind::OpenFile
            | FlowopKind::CreateFile
            | FlowopKind::MakeDir
            | FlowopKind::RemoveDir
            | FlowopKind::ListDir
            | FlowopKind::FsyncSet
    )
}

/// Flowops that act on another flowop and cannot work without `target=`.
pub(crate) fn needs_target(k: &FlowopKind) -> bool {
    matches!(k, FlowopKind::Wakeup | FlowopKind::SemPost)
}

/// Flowops whose `value` is a threshold that defaults to 0 (= finish at once).
pub(crate) fn needs_value(k: &FlowopKind) -> bool {
    matches!(k, FlowopKind::FinishOnCount | FlowopKind::FinishOnBytes)
}

/// The cvar types filebench ships (`cvars/cvar-*.c`) and their parameter names.
pub const CVAR_TYPES: &[(&str, &[&str])] = &[
    ("cvar-erlang", &["shape", "rate"]),
    ("cvar-exponential", &["mean"]),
    ("cvar-gamma", &["mean", "gamma"]),
    ("cvar-lognormal", &["shape", "scale"]),
    ("cvar-normal", &["mean", "sigma"]),
    ("cvar-triangular", &["lower", "upper", "mode"]),
    ("cvar-uniform", &["lower", "upper"]),
    ("cvar-weibull", &["shape", "scale"]),
];

pub(crate) const RANDVAR_TYPES: &[&str] = &["uniform", "gamma", "tabular"];
pub(crate) const RANDSRC: &[&str] = &["urandom", "rand48"];

/// The type an attribute value must have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ty {
    /// A name or path: bare word, quoted string or variable.
    Str,
    /// A whole number; `random` attributes also accept a random variable.
    Int,
    /// Decimal allowed (cvar bounds, randvar mean).
    Num,
    /// `true`/`false`, 0/non-zero, or the bare flag.
    Bool,
    /// `prealloc`: a flag (= 100) or a percentage.
    Percent,
    /// One of a fixed set of words.
    Choice(&'static [&'static str]),
    /// `randtable = {{…}}`.
    Table,
    Any,
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct AttrSpec {
    pub name: &'static str,
    pub ty: Ty,
    pub min: Option<i64>,
    pub max: Option<i64>,
    /// May be a random variable (sampled when read).
    pub random: bool,
    /// Accepted but without effect: the reason, for the warning.
    pub ignored: Option<&'static str>,
    /// A filebench 1.4 attribute (warned about as legacy syntax).
    pub legacy: bool,
}

const fn a(name: &'static str, ty: Ty) -> AttrSpec {
    AttrSpec {
        name,
        ty,
        min: None,
        max: None,
        random: false,
        ignored: None,
        legacy: false,
    }
}

impl AttrSpec {
    const fn range(mut self, min: i64, max: i64) -> Self {
        self.min = Some(min);
        self.max = Some(max);
        self
    }

    const fn nonneg(mut self) -> Self {
        self.min = Some(0);
        self
    }

    const fn random(mut self) -> Self {
        self.random = true;
        self
    }

    const fn ignored(mut self, why: &'static str) -> Self {
        self.ignored = Some(why);
        self
    }

    const fn legacy(mut self) -> Self {
        self.ignored = Some("it is a filebench 1.4 attribute");
        self.legacy = true;
        self
    }
}

const NOT_FOR_FILE: &str = "it has no effect on `define file`";

pub(crate) const FILESET_ATTRS: &[AttrSpec] = &[
    a("name", Ty::Str),
    a("path", Ty::Str),
    a("size", Ty::Int).nonneg().random(),
    a("entries", Ty::Int).nonneg(),
    a("leafdirs", Ty::Int).nonneg(),
    a("dirwidth", Ty::Int).nonneg().random(),
    a("dirgamma", Ty::Int).nonneg(),
    a("dirdepthrv", Ty::Num).random(),
    a("prealloc", Ty::Percent),
    a("paralloc", Ty::Bool),
    a("reuse", Ty::Bool),
    a("trusttree", Ty::Bool),
    a("readonly", Ty::Bool),
    a("writeonly", Ty::Bool),
    a("cached", Ty::Bool).legacy(),
    a("filesizegamma", Ty::Int).legacy(),
];

/// filebench 1.4 also took the fileset-only attributes on `define file` and ignored them.
pub(crate) const FILE_ATTRS: &[AttrSpec] = &[
    a("name", Ty::Str),
    a("path", Ty::Str),
    a("size", Ty::Int).nonneg().random(),
    a("prealloc", Ty::Percent),
    a("paralloc", Ty::Bool),
    a("reuse", Ty::Bool),
    a("trusttree", Ty::Bool),
    a("readonly", Ty::Bool),
    a("writeonly", Ty::Bool),
    a("cached", Ty::Bool).legacy(),
    a("filesizegamma", Ty::Int).legacy(),
    a("entries", Ty::Int).ignored(NOT_FOR_FILE),
    a("leafdirs", Ty::Int).ignored(NOT_FOR_FILE),
    a("dirwidth", Ty::Int).ignored(NOT_FOR_FILE),
    a("dirgamma", Ty::Int).ignored(NOT_FOR_FILE),
    a("dirdepthrv", Ty::Num).random().ignored(NOT_FOR_FILE),
];

pub(crate) const PROCESS_ATTRS: &[AttrSpec] = &[
    a("name", Ty::Str),
    a("instances", Ty::Int).nonneg(),
    a("nice", Ty::Int).range(-20, 19),
];

pub(crate) const THREAD_ATTRS: &[AttrSpec] = &[
    a("name", Ty::Str),
    a("instances", Ty::Int).nonneg(),
    a("memsize", Ty::Int).nonneg(),
    a("useism", Ty::Bool),
    a("ioprio", Ty::Int).range(0, 7),
    a("procname", Ty::Str).legacy(),
    a("nice", Ty::Int)
        .ignored("filebench 1.4 took process attributes on threads; set `nice` on the process"),
];

/// `value` is re-typed per flowop by [`flowop_attrs`].
const FLOWOP_ATTRS: &[AttrSpec] = &[
    a("name", Ty::Str),
    a("filesetname", Ty::Str),
    a("fd", Ty::Int).range(0, 127),
    a("srcfd", Ty::Int).range(0, 127),
    a("opennext", Ty::Bool),
    a("indexed", Ty::Num).random(),
    a("iosize", Ty::Int).nonneg().random(),
    a("workingset", Ty::Int).nonneg().random(),
    a("random", Ty::Bool),
    a("dsync", Ty::Bool),
    a("directio", Ty::Bool),
    a("noreadahead", Ty::Bool),
    a("iters", Ty::Int).nonneg().random(),
    a("value", Ty::Int).nonneg().random(),
    a("target", Ty::Str),
    a("blocking", Ty::Bool),
    a("highwater", Ty::Int).nonneg(),
    a("possetname", Ty::Str).legacy(),
];

/// Attributes of built-in flowop `op`: `print` logs a string, `testrandvar` samples anything.
pub(crate) fn flowop_attrs(op: &FlowopKind) -> Vec<AttrSpec> {
    FLOWOP_ATTRS
        .iter()
        .map(|s| match (s.name, op) {
            ("value", FlowopKind::Print(_) | FlowopKind::TestRandVar) => a("value", Ty::Any),
            _ => *s,
        })
        .collect()
}

/// A composite's use takes `name` and `iters`; filebench silently drops the other flowop
/// attributes there, iolab warns.
pub(crate) fn composite_use_attrs() -> Vec<AttrSpec> {
    FLOWOP_ATTRS
        .iter()
        .map(|s| match s.name {
            "name" | "iters" => *s,
            _ => s.ignored("composite flowops take only `name`, `iters` and `$local` arguments"),
        })
        .collect()
}

pub(crate) const COMPOSITE_DEF_ATTRS: &[AttrSpec] =
    &[a("name", Ty::Str), a("iters", Ty::Int).nonneg().random()];

pub(crate) const RANDVAR_ATTRS: &[AttrSpec] = &[
    a("type", Ty::Choice(RANDVAR_TYPES)),
    a("min", Ty::Num),
    a("mean", Ty::Num),
    a("gamma", Ty::Int).nonneg(),
    a("round", Ty::Int).nonneg(),
    a("seed", Ty::Int),
    a("randsrc", Ty::Choice(RANDSRC)),
    a("randtable", Ty::Table),
];

pub(crate) const CVAR_ATTRS: &[AttrSpec] = &[
    a("type", Ty::Str),
    a("parameters", Ty::Str),
    a("min", Ty::Num),
    a("max", Ty::Num),
    a("round", Ty::Num),
];

pub(crate) const EVENTGEN_ATTRS: &[AttrSpec] = &[a("rate", Ty::Int).nonneg()];

pub(crate) const MULTI_ATTRS: &[AttrSpec] = &[a("master", Ty::Str), a("client", Ty::Str)];

pub(crate) const MULTISYNC_ATTRS: &[AttrSpec] = &[a("value", Ty::Int)];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_is_retyped_for_print() {
        let print = flowop_attrs(&FlowopKind::parse("print").unwrap());
        let v = print.iter().find(|s| s.name == "value").unwrap();
        assert_eq!(v.ty, Ty::Any);
        let hog = flowop_attrs(&FlowopKind::Hog);
        let v = hog.iter().find(|s| s.name == "value").unwrap();
        assert_eq!(v.ty, Ty::Int);
    }

    #[test]
    fn composite_use_ignores_io_attrs() {
        let c = composite_use_attrs();
        assert!(c
            .iter()
            .find(|s| s.name == "iters")
            .unwrap()
            .ignored
            .is_none());
        assert!(c.iter().find(|s| s.name == "fd").unwrap().ignored.is_some());
    }
}
