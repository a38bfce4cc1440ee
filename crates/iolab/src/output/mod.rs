//! Every command's output: one module per kind of result, one file per format behind the
//! one-method [`Formatter`] trait (hyperfine's `export/`), and the JSON stamp in [`json`].
//! Results go to stdout through [`emit`] only (pipe-safe); messages go to stderr through
//! `say!`.
//!
//! Adding a format: a file with a unit struct implementing `Formatter<TheResult>`, and a line
//! where the command picks it. JSON needs no file: implement [`json::Document`] for the result
//! (one line) and use [`json::Json`].

pub mod cachesim;
pub mod check;
pub mod compare;
pub mod context;
pub mod export;
pub mod import;
pub mod json;
pub mod list;
pub(crate) mod micro;
pub mod report;
pub mod show;
pub mod trace;

use std::io::{self, Write};

use iolab_micro::MicroResult;
use iolab_monitor::procstat::CpuPercent;

use crate::cli::Format;

pub use iolab_kind::output::{Formatter, SingleReport};

/// Numbers every format derives the same way.
pub struct Derived {
    pub elapsed_s: f64,
    pub bytes_per_s: f64,
    pub iops: f64,
    /// Worker CPU time over elapsed time, in percent of one core.
    pub usr_pct: f64,
    pub sys_pct: f64,
    pub system: Option<CpuPercent>,
}

/// `iolab micro`'s result.
pub type MicroReport = SingleReport<MicroResult>;

/// The numbers a micro test's formats derive the same way.
pub fn derived(report: &MicroReport) -> Derived {
    {
        let r = &report.result;
        let elapsed_s = r.elapsed_ns as f64 / 1e9;
        let per_s = |x: f64| if elapsed_s > 0.0 { x / elapsed_s } else { 0.0 };
        Derived {
            elapsed_s,
            bytes_per_s: per_s(r.bytes as f64),
            iops: per_s(r.ops as f64),
            usr_pct: per_s(r.usage.user_ns as f64 / 1e9) * 100.0,
            sys_pct: per_s(r.usage.sys_ns as f64 / 1e9) * 100.0,
            system: report.system_cpu.map(|(a, b)| b.percent_since(&a)),
        }
    }
}

pub use iolab_kind::output::{durations, latency_line, write_system_and_switches};

/// Writes `result` to stdout in `format` (see [`emit`]).
pub fn print<R: ?Sized>(
    format: &dyn Formatter<R>,
    result: &R,
) -> Result<(), crate::error::CliError> {
    emit(|out| format.write(result, out))
}

/// Writes `result` to stdout as JSON when `json` (`--json`), else in `human`.
pub fn print_json_or<R: json::Document>(
    json: bool,
    human: &dyn Formatter<R>,
    result: &R,
) -> Result<(), crate::error::CliError> {
    if json {
        print(&json::Json, result)
    } else {
        print(human, result)
    }
}

/// Writes results to stdout through a buffer. A closed pipe (`| head`) means the reader has
/// what it wanted: not an error.
pub fn emit(
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> Result<(), crate::error::CliError> {
    let mut out = io::BufWriter::new(io::stdout().lock());
    match write(&mut out).and_then(|()| out.flush()) {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => Err(crate::error::CliError::failed(
            format!("cannot write the results: {e}"),
        )),
        _ => Ok(()),
    }
}

pub fn write_micro(format: Format, report: &MicroReport, out: &mut dyn Write) -> io::Result<()> {
    let f: &dyn Formatter<MicroReport> = match format {
        Format::Human => &micro::human::Human,
        Format::Json => &micro::json::Json,
        Format::Mobibench => &micro::mobibench::Mobibench,
    };
    f.write(report, out)
}
