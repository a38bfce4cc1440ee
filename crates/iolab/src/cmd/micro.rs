//! `iolab micro`: the micro kind's one-run plan, run by the experiment runner, printed in
//! the chosen format.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use iolab_micro::MicroResult;

use crate::cli::MicroArgs;
use crate::cmd::single;
use crate::error::CliError;
use crate::output;

pub fn run(args: MicroArgs, cancel: Arc<AtomicBool>) -> Result<(), CliError> {
    let plan = iolab_micro::kind::from_command_line(&args.options.0, &args.dir, args.seed)
        .map_err(crate::cmd::usage)?;
    let (report, stored) = single::run_kind::<MicroResult, _>(
        plan,
        &args.run,
        &cancel,
        "record",
        "interrupted; files created for this run were removed",
    )?;
    output::emit(|out| output::write_micro(args.run.format(), &report, out))?;
    single::epilogue(&args.run, &report.findings, stored);
    if args.remove_files {
        for f in &report.result.files {
            std::fs::remove_file(f)
                .map_err(|e| CliError::failed(format!("cannot remove {}: {e}", f.display())))?;
        }
    }
    Ok(())
}
