//! `iolab run FILE.f|NAME`: the WML kind's one-run plan (parse → front end → plan), run by
//! the experiment runner, printed in the chosen format.

use std::io::IsTerminal;
use std::os::unix::process::ExitStatusExt;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use iolab_engine::workload::WorkloadResult;
use iolab_experiment::kind::wml::{self, WmlWorkload};
use iolab_experiment::run::EngineEvent;

use crate::cli::{PickArg, RunArgs};
use crate::cmd::single::{self, Storage};
use crate::error::CliError;
use crate::fmt::thousands;
use crate::output::run::{write_run, RunFormat, RunReport};
use crate::output::Host;
use crate::term::StatusLine;

pub fn run(args: RunArgs, cancel: Arc<AtomicBool>) -> Result<(), CliError> {
    if args.resume {
        return Err(
            CliError::usage("--resume continues an experiment (.toml file)")
                .with_hint("a workload run has nothing to resume; run it again"),
        );
    }
    let seed = args.seed.unwrap_or(iolab_experiment::DEFAULT_SEED);
    let plan = wml::from_command_line(wml::CommandLine {
        file: args.file.clone(),
        settings: wml::Settings {
            sets: args.sets.clone(),
            duration: args.time,
            size_scale: args.size_scale,
            pick_random: args.pick == PickArg::Random,
            run_system: !args.no_system,
            engine: args.engine,
            iodepth: args.iodepth,
        },
        dir: args.dir.clone(),
        seed,
    })
    .map_err(crate::cmd::usage)?;
    let workload = plan.configs[0]
        .workload
        .as_any()
        .downcast_ref::<WmlWorkload>()
        .ok_or_else(|| CliError::failed("internal error: not a WML plan"))?;
    let storage = Storage::from_args(args.no_db, &args.db.db)?;
    let warnings = workload.warnings().to_vec();
    if !args.quiet {
        for w in &warnings {
            say!("{w}");
        }
    }
    let format = if args.json {
        RunFormat::Json
    } else {
        args.format
    };
    let mut display = single::Shown {
        status: StatusLine::new(std::io::stderr().is_terminal() && !args.quiet),
        view: Display {
            quiet: args.quiet,
            workload,
            timed: false,
            systems: 0,
        },
    };
    let started_at = SystemTime::now();
    let run = single::run::<WorkloadResult>(
        &plan,
        storage,
        args.monitor.options(),
        &cancel,
        &mut display,
        "interrupted; the files created so far are left in place",
    );
    display.status.clear();
    let run = run.map_err(|e| {
        if e.exit_code() == crate::error::EXIT_INTERRUPTED && !display.view.timed {
            // Population removes what it created when it is interrupted.
            CliError::interrupted("interrupted while populating; the files it created were removed")
        } else {
            e
        }
    })?;
    let report = RunReport {
        source: workload.parsed.file.clone(),
        seed,
        result: run.output,
        system_cpu: run.system_cpu,
        host: Host::probe(),
        started_at,
        warnings,
        lathist: workload.checked.workload.lathist,
        findings: run.end.findings.clone(),
        system: single::system_summary(&run.end.metrics),
    };
    crate::output::emit(|out| write_run(format, &report, out))?;
    if !args.quiet && format == RunFormat::Human {
        crate::cmd::watch::print_findings(&report.findings, "");
        if let Some(id) = run.stored {
            say!("stored as experiment {} in {}", id.0, args.db.db.display());
        }
    }
    Ok(())
}

/// Population, `echo` and `system` lines, the progress line and `psrun` reports.
struct Display<'a> {
    quiet: bool,
    workload: &'a WmlWorkload,
    /// The timed region has started (population is over).
    timed: bool,
    /// `system` commands run or skipped so far.
    systems: usize,
}

impl Display<'_> {
    /// Where the latest `system` command is written.
    fn system_at(&self) -> String {
        self.systems
            .checked_sub(1)
            .and_then(|i| self.workload.system_location(i))
            .unwrap_or_default()
    }
}

impl single::EngineView for Display<'_> {
    fn engine(&mut self, line: &mut StatusLine, event: &EngineEvent<'_>) {
        match *event {
            EngineEvent::Populating { fileset } => {
                line.show(format_args!("populating fileset {fileset}…"))
            }
            EngineEvent::Populated { .. } => line.clear(),
            EngineEvent::Echo(text) if !self.quiet => {
                line.clear();
                say!("{text}");
            }
            // Counted quiet or not: the count says which `system` of the file a failure is.
            EngineEvent::System(command) => {
                self.systems += 1;
                if !self.quiet {
                    line.clear();
                    say!("running: {command}");
                }
            }
            EngineEvent::SystemSkipped(command) => {
                self.systems += 1;
                if !self.quiet {
                    line.clear();
                    let at = self.system_at();
                    say!("{at}: warning: `system \"{command}\"` not run (--no-system)");
                }
            }
            EngineEvent::SystemFailed { command, status } if !self.quiet => {
                line.clear();
                let at = self.system_at();
                let how = match (status.code(), status.signal()) {
                    (Some(code), _) => format!("exited with status {code}"),
                    (None, Some(sig)) => format!("was killed by signal {sig}"),
                    _ => format!("failed ({status})"),
                };
                say!("{at}: warning: `system \"{command}\"` {how}");
            }
            EngineEvent::Operations {
                ops,
                elapsed,
                planned,
            } => {
                if elapsed < Duration::from_secs(1) {
                    return;
                }
                line.show(format_args!(
                    "running: {:.0} of {:.0} s, {} data ops ({} /s)",
                    elapsed.as_secs_f64(),
                    planned.as_secs_f64(),
                    thousands(ops),
                    thousands((ops as f64 / elapsed.as_secs_f64()) as u64)
                ));
            }
            EngineEvent::Report { ops, elapsed, .. } if !self.quiet => {
                line.clear();
                say!(
                    "{:.3}: {} data ops, {:.1} ops/s",
                    elapsed.as_secs_f64(),
                    thousands(ops),
                    ops as f64 / elapsed.as_secs_f64()
                );
            }
            EngineEvent::TimedStart => self.timed = true,
            EngineEvent::TimedEnd => line.clear(),
            _ => {}
        }
    }
}
