//! `iolab ior`: IOR's own command line (`-a POSIX -t 1m -b 64m -F -C -e -o /mnt/t/f …`),
//! read through the one option table (each option's `original` is its IOR flag), run by the
//! experiment runner as `iolab run` runs an experiment, and printed as IOR prints its summary.

use std::path::{Path, PathBuf};

use clap::{Arg, ArgAction, ArgMatches, Command};
use iolab_kind::cli::{self, CommandError, Counting, Host, RunArgs, Subcommand};
use iolab_kind::output::SingleReport;
use iolab_util::option::{OptionKind, OptionValue};

use crate::kind::from_command_line;
use crate::output::{self, FORMATS};
use crate::{option, IorOption, OPTIONS};

/// `iolab ior`.
pub struct IorCommand;

/// IOR's flags iolab does not take, with what they do in IOR (for the error).
const UNSUPPORTED: &[(char, &str)] = &[
    ('c', "collective I/O (MPI-IO)"),
    ('d', "a delay between repetitions"),
    ('E', "using an existing test file"),
    ('f', "a test script"),
    ('g', "barriers between open, transfers and close"),
    ('j', "outlier warnings"),
    ('K', "keeping files with data errors"),
    ('l', "a data packet type"),
    ('m', "one file per repetition"),
    ('M', "hogging memory"),
    ('N', "a task count other than MPI's"),
    ('R', "checking the data read"),
    ('T', "a time limit on repetitions"),
    ('u', "a directory per process"),
    ('W', "checking the data written"),
    ('x', "single transfer attempts"),
    ('X', "a seed for random task reordering"),
    ('y', "dual mount points"),
    ('Y', "fsync after every write"),
    ('Z', "random task reordering"),
];

/// IOR's flags that change nothing in iolab (a seed for IOR's data stamp, verbosity).
const IGNORED: &[char] = &['G', 'v'];

/// The IOR flag of a table option: `-t` → `t`.
fn short(o: &IorOption) -> Option<char> {
    let f = o.original.strip_prefix('-')?;
    let mut c = f.chars();
    let ch = c.next()?;
    c.next().is_none().then_some(ch)
}

impl Subcommand for IorCommand {
    fn command(&self) -> Command {
        let mut cmd = Command::new("ior")
            .about("Run IOR's write and read phases from IOR's own command line")
            .after_help(
                "Examples:\n  iolab ior -a POSIX -t 1m -b 64m -F -o /mnt/test/testFile\n  iolab ior -t 47008 -b 47008 -s 1000 -C -e -o /mnt/test/ior-hard\n  iolab ior --preset ior-easy -b 256m -D 30 -O stoneWallingWearOut=1 --dir /mnt/test\n\nThe files are IOR's (FILE, or FILE.00000000, … per rank with -F) in --dir, or in -o's\ndirectory; they are removed after the run unless -k. Under mpirun every rank runs its\nshare; docs/ior.md says what each aggregate means.",
            )
            .disable_help_flag(false);
        for o in OPTIONS {
            // IOR's flag, and the table's name (which messages use).
            let mut arg = Arg::new(o.name)
                .long(o.flag())
                .help(o.help_with_original("IOR"));
            if let Some(c) = short(o) {
                arg = arg.short(c);
            } else if let Some(long) = o.original.strip_prefix("--") {
                arg = arg.alias(long);
            }
            arg = match o.kind {
                OptionKind::Flag => arg.action(ArgAction::SetTrue),
                // IOR's -D is whole seconds; 0 is none.
                OptionKind::Duration => arg.value_name("SECONDS").value_parser(|s: &str| {
                    if s.trim() == "0" {
                        return Ok(None);
                    }
                    cli::positive_duration(s).map(|d| Some(OptionValue::Duration(d)))
                }),
                _ => arg
                    .value_name(o.value_name)
                    .value_parser(move |s: &str| o.parse(s)),
            };
            cmd = cmd.arg(arg);
        }
        cmd = cmd
            .arg(
                Arg::new("api")
                    .short('a')
                    .value_name("API")
                    .help("IOR's API: POSIX only"),
            )
            .arg(
                Arg::new("iterations")
                    .short('i')
                    .value_name("N")
                    .value_parser(clap::value_parser!(u32).range(1..=1000))
                    .help("Repetitions, each its own run (IOR -i)"),
            )
            .arg(
                Arg::new("directive")
                    .short('O')
                    .value_name("KEY=VALUE")
                    .action(ArgAction::Append)
                    .help(
                        "IOR's directives: stoneWallingWearOut=1 (--wear-out in a file: \
                         wear_out), useO_DIRECT=1",
                    ),
            )
            .arg(
                Arg::new("dir")
                    .long("dir")
                    .value_name("DIR")
                    .value_parser(clap::value_parser!(PathBuf))
                    .help("Directory for the test files (must exist) [default: -o's directory]"),
            )
            .arg(cli::seed_arg(
                "Seed for the random offsets (-z) and the data",
            ));
        for (c, _) in UNSUPPORTED {
            cmd = cmd.arg(
                Arg::new(format!("unsupported-{c}"))
                    .short(*c)
                    .num_args(0..=1)
                    .action(ArgAction::Append)
                    .hide(true),
            );
        }
        for c in IGNORED {
            cmd = cmd.arg(
                Arg::new(format!("ignored-{c}"))
                    .short(*c)
                    .num_args(0..=1)
                    .action(ArgAction::Append)
                    .hide(true),
            );
        }
        cli::run_args(cmd, FORMATS)
    }

    fn run(&self, m: &ArgMatches, host: &mut dyn Host) -> Result<(), CommandError> {
        let (values, dir, iterations) = ior_values(m)?;
        let args = RunArgs::from_matches(m, FORMATS);
        let runs = from_command_line(&values, &dir, cli::seed_of(m), iterations)?;
        let started = std::time::SystemTime::now();
        let done = cli::run(
            host,
            runs,
            &args,
            &mut Counting { unit: "transfer" },
            "interrupted; the files of the run were removed",
        )?;
        let stored = done.last().and_then(|s| s.end.stored);
        let reports: Vec<SingleReport<_>> = done
            .into_iter()
            .map(|s| SingleReport::of(s, host.machine(), started))
            .collect();
        host.emit(&mut |out| output::write(args.format, &reports, out))?;
        if args.human() {
            let findings: Vec<_> = reports
                .iter()
                .flat_map(|r| r.findings.iter().cloned())
                .collect();
            host.epilogue(&findings, stored, &args.db);
        }
        Ok(())
    }
}

type Values = Vec<(&'static IorOption, OptionValue)>;

/// The table's values IOR's flags in `m` give, the run's directory and the repetitions.
fn ior_values(m: &ArgMatches) -> Result<(Values, PathBuf, u32), CommandError> {
    for (c, what) in UNSUPPORTED {
        if m.contains_id(&format!("unsupported-{c}"))
            && m.value_source(&format!("unsupported-{c}"))
                == Some(clap::parser::ValueSource::CommandLine)
        {
            return Err(CommandError::usage(format!(
                "IOR's -{c} ({what}) is not something iolab ior does"
            ))
            .with_hint(format!(
                "remove -{c}; docs/ior.md lists the IOR flags iolab takes"
            )));
        }
    }
    if let Some(api) = m.get_one::<String>("api") {
        if !api.eq_ignore_ascii_case("posix") {
            return Err(CommandError::usage(format!(
                "IOR's -a {api}: iolab ior runs the POSIX API only"
            ))
            .with_hint("use -a POSIX, or leave -a out"));
        }
    }
    let mut values: Values = Vec::new();
    let given = |name: &str| m.value_source(name) == Some(clap::parser::ValueSource::CommandLine);
    for o in OPTIONS {
        if !m.try_contains_id(o.name).unwrap_or(false) || !given(o.name) {
            continue;
        }
        match o.kind {
            OptionKind::Flag => values.push((o, OptionValue::Flag(m.get_flag(o.name)))),
            OptionKind::Duration => {
                if let Some(Some(v)) = m.get_one::<Option<OptionValue>>(o.name) {
                    values.push((o, *v));
                }
            }
            _ => {
                if let Some(v) = m.get_one::<OptionValue>(o.name) {
                    values.push((o, *v));
                }
            }
        }
    }
    // IOR writes and reads unless -w or -r says which.
    let (w, r) = (given("write"), given("read"));
    if w || r {
        values.retain(|(o, _)| o.name != "write" && o.name != "read");
        values.push((option("write").expect("declared"), OptionValue::Flag(w)));
        values.push((option("read").expect("declared"), OptionValue::Flag(r)));
    }
    for d in m
        .get_many::<String>("directive")
        .into_iter()
        .flatten()
        .flat_map(|d| d.split(','))
    {
        let (key, value) = d.split_once('=').unwrap_or((d, "1"));
        let on = match value.trim() {
            "1" | "true" => true,
            "0" | "false" => false,
            v => {
                return Err(CommandError::usage(format!(
                    "IOR's -O {key}={v}: give 1 or 0"
                )))
            }
        };
        let name =
            match key.trim() {
                "stoneWallingWearOut" => "wear_out",
                "useO_DIRECT" => "direct",
                "summaryFormat" | "summaryFile" => {
                    return Err(CommandError::usage(format!(
                        "IOR's -O {key}: iolab ior writes its own formats"
                    ))
                    .with_hint("use --json (or --format json) for a machine-readable summary"))
                }
                other => return Err(CommandError::usage(format!(
                    "IOR's -O {other} is not something iolab ior does"
                ))
                .with_hint(
                    "iolab ior takes -O stoneWallingWearOut=1 and -O useO_DIRECT=1 (docs/ior.md)",
                )),
            };
        values.retain(|(o, _)| o.name != name);
        values.push((option(name).expect("declared"), OptionValue::Flag(on)));
    }
    // -o names the test file: with --dir a name in it, else a path whose directory is the
    // run's.
    let dir_given = m.get_one::<PathBuf>("dir").cloned();
    let file = values
        .iter()
        .find(|(o, _)| o.name == "file")
        .map(|(_, v)| v.text());
    let dir = match (dir_given, file) {
        (Some(d), _) => d,
        (None, Some(f)) => {
            let p = Path::new(f);
            let parent = p
                .parent()
                .filter(|d| !d.as_os_str().is_empty())
                .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
            let name = p.file_name().and_then(|n| n.to_str()).ok_or_else(|| {
                CommandError::usage(format!(
                    "-o {f}: give a file's path, e.g. -o /mnt/t/testFile"
                ))
            })?;
            values.retain(|(o, _)| o.name != "file");
            values.push((
                option("file").expect("declared"),
                OptionValue::Text(iolab_util::option::intern(name)),
            ));
            parent
        }
        (None, None) => {
            return Err(CommandError::usage(
                "where should the test files go? give -o PATH (IOR's) or --dir DIR",
            )
            .with_hint("e.g. -o /mnt/test/testFile"))
        }
    };
    if !dir.is_dir() {
        return Err(
            CommandError::usage(format!("{} is not an existing directory", dir.display()))
                .with_hint("create it first, or give -o in an existing directory"),
        );
    }
    let iterations = m.get_one::<u32>("iterations").copied().unwrap_or(1);
    Ok((values, dir, iterations))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<(Values, PathBuf, u32), CommandError> {
        let m = IorCommand.command().try_get_matches_from(args).unwrap();
        ior_values(&m)
    }

    fn get(v: &Values, n: &str) -> Option<OptionValue> {
        v.iter().find(|(o, _)| o.name == n).map(|(_, v)| *v)
    }

    #[test]
    fn iors_command_line_is_read_through_the_table() {
        let tmp = std::env::temp_dir();
        let file = tmp.join("testFile");
        let (v, dir, i) = parse(&[
            "ior",
            "-a",
            "POSIX",
            "-t",
            "1m",
            "-b",
            "64m",
            "-s",
            "2",
            "-F",
            "-C",
            "-Q",
            "2",
            "-e",
            "-w",
            "-D",
            "30",
            "-O",
            "stoneWallingWearOut=1",
            "--posix.odirect",
            "-i",
            "3",
            "-o",
            file.to_str().unwrap(),
        ])
        .unwrap();
        assert_eq!(dir, tmp);
        assert_eq!(i, 3);
        assert_eq!(get(&v, "transfer"), Some(OptionValue::Bytes(1 << 20)));
        assert_eq!(get(&v, "block"), Some(OptionValue::Bytes(64 << 20)));
        assert_eq!(get(&v, "segments"), Some(OptionValue::Count(2)));
        assert_eq!(get(&v, "reorder_offset"), Some(OptionValue::Count(2)));
        for f in [
            "file_per_process",
            "reorder",
            "fsync",
            "wear_out",
            "direct",
            "write",
        ] {
            assert_eq!(get(&v, f), Some(OptionValue::Flag(true)), "{f}");
        }
        assert_eq!(get(&v, "read"), Some(OptionValue::Flag(false)));
        assert_eq!(
            get(&v, "stonewall"),
            Some(OptionValue::Duration(std::time::Duration::from_secs(30)))
        );
        assert_eq!(get(&v, "file"), Some(OptionValue::Text("testFile")));
        // Neither -w nor -r: both.
        let (v, _, _) = parse(&["ior", "--dir", tmp.to_str().unwrap()]).unwrap();
        assert_eq!(get(&v, "write"), None);
    }

    #[test]
    fn iors_other_flags_are_named_in_the_error() {
        let tmp = std::env::temp_dir();
        let d = tmp.to_str().unwrap();
        let e = parse(&["ior", "--dir", d, "-g"]).unwrap_err();
        assert!(e.message.contains("IOR's -g"), "{e:?}");
        let e = parse(&["ior", "--dir", d, "-a", "MPIIO"]).unwrap_err();
        assert!(e.message.contains("POSIX API only"), "{e:?}");
        let e = parse(&["ior", "--dir", d, "-O", "minTimeDuration=5"]).unwrap_err();
        assert!(e.message.contains("-O minTimeDuration"), "{e:?}");
        // -G (IOR's stamp seed) changes nothing here.
        assert!(parse(&["ior", "--dir", d, "-G", "27"]).is_ok());
    }
}
