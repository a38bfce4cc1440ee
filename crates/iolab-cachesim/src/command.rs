//! `iolab cachesim`: a simulation from the command line — the trace and the flags of the one
//! option table ([`crate::OPTIONS`]) as the one-run plan, run by the experiment runner,
//! printed as a table or JSON — and its tools `iolab cachesim gen` ([`gen`]) and
//! `iolab cachesim mrc` ([`mrc`]).

mod gen;
mod mrc;

use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::{Arg, ArgAction, ArgMatches, Command};
use iolab_kind::cli::{self, CommandError, Counting, Host, RunArgs, Subcommand};

use crate::output::{self, CachesimReport};

/// `iolab cachesim`.
pub struct CachesimCommand;

impl Subcommand for CachesimCommand {
    fn command(&self) -> Command {
        let cmd = Command::new("cachesim")
            .about(
                "Simulate a block cache on a trace: size, block size, associativity, replacement \
                 and write policy; hits, traffic and an estimated service time",
            )
            .after_help(
                "Examples:\n  iolab cachesim run.iolt --size 256m --block-size 4k --assoc 8 --policy lru\n  iolab cachesim w.oracleGeneral --size 10000 --block-size 1 --policy clock:m=4,i=1 --json\n  iolab cachesim run.iolt --size 1g --write-policy write-back --origin-device hdd,read=10ms\n  iolab cachesim gen --zipf 1.0 --objects 1M --requests 20M -o zipf.oracleGeneral.bin\n  iolab cachesim mrc run.iolt --block-size 4k --shards 0.01\n\nTraces: iolab's own (iolab trace --save), libCacheSim's oracleGeneral and CSV; block traces\nare split into blocks of --block-size. Every policy, its parameters and the device models:\ndocs/cachesim.md. A simulation is deterministic: one run is exact.",
            )
            .args_conflicts_with_subcommands(true)
            .subcommand_negates_reqs(true)
            .arg(
                Arg::new("trace")
                    .value_name("TRACE")
                    .required(true)
                    .value_parser(clap::value_parser!(PathBuf))
                    .help("The trace to simulate"),
            )
            .subcommand(gen::command())
            .subcommand(mrc::command());
        option_args(cmd)
            .arg(
                Arg::new("json")
                    .long("json")
                    .action(ArgAction::SetTrue)
                    .help(format!(
                        "Write the result as JSON (schema {})",
                        output::SCHEMA
                    )),
            )
            .arg(cli::db_arg())
            .arg(
                Arg::new("no_db")
                    .long("no-db")
                    .action(ArgAction::SetTrue)
                    .help("Do not store the result in the database"),
            )
    }

    fn run(&self, m: &ArgMatches, host: &mut dyn Host) -> Result<(), CommandError> {
        match m.subcommand() {
            Some(("gen", m)) => return gen::run(m, host),
            Some(("mrc", m)) => return mrc::run(m, host),
            _ => {}
        }
        let trace = m
            .get_one::<PathBuf>("trace")
            .ok_or_else(|| CommandError::usage("give the trace to simulate"))?;
        let mut values: Vec<(&str, String)> = vec![("trace", trace.to_string_lossy().into_owned())];
        values.extend(option_values(m));
        let plan = crate::kind::from_command_line(&values)?;
        let json = m.get_flag("json");
        // A simulation is CPU work on a trace: sampling the machine would only watch iolab.
        let args = RunArgs {
            format: if json {
                cli::JSON.name
            } else {
                cli::HUMAN.name
            },
            db: m
                .get_one::<PathBuf>("db")
                .cloned()
                .unwrap_or_else(|| PathBuf::from(cli::DEFAULT_DB)),
            no_db: m.get_flag("no_db"),
            monitor: false,
            monitor_interval: Duration::from_secs(1),
            trace_blocks: false,
        };
        let run = cli::run_one(
            host,
            plan,
            &args,
            &mut Counting { unit: "request" },
            "interrupted",
        )?;
        for w in &run.output.warnings {
            host.warn(&w.to_string());
        }
        let report = CachesimReport {
            result: run.output,
            host: host.machine().clone(),
            findings: run.end.findings.clone(),
        };
        host.emit(&mut |out| output::write(json, &report, out))?;
        if !json {
            host.epilogue(&report.findings, run.end.stored, &args.db);
        }
        Ok(())
    }
}

/// The simulation's flags: one per entry of [`crate::OPTIONS`] but the trace (the positional
/// argument), with the entry's help, value name, default and parser. Each value is checked on
/// its own here (a bad one is a usage error naming the flag); the cache as a whole when the
/// plan is built.
fn option_args(cmd: Command) -> Command {
    flags().fold(cmd, |cmd, o| {
        let arg = Arg::new(o.name)
            .long(o.flag())
            .help(o.help)
            .value_name(o.value_name)
            .required(o.default.is_none())
            .value_parser(move |v: &str| -> Result<String, String> {
                let mut spec = crate::CachesimSpec::with_defaults();
                (o.set)(&mut spec, v, Path::new("")).map(|()| v.to_string())
            });
        cmd.arg(match o.default {
            Some(d) => arg.default_value(d),
            None => arg,
        })
    })
}

/// The values of the flags of [`option_args`] in `m`, defaults included.
fn option_values(m: &ArgMatches) -> Vec<(&'static str, String)> {
    flags()
        .filter_map(|o| m.get_one::<String>(o.name).map(|v| (o.name, v.clone())))
        .collect()
}

fn flags() -> impl Iterator<Item = &'static crate::spec::SpecOption> {
    crate::OPTIONS.iter().filter(|o| o.name != "trace")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_commands_are_consistent() {
        CachesimCommand.command().debug_assert();
    }
}
