//! `iolab sqlite`: the sqlite kind's one-run plan, run by the experiment runner, printed in
//! the chosen format.

use std::io::IsTerminal;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::SystemTime;

use iolab_sqlite::SqliteResult;

use crate::cli::{Format, SqliteArgs};
use crate::cmd::micro::Display;
use crate::cmd::single::{self, Storage};
use crate::error::CliError;
use crate::output::{self, Host, SingleReport};
use crate::term::StatusLine;

pub fn run(args: SqliteArgs, cancel: Arc<AtomicBool>) -> Result<(), CliError> {
    let plan =
        iolab_experiment::kind::sqlite::from_command_line(&args.options.0, &args.dir, args.seed)
            .map_err(crate::cmd::usage)?;
    let format = if args.json { Format::Json } else { args.format };
    // A database that cannot take the result is refused before anything runs (exit 2).
    let storage = if args.no_db {
        Storage::Nowhere
    } else {
        Storage::Db(crate::cmd::db::open(&args.db.db)?)
    };
    let mut display = single::Shown {
        status: StatusLine::new(std::io::stderr().is_terminal()),
        view: Display {
            unit: "transaction",
        },
    };
    let started_at = SystemTime::now();
    let run = single::run::<SqliteResult>(
        &plan,
        storage,
        args.monitor.options(),
        &cancel,
        &mut display,
        "interrupted; the database files of this run were removed",
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
    output::emit(|out| output::write_sqlite(format, &report, out))?;
    if format == Format::Human {
        crate::cmd::watch::print_findings(&report.findings, "");
        if let Some(id) = run.stored {
            say!("stored as experiment {} in {}", id.0, args.db.db.display());
        }
    }
    Ok(())
}
