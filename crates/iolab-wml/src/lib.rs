//! Front end for filebench's Workload Model Language (`.f` files).
//!
//! Two steps, kept apart as everywhere in iolab (parse, then validate, then resolve):
//!
//! 1. [`parse_file`] / [`parse_str`] turn text into a [`Parsed`] syntax tree in which every
//!    node carries its [`Span`]. Only the grammar is checked; the first syntax error stops.
//! 2. [`validate`] checks names, references, types and ranges, reporting every error at once.
//!
//! Lowering the tree to an engine workload is not done here. [`Env`] resolves variables
//! statically for tools and for lowering.
//!
//! Both filebench master's dialect and the legacy 1.4 one (`define randvar`, arithmetic in
//! `set`, `stats`, `cached`, …) are accepted. Constructs accepted for compatibility but
//! without effect, or that filebench itself would reject, produce [`Warning`]s, returned as
//! data: this crate never prints. [`validate`] returns all of them, the parser's included,
//! each once.
//!
//! ```
//! let parsed = iolab_wml::parse_str(
//!     "demo.f",
//!     "define file name=f1,path=/tmp,size=1m\n\
//!      define process name=p { thread name=t { flowop read name=r1,filename=f1,iosize=4k } }\n\
//!      run 10\n",
//! )
//! .unwrap();
//! let warnings = iolab_wml::validate(&parsed).unwrap();
//! assert!(warnings.is_empty());
//! ```

pub mod ast;
pub mod builtin;
mod check;
pub mod command;
mod env;
mod error;
pub mod kind;
mod lexer;
pub mod lower;
pub mod output;
mod parser;
mod print;
mod schema;
mod validate;

use std::io::Read;
use std::path::Path;

pub use ast::*;
pub use check::{check, no_threads};
pub use env::{Env, StaticValue};
pub use error::{ErrorKind, Warning, WarningKind, WmlError, WmlErrors};
pub use lower::{lower, LowerOptions};
pub use print::to_wml;
pub use schema::CVAR_TYPES;
pub use validate::{validate, validate_with, ValidateOptions};

/// Parses WML text. `name` is the file name used in errors and warnings.
pub fn parse_str(name: &str, text: &str) -> Result<Parsed, WmlError> {
    parser::parse(name, text)
}

/// The largest `.f` file read. filebench's own workloads are a few KiB; anything near this is
/// not a workload (and `/dev/zero` would otherwise be read until memory runs out).
pub const MAX_FILE_SIZE: u64 = 16 << 20;

/// Reads and parses a `.f` file; errors carry the path as given. Only regular files of at
/// most [`MAX_FILE_SIZE`] bytes are read: a device, a FIFO or a directory is refused before
/// it is opened.
pub fn parse_file(path: impl AsRef<Path>) -> Result<Parsed, WmlError> {
    let path = path.as_ref();
    let name = path.display().to_string();
    let io_err = |msg: String| WmlError::new(ErrorKind::Io, &name, Span::default(), "", msg);
    let meta = std::fs::metadata(path).map_err(|e| io_err(format!("cannot read the file: {e}")))?;
    if !meta.is_file() {
        let what = file_type_name(&meta.file_type());
        return Err(io_err(format!("is {what}, not a workload file"))
            .with_hint("give the path of a .f file, or the name of a built-in workload"));
    }
    let too_large = || {
        io_err(format!(
            "is larger than {} MiB: not a workload file",
            MAX_FILE_SIZE >> 20
        ))
    };
    if meta.len() > MAX_FILE_SIZE {
        return Err(too_large());
    }
    let mut bytes = Vec::new();
    // The file may grow between the stat and the read: read at most one byte past the limit.
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_FILE_SIZE + 1).read_to_end(&mut bytes))
        .map_err(|e| io_err(format!("cannot read the file: {e}")))?;
    if bytes.len() as u64 > MAX_FILE_SIZE {
        return Err(too_large());
    }
    // filebench reads bytes; a stray Latin-1 byte in a comment should not reject a file.
    let text = String::from_utf8_lossy(&bytes);
    parse_str(&name, &text)
}

fn file_type_name(t: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if t.is_dir() {
        "a directory"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

/// Parses and validates a file in one go: the tree and all warnings, or every error.
pub fn load_file(path: impl AsRef<Path>) -> Result<(Parsed, Vec<Warning>), WmlErrors> {
    let parsed = parse_file(path)?;
    let warnings = validate(&parsed)?;
    Ok((parsed, warnings))
}

/// What this place gives the rest of iolab (see [`iolab_kind::Plugin`]); its one line in the
/// registry is `&iolab_wml::PLUGIN`.
pub static PLUGIN: iolab_kind::Plugin = iolab_kind::Plugin {
    kinds: &[&kind::WML, &kind::BUILTIN],
    commands: &[&command::WorkloadsCommand],
    files: &[&command::WmlFiles],
    sections: &[],
    schemas: &[output::SCHEMA],
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_file_is_an_io_error() {
        let e = parse_file("/nonexistent/x.f").unwrap_err();
        assert_eq!(e.kind, ErrorKind::Io);
        assert!(e
            .to_string()
            .starts_with("/nonexistent/x.f: error: cannot read"));
    }

    #[test]
    fn only_regular_files_are_read() {
        let e = parse_file("/dev/zero").unwrap_err();
        assert_eq!(e.kind, ErrorKind::Io);
        assert_eq!(
            e.to_string(),
            "/dev/zero: error: is a character device, not a workload file\n  \
             hint: give the path of a .f file, or the name of a built-in workload"
        );
        let e = parse_file("/").unwrap_err();
        assert!(e.message.starts_with("is a directory"), "{e}");
    }

    #[test]
    fn oversized_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("big.f");
        let file = std::fs::File::create(&f).unwrap();
        // Sparse: no disk space is used.
        file.set_len(MAX_FILE_SIZE + 1).unwrap();
        let e = parse_file(&f).unwrap_err();
        assert!(e.message.contains("larger than 16 MiB"), "{e}");
        file.set_len(0).unwrap();
        std::fs::write(&f, "run 5\n").unwrap();
        assert!(parse_file(&f).is_ok());
        std::fs::remove_file(&f).unwrap();
    }

    #[test]
    fn a_byte_order_mark_is_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("bom.f");
        std::fs::write(&f, "\u{feff}bogus\n").unwrap();
        let e = parse_file(&f).unwrap_err();
        // The text starts after the mark, which takes no column.
        assert_eq!(
            (e.kind, e.span),
            (ErrorKind::UnknownCommand, Span::new(1, 1))
        );
        std::fs::write(&f, "\u{feff}run 5\n").unwrap();
        assert!(parse_file(&f).is_ok());
        std::fs::remove_file(&f).unwrap();
    }

    #[test]
    fn load_file_reports_parse_errors_as_a_list() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("bad.f");
        std::fs::write(&f, "set $a = 1\nbogus\n").unwrap();
        let errs = load_file(&f).unwrap_err();
        assert_eq!(errs.len(), 1);
        assert_eq!(errs.first().span, Span::new(2, 1));
    }
}
