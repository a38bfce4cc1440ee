//! Directories a workload needs that do not exist (a WML fileset's `path`): made for the run,
//! journalled before they are made, and removed after it with everything the run put there.
//!
//! filebench creates a fileset's missing `path`, and so does iolab; but a run leaves the
//! machine as it found it. The topmost directory made is recorded ([`Entry::WorkDir`]) before
//! it is made, so that a crash is recovered like any other change, and is removed after the
//! run with what is in it — on its own filesystem only, never following links.
//!
//! The journal names a directory that is not iolab's by its name (it is the user's path), so
//! the undo checks another way that it is the one iolab made: its birth time (statx) is not
//! older than the record. A damaged or edited journal therefore cannot make iolab empty a
//! directory that existed before. Where the filesystem keeps no birth time, only an empty
//! directory is removed.
//!
//! [`Entry::WorkDir`]: crate::journal::Entry::WorkDir

use std::fs;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::undo::Outcome;
use crate::util;

/// A directory made by [`make_work_dir`] or [`crate::Sut::make_work_dir`]: remove it with
/// the matching `remove_work_dir`.
#[derive(Debug)]
#[must_use = "a work directory is removed with remove_work_dir"]
pub struct WorkDir {
    /// The topmost directory made (absolute).
    pub(crate) path: PathBuf,
    /// When it was recorded (seconds since the epoch): it was born no earlier.
    pub(crate) since: u64,
    /// Its journal record, when the session keeps a journal.
    pub(crate) seq: Option<u64>,
    /// Its device and inode, to know it as the one made.
    pub(crate) id: (u64, u64),
}

impl WorkDir {
    /// The topmost directory made; everything under it goes with it.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// The topmost ancestor of `path` (itself included) that does not exist, absolute; `None`
/// when `path` exists.
pub(crate) fn topmost_missing(path: &Path) -> Result<Option<PathBuf>> {
    let path = std::path::absolute(path).map_err(|e| Error::io("resolve", path, e))?;
    let mut top = None;
    for p in path.ancestors() {
        match fs::symlink_metadata(p) {
            Ok(_) => break,
            Err(e) if e.kind() == io::ErrorKind::NotFound => top = Some(p.to_path_buf()),
            Err(e) => return Err(Error::io("stat", p, e)),
        }
    }
    Ok(top)
}

/// Makes `path` and its missing parents; `top` is the topmost of them. Returns `top`'s
/// device and inode. On failure, what was made is removed again.
pub(crate) fn create(path: &Path, top: &Path) -> Result<(u64, u64)> {
    let made = fs::create_dir_all(path).and_then(|()| fs::symlink_metadata(top));
    match made {
        Ok(md) => Ok((md.dev(), md.ino())),
        Err(e) => {
            if let Ok(md) = fs::symlink_metadata(top) {
                let _ = remove(top, 0, Some((md.dev(), md.ino())));
            }
            Err(Error::io("create directory", path, e))
        }
    }
}

/// Makes `path` and its missing parents for a run, without a journal (a session that keeps
/// none, or no session): `None` when it exists. Remove it with [`remove_work_dir`].
pub fn make_work_dir(path: &Path) -> Result<Option<WorkDir>> {
    let Some(top) = topmost_missing(path)? else {
        return Ok(None);
    };
    let since = util::unix_time();
    let id = create(path, &top)?;
    Ok(Some(WorkDir {
        path: top,
        since,
        seq: None,
        id,
    }))
}

/// Removes a directory [`make_work_dir`] made, with everything in it.
pub fn remove_work_dir(dir: WorkDir) -> Result<Outcome> {
    remove(&dir.path, dir.since, Some(dir.id))
}

/// Removes `path` and everything in it, if it is the directory iolab made: the one of device
/// and inode `made` when that is known (the process that made it), else one born at or after
/// `since` (seconds since the epoch; a recovery). See the module documentation.
pub(crate) fn remove(path: &Path, since: u64, made: Option<(u64, u64)>) -> Result<Outcome> {
    let md = match fs::symlink_metadata(path) {
        Ok(md) => md,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Ok(Outcome::AlreadyGone(format!(
                "{} does not exist",
                path.display()
            )))
        }
        Err(e) => return Err(Error::io("stat", path, e)),
    };
    if !md.is_dir() {
        return Err(Error::Conflict {
            path: path.to_owned(),
            problem: "is not a directory (any more); left in place".into(),
        });
    }
    let ours = match made {
        Some(id) => Some(id == (md.dev(), md.ino())),
        None => birth_time(path).map(|born| born >= since),
    };
    match ours {
        Some(true) => {
            remove_tree(path, md.dev()).map_err(|e| Error::io("remove", path, e))?;
        }
        Some(false) => {
            return Err(Error::Conflict {
                path: path.to_owned(),
                problem: "is not the directory iolab made for the run; left in place: iolab \
                          deletes only what it created"
                    .into(),
            })
        }
        // Without a birth time, only what cannot be anyone's data.
        None => {}
    }
    match fs::remove_dir(path) {
        Ok(()) => Ok(Outcome::Undone(format!("removed {}", path.display()))),
        Err(e) if e.raw_os_error() == Some(libc::ENOTEMPTY) => Err(Error::Conflict {
            path: path.to_owned(),
            problem: "not empty, and its filesystem keeps no birth time to show it is \
                      iolab's; left in place"
                .into(),
        }),
        Err(e) => Err(Error::io("remove directory", path, e)),
    }
}

/// When `path` was created (seconds since the epoch), if its filesystem records it.
fn birth_time(path: &Path) -> Option<u64> {
    util::statx(path, libc::AT_SYMLINK_NOFOLLOW, libc::STATX_BTIME)
        .map(|st| st.stx_btime.tv_sec.max(0) as u64)
}

/// Removes everything in `dir` (not `dir` itself), never following a link and never
/// entering another filesystem (`dev` is `dir`'s): a mount point inside is an error.
fn remove_tree(dir: &Path, dev: u64) -> io::Result<()> {
    for e in fs::read_dir(dir)? {
        let p = e?.path();
        let md = fs::symlink_metadata(&p)?;
        if md.is_dir() {
            if md.dev() != dev {
                return Err(io::Error::other(format!(
                    "{} is a mount point: not removing across filesystems",
                    p.display()
                )));
            }
            remove_tree(&p, dev)?;
            fs::remove_dir(&p)?;
        } else {
            fs::remove_file(&p)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh directory under the temporary one, removed on drop.
    struct Scratch(PathBuf);

    impl Scratch {
        fn new() -> Scratch {
            let d = std::env::temp_dir().join(util::unique_name());
            fs::create_dir_all(&d).unwrap();
            Scratch(d)
        }

        fn path(&self) -> &Path {
            &self.0
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn makes_the_missing_parents_and_removes_them_with_their_contents() {
        let tmp = Scratch::new();
        let want = tmp.path().join("a/b/c");
        let d = make_work_dir(&want).unwrap().unwrap();
        assert_eq!(d.path(), tmp.path().join("a"));
        assert!(want.is_dir());
        fs::write(want.join("data"), b"x").unwrap();
        std::os::unix::fs::symlink(tmp.path(), want.join("link")).unwrap();
        assert!(matches!(remove_work_dir(d), Ok(Outcome::Undone(_))));
        assert!(!tmp.path().join("a").exists());
        // The link was removed, not followed.
        assert!(tmp.path().is_dir());
        assert!(make_work_dir(tmp.path()).unwrap().is_none(), "it exists");
    }

    /// In a session with a journal: recorded before it is made, and removed either by the
    /// run (`remove_work_dir`) or, when the run never got there, by the session's teardown,
    /// which is `recover`'s code.
    #[test]
    fn a_journalled_work_dir_is_removed_by_the_run_or_the_recovery() {
        let tmp = Scratch::new();
        let opts = crate::SutOptions::under(&tmp.path().join("state"));
        let journal = opts.journal.clone();
        let sut = crate::Sut::open(opts).unwrap();
        let want = tmp.path().join("data/x");
        let d = sut.make_work_dir(&want).unwrap().unwrap();
        let text = fs::read_to_string(&journal).unwrap();
        assert!(
            text.contains(&format!(
                r#""op":"work_dir","path":"{}""#,
                tmp.path().join("data").display()
            )),
            "{text}"
        );
        fs::write(want.join("f"), b"x").unwrap();
        assert!(matches!(sut.remove_work_dir(d), Ok(Outcome::Undone(_))));
        assert!(!tmp.path().join("data").exists());
        assert_eq!(
            fs::read_to_string(&journal).unwrap(),
            "",
            "nothing outstanding"
        );
        // The run ends without removing it (a crash, as far as the journal can tell).
        let d = sut.make_work_dir(&want).unwrap().unwrap();
        fs::write(want.join("f"), b"x").unwrap();
        std::mem::forget(d);
        let report = sut.close();
        assert!(report.is_clean(), "{:?}", report.actions);
        assert!(!tmp.path().join("data").exists());
    }

    #[test]
    fn a_directory_older_than_the_record_is_left_alone() {
        let tmp = Scratch::new();
        let old = tmp.path().join("old");
        fs::create_dir(&old).unwrap();
        fs::write(old.join("keep"), b"x").unwrap();
        if birth_time(&old).is_none() {
            // No birth time: a full directory stays anyway.
            assert!(remove(&old, 0, None).is_err());
        } else {
            let e = remove(&old, util::unix_time() + 3600, None).unwrap_err();
            assert!(
                e.to_string().contains("is not the directory iolab made"),
                "{e}"
            );
        }
        // Nor is another directory than the one made.
        let e = remove(&old, 0, Some((0, 0))).unwrap_err();
        assert!(
            e.to_string().contains("is not the directory iolab made"),
            "{e}"
        );
        assert!(old.join("keep").exists());
    }
}
