//! `iolab replay` (the lists given as flags of the one option table, validated together, as the one-run plan run by
//! the experiment runner, printed in the chosen format) and `iolab filelist` (the list
//! generators: the list goes to `--output`, written only once it is complete, or to standard
//! output; what it holds to standard error).

use std::path::{Path, PathBuf};

use clap::{Arg, ArgAction, ArgMatches, Command};
use iolab_kind::cli::{self, CommandError, Counting, Host, RunArgs, Subcommand};
use iolab_kind::output::SingleReport;

use iolab_kind::table::OptionTable;

use crate::kind::{from_command_line, list_usage, BetweenDays, ReplayTable};
use crate::output::{self, ReplayReport, FORMATS};
use crate::{GenError, Generated, Role, Schedule};

/// `iolab replay`.
pub struct ReplayCommand;

impl Subcommand for ReplayCommand {
    fn command(&self) -> Command {
        let cmd = Command::new("replay")
            .about(
                "Replay file lists in a directory: an install, a boot read set and workdays \
                 (docs/replay.md)",
            )
            .after_help(
                "Examples:\n  iolab filelist scan /usr/share/doc -o install.list\n  iolab filelist sample install.list --bytes 20m -o boot.list\n  iolab filelist workday --sets 4 --read 2 --create 1 --delete 1 --days 5 --set-bytes 10m -o days.list\n  iolab replay --dir /mnt/test --install install.list --boot boot.list --days days.list\n\nThe replay's files are removed when it ends. A quick replay ends each day with a syncfs\n(--between-days none) or, as root, a syncfs and a cache drop (drop_caches); remounting between\ndays (the default in experiment files) needs a target iolab mounts: an experiment with a\nloop_image or block_device target. See docs/replay.md.",
            )
            .arg(cli::dir_arg(
                "Directory to replay the lists in (must exist; the lists' names are relative to it)",
            ));
        let cmd = cli::option_args::<ReplayTable>(cmd)
            .mut_arg("between_days", between_days_flag)
            .arg(cli::seed_arg(
                "The run's seed (stored; the lists themselves fix every choice)",
            ));
        cli::run_args(cmd, FORMATS)
    }

    fn run(&self, m: &ArgMatches, host: &mut dyn Host) -> Result<(), CommandError> {
        let args = RunArgs::from_matches(m, FORMATS);
        let (dir, seed) = (cli::dir_of(m), cli::seed_of(m));
        let mut spec = ReplayTable::defaults(dir.clone(), seed);
        for (o, v) in cli::option_values::<ReplayTable>(m) {
            o.apply(&mut spec, v);
        }
        let between_days = spec.between_days;
        let runs = from_command_line(spec, &dir, seed)?;
        let started_at = std::time::SystemTime::now();
        let run = cli::run_one(
            host,
            runs,
            &args,
            &mut Counting { unit: "file" },
            "interrupted; the files of the replay were removed",
        )?;
        let stored = run.end.stored;
        let report = ReplayReport {
            between_days,
            run: SingleReport::of(run, host.machine(), started_at),
        };
        host.emit(&mut |out| output::write(args.format, &report, out))?;
        if args.human() {
            host.epilogue(&report.run.findings, stored, &args.db);
        }
        Ok(())
    }
}

/// `--between-days` as the command line has always had it: its own default, `none` (iolab
/// does not remount a `--dir` it did not mount; an experiment's default is `remount`), and the
/// choices listed by clap under the table's help rather than appended to it.
fn between_days_flag(arg: Arg) -> Arg {
    use clap::builder::{PossibleValuesParser, TypedValueParser};
    let Some(o) = crate::kind::OPTIONS
        .iter()
        .find(|o| o.name == "between_days")
    else {
        return arg;
    };
    arg.default_value(BetweenDays::None.name())
        .help(o.help)
        .value_parser(PossibleValuesParser::new(BetweenDays::NAMES).try_map(|s| o.parse(&s)))
}

/// `iolab filelist scan|sample|workday`.
pub struct FilelistCommand;

/// `-o FILE`.
fn output_arg() -> Arg {
    Arg::new("output")
        .long("output")
        .short('o')
        .value_name("FILE")
        .value_parser(clap::value_parser!(PathBuf))
        .help("Write the list to FILE (default: standard output)")
}

fn size(s: &str) -> Result<u64, String> {
    iolab_util::units::parse_size(s).map_err(|e| e.to_string())
}

/// A required count of `iolab filelist workday`.
fn count(id: &'static str, value_name: &'static str, help: &'static str) -> Arg {
    Arg::new(id)
        .long(id)
        .value_name(value_name)
        .required(true)
        .value_parser(clap::value_parser!(u32))
        .help(help)
}

impl Subcommand for FilelistCommand {
    fn command(&self) -> Command {
        Command::new("filelist")
            .about("Make file lists for `iolab replay`: from a directory tree, a boot read set, workdays")
            .after_help(
                "Examples:\n  iolab filelist scan /usr -o install.list\n  iolab filelist sample install.list --bytes 150m -o boot.list\n  iolab filelist workday --sets 20 --read 9 --create 1 --delete 1 --days 20 -o days.list\n\nThe same input and --seed give the same bytes. The list format, the schedule of the\nworkdays and what a replay measures: docs/replay.md.",
            )
            .subcommand_required(true)
            .arg_required_else_help(true)
            .subcommand(
                Command::new("scan")
                    .about(
                        "An install list of a directory tree: its directories and regular files \
                         with their sizes",
                    )
                    .arg(
                        Arg::new("dir")
                            .value_name("DIR")
                            .required(true)
                            .value_parser(clap::value_parser!(PathBuf))
                            .help("The tree's root; the list's names are relative to it"),
                    )
                    .arg(
                        Arg::new("files_only")
                            .long("files-only")
                            .action(ArgAction::SetTrue)
                            .help(
                                "Only the files (the bare `name, size, c` form; creates make \
                                 their parents)",
                            ),
                    )
                    .arg(output_arg()),
            )
            .subcommand(
                Command::new("sample")
                    .about("A boot read set: random files of a list summing to --bytes")
                    .arg(
                        Arg::new("list")
                            .value_name("LIST")
                            .required(true)
                            .value_parser(clap::value_parser!(PathBuf))
                            .help("The list to pick from (the files it leaves existing)"),
                    )
                    .arg(
                        Arg::new("bytes")
                            .long("bytes")
                            .value_name("SIZE")
                            .required(true)
                            .value_parser(size)
                            .help("Bytes to read (e.g. 150m)"),
                    )
                    .arg(cli::seed_arg("Seed of the random choice of files"))
                    .arg(output_arg()),
            )
            .subcommand(
                Command::new("workday")
                    .about(
                        "Workdays: data sets read, created and deleted day by day \
                         (docs/replay.md)",
                    )
                    .arg(count(
                        "sets",
                        "M",
                        "M: the number of data sets kept once the start is over",
                    ))
                    .arg(count("read", "R", "r: sets read per day"))
                    .arg(count(
                        "create",
                        "C",
                        "c: sets created per day (twice as many at the start, until M exist)",
                    ))
                    .arg(count("delete", "D", "d: sets deleted per day"))
                    .arg(count("days", "N", "Days to generate"))
                    .arg(
                        Arg::new("set_bytes")
                            .long("set-bytes")
                            .value_name("SIZE")
                            .default_value("100m")
                            .value_parser(size)
                            .help("Bytes per data set (e.g. 100m)"),
                    )
                    .arg(cli::seed_arg(
                        "Seed of the sets' files and of which sets are read and deleted",
                    ))
                    .arg(output_arg()),
            )
    }

    fn run(&self, m: &ArgMatches, host: &mut dyn Host) -> Result<(), CommandError> {
        let Some((name, m)) = m.subcommand() else {
            return Err(CommandError::usage("no generator given")
                .with_hint("give one of scan, sample, workday"));
        };
        let path = |id: &str| m.get_one::<PathBuf>(id).cloned().unwrap_or_default();
        let n = |id: &str| m.get_one::<u32>(id).copied().unwrap_or_default();
        let bytes = |id: &str| m.get_one::<u64>(id).copied().unwrap_or_default();
        let seed = || {
            m.get_one::<u64>("seed")
                .copied()
                .unwrap_or(iolab_kind::DEFAULT_SEED)
        };
        let g = match name {
            "scan" => crate::scan(&path("dir"), m.get_flag("files_only")).map_err(gen_error)?,
            "sample" => {
                let l = crate::read_list(&path("list"), Role::Plain).map_err(list_usage)?;
                // A list the replay would refuse is no base for a boot set.
                crate::check(&crate::Lists {
                    install: Some(l.clone()),
                    ..Default::default()
                })
                .map_err(list_usage)?;
                crate::sample(&l, bytes("bytes"), seed()).map_err(gen_error)?
            }
            _ => Schedule {
                sets: n("sets"),
                read: n("read"),
                create: n("create"),
                delete: n("delete"),
                days: n("days"),
                set_bytes: bytes("set_bytes"),
                seed: seed(),
            }
            .generate()
            .map_err(gen_error)?,
        };
        match m.get_one::<PathBuf>("output") {
            Some(path) => {
                write(path, &g)?;
                host.say(&format!(
                    "wrote {}: {} files, {} bytes{}",
                    path.display(),
                    g.files,
                    g.bytes,
                    skipped(&g)
                ));
            }
            None => {
                host.emit(&mut |o| o.write_all(g.text.as_bytes()))?;
                if g.skipped > 0 {
                    host.say(skipped(&g).trim_start_matches(", "));
                }
            }
        }
        Ok(())
    }
}

fn skipped(g: &Generated) -> String {
    if g.skipped == 0 {
        String::new()
    } else {
        format!(
            ", {} entries skipped (links, devices, sockets, unreadable directories)",
            g.skipped
        )
    }
}

fn write(path: &Path, g: &Generated) -> Result<(), CommandError> {
    std::fs::write(path, &g.text)
        .map_err(|e| CommandError::failed(format!("cannot write {}: {e}", path.display())))
}

fn gen_error(e: GenError) -> CommandError {
    if e.is_bad_input() {
        CommandError::usage(e.to_string())
    } else {
        CommandError::failed(e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_util::option::OptionValue;

    #[test]
    fn replay_flags_and_their_defaults() {
        let m = ReplayCommand
            .command()
            .try_get_matches_from(["replay", "--dir", "/d", "--days", "d.list"])
            .unwrap();
        assert_eq!(
            m.get_one::<OptionValue>("between_days").map(|v| v.name()),
            Some("none")
        );
        assert_eq!(m.get_one::<u64>("seed"), Some(&iolab_kind::DEFAULT_SEED));
        assert_eq!(m.get_one::<OptionValue>("install"), None);
        assert_eq!(
            m.get_one::<OptionValue>("days").and_then(|v| v.path()),
            Some(Path::new("d.list"))
        );
        assert_eq!(RunArgs::from_matches(&m, FORMATS).format, "human");
        let e = ReplayCommand
            .command()
            .try_get_matches_from(["replay", "--dir", "/d", "--between-days", "sometimes"])
            .unwrap_err()
            .to_string();
        assert!(e.contains("--between-days"), "{e}");
        ReplayCommand.command().debug_assert();
        FilelistCommand.command().debug_assert();
    }

    /// The help shows every option of the table with its value name and help, and
    /// `--between-days` with the command line's own default and its choices.
    #[test]
    fn help_lists_the_table() {
        let help = ReplayCommand.command().render_long_help().to_string();
        for o in crate::kind::OPTIONS {
            let shown = format!("--{} <{}>", o.flag(), o.value_name);
            assert!(help.contains(&shown), "{shown}: {help}");
            let words = o.help.split_whitespace().collect::<Vec<_>>().join(" ");
            let flat = help.split_whitespace().collect::<Vec<_>>().join(" ");
            assert!(flat.contains(&words), "{}: {help}", o.name);
        }
        assert!(
            help.contains(
                "[default: none]\n          [possible values: remount, drop_caches, none]"
            ),
            "{help}"
        );
    }

    #[test]
    fn filelist_needs_a_generator_and_its_counts() {
        let e = FilelistCommand
            .command()
            .try_get_matches_from(["filelist"])
            .unwrap_err();
        assert_eq!(
            e.kind(),
            clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
        );
        let e = FilelistCommand
            .command()
            .try_get_matches_from(["filelist", "workday", "--sets", "4"])
            .unwrap_err()
            .to_string();
        assert!(e.contains("--read <R>"), "{e}");
        let m = FilelistCommand
            .command()
            .try_get_matches_from(["filelist", "sample", "x.list", "--bytes", "20m"])
            .unwrap();
        let (_, m) = m.subcommand().unwrap();
        assert_eq!(m.get_one::<u64>("bytes"), Some(&(20 << 20)));
        assert_eq!(m.get_one::<u64>("seed"), Some(&iolab_kind::DEFAULT_SEED));
    }
}
