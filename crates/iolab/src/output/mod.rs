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
        print_human(human, result)
    }
}

/// Writes `result` to stdout in a human format, made [`terminal_safe`]: the names it shows
/// may come from another host's database.
pub fn print_human<R: ?Sized>(
    format: &dyn Formatter<R>,
    result: &R,
) -> Result<(), crate::error::CliError> {
    emit_human(|out| format.write(result, out))
}

/// [`emit`] for human text: written whole into memory first, then [`terminal_safe`].
pub fn emit_human(
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> Result<(), crate::error::CliError> {
    let mut text = Vec::new();
    let written = write(&mut text);
    // What was written before an error is still shown, as `emit` would have.
    let shown =
        emit(|out| out.write_all(terminal_safe(&String::from_utf8_lossy(&text)).as_bytes()));
    written
        .map_err(|e| crate::error::CliError::failed(format!("cannot write the results: {e}")))?;
    shown
}

/// Text a terminal shows but does not act on: control characters other than newline and
/// tab (escape sequences that clear the screen or retitle the window, NUL, C1 controls) as
/// `\u{1b}`. Names in a results database are whatever its writer put there.
pub fn terminal_safe(s: &str) -> std::borrow::Cow<'_, str> {
    iolab_util::text::escape_controls(s, |c| !matches!(c, '\n' | '\t'))
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
