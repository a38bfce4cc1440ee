//! `iolab replay`: the replay kind's one-run plan, run by the experiment runner, printed in
//! the chosen format.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use iolab_replay::kind::{BetweenDays, ReplaySpec};
use iolab_replay::ReplayResult;

use crate::cli::ReplayArgs;
use crate::cmd::single;
use crate::error::CliError;
use crate::output;
use crate::output::replay::ReplayReport;

pub fn run(args: ReplayArgs, cancel: Arc<AtomicBool>) -> Result<(), CliError> {
    let between_days = BetweenDays::parse(&args.between_days).unwrap_or(BetweenDays::None);
    let spec = ReplaySpec {
        install: args.install.clone(),
        boot: args.boot.clone(),
        days: args.days.clone(),
        between_days,
    };
    let plan = iolab_replay::kind::from_command_line(spec, &args.dir, args.seed)
        .map_err(crate::cmd::usage)?;
    let (run, stored) = single::run_kind::<ReplayResult, _>(
        plan,
        &args.run,
        &cancel,
        "file",
        "interrupted; the files of the replay were removed",
    )?;
    let report = ReplayReport {
        result: run.result,
        between_days: between_days.name().into(),
        host: run.host,
        findings: run.findings,
        system: run.system,
    };
    output::emit(|out| output::replay::write(args.run.format(), &report, out))?;
    single::epilogue(&args.run, &report.findings, stored);
    Ok(())
}
