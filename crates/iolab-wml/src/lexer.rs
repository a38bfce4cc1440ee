//! Tokens of WML, following filebench's `parser_lex.l` with iolab's extensions.
//!
//! Keywords are not reserved here: every identifier is a [`Tok::Word`] and the parser
//! decides from context what it means, so that `name=random` works (filebench rejects it).
//! Whether a lone `-` or `/` is an operator or the start of a word follows flex's
//! longest-match rule: `-x`, `/tmp` are words, `-` and `/` followed by a space are operators.

use crate::ast::{Span, Text, TextPart};
use crate::error::{ErrorKind, Warning, WarningKind, WmlError};

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Tok {
    /// Bare string `[/A-Za-z-][/A-Za-z0-9._:;-]*`; also every keyword.
    Word(String),
    Int(i64),
    Float(f64),
    /// `$name`, stored without the `$` and braces.
    Var(String),
    Text(Text),
    LBrace,
    RBrace,
    LParen,
    RParen,
    Eq,
    Comma,
    Plus,
    Minus,
    Star,
    Slash,
    Eof,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Token {
    pub tok: Tok,
    pub span: Span,
    /// The token as written, for messages.
    pub text: String,
    /// Character offsets into the source; `Minus` directly followed by a number is a sign.
    pub start: usize,
    pub end: usize,
}

#[derive(Debug)]
pub(crate) struct Lexed {
    pub tokens: Vec<Token>,
    pub warnings: Vec<Warning>,
}

pub(crate) fn lex(file: &str, src: &str) -> Result<Lexed, WmlError> {
    // Editors on Windows start UTF-8 files with a byte order mark; it is not part of the text
    // (and not a column).
    let src = src.strip_prefix('\u{feff}').unwrap_or(src);
    Lexer {
        file,
        chars: src.chars().collect(),
        pos: 0,
        line: 1,
        col: 1,
        tokens: Vec::new(),
        warnings: Vec::new(),
        one_letter: Vec::new(),
    }
    .run()
}

fn is_word_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '/' || c == '-'
}

fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '/' | '.' | '_' | ':' | ';' | '-')
}

struct Lexer<'a> {
    file: &'a str,
    chars: Vec<char>,
    pos: usize,
    line: u32,
    col: u32,
    tokens: Vec<Token>,
    warnings: Vec<Warning>,
    /// One-letter variables already warned about (once per name is enough).
    one_letter: Vec<char>,
}

impl Lexer<'_> {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, n: usize) -> Option<char> {
        self.chars.get(self.pos + n).copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += 1;
        if c == '\n' {
            self.line += 1;
            self.col = 1;
        } else {
            self.col += 1;
        }
        Some(c)
    }

    /// Whether a `/` here is a division: it touches a number, a `$variable` or a `)` before
    /// it (`$nfiles/2`, `8k/2`). A word never starts right after one of those, so this takes
    /// nothing from paths; `/2` after a space is still a word, as in filebench.
    fn divides(&self) -> bool {
        self.tokens.last().is_some_and(|t| {
            t.end == self.pos
                && matches!(
                    t.tok,
                    Tok::Int(_) | Tok::Float(_) | Tok::Var(_) | Tok::RParen
                )
        })
    }

    fn here(&self) -> Span {
        Span::new(self.line, self.col)
    }

    fn text(&self, start: usize) -> String {
        self.chars[start..self.pos].iter().collect()
    }

    fn push(&mut self, tok: Tok, span: Span, start: usize) {
        let text = self.text(start);
        self.tokens.push(Token {
            tok,
            span,
            text,
            start,
            end: self.pos,
        });
    }

    fn error(&self, span: Span, token: impl Into<String>, msg: impl Into<String>) -> WmlError {
        WmlError::new(ErrorKind::Lex, self.file, span, token, msg)
    }

    fn warn(&mut self, kind: WarningKind, span: Span, msg: impl Into<String>) {
        self.warnings.push(Warning::new(kind, self.file, span, msg));
    }

    fn run(mut self) -> Result<Lexed, WmlError> {
        // End of file is reported right after the last token, where the missing piece goes.
        let mut eof_span = Span::new(1, 1);
        loop {
            while let Some(c) = self.peek() {
                if c == '#' {
                    while self.peek().is_some_and(|c| c != '\n') {
                        self.bump();
                    }
                } else if c.is_whitespace() {
                    self.bump();
                } else {
                    break;
                }
            }
            let Some(c) = self.peek() else { break };
            let (start, span) = (self.pos, self.here());
            match c {
                '{' | '}' | '(' | ')' | '=' | ',' | '+' | '*' => {
                    self.bump();
                    let tok = match c {
                        '{' => Tok::LBrace,
                        '}' => Tok::RBrace,
                        '(' => Tok::LParen,
                        ')' => Tok::RParen,
                        '=' => Tok::Eq,
                        ',' => Tok::Comma,
                        '+' => Tok::Plus,
                        _ => Tok::Star,
                    };
                    self.push(tok, span, start);
                }
                '-' if self.peek_at(1).is_some_and(|n| n.is_ascii_digit()) => {
                    self.bump();
                    self.push(Tok::Minus, span, start);
                }
                '-' | '/'
                    if !self.peek_at(1).is_some_and(is_word_char)
                        || (c == '/' && self.divides()) =>
                {
                    self.bump();
                    let tok = if c == '-' { Tok::Minus } else { Tok::Slash };
                    self.push(tok, span, start);
                }
                c if is_word_start(c) => {
                    while self.peek().is_some_and(is_word_char) {
                        self.bump();
                    }
                    let w = self.text(start);
                    self.push(Tok::Word(w), span, start);
                }
                c if c.is_ascii_digit() => self.number(start, span)?,
                '$' => self.variable(start, span)?,
                '"' => self.quoted(start, span)?,
                _ => {
                    let hint = if c == '\'' {
                        "strings are quoted with double quotes"
                    } else {
                        "WML has words, numbers, $variables, \"strings\" and { } ( ) = , + - * /"
                    };
                    return Err(self
                        .error(span, c.to_string(), format!("unexpected character `{c}`"))
                        .with_hint(hint));
                }
            }
            eof_span = self.here();
        }
        let at = self.pos;
        self.tokens.push(Token {
            tok: Tok::Eof,
            span: eof_span,
            text: String::new(),
            start: at,
            end: at,
        });
        Ok(Lexed {
            tokens: self.tokens,
            warnings: self.warnings,
        })
    }

    /// `[0-9]+(.[0-9]+)?[kmgtKMGT]?`; filebench knows only integers with lowercase k, m, g.
    fn number(&mut self, start: usize, span: Span) -> Result<(), WmlError> {
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.bump();
        }
        let mut decimal = false;
        if self.peek() == Some('.') && self.peek_at(1).is_some_and(|c| c.is_ascii_digit()) {
            decimal = true;
            self.bump();
            while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                self.bump();
            }
        }
        let digits_end = self.pos;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
        {
            self.bump();
        }
        let text = self.text(start);
        let digits: String = self.chars[start..digits_end].iter().collect();
        let suffix: String = self.chars[digits_end..self.pos].iter().collect();
        let shift = match suffix.as_str() {
            "" => 0,
            "k" | "K" => 10,
            "m" | "M" => 20,
            "g" | "G" => 30,
            "t" | "T" => 40,
            _ => {
                let hint = match suffix.to_ascii_lowercase().as_str() {
                    "kb" | "kib" | "mb" | "mib" | "gb" | "gib" | "tb" | "tib" => format!(
                        "write `{digits}{}`: suffixes are single letters (×1024)",
                        &suffix[..1].to_ascii_lowercase()
                    ),
                    _ => "a number may end in k, m or g (×1024); names cannot start with a digit"
                        .to_string(),
                };
                return Err(self
                    .error(
                        span,
                        &text,
                        format!("bad number `{text}`: unknown suffix `{suffix}`"),
                    )
                    .with_hint(hint));
            }
        };
        if suffix.chars().any(|c| c.is_ascii_uppercase()) || shift == 40 {
            self.warn(
                WarningKind::NonFilebench,
                span,
                format!("`{text}`: filebench accepts only the suffixes k, m, g in lowercase"),
            );
        }
        if decimal {
            self.warn(
                WarningKind::NonFilebench,
                span,
                format!("`{text}`: filebench accepts only whole numbers"),
            );
        }
        let too_large = || self.error(span, &text, format!("number `{text}` is too large"));
        let tok = if decimal {
            let f: f64 = digits.parse().map_err(|_| too_large())?;
            if shift == 0 {
                Tok::Float(f)
            } else {
                let v = f * (1u64 << shift) as f64;
                if v.fract() != 0.0 {
                    return Err(self
                        .error(
                            span,
                            &text,
                            format!("`{text}` is not a whole number of bytes"),
                        )
                        .with_hint("use a smaller unit, e.g. `1536k` instead of `1.5m`"));
                }
                if v >= i64::MAX as f64 {
                    return Err(too_large());
                }
                Tok::Int(v as i64)
            }
        } else {
            let n: i64 = digits.parse().map_err(|_| too_large())?;
            Tok::Int(n.checked_mul(1i64 << shift).ok_or_else(too_large)?)
        };
        self.push(tok, span, start);
        Ok(())
    }

    /// Reads `name`, `{name}` or `(name)` after a `$` (the `$` already consumed).
    /// `None` (and nothing consumed) when no name follows.
    fn var_name(&mut self) -> Option<Result<String, &'static str>> {
        let close = match self.peek() {
            Some('{') => Some('}'),
            Some('(') => Some(')'),
            _ => None,
        };
        let skip = usize::from(close.is_some());
        if !self.peek_at(skip).is_some_and(|c| c.is_ascii_alphabetic()) {
            return None;
        }
        if close.is_some() {
            self.bump();
        }
        let mut name = String::new();
        while let Some(c) = self
            .peek()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
        {
            name.push(c);
            self.bump();
        }
        if let Some(close) = close {
            if self.peek() != Some(close) {
                return Some(Err("unclosed brace in variable name"));
            }
            self.bump();
        }
        Some(Ok(name))
    }

    fn variable(&mut self, start: usize, span: Span) -> Result<(), WmlError> {
        self.bump();
        match self.var_name() {
            Some(Ok(name)) => {
                if self.peek() == Some('.')
                    && self.peek_at(1).is_some_and(|c| c.is_ascii_alphabetic())
                {
                    let field = self.here();
                    return Err(WmlError::new(
                        ErrorKind::Unsupported,
                        self.file,
                        field,
                        ".",
                        format!("randvar fields (`${name}.type`, filebench 1.4) are not supported"),
                    )
                    .with_hint(format!(
                        "assign the whole variable: `set ${name} = randvar(…)`"
                    )));
                }
                self.one_letter_warning(&name, span);
                self.push(Tok::Var(name), span, start);
                Ok(())
            }
            Some(Err(msg)) => {
                let t = self.text(start);
                Err(self.error(span, &t, format!("{msg} `{t}`")))
            }
            None => Err(self
                .error(span, "$", "expected a variable name after `$`")
                .with_hint("variable names start with a letter: `$nfiles`")),
        }
    }

    fn one_letter_warning(&mut self, name: &str, span: Span) {
        let mut chars = name.chars();
        if let (Some(c), None) = (chars.next(), chars.next()) {
            if self.one_letter.contains(&c) {
                return;
            }
            self.one_letter.push(c);
            self.warn(
                WarningKind::NonFilebench,
                span,
                format!("`${name}`: filebench rejects one-letter variable names"),
            );
        }
    }

    /// A double-quoted string on one line. filebench lets a quote run across lines, which
    /// turns a forgotten quote into an error far away; iolab reports it where it opens.
    fn quoted(&mut self, start: usize, span: Span) -> Result<(), WmlError> {
        self.bump();
        let mut parts = Vec::new();
        let mut lit = String::new();
        loop {
            match self.peek() {
                None | Some('\n') => {
                    let t = self.text(start);
                    return Err(self
                        .error(span, t.trim_end(), "unterminated string")
                        .with_hint("close the string with `\"` on the same line"));
                }
                Some('"') => {
                    self.bump();
                    break;
                }
                Some('\\') => {
                    self.bump();
                    match self.peek() {
                        Some('n') => lit.push('\n'),
                        Some('t') => lit.push('\t'),
                        Some(c @ ('\\' | '"' | '$')) => lit.push(c),
                        Some('\n') | None => {
                            lit.push('\\');
                            continue;
                        }
                        Some(c) => {
                            lit.push('\\');
                            lit.push(c);
                        }
                    }
                    self.bump();
                }
                Some('$') => {
                    let vspan = self.here();
                    self.bump();
                    match self.var_name() {
                        Some(Ok(name)) => {
                            self.one_letter_warning(&name, vspan);
                            if !lit.is_empty() {
                                parts.push(TextPart::Lit(std::mem::take(&mut lit)));
                            }
                            parts.push(TextPart::Var { name, span: vspan });
                        }
                        Some(Err(msg)) => return Err(self.error(vspan, "$", msg)),
                        None => lit.push('$'),
                    }
                }
                Some(c) => {
                    lit.push(c);
                    self.bump();
                }
            }
        }
        if !lit.is_empty() || parts.is_empty() {
            parts.push(TextPart::Lit(lit));
        }
        self.push(Tok::Text(Text { parts }), span, start);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(src: &str) -> Vec<Tok> {
        lex("t.f", src)
            .unwrap()
            .tokens
            .into_iter()
            .map(|t| t.tok)
            .collect()
    }

    fn err(src: &str) -> WmlError {
        lex("t.f", src).expect_err("expected a lexer error")
    }

    fn word(s: &str) -> Tok {
        Tok::Word(s.into())
    }

    #[test]
    fn words_numbers_and_punctuation() {
        assert_eq!(
            toks("define fileset name=big,path=/tmp,size=16k # comment\n"),
            vec![
                word("define"),
                word("fileset"),
                word("name"),
                Tok::Eq,
                word("big"),
                Tok::Comma,
                word("path"),
                Tok::Eq,
                word("/tmp"),
                Tok::Comma,
                word("size"),
                Tok::Eq,
                Tok::Int(16384),
                Tok::Eof
            ]
        );
    }

    #[test]
    fn suffixes_are_binary() {
        assert_eq!(
            toks("1k 2m 3g 08"),
            vec![
                Tok::Int(1024),
                Tok::Int(2 << 20),
                Tok::Int(3 << 30),
                Tok::Int(8),
                Tok::Eof
            ]
        );
    }

    #[test]
    fn non_filebench_numbers_warn() {
        let l = lex("t.f", "4K 1.5m 2t 0.5").unwrap();
        let v: Vec<_> = l.tokens.iter().map(|t| t.tok.clone()).collect();
        assert_eq!(
            v,
            vec![
                Tok::Int(4096),
                Tok::Int(1536 * 1024),
                Tok::Int(2 << 40),
                Tok::Float(0.5),
                Tok::Eof
            ]
        );
        assert_eq!(l.warnings.len(), 4);
        assert!(l
            .warnings
            .iter()
            .all(|w| w.kind == WarningKind::NonFilebench));
    }

    #[test]
    fn bad_suffix_is_located() {
        let e = err("set $x = 10q");
        assert_eq!(e.span, Span::new(1, 10));
        assert_eq!(e.token, "10q");
        assert!(e.message.contains("unknown suffix"));
        let e = err("size=4kb");
        assert!(e.hint.unwrap().contains("`4k`"));
    }

    #[test]
    fn fractional_bytes_rejected() {
        assert!(err("0.3k").message.contains("not a whole number"));
    }

    #[test]
    fn overflow_rejected() {
        assert!(err("99999999999999999999").message.contains("too large"));
        assert!(err("9999999999g").message.contains("too large"));
    }

    #[test]
    fn minus_and_slash() {
        assert_eq!(
            toks("-5 a-b -x / $a-1 /x"),
            vec![
                Tok::Minus,
                Tok::Int(5),
                word("a-b"),
                word("-x"),
                Tok::Slash,
                Tok::Var("a".into()),
                Tok::Minus,
                Tok::Int(1),
                word("/x"),
                Tok::Eof
            ]
        );
    }

    #[test]
    fn slash_touching_an_operand_divides() {
        assert_eq!(
            toks("$xx/2 8k/2 ($a)/$b $a/ 2"),
            vec![
                Tok::Var("xx".into()),
                Tok::Slash,
                Tok::Int(2),
                Tok::Int(8192),
                Tok::Slash,
                Tok::Int(2),
                Tok::LParen,
                Tok::Var("a".into()),
                Tok::RParen,
                Tok::Slash,
                Tok::Var("b".into()),
                Tok::Var("a".into()),
                Tok::Slash,
                Tok::Int(2),
                Tok::Eof
            ]
        );
        // Paths are words wherever a word can start.
        assert_eq!(
            toks("path=/2019/x 8k /2"),
            vec![
                word("path"),
                Tok::Eq,
                word("/2019/x"),
                Tok::Int(8192),
                word("/2"),
                Tok::Eof
            ]
        );
    }

    #[test]
    fn byte_order_mark_is_not_text() {
        let l = lex("t.f", "\u{feff}run 5").unwrap();
        assert_eq!(l.tokens[0].tok, word("run"));
        assert_eq!(l.tokens[0].span, Span::new(1, 1));
        // Only at the very start.
        assert_eq!(err("run 5\n\u{feff}").span, Span::new(2, 1));
    }

    #[test]
    fn variables_with_braces_and_one_letter() {
        let l = lex("t.f", "$nfiles ${a} $(b_c)").unwrap();
        let v: Vec<_> = l.tokens.iter().map(|t| t.tok.clone()).collect();
        assert_eq!(
            v,
            vec![
                Tok::Var("nfiles".into()),
                Tok::Var("a".into()),
                Tok::Var("b_c".into()),
                Tok::Eof
            ]
        );
        assert_eq!(l.warnings.len(), 1, "one-letter $a warns");
        let l = lex("t.f", "$a $a $b").unwrap();
        assert_eq!(l.warnings.len(), 2, "once per name");
        let e = err("set $rv.type = uniform");
        assert_eq!((e.kind, e.span), (ErrorKind::Unsupported, Span::new(1, 8)));
        assert!(err("$ x").message.contains("variable name"));
        assert!(err("${abc x").message.contains("unclosed"));
    }

    #[test]
    fn quoted_strings_split_variables() {
        let t = toks(r#"echo "a $dir b\n\$x $""#);
        let Tok::Text(text) = &t[1] else {
            panic!("{t:?}")
        };
        assert_eq!(
            text.parts,
            vec![
                TextPart::Lit("a ".into()),
                TextPart::Var {
                    name: "dir".into(),
                    span: Span::new(1, 9)
                },
                TextPart::Lit(" b\n$x $".into()),
            ]
        );
    }

    #[test]
    fn unterminated_string_points_at_opening_quote() {
        let e = err("echo \"abc\nrun 5");
        assert_eq!(e.span, Span::new(1, 6));
        assert!(e.message.contains("unterminated"));
        assert_eq!(err("echo \"abc").span, Span::new(1, 6));
    }

    #[test]
    fn unexpected_character() {
        let e = err("set $a = 1\n  @");
        assert_eq!(e.span, Span::new(2, 3));
        assert_eq!(e.token, "@");
    }

    #[test]
    fn spans_count_characters_and_tabs_as_one() {
        let l = lex("t.f", "\tflowop x\n# ü comment\n  é").unwrap_err();
        assert_eq!(l.span, Span::new(3, 3));
        let l = lex("t.f", "\tflowop x").unwrap();
        assert_eq!(l.tokens[1].span, Span::new(1, 9));
    }

    #[test]
    fn eof_sits_after_last_token() {
        let l = lex("t.f", "run 60\n\n# trailing comment\n").unwrap();
        assert_eq!(l.tokens.last().unwrap().span, Span::new(1, 7));
    }

    #[test]
    fn cvar_parameters_are_one_word() {
        assert_eq!(
            toks("parameters=mean:131072;gamma:1.5"),
            vec![
                word("parameters"),
                Tok::Eq,
                word("mean:131072;gamma:1.5"),
                Tok::Eof
            ]
        );
    }
}
