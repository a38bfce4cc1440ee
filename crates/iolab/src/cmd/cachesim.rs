//! `iolab cachesim`: the cachesim kind's one-run plan, run by the experiment runner, printed
//! as a table or JSON.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use crate::cli::{CachesimAction, CachesimArgs};
use crate::cmd::single;
use crate::error::CliError;
use crate::output;
use crate::output::cachesim::CachesimReport;

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
    // A simulation is CPU work on a trace: sampling the machine would only watch iolab.
    let run_args = iolab_kind::cli::RunArgs {
        format: iolab_kind::cli::HUMAN.name,
        db: args.db.db.clone(),
        no_db: args.no_db,
        monitor: false,
        monitor_interval: std::time::Duration::from_secs(1),
        trace_blocks: false,
    };
    let run = iolab_kind::cli::run_one(
        &mut single::CliHost { cancel },
        plan,
        &run_args,
        &mut iolab_kind::cli::Counting { unit: "request" },
        "interrupted",
    )?;
    for w in &run.output.warnings {
        say!("iolab: warning: {w}");
    }
    let report = CachesimReport {
        result: run.output,
        host: crate::cmd::single::machine().clone(),
        findings: run.end.findings.clone(),
    };
    if args.json {
        output::emit(|out| output::json::write(output::json::Kind::Cachesim, &report, out))?;
    } else {
        output::emit(|out| output::cachesim::human(&report, out))?;
        crate::cmd::watch::print_findings(&report.findings, "");
        if let Some(id) = run.end.stored {
            say!("stored as experiment {} in {}", id.0, args.db.db.display());
        }
    }
    Ok(())
}
