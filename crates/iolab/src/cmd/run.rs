//! `iolab run FILE.f|NAME`: the WML kind's one-run plan (parse → front end → plan), run by
//! the experiment runner, printed in the chosen format.

use std::os::unix::process::ExitStatusExt;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use iolab_experiment::run::Event;
use iolab_wml::kind::{self as wml, WmlWorkload};

use crate::cli::{PickArg, RunArgs};
use crate::cmd::single::{self, Storage};
use crate::error::CliError;
use crate::fmt::thousands;
use crate::output::run::{write_run, RunFormat, RunReport};
use iolab_kind::cli::{Status, View};

pub fn run(args: RunArgs, cancel: Arc<AtomicBool>) -> Result<(), CliError> {
    if args.resume {
        return Err(
            CliError::usage("--resume continues an experiment (.toml file)")
                .with_hint("a workload run has nothing to resume; run it again"),
        );
    }
    let seed = args.seed.unwrap_or(iolab_experiment::DEFAULT_SEED);
    let (runs, workload) = wml::from_command_line(wml::CommandLine {
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
    // A database that cannot take the result is refused before anything is said or run.
    drop(Storage::from_args(args.no_db, &args.db.db)?);
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
    let mut display = Display {
        quiet: args.quiet,
        workload: &workload,
        timed: false,
        systems: 0,
    };
    let started_at = SystemTime::now();
    let run_args = iolab_kind::cli::RunArgs {
        format: iolab_kind::cli::HUMAN.name,
        db: args.db.db.clone(),
        no_db: args.no_db,
        monitor: !args.monitor.no_monitor,
        monitor_interval: args.monitor.monitor_interval,
        trace_blocks: args.monitor.trace_blocks,
    };
    let run = iolab_kind::cli::run_one(
        &mut single::CliHost { cancel },
        runs,
        &run_args,
        &mut display,
        "interrupted; the files created so far are left in place",
    );
    let run = run.map_err(|e| {
        if e.exit_code() == crate::error::EXIT_INTERRUPTED && !display.timed {
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
        system_cpu: run.end.system_cpu,
        host: crate::cmd::single::machine().clone(),
        started_at,
        warnings,
        lathist: workload.checked.workload.lathist,
        findings: run.end.findings.clone(),
        system: iolab_kind::output::system_summary(&run.end.metrics),
    };
    crate::output::emit(|out| write_run(format, &report, out))?;
    if !args.quiet && format == RunFormat::Human {
        crate::cmd::watch::print_findings(&report.findings, "");
        if let Some(id) = run.end.stored {
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

impl View for Display<'_> {
    fn event(&mut self, line: &mut dyn Status, event: &Event<'_>) {
        match *event {
            Event::Populating { fileset } if !self.quiet => {
                line.show(format_args!("populating fileset {fileset}…"))
            }
            Event::Populated { .. } => line.clear(),
            Event::Echo(text) if !self.quiet => {
                line.line(text);
            }
            // Counted quiet or not: the count says which `system` of the file a failure is.
            Event::System(command) => {
                self.systems += 1;
                if !self.quiet {
                    line.line(&format!("running: {command}"));
                }
            }
            Event::SystemSkipped(command) => {
                self.systems += 1;
                if !self.quiet {
                    let at = self.system_at();
                    line.line(&format!(
                        "{at}: warning: `system \"{command}\"` not run (--no-system)"
                    ));
                }
            }
            Event::SystemFailed { command, status } if !self.quiet => {
                let at = self.system_at();
                let how = match (status.code(), status.signal()) {
                    (Some(code), _) => format!("exited with status {code}"),
                    (None, Some(sig)) => format!("was killed by signal {sig}"),
                    _ => format!("failed ({status})"),
                };
                line.line(&format!("{at}: warning: `system \"{command}\"` {how}"));
            }
            Event::Operations {
                ops,
                elapsed,
                planned,
            } => {
                if elapsed < Duration::from_secs(1) || self.quiet {
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
            Event::Report { ops, elapsed, .. } if !self.quiet => {
                line.line(&format!(
                    "{:.3}: {} data ops, {:.1} ops/s",
                    elapsed.as_secs_f64(),
                    thousands(ops),
                    ops as f64 / elapsed.as_secs_f64()
                ));
            }
            Event::TimedStart => self.timed = true,
            Event::TimedEnd => line.clear(),
            _ => {}
        }
    }
}
