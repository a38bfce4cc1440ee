//! `iolab trace`: trace the block requests of one device while a command runs — blktrace
//! through tracefs, summarized.
//!
//! Exit codes: 0 the command (and the trace) succeeded; 1 the command failed (the summary
//! is still printed) or tracing failed midway; 2 bad device, bad option, not root, or a
//! command that cannot be started; 130 Ctrl-C / SIGTERM while a command ran (the trace is
//! stopped and summarized, the command is not killed by iolab). Without a command, iolab
//! traces until Ctrl-C and exits 0.
//!
//! `--save FILE` keeps every request in iolab's trace format (docs/traces.md);
//! `iolab trace convert` (cmd/trace_convert.rs) turns saved traces into libCacheSim's
//! formats and back. `--syscalls` counts the command's system calls instead
//! (cmd/trace_syscalls.rs), with the same exit codes.

use std::ffi::OsString;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitStatus;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use clap::ValueEnum;
use iolab_blocktrace::{BlockTracer, TraceDevice, TraceError, TraceOptions};
use iolab_supervise::{self as supervise, End, Error as SuperviseError, Job, OnStop, Watch};

use crate::error::CliError;
use crate::output::json::Json;
use crate::output::trace::{self as trace_output, describe_status, TraceReport};
use crate::output::{self, Formatter};
use iolab_util::units::thousands;

/// After Ctrl-C, how long to wait for the command to exit by itself.
const GRACE: Duration = Duration::from_secs(2);

#[derive(clap::Args, Debug)]
#[command(
    about = "Trace the block requests of a device while a command runs (blktrace via tracefs), or count its system calls",
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true,
    after_help = "Examples:\n  iolab trace --dev loop0 -- dd if=/dev/zero of=/dev/loop0 bs=1M count=64 oflag=direct\n  iolab trace --syscalls -- dd if=/dev/zero of=f bs=1M count=64\n  iolab trace --syscalls --json -- fio job.fio\n  iolab trace --dev loop0 --save run.iolt -- iolab run experiment.toml\n  iolab trace convert run.iolt run.oracleGeneral.bin --to oracleGeneral --block-size 4K\n  iolab trace --dev /mnt/test --out t.txt -- cp -r /usr/share/doc /mnt/test\n  iolab trace --dev vda --format json -- sync\n  iolab trace --dev vda            # until Ctrl-C\n\nNeeds root and a mounted tracefs. Only request-based devices (disks, loop, nvme, virtio)\ncan be traced; for device-mapper or md, trace the devices below. --syscalls counts the\ncommand's system calls (its whole process tree) with BPF programs (docs/syscalls.md).\nExit codes: 0 ok, 1 the command failed, 2 bad device or usage, 130 interrupted."
)]
pub struct TraceArgs {
    /// Device: /dev/NAME, NAME (as lsblk shows it), MAJ:MIN, or a file or directory (the
    /// device of its filesystem)
    #[arg(long, value_name = "DEV", required_unless_present = "syscalls")]
    pub dev: Option<String>,

    /// Count the command's system calls per kind instead (calls, errors, bytes, sizes), for
    /// its whole process tree, with BPF programs on tracepoints; no device
    #[arg(
        long,
        requires = "command",
        conflicts_with_all = ["dev", "save", "out", "buffer_kb", "interval"]
    )]
    pub syscalls: bool,

    /// Save every request (time, offset, length, op, flags, latency) to FILE in iolab's
    /// trace format (docs/traces.md); convert it with `iolab trace convert`
    #[arg(long, value_name = "FILE")]
    pub save: Option<PathBuf>,

    /// Also write every event, blkparse-style, to FILE
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,

    /// What to print: a readable summary, every event blkparse-style, or the summary as JSON
    #[arg(long, value_enum, default_value_t = TraceFormat::Summary)]
    pub format: TraceFormat,

    /// Print JSON: the same as --format json
    #[arg(long, conflicts_with = "format")]
    pub json: bool,

    /// Trace buffer per CPU, KiB (raise it if events are lost)
    #[arg(long, value_name = "KIB", default_value_t = 8192)]
    pub buffer_kb: u32,

    /// Period of the throughput and queue-depth series (e.g. 1s, 100ms)
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = parse_duration)]
    pub interval: Duration,

    /// The command to run while tracing (after `--`); without one, trace until Ctrl-C
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<OsString>,

    #[command(subcommand)]
    pub action: Option<TraceAction>,
}

#[derive(clap::Subcommand, Debug)]
pub enum TraceAction {
    /// Convert a block trace between iolab's format and libCacheSim's oracleGeneral and CSV
    Convert(crate::cmd::trace_convert::ConvertArgs),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TraceFormat {
    /// Requests, bytes, flushes, sizes, sequentiality, latency, lost events
    Summary,
    /// One line per event, like blkparse
    Blkparse,
    /// The summary, machine-readable
    Json,
}

fn parse_duration(s: &str) -> Result<Duration, String> {
    let d = iolab_util::units::parse_duration(s).map_err(|e| e.to_string())?;
    if d < Duration::from_millis(1) {
        return Err("must be at least 1ms".into());
    }
    Ok(d)
}

fn trace_error(e: TraceError, what: &str) -> CliError {
    let message = if matches!(e, TraceError::NeedsRoot(_)) {
        "needs root (tracefs)".to_owned()
    } else {
        format!("{what}: {e}")
    };
    tracer_error(message, e.is_bad_input(), e.hint())
}

/// A tracer's error as iolab's: bad input (exit 2) or a failure midway (1), with its hint.
pub(crate) fn tracer_error(message: String, bad_input: bool, hint: Option<String>) -> CliError {
    let err = if bad_input {
        CliError::usage(message)
    } else {
        CliError::failed(message)
    };
    match hint {
        Some(h) => err.with_hint(h),
        None => err,
    }
}

/// How the traced command ended.
pub(crate) enum Outcome {
    /// No command: traced until Ctrl-C.
    UntilInterrupt,
    /// The command exited.
    Exited(ExitStatus),
    /// Ctrl-C while the command ran; `Some` if it exited within the grace period.
    Interrupted(Option<ExitStatus>, u32),
}

impl Outcome {
    /// How the command ended (`None`: no command, or still running), and whether Ctrl-C
    /// ended the trace.
    pub(crate) fn status(&self) -> (Option<ExitStatus>, bool) {
        match self {
            Outcome::UntilInterrupt => (None, true),
            Outcome::Exited(s) => (Some(*s), false),
            Outcome::Interrupted(s, _) => (*s, true),
        }
    }

    /// iolab's exit: 0 when the command succeeded (or none ran), 1 when it failed, 130 when
    /// interrupted.
    pub(crate) fn exit(self, command: &[String]) -> Result<(), CliError> {
        match self {
            Outcome::UntilInterrupt => Ok(()),
            Outcome::Exited(s) if s.success() => Ok(()),
            Outcome::Exited(s) => Err(CliError::failed(format!(
                "{} {}",
                command.first().map_or("the command", |c| c.as_str()),
                describe_status(s)
            ))),
            Outcome::Interrupted(Some(_), _) => Err(CliError::interrupted(
                "interrupted; the trace was stopped and summarized",
            )),
            Outcome::Interrupted(None, pid) => Err(CliError::interrupted(format!(
                "interrupted; the trace was stopped and summarized; the command (pid {pid}) is \
                 still running and was not killed"
            ))),
        }
    }
}

/// The format asked for: `--json` is `--format json`.
pub(crate) fn format_of(args: &TraceArgs) -> TraceFormat {
    if args.json {
        TraceFormat::Json
    } else {
        args.format
    }
}

/// Fails unless iolab runs as root.
pub(crate) fn require_root(what: &str) -> Result<(), CliError> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err(CliError::usage(format!("needs root ({what})"))
            .with_hint("run it as root, e.g. sudo iolab trace ..."));
    }
    Ok(())
}

/// Runs `command` (none: until Ctrl-C) while a recorder records: `begin` starts it just
/// before the spawn, `end` stops it right after the command ended or Ctrl-C came. The
/// command is never killed: it got the terminal's Ctrl-C too. `began` turns `begin`'s
/// error into iolab's; `spawn_failed` runs when the command could not be started.
pub(crate) fn record<R, E: std::fmt::Display, T>(
    command: &[OsString],
    cancel: Arc<AtomicBool>,
    begin: impl FnOnce() -> Result<R, E>,
    end: impl FnOnce(R) -> T,
    began: impl FnOnce(E) -> CliError,
    spawn_failed: impl FnOnce(),
) -> Result<(Outcome, T), CliError> {
    let watch = Watch::new(cancel).grace(GRACE).on_stop(OnStop::Leave);
    if command.is_empty() {
        let r = supervise::record_until_stopped(&watch, begin, end).map_err(began)?;
        return Ok((Outcome::UntilInterrupt, r.recorded));
    }
    let job = Job::new(command);
    let o = match supervise::run_recorded(&job, &watch, begin, end) {
        Ok(o) => o,
        Err(SuperviseError::Begin(e)) => return Err(began(e)),
        Err(e @ SuperviseError::Spawn { .. }) => {
            spawn_failed();
            return Err(CliError::usage(e).with_hint("check the command after `--` and $PATH"));
        }
        Err(SuperviseError::Wait { source, .. }) => {
            return Err(CliError::failed(format!(
                "cannot wait for the command: {source}"
            )))
        }
        // No working directory or output files are given: not reached.
        Err(e) => {
            let mut err = CliError::usage(&e);
            if let Some(h) = e.hint() {
                err = err.with_hint(h);
            }
            return Err(err);
        }
    };
    let outcome = match o.end {
        End::Exited(s) if !o.interrupted() => Outcome::Exited(s),
        end => Outcome::Interrupted(end.status(), o.pid),
    };
    Ok((outcome, o.recorded))
}

/// The command as text, for the report.
pub(crate) fn command_text(command: &[OsString]) -> Vec<String> {
    command
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect()
}

pub fn run(args: TraceArgs, cancel: Arc<AtomicBool>) -> Result<(), CliError> {
    if let Some(TraceAction::Convert(c)) = args.action {
        return crate::cmd::trace_convert::run(c);
    }
    if args.syscalls {
        return crate::cmd::trace_syscalls::run(&args, cancel);
    }
    let format = format_of(&args);
    let dev = args.dev.as_deref().unwrap_or_default();
    let device =
        TraceDevice::resolve(dev).map_err(|e| trace_error(e, &format!("cannot trace {dev:?}")))?;
    require_root("tracefs")?;
    let mut out_file = match &args.out {
        Some(p) => Some(BufWriter::new(File::create(p).map_err(|e| {
            CliError::usage(format!("cannot create {}: {e}", p.display()))
        })?)),
        None => None,
    };
    let opts = TraceOptions {
        buffer_kb: args.buffer_kb,
        keep_records: out_file.is_some() || format == TraceFormat::Blkparse,
        interval: args.interval,
        save: args.save.clone(),
        ..Default::default()
    };
    let (outcome, stopped) = record(
        &args.command,
        cancel,
        || BlockTracer::start(&device, &opts),
        BlockTracer::stop,
        |e| trace_error(e, &format!("cannot trace {}", device.name)),
        || {
            if let Some(p) = &args.save {
                let _ = std::fs::remove_file(p);
            }
        },
    )?;

    let mut trace = stopped.map_err(|e| trace_error(e, "tracing failed"))?;
    if let (Some(f), Some(path)) = (&mut out_file, &args.out) {
        trace
            .write_blkparse(f)
            .and_then(|()| f.flush())
            .map_err(|e| CliError::failed(format!("cannot write {}: {e}", path.display())))?;
    }
    if format != TraceFormat::Blkparse {
        // Not part of the summary (and possibly large).
        trace.records = Vec::new();
    }

    let command = command_text(&args.command);
    let (status, interrupted) = outcome.status();
    let lost = trace.lost.total;
    let saved = trace.saved.clone();
    let events = trace.events.queue
        + trace.events.insert
        + trace.events.issue
        + trace.events.complete
        + trace.events.requeue;
    let report = TraceReport::new(trace, command.clone(), status, interrupted);
    let formatter: &dyn Formatter<TraceReport> = match format {
        TraceFormat::Summary => &trace_output::Summary,
        TraceFormat::Blkparse => &trace_output::Blkparse,
        TraceFormat::Json => &Json,
    };
    output::print(formatter, &report)?;
    if format != TraceFormat::Summary && lost > 0 {
        say!(
            "iolab: warning: {} events lost; raise --buffer-kb (now {})",
            thousands(lost),
            args.buffer_kb
        );
    }
    if let Some(s) = &saved {
        let pending = if s.without_completion > 0 {
            format!(
                " ({} without a completion)",
                thousands(s.without_completion)
            )
        } else {
            String::new()
        };
        say!(
            "{} requests saved to {}{pending}",
            thousands(s.requests),
            s.path.display()
        );
    }
    if let Some(p) = &args.out {
        if format == TraceFormat::Summary {
            say!("{} events written to {}", thousands(events), p.display());
        }
    }
    outcome.exit(&command)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser, Debug)]
    struct Wrapper {
        #[command(flatten)]
        args: TraceArgs,
    }

    #[test]
    fn command_after_double_dash() {
        let w = Wrapper::try_parse_from([
            "iolab",
            "--dev",
            "loop0",
            "--format",
            "json",
            "--",
            "dd",
            "if=/dev/zero",
            "-x",
        ])
        .unwrap();
        assert_eq!(w.args.dev.as_deref(), Some("loop0"));
        assert_eq!(w.args.format, TraceFormat::Json);
        assert_eq!(w.args.command, ["dd", "if=/dev/zero", "-x"]);
        assert_eq!(w.args.interval, Duration::from_secs(1));
        let w = Wrapper::try_parse_from(["iolab", "--dev", "vda"]).unwrap();
        assert!(w.args.command.is_empty());
        assert!(Wrapper::try_parse_from(["iolab", "--dev", "vda", "dd"]).is_err());
        assert!(Wrapper::try_parse_from(["iolab", "--", "dd"]).is_err());
        let w = Wrapper::try_parse_from([
            "iolab",
            "convert",
            "a.iolt",
            "b.csv",
            "--to",
            "csv",
            "--block-size",
            "64K",
        ])
        .unwrap();
        let Some(TraceAction::Convert(c)) = w.args.action else {
            panic!("not convert");
        };
        assert_eq!(c.block_size, 65536);
        assert!(Wrapper::try_parse_from(["iolab", "--dev", "x", "convert", "a", "b"]).is_err());
        assert!(Wrapper::try_parse_from(["iolab", "--dev", "x", "--interval", "0s"]).is_err());
    }

    #[test]
    fn syscalls_take_a_command_and_no_device() {
        let w =
            Wrapper::try_parse_from(["iolab", "--syscalls", "--json", "--", "dd", "x"]).unwrap();
        assert!(w.args.syscalls && w.args.dev.is_none());
        assert_eq!(format_of(&w.args), TraceFormat::Json);
        assert_eq!(w.args.command, ["dd", "x"]);
        assert!(Wrapper::try_parse_from(["iolab", "--syscalls"]).is_err());
        assert!(Wrapper::try_parse_from(["iolab", "--syscalls", "--dev", "x", "--", "a"]).is_err());
        assert!(
            Wrapper::try_parse_from(["iolab", "--syscalls", "--save", "f", "--", "a"]).is_err()
        );
        assert!(
            Wrapper::try_parse_from(["iolab", "--json", "--format", "json", "--dev", "x"]).is_err()
        );
        let w = Wrapper::try_parse_from(["iolab", "--dev", "vda", "--json"]).unwrap();
        assert_eq!(format_of(&w.args), TraceFormat::Json);
    }
}
