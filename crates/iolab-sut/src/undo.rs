//! How each journal entry is undone. The same code serves a normal teardown, an interrupted
//! session (signal) and `recover` after a crash, so every path is the one the tests exercise.
//!
//! Every undo is idempotent: a change that never happened or is already gone is reported as
//! such, not as an error. And every undo first checks that the entry names something iolab
//! creates (names starting with `iolab-`, tunable files under /proc/sys or /sys, cgroups
//! inside a memory hierarchy), so a damaged or hand-edited journal cannot make iolab delete
//! or unmount anything else.

use std::io;
use std::path::Path;

use crate::cgroup;
use crate::container;
use crate::error::{Error, Result};
use crate::journal::Entry;
use crate::loopdev;
use crate::mount::{self, Unmounted};
use crate::tunable;
use crate::util::{self, has_our_prefix};
use crate::workdir;
use iolab_sys::mountinfo;

/// What undoing one change did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// It was put back; what was done.
    Undone(String),
    /// Nothing to do (the change never happened, or was already gone); why.
    AlreadyGone(String),
}

fn foreign(seq: u64, why: impl Into<String>) -> Error {
    Error::ForeignEntry {
        seq,
        why: why.into(),
    }
}

/// Undo one recorded change, recorded at `time` (seconds since the epoch).
pub(crate) fn undo(seq: u64, entry: &Entry, time: u64) -> Result<Outcome> {
    match entry {
        Entry::WorkDir { path } => {
            if !path.is_absolute() || path.parent().is_none() {
                return Err(foreign(
                    seq,
                    format!("{} is not a directory iolab makes", path.display()),
                ));
            }
            workdir::remove(path, time, None)
        }
        Entry::Mkdir { path } => {
            if !has_our_prefix(path) {
                return Err(foreign(
                    seq,
                    format!("{} is not an iolab- directory", path.display()),
                ));
            }
            match std::fs::remove_dir(path) {
                Ok(()) => Ok(Outcome::Undone(format!("removed {}", path.display()))),
                Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Outcome::AlreadyGone(format!(
                    "{} does not exist",
                    path.display()
                ))),
                Err(e) if e.raw_os_error() == Some(libc::ENOTEMPTY) => Err(Error::Conflict {
                    path: path.clone(),
                    problem: "not empty (something was written there while it was not \
                              mounted); left in place: iolab deletes only what it created"
                        .into(),
                }),
                Err(e) => Err(Error::io("remove directory", path, e)),
            }
        }
        Entry::Image { path } => {
            if !has_our_prefix(path) || path.extension().is_none_or(|e| e != "img") {
                return Err(foreign(
                    seq,
                    format!("{} is not an iolab image", path.display()),
                ));
            }
            match std::fs::remove_file(path) {
                Ok(()) => Ok(Outcome::Undone(format!("deleted {}", path.display()))),
                Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Outcome::AlreadyGone(format!(
                    "{} does not exist",
                    path.display()
                ))),
                Err(e) => Err(Error::io("delete", path, e)),
            }
        }
        Entry::Loop { image } => {
            if !has_our_prefix(image) {
                return Err(foreign(
                    seq,
                    format!("{} is not an iolab image", image.display()),
                ));
            }
            let devs = loopdev::detach_image(image).map_err(|e| Error::Loop {
                op: "detach the loop device of",
                path: image.clone(),
                error: e,
                hint: None,
            })?;
            if devs.is_empty() {
                Ok(Outcome::AlreadyGone(format!(
                    "no loop device is attached to {}",
                    image.display()
                )))
            } else {
                let names: Vec<String> = devs.iter().map(|d| d.display().to_string()).collect();
                Ok(Outcome::Undone(format!("detached {}", names.join(", "))))
            }
        }
        Entry::Mount { source, target, .. } => {
            if !has_our_prefix(target) {
                return Err(foreign(
                    seq,
                    format!("{} is not an iolab mount point", target.display()),
                ));
            }
            undo_mount(source, target)
        }
        Entry::Tunable { path, original } => {
            if !tunable::is_tunable_path(path) {
                return Err(foreign(seq, format!("{} is not a tunable", path.display())));
            }
            restore_tunable(path, original)
        }
        Entry::DirtyLimit {
            bytes_path,
            bytes,
            ratio_path,
            ratio,
        } => {
            match tunable::dirty_pair(bytes_path) {
                Some((b, r)) if &b == bytes_path && &r == ratio_path => {}
                _ => return Err(foreign(seq, "not a vm.dirty_* bytes/ratio pair")),
            }
            // Writing one of the pair zeroes the other, and *_bytes = 0 is refused: put back
            // whichever was in force.
            if bytes.trim() != "0" {
                restore_tunable(bytes_path, bytes)
            } else {
                restore_tunable(ratio_path, ratio)
            }
        }
        Entry::Cgroup { path } => {
            if !cgroup::is_our_cgroup(path) {
                return Err(foreign(
                    seq,
                    format!("{} is not an iolab cgroup", path.display()),
                ));
            }
            if cgroup::remove(path)? {
                Ok(Outcome::Undone(format!(
                    "removed cgroup {}",
                    path.display()
                )))
            } else {
                Ok(Outcome::AlreadyGone(format!(
                    "{} does not exist",
                    path.display()
                )))
            }
        }
        Entry::Container { path } => {
            if !container::is_ours(path) {
                return Err(foreign(
                    seq,
                    format!("{} is not an iolab container cgroup", path.display()),
                ));
            }
            if container::remove(path)? {
                Ok(Outcome::Undone(format!(
                    "killed the processes of and removed container cgroup {}",
                    path.display()
                )))
            } else {
                Ok(Outcome::AlreadyGone(format!(
                    "{} does not exist",
                    path.display()
                )))
            }
        }
        Entry::Undone { .. } => Ok(Outcome::AlreadyGone("bookkeeping".into())),
    }
}

fn undo_mount(source: &str, target: &Path) -> Result<Outcome> {
    let mounts = mountinfo::read()?;
    let Some(top) = mountinfo::top_mount_at(&mounts, target) else {
        return Ok(Outcome::AlreadyGone(format!(
            "nothing is mounted on {}",
            target.display()
        )));
    };
    if top.source != source {
        return Err(Error::Conflict {
            path: target.to_owned(),
            problem: format!(
                "the mount on top is {} ({}), not iolab's {source}; not touching it",
                top.source, top.fs_type
            ),
        });
    }
    let how = mount::unmount(target)?;
    Ok(Outcome::Undone(format!(
        "unmounted {source} from {}{}",
        target.display(),
        if how == Unmounted::Lazy {
            " (lazily: it was busy)"
        } else {
            ""
        }
    )))
}

fn restore_tunable(path: &Path, original: &str) -> Result<Outcome> {
    let current = match util::read_trimmed(path) {
        Ok(t) => tunable::current_value(&t),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Ok(Outcome::AlreadyGone(format!(
                "{} no longer exists (device removed)",
                path.display()
            )))
        }
        Err(e) => return Err(Error::io("read", path, e)),
    };
    if current == tunable::current_value(original) {
        return Ok(Outcome::AlreadyGone(format!(
            "{} is already {original:?}",
            path.display()
        )));
    }
    let name = path.display().to_string();
    tunable::write_checked(&name, path, original)?;
    Ok(Outcome::Undone(format!(
        "restored {} to {original:?} (was {current:?})",
        path.display()
    )))
}
