//! The syntax tree of a WML file, as written: nothing is resolved or defaulted here.
//!
//! Attribute lists stay lists (in source order, duplicates kept) because filebench gives the
//! last occurrence precedence and because lowering wants to see exactly what the user wrote.
//! Every node carries the [`Span`] of its first token.

use std::collections::BTreeSet;
use std::fmt;

use crate::error::Warning;

/// A position in the source: 1-based line and column. Columns count characters, so a tab
/// is one column (as in rustc and gcc diagnostics).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Span {
    pub line: u32,
    pub col: u32,
}

impl Span {
    pub fn new(line: u32, col: u32) -> Self {
        Span { line, col }
    }
}

impl fmt::Display for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.col)
    }
}

/// A parsed file: its commands in order, plus the warnings the lexer and parser raised.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    /// The name errors and warnings are reported under.
    pub file: String,
    pub commands: Vec<Command>,
    /// The parser's warnings. Only [`crate::validate`] hands them out, merged with its own,
    /// so that each warning reaches the user once.
    pub(crate) warnings: Vec<Warning>,
}

impl Parsed {
    /// Commands that filebench would execute: everything up to and including the first
    /// `run`, `psrun` or `quit`. What follows is never reached.
    pub fn live_commands(&self) -> &[Command] {
        let end = self
            .commands
            .iter()
            .position(|c| c.kind.ends_script())
            .map_or(self.commands.len(), |i| i + 1);
        &self.commands[..end]
    }

    /// Every variable the executed part of the file sets or reads (without `$`), sorted:
    /// the names a caller may set from outside (`--set`). Composite flowops' `$local`s are
    /// included, since an unbound one falls back to the global of that name.
    pub fn variables(&self) -> BTreeSet<String> {
        fn attrs(list: &[Attr], names: &mut BTreeSet<String>) {
            for a in list {
                if let Some(v) = &a.value {
                    v.variables(names);
                }
            }
        }
        fn locals(list: &[LocalVar], names: &mut BTreeSet<String>) {
            for l in list {
                names.insert(l.name.clone());
                if let Some(v) = &l.value {
                    v.variables(names);
                }
            }
        }
        fn flowops(list: &[FlowopUse], names: &mut BTreeSet<String>) {
            for f in list {
                attrs(&f.attrs, names);
                locals(&f.locals, names);
            }
        }
        let mut names = BTreeSet::new();
        for c in self.live_commands() {
            match &c.kind {
                CommandKind::Set(s) => {
                    names.insert(s.name.clone());
                    s.value.variables(&mut names);
                }
                CommandKind::DefineFileset(f) => attrs(&f.attrs, &mut names),
                CommandKind::DefineProcess(p) => {
                    attrs(&p.attrs, &mut names);
                    for t in &p.threads {
                        attrs(&t.attrs, &mut names);
                        flowops(&t.flowops, &mut names);
                    }
                }
                CommandKind::DefineComposite(d) => {
                    attrs(&d.attrs, &mut names);
                    locals(&d.locals, &mut names);
                    flowops(&d.flowops, &mut names);
                }
                CommandKind::Eventgen(a)
                | CommandKind::EnableMulti(a)
                | CommandKind::DoMultiSync(a) => attrs(a, &mut names),
                CommandKind::Run(Some(v)) | CommandKind::Sleep(v) | CommandKind::Debug(v) => {
                    v.variables(&mut names)
                }
                CommandKind::Psrun { period, seconds } => {
                    for v in [period, seconds].into_iter().flatten() {
                        v.variables(&mut names);
                    }
                }
                CommandKind::Echo(t) | CommandKind::System(t) => t.variables(&mut names),
                _ => {}
            }
        }
        names
    }

    /// `define fileset` and `define file` commands, in order.
    pub fn filesets(&self) -> impl Iterator<Item = &FilesetDef> {
        self.commands.iter().filter_map(|c| match &c.kind {
            CommandKind::DefineFileset(f) => Some(f),
            _ => None,
        })
    }

    /// `define process` commands, in order.
    pub fn processes(&self) -> impl Iterator<Item = &ProcessDef> {
        self.commands.iter().filter_map(|c| match &c.kind {
            CommandKind::DefineProcess(p) => Some(p),
            _ => None,
        })
    }

    /// Composite flowop definitions (`define flowop name=X {…}`), in order.
    pub fn composites(&self) -> impl Iterator<Item = &CompositeDef> {
        self.commands.iter().filter_map(|c| match &c.kind {
            CommandKind::DefineComposite(d) => Some(d),
            _ => None,
        })
    }
}

/// One top-level command.
#[derive(Debug, Clone, PartialEq)]
pub struct Command {
    /// Where the command keyword starts.
    pub span: Span,
    pub kind: CommandKind,
}

/// Every command of the language. Legacy commands that have no effect in iolab are kept as
/// [`CommandKind::Ignored`] so that tools can still list them.
#[derive(Debug, Clone, PartialEq)]
pub enum CommandKind {
    /// `set $v = value`, and the legacy `define randvar name=$v, …` (see [`SetVar::legacy`]).
    Set(SetVar),
    /// `set mode quit timeout|alldone|firstdone`.
    SetMode(QuitMode),
    /// `set mode nousestats`: accepted, no effect.
    SetNoUseStats,
    /// `define fileset …` or `define file …`.
    DefineFileset(FilesetDef),
    DefineProcess(ProcessDef),
    /// `define flowop name=X [, $local[=default] …] { flowop … }`.
    DefineComposite(CompositeDef),
    /// `create files` (also `create fileset(s)` / `create file`).
    CreateFiles,
    /// `run [N]`: `None` means filebench's default (60 s).
    Run(Option<Value>),
    /// `psrun [±P] [N]`: period (negative = interval stats, reset after each) and runtime.
    Psrun {
        period: Option<Value>,
        seconds: Option<Value>,
    },
    Sleep(Value),
    Echo(Text),
    System(Text),
    /// `eventgen rate=N`.
    Eventgen(Vec<Attr>),
    EnableLathist,
    /// `enable multi master=…, client=…`: accepted, ignored with a warning.
    EnableMulti(Vec<Attr>),
    /// `domultisync value=N`: accepted, ignored with a warning.
    DoMultiSync(Vec<Attr>),
    /// `list [fileset|flowop]`.
    List(Option<String>),
    Debug(Value),
    Version,
    /// `quit` (also the 1.4 spelling `exit`).
    Quit,
    /// A filebench 1.4 command that iolab accepts and ignores (`stats snap`, `vars`, …).
    Ignored(IgnoredCommand),
}

impl CommandKind {
    /// The keyword a command starts with, for messages.
    pub fn keyword(&self) -> &'static str {
        match self {
            CommandKind::Set(_) | CommandKind::SetMode(_) | CommandKind::SetNoUseStats => "set",
            CommandKind::DefineFileset(_)
            | CommandKind::DefineProcess(_)
            | CommandKind::DefineComposite(_) => "define",
            CommandKind::CreateFiles => "create",
            CommandKind::Run(_) => "run",
            CommandKind::Psrun { .. } => "psrun",
            CommandKind::Sleep(_) => "sleep",
            CommandKind::Echo(_) => "echo",
            CommandKind::System(_) => "system",
            CommandKind::Eventgen(_) => "eventgen",
            CommandKind::EnableLathist | CommandKind::EnableMulti(_) => "enable",
            CommandKind::DoMultiSync(_) => "domultisync",
            CommandKind::List(_) => "list",
            CommandKind::Debug(_) => "debug",
            CommandKind::Version => "version",
            CommandKind::Quit => "quit",
            CommandKind::Ignored(_) => "(legacy)",
        }
    }

    /// filebench stops reading the script at these.
    pub fn ends_script(&self) -> bool {
        matches!(
            self,
            CommandKind::Run(_) | CommandKind::Psrun { .. } | CommandKind::Quit
        )
    }
}

/// `set mode quit …`: when a run ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QuitMode {
    /// After the `run N` time (filebench's default).
    Timeout,
    /// When every thread has finished.
    AllDone,
    /// When the first thread finishes.
    FirstDone,
}

/// A variable assignment.
#[derive(Debug, Clone, PartialEq)]
pub struct SetVar {
    /// Variable name without the `$`.
    pub name: String,
    pub name_span: Span,
    pub value: Value,
    /// Written as the 1.4 `define randvar name=$v, …`; `value` is then a [`ValueKind::Randvar`].
    pub legacy: bool,
}

/// A legacy command kept only for listing: its keyword and the rest of its line.
#[derive(Debug, Clone, PartialEq)]
pub struct IgnoredCommand {
    pub keyword: String,
    /// The remaining tokens of the line, joined by single spaces.
    pub args: String,
}

/// `define file` describes a fileset of exactly one entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FilesetKind {
    File,
    Fileset,
}

#[derive(Debug, Clone, PartialEq)]
pub struct FilesetDef {
    /// Where `define` starts.
    pub span: Span,
    pub kind: FilesetKind,
    pub attrs: Vec<Attr>,
}

impl FilesetDef {
    /// The attributes that decide how much the fileset writes (`entries`, `size`,
    /// `prealloc`) that read variables, with those variables (without `$`): what a caller
    /// can set to make it smaller, e.g. `[("entries", ["nfiles"]), ("size", ["filesize"])]`.
    pub fn size_variables(&self) -> Vec<(&'static str, BTreeSet<String>)> {
        ["entries", "size", "prealloc"]
            .into_iter()
            .filter_map(|name| {
                let mut vars = BTreeSet::new();
                find_attr(&self.attrs, name)?
                    .value
                    .as_ref()?
                    .variables(&mut vars);
                (!vars.is_empty()).then_some((name, vars))
            })
            .collect()
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ProcessDef {
    /// Where `define` starts.
    pub span: Span,
    pub attrs: Vec<Attr>,
    pub threads: Vec<ThreadDef>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ThreadDef {
    /// Where `thread` starts.
    pub span: Span,
    pub attrs: Vec<Attr>,
    pub flowops: Vec<FlowopUse>,
}

/// `flowop TYPE attrs` inside a thread or a composite definition. `TYPE` is a built-in
/// flowop or a composite defined earlier; `locals` are `$var=value` arguments to a composite.
#[derive(Debug, Clone, PartialEq)]
pub struct FlowopUse {
    /// Where the `flowop` keyword starts.
    pub span: Span,
    pub op: String,
    pub op_span: Span,
    pub attrs: Vec<Attr>,
    pub locals: Vec<LocalVar>,
}

/// A composite flowop: a reusable sequence of flowops with local variables.
#[derive(Debug, Clone, PartialEq)]
pub struct CompositeDef {
    /// Where `define` starts.
    pub span: Span,
    pub attrs: Vec<Attr>,
    pub locals: Vec<LocalVar>,
    pub flowops: Vec<FlowopUse>,
}

/// `$name` or `$name=value` in a composite definition (declaration with optional default)
/// or in a composite's use (argument).
#[derive(Debug, Clone, PartialEq)]
pub struct LocalVar {
    pub name: String,
    pub span: Span,
    pub value: Option<Value>,
}

/// `name=value`, or a bare `name` (a flag, meaning true).
#[derive(Debug, Clone, PartialEq)]
pub struct Attr {
    /// Canonical name: the aliases `filename` and `filesize` become `filesetname` and `size`.
    pub name: String,
    /// As written, for messages.
    pub written: String,
    pub span: Span,
    pub value: Option<Value>,
}

/// The last attribute called `name`, the one filebench uses when an attribute is repeated.
pub fn find_attr<'a>(attrs: &'a [Attr], name: &str) -> Option<&'a Attr> {
    attrs.iter().rev().find(|a| a.name == name)
}

#[derive(Debug, Clone, PartialEq)]
pub struct Value {
    /// Where the value starts (for a negative number, its `-`).
    pub span: Span,
    pub kind: ValueKind,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ValueKind {
    /// An integer, size suffixes applied (`16k` = 16384).
    Int(i64),
    /// A decimal without suffix (`1.5`); filebench has none.
    Float(f64),
    Bool(bool),
    /// A bare word: `/tmp`, `bigfileset`, `cvar-gamma`, `mean:16384;gamma:1.5`.
    Str(String),
    /// A quoted string, possibly with `$var` references.
    Text(Text),
    /// `$name` (stored without `$`).
    Var(String),
    /// `randvar(...)`; only on the right of `set`.
    Randvar(RandvarDef),
    /// `cvar(...)`; only on the right of `set`.
    Cvar(CvarDef),
    /// Legacy 1.4 integer arithmetic on the right of `set`.
    Expr(Box<Expr>),
    /// `randtable = {{pct, lo, hi}, …}` inside a randvar.
    Table(Vec<TableRow>),
}

impl Value {
    /// Adds the variables this value reads to `names`.
    pub fn variables(&self, names: &mut BTreeSet<String>) {
        match &self.kind {
            ValueKind::Var(name) => {
                names.insert(name.clone());
            }
            ValueKind::Text(t) => t.variables(names),
            ValueKind::Randvar(RandvarDef { attrs }) | ValueKind::Cvar(CvarDef { attrs }) => {
                for a in attrs {
                    if let Some(v) = &a.value {
                        v.variables(names);
                    }
                }
            }
            ValueKind::Expr(e) => e.variables(names),
            ValueKind::Table(rows) => {
                for r in rows {
                    for v in [&r.percent, &r.low, &r.high] {
                        v.variables(names);
                    }
                }
            }
            ValueKind::Int(_) | ValueKind::Float(_) | ValueKind::Bool(_) | ValueKind::Str(_) => {}
        }
    }

    /// The string a bare word or a quoted string without variables stands for.
    pub fn as_literal_str(&self) -> Option<String> {
        match &self.kind {
            ValueKind::Str(s) => Some(s.clone()),
            ValueKind::Text(t) => t.as_literal(),
            _ => None,
        }
    }
}

/// A quoted string split into literal text and `$var` references, as filebench expands them.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Text {
    pub parts: Vec<TextPart>,
}

impl Text {
    /// Adds the `$variables` the text expands to `names`.
    pub fn variables(&self, names: &mut BTreeSet<String>) {
        for p in &self.parts {
            if let TextPart::Var { name, .. } = p {
                names.insert(name.clone());
            }
        }
    }

    /// The text when it has no variable references.
    pub fn as_literal(&self) -> Option<String> {
        let mut s = String::new();
        for p in &self.parts {
            match p {
                TextPart::Lit(l) => s.push_str(l),
                TextPart::Var { .. } => return None,
            }
        }
        Some(s)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum TextPart {
    Lit(String),
    Var { name: String, span: Span },
}

/// `randvar(type=…, min=…, …)`: attributes as written; a tabular one has a `randtable`
/// attribute whose value is a [`ValueKind::Table`].
#[derive(Debug, Clone, PartialEq)]
pub struct RandvarDef {
    pub attrs: Vec<Attr>,
}

impl RandvarDef {
    /// The `randtable` rows, if any.
    pub fn table(&self) -> Option<&[TableRow]> {
        match find_attr(&self.attrs, "randtable")?.value.as_ref()?.kind {
            ValueKind::Table(ref rows) => Some(rows),
            _ => None,
        }
    }
}

/// One `{percent, low, high}` row of a tabular randvar.
#[derive(Debug, Clone, PartialEq)]
pub struct TableRow {
    /// Where the row's `{` is.
    pub span: Span,
    pub percent: Value,
    pub low: Value,
    pub high: Value,
}

/// `cvar(type=cvar-X, parameters="k:v;k:v", min=, max=, round=)`.
#[derive(Debug, Clone, PartialEq)]
pub struct CvarDef {
    pub attrs: Vec<Attr>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
}

impl BinOp {
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
        }
    }
}

impl Expr {
    /// Adds the variables the expression reads to `names`.
    pub fn variables(&self, names: &mut BTreeSet<String>) {
        match self {
            Expr::Operand(v) => v.variables(names),
            Expr::Binary { lhs, rhs, .. } => {
                lhs.variables(names);
                rhs.variables(names);
            }
        }
    }
}

/// Integer arithmetic: `*` and `/` bind tighter than `+` and `-`, all left-associative;
/// parentheses group.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// An integer or a variable.
    Operand(Value),
    Binary {
        op: BinOp,
        /// Where the operator is.
        span: Span,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attr(name: &str, v: i64) -> Attr {
        Attr {
            name: name.into(),
            written: name.into(),
            span: Span::default(),
            value: Some(Value {
                span: Span::default(),
                kind: ValueKind::Int(v),
            }),
        }
    }

    #[test]
    fn last_attribute_wins() {
        let attrs = vec![attr("fd", 1), attr("iosize", 2), attr("fd", 3)];
        let fd = find_attr(&attrs, "fd").unwrap();
        assert_eq!(fd.value.as_ref().unwrap().kind, ValueKind::Int(3));
        assert!(find_attr(&attrs, "name").is_none());
    }

    #[test]
    fn variables_set_and_read_before_run() {
        let p = crate::parse_str(
            "t.f",
            "set $nfiles = 10\nset $rv = randvar(type=gamma, mean=$meansize)\n\
             define fileset name=a,path=$dir,entries=$nfiles,size=$rv\n\
             define flowop name=c, $loc=$deflt { flowop read name=r, iosize=$io }\n\
             define process name=p,instances=$np { thread name=t { flowop c name=u, $loc=$arg } }\n\
             echo \"$msg\"\nrun $runtime\nset $late = 1\n",
        )
        .unwrap();
        let names: Vec<String> = p.variables().into_iter().collect();
        assert_eq!(
            names,
            [
                "arg", "deflt", "dir", "io", "loc", "meansize", "msg", "nfiles", "np", "runtime",
                "rv"
            ]
        );
    }

    #[test]
    fn text_literal_only_without_variables() {
        let t = Text {
            parts: vec![TextPart::Lit("a".into()), TextPart::Lit("b".into())],
        };
        assert_eq!(t.as_literal().as_deref(), Some("ab"));
        let t = Text {
            parts: vec![TextPart::Var {
                name: "x".into(),
                span: Span::default(),
            }],
        };
        assert_eq!(t.as_literal(), None);
    }
}
