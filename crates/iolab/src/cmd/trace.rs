//! `iolab trace`: trace the block requests of one device while a command runs — blktrace
//! through tracefs, summarized.
//!
//! Exit codes: 0 the command (and the trace) succeeded; 1 the command failed (the summary
//! is still printed) or tracing failed midway; 2 bad device, bad option, not root, or a
//! command that cannot be started; 130 Ctrl-C / SIGTERM while a command ran (the trace is
//! stopped and summarized, the command is not killed by iolab). Without a command, iolab
//! traces until Ctrl-C and exits 0.

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::process::{Command, ExitStatus};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::ValueEnum;
use iolab_blocktrace::{
    BlockTrace, BlockTracer, DirStats, LatencySummary, OpStats, TraceDevice, TraceError,
    TraceOptions,
};
use iolab_workload::format_bytes;
use serde_json::json;

use crate::error::CliError;
use crate::fmt::thousands;
use iolab_workload::format_ns;

/// Schema of `--format json`.
pub const SCHEMA: &str = "iolab.trace/1";

/// How long to poll the command / the cancel flag.
const POLL: Duration = Duration::from_millis(20);
/// After Ctrl-C, how long to wait for the command to exit by itself.
const GRACE: Duration = Duration::from_secs(2);

#[derive(clap::Args, Debug)]
#[command(
    about = "Trace the block requests of a device while a command runs (blktrace via tracefs)",
    after_help = "Examples:\n  iolab trace --dev loop0 -- dd if=/dev/zero of=/dev/loop0 bs=1M count=64 oflag=direct\n  iolab trace --dev /mnt/test --out t.txt -- iolab micro --dir /mnt/test --no-db\n  iolab trace --dev vda --format json -- sync\n  iolab trace --dev vda            # until Ctrl-C\n\nNeeds root and a mounted tracefs. Only request-based devices (disks, loop, nvme, virtio)\ncan be traced; for device-mapper or md, trace the devices below.\nExit codes: 0 ok, 1 the command failed, 2 bad device or usage, 130 interrupted."
)]
pub struct TraceArgs {
    /// Device: /dev/NAME, NAME (as lsblk shows it), MAJ:MIN, or a file or directory (the
    /// device of its filesystem)
    #[arg(long, value_name = "DEV")]
    pub dev: String,

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
    let d = iolab_workload::parse_duration(s).map_err(|e| e.to_string())?;
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
    let device = TraceDevice::resolve(&args.dev)
        .map_err(|e| trace_error(e, &format!("cannot trace {:?}", args.dev)))?;
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
        ..Default::default()
    };
    let tracer = BlockTracer::start(&device, &opts)
        .map_err(|e| trace_error(e, &format!("cannot trace {}", device.name)))?;

    let (outcome, stopped) = if args.command.is_empty() {
        while !cancel.load(Ordering::Relaxed) {
            std::thread::sleep(POLL);
        }
        (Outcome::UntilInterrupt, tracer.stop())
    } else {
        let mut child = match Command::new(&args.command[0])
            .args(&args.command[1..])
            .spawn()
        {
            Ok(c) => c,
            Err(e) => {
                drop(tracer);
                return Err(CliError::usage(format!(
                    "cannot run {}: {e}",
                    args.command[0].to_string_lossy()
                ))
                .with_hint("check the command after `--` and $PATH"));
            }
        };
        loop {
            match child.try_wait() {
                Ok(Some(status)) => {
                    let stopped = tracer.stop();
                    // Ctrl-C reaches the whole process group: the command may have died of it
                    // before the flag was seen.
                    let outcome = if cancel.load(Ordering::Relaxed)
                        || exit_signal(status) == Some(libc::SIGINT)
                    {
                        Outcome::Interrupted(Some(status), child.id())
                    } else {
                        Outcome::Exited(status)
                    };
                    break (outcome, stopped);
                }
                Ok(None) => {}
                Err(e) => {
                    drop(tracer);
                    return Err(CliError::failed(format!(
                        "cannot wait for the command: {e}"
                    )));
                }
            }
            if cancel.load(Ordering::Relaxed) {
                // Stop tracing at once; then give the command (which got the terminal's
                // Ctrl-C too) a moment to exit by itself. It is never killed.
                let stopped = tracer.stop();
                let deadline = Instant::now() + GRACE;
                let mut status = None;
                while Instant::now() < deadline {
                    if let Ok(Some(s)) = child.try_wait() {
                        status = Some(s);
                        break;
                    }
                    std::thread::sleep(POLL);
                }
                break (Outcome::Interrupted(status, child.id()), stopped);
            }
            std::thread::sleep(POLL);
        }
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
    let status = match &outcome {
        Outcome::Exited(s) | Outcome::Interrupted(Some(s), _) => Some(*s),
        _ => None,
    };
    crate::output::emit(|out| match args.format {
        TraceFormat::Summary => write_summary(&trace, &command, status, out),
        TraceFormat::Blkparse => trace.write_blkparse(out),
        TraceFormat::Json => write_json(&trace, &command, &outcome, out),
    })?;
    if args.format != TraceFormat::Summary && trace.lost.total > 0 {
        say!(
            "iolab: warning: {} events lost; raise --buffer-kb (now {})",
            thousands(trace.lost.total),
            args.buffer_kb
        );
    }
    if let Some(p) = &args.out {
        if args.format == TraceFormat::Summary {
            say!(
                "{} events written to {}",
                thousands(
                    trace.events.queue
                        + trace.events.insert
                        + trace.events.issue
                        + trace.events.complete
                        + trace.events.requeue
                ),
                p.display()
            );
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

fn describe_status(s: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (s.code(), s.signal()) {
        (Some(c), _) => format!("exited with status {c}"),
        (None, Some(sig)) => format!("was killed by signal {sig}"),
        _ => format!("ended: {s}"),
    }
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / 1048576.0
}

fn pct(x: Option<f64>) -> String {
    x.map_or_else(|| "-".into(), |f| format!("{:.1}%", f * 100.0))
}

fn lat_cols(l: &Option<LatencySummary>) -> String {
    match l {
        Some(l) => format!(
            "{:>10} {:>10} {:>10}",
            format_ns(l.p50_ns as f64),
            format_ns(l.p99_ns as f64),
            format_ns(l.max_ns as f64)
        ),
        None => String::new(),
    }
}

fn dir_row(out: &mut dyn Write, name: &str, d: &DirStats) -> io::Result<()> {
    let avg = d
        .bytes
        .checked_div(d.requests)
        .map_or_else(|| "-".into(), format_bytes);
    let row = format!(
        "  {name:<12} {:>10} {:>11.2} {:>10}  {}",
        thousands(d.requests),
        mib(d.bytes),
        avg,
        lat_cols(&d.latency)
    );
    writeln!(out, "{}", row.trim_end())
}

fn op_row(out: &mut dyn Write, name: &str, o: &OpStats, bytes: bool) -> io::Result<()> {
    let b = if bytes {
        format!("{:>11.2}", mib(o.bytes))
    } else {
        format!("{:>11}", "")
    };
    let row = format!(
        "  {name:<12} {:>10} {b} {:>10}  {}",
        thousands(o.requests),
        "",
        lat_cols(&o.latency)
    );
    writeln!(out, "{}", row.trim_end())
}

fn write_summary(
    t: &BlockTrace,
    command: &[String],
    status: Option<ExitStatus>,
    out: &mut dyn Write,
) -> io::Result<()> {
    let d = &t.device;
    let what = match &d.partition {
        Some(p) => format!(
            "{} ({}, sectors {}..{} of {} {})",
            d.name,
            d.dev,
            p.start,
            p.start + p.sectors,
            d.disk,
            d.disk_dev
        ),
        None => format!("{} ({})", d.name, d.dev),
    };
    writeln!(
        out,
        "iolab trace: {what}, {:.3} s",
        t.duration_ns as f64 / 1e9
    )?;
    if !command.is_empty() {
        let s = status.map_or_else(|| "still running".to_owned(), describe_status);
        writeln!(out, "  command      {} ({s})", command.join(" "))?;
    }
    writeln!(
        out,
        "  {:<12} {:>10} {:>11} {:>10}  {:>10} {:>10} {:>10}",
        "requests", "count", "MiB", "avg size", "p50", "p99", "max"
    )?;
    dir_row(out, "reads", &t.reads)?;
    dir_row(out, "writes", &t.writes)?;
    op_row(out, "flushes", &t.flushes, false)?;
    op_row(out, "FUA writes", &t.fua, true)?;
    op_row(out, "discards", &t.discards, true)?;
    if t.other.requests > 0 {
        op_row(out, "other", &t.other, true)?;
    }
    writeln!(
        out,
        "  flags        sync {}, meta {}, read-ahead {}",
        thousands(t.sync),
        thousands(t.meta),
        thousands(t.readahead)
    )?;
    if let Some(b) = &t.bios {
        writeln!(
            out,
            "  bios         {} queued ({:.2} MiB read, {:.2} MiB written), {} with preflush, {} with FUA",
            thousands(b.bios),
            mib(b.read_bytes),
            mib(b.write_bytes),
            thousands(b.preflush),
            thousands(b.fua)
        )?;
    }
    writeln!(
        out,
        "  sequential   reads {}, writes {}",
        pct(t.reads.sequential_fraction()),
        pct(t.writes.sequential_fraction())
    )?;
    if let Some(l) = &t.latency {
        writeln!(
            out,
            "  latency      issue→complete, reads+writes: mean {}  p50 {}  p90 {}  p99 {}  max {}",
            format_ns(l.mean_ns),
            format_ns(l.p50_ns as f64),
            format_ns(l.p90_ns as f64),
            format_ns(l.p99_ns as f64),
            format_ns(l.max_ns as f64)
        )?;
    }
    if let Some(q) = &t.queue_time {
        writeln!(
            out,
            "  queue time   insert→issue, {} requests: p50 {}  p99 {}  max {}",
            thousands(q.count),
            format_ns(q.p50_ns as f64),
            format_ns(q.p99_ns as f64),
            format_ns(q.max_ns as f64)
        )?;
    }
    let busiest = t
        .intervals
        .iter()
        .map(|i| i.mean_inflight)
        .fold(0.0, f64::max);
    writeln!(
        out,
        "  in flight    max {}, busiest interval mean {busiest:.2}",
        t.max_inflight
    )?;
    if t.sizes.total() > 0 {
        writeln!(out, "  request sizes (reads + writes)")?;
        let max = t.sizes.buckets.iter().map(|b| b.count).max().unwrap_or(1);
        for b in &t.sizes.buckets {
            let range = if b.low == 0 {
                "0".to_owned()
            } else {
                format!("{} .. {}", format_bytes(b.low), format_bytes(b.low * 2))
            };
            let bar = "#".repeat(((b.count * 40).div_ceil(max)) as usize);
            writeln!(out, "    {range:>20} {:>10}  {bar}", thousands(b.count))?;
        }
    }
    if t.intervals.len() > 1 {
        let secs = t.interval_ns as f64 / 1e9;
        let peak = |f: fn(&iolab_blocktrace::IntervalStats) -> u64| {
            t.intervals.iter().map(f).max().unwrap_or(0) as f64 / secs / 1048576.0
        };
        writeln!(
            out,
            "  throughput   peak {:.1} MiB/s read, {:.1} MiB/s write ({} intervals of {})",
            peak(|i| i.read_bytes),
            peak(|i| i.write_bytes),
            t.intervals.len(),
            format_ns(t.interval_ns as f64)
        )?;
    }
    let lost = if t.lost.total > 0 {
        " (raise --buffer-kb: the numbers above miss these)"
    } else {
        ""
    };
    writeln!(out, "  lost events  {}{lost}", thousands(t.lost.total))?;
    let mut notes = Vec::new();
    if t.unmatched_completions > 0 {
        notes.push(format!(
            "{} completions without their issue",
            thousands(t.unmatched_completions)
        ));
    }
    if t.in_flight_at_end > 0 {
        notes.push(format!(
            "{} requests still in flight at the end",
            thousands(t.in_flight_at_end)
        ));
    }
    if t.errors > 0 {
        notes.push(format!("{} requests failed", thousands(t.errors)));
    }
    if t.events.unparsed > 0 {
        notes.push(format!(
            "{} trace lines not understood",
            thousands(t.events.unparsed)
        ));
    }
    if !notes.is_empty() {
        writeln!(out, "  note         {}", notes.join("; "))?;
    }
    Ok(())
}

fn write_json(
    t: &BlockTrace,
    command: &[String],
    outcome: &Outcome,
    out: &mut dyn Write,
) -> io::Result<()> {
    let (status, signal, interrupted) = match outcome {
        Outcome::UntilInterrupt => (None, None, true),
        Outcome::Exited(s) => (s.code(), exit_signal(*s), false),
        Outcome::Interrupted(Some(s), _) => (s.code(), exit_signal(*s), true),
        Outcome::Interrupted(None, _) => (None, None, true),
    };
    let doc = json!({
        "schema": SCHEMA,
        "iolab_version": env!("CARGO_PKG_VERSION"),
        "command": command,
        "exit_status": status,
        "exit_signal": signal,
        "interrupted": interrupted,
        "trace": t,
    });
    serde_json::to_writer_pretty(&mut *out, &doc)?;
    writeln!(out)
}

fn exit_signal(s: ExitStatus) -> Option<i32> {
    use std::os::unix::process::ExitStatusExt;
    s.signal()
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use iolab_blocktrace::Summarizer;
    use iolab_sys::DevT;

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
        assert_eq!(w.args.dev, "loop0");
        assert_eq!(w.args.format, TraceFormat::Json);
        assert_eq!(w.args.command, ["dd", "if=/dev/zero", "-x"]);
        assert_eq!(w.args.interval, Duration::from_secs(1));
        let w = Wrapper::try_parse_from(["iolab", "--dev", "vda"]).unwrap();
        assert!(w.args.command.is_empty());
        assert!(Wrapper::try_parse_from(["iolab", "--dev", "vda", "dd"]).is_err());
        assert!(Wrapper::try_parse_from(["iolab", "--", "dd"]).is_err());
        assert!(Wrapper::try_parse_from(["iolab", "--dev", "x", "--interval", "0s"]).is_err());
    }

    fn sample() -> BlockTrace {
        let mut s = Summarizer::new(
            TraceDevice::whole("loop1", DevT::new(7, 1)),
            1_000_000_000,
            1_000_000_000,
            false,
        );
        for l in [
            "dd-1 [000] ..... 1.000100: block_rq_issue: 7,1 WS 1048576 () 0 + 2048 be,0,4 [dd]",
            "dd-1 [000] ..... 1.000600: block_rq_complete: 7,1 WS () 0 + 2048 be,0,4 [0]",
            "dd-1 [000] ..... 1.000700: block_rq_issue: 7,1 FF 0 () 0 + 0 none,0,0 [kworker]",
            "dd-1 [000] ..... 1.000900: block_rq_complete: 7,1 FF () 18446744073709551615 + 0 none,0,0 [0]",
            "dd-1 [000] ..... 1.001000: block_rq_complete: 7,1 R () 8 + 8 be,0,4 [0]",
        ] {
            s.push_line(l);
        }
        s.finish(1_002_000_000, "mono", Vec::new(), Vec::new())
    }

    #[test]
    fn summary_text() {
        let mut out = Vec::new();
        write_summary(&sample(), &["dd".into()], None, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.starts_with("iolab trace: loop1 (7:1), 0.002 s\n"),
            "{text}"
        );
        assert!(
            text.contains("  command      dd (still running)\n"),
            "{text}"
        );
        let writes = text.lines().find(|l| l.starts_with("  writes")).unwrap();
        assert!(
            writes.contains(" 1.00 ") && writes.contains("1 MiB"),
            "{writes}"
        );
        let flushes = text.lines().find(|l| l.starts_with("  flushes")).unwrap();
        assert!(flushes.contains(" 1 "), "{flushes}");
        assert!(text.contains("1 MiB .. 2 MiB"), "{text}");
        assert!(text.contains("completions without their issue"), "{text}");
        assert!(!text.lines().any(|l| l.ends_with(' ')), "{text}");
    }

    #[test]
    fn json_document() {
        let mut out = Vec::new();
        write_json(&sample(), &[], &Outcome::UntilInterrupt, &mut out).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["schema"], SCHEMA);
        assert_eq!(v["interrupted"], true);
        assert_eq!(v["trace"]["writes"]["bytes"], 1 << 20);
        assert_eq!(v["trace"]["flushes"]["requests"], 1);
        assert!(v["trace"].get("records").is_none());
    }
}
