//! `iolab iozone`: the iozone kind's one-run plan (or, with `--auto`, one configuration per
//! cell of the matrix; with `--threads-max`, one per thread count), run by the experiment
//! runner, printed in the chosen format.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::SystemTime;

use iolab_iozone::matrix::Bounds;

use crate::cli::{IozoneArgs, IozoneFormat};
use crate::cmd::single;
use crate::error::CliError;
use crate::output;
use crate::output::iozone::{write_iozone, IozoneReport};

pub fn run(args: IozoneArgs, cancel: Arc<AtomicBool>) -> Result<(), CliError> {
    let values = &args.options.0;
    let spec =
        iolab_iozone::kind::spec_from(values, &args.dir, args.seed).map_err(crate::cmd::usage)?;
    if args.us_per_op && (spec.throughput_mode() || args.threads_max.is_some()) {
        return Err(CliError::usage(
            "--us-per-op is single-stream only: throughput mode sums rates over threads, \
             which microseconds per operation cannot (iozone -N refuses -t too)",
        )
        .with_hint("drop --us-per-op, or use --ops for operations per second"));
    }
    let mut bounds = Bounds {
        all_records: args.auto_all_records,
        ..Bounds::default()
    };
    for (given, bound) in [
        (args.auto_min_size, &mut bounds.min_size),
        (args.auto_max_size, &mut bounds.max_size),
        (args.auto_min_record, &mut bounds.min_record),
        (args.auto_max_record, &mut bounds.max_record),
    ] {
        if let Some(v) = given {
            *bound = v;
        }
    }
    // iozone skips the small records of large files only when neither -y nor -q sets the
    // records (iozone.c's auto_test): given record bounds are run in full.
    if args.auto_min_record.is_some() || args.auto_max_record.is_some() {
        bounds.all_records = true;
    }
    let matrix_records = if args.auto {
        iolab_iozone::matrix::records(&bounds)
    } else {
        Vec::new()
    };
    let plan = if args.auto {
        iolab_iozone::kind::from_command_line_auto(values, &bounds, &args.dir, args.seed)
    } else if let Some(max) = args.threads_max {
        iolab_iozone::kind::from_command_line_thread_range(values, max, &args.dir, args.seed)
    } else {
        iolab_iozone::kind::from_command_line(values, &args.dir, args.seed)
    }
    .map_err(crate::cmd::usage)?;
    if let Some(path) = &args.excel {
        crate::cmd::db::check_output(path, &args.run.db.db, "--excel")?;
        let most = crate::output::iozone::xls::MAX_COLUMNS
            - crate::output::iozone::xls::THROUGHPUT_FIRST_COLUMN;
        if let Some(max) = args.threads_max {
            let counts = max.saturating_sub(spec.threads) as usize + 1;
            if counts > most {
                return Err(CliError::usage(format!(
                    "--excel: {counts} thread counts need {counts} columns, more than the \
                     {most} an Excel worksheet of iozone's format has for them"
                ))
                .with_hint(format!(
                    "give at most {most} thread counts, or drop --excel (--format json has them all)"
                )));
            }
        }
    }
    let format = args.run.format();
    let started_at = SystemTime::now();
    let runs = iolab_kind::cli::run(
        &mut single::CliHost { cancel },
        plan,
        &single::run_args(&args.run),
        &mut iolab_kind::cli::Counting { unit: "record" },
        "interrupted; the files of the run were removed",
    )?;
    let stored = runs.first().and_then(|r| r.end.stored);
    let report = IozoneReport {
        findings: runs.iter().map(|r| r.end.findings.clone()).collect(),
        system: runs
            .iter()
            .map(|r| iolab_kind::output::system_summary(&r.end.metrics))
            .collect(),
        results: runs.into_iter().map(|r| r.output).collect(),
        matrix_records,
        cpu_utilization: args.cpu_utilization,
        ops: args.ops,
        us_per_op: args.us_per_op,
        host: crate::cmd::single::machine().clone(),
        started_at,
    };
    output::emit(|out| write_iozone(format, &report, out))?;
    if let Some(path) = &args.excel {
        // The workbook's first cell is the command line, as iozone's is.
        let command_line = std::env::args_os()
            .map(|a| a.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(" ");
        let book = crate::output::iozone::xls::workbook(&report, &command_line);
        crate::cmd::db::write_output(path, &args.run.db.db, "--excel", |w| {
            w.write_all(&book)
                .map_err(|e| CliError::failed(format!("cannot write {}: {e}", path.display())))
        })?;
    }
    if format == IozoneFormat::Human {
        for f in &report.findings {
            crate::cmd::watch::print_findings(f, "");
        }
        if let Some(id) = stored {
            say!(
                "stored as experiment {} in {}",
                id.0,
                args.run.db.db.display()
            );
        }
    }
    Ok(())
}
