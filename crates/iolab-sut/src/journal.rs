//! The journal: every change iolab makes to the machine, written down before it is made.
//!
//! # Format
//!
//! JSON Lines, one record per line, appended and `fdatasync`ed before the change it
//! describes is made, so that a `kill -9` at any instant leaves a journal that names every
//! change that may have happened:
//!
//! ```text
//! {"seq":1,"pid":4242,"time":1760000000,"op":"mkdir","path":"/var/lib/iolab/mnt/iolab-4242-0-1a2b3c"}
//! {"seq":2,"pid":4242,"time":1760000000,"op":"image","path":"/var/lib/iolab/images/iolab-4242-1-1a2b3c.img"}
//! {"seq":3,"pid":4242,"time":1760000000,"op":"loop","image":"/var/lib/iolab/images/iolab-4242-1-1a2b3c.img"}
//! {"seq":4,"pid":4242,"time":1760000000,"op":"mount","source":"/dev/loop3","target":"/var/lib/iolab/mnt/iolab-4242-0-1a2b3c","fstype":"ext4"}
//! {"seq":5,"pid":4242,"time":1760000000,"op":"tunable","path":"/proc/sys/vm/dirty_expire_centisecs","original":"3000"}
//! {"seq":6,"pid":4242,"time":1760000001,"op":"cgroup","path":"/sys/fs/cgroup/memory/iolab-4242-2-1a2b3c"}
//! {"seq":7,"pid":4242,"time":1760000009,"op":"undone","of":6}
//! ```
//!
//! A record says "this may have been done": undoing it must be harmless when the change never
//! happened or is already gone. `undone` records mark changes already put back, so that a
//! later recovery does not write an old value over a change someone made since. When nothing
//! is outstanding the file is truncated to empty.
//!
//! Only one process uses a journal at a time: it holds an exclusive `flock(2)` on the file
//! for as long as it has it open. The kernel drops the lock when that process dies, however
//! it dies, which is what lets `recover` tell a crashed session from a running one.
//!
//! A final line without its newline is a write torn by a crash (the change it announced was
//! not started) and is dropped; any other line that does not parse is an error, never
//! skipped: skipping it could leave a change behind unnoticed.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::util;

/// How long [`Journal::open`] waits for a lock held by another process. A process that was
/// just killed can hold it a moment longer through a child it had forked but not yet exec'd
/// (the child shares the locked file until exec closes it).
pub const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

/// Default journal for a root user.
pub const DEFAULT_JOURNAL: &str = "/var/lib/iolab/journal.json";

/// One change (or, for [`Entry::Undone`], the note that a change was put back).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Entry {
    /// An (empty) directory iolab created, a mount point. Undo: rmdir (never recursive).
    Mkdir {
        /// The directory.
        path: PathBuf,
    },
    /// An image file iolab created. Undo: unlink.
    Image {
        /// The image.
        path: PathBuf,
    },
    /// A loop device attached to an image iolab created. Undo: detach every loop device
    /// whose backing file is that image.
    Loop {
        /// The backing image.
        image: PathBuf,
    },
    /// A mount iolab made. Undo: unmount if the topmost mount on `target` has `source`.
    Mount {
        /// Device or tmpfs source name.
        source: String,
        /// Mount point.
        target: PathBuf,
        /// Filesystem type.
        fstype: String,
    },
    /// A kernel tunable and its value before iolab changed it. Undo: write it back.
    Tunable {
        /// /proc/sys/… or /sys/… file.
        path: PathBuf,
        /// Its value before (for `[a] b c` files, the selected word).
        original: String,
    },
    /// One of the coupled pairs vm.dirty_bytes/vm.dirty_ratio or
    /// vm.dirty_background_bytes/vm.dirty_background_ratio, recorded together because
    /// writing one zeroes the other (mm/page-writeback.c), and `*_bytes` cannot be written
    /// as 0. Undo: write whichever was non-zero.
    DirtyLimit {
        /// `/proc/sys/vm/dirty[_background]_bytes`.
        bytes_path: PathBuf,
        /// Its value before.
        bytes: String,
        /// `/proc/sys/vm/dirty[_background]_ratio`.
        ratio_path: PathBuf,
        /// Its value before.
        ratio: String,
    },
    /// A v1 cgroup iolab created (memory: the page-cache cap; blkio: the origin's
    /// throttle, whose limits go with it). Undo: move its tasks to the parent, rmdir.
    Cgroup {
        /// The cgroup directory.
        path: PathBuf,
    },
    /// A cgroup of a container (`iolab-ctr-…`, any controller, v1 or v2). Undo: SIGKILL
    /// every process in it, wait for them to leave (bounded), rmdir.
    Container {
        /// The cgroup directory.
        path: PathBuf,
    },
    /// A directory a workload needed that did not exist (a WML fileset's `path`), the
    /// topmost of those iolab made. Undo: remove it with everything in it, on its own
    /// filesystem, if it was born no earlier than the record (see [`crate::workdir`]).
    WorkDir {
        /// The directory.
        path: PathBuf,
    },
    /// The change with sequence number `of` has been put back.
    Undone {
        /// Sequence number of the change.
        of: u64,
    },
}

impl Entry {
    /// A change of a machine-wide tunable (see [`crate::machine_lock`]).
    pub fn is_tunable(&self) -> bool {
        matches!(self, Entry::Tunable { .. } | Entry::DirtyLimit { .. })
    }

    /// One line for reports: what the change was.
    pub fn describe(&self) -> String {
        match self {
            Entry::Mkdir { path } => format!("directory {}", path.display()),
            Entry::Image { path } => format!("image {}", path.display()),
            Entry::Loop { image } => format!("loop device for {}", image.display()),
            Entry::Mount {
                source,
                target,
                fstype,
            } => format!("{fstype} mount of {source} on {}", target.display()),
            Entry::Tunable { path, original } => {
                format!("{} (was {original:?})", path.display())
            }
            Entry::DirtyLimit {
                bytes_path,
                bytes,
                ratio_path,
                ratio,
            } => format!(
                "{} (was {bytes:?}) and {} (was {ratio:?})",
                bytes_path.display(),
                ratio_path.display()
            ),
            Entry::Cgroup { path } => format!("cgroup {}", path.display()),
            Entry::Container { path } => format!("container cgroup {}", path.display()),
            Entry::WorkDir { path } => format!("workload directory {}", path.display()),
            Entry::Undone { of } => format!("undone #{of}"),
        }
    }
}

/// A journal line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    /// Sequence number, from 1, increasing within the file.
    pub seq: u64,
    /// Process that made the change.
    pub pid: u32,
    /// Seconds since the epoch.
    pub time: u64,
    /// The change.
    #[serde(flatten)]
    pub entry: Entry,
}

/// An open, locked journal.
#[derive(Debug)]
pub struct Journal {
    path: PathBuf,
    /// `None` for [`Journal::detached`]: nothing may be recorded.
    file: Option<File>,
    outstanding: BTreeMap<u64, Record>,
    next_seq: u64,
}

impl Journal {
    /// Open (creating it and its directory if needed) and lock the journal at `path`.
    /// Fails with [`Error::JournalBusy`] while another process has it open, after waiting up
    /// to [`LOCK_WAIT`] for it to go away.
    pub fn open(path: &Path) -> Result<Journal> {
        let deadline = std::time::Instant::now() + LOCK_WAIT;
        loop {
            match Self::try_open(path) {
                Err(Error::JournalBusy { .. }) if std::time::Instant::now() < deadline => {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                other => return other,
            }
        }
    }

    /// Like [`Journal::open`], without waiting for a busy lock.
    pub fn try_open(path: &Path) -> Result<Journal> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| Error::io("create directory", dir, e))?;
        }
        let existed = path.exists();
        let mut file = util::open_lock_file(path)?;
        if !util::try_flock(&file).map_err(|e| Error::io("lock", path, e))? {
            let ino = file.metadata().map(|m| m.ino()).unwrap_or(0);
            return Err(Error::JournalBusy {
                path: path.to_owned(),
                holder: lock_holder(ino),
            });
        }
        if !existed {
            sync_parent(path);
        }
        let mut text = String::new();
        file.read_to_string(&mut text)
            .map_err(|e| Error::io("read", path, e))?;
        let (records, keep_len) = parse(path, &text)?;
        // Drop a torn last line, and terminate a complete one, so appends start clean.
        if keep_len != text.len() {
            file.set_len(keep_len as u64)
                .map_err(|e| Error::io("truncate", path, e))?;
        }
        if keep_len > 0 && !text[..keep_len].ends_with('\n') {
            file.seek(SeekFrom::End(0))
                .and_then(|_| file.write_all(b"\n"))
                .map_err(|e| Error::io("write", path, e))?;
        }
        let next_seq = records.iter().map(|r| r.seq).max().unwrap_or(0) + 1;
        let mut outstanding = BTreeMap::new();
        for r in records {
            match r.entry {
                Entry::Undone { of } => {
                    outstanding.remove(&of);
                }
                _ => {
                    outstanding.insert(r.seq, r);
                }
            }
        }
        Ok(Journal {
            path: path.to_owned(),
            file: Some(file),
            outstanding,
            next_seq,
        })
    }

    /// A journal without a file, for a session that changes nothing on the machine (an
    /// existing directory as it is): no lock, so such sessions run side by side; recording a
    /// change in it is an error.
    pub fn detached() -> Journal {
        Journal {
            path: PathBuf::new(),
            file: None,
            outstanding: BTreeMap::new(),
            next_seq: 1,
        }
    }

    /// Whether it is [`Journal::detached`].
    pub fn is_detached(&self) -> bool {
        self.file.is_none()
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Changes not yet put back, oldest first.
    pub fn outstanding(&self) -> impl DoubleEndedIterator<Item = &Record> {
        self.outstanding.values()
    }

    /// The record with this sequence number, if outstanding.
    pub fn get(&self, seq: u64) -> Option<&Record> {
        self.outstanding.get(&seq)
    }

    /// True when nothing is outstanding.
    pub fn is_clear(&self) -> bool {
        self.outstanding.is_empty()
    }

    /// Write a record and make it durable; returns its sequence number.
    pub(crate) fn append(&mut self, entry: Entry) -> Result<u64> {
        let rec = Record {
            seq: self.next_seq,
            pid: std::process::id(),
            time: util::unix_time(),
            entry,
        };
        let mut line = serde_json::to_string(&rec).expect("journal records serialize");
        line.push('\n');
        // One write(2) per record: O_APPEND semantics by seeking to the end first (the file
        // is ours alone while locked).
        let Some(file) = self.file.as_mut() else {
            return Err(Error::Conflict {
                path: self.path.clone(),
                problem: format!(
                    "this session keeps no journal, so it may not change the machine \
                     ({} was asked)",
                    rec.entry.describe()
                ),
            });
        };
        file.seek(SeekFrom::End(0))
            .and_then(|_| file.write_all(line.as_bytes()))
            .and_then(|_| file.sync_data())
            .map_err(|e| Error::io("write", &self.path, e))?;
        self.next_seq += 1;
        if !matches!(rec.entry, Entry::Undone { .. }) {
            self.outstanding.insert(rec.seq, rec.clone());
        }
        Ok(rec.seq)
    }

    /// Its file opened again read-only, so that writing it fails as a failing disk would.
    #[cfg(test)]
    pub(crate) fn fail_writes(&mut self) {
        self.file = Some(std::fs::File::open(&self.path).unwrap());
    }

    /// Note that change `seq` has been put back (or never happened).
    pub(crate) fn mark_undone(&mut self, seq: u64) -> Result<()> {
        if self.outstanding.remove(&seq).is_some() {
            self.append(Entry::Undone { of: seq })?;
        }
        Ok(())
    }

    /// Empty the file when nothing is outstanding.
    pub(crate) fn clear_if_done(&mut self) -> Result<()> {
        if !self.outstanding.is_empty() {
            return Ok(());
        }
        let Some(file) = self.file.as_mut() else {
            return Ok(());
        };
        file.set_len(0)
            .and_then(|_| file.sync_all())
            .map_err(|e| Error::io("truncate", &self.path, e))?;
        self.next_seq = 1;
        Ok(())
    }
}

/// Parse the journal text: the records, and how many bytes of it to keep.
fn parse(path: &Path, text: &str) -> Result<(Vec<Record>, usize), Error> {
    let mut out = Vec::new();
    let mut pos = 0;
    let mut keep = 0;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        let start = pos;
        pos += line.len();
        let complete = line.ends_with('\n');
        let body = line.trim();
        if body.is_empty() {
            keep = pos;
            continue;
        }
        match serde_json::from_str::<Record>(body) {
            Ok(r) => {
                out.push(r);
                keep = pos;
            }
            Err(_) if !complete => {
                keep = start;
            }
            Err(e) => {
                return Err(Error::JournalCorrupt {
                    path: path.to_owned(),
                    line: i + 1,
                    message: e.to_string(),
                })
            }
        }
    }
    Ok((out, keep))
}

/// The PID holding an flock on inode `ino`, from /proc/locks
/// (`1: FLOCK  ADVISORY  WRITE 1234 fd:00:5678 0 EOF`).
pub(crate) fn lock_holder(ino: u64) -> Option<u32> {
    let text = std::fs::read_to_string("/proc/locks").ok()?;
    parse_lock_holder(&text, ino)
}

fn parse_lock_holder(text: &str, ino: u64) -> Option<u32> {
    text.lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() < 6 || f[1] != "FLOCK" {
            return None;
        }
        let file_ino: u64 = f[5].rsplit(':').next()?.parse().ok()?;
        (file_ino == ino).then(|| f[4].parse().ok()).flatten()
    })
}

fn sync_parent(path: &Path) {
    if let Some(dir) = path.parent() {
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp() -> PathBuf {
        let d = std::env::temp_dir().join(util::unique_name());
        std::fs::create_dir_all(&d).unwrap();
        d.join("journal.json")
    }

    #[test]
    fn records_are_one_json_object_per_line() {
        let r = Record {
            seq: 5,
            pid: 42,
            time: 7,
            entry: Entry::Tunable {
                path: "/proc/sys/vm/dirty_expire_centisecs".into(),
                original: "3000".into(),
            },
        };
        let s = serde_json::to_string(&r).unwrap();
        assert_eq!(
            s,
            r#"{"seq":5,"pid":42,"time":7,"op":"tunable","path":"/proc/sys/vm/dirty_expire_centisecs","original":"3000"}"#
        );
        assert_eq!(serde_json::from_str::<Record>(&s).unwrap(), r);
    }

    #[test]
    fn append_reopen_undone_and_clear() {
        let p = tmp();
        {
            let mut j = Journal::open(&p).unwrap();
            let a = j
                .append(Entry::Mkdir {
                    path: "/x/iolab-a".into(),
                })
                .unwrap();
            let b = j
                .append(Entry::Image {
                    path: "/x/iolab-b.img".into(),
                })
                .unwrap();
            assert_eq!((a, b), (1, 2));
            j.mark_undone(a).unwrap();
            assert_eq!(j.outstanding().count(), 1);
        }
        let mut j = Journal::open(&p).unwrap();
        let left: Vec<u64> = j.outstanding().map(|r| r.seq).collect();
        assert_eq!(left, vec![2]);
        assert_eq!(j.append(Entry::Undone { of: 99 }).unwrap(), 4);
        j.mark_undone(2).unwrap();
        j.clear_if_done().unwrap();
        assert_eq!(std::fs::metadata(&p).unwrap().len(), 0);
        drop(j);
        std::fs::remove_dir_all(p.parent().unwrap()).unwrap();
    }

    #[test]
    fn a_second_opener_is_refused_while_the_first_lives() {
        let p = tmp();
        let j = Journal::open(&p).unwrap();
        match Journal::try_open(&p) {
            Err(Error::JournalBusy { holder, .. }) => {
                assert_eq!(holder, Some(std::process::id()))
            }
            other => panic!("expected busy, got {other:?}"),
        }
        drop(j);
        Journal::open(&p).unwrap();
        std::fs::remove_dir_all(p.parent().unwrap()).unwrap();
    }

    #[test]
    fn torn_last_line_is_dropped_but_corruption_elsewhere_is_an_error() {
        let p = tmp();
        let good = r#"{"seq":1,"pid":1,"time":1,"op":"mkdir","path":"/m/iolab-x"}"#;
        std::fs::write(&p, format!("{good}\n{{\"seq\":2,\"pid\":1,\"ti")).unwrap();
        let mut j = Journal::open(&p).unwrap();
        assert_eq!(j.outstanding().count(), 1);
        assert_eq!(j.append(Entry::Undone { of: 1 }).unwrap(), 2);
        drop(j);
        let text = std::fs::read_to_string(&p).unwrap();
        assert_eq!(text.lines().count(), 2, "{text}");

        // A complete last line without its newline is kept and terminated.
        std::fs::write(&p, good).unwrap();
        let j = Journal::open(&p).unwrap();
        assert_eq!(j.outstanding().count(), 1);
        drop(j);
        assert_eq!(std::fs::read_to_string(&p).unwrap(), format!("{good}\n"));

        std::fs::write(&p, format!("garbage\n{good}\n")).unwrap();
        match Journal::open(&p) {
            Err(Error::JournalCorrupt { line: 1, .. }) => {}
            other => panic!("expected corrupt, got {other:?}"),
        }
        std::fs::remove_dir_all(p.parent().unwrap()).unwrap();
    }

    #[test]
    fn lock_holder_from_proc_locks() {
        let t = "1: POSIX  ADVISORY  WRITE 77 fd:00:99 0 EOF\n\
                 2: FLOCK  ADVISORY  WRITE 1234 fd:00:5678 0 EOF\n";
        assert_eq!(parse_lock_holder(t, 5678), Some(1234));
        assert_eq!(parse_lock_holder(t, 99), None);
    }
}
