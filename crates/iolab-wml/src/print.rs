//! Printing a syntax tree back as WML text.
//!
//! [`to_wml`] writes one command per line (a process's threads and flowops indented), in the
//! order of the tree; parsing the result gives the same tree, spans aside: comments, the
//! original layout and `define` aliases (`define files`) are not kept, but what each command
//! means is. Attribute names are printed as written (`filename`, not the canonical
//! `filesetname`); legacy forms (`define randvar`, arithmetic in `set`) stay legacy, so the
//! printed file draws the same warnings.

use std::fmt::{self, Write};

use crate::ast::*;

/// The WML text of a parsed file.
pub fn to_wml(parsed: &Parsed) -> String {
    parsed.to_string()
}

impl fmt::Display for Parsed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for c in &self.commands {
            writeln!(f, "{}", c.kind)?;
        }
        Ok(())
    }
}

impl fmt::Display for CommandKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CommandKind::Set(s) if s.legacy => {
                // Only a randvar can be written as `define randvar`.
                let ValueKind::Randvar(r) = &s.value.kind else {
                    return write!(f, "set ${} = {}", s.name, SetRhs(&s.value));
                };
                write!(f, "define randvar name=${}", s.name)?;
                for a in &r.attrs {
                    write!(f, ", {a}")?;
                }
                Ok(())
            }
            CommandKind::Set(s) => write!(f, "set ${} = {}", s.name, SetRhs(&s.value)),
            CommandKind::SetMode(m) => {
                let m = match m {
                    QuitMode::Timeout => "timeout",
                    QuitMode::AllDone => "alldone",
                    QuitMode::FirstDone => "firstdone",
                };
                write!(f, "set mode quit {m}")
            }
            CommandKind::SetNoUseStats => f.write_str("set mode nousestats"),
            CommandKind::DefineFileset(d) => {
                let kw = match d.kind {
                    FilesetKind::File => "file",
                    FilesetKind::Fileset => "fileset",
                };
                write!(f, "define {kw}{}", Attrs(&d.attrs, &[]))
            }
            CommandKind::DefineProcess(p) => {
                writeln!(f, "define process{} {{", Attrs(&p.attrs, &[]))?;
                for t in &p.threads {
                    writeln!(f, "  thread{} {{", Attrs(&t.attrs, &[]))?;
                    for op in &t.flowops {
                        writeln!(f, "    {op}")?;
                    }
                    writeln!(f, "  }}")?;
                }
                f.write_char('}')
            }
            CommandKind::DefineComposite(d) => {
                writeln!(f, "define flowop{} {{", Attrs(&d.attrs, &d.locals))?;
                for op in &d.flowops {
                    writeln!(f, "  {op}")?;
                }
                f.write_char('}')
            }
            CommandKind::CreateFiles => f.write_str("create files"),
            CommandKind::Run(v) => {
                f.write_str("run")?;
                opt(f, v.as_ref())
            }
            CommandKind::Psrun { period, seconds } => {
                f.write_str("psrun")?;
                opt(f, period.as_ref())?;
                opt(f, seconds.as_ref())
            }
            CommandKind::Sleep(v) => write!(f, "sleep {v}"),
            CommandKind::Debug(v) => write!(f, "debug {v}"),
            CommandKind::Echo(t) => write!(f, "echo {t}"),
            CommandKind::System(t) => write!(f, "system {t}"),
            CommandKind::Eventgen(a) => write!(f, "eventgen{}", Attrs(a, &[])),
            CommandKind::EnableLathist => f.write_str("enable lathist"),
            CommandKind::EnableMulti(a) => write!(f, "enable multi{}", Attrs(a, &[])),
            CommandKind::DoMultiSync(a) => write!(f, "domultisync{}", Attrs(a, &[])),
            CommandKind::List(None) => f.write_str("list"),
            CommandKind::List(Some(what)) => write!(f, "list {what}"),
            CommandKind::Version => f.write_str("version"),
            CommandKind::Quit => f.write_str("quit"),
            CommandKind::Ignored(i) if i.args.is_empty() => f.write_str(&i.keyword),
            CommandKind::Ignored(i) => write!(f, "{} {}", i.keyword, i.args),
        }
    }
}

/// ` value` after `run`/`psrun`, when there is one.
fn opt(f: &mut fmt::Formatter<'_>, v: Option<&Value>) -> fmt::Result {
    match v {
        Some(v) => write!(f, " {v}"),
        None => Ok(()),
    }
}

/// An attribute list with a leading space (nothing when empty), then the `$local`s.
struct Attrs<'a>(&'a [Attr], &'a [LocalVar]);

impl fmt::Display for Attrs<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let items = self
            .0
            .iter()
            .map(|a| a.to_string())
            .chain(self.1.iter().map(|l| l.to_string()));
        for (i, item) in items.enumerate() {
            f.write_str(if i == 0 { " " } else { ", " })?;
            f.write_str(&item)?;
        }
        Ok(())
    }
}

impl fmt::Display for FlowopUse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "flowop {}{}", self.op, Attrs(&self.attrs, &self.locals))
    }
}

impl fmt::Display for Attr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.written)?;
        match &self.value {
            Some(v) => write!(f, "={v}"),
            None => Ok(()),
        }
    }
}

impl fmt::Display for LocalVar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "${}", self.name)?;
        match &self.value {
            Some(v) => write!(f, "={v}"),
            None => Ok(()),
        }
    }
}

/// The right of `set`: an expression is parenthesised whole, which also keeps `set $x = (5)`
/// (an expression of one operand) apart from `set $x = 5`.
struct SetRhs<'a>(&'a Value);

impl fmt::Display for SetRhs<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0.kind {
            ValueKind::Expr(e) => match e.as_ref() {
                Expr::Operand(v) => write!(f, "({v})"),
                e @ Expr::Binary { .. } => write!(f, "{e}"),
            },
            _ => write!(f, "{}", self.0),
        }
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Operand(v) => write!(f, "{v}"),
            // Every operation in parentheses: the tree's grouping, whatever the precedence.
            // Spaces around the operator: `-` or `/` touching a word would join it.
            Expr::Binary { op, lhs, rhs, .. } => write!(f, "({lhs} {} {rhs})", op.symbol()),
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ValueKind::Int(n) => write!(f, "{n}"),
            ValueKind::Float(x) => {
                // Shortest text that reads back as the same number; a decimal point is kept
                // (`2.0`) so that it stays a decimal.
                let s = x.to_string();
                if s.contains('.') {
                    f.write_str(&s)
                } else {
                    write!(f, "{s}.0")
                }
            }
            ValueKind::Bool(b) => write!(f, "{b}"),
            ValueKind::Str(s) => f.write_str(s),
            ValueKind::Text(t) => write!(f, "{t}"),
            ValueKind::Var(v) => write!(f, "${v}"),
            ValueKind::Randvar(r) => write!(f, "randvar({})", List(&r.attrs)),
            ValueKind::Cvar(c) => write!(f, "cvar({})", List(&c.attrs)),
            ValueKind::Expr(e) => write!(f, "{e}"),
            ValueKind::Table(rows) => {
                f.write_char('{')?;
                for (i, r) in rows.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{{{}, {}, {}}}", r.percent, r.low, r.high)?;
                }
                f.write_char('}')
            }
        }
    }
}

/// Attributes separated by `, `, without a leading space.
struct List<'a>(&'a [Attr]);

impl fmt::Display for List<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, a) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{a}")?;
        }
        Ok(())
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_char('"')?;
        for p in &self.parts {
            match p {
                TextPart::Lit(l) => {
                    for c in l.chars() {
                        match c {
                            '\n' => f.write_str("\\n")?,
                            '\t' => f.write_str("\\t")?,
                            '\\' | '"' | '$' => write!(f, "\\{c}")?,
                            c => f.write_char(c)?,
                        }
                    }
                }
                // Braced: a letter right after the name would otherwise join it.
                TextPart::Var { name, .. } => write!(f, "${{{name}}}")?,
            }
        }
        f.write_char('"')
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reprint(src: &str) -> String {
        to_wml(&crate::parse_str("t.f", src).unwrap())
    }

    #[test]
    fn prints_a_workload() {
        let src = "set $dir=/tmp\nset $n = 4k*2\n\
                   define fileset name=fs,path=$dir,entries=10,size=1m,prealloc\n\
                   define process name=p,instances=2 {\n thread name=t {\n  \
                   flowop read name=r,filename=fs,iosize=8k,random\n  flowop finishoncount name=f,value=3\n }\n}\n\
                   echo \"dir is $dir\\n\"\nrun 10\n";
        assert_eq!(
            reprint(src),
            "set $dir = /tmp\n\
             set $n = (4096 * 2)\n\
             define fileset name=fs, path=$dir, entries=10, size=1048576, prealloc\n\
             define process name=p, instances=2 {\n  thread name=t {\n    \
             flowop read name=r, filename=fs, iosize=8192, random\n    \
             flowop finishoncount name=f, value=3\n  }\n}\n\
             echo \"dir is ${dir}\\n\"\n\
             run 10\n"
        );
    }

    #[test]
    fn floats_stay_decimals() {
        assert_eq!(reprint("set $x = 2.0\n"), "set $x = 2.0\n");
        assert_eq!(reprint("set $x = -0.25\n"), "set $x = -0.25\n");
    }
}
