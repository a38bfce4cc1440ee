//! The one error path at the edge: every failure becomes a message, an optional hint and an
//! exit code (the kinds' commands and the binary's share one error type,
//! [`iolab_kind::cli::CommandError`]).

pub use iolab_kind::cli::CommandError as CliError;
pub use iolab_kind::cli::{EXIT_FAILED, EXIT_INTERRUPTED};

/// Prints `e` on stderr: `iolab: error: …` (a located diagnostic as it is) and its hint.
/// Under MPI every rank prints its own, a rank other than 0 naming itself.
pub fn print(e: &CliError) {
    use std::io::Write as _;
    // A rank other than 0 leaves failed and interrupted runs to rank 0, which reports every
    // rank's (and mpirun names a rank that died); its own bad input it says itself.
    if !crate::state::speaks() && [EXIT_FAILED, EXIT_INTERRUPTED].contains(&e.exit_code()) {
        return;
    }
    let mut err = std::io::stderr().lock();
    let who = crate::state::rank_name()
        .filter(|_| !crate::state::speaks())
        .map(|r| format!(" {r}:"))
        .unwrap_or_default();
    // A message may quote a name from another host's database or file.
    let message = crate::output::terminal_safe(&e.message);
    if e.located {
        let _ = writeln!(err, "{message}");
    } else {
        let _ = writeln!(err, "iolab:{who} error: {message}");
    }
    if let Some(h) = &e.hint {
        let _ = writeln!(err, "  hint: {}", crate::output::terminal_safe(h));
    }
}
