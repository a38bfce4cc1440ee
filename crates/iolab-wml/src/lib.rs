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
//! data: this crate never prints.
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
mod env;
mod error;
mod lexer;
pub mod lower;
mod parser;
mod schema;
pub mod suggest;
mod validate;

use std::path::Path;

pub use ast::*;
pub use env::{Env, StaticValue};
pub use error::{ErrorKind, Warning, WarningKind, WmlError, WmlErrors};
pub use lower::{lower, LowerOptions};
pub use schema::{BUILTIN_FLOWOPS, CVAR_TYPES};
pub use validate::{validate, validate_with, ValidateOptions};

/// Parses WML text. `name` is the file name used in errors and warnings.
pub fn parse_str(name: &str, text: &str) -> Result<Parsed, WmlError> {
    parser::parse(name, text)
}

/// Reads and parses a `.f` file; errors carry the path as given.
pub fn parse_file(path: impl AsRef<Path>) -> Result<Parsed, WmlError> {
    let path = path.as_ref();
    let name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| {
        WmlError::new(
            ErrorKind::Io,
            &name,
            Span::default(),
            "",
            format!("cannot read the file: {e}"),
        )
    })?;
    // filebench reads bytes; a stray Latin-1 byte in a comment should not reject a file.
    let text = String::from_utf8_lossy(&bytes);
    parse_str(&name, &text)
}

/// Parses and validates a file in one go: the tree and all warnings, or every error.
pub fn load_file(path: impl AsRef<Path>) -> Result<(Parsed, Vec<Warning>), WmlErrors> {
    let parsed = parse_file(path)?;
    let warnings = validate(&parsed)?;
    Ok((parsed, warnings))
}

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
    fn load_file_reports_parse_errors_as_a_list() {
        let dir = std::env::temp_dir().join(format!("iolab-wml-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("bad.f");
        std::fs::write(&f, "set $a = 1\nbogus\n").unwrap();
        let errs = load_file(&f).unwrap_err();
        assert_eq!(errs.len(), 1);
        assert_eq!(errs.first().span, Span::new(2, 1));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
