//! `iolab bonnie`: the bonnie kind's one-run plan, run by the experiment runner, printed in
//! the chosen format.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use iolab_bonnie::BonnieResult;
use iolab_experiment::run::EngineEvent;

use crate::cli::{BonnieArgs, BonnieFormat};
use crate::cmd::single::{self, Storage};
use crate::error::CliError;
use crate::fmt::thousands;
use crate::output::bonnie::BonnieReport;
use crate::output::{self, Host};
use crate::term::StatusLine;

pub fn run(args: BonnieArgs, cancel: Arc<AtomicBool>) -> Result<(), CliError> {
    let plan =
        iolab_experiment::kind::bonnie::from_command_line(&args.options.0, &args.dir, args.seed)
            .map_err(crate::cmd::usage)?;
    let format = if args.json {
        BonnieFormat::Json
    } else {
        args.format
    };
    let run = single::run_viewed::<BonnieResult>(
        &plan,
        Storage::from_args(args.no_db, &args.db.db)?,
        args.monitor.options(),
        &cancel,
        Display,
        "interrupted; the files of the run were removed",
    )?;
    let report = BonnieReport {
        result: run.output,
        host: Host::probe(),
        findings: run.end.findings.clone(),
        system: single::system_summary(&run.end.metrics),
    };
    output::emit(|out| output::bonnie::write(format, &report, out))?;
    if format == BonnieFormat::Human {
        crate::cmd::watch::print_findings(&report.findings, "");
        if let Some(id) = run.stored {
            say!("stored as experiment {} in {}", id.0, args.db.db.display());
        }
    }
    Ok(())
}

/// The operations' progress on a terminal.
struct Display;

impl single::EngineView for Display {
    fn engine(&mut self, line: &mut StatusLine, event: &EngineEvent<'_>) {
        match *event {
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
                    "running: {}% ({} of {} operations), {:.0} s",
                    done * 100 / planned,
                    thousands(done),
                    thousands(planned),
                    elapsed.as_secs_f64()
                ));
            }
            EngineEvent::TimedEnd => line.clear(),
            _ => {}
        }
    }
}
