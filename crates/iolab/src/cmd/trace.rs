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
//! formats and back.

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
    about = "Trace the block requests of a device while a command runs (blktrace via tracefs)",
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true,
    after_help = "Examples:\n  iolab trace --dev loop0 -- dd if=/dev/zero of=/dev/loop0 bs=1M count=64 oflag=direct\n  iolab trace --dev loop0 --save run.iolt -- iolab run experiment.toml\n  iolab trace convert run.iolt run.oracleGeneral.bin --to oracleGeneral --block-size 4K\n  iolab trace --dev /mnt/test --out t.txt -- cp -r /usr/share/doc /mnt/test\n  iolab trace --dev vda --format json -- sync\n  iolab trace --dev vda            # until Ctrl-C\n\nNeeds root and a mounted tracefs. Only request-based devices (disks, loop, nvme, virtio)\ncan be traced; for device-mapper or md, trace the devices below.\nExit codes: 0 ok, 1 the command failed, 2 bad device or usage, 130 interrupted."
)]
pub struct TraceArgs {
    /// Device: /dev/NAME, NAME (as lsblk shows it), MAJ:MIN, or a file or directory (the
    /// device of its filesystem)
    #[arg(long, value_name = "DEV", required = true)]
    pub dev: Option<String>,

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
    let mut err = if matches!(e, TraceError::NeedsRoot(_)) {
        CliError::usage("needs root (tracefs)")
    } else if e.is_bad_input() {
        CliError::usage(format!("{what}: {e}"))
    } else {
        CliError::failed(format!("{what}: {e}"))
    };
    if let Some(h) = e.hint() {
        err = err.with_hint(h);
    }
    err
}

/// How the traced command ended.
enum Outcome {
    /// No command: traced until Ctrl-C.
    UntilInterrupt,
    /// The command exited.
    Exited(ExitStatus),
    /// Ctrl-C while the command ran; `Some` if it exited within the grace period.
    Interrupted(Option<ExitStatus>, u32),
}

pub fn run(args: TraceArgs, cancel: Arc<AtomicBool>) -> Result<(), CliError> {
    if let Some(TraceAction::Convert(c)) = args.action {
        return crate::cmd::trace_convert::run(c);
    }
    let dev = args.dev.as_deref().unwrap_or_default();
    let device =
        TraceDevice::resolve(dev).map_err(|e| trace_error(e, &format!("cannot trace {dev:?}")))?;
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err(CliError::usage("needs root (tracefs)")
            .with_hint("run it as root, e.g. sudo iolab trace ..."));
    }
    let mut out_file = match &args.out {
        Some(p) => Some(BufWriter::new(File::create(p).map_err(|e| {
            CliError::usage(format!("cannot create {}: {e}", p.display()))
        })?)),
        None => None,
    };
    let opts = TraceOptions {
        buffer_kb: args.buffer_kb,
        keep_records: out_file.is_some() || args.format == TraceFormat::Blkparse,
        interval: args.interval,
        save: args.save.clone(),
        ..Default::default()
    };
    let begin = || BlockTracer::start(&device, &opts);
    let began = |e| trace_error(e, &format!("cannot trace {}", device.name));
    // The command is never killed: it got the terminal's Ctrl-C too.
    let watch = Watch::new(cancel).grace(GRACE).on_stop(OnStop::Leave);
    let (outcome, stopped) = if args.command.is_empty() {
        let r = supervise::record_until_stopped(&watch, begin, BlockTracer::stop).map_err(began)?;
        (Outcome::UntilInterrupt, r.recorded)
    } else {
        let job = Job::new(&args.command);
        let o = match supervise::run_recorded(&job, &watch, begin, BlockTracer::stop) {
            Ok(o) => o,
            Err(SuperviseError::Begin(e)) => return Err(began(e)),
            Err(e @ SuperviseError::Spawn { .. }) => {
                if let Some(p) = &args.save {
                    let _ = std::fs::remove_file(p);
                }
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
        (outcome, o.recorded)
    };

    let mut trace = stopped.map_err(|e| trace_error(e, "tracing failed"))?;
    if let (Some(f), Some(path)) = (&mut out_file, &args.out) {
        trace
            .write_blkparse(f)
            .and_then(|()| f.flush())
            .map_err(|e| CliError::failed(format!("cannot write {}: {e}", path.display())))?;
    }
    if args.format != TraceFormat::Blkparse {
        // Not part of the summary (and possibly large).
        trace.records = Vec::new();
    }

    let command: Vec<String> = args
        .command
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let (status, interrupted) = match &outcome {
        Outcome::UntilInterrupt => (None, true),
        Outcome::Exited(s) => (Some(*s), false),
        Outcome::Interrupted(s, _) => (*s, true),
    };
    let lost = trace.lost.total;
    let saved = trace.saved.clone();
    let events = trace.events.queue
        + trace.events.insert
        + trace.events.issue
        + trace.events.complete
        + trace.events.requeue;
    let report = TraceReport::new(trace, command.clone(), status, interrupted);
    let format: &dyn Formatter<TraceReport> = match args.format {
        TraceFormat::Summary => &trace_output::Summary,
        TraceFormat::Blkparse => &trace_output::Blkparse,
        TraceFormat::Json => &Json,
    };
    output::print(format, &report)?;
    if args.format != TraceFormat::Summary && lost > 0 {
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
        if args.format == TraceFormat::Summary {
            say!("{} events written to {}", thousands(events), p.display());
        }
    }

    match outcome {
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
}
