//! Every command's output: one module per kind of result, one file per format behind the
//! one-method [`Formatter`] trait (hyperfine's `export/`), and the JSON stamp in [`json`].
//! Results go to stdout through [`emit`] only (pipe-safe); messages go to stderr through
//! `say!`.
//!
//! Adding a format: a file with a unit struct implementing `Formatter<TheResult>`, and a line
//! where the command picks it. JSON needs no file: implement [`json::Document`] for the result
//! (one line) and use [`json::Json`].

pub mod check;
pub mod compare;
pub mod configs;
pub mod context;
pub mod export;
pub mod import;
pub mod json;
pub mod list;
pub mod report;
pub mod show;
pub mod trace;

use std::io::{self, Write};

pub use iolab_kind::output::{durations, Formatter};

/// Writes `result` to stdout in `format` (see [`emit`]).
pub fn print<R: ?Sized>(
    format: &dyn Formatter<R>,
    result: &R,
) -> Result<(), crate::error::CliError> {
    emit(|out| format.write(result, out))
}

/// Writes `result` to stdout as JSON when `json` (`--json`), else in `human`.
pub fn print_json_or<R: json::Document>(
    json: bool,
    human: &dyn Formatter<R>,
    result: &R,
) -> Result<(), crate::error::CliError> {
    if json {
        print(&json::Json, result)
    } else {
        print(human, result)
    }
}

/// Writes results to stdout through a buffer. A closed pipe (`| head`) means the reader has
/// what it wanted: not an error.
pub fn emit(
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> Result<(), crate::error::CliError> {
    let mut out = io::BufWriter::new(io::stdout().lock());
    match write(&mut out).and_then(|()| out.flush()) {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => Err(crate::error::CliError::failed(
            format!("cannot write the results: {e}"),
        )),
        _ => Ok(()),
    }
}
