//! `iolab import OTHER.db`: copy another results database's experiments into this one (each
//! experiment once: its uuid decides), so that `iolab compare ID1 ID2` can pool them.

use std::path::PathBuf;

use iolab_store::StoreError;

use crate::cli::DbArgs;
use crate::error::CliError;

#[derive(clap::Args, Debug)]
#[command(
    after_help = "Example:\n  iolab import other-machine.db --db results.db\n  iolab compare 1 2 --db results.db\n\nThe other file is opened read-only. Experiments already here (same uuid) are skipped, so\nimporting twice adds nothing."
)]
pub struct ImportArgs {
    /// The results database to copy from
    #[arg(value_name = "OTHER")]
    pub other: PathBuf,
    #[command(flatten)]
    pub db: DbArgs,
    /// Machine-readable output
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: ImportArgs) -> Result<(), CliError> {
    if !args.other.exists() {
        return Err(CliError::usage(format!(
            "{}: no such file",
            args.other.display()
        )));
    }
    if let (Ok(a), Ok(b)) = (args.other.canonicalize(), args.db.db.canonicalize()) {
        if a == b {
            return Err(CliError::usage(format!(
                "{} is the database being imported into",
                a.display()
            )));
        }
    }
    let mut store = super::db::open(&args.db.db)?;
    let report = store.import(&args.other).map_err(|e| match e {
        StoreError::Missing { .. }
        | StoreError::Open { .. }
        | StoreError::NotADatabase { .. }
        | StoreError::NotIolab { .. }
        | StoreError::TooNew { .. }
        | StoreError::Corrupt { .. } => super::db::store_error_as(e, &Imported),
        other => CliError::failed(format!("import failed, nothing was copied: {other}")),
    })?;
    crate::output::print_json_or(
        args.json,
        &crate::output::import::Human { other: &args.other },
        &crate::output::import::Imported(report),
    )
}

/// The database setting, as `iolab import` words it: the file it reads from.
struct Imported;

impl iolab_util::setting::Words for Imported {
    fn setting(&self, s: iolab_util::setting::Setting) -> String {
        match s {
            iolab_util::setting::Setting::Db => "`iolab import`".into(),
            other => iolab_util::setting::CommandLine.setting(other),
        }
    }
}
