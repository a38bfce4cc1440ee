//! Errors of reading and writing trace files: always with the file and where in it.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// Where in a trace file an error was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Location {
    /// The file as a whole (opening it, guessing its format).
    File,
    /// The header, at this byte offset.
    Header {
        /// Byte offset of the field.
        byte: u64,
    },
    /// A fixed-size binary record.
    Record {
        /// Record number, from 0 (the index libCacheSim's next-access field counts in).
        index: u64,
        /// Byte offset of the record in the file.
        byte: u64,
    },
    /// A text line (1-based line and column, like a compiler).
    Line {
        /// Line, from 1.
        line: u64,
        /// Column (characters), from 1.
        column: u64,
    },
}

/// What is wrong.
#[derive(Debug, thiserror::Error)]
pub enum ErrorKind {
    /// Reading or writing failed.
    #[error("{action}: {source}")]
    Io {
        /// What was being done ("read", "create", ...).
        action: &'static str,
        /// The OS error.
        source: io::Error,
    },
    /// The file does not start with iolab's magic.
    #[error("not an iolab trace: expected magic \"IOLABTRC\", found {found:?}")]
    BadMagic {
        /// The first bytes found, printable.
        found: String,
    },
    /// A version of the format this build does not read.
    #[error("iolab trace format version {found}; this iolab reads version {supported}")]
    UnsupportedVersion {
        /// Version in the file.
        found: u16,
        /// The version this build reads and writes.
        supported: u16,
    },
    /// The file ends inside a header or record.
    #[error("truncated {what}: expected {expected} bytes, found {found}")]
    Truncated {
        /// "header", "record".
        what: &'static str,
        /// Bytes it needs.
        expected: u64,
        /// Bytes there were.
        found: u64,
    },
    /// The header promised more records than the file holds.
    #[error("the header says {expected} records, the file ends after {found}")]
    MissingRecords {
        /// Records the header counts.
        expected: u64,
        /// Records found.
        found: u64,
    },
    /// A field that cannot be what it says.
    #[error("bad {field} {value:?}: expected {expected}")]
    BadField {
        /// Field name as the docs name it.
        field: &'static str,
        /// The value found, as text.
        value: String,
        /// What would have been valid.
        expected: String,
    },
    /// An oracleGeneral next-access field that does not point at a later record.
    #[error(
        "bad next-access index \"{value}\": expected -1 or the position (from 1) of a later \
         record (> {}); is this an oracleGeneral trace?",
        .index + 1
    )]
    NextAccess {
        /// The field.
        value: i64,
        /// The record's index (from 0).
        index: u64,
    },
    /// The format cannot be told from the magic or the name.
    #[error("cannot tell the trace format: {reason}")]
    UnknownFormat {
        /// Why not.
        reason: String,
    },
    /// Something valid this build cannot do (compressed traces, non-seekable outputs).
    #[error("{0}")]
    Unsupported(String),
}

/// An error with the file and the place in it.
#[derive(Debug)]
pub struct Error {
    /// The trace file.
    pub path: PathBuf,
    /// Where in it.
    pub at: Location,
    /// What.
    pub kind: ErrorKind,
}

impl Error {
    /// An error at `at` in `path`.
    pub fn new(path: &Path, at: Location, kind: ErrorKind) -> Self {
        Error {
            path: path.to_owned(),
            at,
            kind,
        }
    }

    /// An I/O error on the file as a whole.
    pub fn io(path: &Path, action: &'static str, source: io::Error) -> Self {
        Self::new(path, Location::File, ErrorKind::Io { action, source })
    }

    /// A bad field at `at`.
    pub fn field(
        path: &Path,
        at: Location,
        field: &'static str,
        value: impl fmt::Display,
        expected: impl Into<String>,
    ) -> Self {
        Self::new(
            path,
            at,
            ErrorKind::BadField {
                field,
                value: value.to_string(),
                expected: expected.into(),
            },
        )
    }

    /// True for errors in the file's content or its name (the user gave a bad trace: exit
    /// 2), false for failing reads and writes of a good one.
    pub fn is_bad_input(&self) -> bool {
        match &self.kind {
            ErrorKind::Io { source, .. } => matches!(
                source.kind(),
                io::ErrorKind::NotFound
                    | io::ErrorKind::PermissionDenied
                    | io::ErrorKind::InvalidInput
                    | io::ErrorKind::IsADirectory
            ),
            _ => true,
        }
    }

    /// What to do about it, if there is something to say.
    pub fn hint(&self) -> Option<String> {
        Some(match &self.kind {
            ErrorKind::UnknownFormat { .. } => "name the format: --from iolab|oracleGeneral|csv \
                 (iolab traces start with the magic IOLABTRC; oracleGeneral files have no \
                 header, name them *.oracleGeneral or *.oracleGeneral.bin)"
                .into(),
            ErrorKind::BadMagic { .. } => {
                "is it an oracleGeneral or CSV trace? name the format with --from".into()
            }
            // Pointing at its own record is what a position counted from 0 does when the
            // object's next request is the very next record.
            ErrorKind::NextAccess { value, index } if *value == *index as i64 + 1 => format!(
                "the positions seem to count from 0, and oracleGeneral's count from 1 (as \
                 libCacheSim's traceConv writes them); only Belady reads them (other policies \
                 run the trace as it is): rewrite them with `iolab trace convert {} \
                 OUT.oracleGeneral --to oracleGeneral`",
                self.path.display()
            ),
            ErrorKind::NextAccess { .. } => "oracleGeneral files have no header, so a file in \
                 another format shows up as impossible fields: check the file's format"
                .into(),
            ErrorKind::Truncated { .. } | ErrorKind::MissingRecords { .. } => {
                "the file was cut short (a run that did not finish, or a partial copy)".into()
            }
            _ => return None,
        })
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = self.path.display();
        match self.at {
            Location::File => write!(f, "{p}: {}", self.kind),
            Location::Header { byte } => write!(f, "{p}: header, byte {byte}: {}", self.kind),
            Location::Record { index, byte } => {
                write!(f, "{p}: record {index} (byte {byte}): {}", self.kind)
            }
            Location::Line { line, column } => write!(f, "{p}:{line}:{column}: {}", self.kind),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            ErrorKind::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// Result of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
