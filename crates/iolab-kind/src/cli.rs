//! A kind's commands on the command line: each is a [`Subcommand`] (its clap definition,
//! built from the kind's option table, and what it does), registered with the kind. What a
//! command needs of iolab — running its runs through the runner, writing results, telling
//! the user — it asks of the binary's [`Host`]; the runs and their typed outputs meet again
//! in [`run`]. The arguments every run-making command takes (output format, results
//! database, monitors) are declared once here ([`run_args`], [`RunArgs`]).

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use clap::{Arg, ArgAction, ArgMatches, Command};
use iolab_monitor::procstat::CpuTimes;
use iolab_store::{ExperimentId, Finding, Metric, RunStatus};
use iolab_util::option::{OptionDef, OptionKind, OptionValue};

use crate::command::{CommandPlan, Runs, UsageError};
use crate::output::SingleReport;
use crate::run::{Event, RunFailure};
use crate::table::OptionTable;

/// Exit code for success.
pub const EXIT_OK: u8 = 0;
/// Exit code for a failed run.
pub const EXIT_FAILED: u8 = 1;
/// Exit code for bad input or usage (clap's own for a malformed command line too).
pub const EXIT_USAGE: u8 = 2;
/// Exit code after Ctrl-C / SIGTERM (128 + SIGINT, as shells report it).
pub const EXIT_INTERRUPTED: u8 = 130;

/// Every exit code iolab uses, with what it means: the one list that `iolab --help`, the man
/// page and the documentation give (a code added above belongs here too).
pub const EXIT_CODES: &[(u8, &str)] = &[
    (EXIT_OK, "success"),
    (
        EXIT_FAILED,
        "a run or the machine failed (e.g. the disk filled up)",
    ),
    (EXIT_USAGE, "bad input or usage: nothing was run or changed"),
    (
        EXIT_INTERRUPTED,
        "interrupted (Ctrl-C, SIGTERM): the finished runs are stored and the system is restored",
    ),
];

/// Why a command failed: a message, what to do about it, and the exit code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandError {
    pub message: String,
    pub hint: Option<String>,
    pub code: u8,
    /// The message is a located diagnostic (`FILE:LINE:COL: error: …`) that says "error:"
    /// itself.
    pub located: bool,
}

impl CommandError {
    /// Bad input or usage (exit 2).
    pub fn usage(message: impl fmt::Display) -> CommandError {
        CommandError {
            message: message.to_string(),
            hint: None,
            code: EXIT_USAGE,
            located: false,
        }
    }

    /// Bad input reported as located diagnostics, each already `FILE:LINE:COL: error: …`
    /// (the shape compilers print, which editors jump to): printed as they are.
    pub fn located(diagnostics: impl fmt::Display) -> CommandError {
        CommandError {
            located: true,
            ..CommandError::usage(diagnostics)
        }
    }

    /// The run or the machine failed (exit 1).
    pub fn failed(message: impl fmt::Display) -> CommandError {
        CommandError {
            code: EXIT_FAILED,
            ..CommandError::usage(message)
        }
    }

    /// Ended by Ctrl-C or SIGTERM (exit 130).
    pub fn interrupted(message: impl fmt::Display) -> CommandError {
        CommandError {
            code: EXIT_INTERRUPTED,
            ..CommandError::usage(message)
        }
    }

    pub fn with_hint(mut self, hint: impl fmt::Display) -> CommandError {
        self.hint = Some(hint.to_string());
        self
    }

    pub fn exit_code(&self) -> u8 {
        self.code
    }
}

impl From<UsageError> for CommandError {
    fn from(e: UsageError) -> CommandError {
        let err = if e.located {
            CommandError::located(&e.message)
        } else {
            CommandError::usage(&e.message)
        };
        match e.hint {
            Some(h) => err.with_hint(h),
            None => err,
        }
    }
}

/// A command a kind adds to `iolab` (`iolab KIND`, and any tools of its own).
pub trait Subcommand: Sync {
    /// Its definition: name, help, arguments. A command that runs workloads adds the common
    /// ones with [`run_args`].
    fn command(&self) -> Command;
    /// Does it.
    fn run(&self, m: &ArgMatches, host: &mut dyn Host) -> Result<(), CommandError>;
}

/// Runs a workload file as `iolab run FILE` does, for files that are not experiments (an
/// experiment, `.toml`, is the runner's own): a kind whose workloads are files registers one.
pub trait FileRunner: Sync {
    /// Whether it runs `file` (by its name: an extension, a name of a workload it ships).
    fn accepts(&self, file: &str) -> bool;
    /// Whether it takes any file no other runner takes (a workload language whose files
    /// have no fixed extension): asked after every runner that is not.
    fn catch_all(&self) -> bool {
        false
    }
    /// Adds its flags to `iolab run` (beside FILE, `--db`, `--no-db`, `--resume` and the
    /// monitors', which `iolab run` has for experiments too).
    fn args(&self, cmd: Command) -> Command;
    /// Its flags that `m` gives, each with where an experiment file says it instead
    /// (`--time (set workload.time)`): with an experiment file they are an error.
    fn given(&self, m: &ArgMatches) -> Vec<String>;
    /// Runs `file` as the flags in `m` say.
    fn run(&self, file: &str, m: &ArgMatches, host: &mut dyn Host) -> Result<(), CommandError>;
}

/// What a kind's command asks of the binary.
pub trait Host {
    /// Runs `plan` through the runner — stored as `args` say, the machine watched as they
    /// say, progress shown with `view` — and gives back every run's end, in order. An empty
    /// list: Ctrl-C came before the first run.
    fn run(
        &mut self,
        plan: CommandPlan,
        args: &RunArgs,
        view: &mut dyn View,
    ) -> Result<Vec<Ended>, CommandError>;
    /// Writes results to standard output (pipe-safe: a reader that has gone is no error).
    fn emit(
        &mut self,
        write: &mut dyn FnMut(&mut dyn io::Write) -> io::Result<()>,
    ) -> Result<(), CommandError>;
    /// Opens the results database `args` name now, so that one that cannot take the result
    /// is refused (exit 2) before anything is said or run.
    fn check_store(&mut self, args: &RunArgs) -> Result<(), CommandError>;
    /// A message on stderr: `iolab: warning: …`.
    fn warn(&mut self, message: &str);
    /// A line on stderr as it is (a workload's own warnings, located).
    fn say(&mut self, line: &str);
    /// Set on Ctrl-C / SIGTERM.
    fn cancel(&self) -> &Arc<AtomicBool>;
    /// The machine, probed once.
    fn machine(&self) -> &Machine;
    /// After a human-readable result: the findings, and where the runs are stored.
    fn epilogue(&mut self, findings: &[Finding], stored: Option<ExperimentId>, db: &Path);
}

/// The machine, as far as a command's output needs to say.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Machine {
    pub hostname: String,
    pub kernel: String,
    pub cpus: usize,
    pub mem_total_bytes: Option<u64>,
}

/// The system-wide CPU times at the start and at the end of a run's timed region.
pub type SystemCpu = (CpuTimes, CpuTimes);

/// How one run of a command ended, as the runner told it.
#[derive(Debug, Clone)]
pub struct Ended {
    /// The run's number ([`crate::RunCtx::number`]).
    pub number: u64,
    pub status: RunStatus,
    /// For a run that did not end well: what failed, what to do, whose fault.
    pub failure: Option<RunFailure>,
    /// What the checks found.
    pub findings: Vec<Finding>,
    /// Every metric the run recorded (the kind's and the monitors').
    pub metrics: Vec<Metric>,
    /// All CPUs over the timed region, when read.
    pub system_cpu: Option<SystemCpu>,
    /// The experiment the run is stored in (`None` with `--no-db`).
    pub stored: Option<ExperimentId>,
}

/// A run of a command that went well, with its kind's output.
pub struct Single<O> {
    pub output: O,
    pub end: Ended,
}

/// Runs `runs` through `host` and gives back each run's typed output with its end, in
/// order. A run that failed is the error: exit 2 when the input was at fault, 1 when the run
/// failed, 130 with `interrupted` when Ctrl-C ended it.
pub fn run<O: Send + 'static>(
    host: &mut dyn Host,
    runs: Runs<O>,
    args: &RunArgs,
    view: &mut dyn View,
    interrupted: &str,
) -> Result<Vec<Single<O>>, CommandError> {
    let ends = host.run(runs.plan, args, view)?;
    if ends.is_empty() {
        return Err(CommandError::interrupted(interrupted));
    }
    ends.into_iter()
        .map(|end| match end.status {
            RunStatus::Ok => Ok(Single {
                output: runs.outputs.take(end.number).ok_or_else(|| {
                    CommandError::failed("internal error: the run gave no result")
                })?,
                end,
            }),
            RunStatus::Interrupted => Err(CommandError::interrupted(interrupted)),
            RunStatus::Failed => {
                let f = end
                    .failure
                    .unwrap_or_else(|| RunFailure::failed("unknown error"));
                let err = if f.located {
                    CommandError::located(&f.message)
                } else if f.bad_input {
                    CommandError::usage(&f.message)
                } else {
                    CommandError::failed(format!("run failed: {}", f.message))
                };
                Err(match f.hint {
                    Some(h) => err.with_hint(h),
                    None => err,
                })
            }
        })
        .collect()
}

/// [`run`] of one run.
pub fn run_one<O: Send + 'static>(
    host: &mut dyn Host,
    runs: Runs<O>,
    args: &RunArgs,
    view: &mut dyn View,
    interrupted: &str,
) -> Result<Single<O>, CommandError> {
    run(host, runs, args, view, interrupted)?
        .pop()
        .ok_or_else(|| CommandError::interrupted(interrupted))
}

/// [`run_one`], as the report its formats print (started now, on the host's machine), with
/// the experiment the run is stored in.
pub fn report_one<O: Send + 'static>(
    host: &mut dyn Host,
    runs: Runs<O>,
    args: &RunArgs,
    view: &mut dyn View,
    interrupted: &str,
) -> Result<(SingleReport<O>, Option<ExperimentId>), CommandError> {
    let started_at = SystemTime::now();
    let run = run_one(host, runs, args, view, interrupted)?;
    let stored = run.end.stored;
    Ok((SingleReport::of(run, host.machine(), started_at), stored))
}

/// The status line a command's [`View`] draws on (a terminal's stderr; nothing otherwise).
pub trait Status {
    /// Whether the line is drawn at all.
    fn enabled(&self) -> bool;
    /// Replaces the line's text.
    fn show(&mut self, text: fmt::Arguments<'_>);
    /// Erases the line.
    fn clear(&mut self);
    /// Leaves the line as it is and moves to the next one.
    fn keep(&mut self);
    /// Prints `text` as a line of its own on stderr (the status line erased first).
    fn line(&mut self, text: &str);
}

/// What a command shows of a run's events while it runs.
pub trait View {
    fn event(&mut self, status: &mut dyn Status, event: &Event<'_>);
}

/// Fill progress and the progress of the operations (`unit`s: records, transactions) on a
/// terminal.
pub struct Counting {
    pub unit: &'static str,
}

impl View for Counting {
    fn event(&mut self, line: &mut dyn Status, event: &Event<'_>) {
        use crate::output::thousands;
        match *event {
            Event::Filling { done, total } => {
                if !line.enabled() || total < 64 << 20 {
                    return;
                }
                // One update per 64 MiB keeps the terminal quiet and the cost invisible.
                if done.is_multiple_of(64 << 20) || done == total {
                    line.show(format_args!(
                        "preparing files: {} of {} MiB ({}%)",
                        done >> 20,
                        total >> 20,
                        done * 100 / total
                    ));
                }
            }
            // Called every progress period while the workers set up; shown from the first.
            Event::SettingUp { done, total, unit } if line.enabled() && total > 0 => {
                line.show(format_args!(
                    "setting up: {} of {} {unit}{} ({}%)",
                    thousands(done),
                    thousands(total),
                    if total == 1 { "" } else { "s" },
                    done * 100 / total
                ));
            }
            Event::TimedStart => line.keep(),
            Event::Records {
                done,
                planned,
                elapsed,
            } => {
                // Short runs finish before anyone could read a progress line.
                if !line.enabled() || elapsed < Duration::from_secs(1) || planned == 0 {
                    return;
                }
                let rate = done as f64 / elapsed.as_secs_f64();
                let left = if rate > 0.0 {
                    format!(
                        ", ~{:.0} s left",
                        (planned - done.min(planned)) as f64 / rate
                    )
                } else {
                    String::new()
                };
                line.show(format_args!(
                    "running: {}% ({} of {} {}{}), {} {}s/s{left}",
                    done * 100 / planned,
                    thousands(done),
                    thousands(planned),
                    self.unit,
                    if planned == 1 { "" } else { "s" },
                    thousands(rate as u64),
                    self.unit
                ));
            }
            Event::TimedEnd => line.clear(),
            _ => {}
        }
    }
}

/// One output format of a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Format {
    /// As `--format` takes it.
    pub name: &'static str,
    pub help: &'static str,
}

/// The human format: a readable summary (the default, and the first of every command's).
pub const HUMAN: Format = Format {
    name: "human",
    help: "A readable summary",
};

/// The JSON format (`--json` is short for it).
pub const JSON: Format = Format {
    name: "json",
    help: "Everything, machine-readable and versioned",
};

/// The arguments every command that runs workloads takes, as given.
#[derive(Debug, Clone, PartialEq)]
pub struct RunArgs {
    /// The output format's name (`--format`, `--json`).
    pub format: &'static str,
    /// The results database.
    pub db: PathBuf,
    /// `--no-db`: the runs are stored nowhere.
    pub no_db: bool,
    /// Sample the machine during the runs (off with `--no-monitor`).
    pub monitor: bool,
    pub monitor_interval: Duration,
    /// Trace the block layer of the target device.
    pub trace_blocks: bool,
    /// Count the workload's system calls (the syscall view).
    pub trace_syscalls: bool,
}

impl RunArgs {
    /// The arguments of `m` (a command made with [`run_args`] and `formats`).
    pub fn from_matches(m: &ArgMatches, formats: &[Format]) -> RunArgs {
        let chosen = if m.get_flag("json") {
            JSON.name
        } else {
            m.get_one::<String>("format")
                .and_then(|f| formats.iter().find(|x| x.name == f.as_str()))
                .map_or(formats[0].name, |f| f.name)
        };
        RunArgs {
            format: chosen,
            db: m
                .get_one::<PathBuf>("db")
                .cloned()
                .unwrap_or_else(|| PathBuf::from(DEFAULT_DB)),
            no_db: m.get_flag("no_db"),
            monitor: !m.get_flag("no_monitor"),
            monitor_interval: m
                .get_one::<Duration>("monitor_interval")
                .copied()
                .unwrap_or(Duration::from_secs(1)),
            trace_blocks: m.get_flag("trace_blocks"),
            trace_syscalls: m.get_flag("trace_syscalls"),
        }
    }

    /// Whether the result is printed for a person.
    pub fn human(&self) -> bool {
        self.format == HUMAN.name
    }
}

/// The results database when neither `--db` nor `$IOLAB_DB` says.
pub const DEFAULT_DB: &str = "iolab.db";

/// `--db FILE` (`$IOLAB_DB`, default `iolab.db`): every command that reads or writes the
/// results database takes it.
pub fn db_arg() -> Arg {
    Arg::new("db")
        .long("db")
        .value_name("FILE")
        .env("IOLAB_DB")
        .default_value(DEFAULT_DB)
        .value_parser(clap::value_parser!(PathBuf))
        .help("Results database (SQLite)")
}

/// Adds the arguments of [`RunArgs`] to `cmd`: `--format` (one of `formats`, the first the
/// default; it must hold [`HUMAN`] and [`JSON`]), `--json`, `--db`, `--no-db` and the
/// monitors'.
pub fn run_args(cmd: Command, formats: &'static [Format]) -> Command {
    store_args(format_args(cmd, formats))
}

/// Adds `--format` (one of `formats`, the first the default) and `--json` to `cmd`.
pub fn format_args(cmd: Command, formats: &'static [Format]) -> Command {
    let names: Vec<clap::builder::PossibleValue> = formats
        .iter()
        .map(|f| clap::builder::PossibleValue::new(f.name).help(f.help))
        .collect();
    cmd.arg(
        Arg::new("format")
            .long("format")
            .value_name("FORMAT")
            .help("Output format")
            .default_value(formats[0].name)
            .value_parser(clap::builder::PossibleValuesParser::new(names)),
    )
    .arg(
        Arg::new("json")
            .long("json")
            .action(ArgAction::SetTrue)
            .conflicts_with("format")
            .help("Shorthand for --format json"),
    )
}

/// Adds `--db`, `--no-db` and the monitors' flags to `cmd`.
pub fn store_args(cmd: Command) -> Command {
    cmd.arg(db_arg())
        .arg(
            Arg::new("no_monitor")
                .long("no-monitor")
                .action(ArgAction::SetTrue)
                .help(
                    "Do not sample CPU, memory, disks and pressure during the run (on by default)",
                ),
        )
        .arg(
            Arg::new("monitor_interval")
                .long("monitor-interval")
                .value_name("DURATION")
                .default_value("1s")
                .value_parser(positive_duration)
                .help("Time between samples (e.g. 1s, 100ms; at least 1ms)"),
        )
        .arg(
            Arg::new("trace_blocks")
                .long("trace-blocks")
                .action(ArgAction::SetTrue)
                .help("Trace the block layer of the target device (tracefs; needs root)"),
        )
        .arg(
            Arg::new("trace_syscalls")
                .long("trace-syscalls")
                .action(ArgAction::SetTrue)
                .help(
                    "Count the workload's system calls and the bytes they moved (eBPF; needs \
                     root)",
                ),
        )
        .arg(
            Arg::new("no_db")
                .long("no-db")
                .action(ArgAction::SetTrue)
                .help("Do not store the result in the database"),
        )
}

/// A duration long enough to measure something (`--time`, `--monitor-interval`): at least a
/// millisecond (below it a run is all thread start-up, and a sampler would do nothing but
/// read /proc).
pub fn positive_duration(s: &str) -> Result<Duration, String> {
    let d = iolab_util::units::parse_duration(s).map_err(|e| e.to_string())?;
    if d.is_zero() {
        Err("must be longer than zero".into())
    } else if d < Duration::from_millis(1) {
        Err(format!("`{s}` is too short: give at least 1ms"))
    } else {
        Ok(d)
    }
}

/// `--dir DIR`: where a command's runs make their files (it must exist).
pub fn dir_arg(help: &'static str) -> Arg {
    Arg::new("dir")
        .long("dir")
        .value_name("DIR")
        .required(true)
        .value_parser(clap::value_parser!(PathBuf))
        .help(help)
}

/// The directory of [`dir_arg`] in `m`.
pub fn dir_of(m: &ArgMatches) -> PathBuf {
    m.get_one::<PathBuf>("dir").cloned().unwrap_or_default()
}

/// `--seed N` with the default seed.
pub fn seed_arg(help: &'static str) -> Arg {
    Arg::new("seed")
        .long("seed")
        .value_name("SEED")
        .default_value(crate::DEFAULT_SEED.to_string())
        .value_parser(clap::value_parser!(u64))
        .help(help)
}

/// The seed of [`seed_arg`] in `m`.
pub fn seed_of(m: &ArgMatches) -> u64 {
    m.get_one::<u64>("seed")
        .copied()
        .unwrap_or(crate::DEFAULT_SEED)
}

/// One flag per option of `T`'s table (the option's name, `_` written `-`), with its help,
/// value name, default and parser: the table is the one declaration, which experiment files
/// read too.
pub fn option_args<T: OptionTable>(cmd: Command) -> Command {
    T::options().iter().fold(cmd, |cmd, o| {
        let mut arg = Arg::new(o.name)
            .long(o.flag())
            .help(o.help_with_original(T::TOOL))
            .value_name(o.value_name)
            .value_parser(move |s: &str| o.parse(s));
        if o.kind == OptionKind::Path {
            // Any path the system takes, not only UTF-8 text, as given; an empty one is
            // refused.
            use clap::builder::TypedValueParser;
            arg = arg.value_parser(
                clap::builder::PathBufValueParser::new()
                    .map(|p| OptionValue::Path(iolab_util::option::intern_path(&p))),
            );
        }
        if o.kind == OptionKind::Flag {
            // `--direct` alone means true; `--latency false` turns one off.
            arg = arg.num_args(0..=1).default_missing_value("true");
        }
        if let Some(d) = o.default {
            arg = arg.default_value(d);
        }
        cmd.arg(arg)
    })
}

/// The values of `T`'s options in `m` (a command made with [`option_args`]), defaults
/// included.
pub fn option_values<T: OptionTable>(
    m: &ArgMatches,
) -> Vec<(&'static OptionDef<T::Spec>, OptionValue)> {
    T::options()
        .iter()
        .filter_map(|o| m.get_one::<OptionValue>(o.name).map(|v| (o, *v)))
        .collect()
}

/// For each kind's tests of its commands.
pub mod testing {
    use clap::Command;
    use iolab_util::option::{OptionDef, OptionKind};

    /// `cmd --help` shows every option of `table` with its value name and default.
    pub fn help_lists_the_table<S>(mut cmd: Command, table: &[OptionDef<S>]) {
        let help = cmd.render_long_help().to_string();
        for o in table {
            // A flag's value is optional (`--sync` alone is `--sync true`), and its help shows
            // no default.
            let flag = matches!(o.kind, OptionKind::Flag);
            let shown = if flag {
                format!("--{} [<{}>]", o.flag(), o.value_name)
            } else {
                format!("--{} <{}>", o.flag(), o.value_name)
            };
            assert!(help.contains(&shown), "{}: {shown}", o.name);
            if let Some(d) = o.default.filter(|_| !flag) {
                assert!(
                    help.contains(&format!("[default: {d}]")),
                    "{}: {help}",
                    o.name
                );
            }
        }
    }
}
