//! `iolab trace`: a block trace of one device while a command ran — a readable summary
//! (`summary.rs`), every event blkparse-style, or the summary as JSON; with `--syscalls`,
//! the command's system calls per kind (`syscalls.rs`).

mod summary;
mod syscalls;

pub use summary::Summary;
pub use syscalls::{SyscallReport, SyscallTable};

use std::io::{self, Write};
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;

use iolab_blocktrace::BlockTrace;
use serde::Serialize;

use super::json::{Document, Kind};
use super::Formatter;

/// The command traced and how it ended: the first fields of both reports.
#[derive(Debug, Serialize)]
pub struct Ran {
    /// The traced command (empty: traced until Ctrl-C).
    pub command: Vec<String>,
    pub exit_status: Option<i32>,
    pub exit_signal: Option<i32>,
    /// Ctrl-C ended the trace.
    pub interrupted: bool,
    /// How the command ended, if it did.
    #[serde(skip)]
    pub status: Option<ExitStatus>,
}

impl Ran {
    /// `status` is how the command ended (`None`: no command, or still running).
    pub fn new(command: Vec<String>, status: Option<ExitStatus>, interrupted: bool) -> Ran {
        Ran {
            command,
            exit_status: status.and_then(|s| s.code()),
            exit_signal: status.and_then(|s| s.signal()),
            interrupted,
            status,
        }
    }
}

/// The summaries' `command` line, if there was a command.
fn command_line(
    command: &[String],
    status: Option<ExitStatus>,
    out: &mut dyn Write,
) -> io::Result<()> {
    if !command.is_empty() {
        let s = status.map_or_else(|| "still running".to_owned(), describe_status);
        writeln!(out, "  command      {} ({s})", command.join(" "))?;
    }
    Ok(())
}

#[derive(Debug, Serialize)]
pub struct TraceReport {
    #[serde(flatten)]
    pub ran: Ran,
    pub trace: BlockTrace,
}

impl TraceReport {
    /// `status` is how the command ended (`None`: no command, or still running).
    pub fn new(
        trace: BlockTrace,
        command: Vec<String>,
        status: Option<ExitStatus>,
        interrupted: bool,
    ) -> TraceReport {
        TraceReport {
            ran: Ran::new(command, status, interrupted),
            trace,
        }
    }
}

impl Document for TraceReport {
    const KIND: Kind = Kind::Trace;
}

/// Every event, one line each, like blkparse.
pub struct Blkparse;

impl Formatter<TraceReport> for Blkparse {
    fn write(&self, r: &TraceReport, out: &mut dyn Write) -> io::Result<()> {
        r.trace.write_blkparse(out)
    }
}

/// "exited with status 1", "was killed by signal 9".
pub fn describe_status(s: ExitStatus) -> String {
    match (s.code(), s.signal()) {
        (Some(c), _) => format!("exited with status {c}"),
        (None, Some(sig)) => format!("was killed by signal {sig}"),
        _ => format!("ended: {s}"),
    }
}

#[cfg(test)]
mod tests {
    use super::summary::tests::sample;
    use super::*;
    use crate::output::json::Json;

    #[test]
    fn summary_and_json_of_one_trace() {
        let r = TraceReport::new(sample(), vec!["dd".into()], None, false);
        let mut out = Vec::new();
        Summary.write(&r, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.contains("  command      dd (still running)\n"),
            "{text}"
        );

        let r = TraceReport::new(sample(), Vec::new(), None, true);
        let mut out = Vec::new();
        Json.write(&r, &mut out).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["schema"], "iolab.trace/1");
        assert_eq!(v["interrupted"], true);
        assert_eq!(v["exit_status"], serde_json::Value::Null);
        assert_eq!(v["trace"]["writes"]["bytes"], 1 << 20);
        assert_eq!(v["trace"]["flushes"]["requests"], 1);
        assert!(v["trace"].get("records").is_none());
        assert!(v.get("status").is_none());
    }
}
