//! `iolab sqlite`: SQLite transactions from the command line — the flags of the one option
//! table ([`crate::OPTIONS`]), the one-run plan run by the experiment runner, printed in the
//! chosen format.

use clap::{ArgMatches, Command};
use iolab_kind::cli::{self, CommandError, Counting, Host, RunArgs, Subcommand};

use crate::kind::{from_command_line, SqliteTable};
use crate::output::{self, FORMATS};

/// `iolab sqlite`.
pub struct SqliteCommand;

impl Subcommand for SqliteCommand {
    fn command(&self) -> Command {
        let cmd = Command::new("sqlite")
            .about(
                "Time SQLite transactions under a journal mode and synchronous level \
                 (Mobibench's DB mode)",
            )
            .after_help(
                "Examples:\n  iolab sqlite --dir /mnt/test --journal wal --synchronous full --transactions 1000\n  iolab sqlite --dir /mnt/test --mode update --journal delete --threads 4 --format mobibench\n\nEach thread uses its own database files, iolab-sqlite.THREAD.DB.db, made new for the run\nand removed after it. Semantics and the system calls of each journal mode: docs/sqlite.md.",
            )
            .arg(cli::dir_arg("Directory for the database files (must exist)"));
        let cmd = cli::option_args::<SqliteTable>(cmd).arg(cli::seed_arg(
            "Seed for the ids of updates, deletes and random inserts",
        ));
        cli::run_args(cmd, FORMATS)
    }

    fn run(&self, m: &ArgMatches, host: &mut dyn Host) -> Result<(), CommandError> {
        let args = RunArgs::from_matches(m, FORMATS);
        let values = cli::option_values::<SqliteTable>(m);
        let runs = from_command_line(&values, &cli::dir_of(m), cli::seed_of(m))?;
        let (report, stored) = cli::report_one(
            host,
            runs,
            &args,
            &mut Counting {
                unit: "transaction",
            },
            "interrupted; the database files of this run were removed",
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
    use iolab_util::option::{OptionKind, OptionValue};

    /// `iolab sqlite …` (`args`, from `iolab`) as the command parses it, or clap's error.
    fn parse(args: &[&str]) -> Result<ArgMatches, clap::Error> {
        SqliteCommand.command().try_get_matches_from(&args[1..])
    }

    #[test]
    fn sqlite_flags_come_from_the_option_table() {
        let m = parse(&[
            "iolab",
            "sqlite",
            "--dir",
            "/d",
            "--journal",
            "wal",
            "--temp-store",
            "file",
            "--random",
        ])
        .unwrap();
        let options = cli::option_values::<SqliteTable>(&m);
        let get = |n: &str| options.iter().find(|(o, _)| o.name == n).map(|(_, v)| *v);
        assert_eq!(get("journal"), Some(OptionValue::Name("wal")));
        assert_eq!(get("temp_store"), Some(OptionValue::Name("file")));
        assert_eq!(get("random"), Some(OptionValue::Flag(true)));
        assert_eq!(get("transactions"), Some(OptionValue::Count(1000)));
        assert_eq!(get("sleep"), None);
        assert_eq!(RunArgs::from_matches(&m, FORMATS).format, "human");
        let help = SqliteCommand.command().render_long_help().to_string();
        for o in crate::OPTIONS {
            let usage = match o.kind {
                OptionKind::Flag => format!("--{} [<{}>]", o.flag(), o.value_name),
                _ => format!("--{} <{}>", o.flag(), o.value_name),
            };
            assert!(help.contains(&usage), "{usage}: {help}");
            if let Some(d) = o.default {
                assert!(help.contains(&format!("[default: {d}]")), "{}", o.name);
            }
        }
        // A flag alone is on; a value turns it on or off, and must be one.
        let e = parse(&["iolab", "sqlite", "--dir", "/d", "--random", "maybe"])
            .unwrap_err()
            .to_string();
        assert!(e.contains("`maybe` is not true or false"), "{e}");
        let off = parse(&["iolab", "sqlite", "--random", "off", "--dir", "/d"]).unwrap();
        let random = cli::option_values::<SqliteTable>(&off)
            .into_iter()
            .find(|(o, _)| o.name == "random");
        assert_eq!(random.map(|(_, v)| v), Some(OptionValue::Flag(false)));
    }
}
