//! `iolab recover`: undo what the journal still lists (a crashed or killed iolab's mounts,
//! loop devices, images, tunables and cgroups), and remove the block tracer's tracefs
//! instances whose iolab is gone.

use std::io::ErrorKind;

use iolab_sut::Outcome;

use crate::cli::RecoverArgs;
use crate::error::CliError;

pub fn run(args: RecoverArgs) -> Result<(), CliError> {
    let given = args.journal.is_some();
    let journal = args
        .journal
        .unwrap_or_else(|| crate::state::sut_options().journal);
    // No journal at the default place means no iolab left anything behind; a journal named
    // on the command line that is not there is a mistyped path, not a clean machine.
    let missing = matches!(std::fs::metadata(&journal), Err(e) if e.kind() == ErrorKind::NotFound);
    if given && missing {
        let default = crate::state::sut_options().journal;
        return Err(CliError::usage(format!(
            "{}: no such journal; nothing was recovered",
            journal.display()
        ))
        .with_hint(format!(
            "give the journal iolab wrote (by default {}), or leave out --journal",
            default.display()
        )));
    }
    let report = iolab_sut::recover_path(&journal).map_err(|e| {
        let bad = e.is_bad_input();
        let err = if bad {
            CliError::usage(&e)
        } else {
            CliError::failed(&e)
        };
        err.with_hint("another iolab may be running; recover when it has finished")
    })?;
    // Block-trace instances are not journalled: named after their iolab's pid, those of an
    // iolab that is gone are known as left behind without a record.
    let mut stale = Vec::new();
    for root in iolab_blocktrace::TRACEFS_PATHS {
        stale.extend(iolab_blocktrace::remove_stale_instances(
            std::path::Path::new(root),
        ));
    }
    for p in &stale {
        say!(
            "undone: removed tracefs instance {} (its iolab is gone)",
            p.display()
        );
    }
    if report.is_empty() {
        if missing {
            say!(
                "nothing to recover: there is no journal at {}",
                journal.display()
            );
        } else {
            say!("nothing to recover: {} lists no changes", journal.display());
        }
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
    say!(
        "recovered: {} change(s) undone",
        report.actions.len() + stale.len()
    );
    Ok(())
}
