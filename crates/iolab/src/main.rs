//! The `iolab` command: parses the command line, runs the command, prints, and maps errors to
//! documented exit codes (0 ok, 1 run failed, 2 bad input or usage).

/// `eprintln!` without its panic. stderr may be a pipe whose reader has gone
/// (`iolab run X.toml 2>&1 | tee log`, then Ctrl-C): a lost message must not abort a run
/// half-way, skip the clean-up and leave the experiment marked running.
///
/// Under MPI only rank 0 speaks: the others' progress would repeat it once per rank (their
/// errors still reach stderr, see `error::print`).
macro_rules! say {
    () => {{
        use std::io::Write as _;
        if crate::state::speaks() {
            let _ = writeln!(std::io::stderr());
        }
    }};
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if crate::state::speaks() {
            let _ = writeln!(std::io::stderr(), $($arg)*);
        }
    }};
}

/// [`say!`] without the newline (`eprint!` without its panic).
macro_rules! say_inline {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if crate::state::speaks() {
            let _ = write!(std::io::stderr(), $($arg)*);
        }
    }};
}

mod cli;
mod cmd;
mod error;
mod output;
mod signals;
mod state;
mod term;

use std::process::ExitCode;

fn main() -> ExitCode {
    // Before any thread: what iolab starts carries its PID, for `iolab recover` to know it.
    iolab_sut::holders::mark_children();
    // In a VM, iolab is also the guest's init (/init of the initramfs, PID 1).
    if iolab_vm::guest::is_init() {
        iolab_vm::guest::run_init()
    }
    // A run in a container or a VM: not a command for people (iolab-experiment's run::worker).
    if std::env::args_os().nth(1).as_deref()
        == Some(std::ffi::OsStr::new(
            iolab_experiment::run::worker::SUBCOMMAND,
        ))
    {
        return ExitCode::from(iolab_experiment::run::worker::serve() as u8);
    }
    let matches = cli::command().get_matches();
    let cancel = match signals::install() {
        Ok(c) => c,
        Err(e) => {
            say!("iolab: error: cannot install signal handlers: {e}");
            return ExitCode::from(error::EXIT_FAILED);
        }
    };
    // Under mpirun with several ranks: MPI starts here and ends when `_mpi` is dropped, after
    // the command.
    let _mpi = match iolab_mpi::start(std::sync::Arc::clone(&cancel)) {
        Ok(m) => {
            if let Some(m) = &m {
                state::join(m.group());
            }
            m
        }
        Err(e) => {
            let mut err = error::CliError::usage(e.to_string());
            if let Some(h) = e.hint() {
                err = err.with_hint(h);
            }
            error::print(&err);
            return ExitCode::from(err.exit_code());
        }
    };
    match cmd::dispatch(&matches, cancel) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            error::print(&e);
            ExitCode::from(e.exit_code())
        }
    }
}
