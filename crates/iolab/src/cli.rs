//! Command-line definitions. Each option is declared once here; help text and validation of
//! its syntax come from the declaration, semantic checks from `iolab-workload`.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// The whole command line: iolab's own commands and every kind's (from the registry).
pub fn command() -> clap::Command {
    let cmd = <Cli as clap::CommandFactory>::command().mut_subcommand("run", |run| {
        iolab_kinds::files().fold(run, |run, f| f.args(run))
    });
    let own: Vec<String> = cmd
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .collect();
    let cmd = iolab_kinds::commands().fold(cmd, |cmd, c| cmd.subcommand(c.command()));
    // Help lists what runs something first (`run`, then each kind's commands in the registry's
    // order), then what looks at results, in their declared order.
    let kinds = cmd
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .filter(|n| !own.contains(n));
    let order: Vec<String> = own
        .iter()
        .filter(|n| *n == "run")
        .cloned()
        .chain(kinds.collect::<Vec<_>>())
        .chain(own.iter().filter(|n| *n != "run").cloned())
        .collect();
    order
        .iter()
        .enumerate()
        .fold(cmd, |cmd, (i, name)| {
            cmd.mut_subcommand(name, |c| c.display_order(i))
        })
        .after_help(format!(
            "Exit codes:\n{}\nDocumentation: docs/ in the source tree; `iolab man` prints the manual page.",
            exit_codes()
        ))
}

/// One line per exit code, from the one table of them ([`iolab_kind::cli::EXIT_CODES`]).
fn exit_codes() -> String {
    iolab_kind::cli::EXIT_CODES
        .iter()
        .map(|(code, meaning)| format!("  {code:>3}  {meaning}"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[derive(Debug, Parser)]
#[command(
    name = "iolab",
    version,
    about = "A workbench for storage and filesystem performance experiments whose numbers can be trusted"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run an experiment (.toml), or a filebench workload (.f file or built-in name)
    #[command(
        after_help = "Examples:\n  iolab run examples/quickstart.toml\n  iolab run examples/ext4-journal-modes.toml --db results.db\n  iolab run examples/ext4-journal-modes.toml --resume     # after a crash or Ctrl-C\n  iolab run fileserver --dir /mnt/test --time 30s\n  iolab run my.f --set nfiles=10000 --set iosize=1m --format filebench\n\nEvery run is stored in the results database (--db, default ./iolab.db; $IOLAB_DB).\nExperiment files are described in docs/experiments.md; the built-in workloads are\nlisted by `iolab workloads`."
    )]
    Run(RunArgs),
    /// List the experiments in the results database
    List(ListArgs),
    /// Show an experiment: per configuration, runs and mean ± 95% CI of the headline metrics
    Show(ShowArgs),
    /// Export an experiment's runs as JSON or CSV
    Export(ExportArgs),
    /// Undo what a crashed iolab left behind: mounts, loop devices, images, tunables, cgroups
    #[command(
        after_help = "iolab writes every change to the system to a journal before making it\n(/var/lib/iolab/journal.json for root). `iolab recover` undoes what the journal still\nlists; iolab also does this by itself when it starts."
    )]
    Recover(RecoverArgs),
    /// Read the raw output stored with runs of other tools (exec) again with this build's parsers
    #[command(
        after_help = "Examples:\n  iolab reparse            # the newest experiment: what the current parsers read differently\n  iolab reparse 3 --apply  # store the changed values\n\nOnly runs of the exec kind (fio, iperf3, sysbench, … under iolab) keep their raw output."
    )]
    Reparse(ReparseArgs),
    /// Trace the block requests of a device while a command runs (blktrace via tracefs), or count its system calls
    Trace(Box<crate::cmd::trace::TraceArgs>),
    /// Validate an experiment file and report what can be judged before running it
    Check(CheckArgs),
    /// Write the report of an experiment (or of several: the stages of a file): self-contained HTML with charts, Markdown tables, or JSON
    Report(crate::cmd::report::ReportArgs),
    /// Compare configurations with a baseline: ratio of means, Welch/Holm, Mann–Whitney, verdict
    Compare(crate::cmd::compare::CompareArgs),
    /// Copy the experiments of another results database into this one
    Import(crate::cmd::import::ImportArgs),
    /// Print a shell completion script for bash, zsh or fish
    #[command(
        after_help = "Examples:\n  iolab completions bash > /etc/bash_completion.d/iolab\n  iolab completions zsh > ~/.zfunc/_iolab      # a directory in $fpath\n  iolab completions fish > ~/.config/fish/completions/iolab.fish"
    )]
    Completions(CompletionsArgs),
    /// Print the manual page (roff) of iolab or of one of its commands
    #[command(
        after_help = "Examples:\n  iolab man | man -l -\n  iolab man run > /usr/local/share/man/man1/iolab-run.1\n  iolab man > /usr/local/share/man/man1/iolab.1"
    )]
    Man(ManArgs),
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for
    #[arg(value_enum, value_name = "SHELL")]
    pub shell: ShellArg,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ShellArg {
    Bash,
    Zsh,
    Fish,
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// The command whose page to print (iolab-COMMAND(1)); default: iolab(1)
    #[arg(value_name = "COMMAND")]
    pub command: Option<String>,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The experiment file (.toml)
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Machine-readable output
    #[arg(long)]
    pub json: bool,
}

/// Watching the machine during the timed region.
#[derive(Debug, Args)]
pub struct MonitorArgs {
    /// Do not sample CPU, memory, disks and pressure during the run (on by default)
    #[arg(long)]
    pub no_monitor: bool,

    /// Time between samples (e.g. 1s, 100ms; at least 1ms)
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = parse_positive_duration)]
    pub monitor_interval: Duration,

    /// Trace the block layer of the target device (tracefs; needs root)
    #[arg(long)]
    pub trace_blocks: bool,

    /// Count the workload's system calls and the bytes they moved (eBPF; needs root)
    #[arg(long)]
    pub trace_syscalls: bool,
}

impl MonitorArgs {
    pub fn options(&self) -> iolab_experiment::run::monitor::MonitorOptions {
        iolab_experiment::run::monitor::MonitorOptions {
            enabled: !self.no_monitor,
            interval: self.monitor_interval,
            trace_blocks: self.trace_blocks,
            save_trace: None,
            trace_syscalls: self.trace_syscalls,
        }
    }
}

/// Where the results database is.
#[derive(Debug, Args)]
pub struct DbArgs {
    /// Results database (SQLite)
    #[arg(
        long,
        value_name = "FILE",
        env = "IOLAB_DB",
        default_value = "iolab.db"
    )]
    pub db: PathBuf,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    #[command(flatten)]
    pub db: DbArgs,
    /// Machine-readable output
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// Experiment id (as `iolab list` shows it) or uuid; default: the newest
    #[arg(value_name = "ID")]
    pub id: Option<String>,
    #[command(flatten)]
    pub db: DbArgs,
    /// Machine-readable output
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ReparseArgs {
    /// Experiment id (as `iolab list` shows it) or uuid; default: the newest
    #[arg(value_name = "ID")]
    pub id: Option<String>,
    #[command(flatten)]
    pub db: DbArgs,
    /// Store the values that changed (a run's status is never changed)
    #[arg(long)]
    pub apply: bool,
    /// Machine-readable output (schema iolab.reparse/1)
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// Experiment id or uuid; default: the newest
    #[arg(value_name = "ID")]
    pub id: Option<String>,
    #[command(flatten)]
    pub db: DbArgs,
    /// json: everything, nested; csv: one row per run
    #[arg(long, value_enum, default_value_t = ExportArg::Json)]
    pub format: ExportArg,
    /// Write to this file instead of standard output
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportArg {
    Json,
    Csv,
}

#[derive(Debug, Args)]
pub struct RecoverArgs {
    /// The journal to recover from [default: /var/lib/iolab/journal.json as root,
    /// $XDG_STATE_HOME/iolab/journal.json otherwise]
    #[arg(long, value_name = "FILE")]
    pub journal: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// An experiment file (.toml), a WML file (.f), or the name of a built-in workload
    #[arg(value_name = "FILE")]
    pub file: String,

    #[command(flatten)]
    pub db: DbArgs,

    #[command(flatten)]
    pub monitor: MonitorArgs,

    /// Do not store the result in the database (workloads only; experiments always store)
    #[arg(long)]
    pub no_db: bool,
    // A workload file's own flags come from its kind's runner (`iolab_kinds::files`).
    /// Continue the newest unfinished experiment from FILE (.toml) without repeating the
    /// runs it finished
    #[arg(long)]
    pub resume: bool,

    /// A run with a thread waiting this long in one file-I/O system call has stalled: it is
    /// stored failed (default 120s)
    #[arg(long, value_name = "DURATION", value_parser = parse_positive_duration)]
    pub stall_timeout: Option<Duration>,
}

fn parse_duration(s: &str) -> Result<Duration, String> {
    iolab_util::units::parse_duration(s).map_err(|e| e.to_string())
}

/// A duration that is long enough to measure something (`--time`, `--monitor-interval`): at
/// least a millisecond, as every option's duration (below it a run is all thread start-up,
/// and a sampler would do nothing but read /proc).
fn parse_positive_duration(s: &str) -> Result<Duration, String> {
    iolab_util::option::check_duration(parse_duration(s)?, s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn durations_must_measure_something() {
        assert_eq!(
            parse_positive_duration("0s").unwrap_err(),
            "must be longer than zero"
        );
        assert_eq!(
            parse_positive_duration("1us").unwrap_err(),
            "`1us` is too short: give at least 1ms"
        );
        assert_eq!(
            parse_positive_duration("1ms").unwrap(),
            Duration::from_millis(1)
        );
        assert!(parse_positive_duration("soon")
            .unwrap_err()
            .contains("is not a duration"));
    }
}
