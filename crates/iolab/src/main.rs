//! The `iolab` command: parses the command line, runs the command, prints, and maps errors to
//! documented exit codes (0 ok, 1 run failed, 2 bad input or usage).

mod cli;
mod cmd;
mod error;
mod fmt;
mod output;
mod term;
mod workloads;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    match cmd::dispatch(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            e.print();
            ExitCode::from(e.exit_code())
        }
    }
}
