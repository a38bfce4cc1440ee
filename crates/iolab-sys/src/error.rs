//! Errors: a parse error names the file and the line that failed; a read error names the path.

use std::borrow::Cow;
use std::fmt;
use std::io;
use std::path::PathBuf;

/// Text of a /proc or /sys file that does not have the expected shape.
///
/// `line` is 1-based; `None` means the file as a whole (e.g. a required key is missing).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// The file the text came from (the parser's default path, or the path `read` used).
    pub file: Cow<'static, str>,
    /// 1-based line number, `None` for the file as a whole.
    pub line: Option<usize>,
    /// What is wrong.
    pub kind: ParseErrorKind,
    /// The offending line, shortened to at most 120 characters (empty for the file as a whole).
    pub text: String,
}

/// What is wrong with a line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseErrorKind {
    /// A field that must be a number is not.
    #[error("field `{field}` is not a valid number: {value:?}")]
    BadNumber {
        /// Name of the field (or its 1-based position).
        field: String,
        /// The text found.
        value: String,
    },
    /// A line has a field count this parser does not know.
    #[error("expected {expected} fields, found {found}")]
    FieldCount {
        /// Accepted field counts, in words.
        expected: &'static str,
        /// Fields found.
        found: usize,
    },
    /// A key that every supported kernel writes is absent.
    #[error("missing `{0}`")]
    Missing(&'static str),
    /// The line does not have the expected layout.
    #[error("malformed line: {0}")]
    Malformed(&'static str),
}

impl ParseError {
    /// An error in `file` (at 1-based `line`, or about the whole file), quoting `text`.
    pub fn new(file: &'static str, line: Option<usize>, kind: ParseErrorKind, text: &str) -> Self {
        let text: String = if text.chars().count() > 120 {
            text.chars().take(117).chain("...".chars()).collect()
        } else {
            text.to_owned()
        };
        ParseError {
            file: Cow::Borrowed(file),
            line,
            kind,
            text,
        }
    }

    /// Error for line `idx` (0-based index as from `lines().enumerate()`).
    pub fn at(file: &'static str, idx: usize, kind: ParseErrorKind, text: &str) -> Self {
        Self::new(file, Some(idx + 1), kind, text)
    }

    /// Error about the file as a whole.
    pub fn whole(file: &'static str, kind: ParseErrorKind) -> Self {
        Self::new(file, None, kind, "")
    }

    /// Replace the file name (used by readers of per-process files such as /proc/PID/stat).
    pub fn with_file(mut self, file: impl Into<Cow<'static, str>>) -> Self {
        self.file = file.into();
        self
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{}: {}", self.file, line, self.kind)?,
            None => write!(f, "{}: {}", self.file, self.kind)?,
        }
        if !self.text.is_empty() {
            write!(f, " in {:?}", self.text)?;
        }
        Ok(())
    }
}

impl std::error::Error for ParseError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.kind)
    }
}

/// Error of a `read()` convenience function or a sysfs lookup: the file could not be read
/// (or stat'ed), or not parsed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Opening or reading the file failed.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// `stat(2)` of a path failed.
    #[error("cannot stat {}: {source}", path.display())]
    Stat {
        /// The path.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// A device number was asked of a path that is not a block device node.
    #[error("{} is not a block device", path.display())]
    NotBlockDevice {
        /// The path.
        path: PathBuf,
    },
    /// The text did not parse.
    #[error(transparent)]
    Parse(#[from] ParseError),
}

impl Error {
    /// The OS error behind a failed read or stat, if that is what this is.
    pub fn io_error(&self) -> Option<&io::Error> {
        match self {
            Error::Read { source, .. } | Error::Stat { source, .. } => Some(source),
            Error::NotBlockDevice { .. } | Error::Parse(_) => None,
        }
    }

    /// The file or path the error is about.
    pub fn path(&self) -> std::path::PathBuf {
        match self {
            Error::Read { path, .. }
            | Error::Stat { path, .. }
            | Error::NotBlockDevice { path } => path.clone(),
            Error::Parse(e) => PathBuf::from(e.file.as_ref()),
        }
    }
}

/// Read a whole (small) /proc or /sys file as text.
pub fn read_to_string(path: impl Into<PathBuf>) -> Result<String, Error> {
    let path = path.into();
    std::fs::read_to_string(&path).map_err(|source| Error::Read { path, source })
}

/// Parse one decimal unsigned field, naming it in the error.
pub fn parse_u64(
    file: &'static str,
    idx: usize,
    line: &str,
    field: &str,
    value: &str,
) -> Result<u64, ParseError> {
    value.parse::<u64>().map_err(|_| {
        ParseError::at(
            file,
            idx,
            ParseErrorKind::BadNumber {
                field: field.to_owned(),
                value: value.to_owned(),
            },
            line,
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_file_and_line() {
        let e = ParseError::at(
            "/proc/stat",
            2,
            ParseErrorKind::BadNumber {
                field: "user".into(),
                value: "x".into(),
            },
            "cpu0 x 0 0 0",
        );
        assert_eq!(
            e.to_string(),
            "/proc/stat:3: field `user` is not a valid number: \"x\" in \"cpu0 x 0 0 0\""
        );
        let e = ParseError::whole("/proc/stat", ParseErrorKind::Missing("cpu"));
        assert_eq!(e.to_string(), "/proc/stat: missing `cpu`");
        let e = e.with_file("/proc/42/stat");
        assert_eq!(e.to_string(), "/proc/42/stat: missing `cpu`");
    }

    #[test]
    fn long_lines_are_shortened() {
        let long = "9".repeat(500);
        let e = ParseError::at("/f", 0, ParseErrorKind::Malformed("x"), &long);
        assert_eq!(e.text.chars().count(), 120);
        assert!(e.text.ends_with("..."));
    }
}
