//! `iolab micro`: one access pattern under one sync mode from the command line — the flags of
//! the one option table ([`crate::OPTIONS`]), the one-run plan run by the experiment runner,
//! printed in the chosen format.

use clap::{Arg, ArgAction, ArgMatches, Command};
use iolab_kind::cli::{self, CommandError, Counting, Host, RunArgs, Subcommand};

use crate::kind::{from_command_line, MicroTable};
use crate::output::{self, FORMATS};

/// `iolab micro`.
pub struct MicroCommand;

impl Subcommand for MicroCommand {
    fn command(&self) -> Command {
        let cmd = Command::new("micro")
            .about("Measure one access pattern under one sync mode (mobibench's micro tests, done right)")
            .after_help(
                "Examples:\n  iolab micro --dir /mnt/test --access randwrite --sync fdatasync --bs 4k --size 64m\n  iolab micro --dir /mnt/test --access randread --engine io_uring --iodepth 32 --size 1g --json\n\nFiles are named iolab-micro.N (one per thread) and kept for later read runs unless\n--remove-files is given; a file of the right size is reused.",
            )
            .arg(cli::dir_arg("Directory for the data files (must exist)"));
        let cmd = cli::option_args::<MicroTable>(cmd)
            .arg(cli::seed_arg("Seed for the random order and random data"))
            .arg(
                Arg::new("remove_files")
                    .long("remove-files")
                    .action(ArgAction::SetTrue)
                    .help("Delete the data files after a successful run"),
            );
        cli::run_args(cmd, FORMATS)
    }

    fn run(&self, m: &ArgMatches, host: &mut dyn Host) -> Result<(), CommandError> {
        let args = RunArgs::from_matches(m, FORMATS);
        let values = cli::option_values::<MicroTable>(m);
        let runs = from_command_line(&values, &cli::dir_of(m), cli::seed_of(m))?;
        let (report, stored) = cli::report_one(
            host,
            runs,
            &args,
            &mut Counting { unit: "record" },
            "interrupted; files created for this run were removed",
        )?;
        host.emit(&mut |out| output::write(args.format, &report, out))?;
        if args.human() {
            host.epilogue(&report.findings, stored, &args.db);
        }
        if m.get_flag("remove_files") {
            for f in &report.result.files {
                std::fs::remove_file(f).map_err(|e| {
                    CommandError::failed(format!("cannot remove {}: {e}", f.display()))
                })?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_util::option::OptionValue;

    /// `iolab micro …` (`args`, from `iolab`) as the command parses it, or clap's error.
    fn parse(args: &[&str]) -> Result<ArgMatches, clap::Error> {
        MicroCommand.command().try_get_matches_from(&args[1..])
    }

    #[test]
    fn micro_flags_come_from_the_option_table() {
        let m = parse(&[
            "iolab",
            "micro",
            "--dir",
            "/d",
            "--threads",
            "4",
            "--engine",
            "uring",
        ])
        .unwrap();
        let options = cli::option_values::<MicroTable>(&m);
        let get = |n: &str| options.iter().find(|(o, _)| o.name == n).map(|(_, v)| *v);
        assert_eq!(get("threads"), Some(OptionValue::Count(4)));
        assert_eq!(get("engine"), Some(OptionValue::Name("io_uring")));
        // Defaults are the table's, as parsed values.
        assert_eq!(get("bs"), Some(OptionValue::Bytes(4096)));
        assert_eq!(get("iodepth"), None);
        cli::testing::help_lists_the_table(MicroCommand.command(), crate::OPTIONS);
        let e = parse(&["iolab", "micro", "--dir", "/d", "--threads", "0"])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("'--threads <THREADS>': must be at least 1"),
            "{e}"
        );
    }
}
