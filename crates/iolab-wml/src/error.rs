//! Errors and warnings, each located in the source so that a user can jump to the spot.

use std::fmt;

use crate::ast::Span;

/// What kind of mistake an error reports, so that callers and tests can react without
/// matching message text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The file could not be read.
    Io,
    /// A character or token that cannot start anything: `@`, an unterminated string, `10q`.
    Lex,
    /// Tokens in an order the grammar does not allow: a missing `=`, `,` or `}`.
    Syntax,
    UnknownCommand,
    UnknownFlowop,
    UnknownAttribute,
    UnknownVariable,
    UnknownFileset,
    /// `target=` names no flowop.
    UnknownTarget,
    MissingAttribute,
    /// A value of the wrong type (`iosize=abc`) or shape (tabular percents not summing to 100).
    InvalidValue,
    OutOfRange,
    Duplicate,
    /// Valid filebench that iolab deliberately does not implement (`foreach`).
    Unsupported,
}

/// One error in a WML file.
///
/// `Display` gives `FILE:LINE:COL: error: MESSAGE` and, when there is one, an indented
/// `hint:` line, the shape compilers use so that editors can jump to the location.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}", render("error", &self.file, self.span, &self.message, self.hint.as_deref()))]
pub struct WmlError {
    pub kind: ErrorKind,
    /// File name as given to [`crate::parse_file`] or [`crate::parse_str`].
    pub file: String,
    /// Where the offending token starts; line 0 for errors without a location (I/O).
    pub span: Span,
    /// The offending token as written (empty at end of file or for I/O errors).
    pub token: String,
    pub message: String,
    /// What to do about it, e.g. "did you mean `readwholefile`?".
    pub hint: Option<String>,
}

impl WmlError {
    pub(crate) fn new(
        kind: ErrorKind,
        file: &str,
        span: Span,
        token: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        WmlError {
            kind,
            file: file.to_string(),
            span,
            token: token.into(),
            message: message.into(),
            hint: None,
        }
    }

    /// Whether `other` is the same mistake made elsewhere: same kind, same advice, and the
    /// same message but for the name of the flowop it is made in.
    fn same_mistake(&self, other: &WmlError) -> bool {
        self.kind == other.kind
            && self.hint == other.hint
            && without_flowop_name(&self.message) == without_flowop_name(&other.message)
    }

    pub(crate) fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    pub(crate) fn with_hint_opt(mut self, hint: Option<String>) -> Self {
        if hint.is_some() {
            self.hint = hint;
        }
        self
    }
}

/// All errors of a validation pass, sorted by location (never empty).
///
/// Validation reports every problem at once rather than stopping at the first, so that a
/// user fixes a file in one round trip.
#[derive(Debug, Clone, PartialEq)]
pub struct WmlErrors(Vec<WmlError>);

impl WmlErrors {
    /// Sorts by location, drops exact duplicates (a composite flowop expanded twice reports
    /// the same mistake twice otherwise) and reports a mistake repeated in several places once,
    /// at the first, listing the others ("(and 9 more at 4:38, 5:38, …)"). `None` when there
    /// is nothing to report.
    pub(crate) fn from_vec(mut errors: Vec<WmlError>) -> Option<Self> {
        errors.sort_by_key(|e| e.span);
        errors.dedup_by(|a, b| a.span == b.span && a.message == b.message);
        // Each distinct mistake, with the other places it is made.
        let mut out: Vec<(WmlError, Vec<Span>)> = Vec::with_capacity(errors.len());
        for e in errors {
            match out.iter_mut().find(|(first, _)| first.same_mistake(&e)) {
                Some((_, also)) => also.push(e.span),
                None => out.push((e, Vec::new())),
            }
        }
        let out: Vec<WmlError> = out
            .into_iter()
            .map(|(mut e, also)| {
                if !also.is_empty() {
                    e.message.push_str(&elsewhere(&also));
                }
                e
            })
            .collect();
        if out.is_empty() {
            None
        } else {
            Some(WmlErrors(out))
        }
    }

    /// The earliest error in the file.
    pub fn first(&self) -> &WmlError {
        &self.0[0]
    }

    pub fn iter(&self) -> std::slice::Iter<'_, WmlError> {
        self.0.iter()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Always false; present because clippy expects it next to `len`.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn into_vec(self) -> Vec<WmlError> {
        self.0
    }
}

impl From<WmlError> for WmlErrors {
    fn from(e: WmlError) -> Self {
        WmlErrors(vec![e])
    }
}

impl<'a> IntoIterator for &'a WmlErrors {
    type Item = &'a WmlError;
    type IntoIter = std::slice::Iter<'a, WmlError>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl fmt::Display for WmlErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for WmlErrors {}

/// Locations listed after a repeated mistake; beyond this many, "…".
const MAX_LISTED: usize = 5;

/// " (and 2 more at 4:38, 5:38)".
pub(crate) fn elsewhere(spans: &[Span]) -> String {
    let mut listed: Vec<String> = spans.iter().take(MAX_LISTED).map(Span::to_string).collect();
    if spans.len() > MAX_LISTED {
        listed.push("…".into());
    }
    format!(" (and {} more at {})", spans.len(), listed.join(", "))
}

/// The message without a leading "flowop `NAME`: ", which names where the mistake is made
/// rather than what it is.
fn without_flowop_name(message: &str) -> &str {
    message
        .strip_prefix("flowop `")
        .and_then(|rest| rest.split_once("`: "))
        .map_or(message, |(_, what)| what)
}

/// Why a construct was accepted with a remark instead of silently.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum WarningKind {
    /// iolab accepts it, filebench does not (`1.5m`, `4K`, `$x`): the file is no longer
    /// portable back to filebench.
    NonFilebench,
    /// filebench 1.4 syntax that filebench master rejects (`define randvar`, arithmetic).
    Legacy,
    /// Accepted and has no effect (`set mode nousestats`, `cached`, `enable multi`).
    Ignored,
    /// Valid but probably not what the author meant (a fileset without `dirwidth`).
    Suspicious,
}

/// A remark about an accepted file, returned as data: library crates never print.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    pub kind: WarningKind,
    pub file: String,
    pub span: Span,
    pub message: String,
}

impl Warning {
    pub(crate) fn new(
        kind: WarningKind,
        file: &str,
        span: Span,
        message: impl Into<String>,
    ) -> Self {
        Warning {
            kind,
            file: file.to_string(),
            span,
            message: message.into(),
        }
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&render(
            "warning",
            &self.file,
            self.span,
            &self.message,
            None,
        ))
    }
}

fn render(level: &str, file: &str, span: Span, message: &str, hint: Option<&str>) -> String {
    let mut s = if span.line == 0 {
        format!("{file}: {level}: {message}")
    } else {
        format!("{file}:{}:{}: {level}: {message}", span.line, span.col)
    };
    if let Some(h) = hint {
        s.push_str("\n  hint: ");
        s.push_str(h);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_display_has_location_and_hint() {
        let e = WmlError::new(
            ErrorKind::UnknownFlowop,
            "a.f",
            Span::new(3, 17),
            "readwholfile",
            "unknown flowop `readwholfile`",
        )
        .with_hint("did you mean `readwholefile`?");
        assert_eq!(
            e.to_string(),
            "a.f:3:17: error: unknown flowop `readwholfile`\n  hint: did you mean `readwholefile`?"
        );
    }

    #[test]
    fn io_error_has_no_location() {
        let e = WmlError::new(ErrorKind::Io, "x.f", Span::default(), "", "cannot read");
        assert_eq!(e.to_string(), "x.f: error: cannot read");
    }

    #[test]
    fn errors_are_sorted_and_deduplicated() {
        let mk = |l, c, m: &str| WmlError::new(ErrorKind::Syntax, "f", Span::new(l, c), "", m);
        let all = WmlErrors::from_vec(vec![mk(5, 1, "b"), mk(2, 3, "a"), mk(5, 1, "b")]).unwrap();
        assert_eq!(all.len(), 2);
        assert_eq!(all.first().span, Span::new(2, 3));
        assert!(WmlErrors::from_vec(vec![]).is_none());
    }

    #[test]
    fn a_mistake_repeated_in_many_places_is_reported_once() {
        let mk = |l, m: &str| {
            WmlError::new(ErrorKind::UnknownAttribute, "f", Span::new(l, 3), "", m)
                .with_hint("did you mean `iosize`?")
        };
        let mut v: Vec<WmlError> = (3..13)
            .map(|l| mk(l, "unknown attribute `iosiz`"))
            .collect();
        v.push(mk(20, "something else"));
        let all = WmlErrors::from_vec(v).unwrap();
        assert_eq!(all.len(), 2);
        assert_eq!(
            all.first().message,
            "unknown attribute `iosiz` (and 9 more at 4:3, 5:3, 6:3, 7:3, 8:3, …)"
        );
        // The same fault in differently named flowops is one mistake too.
        let named = |l, n: &str| {
            WmlError::new(
                ErrorKind::OutOfRange,
                "f",
                Span::new(l, 1),
                "",
                format!("flowop `{n}`: iosize 1048576 does not fit"),
            )
        };
        let all = WmlErrors::from_vec(vec![named(1, "a"), named(2, "b")]).unwrap();
        assert_eq!(all.len(), 1);
        assert_eq!(
            all.first().to_string(),
            "f:1:1: error: flowop `a`: iosize 1048576 does not fit (and 1 more at 2:1)"
        );
    }

    #[test]
    fn warning_display() {
        let w = Warning::new(WarningKind::Legacy, "f.f", Span::new(1, 2), "old");
        assert_eq!(w.to_string(), "f.f:1:2: warning: old");
    }
}
