//! Recursive-descent parser from tokens to the [`crate::ast`].
//!
//! The grammar follows filebench master's `parser_gram.y` plus the 1.4 dialect. Parsing stops
//! at the first syntax error: after a missing brace nothing that follows can be trusted.
//! Everything that needs to know which names exist (flowop types, filesets, variables) is
//! left to [`crate::validate`].

use crate::ast::*;
use crate::error::{ErrorKind, Warning, WarningKind, WmlError};
use crate::lexer::{self, Tok, Token};
use iolab_util::suggest::did_you_mean;

/// Top-level commands, for "unknown command" hints.
const COMMANDS: &[&str] = &[
    "create",
    "debug",
    "define",
    "domultisync",
    "echo",
    "enable",
    "eventgen",
    "list",
    "psrun",
    "quit",
    "run",
    "set",
    "sleep",
    "system",
    "version",
];

/// filebench 1.4 commands that iolab accepts and ignores; they take the rest of their line.
const IGNORED_COMMANDS: &[&str] = &[
    "stats",
    "usage",
    "load",
    "vars",
    "log",
    "warmup",
    "fscheck",
    "fsflush",
    "help",
    "shutdown",
    "enable_osprof",
    "disable_osprof",
];

/// Words that end an attribute list when they appear without `=`: this is how a flowop
/// without attributes is told from a flag attribute on the next line.
const RESERVED: &[&str] = &[
    "flowop",
    "thread",
    "process",
    "processes",
    "file",
    "files",
    "fileset",
    "filesets",
    "randvar",
    "exit",
    "foreach",
];

fn is_reserved(w: &str) -> bool {
    COMMANDS.contains(&w) || IGNORED_COMMANDS.contains(&w) || RESERVED.contains(&w)
}

fn canonical_attr(name: &str) -> &str {
    match name {
        "filename" => "filesetname",
        "filesize" => "size",
        other => other,
    }
}

pub(crate) fn parse(file: &str, src: &str) -> Result<Parsed, WmlError> {
    let lexed = lexer::lex(file, src)?;
    let mut p = Parser {
        file,
        toks: lexed.tokens,
        pos: 0,
        warnings: lexed.warnings,
    };
    let mut commands = Vec::new();
    while p.peek().tok != Tok::Eof {
        commands.push(p.command()?);
    }
    Ok(Parsed {
        file: file.to_string(),
        commands,
        warnings: p.warnings,
    })
}

struct Parser<'a> {
    file: &'a str,
    toks: Vec<Token>,
    pos: usize,
    warnings: Vec<Warning>,
}

fn describe(t: &Token) -> String {
    match &t.tok {
        Tok::Eof => "end of file".to_string(),
        Tok::Text(_) => format!("string {}", t.text),
        _ => format!("`{}`", t.text),
    }
}

impl Parser<'_> {
    fn peek(&self) -> &Token {
        &self.toks[self.pos]
    }

    fn peek_at(&self, n: usize) -> &Token {
        &self.toks[(self.pos + n).min(self.toks.len() - 1)]
    }

    /// Moves past the current token (never past end of file).
    fn advance(&mut self) {
        if self.toks[self.pos].tok != Tok::Eof {
            self.pos += 1;
        }
    }

    /// Moves past the current token and returns it.
    fn bump(&mut self) -> Token {
        let t = self.toks[self.pos].clone();
        if t.tok != Tok::Eof {
            self.pos += 1;
        }
        t
    }

    fn peek_word(&self) -> Option<&str> {
        match &self.peek().tok {
            Tok::Word(w) => Some(w),
            _ => None,
        }
    }

    fn error(&self, kind: ErrorKind, t: &Token, msg: impl Into<String>) -> WmlError {
        WmlError::new(kind, self.file, t.span, t.text.clone(), msg)
    }

    /// "expected X, found Y", with a hint when Y looks like an attribute missing its comma.
    fn unexpected(&self, expected: &str) -> WmlError {
        let t = self.peek();
        let hint = match (&t.tok, &self.peek_at(1).tok) {
            (Tok::Word(w), Tok::Eq) => Some(format!(
                "attributes are separated by commas: is a `,` missing before `{w}`?"
            )),
            _ => None,
        };
        self.error(
            ErrorKind::Syntax,
            t,
            format!("expected {expected}, found {}", describe(t)),
        )
        .with_hint_opt(hint)
    }

    fn warn(&mut self, kind: WarningKind, span: Span, msg: impl Into<String>) {
        self.warnings
            .push(Warning::new(kind, self.file, span, msg.into()));
    }

    fn expect(&mut self, tok: Tok, expected: &str) -> Result<Token, WmlError> {
        if self.peek().tok == tok {
            Ok(self.bump())
        } else {
            Err(self.unexpected(expected))
        }
    }

    /// Source text of tokens `from..self.pos`, joined by spaces.
    fn text_since(&self, from: usize) -> String {
        self.toks[from..self.pos]
            .iter()
            .map(|t| t.text.as_str())
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn command(&mut self) -> Result<Command, WmlError> {
        let t = self.peek().clone();
        let Tok::Word(w) = &t.tok else {
            return Err(if t.tok == Tok::RBrace {
                self.error(ErrorKind::Syntax, &t, "unmatched `}`")
                    .with_hint("there are more `}` than `{` before this point")
            } else {
                self.unexpected("a command")
            });
        };
        let kind = match w.as_str() {
            "set" => self.set()?,
            "define" => self.define()?,
            "create" => self.create()?,
            "run" => {
                self.advance();
                CommandKind::Run(self.opt_number()?)
            }
            "psrun" => {
                self.advance();
                let period = self.opt_number()?;
                let seconds = self.opt_number()?;
                CommandKind::Psrun { period, seconds }
            }
            "sleep" => {
                self.advance();
                CommandKind::Sleep(self.number("a number of seconds after `sleep`")?)
            }
            "debug" => {
                self.advance();
                CommandKind::Debug(self.number("a debug level after `debug`")?)
            }
            "echo" | "system" => {
                self.advance();
                let Tok::Text(text) = self.peek().tok.clone() else {
                    return Err(self.unexpected(&format!("a quoted string after `{w}`")));
                };
                self.advance();
                if w == "echo" {
                    CommandKind::Echo(text)
                } else {
                    CommandKind::System(text)
                }
            }
            "eventgen" => {
                self.advance();
                CommandKind::Eventgen(self.attr_list(false)?.0)
            }
            "enable" => {
                self.advance();
                match self.peek_word() {
                    Some("lathist") => {
                        self.advance();
                        CommandKind::EnableLathist
                    }
                    Some("multi") => {
                        self.advance();
                        CommandKind::EnableMulti(self.attr_list(false)?.0)
                    }
                    _ => return Err(self.unexpected("`lathist` or `multi` after `enable`")),
                }
            }
            "domultisync" => {
                self.advance();
                CommandKind::DoMultiSync(self.attr_list(false)?.0)
            }
            "list" => {
                self.advance();
                match self.peek_word() {
                    Some(w @ ("fileset" | "filesets" | "flowop" | "flowops")) => {
                        let w = w.trim_end_matches('s').to_string();
                        self.advance();
                        CommandKind::List(Some(w))
                    }
                    _ => CommandKind::List(None),
                }
            }
            "version" => {
                self.advance();
                CommandKind::Version
            }
            "quit" => {
                self.advance();
                CommandKind::Quit
            }
            "exit" => {
                self.advance();
                self.warn(
                    WarningKind::Legacy,
                    t.span,
                    "`exit` is filebench 1.4 syntax for `quit`",
                );
                CommandKind::Quit
            }
            w if IGNORED_COMMANDS.contains(&w) => {
                let keyword = w.to_string();
                self.advance();
                let from = self.pos;
                while self.peek().tok != Tok::Eof && self.peek().span.line == t.span.line {
                    self.advance();
                }
                self.warn(
                    WarningKind::Legacy,
                    t.span,
                    format!("filebench 1.4 command `{keyword}` is ignored"),
                );
                CommandKind::Ignored(IgnoredCommand {
                    keyword,
                    args: self.text_since(from),
                })
            }
            "foreach" => {
                return Err(self
                    .error(
                        ErrorKind::Unsupported,
                        &t,
                        "`foreach` (filebench 1.4) is not supported",
                    )
                    .with_hint("write the commands out once per value"))
            }
            "thread" => {
                return Err(self
                    .error(ErrorKind::Syntax, &t, "`thread` outside `define process`")
                    .with_hint(
                        "threads are declared inside `define process name=… { thread name=… { flowop … } }`",
                    ))
            }
            "flowop" => {
                return Err(self
                    .error(ErrorKind::Syntax, &t, "`flowop` outside a thread")
                    .with_hint(
                        "flowops go inside `thread … { }` or a composite `define flowop name=… { }`",
                    ))
            }
            other => {
                let hint = did_you_mean(other, COMMANDS.iter().copied()).unwrap_or_else(|| {
                    "commands are set, define, create, run, psrun, sleep, echo, system, \
                     eventgen, enable, list, debug, version and quit"
                        .to_string()
                });
                return Err(self
                    .error(
                        ErrorKind::UnknownCommand,
                        &t,
                        format!("unknown command `{other}`"),
                    )
                    .with_hint(hint));
            }
        };
        Ok(Command { span: t.span, kind })
    }

    /// A number or variable argument (`run 60`, `run $runtime`, `psrun -10`), if present.
    fn opt_number(&mut self) -> Result<Option<Value>, WmlError> {
        match (&self.peek().tok, &self.peek_at(1).tok) {
            (Tok::Int(_) | Tok::Float(_) | Tok::Var(_), _) => Ok(Some(self.value(None)?)),
            (Tok::Minus | Tok::Plus, Tok::Int(_) | Tok::Float(_)) if self.sign_adjacent() => {
                Ok(Some(self.value(None)?))
            }
            _ => Ok(None),
        }
    }

    fn number(&mut self, expected: &str) -> Result<Value, WmlError> {
        self.opt_number()?.ok_or_else(|| self.unexpected(expected))
    }

    /// Whether the current `-`/`+` touches the number after it, making it a sign.
    fn sign_adjacent(&self) -> bool {
        self.peek().end == self.peek_at(1).start
    }

    fn set(&mut self) -> Result<CommandKind, WmlError> {
        self.advance();
        let t = self.peek().clone();
        match &t.tok {
            Tok::Var(name) => {
                self.advance();
                self.expect(Tok::Eq, &format!("`=` after `${name}`"))?;
                let value = self.set_value()?;
                Ok(CommandKind::Set(SetVar {
                    name: name.clone(),
                    name_span: t.span,
                    value,
                    legacy: false,
                }))
            }
            Tok::Word(w) if w == "mode" => {
                self.advance();
                match self.peek_word() {
                    Some("quit") => {
                        self.advance();
                        let modes = ["timeout", "alldone", "firstdone"];
                        let mode = match self.peek_word() {
                            Some("timeout") => QuitMode::Timeout,
                            Some("alldone") => QuitMode::AllDone,
                            Some("firstdone") => QuitMode::FirstDone,
                            other => {
                                let hint = other.and_then(|w| did_you_mean(w, modes));
                                return Err(self
                                    .unexpected(
                                        "`timeout`, `alldone` or `firstdone` after `set mode quit`",
                                    )
                                    .with_hint_opt(hint));
                            }
                        };
                        self.advance();
                        Ok(CommandKind::SetMode(mode))
                    }
                    Some("nousestats") => {
                        self.advance();
                        Ok(CommandKind::SetNoUseStats)
                    }
                    _ => Err(self.unexpected("`quit` or `nousestats` after `set mode`")),
                }
            }
            _ => Err(self
                .unexpected("a `$variable` or `mode` after `set`")
                .with_hint("variables are written with a `$`: `set $nfiles = 1000`")),
        }
    }

    /// The right-hand side of `set`: a value, a `randvar(…)`/`cvar(…)` constructor, or a
    /// legacy integer expression.
    fn set_value(&mut self) -> Result<Value, WmlError> {
        if let (Some(w @ ("randvar" | "cvar")), Tok::LParen) =
            (self.peek_word(), &self.peek_at(1).tok)
        {
            let is_randvar = w == "randvar";
            let kw = self.bump();
            let open = self.bump();
            let (attrs, _) = self.attr_list(false)?;
            if self.peek().tok != Tok::RParen {
                return Err(self.unexpected(&format!(
                    "`)` to close `{}(` opened at {}",
                    kw.text, open.span
                )));
            }
            self.advance();
            let kind = if is_randvar {
                ValueKind::Randvar(RandvarDef { attrs })
            } else {
                ValueKind::Cvar(CvarDef { attrs })
            };
            return Ok(Value {
                span: kw.span,
                kind,
            });
        }
        let open = self.peek().clone();
        let first = if open.tok == Tok::LParen {
            self.operand()?
        } else {
            let first = self.value(None)?;
            if !matches!(
                self.peek().tok,
                Tok::Plus | Tok::Minus | Tok::Star | Tok::Slash
            ) {
                return Ok(first);
            }
            if !matches!(first.kind, ValueKind::Int(_) | ValueKind::Var(_)) {
                return Err(self
                    .error(
                        ErrorKind::InvalidValue,
                        &self.peek().clone(),
                        "arithmetic needs integers or variables on both sides",
                    )
                    .with_hint("quote strings that contain operators"));
            }
            Expr::Operand(first)
        };
        let warn_at = if open.tok == Tok::LParen {
            open.span
        } else {
            self.peek().span
        };
        self.warn(
            WarningKind::Legacy,
            warn_at,
            "arithmetic in `set` is filebench 1.4 syntax",
        );
        let expr = self.sum(first)?;
        Ok(Value {
            span: open.span,
            kind: ValueKind::Expr(Box::new(expr)),
        })
    }

    /// `product (('+' | '-') product)*`, its first operand already read.
    fn sum(&mut self, first: Expr) -> Result<Expr, WmlError> {
        let mut lhs = self.product(first)?;
        while let Some(op) = match self.peek().tok {
            Tok::Plus => Some(BinOp::Add),
            Tok::Minus => Some(BinOp::Sub),
            _ => None,
        } {
            let span = self.bump().span;
            let operand = self.operand()?;
            let rhs = self.product(operand)?;
            lhs = Expr::Binary {
                op,
                span,
                lhs: Box::new(lhs),
                rhs: Box::new(rhs),
            };
        }
        Ok(lhs)
    }

    /// `operand (('*' | '/') operand)*`, its first operand already read.
    fn product(&mut self, first: Expr) -> Result<Expr, WmlError> {
        let mut lhs = first;
        while let Some(op) = match self.peek().tok {
            Tok::Star => Some(BinOp::Mul),
            Tok::Slash => Some(BinOp::Div),
            _ => None,
        } {
            let span = self.bump().span;
            let rhs = self.operand()?;
            lhs = Expr::Binary {
                op,
                span,
                lhs: Box::new(lhs),
                rhs: Box::new(rhs),
            };
        }
        Ok(lhs)
    }

    /// An integer, a `$variable`, or a parenthesised expression.
    fn operand(&mut self) -> Result<Expr, WmlError> {
        if self.peek().tok == Tok::LParen {
            let open = self.bump();
            let first = self.operand()?;
            let inner = self.sum(first)?;
            if self.peek().tok != Tok::RParen {
                return Err(self.unexpected(&format!(
                    "an operator or `)` to close the `(` opened at {}",
                    open.span
                )));
            }
            self.advance();
            return Ok(inner);
        }
        match self.opt_number()? {
            Some(v) if !matches!(v.kind, ValueKind::Float(_)) => Ok(Expr::Operand(v)),
            Some(v) => Err(WmlError::new(
                ErrorKind::InvalidValue,
                self.file,
                v.span,
                self.toks[self.pos - 1].text.clone(),
                "arithmetic is on integers only",
            )),
            None => Err(self.unexpected("an integer, a `$variable` or `(`")),
        }
    }

    /// One value after `=` (or a command argument). `attr` names the attribute, for messages
    /// and because only `randtable` takes a `{…}` table.
    fn value(&mut self, attr: Option<&str>) -> Result<Value, WmlError> {
        let t = self.peek().clone();
        let kind = match &t.tok {
            Tok::Int(n) => ValueKind::Int(*n),
            Tok::Float(f) => ValueKind::Float(*f),
            Tok::Minus | Tok::Plus
                if matches!(self.peek_at(1).tok, Tok::Int(_) | Tok::Float(_))
                    && self.sign_adjacent() =>
            {
                let neg = t.tok == Tok::Minus;
                self.advance();
                let kind = match self.peek().tok {
                    Tok::Int(n) => ValueKind::Int(if neg { -n } else { n }),
                    Tok::Float(f) => ValueKind::Float(if neg { -f } else { f }),
                    _ => unreachable!("checked by the guard"),
                };
                self.advance();
                return Ok(Value { span: t.span, kind });
            }
            Tok::Word(w) if w == "true" => ValueKind::Bool(true),
            Tok::Word(w) if w == "false" => ValueKind::Bool(false),
            Tok::Word(w)
                if (w == "randvar" || w == "cvar") && self.peek_at(1).tok == Tok::LParen =>
            {
                return Err(self
                    .error(
                        ErrorKind::InvalidValue,
                        &t,
                        format!("`{w}(…)` can only be assigned to a variable"),
                    )
                    .with_hint(format!("write `set $x = {w}(…)` first and use `$x` here")));
            }
            Tok::Word(w) => ValueKind::Str(w.clone()),
            Tok::Text(text) => ValueKind::Text(text.clone()),
            Tok::Var(v) => ValueKind::Var(v.clone()),
            Tok::LBrace if attr == Some("randtable") => {
                return self.table();
            }
            _ => {
                let what = match attr {
                    Some(a) => format!("a value for `{a}`"),
                    None => "a value".to_string(),
                };
                return Err(self.unexpected(&what));
            }
        };
        self.advance();
        Ok(Value { span: t.span, kind })
    }

    /// `{{pct, lo, hi}, {pct, lo, hi}, …}`.
    fn table(&mut self) -> Result<Value, WmlError> {
        let open = self.bump();
        let mut rows = Vec::new();
        loop {
            let row_open = self.expect(Tok::LBrace, "`{` starting a `{percent, low, high}` row")?;
            let percent = self.value(None)?;
            self.expect(Tok::Comma, "`,` after the percentage")?;
            let low = self.value(None)?;
            self.expect(Tok::Comma, "`,` after the low bound")?;
            let high = self.value(None)?;
            self.expect(Tok::RBrace, "`}` closing the `{percent, low, high}` row")?;
            rows.push(TableRow {
                span: row_open.span,
                percent,
                low,
                high,
            });
            if self.peek().tok == Tok::Comma {
                self.advance();
            } else {
                break;
            }
        }
        if self.peek().tok != Tok::RBrace {
            return Err(self.unexpected(&format!("`}}` closing the table opened at {}", open.span)));
        }
        self.advance();
        Ok(Value {
            span: open.span,
            kind: ValueKind::Table(rows),
        })
    }

    /// Whether an attribute starts here: a `$local`, `word=`, or a bare word that is not a
    /// keyword (a flag such as `random`).
    fn attr_starts(&self) -> bool {
        match &self.peek().tok {
            Tok::Word(w) => !is_reserved(w) || self.peek_at(1).tok == Tok::Eq,
            Tok::Var(_) => true,
            _ => false,
        }
    }

    /// `attr[=value] (, attr[=value])*`, possibly empty. `$local[=value]` items are allowed
    /// only where `locals_ok` (flowops and composite definitions).
    fn attr_list(&mut self, locals_ok: bool) -> Result<(Vec<Attr>, Vec<LocalVar>), WmlError> {
        let mut attrs = Vec::new();
        let mut locals = Vec::new();
        if !self.attr_starts() {
            return Ok((attrs, locals));
        }
        loop {
            let t = self.bump();
            match &t.tok {
                Tok::Word(w) => {
                    let name = canonical_attr(w).to_string();
                    let value = if self.peek().tok == Tok::Eq {
                        self.advance();
                        let v = self.value(Some(&name))?;
                        self.no_arithmetic(w)?;
                        Some(v)
                    } else {
                        None
                    };
                    attrs.push(Attr {
                        name,
                        written: w.clone(),
                        span: t.span,
                        value,
                    });
                }
                Tok::Var(name) => {
                    if !locals_ok {
                        return Err(self
                            .error(
                                ErrorKind::Syntax,
                                &t,
                                format!("unexpected `${name}` in an attribute list"),
                            )
                            .with_hint(
                                "`$local` arguments exist only for composite flowops; \
                                 use `attribute=$variable`",
                            ));
                    }
                    let value = if self.peek().tok == Tok::Eq {
                        self.advance();
                        Some(self.value(None)?)
                    } else {
                        None
                    };
                    locals.push(LocalVar {
                        name: name.clone(),
                        span: t.span,
                        value,
                    });
                }
                _ => unreachable!("attr_starts checked the token"),
            }
            if self.peek().tok != Tok::Comma {
                break;
            }
            self.advance();
            if !self.attr_starts() {
                return Err(self.unexpected("an attribute after `,`"));
            }
        }
        Ok((attrs, locals))
    }

    /// An operator right after an attribute's value: arithmetic, which WML has only in `set`.
    fn no_arithmetic(&self, attr: &str) -> Result<(), WmlError> {
        let t = self.peek();
        if !matches!(t.tok, Tok::Plus | Tok::Minus | Tok::Star | Tok::Slash) {
            return Ok(());
        }
        if let Some(path) = self.written_path(attr) {
            // `$dir/x` is a path: proposing `set $x = … / …` would be nonsense.
            return Err(self
                .error(
                    ErrorKind::Syntax,
                    &self.toks[self.pos - 1],
                    format!("`{path}` in the value of `{attr}` is not one value"),
                )
                .with_hint(format!(
                    "a path made of a `$variable` and more is written in quotes: \
                     `{attr}=\"{path}\"` ($variables are expanded inside them)"
                )));
        }
        Err(self
            .error(
                ErrorKind::Syntax,
                t,
                format!("arithmetic in the value of `{attr}`: WML computes only in `set`"),
            )
            .with_hint(format!(
                "compute it first, `set $x = … {} …`, then write `{attr}=$x`",
                t.text
            )))
    }

    /// The value just read and what is written against it, when that reads as a path rather
    /// than arithmetic: `path=$dir/$sub`, or a word after the `/` anywhere (`$dir/x`). `None`
    /// for `8k/2` or `size=$a/$b`.
    fn written_path(&self, attr: &str) -> Option<String> {
        let value = &self.toks[self.pos.checked_sub(1)?];
        let (mut text, mut end) = (value.text.clone(), value.end);
        let (mut slash, mut word_after_slash) = (false, false);
        for t in &self.toks[self.pos..] {
            // Only what is written together, without spaces, is one value.
            if t.start != end {
                break;
            }
            match &t.tok {
                Tok::Slash => slash = true,
                Tok::Word(_) if slash => word_after_slash = true,
                Tok::Word(_) | Tok::Var(_) | Tok::Int(_) => {}
                Tok::Plus | Tok::Minus | Tok::Star | Tok::LParen | Tok::RParen => return None,
                _ => break,
            }
            text.push_str(&t.text);
            end = t.end;
        }
        (slash && (word_after_slash || attr == "path")).then_some(text)
    }

    fn open_brace(&mut self, what: &str) -> Result<Token, WmlError> {
        if self.peek().tok == Tok::LBrace {
            Ok(self.bump())
        } else {
            Err(self.unexpected(&format!("`{{` after the attributes of {what}")))
        }
    }

    fn unclosed(&self, what: &str, open: &Token) -> WmlError {
        let t = self.peek();
        self.error(
            ErrorKind::Syntax,
            t,
            format!(
                "missing `}}` to close {what} opened at {}; found {}",
                open.span,
                describe(t)
            ),
        )
    }

    fn define(&mut self) -> Result<CommandKind, WmlError> {
        let kw = self.bump();
        let t = self.peek().clone();
        let Tok::Word(what) = &t.tok else {
            return Err(self.unexpected("`fileset`, `file`, `process` or `flowop` after `define`"));
        };
        match what.as_str() {
            "file" | "files" | "fileset" | "filesets" => {
                self.advance();
                let kind = if what.starts_with("fileset") {
                    FilesetKind::Fileset
                } else {
                    FilesetKind::File
                };
                let (attrs, _) = self.attr_list(false)?;
                Ok(CommandKind::DefineFileset(FilesetDef {
                    span: kw.span,
                    kind,
                    attrs,
                }))
            }
            "process" | "processes" => {
                self.advance();
                let (attrs, _) = self.attr_list(false)?;
                let open = self.open_brace("`define process`")?;
                let mut threads = Vec::new();
                loop {
                    match &self.peek().tok {
                        Tok::RBrace => {
                            self.advance();
                            break;
                        }
                        Tok::Word(w) if w == "thread" => threads.push(self.thread()?),
                        Tok::Eof => return Err(self.unclosed("`define process`", &open)),
                        _ => return Err(self.unexpected("`thread` or `}` in `define process`")),
                    }
                }
                Ok(CommandKind::DefineProcess(ProcessDef {
                    span: kw.span,
                    attrs,
                    threads,
                }))
            }
            "flowop" => {
                self.advance();
                let (attrs, locals) = self.attr_list(true)?;
                let open = self.open_brace("`define flowop`")?;
                let flowops = self.flowop_block("`define flowop`", &open)?;
                Ok(CommandKind::DefineComposite(CompositeDef {
                    span: kw.span,
                    attrs,
                    locals,
                    flowops,
                }))
            }
            "randvar" => self.define_randvar(&kw),
            "posset" => {
                self.advance();
                let from = self.pos;
                self.attr_list(false)?;
                self.warn(
                    WarningKind::Legacy,
                    kw.span,
                    "filebench 1.4 `define posset` is ignored",
                );
                Ok(CommandKind::Ignored(IgnoredCommand {
                    keyword: "define posset".to_string(),
                    args: self.text_since(from),
                }))
            }
            "thread" => Err(self
                .error(ErrorKind::Syntax, &t, "`thread` outside `define process`")
                .with_hint("threads are declared inside `define process name=… { thread … }`")),
            other => {
                let kinds = ["fileset", "file", "process", "flowop", "randvar"];
                let hint = did_you_mean(other, kinds).unwrap_or_else(|| {
                    "expected `fileset`, `file`, `process`, `flowop` or `randvar`".to_string()
                });
                Err(self
                    .error(
                        ErrorKind::UnknownCommand,
                        &t,
                        format!("unknown definition `define {other}`"),
                    )
                    .with_hint(hint))
            }
        }
    }

    /// filebench 1.4's `define randvar name=$v, …`, kept as `set $v = randvar(…)`.
    fn define_randvar(&mut self, kw: &Token) -> Result<CommandKind, WmlError> {
        self.advance();
        let (mut attrs, _) = self.attr_list(false)?;
        let Some(idx) = attrs.iter().rposition(|a| a.name == "name") else {
            return Err(self
                .error(
                    ErrorKind::MissingAttribute,
                    kw,
                    "`define randvar` needs `name=$variable`",
                )
                .with_hint("or write `set $x = randvar(type=…, …)`"));
        };
        let name_attr = attrs.remove(idx);
        let (name, name_span) = match &name_attr.value {
            Some(Value {
                kind: ValueKind::Var(v),
                span,
            }) => (v.clone(), *span),
            _ => {
                let span = name_attr.value.as_ref().map_or(name_attr.span, |v| v.span);
                return Err(WmlError::new(
                    ErrorKind::InvalidValue,
                    self.file,
                    span,
                    name_attr.written.clone(),
                    "the name of a randvar must be a `$variable`",
                ));
            }
        };
        attrs.retain(|a| a.name != "name");
        self.warn(
            WarningKind::Legacy,
            kw.span,
            format!("`define randvar` is filebench 1.4 syntax for `set ${name} = randvar(…)`"),
        );
        Ok(CommandKind::Set(SetVar {
            name,
            name_span,
            value: Value {
                span: kw.span,
                kind: ValueKind::Randvar(RandvarDef { attrs }),
            },
            legacy: true,
        }))
    }

    fn thread(&mut self) -> Result<ThreadDef, WmlError> {
        let kw = self.bump();
        let (attrs, _) = self.attr_list(false)?;
        let open = self.open_brace("`thread`")?;
        let flowops = self.flowop_block("`thread`", &open)?;
        Ok(ThreadDef {
            span: kw.span,
            attrs,
            flowops,
        })
    }

    /// `flowop …` lines up to the closing `}` (consumed).
    fn flowop_block(&mut self, what: &str, open: &Token) -> Result<Vec<FlowopUse>, WmlError> {
        let mut flowops = Vec::new();
        loop {
            match &self.peek().tok {
                Tok::RBrace => {
                    self.advance();
                    return Ok(flowops);
                }
                Tok::Word(w) if w == "flowop" => flowops.push(self.flowop_use()?),
                Tok::Eof => return Err(self.unclosed(what, open)),
                Tok::Word(w) if w == "thread" || w == "define" => {
                    return Err(self.unclosed(what, open))
                }
                _ => return Err(self.unexpected(&format!("`flowop` or `}}` in {what}"))),
            }
        }
    }

    fn flowop_use(&mut self) -> Result<FlowopUse, WmlError> {
        let kw = self.bump();
        let t = self.peek().clone();
        let op = match &t.tok {
            Tok::Word(w) if !is_reserved(w) => w.clone(),
            _ => {
                return Err(self
                    .unexpected("a flowop type after `flowop`")
                    .with_hint("e.g. `flowop read name=read1, filesetname=…`"))
            }
        };
        self.advance();
        let (attrs, locals) = self.attr_list(true)?;
        Ok(FlowopUse {
            span: kw.span,
            op,
            op_span: t.span,
            attrs,
            locals,
        })
    }

    fn create(&mut self) -> Result<CommandKind, WmlError> {
        let kw = self.bump();
        match self.peek_word() {
            Some("files" | "file" | "fileset" | "filesets") => {
                self.advance();
                Ok(CommandKind::CreateFiles)
            }
            Some(w @ ("process" | "processes" | "thread")) => {
                let args = w.to_string();
                self.advance();
                self.warn(
                    WarningKind::Legacy,
                    kw.span,
                    format!("filebench 1.4 `create {args}` is ignored: iolab starts them at `run`"),
                );
                Ok(CommandKind::Ignored(IgnoredCommand {
                    keyword: "create".to_string(),
                    args,
                }))
            }
            _ => Err(self.unexpected("`files` after `create`")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_ok(src: &str) -> Parsed {
        match parse("t.f", src) {
            Ok(p) => p,
            Err(e) => panic!("{e}"),
        }
    }

    fn parse_err(src: &str) -> WmlError {
        parse("t.f", src).expect_err("expected a parse error")
    }

    fn int(v: &Value) -> i64 {
        match v.kind {
            ValueKind::Int(n) => n,
            ref k => panic!("not an int: {k:?}"),
        }
    }

    #[test]
    fn set_forms() {
        let p = parse_ok(
            "set $a = 5\nset $b=true\nset $c=/tmp\nset $d=\"x y\"\nset $e=$a\n\
             set mode quit firstdone\nset mode nousestats\n",
        );
        let kinds: Vec<_> = p.commands.iter().map(|c| &c.kind).collect();
        let CommandKind::Set(a) = kinds[0] else {
            panic!()
        };
        assert_eq!((a.name.as_str(), int(&a.value)), ("a", 5));
        assert_eq!(a.name_span, Span::new(1, 5));
        let CommandKind::Set(b) = kinds[1] else {
            panic!()
        };
        assert_eq!(b.value.kind, ValueKind::Bool(true));
        let CommandKind::Set(c) = kinds[2] else {
            panic!()
        };
        assert_eq!(c.value.kind, ValueKind::Str("/tmp".into()));
        assert_eq!(*kinds[5], CommandKind::SetMode(QuitMode::FirstDone));
        assert_eq!(*kinds[6], CommandKind::SetNoUseStats);
    }

    #[test]
    fn arithmetic_precedence() {
        let p = parse_ok("set $tt = $aa + 2 * $bb - 6 / 3");
        assert_eq!(p.warnings.len(), 1);
        let CommandKind::Set(s) = &p.commands[0].kind else {
            panic!()
        };
        let ValueKind::Expr(e) = &s.value.kind else {
            panic!()
        };
        // ((a + (2 * b)) - (6 / 3))
        let Expr::Binary { op, lhs, rhs, .. } = e.as_ref() else {
            panic!()
        };
        assert_eq!(*op, BinOp::Sub);
        assert!(matches!(rhs.as_ref(), Expr::Binary { op: BinOp::Div, .. }));
        let Expr::Binary { op, rhs: inner, .. } = lhs.as_ref() else {
            panic!()
        };
        assert_eq!(*op, BinOp::Add);
        assert!(matches!(
            inner.as_ref(),
            Expr::Binary { op: BinOp::Mul, .. }
        ));
    }

    /// Evaluates a `set` right-hand side through the environment.
    fn eval(src: &str) -> Option<crate::StaticValue> {
        let p = parse_ok(src);
        crate::Env::new(&p).get("r").cloned()
    }

    #[test]
    fn arithmetic_without_spaces_and_with_parentheses() {
        use crate::StaticValue::Int;
        assert_eq!(eval("set $xx = 10\nset $r=$xx/2"), Some(Int(5)));
        assert_eq!(eval("set $r=8k/2"), Some(Int(4096)));
        assert_eq!(eval("set $r = (1 + 2) * 3"), Some(Int(9)));
        assert_eq!(eval("set $r = 2 * (10 - (3 + 1)) / 4"), Some(Int(3)));
        assert_eq!(eval("set $a = 6\nset $r=($a+2)/4"), Some(Int(2)));
        assert_eq!(eval("set $r = (7)"), Some(Int(7)));
        let p = parse_ok("set $rr = (1 + 2)");
        assert_eq!(p.warnings[0].span, Span::new(1, 11), "warned at the `(`");
        assert!(p.warnings[0].message.contains("filebench 1.4"));
        let e = parse_err("set $r = (1 + 2");
        assert!(
            e.message.contains("`)` to close the `(` opened at 1:10"),
            "{e}"
        );
        let e = parse_err("set $r = 2 * ()");
        assert!(
            e.message
                .contains("expected an integer, a `$variable` or `(`"),
            "{e}"
        );
    }

    #[test]
    fn arithmetic_in_an_attribute_is_located() {
        let e = parse_err("define fileset name=a,path=/x,size=8k/2,entries=2");
        assert_eq!(e.span, Span::new(1, 38));
        assert_eq!(
            e.message,
            "arithmetic in the value of `size`: WML computes only in `set`"
        );
        assert!(e.hint.unwrap().contains("`set $x = … / …`"));
    }

    /// iolab issue 25: `path=$dir/x` was called arithmetic and got a hint to compute a
    /// division in a `set`.
    #[test]
    fn a_path_after_a_variable_is_not_called_a_division() {
        for (src, path, at) in [
            ("define fileset name=a,path=$dir/x,entries=2", "$dir/x", 28),
            (
                "define fileset name=a,path=$dir/$sub,entries=2",
                "$dir/$sub",
                28,
            ),
            ("define fileset name=a,path=$dir/x/y", "$dir/x/y", 28),
            ("define file name=a,path=/tmp,size=$s/data", "$s/data", 35),
        ] {
            let e = parse_err(src);
            assert_eq!(e.span, Span::new(1, at), "{src}");
            let attr = if path.starts_with("$s") {
                "size"
            } else {
                "path"
            };
            assert_eq!(
                e.message,
                format!("`{path}` in the value of `{attr}` is not one value"),
                "{src}"
            );
            let hint = e.hint.unwrap();
            assert!(hint.contains(&format!("`{attr}=\"{path}\"`")), "{hint}");
            assert!(!hint.contains("set $x"), "{hint}");
        }
        // Arithmetic is still arithmetic.
        let e = parse_err("define fileset name=a,path=/x,size=$a/$b,entries=2");
        assert!(
            e.message.starts_with("arithmetic in the value of `size`"),
            "{e}"
        );
        // The quoted form is the fix.
        parse_ok("define fileset name=a,path=\"$dir/x\",entries=2\n");
    }

    #[test]
    fn randvar_with_table_and_cvar() {
        let p = parse_ok(
            "set $r = randvar(type=tabular, min=1k, randtable =\n{{ 80, 1k, 4k},\n { 20, 4k, 8k}})\n\
             set $c = cvar(type=cvar-gamma,parameters=mean:16384;gamma:1.5)\n",
        );
        let CommandKind::Set(s) = &p.commands[0].kind else {
            panic!()
        };
        let ValueKind::Randvar(r) = &s.value.kind else {
            panic!()
        };
        let rows = r.table().unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(int(&rows[1].percent), 20);
        assert_eq!(rows[1].span, Span::new(3, 2));
        let CommandKind::Set(s) = &p.commands[1].kind else {
            panic!()
        };
        let ValueKind::Cvar(c) = &s.value.kind else {
            panic!()
        };
        assert_eq!(
            c.attrs[0].value.as_ref().unwrap().as_literal_str().unwrap(),
            "cvar-gamma"
        );
    }

    #[test]
    fn legacy_define_randvar_becomes_set() {
        let p = parse_ok("define randvar name=$iosize, type=gamma, min=1k, mean=5632");
        let CommandKind::Set(s) = &p.commands[0].kind else {
            panic!()
        };
        assert!(s.legacy);
        assert_eq!(s.name, "iosize");
        let ValueKind::Randvar(r) = &s.value.kind else {
            panic!()
        };
        assert_eq!(r.attrs.len(), 3);
        assert_eq!(p.warnings[0].kind, WarningKind::Legacy);
    }

    #[test]
    fn process_thread_flowops() {
        let p = parse_ok(
            "define process name=p,instances=2\n{\n  thread name=t,memsize=10m {\n    \
             flowop read name=r,filename=f,random,iosize=8k\n    flowop hog name=h\n    \
             flowop delay\n  }\n}\n",
        );
        let CommandKind::DefineProcess(proc_) = &p.commands[0].kind else {
            panic!()
        };
        let th = &proc_.threads[0];
        assert_eq!(th.flowops.len(), 3);
        let r = &th.flowops[0];
        assert_eq!(r.op, "read");
        assert_eq!(r.op_span, Span::new(4, 12));
        assert_eq!(r.attrs[1].name, "filesetname");
        assert_eq!(r.attrs[1].written, "filename");
        assert_eq!(r.attrs[2].value, None);
        assert!(th.flowops[2].attrs.is_empty());
    }

    #[test]
    fn composite_with_locals() {
        let p = parse_ok(
            "define flowop name=rw, $fs, $n=3\n{\n flowop openfile name=o,filesetname=$fs\n}\n\
             define process name=p { thread name=t { flowop rw name=x, iters=2, $fs=big } }",
        );
        let CommandKind::DefineComposite(c) = &p.commands[0].kind else {
            panic!()
        };
        assert_eq!(c.locals.len(), 2);
        assert_eq!(c.locals[1].name, "n");
        assert!(c.locals[0].value.is_none());
        let CommandKind::DefineProcess(pr) = &p.commands[1].kind else {
            panic!()
        };
        assert_eq!(pr.threads[0].flowops[0].locals[0].name, "fs");
    }

    #[test]
    fn run_and_psrun_arguments() {
        let p = parse_ok("psrun -10 60");
        let CommandKind::Psrun { period, seconds } = &p.commands[0].kind else {
            panic!()
        };
        assert_eq!(int(period.as_ref().unwrap()), -10);
        assert_eq!(int(seconds.as_ref().unwrap()), 60);
        let p = parse_ok("run\n");
        assert_eq!(p.commands[0].kind, CommandKind::Run(None));
        let p = parse_ok("run $t");
        assert!(matches!(p.commands[0].kind, CommandKind::Run(Some(_))));
    }

    #[test]
    fn attribute_lists_span_lines_after_commas() {
        let p = parse_ok("define fileset name=a,\n\tpath=/tmp,\n\tentries=3\neventgen rate = 5\n");
        assert_eq!(p.commands.len(), 2);
        let CommandKind::DefineFileset(f) = &p.commands[0].kind else {
            panic!()
        };
        assert_eq!(f.attrs[2].span, Span::new(3, 2));
    }

    #[test]
    fn legacy_commands_take_their_line() {
        let p = parse_ok("stats dump \"x.txt\"\nvars\nrun 5\n");
        assert_eq!(p.commands.len(), 3);
        let CommandKind::Ignored(i) = &p.commands[0].kind else {
            panic!()
        };
        assert_eq!(i.keyword, "stats");
        assert_eq!(i.args, "dump \"x.txt\"");
        assert_eq!(p.warnings.len(), 2);
    }

    #[test]
    fn echo_needs_a_quoted_string() {
        let e = parse_err("echo hello");
        assert_eq!(e.span, Span::new(1, 6));
        assert!(e.message.contains("quoted string"));
    }

    #[test]
    fn missing_comma_hint() {
        let e = parse_err("define process name=p { thread name=t { flowop read name=r fd=1 } }");
        assert!(e.message.contains("expected `flowop` or `}`"), "{e}");
        assert!(e.hint.unwrap().contains("`,` missing"));
    }

    #[test]
    fn trailing_comma_before_keyword() {
        let e = parse_err("define fileset name=a,\ndefine fileset name=b");
        assert_eq!(e.span, Span::new(2, 1));
        assert!(e.message.contains("an attribute after `,`"));
    }

    #[test]
    fn unclosed_process_at_eof() {
        let e = parse_err("define process name=p {\n thread name=t { flowop hog name=h }\n");
        assert_eq!(e.span, Span::new(2, 37));
        assert!(e.message.contains("missing `}`"), "{e}");
    }

    #[test]
    fn keywords_usable_as_values() {
        let p = parse_ok("define fileset name=random,path=/x,dirwidth=2");
        let CommandKind::DefineFileset(f) = &p.commands[0].kind else {
            panic!()
        };
        assert_eq!(
            f.attrs[0].value.as_ref().unwrap().as_literal_str().unwrap(),
            "random"
        );
    }

    #[test]
    fn unknown_command_hint() {
        let e = parse_err("set $a=1\nrunn 60");
        assert_eq!(e.kind, ErrorKind::UnknownCommand);
        assert_eq!(e.span, Span::new(2, 1));
        assert_eq!(e.hint.as_deref(), Some("did you mean `run`?"));
    }

    #[test]
    fn inline_randvar_rejected() {
        let e = parse_err("define fileset name=a,path=/x,size=randvar(type=gamma)");
        assert!(e.message.contains("only be assigned to a variable"));
    }
}
