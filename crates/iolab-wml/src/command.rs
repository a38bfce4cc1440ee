//! `iolab run FILE.f|NAME` (the WML kind's runner of workload files: parse → front end →
//! plan, run by the experiment runner, printed in the chosen format) and `iolab workloads`
//! (the built-in workloads).

use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use clap::{Arg, ArgAction, ArgMatches, Command};
use iolab_engine::backend::{parse_engine, parse_iodepth, EngineKind};
use iolab_kind::cli::{self, CommandError, FileRunner, Host, RunArgs, Status, Subcommand, View};
use iolab_kind::output::{thousands, SingleReport};
use iolab_kind::run::Event;

use crate::kind::{self as wml, WmlWorkload};
use crate::output::{self, RunReport, FORMATS};

/// `iolab run FILE.f` and `iolab run NAME` (a built-in workload).
pub struct WmlFiles;

/// The flags `iolab run` takes for a workload file, with where an experiment file says each.
const FLAGS: &[(&str, &str)] = &[
    ("dir", "--dir (set sut.target in the file)"),
    ("time", "--time (set workload.time)"),
    ("set", "--set (use workload.set or a factor)"),
    ("seed", "--seed (set seed = N at the top)"),
    ("size_scale", "--size-scale (set workload.size_scale)"),
    (
        "engine",
        "--engine/--iodepth (set workload.engine, workload.iodepth)",
    ),
    (
        "iodepth",
        "--engine/--iodepth (set workload.engine, workload.iodepth)",
    ),
    ("no_db", "--no-db (experiments are always stored)"),
    ("no_system", "--no-system (set workload.system = false)"),
    ("format", "--format/--json (use `iolab export` afterwards)"),
    ("json", "--format/--json (use `iolab export` afterwards)"),
];

impl FileRunner for WmlFiles {
    /// Anything that is not an experiment: a `.f` file, or the name of a built-in workload
    /// (a name that is neither is refused when the plan is made, with the choices).
    fn accepts(&self, _file: &str) -> bool {
        true
    }

    fn catch_all(&self) -> bool {
        true
    }

    fn args(&self, cmd: Command) -> Command {
        let cmd = cmd
            .arg(
                Arg::new("dir")
                    .long("dir")
                    .value_name("DIR")
                    .value_parser(clap::value_parser!(PathBuf))
                    .help("Directory for the filesets (sets the workload's $dir)"),
            )
            .arg(
                Arg::new("time")
                    .long("time")
                    .value_name("DURATION")
                    .value_parser(cli::positive_duration)
                    .help(
                        "Run time (e.g. 30s, 2m; at least 1ms); overrides the file's `run N`, \
                         required when it has none",
                    ),
            )
            .arg(
                Arg::new("set")
                    .long("set")
                    .value_name("VAR=VALUE")
                    .action(ArgAction::Append)
                    .value_parser(parse_assignment)
                    .help("Set a workload variable, e.g. --set nfiles=1000 (repeatable)"),
            )
            .arg(
                Arg::new("seed")
                    .long("seed")
                    .value_name("SEED")
                    .value_parser(clap::value_parser!(u64))
                    .help("Seed for every random choice (file sizes, offsets, picks) [default: 1]"),
            )
            .arg(
                Arg::new("size_scale")
                    .long("size-scale")
                    .value_name("F")
                    .value_parser(parse_scale)
                    .help(
                        "Multiply every fileset's file sizes by F (e.g. 0.01), for workloads whose \
                         sizes are written into the file rather than in variables",
                    ),
            )
            .arg(
                Arg::new("pick")
                    .long("pick")
                    .value_name("PICK")
                    .default_value("round-robin")
                    .value_parser(["round-robin", "random"])
                    .help("How flowops pick files: round-robin (filebench's) or random"),
            )
            .arg(
                Arg::new("engine")
                    .long("engine")
                    .value_name("ENGINE")
                    .value_parser(parse_engine)
                    .help("I/O engine for the flowops: psync, sync, mmap, io_uring, null [default: psync]"),
            )
            .arg(
                Arg::new("iodepth")
                    .long("iodepth")
                    .value_name("IODEPTH")
                    .value_parser(parse_iodepth)
                    .help(
                        "Transfers in flight per thread, 1 to 4096 (io_uring only): whole-file \
                         chunks, aiowrites",
                    ),
            )
            .arg(
                Arg::new("no_system")
                    .long("no-system")
                    .action(ArgAction::SetTrue)
                    .help(
                        "Do not run the workload's `system` commands (for files you do not \
                         trust); each one is reported instead",
                    ),
            )
            .arg(
                Arg::new("quiet")
                    .long("quiet")
                    .short('q')
                    .action(ArgAction::SetTrue)
                    .help(
                        "Do not print the workload's warnings; for an experiment (.toml), no \
                         progress and no line per run that went well",
                    ),
            );
        cli::format_args(cmd, FORMATS)
    }

    fn given(&self, m: &ArgMatches) -> Vec<String> {
        let mut given: Vec<String> = Vec::new();
        for (id, advice) in FLAGS {
            let set = m.value_source(id) == Some(clap::parser::ValueSource::CommandLine);
            if set && !given.iter().any(|g| g == advice) {
                given.push((*advice).to_string());
            }
        }
        given
    }

    fn run(&self, file: &str, m: &ArgMatches, host: &mut dyn Host) -> Result<(), CommandError> {
        let seed = m
            .get_one::<u64>("seed")
            .copied()
            .unwrap_or(iolab_kind::DEFAULT_SEED);
        let dir = m.get_one::<PathBuf>("dir").cloned();
        let quiet = m.get_flag("quiet");
        let (runs, workload) = wml::from_command_line(wml::CommandLine {
            file: file.to_string(),
            settings: wml::Settings {
                sets: m
                    .get_many::<(String, String)>("set")
                    .map(|v| v.cloned().collect())
                    .unwrap_or_default(),
                duration: m.get_one::<Duration>("time").copied(),
                size_scale: m.get_one::<f64>("size_scale").copied(),
                pick_random: m.get_one::<String>("pick").is_some_and(|p| p == "random"),
                run_system: !m.get_flag("no_system"),
                engine: m.get_one::<EngineKind>("engine").copied(),
                iodepth: m.get_one::<u32>("iodepth").copied(),
            },
            dir,
            seed,
        })?;
        let args = RunArgs::from_matches(m, FORMATS);
        // A database that cannot take the result is refused before anything is said or run.
        host.check_store(&args)?;
        let warnings = workload.warnings().to_vec();
        if !quiet {
            for w in &warnings {
                host.say(w);
            }
        }
        let mut display = Display {
            quiet,
            workload: &workload,
            timed: false,
            systems: 0,
        };
        let started_at = SystemTime::now();
        let run = cli::run_one(
            host,
            runs,
            &args,
            &mut display,
            "interrupted; the files created so far are left in place",
        );
        let run = run.map_err(|e| {
            if e.exit_code() == cli::EXIT_INTERRUPTED && !display.timed {
                // Population removes what it created when it is interrupted.
                CommandError::interrupted(
                    "interrupted while populating; the files it created were removed",
                )
            } else {
                e
            }
        })?;
        let stored = run.end.stored;
        let report = RunReport {
            source: workload.parsed.file.clone(),
            seed,
            warnings,
            lathist: workload.checked.workload.lathist,
            run: SingleReport::of(run, host.machine(), started_at),
        };
        host.emit(&mut |out| output::write_run(args.format, &report, out))?;
        if !quiet && args.human() {
            host.epilogue(&report.run.findings, stored, &args.db);
        }
        Ok(())
    }
}

/// `iolab workloads`: the built-in workloads, one line each.
pub struct WorkloadsCommand;

impl Subcommand for WorkloadsCommand {
    fn command(&self) -> Command {
        Command::new("workloads").about("List the built-in workloads")
    }

    fn run(&self, _m: &ArgMatches, host: &mut dyn Host) -> Result<(), CommandError> {
        host.emit(&mut |out| {
            iolab_kind::output::Formatter::write(
                &output::workloads::Human,
                crate::builtin::BUILTIN,
                out,
            )
        })
    }
}

fn parse_scale(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(f) if f > 0.0 && f.is_finite() => Ok(f),
        _ => Err(format!("`{s}` is not a positive factor (e.g. 0.01)")),
    }
}

fn parse_assignment(s: &str) -> Result<(String, String), String> {
    let (k, v) = s
        .split_once('=')
        .ok_or_else(|| format!("`{s}` is not VAR=VALUE"))?;
    let k = k.trim().trim_start_matches('$');
    if k.is_empty() {
        return Err(format!("`{s}` has no variable name"));
    }
    Ok((k.to_string(), v.trim().to_string()))
}

/// Population, `echo` and `system` lines, the progress line and `psrun` reports.
struct Display<'a> {
    quiet: bool,
    workload: &'a WmlWorkload,
    /// The timed region has started (population is over).
    timed: bool,
    /// `system` commands run or skipped so far.
    systems: usize,
}

impl Display<'_> {
    /// Where the latest `system` command is written.
    fn system_at(&self) -> String {
        self.systems
            .checked_sub(1)
            .and_then(|i| self.workload.system_location(i))
            .unwrap_or_default()
    }
}

impl View for Display<'_> {
    fn event(&mut self, line: &mut dyn Status, event: &Event<'_>) {
        match *event {
            Event::Populating { fileset } if !self.quiet => {
                line.show(format_args!("populating fileset {fileset}…"))
            }
            Event::Populated { .. } => line.clear(),
            Event::Echo(text) if !self.quiet => {
                line.line(text);
            }
            // Counted quiet or not: the count says which `system` of the file a failure is.
            Event::System(command) => {
                self.systems += 1;
                if !self.quiet {
                    line.line(&format!("running: {command}"));
                }
            }
            Event::SystemSkipped(command) => {
                self.systems += 1;
                if !self.quiet {
                    let at = self.system_at();
                    line.line(&format!(
                        "{at}: warning: `system \"{command}\"` not run (--no-system)"
                    ));
                }
            }
            Event::SystemFailed { command, status } if !self.quiet => {
                let at = self.system_at();
                let how = match (status.code(), status.signal()) {
                    (Some(code), _) => format!("exited with status {code}"),
                    (None, Some(sig)) => format!("was killed by signal {sig}"),
                    _ => format!("failed ({status})"),
                };
                line.line(&format!("{at}: warning: `system \"{command}\"` {how}"));
            }
            Event::Operations {
                ops,
                elapsed,
                planned,
            } => {
                if elapsed < Duration::from_secs(1) || self.quiet {
                    return;
                }
                line.show(format_args!(
                    "running: {:.0} of {:.0} s, {} data ops ({} /s)",
                    elapsed.as_secs_f64(),
                    planned.as_secs_f64(),
                    thousands(ops),
                    thousands((ops as f64 / elapsed.as_secs_f64()) as u64)
                ));
            }
            Event::Report { ops, elapsed, .. } if !self.quiet => {
                line.line(&format!(
                    "{:.3}: {} data ops, {:.1} ops/s",
                    elapsed.as_secs_f64(),
                    thousands(ops),
                    ops as f64 / elapsed.as_secs_f64()
                ));
            }
            Event::TimedStart => self.timed = true,
            Event::TimedEnd => line.clear(),
            _ => {}
        }
    }
}
