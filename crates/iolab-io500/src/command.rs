//! `iolab io500`: IO500's phases from the command line — the flags of the one option table
//! ([`crate::OPTIONS`]), one run through the experiment runner, printed as IO500 prints its
//! result list.

use clap::{ArgMatches, Command};
use iolab_kind::cli::{self, CommandError, Counting, Host, RunArgs, Subcommand};

use crate::kind::{from_command_line, Io500Table};
use crate::output::{self, FORMATS};

/// `iolab io500`.
pub struct Io500Command;

impl Subcommand for Io500Command {
    fn command(&self) -> Command {
        let cmd = Command::new("io500")
            .about(
                "Run IO500: ior-easy, ior-hard, mdtest-easy, mdtest-hard and a find, in IO500's \
                 order, scored as IO500 scores them",
            )
            .after_help(
                "Examples:\n  iolab io500 --dir /mnt/test\n  iolab io500 --dir /mnt/test --stonewall 30s --scale 4\n  mpirun -np 8 iolab io500 --dir /mnt/shared --stonewall 300s --scale 100\n\nBy default a mini run: sizes per rank that end long before IO500's 300 s stonewall, so\nthe result says it is not a valid IO500 result (--scale or the sizes make it longer).\nThe data live in DIR/io500-data and are removed when the run ends; docs/io500.md says\nwhat each phase does and how the score is made.",
            )
            .arg(cli::dir_arg(
                "Directory for the data (must exist; under MPI one every rank sees)",
            ));
        let cmd = cli::option_args::<Io500Table>(cmd)
            .arg(cli::seed_arg("Seed of the run (the data written)"));
        cli::run_args(cmd, FORMATS)
    }

    fn run(&self, m: &ArgMatches, host: &mut dyn Host) -> Result<(), CommandError> {
        let args = RunArgs::from_matches(m, FORMATS);
        let values = cli::option_values::<Io500Table>(m);
        let runs = from_command_line(&values, &cli::dir_of(m), cli::seed_of(m))?;
        let (report, stored) = cli::report_one(
            host,
            runs,
            &args,
            &mut Counting { unit: "transfer" },
            "interrupted; the files of the run were removed",
        )?;
        host.emit(&mut |out| output::write(args.format, &report, out))?;
        if args.human() {
            host.epilogue(&report.findings, stored, &args.db);
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
        let m = Io500Command
            .command()
            .try_get_matches_from(["io500", "--dir", "/d", "--stonewall", "5s", "--scale", "2"])
            .unwrap();
        let values = cli::option_values::<Io500Table>(&m);
        let get = |n: &str| values.iter().find(|(o, _)| o.name == n).map(|(_, v)| *v);
        assert_eq!(get("scale"), Some(OptionValue::Count(2)));
        assert_eq!(
            get("stonewall"),
            Some(OptionValue::Duration(std::time::Duration::from_secs(5)))
        );
        cli::testing::help_lists_the_table(Io500Command.command(), crate::OPTIONS);
    }
}
