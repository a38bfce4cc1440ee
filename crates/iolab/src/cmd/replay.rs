//! `iolab replay`: the replay kind's one-run plan, run by the experiment runner, printed in
//! the chosen format.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use iolab_experiment::kind::replay::{BetweenDays, ReplaySpec};
use iolab_replay::ReplayResult;

use crate::cli::{ReplayArgs, ReplayFormat};
use crate::cmd::single::{self, Storage};
use crate::error::CliError;
use crate::output::replay::ReplayReport;
use crate::output::{self, Host};

pub fn run(args: ReplayArgs, cancel: Arc<AtomicBool>) -> Result<(), CliError> {
    let between_days = BetweenDays::parse(&args.between_days).unwrap_or(BetweenDays::None);
    let spec = ReplaySpec {
        install: args.install.clone(),
        boot: args.boot.clone(),
        days: args.days.clone(),
        between_days,
    };
    let plan = iolab_experiment::kind::replay::from_command_line(spec, &args.dir, args.seed)
        .map_err(crate::cmd::usage)?;
    let format = if args.json {
        ReplayFormat::Json
    } else {
        args.format
    };
    let run = single::run_viewed::<ReplayResult>(
        &plan,
        Storage::from_args(args.no_db, &args.db.db)?,
        args.monitor.options(),
        &cancel,
        // The replay reports no progress of its own: the runner's phases.
        single::Counting { unit: "file" },
        "interrupted; the files of the replay were removed",
    )?;
    let report = ReplayReport {
        result: run.output,
        between_days: between_days.name().into(),
        host: Host::probe(),
        findings: run.end.findings.clone(),
        system: single::system_summary(&run.end.metrics),
    };
    output::emit(|out| output::replay::write(format, &report, out))?;
    if format == ReplayFormat::Human {
        crate::cmd::watch::print_findings(&report.findings, "");
        if let Some(id) = run.stored {
            say!("stored as experiment {} in {}", id.0, args.db.db.display());
        }
    }
    Ok(())
}
