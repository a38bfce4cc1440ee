//! `iolab trace --syscalls -- CMD`: the command's system calls per kind (its whole process
//! tree), counted in the kernel by BPF programs (crate iolab-systrace), as a table or JSON
//! (`iolab.syscalls/1`). Exit codes as `iolab trace`'s (cmd/trace.rs).
//!
//! The thread that spawns the command is followed, not counted: the command is counted from
//! its fork on (a few calls of the fork's child before exec: signal dispositions, execve),
//! and iolab's own calls are not.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use iolab_systrace::{gettid, SysTraceError, SyscallTracer};

use crate::cmd::trace::{
    command_text, format_of, record, require_root, tracer_error, TraceArgs, TraceFormat,
};
use crate::error::CliError;
use crate::output::json::Json;
use crate::output::trace::{Ran, SyscallReport, SyscallTable};
use crate::output::{self, Formatter};

fn systrace_error(e: SysTraceError, what: &str) -> CliError {
    tracer_error(format!("{what}: {e}"), e.is_bad_input(), e.hint())
}

pub fn run(args: &TraceArgs, cancel: Arc<AtomicBool>) -> Result<(), CliError> {
    let format = format_of(args);
    if format == TraceFormat::Blkparse {
        return Err(
            CliError::usage("--syscalls prints a table or JSON, not blkparse lines")
                .with_hint("drop --format blkparse, or use --json"),
        );
    }
    require_root("bpf")?;
    let begin = || {
        let t = SyscallTracer::start()?;
        // This thread spawns the command right after: it and its children are counted.
        t.follow_task(gettid())?;
        Ok(t)
    };
    let (outcome, counted) = record(
        &args.command,
        cancel,
        begin,
        SyscallTracer::stop,
        |e| systrace_error(e, "cannot count system calls"),
        || {},
    )?;
    let syscalls = counted.map_err(|e| systrace_error(e, "counting system calls failed"))?;
    let command = command_text(&args.command);
    let (status, interrupted) = outcome.status();
    let report = SyscallReport {
        ran: Ran::new(command.clone(), status, interrupted),
        syscalls,
    };
    let formatter: &dyn Formatter<SyscallReport> = if format == TraceFormat::Json {
        &Json
    } else {
        &SyscallTable
    };
    output::print(formatter, &report)?;
    outcome.exit(&command)
}
