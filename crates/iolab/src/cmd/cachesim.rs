//! `iolab cachesim`: the cachesim kind's one-run plan, run by the experiment runner, printed
//! as a table or JSON.

use std::io::IsTerminal;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use iolab_cachesim::Outcome;
use iolab_experiment::run::monitor::MonitorOptions;

use crate::cli::{CachesimAction, CachesimArgs};
use crate::cmd::single::{self, Storage};
use crate::error::CliError;
use crate::output::cachesim::CachesimReport;
use crate::output::{self, Host};
use crate::term::StatusLine;

pub fn run(args: CachesimArgs, cancel: Arc<AtomicBool>) -> Result<(), CliError> {
    match args.action {
        Some(CachesimAction::Gen(a)) => return crate::cmd::cachesim_gen::run(a),
        Some(CachesimAction::Mrc(a)) => return crate::cmd::cachesim_mrc::run(a),
        None => {}
    }
    let trace = args
        .trace
        .ok_or_else(|| CliError::usage("give the trace to simulate"))?;
    let mut values: Vec<(&str, String)> = vec![("trace", trace.to_string_lossy().into_owned())];
    values.extend(args.options.0.iter().map(|(n, v)| (*n, v.clone())));
    let plan = iolab_cachesim::kind::from_command_line(&values).map_err(crate::cmd::usage)?;
    let storage = Storage::from_args(args.no_db, &args.db.db)?;
    let mut display = single::Shown {
        status: StatusLine::new(std::io::stderr().is_terminal()),
        view: single::Counting { unit: "request" },
    };
    // A simulation is CPU work on a trace: sampling the machine would only watch iolab.
    let monitor = MonitorOptions {
        enabled: false,
        ..MonitorOptions::default()
    };
    let run = single::run::<Outcome>(plan, storage, monitor, &cancel, &mut display, "interrupted");
    display.status.clear();
    let run = run?;
    let report = CachesimReport {
        result: run.output,
        host: Host::probe(),
        findings: run.end.findings.clone(),
    };
    if args.json {
        output::emit(|out| output::json::write(output::json::Kind::Cachesim, &report, out))?;
    } else {
        output::emit(|out| output::cachesim::human(&report, out))?;
        crate::cmd::watch::print_findings(&report.findings, "");
        if let Some(id) = run.stored {
            say!("stored as experiment {} in {}", id.0, args.db.db.display());
        }
    }
    Ok(())
}
