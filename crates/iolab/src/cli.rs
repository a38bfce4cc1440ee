//! Command-line definitions. Each option is declared once here; help text and validation of
//! its syntax come from the declaration, semantic checks from `iolab-workload`.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};
use iolab_workload::micro::{Access, DataPattern, EngineKind, SyncMode};

#[derive(Debug, Parser)]
#[command(
    name = "iolab",
    version,
    about = "A workbench for storage and filesystem performance experiments whose numbers can be trusted",
    after_help = "Exit codes: 0 success, 1 the run failed, 2 bad input or usage.\nDocumentation: docs/ in the source tree."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Measure one access pattern under one sync mode (mobibench's micro tests, done right)
    #[command(
        after_help = "Examples:\n  iolab micro --dir /mnt/test --access randwrite --sync fdatasync --bs 4k --size 64m\n  iolab micro --dir /mnt/test --access randread --engine io_uring --iodepth 32 --size 1g --json\n\nFiles are named iolab-micro.N (one per thread) and kept for later read runs unless\n--remove-files is given; a file of the right size is reused."
    )]
    Micro(MicroArgs),
    /// Run an experiment (.toml), or a filebench workload (.f file or built-in name)
    #[command(
        after_help = "Examples:\n  iolab run examples/quickstart.toml\n  iolab run examples/ext4-journal-modes.toml --db results.db\n  iolab run examples/ext4-journal-modes.toml --resume     # after a crash or Ctrl-C\n  iolab run fileserver --dir /mnt/test --time 30s\n  iolab run my.f --set nfiles=10000 --set iosize=1m --format filebench\n\nEvery run is stored in the results database (--db, default ./iolab.db; $IOLAB_DB).\nExperiment files are described in docs/experiments.md; the built-in workloads are\nlisted by `iolab workloads`."
    )]
    Run(RunArgs),
    /// List the built-in workloads
    Workloads,
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
    /// Trace the block requests of a device while a command runs (blktrace via tracefs)
    Trace(crate::cmd::trace::TraceArgs),
    /// Validate an experiment file and report what can be judged before running it
    Check(CheckArgs),
    /// Write an experiment's report: self-contained HTML with charts, Markdown tables, or JSON
    Report(crate::cmd::report::ReportArgs),
    /// Compare configurations with a baseline: ratio of means, Welch/Holm, Mann–Whitney, verdict
    Compare(crate::cmd::compare::CompareArgs),
    /// Copy the experiments of another results database into this one
    Import(crate::cmd::import::ImportArgs),
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
}

impl MonitorArgs {
    pub fn options(&self) -> iolab_experiment::monitor::MonitorOptions {
        iolab_experiment::monitor::MonitorOptions {
            enabled: !self.no_monitor,
            interval: self.monitor_interval,
            trace_blocks: self.trace_blocks,
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

    /// Continue the newest unfinished experiment from FILE (.toml) without repeating the
    /// runs it finished
    #[arg(long)]
    pub resume: bool,

    /// Directory for the filesets (sets the workload's $dir)
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,

    /// Run time (e.g. 30s, 2m; at least 1ms); overrides the file's `run N`, required when it
    /// has none
    #[arg(long, value_name = "DURATION", value_parser = parse_positive_duration)]
    pub time: Option<Duration>,

    /// Set a workload variable, e.g. --set nfiles=1000 (repeatable)
    #[arg(long = "set", value_name = "VAR=VALUE", value_parser = parse_assignment)]
    pub sets: Vec<(String, String)>,

    /// Seed for every random choice (file sizes, offsets, picks) [default: 1]
    #[arg(long)]
    pub seed: Option<u64>,

    /// Multiply every fileset's file sizes by F (e.g. 0.01), for workloads whose sizes are
    /// written into the file rather than in variables
    #[arg(long, value_name = "F", value_parser = parse_scale)]
    pub size_scale: Option<f64>,

    /// How flowops pick files: round-robin (filebench's) or random
    #[arg(long, value_enum, default_value_t = PickArg::RoundRobin)]
    pub pick: PickArg,

    /// I/O engine for the flowops: psync, sync, mmap, io_uring, null [default: psync]
    #[arg(long, value_parser = parse_engine)]
    pub engine: Option<EngineKind>,

    /// Transfers in flight per thread, 1 to 4096 (io_uring only): whole-file chunks, aiowrites
    #[arg(long, value_parser = parse_iodepth)]
    pub iodepth: Option<u32>,

    /// Do not run the workload's `system` commands (for files you do not trust); each one
    /// is reported instead
    #[arg(long)]
    pub no_system: bool,

    /// Output format
    #[arg(long, value_enum, default_value_t = crate::output::run::RunFormat::Human)]
    pub format: crate::output::run::RunFormat,

    /// Shorthand for --format json
    #[arg(long, conflicts_with = "format")]
    pub json: bool,

    /// Do not print the workload's warnings
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PickArg {
    RoundRobin,
    Random,
}

#[derive(Debug, Args)]
pub struct MicroArgs {
    /// Directory for the data files (must exist)
    #[arg(long, value_name = "DIR")]
    pub dir: PathBuf,

    /// Access pattern
    #[arg(long, default_value = "write", value_parser = parse_access)]
    pub access: Access,

    /// Sync mode: normal, osync, fsync, direct, osync+direct, mmap, mmap-async, mmap-sync,
    /// fdatasync, dsync
    #[arg(long, default_value = "normal", value_parser = parse_sync)]
    pub sync: SyncMode,

    /// Record size (e.g. 4k, 1m)
    #[arg(long, default_value = "4k", value_parser = parse_size)]
    pub bs: u64,

    /// Total data size, split evenly over the threads (e.g. 64m, 1g)
    #[arg(long, default_value = "64m", value_parser = parse_size)]
    pub size: u64,

    /// Worker threads, each with its own file
    #[arg(long, default_value_t = 1, value_parser = parse_count)]
    pub threads: u32,

    /// I/O engine: psync, sync, mmap, io_uring, null [default: psync; mmap for mmap modes]
    #[arg(long, value_parser = parse_engine)]
    pub engine: Option<EngineKind>,

    /// Records in flight per thread, 1 to 4096 (io_uring only)
    #[arg(long, value_parser = parse_iodepth)]
    pub iodepth: Option<u32>,

    /// Stop after this long even if records remain (e.g. 30s, 2m; at least 1ms)
    #[arg(long, value_name = "DURATION", value_parser = parse_positive_duration)]
    pub time: Option<Duration>,

    /// Visit every record this many times
    #[arg(long, default_value_t = 1, value_parser = parse_count)]
    pub loops: u32,

    /// Seed for the random order and random data
    #[arg(long, default_value_t = 1)]
    pub seed: u64,

    /// Contents of written records
    #[arg(long, value_enum, default_value_t = DataArg::Zeros)]
    pub data: DataArg,

    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,

    /// Shorthand for --format json
    #[arg(long, conflicts_with = "format")]
    pub json: bool,

    /// Delete the data files after a successful run
    #[arg(long)]
    pub remove_files: bool,

    #[command(flatten)]
    pub db: DbArgs,

    #[command(flatten)]
    pub monitor: MonitorArgs,

    /// Do not store the result in the database
    #[arg(long)]
    pub no_db: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// A readable summary
    Human,
    /// Everything, machine-readable and versioned
    Json,
    /// mobibench's [CPU], [TIME] and [CON SWITCHES] lines
    Mobibench,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DataArg {
    Zeros,
    Random,
}

impl From<DataArg> for DataPattern {
    fn from(d: DataArg) -> DataPattern {
        match d {
            DataArg::Zeros => DataPattern::Zeros,
            DataArg::Random => DataPattern::Random,
        }
    }
}

fn parse_size(s: &str) -> Result<u64, String> {
    iolab_workload::parse_size(s).map_err(|e| e.to_string())
}

fn parse_duration(s: &str) -> Result<Duration, String> {
    iolab_workload::parse_duration(s).map_err(|e| e.to_string())
}

/// The shortest run time and sampling interval: below a millisecond a run is all thread
/// start-up, and a sampler would do nothing but read /proc.
const MIN_DURATION: Duration = Duration::from_millis(1);

/// A duration that is long enough to measure something (`--time`, `--monitor-interval`).
fn parse_positive_duration(s: &str) -> Result<Duration, String> {
    let d = parse_duration(s)?;
    if d.is_zero() {
        return Err("must be longer than zero".into());
    }
    if d < MIN_DURATION {
        return Err(format!("`{s}` is too short: give at least 1ms"));
    }
    Ok(d)
}

/// A count of at least 1 (`--threads`, `--loops`).
fn parse_count(s: &str) -> Result<u32, String> {
    match s.trim().parse::<u64>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) => u32::try_from(n).map_err(|_| format!("must be between 1 and {}", u32::MAX)),
        Err(_) => Err(format!("`{s}` is not a whole number (e.g. 4)")),
    }
}

fn parse_iodepth(s: &str) -> Result<u32, String> {
    match s.trim().parse::<u64>() {
        Ok(n @ 1..=4096) => Ok(n as u32),
        Ok(_) => Err("must be between 1 and 4096".into()),
        Err(_) => Err(format!("`{s}` is not a whole number (e.g. 32)")),
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

fn parse_access(s: &str) -> Result<Access, String> {
    Access::parse(s).ok_or_else(|| {
        let names: Vec<_> = Access::ALL.iter().map(|a| a.name()).collect();
        format!("expected one of {}", names.join(", "))
    })
}

fn parse_sync(s: &str) -> Result<SyncMode, String> {
    SyncMode::parse(s).ok_or_else(|| {
        let names: Vec<_> = SyncMode::ALL.iter().map(|m| m.name()).collect();
        format!("expected one of {}", names.join(", "))
    })
}

fn parse_engine(s: &str) -> Result<EngineKind, String> {
    EngineKind::parse(s).ok_or_else(|| {
        let names: Vec<_> = EngineKind::ALL.iter().map(|e| e.name()).collect();
        format!("expected one of {}", names.join(", "))
    })
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

    #[test]
    fn counts_start_at_one() {
        assert_eq!(parse_count("0").unwrap_err(), "must be at least 1");
        assert_eq!(
            parse_count("5000000000").unwrap_err(),
            "must be between 1 and 4294967295"
        );
        assert_eq!(
            parse_count("-1").unwrap_err(),
            "`-1` is not a whole number (e.g. 4)"
        );
        assert_eq!(parse_count("4").unwrap(), 4);
        assert_eq!(
            parse_iodepth("0").unwrap_err(),
            "must be between 1 and 4096"
        );
        assert_eq!(parse_iodepth("4096").unwrap(), 4096);
    }
}
