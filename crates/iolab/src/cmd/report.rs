//! `iolab report [ID]... -o FILE`: an experiment's report as HTML, Markdown or JSON; several
//! experiments' (the stages of one experiment file) as one document.

use std::path::PathBuf;

use crate::cmd::db::{open_existing, resolve, store_error};
use crate::error::CliError;
use crate::output::report::{ReportFormat, Reports};
use iolab_kind::output::write_output;
use iolab_report::ReportError;
use iolab_store::{ExperimentId, Store};

#[derive(clap::Args, Debug)]
pub struct ReportArgs {
    /// Experiment ids (as `iolab list` shows them) or uuids, reported in this order in one
    /// document; default: the newest experiment with the stages before it from the same run
    /// of its file
    #[arg(value_name = "ID")]
    pub ids: Vec<String>,
    #[command(flatten)]
    pub db: crate::cli::DbArgs,
    /// The report file (written whole or not at all)
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
    /// Default: from the file's extension (.html, .md, .json)
    #[arg(long, value_enum)]
    pub format: Option<ReportFormat>,
}

pub fn run(args: ReportArgs) -> Result<(), CliError> {
    let format = match args.format {
        Some(f) => f,
        None => ReportFormat::from_extension(&args.output).ok_or_else(|| {
            CliError::usage(format!(
                "cannot tell the format of -o {} from its extension",
                args.output.display()
            ))
            .with_hint("name it .html, .md or .json, or pass --format html|md|json")
        })?,
    };
    let store = open_existing(&args.db.db)?;
    let ids = experiments(&store, &args.ids)?;
    let sections = iolab_kinds::sections();
    let reports = ids
        .into_iter()
        .map(|id| iolab_report::load(&store, id, &sections).map_err(CliError::failed))
        .collect::<Result<Vec<_>, _>>()?;
    let reports = Reports(reports);
    write_output(&args.output, &args.db.db, "-o", |w| {
        reports
            .write(format, w)
            .map_err(|e| CliError::failed(format!("cannot write the report: {e}")))
    })
}

/// The experiments named (each once), or by default the newest and the earlier stages of its
/// file's run ([`iolab_report::latest_file_run`]).
fn experiments(store: &Store, given: &[String]) -> Result<Vec<ExperimentId>, CliError> {
    if given.is_empty() {
        // Its error when the database holds no experiment.
        resolve(store, None)?;
        return iolab_report::latest_file_run(store).map_err(|e| match e {
            ReportError::Store(e) => store_error(e),
            other => CliError::failed(other),
        });
    }
    let mut ids: Vec<ExperimentId> = Vec::with_capacity(given.len());
    for (s, n) in given.iter().zip(1..) {
        let id = resolve(store, Some(s))?;
        if let Some(k) = ids.iter().position(|&i| i == id) {
            return Err(CliError::usage(format!(
                "experiment {} is named twice (ID {} and ID {n}: {s})",
                id.0,
                k + 1
            ))
            .with_hint("name each experiment once; the report shows them in the order given"));
        }
        ids.push(id);
    }
    Ok(ids)
}
