//! `iolab iozone`: the iozone kind's one-run plan (or, with `--auto`, one configuration per
//! cell of the matrix; with `--threads-max`, one per thread count), run by the experiment
//! runner, printed in the chosen format — the flags of the one option table
//! ([`crate::OPTIONS`]) and auto mode's, thread range's and iozone format's own.

use std::path::PathBuf;
use std::time::SystemTime;

use clap::{Arg, ArgAction, ArgMatches, Command};
use iolab_kind::cli::{self, CommandError, Counting, Host, RunArgs, Subcommand};

use crate::kind::{self, IozoneTable};
use crate::matrix::{self, Bounds};
use crate::output::{self, xls, IozoneReport, FORMATS};

/// `iolab iozone`.
pub struct IozoneCommand;

/// A size flag's value (`64k`, `1g`).
fn size(s: &str) -> Result<u64, String> {
    iolab_util::units::parse_size(s).map_err(|e| e.to_string())
}

/// A flag of auto mode's matrix bounds: a size, only with `--auto`.
fn bound(name: &'static str, long: &'static str, help: &'static str) -> Arg {
    Arg::new(name)
        .long(long)
        .value_name("SIZE")
        .requires("auto")
        .value_parser(size)
        .help(help)
}

/// A switch (`--auto`, `--ops`).
fn switch(name: &'static str, long: &'static str, help: &'static str) -> Arg {
    Arg::new(name)
        .long(long)
        .action(ArgAction::SetTrue)
        .help(help)
}

impl Subcommand for IozoneCommand {
    fn command(&self) -> Command {
        let cmd = Command::new("iozone")
            .about(
                "Run iozone's tests natively: write/rewrite, read/re-read, random, backward, \
                 stride… per file size × record size, single stream or with threads (throughput \
                 mode)",
            )
            .after_help(
                "Examples:\n  iolab iozone --dir /mnt/test --tests write,read,random --size 64m --record 4k\n  iolab iozone --dir /mnt/test --tests 0,1 --flush excluded --format iozone   # iozone's own default timing\n  iolab iozone --dir /mnt/test --threads 4 --size 256m --direct\n  iolab iozone --dir /mnt/test --auto --auto-max-size 64m --format iozone\n\nThe flush (fsync + close) of every pass is timed by default (iozone -e -c): --flush\nfsync times the fsync only (iozone -e); --flush excluded (alias iozone) times writes\ninto the page cache only, as iozone does without -e.\nFiles are named iolab-iozone.N (one per thread) and removed at the end.\nSee docs/iozone.md.",
            )
            .arg(cli::dir_arg("Directory for the data files (must exist)"));
        let cmd = cli::option_args::<IozoneTable>(cmd)
            .arg(switch(
                "auto",
                "auto",
                "Auto mode (iozone -a): every file size × record size of the matrix, one \
                 configuration each (--size and --record are then the matrix's, not single \
                 values)",
            ))
            .arg(bound(
                "auto_min_size",
                "auto-min-size",
                "Auto mode: the smallest file size (iozone -n; default 64k)",
            ))
            .arg(bound(
                "auto_max_size",
                "auto-max-size",
                "Auto mode: the largest file size (iozone -g; default 512m)",
            ))
            .arg(bound(
                "auto_min_record",
                "auto-min-record",
                "Auto mode: the smallest record size (iozone -y; default 4k). Giving a record \
                 bound keeps the small records of files above 16 MiB, as in iozone",
            ))
            .arg(bound(
                "auto_max_record",
                "auto-max-record",
                "Auto mode: the largest record size (iozone -q; default 16m); see \
                 --auto-min-record",
            ))
            .arg(
                switch(
                    "auto_all_records",
                    "auto-all-records",
                    "Auto mode: keep the records below 64 KiB for files above 16 MiB (iozone -z)",
                )
                .requires("auto"),
            )
            .arg(
                Arg::new("threads_max")
                    .long("threads-max")
                    .value_name("MAX")
                    .conflicts_with("auto")
                    .value_parser(clap::value_parser!(u32).range(1..))
                    .help(
                        "Throughput mode for each thread count from --threads up to this one, \
                         one run each (iozone -l THREADS -u MAX); --format iozone prints one \
                         column per count",
                    ),
            )
            .arg(switch(
                "cpu_utilization",
                "cpu-utilization",
                "With --format iozone, add iozone's CPU utilization blocks (iozone -+u); the \
                 other formats always show each figure's CPU utilization",
            ))
            .arg(
                switch(
                    "ops",
                    "ops",
                    "With --format iozone, rates in operations (records) per second instead of \
                     kB/s (iozone -O)",
                )
                .conflicts_with("us_per_op"),
            )
            .arg(switch(
                "us_per_op",
                "us-per-op",
                "With --format iozone, microseconds per operation (record) instead of kB/s, \
                 truncated as iozone prints them (iozone -N; single stream only, as in iozone)",
            ))
            .arg(
                Arg::new("excel")
                    .long("excel")
                    .value_name("FILE")
                    .value_parser(clap::value_parser!(PathBuf))
                    .help(
                        "Also write iozone's -R report as an Excel worksheet (BIFF, .xls), cell \
                         for cell where iozone -b puts it, whatever --format is (iozone -b)",
                    ),
            )
            .arg(cli::seed_arg("Seed for the random orders"));
        cli::run_args(cmd, FORMATS)
    }

    fn run(&self, m: &ArgMatches, host: &mut dyn Host) -> Result<(), CommandError> {
        let args = RunArgs::from_matches(m, FORMATS);
        let values = &cli::option_values::<IozoneTable>(m);
        let dir = m.get_one::<PathBuf>("dir").cloned().unwrap_or_default();
        let seed = m
            .get_one::<u64>("seed")
            .copied()
            .unwrap_or(iolab_kind::DEFAULT_SEED);
        let auto = m.get_flag("auto");
        let threads_max = m.get_one::<u32>("threads_max").copied();
        let us_per_op = m.get_flag("us_per_op");
        let excel = m.get_one::<PathBuf>("excel");
        let spec = kind::spec_from(values, &dir, seed)?;
        if us_per_op && (spec.throughput_mode() || threads_max.is_some()) {
            return Err(CommandError::usage(
                "--us-per-op is single-stream only: throughput mode sums rates over threads, \
                 which microseconds per operation cannot (iozone -N refuses -t too)",
            )
            .with_hint("drop --us-per-op, or use --ops for operations per second"));
        }
        let given = |name: &str| m.get_one::<u64>(name).copied();
        let mut bounds = Bounds {
            all_records: m.get_flag("auto_all_records"),
            ..Bounds::default()
        };
        for (name, bound) in [
            ("auto_min_size", &mut bounds.min_size),
            ("auto_max_size", &mut bounds.max_size),
            ("auto_min_record", &mut bounds.min_record),
            ("auto_max_record", &mut bounds.max_record),
        ] {
            if let Some(v) = given(name) {
                *bound = v;
            }
        }
        // iozone skips the small records of large files only when neither -y nor -q sets the
        // records (iozone.c's auto_test): given record bounds are run in full.
        if given("auto_min_record").is_some() || given("auto_max_record").is_some() {
            bounds.all_records = true;
        }
        let matrix_records = if auto {
            matrix::records(&bounds)
        } else {
            Vec::new()
        };
        let runs = if auto {
            kind::from_command_line_auto(values, &bounds, &dir, seed)
        } else if let Some(max) = threads_max {
            kind::from_command_line_thread_range(values, max, &dir, seed)
        } else {
            kind::from_command_line(values, &dir, seed)
        }?;
        if let Some(path) = excel {
            iolab_kind::output::check_output(path, &args.db, "--excel")?;
            let most = xls::MAX_COLUMNS - xls::THROUGHPUT_FIRST_COLUMN;
            if let Some(max) = threads_max {
                let counts = max.saturating_sub(spec.threads) as usize + 1;
                if counts > most {
                    return Err(CommandError::usage(format!(
                        "--excel: {counts} thread counts need {counts} columns, more than the \
                         {most} an Excel worksheet of iozone's format has for them"
                    ))
                    .with_hint(format!(
                        "give at most {most} thread counts, or drop --excel (--format json has \
                         them all)"
                    )));
                }
            }
        }
        let started_at = SystemTime::now();
        let runs = cli::run(
            host,
            runs,
            &args,
            &mut Counting { unit: "record" },
            "interrupted; the files of the run were removed",
        )?;
        let stored = runs.first().and_then(|r| r.end.stored);
        let report = IozoneReport {
            runs,
            matrix_records,
            cpu_utilization: m.get_flag("cpu_utilization"),
            ops: m.get_flag("ops"),
            us_per_op,
            host: host.machine().clone(),
            started_at,
        };
        host.emit(&mut |out| output::write(args.format, &report, out))?;
        if let Some(path) = excel {
            // The workbook's first cell is the command line, as iozone's is.
            let command_line = std::env::args_os()
                .map(|a| a.to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join(" ");
            let book = xls::workbook(&report, &command_line);
            iolab_kind::output::write_output(path, &args.db, "--excel", |w| {
                w.write_all(&book).map_err(|e| {
                    CommandError::failed(format!("cannot write {}: {e}", path.display()))
                })
            })?;
        }
        if args.human() {
            // Each run's findings in turn, then where they are stored.
            for run in &report.runs {
                host.epilogue(&run.end.findings, None, &args.db);
            }
            host.epilogue(&[], stored, &args.db);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::IozoneOption;
    use iolab_util::option::OptionValue;

    #[test]
    fn iozone_flags_come_from_the_option_table() {
        let parse = |extra: &[&str]| {
            let mut a = vec!["iozone", "--dir", "/d"];
            a.extend_from_slice(extra);
            let m = IozoneCommand.command().try_get_matches_from(a).unwrap();
            cli::option_values::<IozoneTable>(&m)
        };
        let get = |opts: &[(&'static IozoneOption, OptionValue)], n: &str| {
            opts.iter().find(|(o, _)| o.name == n).map(|(_, v)| *v)
        };
        let o = parse(&[
            "--direct",
            "--mix-read-percent",
            "75",
            "--latency",
            "false",
            "--flush",
            "iozone",
        ]);
        assert_eq!(get(&o, "direct"), Some(OptionValue::Flag(true)));
        assert_eq!(get(&o, "latency"), Some(OptionValue::Flag(false)));
        assert_eq!(get(&o, "mix_read_percent"), Some(OptionValue::Count(75)));
        assert_eq!(get(&o, "flush"), Some(OptionValue::Name("excluded")));
        let d = parse(&[]);
        assert_eq!(get(&d, "record"), Some(OptionValue::Bytes(4096)));
        assert_eq!(get(&d, "stonewall"), Some(OptionValue::Flag(true)));
        assert_eq!(get(&d, "direct"), None);
        let help = IozoneCommand.command().render_long_help().to_string();
        for o in crate::OPTIONS {
            assert!(help.contains(&format!("--{}", o.flag())), "{}", o.name);
        }
        let e = IozoneCommand
            .command()
            .try_get_matches_from(["iozone", "--dir", "/d", "--tests", "0,42"])
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown test `42`"), "{e}");
    }

    #[test]
    fn the_command_is_consistent() {
        IozoneCommand.command().debug_assert();
    }
}
