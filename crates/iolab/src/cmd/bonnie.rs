//! `iolab bonnie`: the bonnie kind's one-run plan, run by the experiment runner, printed in
//! the chosen format.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use iolab_bonnie::BonnieResult;

use crate::cli::BonnieArgs;
use crate::cmd::single;
use crate::error::CliError;
use crate::output;

pub fn run(args: BonnieArgs, cancel: Arc<AtomicBool>) -> Result<(), CliError> {
    if let Some(why) = args
        .machine
        .as_deref()
        .and_then(output::bonnie::bad_machine_name)
    {
        return Err(CliError::usage(format!(
            "--machine {:?} {why}",
            args.machine.unwrap_or_default()
        ))
        .with_hint("give a name without commas, e.g. --machine ssd-ext4"));
    }
    let plan = iolab_bonnie::kind::from_command_line(&args.options.0, &args.dir, args.seed)
        .map_err(crate::cmd::usage)?;
    let (report, stored) = single::run_kind::<BonnieResult, _>(
        plan,
        &args.run,
        &cancel,
        "operation",
        "interrupted; the files of the run were removed",
    )?;
    output::emit(|out| {
        output::bonnie::write(args.run.format(), &report, args.machine.as_deref(), out)
    })?;
    single::epilogue(&args.run, &report.findings, stored);
    Ok(())
}
