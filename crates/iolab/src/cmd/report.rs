//! `iolab report [ID] -o FILE`: an experiment's report as HTML, Markdown or JSON.

use std::path::PathBuf;

use crate::cmd::db::{open_existing, resolve};
use crate::error::CliError;
use crate::output::report::ReportFormat;
use iolab_kind::output::write_output;

#[derive(clap::Args, Debug)]
pub struct ReportArgs {
    /// Experiment id (as `iolab list` shows it) or uuid; default: the newest
    #[arg(value_name = "ID")]
    pub id: Option<String>,
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
    let id = resolve(&store, args.id.as_deref())?;
    let data =
        iolab_report::load(&store, id, &iolab_kinds::sections()).map_err(CliError::failed)?;
    write_output(&args.output, &args.db.db, "-o", |w| {
        format
            .formatter()
            .write(&data, w)
            .map_err(|e| CliError::failed(format!("cannot write the report: {e}")))
    })
}
