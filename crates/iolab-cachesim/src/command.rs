//! `iolab cachesim`: a simulation from the command line — the trace and the flags of the one
//! option table ([`crate::OPTIONS`], through [`cli::option_args`]) as the one-run plan, run by the experiment runner,
//! printed as a table or JSON — and its tools `iolab cachesim gen` ([`gen`]) and
//! `iolab cachesim mrc` ([`mrc`]).

mod gen;
mod mrc;

use std::path::PathBuf;
use std::time::Duration;

use clap::{Arg, ArgAction, ArgMatches, Command};
use iolab_kind::cli::{self, CommandError, Counting, Host, RunArgs, Subcommand};

use crate::output::{self, CachesimReport};
use crate::spec::CachesimTable;

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
            .subcommand(gen::command())
            .subcommand(mrc::command());
        // The table's flags, but the trace is the positional argument and the size, which has
        // no default, is required here (a file says so when it is missing).
        cli::option_args::<CachesimTable>(cmd)
            .mut_arg("trace", |a| {
                a.long(None)
                    .value_name("TRACE")
                    .required(true)
                    .help("The trace to simulate")
            })
            .mut_arg("size", |a| a.required(true))
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
        let plan = crate::kind::from_command_line(&cli::option_values::<CachesimTable>(m))?;
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
            trace_syscalls: false,
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

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_util::option::OptionValue;

    #[test]
    fn the_flags_come_from_the_option_table() {
        CachesimCommand.command().debug_assert();
        let m = CachesimCommand
            .command()
            .try_get_matches_from(["cachesim", "t.iolt", "--size", "64k", "--assoc", "8"])
            .unwrap();
        let values = cli::option_values::<CachesimTable>(&m);
        let get = |n: &str| values.iter().find(|(o, _)| o.name == n).map(|(_, v)| *v);
        assert_eq!(get("trace"), Some(OptionValue::Text("t.iolt")));
        assert_eq!(get("size"), Some(OptionValue::Bytes(65536)));
        assert_eq!(get("assoc"), Some(OptionValue::Text("8")));
        // Defaults are the table's; sizes go through the one size parser.
        assert_eq!(get("block_size"), Some(OptionValue::Bytes(4096)));
        assert_eq!(get("policy"), Some(OptionValue::Text("lru")));
        let help = CachesimCommand.command().render_long_help().to_string();
        assert!(
            help.contains("<TRACE>") && help.contains("The trace to simulate"),
            "{help}"
        );
        assert!(!help.contains("--trace"), "{help}");
        let e = CachesimCommand
            .command()
            .try_get_matches_from(["cachesim", "t.iolt", "--size", "4q"])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("'--size <SIZE>'") && e.contains("is not a size"),
            "{e}"
        );
    }
}
