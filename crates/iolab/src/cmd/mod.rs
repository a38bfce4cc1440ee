//! One module per subcommand.

mod micro;
mod run;
mod workloads;

use crate::cli::{Cli, Command};
use crate::error::CliError;

pub fn dispatch(cli: Cli) -> Result<(), CliError> {
    match cli.command {
        Command::Micro(args) => micro::run(args),
        Command::Run(args) => run::run(args),
        Command::Workloads => workloads::list(),
    }
}
