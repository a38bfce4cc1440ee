//! `iolab report [ID] -o FILE`: an experiment's report as HTML, Markdown or JSON.

use std::path::PathBuf;

use iolab_report::Format;

use crate::cmd::db::{open_existing, resolve};
use crate::error::CliError;

/// Output formats of `iolab report`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReportFormat {
    Html,
    Md,
    Json,
}

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
        Some(ReportFormat::Html) => Format::Html,
        Some(ReportFormat::Md) => Format::Markdown,
        Some(ReportFormat::Json) => Format::Json,
        None => Format::from_extension(&args.output).ok_or_else(|| {
            CliError::usage(format!(
                "cannot tell the format of {} from its extension",
                args.output.display()
            ))
            .with_hint("name it .html, .md or .json, or pass --format html|md|json")
        })?,
    };
    let store = open_existing(&args.db.db)?;
    let id = resolve(&store, args.id.as_deref())?;
    let data = iolab_report::load(&store, id).map_err(CliError::failed)?;

    // A temporary file next to the output, renamed over it once complete: a reader never
    // sees half a report, and a failure leaves any previous report in place.
    let dir = match args.output.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = args
        .output
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "report".into());
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let write = || -> Result<(), CliError> {
        let file = std::fs::File::create(&tmp)
            .map_err(|e| CliError::failed(format!("cannot create {}: {e}", tmp.display())))?;
        let mut w = std::io::BufWriter::new(file);
        format.render(&data, &mut w).map_err(CliError::failed)?;
        let file = w.into_inner().map_err(|e| {
            CliError::failed(format!("cannot write {}: {}", tmp.display(), e.error()))
        })?;
        file.sync_all()
            .map_err(|e| CliError::failed(format!("cannot write {}: {e}", tmp.display())))?;
        std::fs::rename(&tmp, &args.output).map_err(|e| {
            CliError::failed(format!(
                "cannot rename {} to {}: {e}",
                tmp.display(),
                args.output.display()
            ))
        })
    };
    let result = write();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}
