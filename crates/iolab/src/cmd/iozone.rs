//! `iolab iozone`: the iozone kind's one-run plan (or, with `--auto`, one configuration per
//! cell of the matrix), run by the experiment runner, printed in the chosen format.

use std::io::IsTerminal;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use iolab_experiment::run::EngineEvent;
use iolab_iozone::matrix::Bounds;
use iolab_iozone::IozoneResult;

use crate::cli::{IozoneArgs, IozoneFormat};
use crate::cmd::single::{self, Storage};
use crate::error::CliError;
use crate::fmt::thousands;
use crate::output::iozone::{write_iozone, IozoneReport};
use crate::output::{self, Host};
use crate::term::StatusLine;

pub fn run(args: IozoneArgs, cancel: Arc<AtomicBool>) -> Result<(), CliError> {
    let values = &args.options.0;
    let mut bounds = Bounds {
        all_records: args.auto_all_records,
        ..Bounds::default()
    };
    if let Some(max) = args.auto_max_size {
        bounds.max_size = max;
    }
    let matrix_records = if args.auto {
        iolab_iozone::matrix::records(&bounds)
    } else {
        Vec::new()
    };
    let plan = if args.auto {
        iolab_experiment::kind::iozone::from_command_line_auto(
            values, &bounds, &args.dir, args.seed,
        )
    } else {
        iolab_experiment::kind::iozone::from_command_line(values, &args.dir, args.seed)
    }
    .map_err(crate::cmd::usage)?;
    let format = if args.json {
        IozoneFormat::Json
    } else {
        args.format
    };
    let storage = Storage::from_args(args.no_db, &args.db.db)?;
    let mut display = single::Shown {
        status: StatusLine::new(std::io::stderr().is_terminal()),
        view: Display,
    };
    let started_at = SystemTime::now();
    let runs = single::run_each::<IozoneResult>(
        &plan,
        storage,
        args.monitor.options(),
        &cancel,
        &mut display,
        "interrupted; the files of the run were removed",
    );
    display.status.clear();
    let runs = runs?;
    let stored = runs.first().and_then(|r| r.stored);
    let report = IozoneReport {
        findings: runs.iter().map(|r| r.end.findings.clone()).collect(),
        system: runs
            .iter()
            .map(|r| single::system_summary(&r.end.metrics))
            .collect(),
        results: runs.into_iter().map(|r| r.output).collect(),
        matrix_records,
        host: Host::probe(),
        started_at,
    };
    output::emit(|out| write_iozone(format, &report, out))?;
    if format == IozoneFormat::Human {
        for f in &report.findings {
            crate::cmd::watch::print_findings(f, "");
        }
        if let Some(id) = stored {
            say!("stored as experiment {} in {}", id.0, args.db.db.display());
        }
    }
    Ok(())
}

/// Fill progress and the records' progress on a terminal.
struct Display;

impl single::EngineView for Display {
    fn engine(&mut self, line: &mut StatusLine, event: &EngineEvent<'_>) {
        match *event {
            EngineEvent::Filling { done, total }
                if line.enabled() && total >= 64 << 20 && done.is_multiple_of(64 << 20) =>
            {
                line.show(format_args!(
                    "writing the files: {} of {} MiB",
                    done >> 20,
                    total >> 20
                ));
            }
            EngineEvent::TimedStart => line.keep(),
            EngineEvent::Records {
                done,
                planned,
                elapsed,
            } => {
                if !line.enabled() || elapsed < Duration::from_secs(1) || planned == 0 {
                    return;
                }
                line.show(format_args!(
                    "running: {}% ({} of {} records)",
                    done * 100 / planned,
                    thousands(done),
                    thousands(planned)
                ));
            }
            EngineEvent::TimedEnd => line.clear(),
            _ => {}
        }
    }
}
