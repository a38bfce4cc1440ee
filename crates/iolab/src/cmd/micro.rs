//! `iolab micro`: the micro kind's one-run plan, run by the experiment runner, printed in
//! the chosen format.

use std::io::IsTerminal;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use iolab_engine::MicroResult;
use iolab_experiment::run::EngineEvent;

use crate::cli::{Format, MicroArgs};
use crate::cmd::single::{self, Storage};
use crate::error::CliError;
use crate::fmt::thousands;
use crate::output::{self, Host, SingleReport};
use crate::term::StatusLine;

pub fn run(args: MicroArgs, cancel: Arc<AtomicBool>) -> Result<(), CliError> {
    let plan =
        iolab_experiment::kind::micro::from_command_line(&args.options.0, &args.dir, args.seed)
            .map_err(crate::cmd::usage)?;
    let format = if args.json { Format::Json } else { args.format };
    // A database that cannot take the result is refused before anything runs (exit 2), not
    // after the run when its result would be lost.
    let storage = if args.no_db {
        Storage::Nowhere
    } else {
        Storage::Db(crate::cmd::db::open(&args.db.db)?)
    };
    let mut display = single::Shown {
        status: StatusLine::new(std::io::stderr().is_terminal()),
        view: Display { unit: "record" },
    };
    let started_at = SystemTime::now();
    let run = single::run::<MicroResult>(
        &plan,
        storage,
        args.monitor.options(),
        &cancel,
        &mut display,
        "interrupted; files created for this run were removed",
    );
    display.status.clear();
    let run = run?;
    let report = SingleReport {
        result: run.output,
        system_cpu: run.system_cpu,
        host: Host::probe(),
        started_at,
        findings: run.end.findings.clone(),
        system: single::system_summary(&run.end.metrics),
    };
    output::emit(|out| output::write_micro(format, &report, out))?;
    if format == Format::Human {
        crate::cmd::watch::print_findings(&report.findings, "");
        if let Some(id) = run.stored {
            say!("stored as experiment {} in {}", id.0, args.db.db.display());
        }
    }
    if args.remove_files {
        for f in &report.result.files {
            std::fs::remove_file(f)
                .map_err(|e| CliError::failed(format!("cannot remove {}: {e}", f.display())))?;
        }
    }
    Ok(())
}

/// Fill progress and the progress of the operations (`unit`s: records, transactions) on a
/// terminal; monitoring notes.
pub struct Display {
    pub unit: &'static str,
}

impl single::EngineView for Display {
    fn engine(&mut self, line: &mut StatusLine, event: &EngineEvent<'_>) {
        match *event {
            EngineEvent::Filling { done, total } => {
                if !line.enabled() || total < 64 << 20 {
                    return;
                }
                // One update per 64 MiB keeps the terminal quiet and the cost invisible.
                if done.is_multiple_of(64 << 20) || done == total {
                    line.show(format_args!(
                        "preparing files: {} of {} MiB ({}%)",
                        done >> 20,
                        total >> 20,
                        done * 100 / total
                    ));
                }
            }
            EngineEvent::TimedStart => line.keep(),
            EngineEvent::Records {
                done,
                planned,
                elapsed,
            } => {
                // Short runs finish before anyone could read a progress line.
                if !line.enabled() || elapsed < Duration::from_secs(1) || planned == 0 {
                    return;
                }
                let rate = done as f64 / elapsed.as_secs_f64();
                let left = if rate > 0.0 {
                    format!(
                        ", ~{:.0} s left",
                        (planned - done.min(planned)) as f64 / rate
                    )
                } else {
                    String::new()
                };
                line.show(format_args!(
                    "running: {}% ({} of {} {}{}), {} {}s/s{left}",
                    done * 100 / planned,
                    thousands(done),
                    thousands(planned),
                    self.unit,
                    if planned == 1 { "" } else { "s" },
                    thousands(rate as u64),
                    self.unit
                ));
            }
            EngineEvent::TimedEnd => line.clear(),
            _ => {}
        }
    }
}
