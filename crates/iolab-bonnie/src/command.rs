//! `iolab bonnie`: bonnie++'s phases from the command line — the flags of the one option
//! table ([`crate::OPTIONS`]), the one-run plan run by the experiment runner, printed in the
//! chosen format.

use clap::{Arg, ArgMatches, Command};
use iolab_kind::cli::{self, CommandError, Counting, Host, RunArgs, Subcommand};

use crate::kind::{from_command_line, BonnieTable};
use crate::output::{self, FORMATS};

/// `iolab bonnie`.
pub struct BonnieCommand;

impl Subcommand for BonnieCommand {
    fn command(&self) -> Command {
        let cmd = Command::new("bonnie")
            .about(
                "Run bonnie++'s phases: per-char and block I/O, rewrite, random seeks, \
                 create/stat/delete",
            )
            .after_help(
                "Examples:\n  iolab bonnie --dir /mnt/test --size 2g\n  iolab bonnie --dir /mnt/test --size 1g --char-size 0 --phases io --format bonnie\n  iolab bonnie --dir /mnt/test --phases files --files 64 --max-file-size 4k --min-file-size 1k\n\nThe test file is iolab-bonnie and the file phases' directory iolab-bonnie.d, both removed\nwhen the run ends. bonnie++'s rule is a test file of at least twice the memory (the default\n--size); under an experiment's sut.cache_limit, the cap counts instead of the memory.",
            )
            .arg(cli::dir_arg(
                "Directory for the test file and the file phases (must exist)",
            ));
        let cmd = cli::option_args::<BonnieTable>(cmd)
            .arg(cli::seed_arg(
                "Seed for the seeks, the file names, sizes and orders",
            ))
            .arg(Arg::new("machine").long("machine").value_name("NAME").help(
                "The machine's name in bonnie++'s tables and CSV line, e.g. to tell \
                         configurations apart in bon_csv2html (bonnie++ -m; default: the host \
                         name)",
            ));
        cli::run_args(cmd, FORMATS)
    }

    fn run(&self, m: &ArgMatches, host: &mut dyn Host) -> Result<(), CommandError> {
        let machine = m.get_one::<String>("machine").cloned();
        if let Some(why) = machine.as_deref().and_then(output::bad_machine_name) {
            return Err(CommandError::usage(format!(
                "--machine {:?} {why}",
                machine.unwrap_or_default()
            ))
            .with_hint("give a name without commas, e.g. --machine ssd-ext4"));
        }
        let args = RunArgs::from_matches(m, FORMATS);
        let values = cli::option_values::<BonnieTable>(m);
        let runs = from_command_line(&values, &cli::dir_of(m), cli::seed_of(m))?;
        let (report, stored) = cli::report_one(
            host,
            runs,
            &args,
            &mut Counting { unit: "operation" },
            "interrupted; the files of the run were removed",
        )?;
        host.emit(&mut |out| output::write(args.format, &report, machine.as_deref(), out))?;
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
    fn bonnie_flags_come_from_its_option_table() {
        let parse = |args: &[&str]| {
            let m = BonnieCommand.command().try_get_matches_from(args).unwrap();
            cli::option_values::<BonnieTable>(&m)
        };
        let values = parse(&[
            "bonnie",
            "--dir",
            "/d",
            "--char-size",
            "0",
            "--phases",
            "io",
        ]);
        let get = |n: &str| values.iter().find(|(o, _)| o.name == n).map(|(_, v)| *v);
        assert_eq!(get("char_size"), Some(OptionValue::Bytes(0)));
        assert_eq!(get("phases"), Some(OptionValue::Name("io")));
        assert_eq!(get("chunk_size"), Some(OptionValue::Bytes(8192)));
        assert_eq!(get("size"), None, "twice the memory unless given");
        let values = parse(&["bonnie", "--dir", "/d", "--sync", "--direct", "true"]);
        let get = |n: &str| values.iter().find(|(o, _)| o.name == n).map(|(_, v)| *v);
        assert_eq!(get("sync"), Some(OptionValue::Flag(true)));
        assert_eq!(get("direct"), Some(OptionValue::Flag(true)));
        cli::testing::help_lists_the_table(BonnieCommand.command(), crate::OPTIONS);
    }
}
