//! One module per subcommand.

mod check;
pub mod compare;
mod db;
pub mod experiment;
pub mod import;
mod manual;
mod recover;
mod reparse;
pub mod report;
mod show;
pub mod single;
pub mod trace;
pub mod trace_convert;
mod trace_syscalls;
mod watch;

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use crate::cli::{Cli, Command};
use crate::error::CliError;

/// Runs the command `m` names: a kind's (from the registry) or one of the binary's own.
pub fn dispatch(m: &clap::ArgMatches, cancel: Arc<AtomicBool>) -> Result<(), CliError> {
    if let Some((name, sub)) = m.subcommand() {
        if let Some(c) = iolab_kinds::commands().find(|c| c.command().get_name() == name) {
            return c.run(sub, &mut single::CliHost { cancel });
        }
    }
    let cli = <Cli as clap::FromArgMatches>::from_arg_matches(m).unwrap_or_else(|e| e.exit());
    match cli.command {
        Command::Run(args) => {
            let sub = m.subcommand_matches("run").unwrap_or(m);
            if args.file.ends_with(".toml") {
                experiment::run(args, sub, cancel)
            } else {
                run_file(&args, sub, cancel)
            }
        }
        Command::List(args) => db::list(args),
        Command::Show(args) => show::show(args),
        Command::Export(args) => db::export(args),
        Command::Recover(args) => recover::run(args),
        Command::Reparse(args) => reparse::run(args),
        Command::Trace(args) => trace::run(*args, cancel),
        Command::Check(args) => check::run(args),
        Command::Report(args) => report::run(args),
        Command::Compare(args) => compare::run(args),
        Command::Import(args) => import::run(args),
        Command::Completions(args) => manual::completions(args),
        Command::Man(args) => manual::man(args),
    }
}

/// `iolab run FILE` for a workload file: the runner of the kind that takes it.
fn run_file(
    args: &crate::cli::RunArgs,
    m: &clap::ArgMatches,
    cancel: Arc<AtomicBool>,
) -> Result<(), CliError> {
    if args.resume {
        return Err(
            CliError::usage("--resume continues an experiment (.toml file)")
                .with_hint("a workload run has nothing to resume; run it again"),
        );
    }
    match iolab_kinds::file_runner(&args.file) {
        Some(f) => f.run(&args.file, m, &mut single::CliHost { cancel }),
        None => Err(
            CliError::usage(format!("{}: not a workload iolab runs", args.file))
                .with_hint("give an experiment file (.toml) or a workload file"),
        ),
    }
}
