//! `iolab recover`: undo what the journal still lists (a crashed or killed iolab's mounts,
//! loop devices, images, tunables and cgroups).

use iolab_sut::Outcome;

use crate::cli::RecoverArgs;
use crate::error::CliError;

pub fn run(args: RecoverArgs) -> Result<(), CliError> {
    let journal = args
        .journal
        .unwrap_or_else(|| crate::state::sut_options().journal);
    let report = iolab_sut::recover_path(&journal).map_err(|e| {
        let bad = e.is_bad_input();
        let err = if bad {
            CliError::usage(&e)
        } else {
            CliError::failed(&e)
        };
        err.with_hint("another iolab may be running; recover when it has finished")
    })?;
    if report.is_empty() {
        say!("nothing to recover: {} lists no changes", journal.display());
        return Ok(());
    }
    let mut failed = 0;
    for a in &report.actions {
        match &a.result {
            Ok(Outcome::Undone(what)) => say!("undone: {what}"),
            Ok(Outcome::AlreadyGone(why)) => {
                say!("nothing to undo for {}: {why}", a.entry.describe())
            }
            Err(e) => {
                failed += 1;
                say!("FAILED: {}: {e}", a.entry.describe());
            }
        }
    }
    if failed > 0 {
        return Err(CliError::failed(format!(
            "{failed} change{} could not be undone; they stay in {}",
            if failed == 1 { "" } else { "s" },
            journal.display()
        ))
        .with_hint("fix the cause shown above and run `iolab recover` again"));
    }
    say!("recovered: {} change(s) undone", report.actions.len());
    Ok(())
}
