//! Putting back what the journal lists: after a crash (`iolab recover`, and automatically when
//! the next session opens the journal), and for a session's own teardown.
//!
//! Changes are undone newest first, so a mount goes before its loop device, the loop device
//! before its image, the image before its directory. A change that fails to undo stays
//! outstanding in the journal (the others are marked undone), so a later `recover` retries
//! exactly the failures; the journal is emptied only when nothing is left.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::holders;
use crate::journal::{Entry, Journal};
use crate::undo::{self, Outcome};
use crate::util::has_our_prefix;
use iolab_sys::mountinfo;

/// What was undone.
#[derive(Debug)]
pub struct UndoReport {
    /// The journal used.
    pub journal: PathBuf,
    /// One per outstanding change, in the order handled (newest first).
    pub actions: Vec<UndoAction>,
}

/// One change and what undoing it did.
#[derive(Debug)]
pub struct UndoAction {
    /// Its journal sequence number.
    pub seq: u64,
    /// The process that made it.
    pub pid: u32,
    /// The change.
    pub entry: Entry,
    /// What undoing it did, or why it failed (it then stays in the journal).
    pub result: Result<Outcome>,
}

impl UndoAction {
    /// For a teardown's warning: what went wrong, if anything. A change undone that the
    /// journal could not record is told as undone.
    pub fn failure(&self) -> Option<String> {
        match &self.result {
            Ok(_) => None,
            Err(e @ Error::UndoneNotRecorded { .. }) => {
                Some(format!("{}: {e}", self.entry.describe()))
            }
            Err(e) => Some(format!(
                "could not undo {}: {e}; it stays in the journal, for `iolab recover`",
                self.entry.describe()
            )),
        }
    }
}

/// Report of a crash recovery.
pub type RecoverReport = UndoReport;

impl UndoReport {
    /// Nothing was outstanding.
    pub fn is_empty(&self) -> bool {
        self.actions.is_empty()
    }

    /// Everything was put back.
    pub fn is_clean(&self) -> bool {
        self.actions.iter().all(|a| a.result.is_ok())
    }

    /// The changes that could not be undone.
    pub fn failures(&self) -> impl Iterator<Item = &UndoAction> {
        self.actions.iter().filter(|a| a.result.is_err())
    }

    /// `Err` with the first failure (the newest change that could not be undone).
    pub fn into_result(mut self) -> Result<UndoReport> {
        match self.actions.iter().position(|a| a.result.is_err()) {
            None => Ok(self),
            Some(i) => match std::mem::replace(
                &mut self.actions[i].result,
                Ok(Outcome::AlreadyGone(String::new())),
            ) {
                Err(e) => Err(e),
                Ok(_) => unreachable!("position found an error"),
            },
        }
    }
}

/// Undo one outstanding change and mark it in the journal. `release` runs first with the
/// sequence number (the session closes the loop device it holds for it).
pub(crate) fn undo_one(
    journal: &mut Journal,
    seq: u64,
    release: &mut dyn FnMut(u64),
) -> Option<UndoAction> {
    let rec = journal.get(seq)?.clone();
    release(seq);
    let mut result = undo::undo(seq, &rec.entry, rec.time);
    if let Ok(outcome) = &result {
        if let Err(e) = journal.mark_undone(seq) {
            // Undone all the same: saying "could not undo" would send the user after a
            // change that is no longer there.
            let done = match outcome {
                Outcome::Undone(what) => what.clone(),
                Outcome::AlreadyGone(why) => format!("nothing to undo ({why})"),
            };
            result = Err(Error::UndoneNotRecorded {
                done,
                source: Box::new(e),
            });
        }
    }
    Some(UndoAction {
        seq,
        pid: rec.pid,
        entry: rec.entry,
        result,
    })
}

/// Undo the given changes, newest first, then empty the journal if nothing is left.
pub(crate) fn undo_seqs(
    journal: &mut Journal,
    mut seqs: Vec<u64>,
    release: &mut dyn FnMut(u64),
) -> UndoReport {
    seqs.sort_unstable_by(|a, b| b.cmp(a));
    let actions = seqs
        .into_iter()
        .filter_map(|s| undo_one(journal, s, release))
        .collect();
    let _ = journal.clear_if_done();
    UndoReport {
        journal: journal.path().to_owned(),
        actions,
    }
}

/// Undo everything outstanding in an open journal. Processes the crashed run left on a
/// filesystem iolab mounted are killed first (see [`crate::holders`]), so that it unmounts
/// cleanly and its loop device detaches; the mount's outcome names them.
pub fn recover(journal: &mut Journal) -> RecoverReport {
    // Tunables are put back while no other session is changing them (best effort: a busy
    // lock after the wait still leaves the crashed session's changes to be undone).
    let _lock = journal
        .outstanding()
        .any(|r| r.entry.is_tunable())
        .then(|| {
            crate::machine_lock::TunablesLock::acquire(
                &crate::machine_lock::path(),
                crate::machine_lock::WAIT,
            )
            .ok()
        });
    let seqs: Vec<u64> = journal.outstanding().map(|r| r.seq).collect();
    let mut killed = std::collections::BTreeMap::new();
    if let Ok(mounts) = mountinfo::read() {
        for r in journal.outstanding() {
            let Entry::Mount { source, target, .. } = &r.entry else {
                continue;
            };
            // The same conditions as the undo itself: a mount point iolab names, with
            // iolab's mount on top.
            if has_our_prefix(target)
                && mountinfo::top_mount_at(&mounts, target).is_some_and(|m| m.source == *source)
            {
                let k = holders::kill_users(target, r.pid);
                if !k.is_empty() {
                    killed.insert(r.seq, k);
                }
            }
        }
    }
    let mut report = undo_seqs(journal, seqs, &mut |_| {});
    for a in &mut report.actions {
        if let (Some(k), Ok(Outcome::Undone(what))) = (killed.get(&a.seq), &mut a.result) {
            what.push_str(&format!(
                " (after killing what the crashed run left using it: {})",
                k.join(", ")
            ));
        }
    }
    report
}

/// `iolab recover`: open the journal at `path` (fails with [`crate::Error::JournalBusy`] while a
/// live iolab holds it) and undo everything outstanding. A missing journal is an empty report.
pub fn recover_path(path: &Path) -> Result<RecoverReport> {
    if !path.exists() {
        return Ok(UndoReport {
            journal: path.to_owned(),
            actions: Vec::new(),
        });
    }
    let mut j = Journal::open(path)?;
    Ok(recover(&mut j))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by failing iolab's system calls one at a time (crates/iolab/tests/syscall_faults.rs,
    /// the SUT journal's fdatasync): a change undone whose journal line could not be written
    /// was reported as "could not undo", as if the mount or device were still there.
    #[test]
    fn undone_but_not_recorded_says_so() {
        let dir = std::env::temp_dir().join(crate::util::unique_name());
        let made = dir.join("iolab-made");
        std::fs::create_dir_all(&made).unwrap();
        let path = dir.join("journal.json");
        let mut journal = Journal::open(&path).unwrap();
        let seq = journal.append(Entry::Mkdir { path: made.clone() }).unwrap();
        journal.fail_writes();
        let action = undo_one(&mut journal, seq, &mut |_| {}).unwrap();
        assert!(!made.exists(), "undone");
        let e = action.result.as_ref().unwrap_err();
        assert!(matches!(e, Error::UndoneNotRecorded { .. }), "{e:?}");
        let text = e.to_string();
        assert!(
            text.starts_with(&format!("removed {}", made.display())),
            "{text}"
        );
        assert!(text.contains("already undone"), "{text}");
        let told = action.failure().unwrap();
        assert!(!told.contains("could not undo"), "{told}");
        drop(journal);
        // Still listed, and found already undone by the next recovery.
        let mut journal = Journal::open(&path).unwrap();
        assert!(journal.get(seq).is_some());
        let again = undo_one(&mut journal, seq, &mut |_| {}).unwrap();
        assert!(
            matches!(again.result, Ok(Outcome::AlreadyGone(_))),
            "{:?}",
            again.result
        );
        drop(journal);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
