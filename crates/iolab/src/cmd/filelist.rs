//! `iolab filelist`: the file-list generators of iolab-replay (docs/replay.md). The list goes
//! to `--output` (written only once it is complete) or to standard output; what it holds to
//! standard error.

use std::path::Path;

use iolab_replay::{GenError, Generated, ListError, Role, Schedule};

use crate::cli::FilelistCommand;
use crate::error::CliError;
use crate::output;

pub fn run(c: FilelistCommand) -> Result<(), CliError> {
    let (g, out) = match c {
        FilelistCommand::Scan {
            dir,
            files_only,
            output,
        } => (
            iolab_replay::scan(&dir, files_only).map_err(gen_error)?,
            output,
        ),
        FilelistCommand::Sample {
            list,
            bytes,
            seed,
            output,
        } => {
            let l = iolab_replay::read_list(&list, Role::Plain).map_err(list_error)?;
            // A list the replay would refuse is no base for a boot set.
            iolab_replay::check(&iolab_replay::Lists {
                install: Some(l.clone()),
                ..Default::default()
            })
            .map_err(list_error)?;
            (
                iolab_replay::sample(&l, bytes, seed).map_err(gen_error)?,
                output,
            )
        }
        FilelistCommand::Workday {
            sets,
            read,
            create,
            delete,
            days,
            set_bytes,
            seed,
            output,
        } => (
            Schedule {
                sets,
                read,
                create,
                delete,
                days,
                set_bytes,
                seed,
            }
            .generate()
            .map_err(gen_error)?,
            output,
        ),
    };
    match out {
        Some(path) => {
            write(&path, &g)?;
            say!(
                "wrote {}: {} files, {} bytes{}",
                path.display(),
                g.files,
                g.bytes,
                skipped(&g)
            );
        }
        None => {
            output::emit(|o| o.write_all(g.text.as_bytes()))?;
            if g.skipped > 0 {
                say!("{}", skipped(&g).trim_start_matches(", "));
            }
        }
    }
    Ok(())
}

fn skipped(g: &Generated) -> String {
    if g.skipped == 0 {
        String::new()
    } else {
        format!(
            ", {} entries skipped (links, devices, sockets, unreadable directories)",
            g.skipped
        )
    }
}

fn write(path: &Path, g: &Generated) -> Result<(), CliError> {
    std::fs::write(path, &g.text)
        .map_err(|e| CliError::failed(format!("cannot write {}: {e}", path.display())))
}

fn gen_error(e: GenError) -> CliError {
    if e.is_bad_input() {
        CliError::usage(e.to_string())
    } else {
        CliError::failed(e.to_string())
    }
}

/// A located list error: exit 2, with its hint.
pub fn list_error(e: ListError) -> CliError {
    let err = CliError::located(&e);
    match e.hint {
        Some(h) => err.with_hint(h),
        None => err,
    }
}
