//! The one error path at the edge: every failure becomes a message, an optional hint and an
//! exit code (the kinds' commands and the binary's share one error type,
//! [`iolab_kind::cli::CommandError`]).

pub use iolab_kind::cli::CommandError as CliError;
pub use iolab_kind::cli::{EXIT_FAILED, EXIT_INTERRUPTED};

/// Prints `e` on stderr: `iolab: error: …` (a located diagnostic as it is) and its hint.
pub fn print(e: &CliError) {
    if e.located {
        say!("{}", e.message);
    } else {
        say!("iolab: error: {}", e.message);
    }
    if let Some(h) = &e.hint {
        say!("  hint: {h}");
    }
}
