//! `iolab sqlite`: the sqlite kind's one-run plan, run by the experiment runner, printed in
//! the chosen format.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use iolab_sqlite::SqliteResult;

use crate::cli::SqliteArgs;
use crate::cmd::single;
use crate::error::CliError;
use crate::output;

pub fn run(args: SqliteArgs, cancel: Arc<AtomicBool>) -> Result<(), CliError> {
    let plan = iolab_sqlite::kind::from_command_line(&args.options.0, &args.dir, args.seed)
        .map_err(crate::cmd::usage)?;
    let (report, stored) = single::run_kind::<SqliteResult, _>(
        plan,
        &args.run,
        &cancel,
        "transaction",
        "interrupted; the database files of this run were removed",
    )?;
    output::emit(|out| output::write_sqlite(args.run.format(), &report, out))?;
    single::epilogue(&args.run, &report.findings, stored);
    Ok(())
}
