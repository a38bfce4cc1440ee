//! The `iolab` command: parses the command line, runs the command, prints, and maps errors to
//! documented exit codes (0 ok, 1 run failed, 2 bad input or usage).

mod cli;
mod cmd;
mod error;
mod fmt;
mod output;
mod signals;
mod state;
mod term;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    let cancel = match signals::install() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("iolab: error: cannot install signal handlers: {e}");
            return ExitCode::from(error::EXIT_FAILED);
        }
    };
    match cmd::dispatch(cli, cancel) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            e.print();
            ExitCode::from(e.exit_code())
        }
    }
}
