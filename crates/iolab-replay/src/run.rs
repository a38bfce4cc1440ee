//! The replay: a validated [`Program`] run with real system calls in one directory, one phase
//! after another, on the calling thread. A create is `openat(O_CREAT|O_EXCL)`, `write`s of
//! the listed size, an `fsync` where the list says, `close`; a whole read is `openat`, `read`
//! to the end, `close`; a delete `unlinkat`. After the install and after every day the
//! caller's [`DayEnd`] ends the day (a remount, or a sync and a cache drop): its flush is
//! part of the day's time, which runs from the day's first operation (right after the
//! mount) to the flush's completion.

use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use iolab_engine::nocancel;
use iolab_engine::usage::Usage;
use serde::Serialize;

use crate::check::{Phase, PhaseKind, Program, Step};

/// Bytes per `write`/`read` call.
pub const CHUNK: usize = 1 << 20;

/// What ending a day did, as the caller reports it.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct DayEndReport {
    /// The flush part, counted in the day's time: the unmount (which writes back the
    /// filesystem), or `sync`.
    pub flush_ns: u64,
    /// The rest, not counted: the mount, or dropping the caches.
    pub other_ns: u64,
    /// The filesystem's mount id after the remount (unique where the kernel has one).
    pub mount_id: Option<u64>,
    /// Bytes the block device under the directory read and wrote from the day's start to
    /// its end (the flush and, with a remount, the mount included); `None` without a block
    /// device (tmpfs). Reads of a day that starts cold reach the device.
    pub device_read_bytes: Option<u64>,
    pub device_write_bytes: Option<u64>,
}

/// Ends a day: called after the install and after every day, in the replay's directory.
pub trait DayEnd {
    fn end_of_day(&mut self, dir: &Path, day: u32) -> Result<DayEndReport, String>;
}

/// One phase's figures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PhaseResult {
    #[serde(rename = "phase")]
    pub kind: PhaseKind,
    pub day: u32,
    pub elapsed_ns: u64,
    /// Files created, read (whole or in part) and deleted.
    pub files: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// System-call-level steps (directories made and removed, fsyncs included).
    pub steps: u64,
}

/// A phase with its rates, as stored and printed.
#[derive(Debug, Serialize)]
pub struct PhaseFigures<'a> {
    #[serde(flatten)]
    pub phase: &'a PhaseResult,
    pub mib_per_s: f64,
    pub files_per_s: f64,
}

/// A day without its phases, as stored and printed.
#[derive(Debug, Serialize)]
pub struct DaySummary<'a> {
    pub day: u32,
    pub time_ns: u64,
    #[serde(flatten)]
    pub end: &'a DayEndReport,
}

impl PhaseResult {
    pub fn figures(&self) -> PhaseFigures<'_> {
        PhaseFigures {
            phase: self,
            mib_per_s: self.mib_per_s(),
            files_per_s: self.files_per_s(),
        }
    }

    pub fn mib_per_s(&self) -> f64 {
        rate(
            (self.read_bytes + self.write_bytes) as f64 / 1048576.0,
            self.elapsed_ns,
        )
    }

    pub fn files_per_s(&self) -> f64 {
        rate(self.files as f64, self.elapsed_ns)
    }
}

fn rate(x: f64, ns: u64) -> f64 {
    if ns == 0 {
        f64::NAN
    } else {
        x / (ns as f64 / 1e9)
    }
}

/// The install (day 0) or one day.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DayResult {
    pub day: u32,
    pub phases: Vec<PhaseResult>,
    pub end: DayEndReport,
    /// Mount to completed unmount: the phases plus the flush.
    pub time_ns: u64,
}

/// A whole replay.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReplayResult {
    /// The install, when there was one.
    pub install: Option<DayResult>,
    pub days: Vec<DayResult>,
    /// Wall time of the whole replay, clean-up excluded.
    pub elapsed_ns: u64,
    pub usage: Usage,
}

impl DayResult {
    pub fn summary(&self) -> DaySummary<'_> {
        DaySummary {
            day: self.day,
            time_ns: self.time_ns,
            end: &self.end,
        }
    }
}

impl ReplayResult {
    pub fn all(&self) -> impl Iterator<Item = &DayResult> {
        self.install.iter().chain(self.days.iter())
    }
}

/// Why a replay stopped.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error("{op} {path}: {source}")]
    Io {
        op: &'static str,
        path: PathBuf,
        source: io::Error,
    },
    #[error("ending day {day}: {message}")]
    DayEnd { day: u32, message: String },
    #[error("interrupted")]
    Interrupted,
    #[error("{path} exists already: the replay makes it")]
    Exists { path: PathBuf },
    #[error(
        "the lists need {} at their peak; {} has {} free",
        iolab_util::units::format_bytes(*needed),
        dir.display(),
        iolab_util::units::format_bytes(*free)
    )]
    NoSpace {
        dir: PathBuf,
        needed: u64,
        free: u64,
    },
}

impl ReplayError {
    pub fn is_interrupted(&self) -> bool {
        matches!(self, ReplayError::Interrupted)
    }

    /// The directory holds names of the replay's, or has no room for the lists (nothing was
    /// run).
    pub fn is_bad_input(&self) -> bool {
        matches!(
            self,
            ReplayError::Exists { .. } | ReplayError::NoSpace { .. }
        )
    }

    /// What to do about it.
    pub fn hint(&self) -> Option<&'static str> {
        match self {
            ReplayError::Io { source, .. } if source.raw_os_error() == Some(libc::ENOSPC) => {
                Some("the target is too small for the replay's files: make it larger")
            }
            ReplayError::Exists { .. } => Some(
                "replay into a directory without the list's names (iolab removes only what it made)",
            ),
            ReplayError::NoSpace { .. } => Some(
                "replay into a filesystem with more room, or check the lists' sizes (bytes)",
            ),
            _ => None,
        }
    }
}

/// Runs `program` in `dir`: install and days, each ended by `end`; then removes what the
/// replay left (not timed).
pub fn replay(
    program: &Program,
    dir: &Path,
    cancel: &AtomicBool,
    end: &mut dyn DayEnd,
) -> Result<ReplayResult, ReplayError> {
    // What exists already is not the replay's: refuse it rather than remove it afterwards.
    let d = open_dir(dir)?;
    for root in &program.roots {
        // SAFETY: valid C string and open directory.
        let there = unsafe {
            libc::faccessat(
                d.as_raw_fd(),
                root.as_ptr(),
                libc::F_OK,
                libc::AT_SYMLINK_NOFOLLOW,
            )
        } == 0;
        if there {
            return Err(ReplayError::Exists {
                path: dir.join(std::ffi::OsStr::from_bytes(root.as_bytes())),
            });
        }
    }
    // A list of absurd sizes would write until the filesystem is full (someone else's too,
    // for a directory target): refuse what cannot fit before writing a byte.
    // SAFETY: `d` is an open descriptor and `st` a properly sized out-parameter.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstatvfs(d.as_raw_fd(), &mut st) } == 0 {
        // The fields are narrower than u64 on 32-bit targets.
        #[allow(clippy::useless_conversion)]
        let free = u64::from(st.f_bavail).saturating_mul(u64::from(st.f_frsize));
        if program.peak_bytes > free {
            return Err(ReplayError::NoSpace {
                dir: dir.to_path_buf(),
                needed: program.peak_bytes,
                free,
            });
        }
    }
    drop(d);
    let r = replay_days(program, dir, cancel, end);
    let cleanup = clean_up(program, dir, r.is_err());
    let r = r?;
    cleanup?;
    Ok(r)
}

fn replay_days(
    program: &Program,
    dir: &Path,
    cancel: &AtomicBool,
    end: &mut dyn DayEnd,
) -> Result<ReplayResult, ReplayError> {
    let mut data = vec![0u8; CHUNK];
    iolab_util::rng::Rng::new(0x7265_706c_6179).fill(&mut data);
    let mut buf = vec![0u8; CHUNK];
    let start = Instant::now();
    let usage0 = Usage::thread();
    let mut install = None;
    let mut days: Vec<DayResult> = Vec::new();
    let mut i = 0;
    while i < program.phases.len() {
        let day = program.phases[i].day;
        let mut phases = Vec::new();
        let t0 = Instant::now();
        while i < program.phases.len() && program.phases[i].day == day {
            phases.push(run_phase(&program.phases[i], dir, cancel, &data, &mut buf)?);
            i += 1;
        }
        let ran = t0.elapsed().as_nanos() as u64;
        let e = end
            .end_of_day(dir, day)
            .map_err(|message| ReplayError::DayEnd { day, message })?;
        let d = DayResult {
            day,
            phases,
            time_ns: ran + e.flush_ns,
            end: e,
        };
        if day == 0 {
            install = Some(d);
        } else {
            days.push(d);
        }
    }
    Ok(ReplayResult {
        install,
        days,
        elapsed_ns: start.elapsed().as_nanos() as u64,
        usage: Usage::thread() - usage0,
    })
}

fn io_err(op: &'static str, dir: &Path, name: &CStr) -> ReplayError {
    let e = io::Error::last_os_error();
    ReplayError::Io {
        op,
        path: dir.join(std::ffi::OsStr::from_bytes(name.to_bytes())),
        source: e,
    }
}

fn open_dir(dir: &Path) -> Result<OwnedFd, ReplayError> {
    let c = CString::new(dir.as_os_str().as_encoded_bytes()).unwrap_or_default();
    // SAFETY: a valid C string; the descriptor is owned below.
    let fd = unsafe {
        libc::open(
            c.as_ptr(),
            libc::O_DIRECTORY | libc::O_RDONLY | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(ReplayError::Io {
            op: "open",
            path: dir.to_path_buf(),
            source: io::Error::last_os_error(),
        });
    }
    // SAFETY: fd was just opened and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Runs one phase; the directory is opened for the phase only (an open descriptor would keep
/// the filesystem from unmounting).
fn run_phase(
    ph: &Phase,
    dir: &Path,
    cancel: &AtomicBool,
    data: &[u8],
    buf: &mut [u8],
) -> Result<PhaseResult, ReplayError> {
    let d = open_dir(dir)?;
    let dfd = d.as_raw_fd();
    let t0 = Instant::now();
    for (name, step) in &ph.steps {
        if cancel.load(Ordering::Relaxed) {
            return Err(ReplayError::Interrupted);
        }
        let n = name.as_ptr();
        // SAFETY (all calls below): `n` is a valid C string, `dfd` an open directory, the
        // buffers outlive the calls and the lengths are theirs.
        match *step {
            Step::Create { size, fsync } => {
                let fd = unsafe {
                    libc::openat(
                        dfd,
                        n,
                        libc::O_CREAT | libc::O_EXCL | libc::O_WRONLY | libc::O_CLOEXEC,
                        0o644,
                    )
                };
                if fd < 0 {
                    return Err(io_err("create", dir, name));
                }
                let f = unsafe { OwnedFd::from_raw_fd(fd) };
                let mut left = size;
                while left > 0 {
                    let len = left.min(CHUNK as u64) as usize;
                    let w = unsafe { nocancel::write(fd, data.as_ptr().cast(), len) };
                    if w <= 0 {
                        return Err(io_err("write", dir, name));
                    }
                    left -= w as u64;
                }
                if fsync && unsafe { nocancel::fsync(fd) } != 0 {
                    return Err(io_err("fsync", dir, name));
                }
                drop(f);
            }
            Step::Read { .. } => {
                let fd = unsafe { libc::openat(dfd, n, libc::O_RDONLY | libc::O_CLOEXEC) };
                if fd < 0 {
                    return Err(io_err("open", dir, name));
                }
                let _f = unsafe { OwnedFd::from_raw_fd(fd) };
                loop {
                    let r = unsafe { nocancel::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
                    if r < 0 {
                        return Err(io_err("read", dir, name));
                    }
                    if r == 0 {
                        break;
                    }
                }
            }
            Step::ReadAt { offset, len } => {
                let fd = unsafe { libc::openat(dfd, n, libc::O_RDONLY | libc::O_CLOEXEC) };
                if fd < 0 {
                    return Err(io_err("open", dir, name));
                }
                let _f = unsafe { OwnedFd::from_raw_fd(fd) };
                let mut done = 0u64;
                while done < len {
                    let l = (len - done).min(buf.len() as u64) as usize;
                    let r = unsafe {
                        nocancel::pread(
                            fd,
                            buf.as_mut_ptr().cast(),
                            l,
                            (offset + done) as libc::off_t,
                        )
                    };
                    if r < 0 {
                        return Err(io_err("read", dir, name));
                    }
                    if r == 0 {
                        break;
                    }
                    done += r as u64;
                }
            }
            Step::Fsync => {
                let fd = unsafe { libc::openat(dfd, n, libc::O_RDONLY | libc::O_CLOEXEC) };
                if fd < 0 {
                    return Err(io_err("open", dir, name));
                }
                let _f = unsafe { OwnedFd::from_raw_fd(fd) };
                if unsafe { nocancel::fsync(fd) } != 0 {
                    return Err(io_err("fsync", dir, name));
                }
            }
            Step::Delete => {
                if unsafe { libc::unlinkat(dfd, n, 0) } != 0 {
                    return Err(io_err("unlink", dir, name));
                }
            }
            Step::Mkdir => {
                if unsafe { libc::mkdirat(dfd, n, 0o755) } != 0 {
                    return Err(io_err("mkdir", dir, name));
                }
            }
            Step::Rmdir => {
                if unsafe { libc::unlinkat(dfd, n, libc::AT_REMOVEDIR) } != 0 {
                    return Err(io_err("rmdir", dir, name));
                }
            }
        }
    }
    Ok(PhaseResult {
        kind: ph.kind,
        day: ph.day,
        elapsed_ns: t0.elapsed().as_nanos() as u64,
        files: ph.files,
        read_bytes: ph.read_bytes,
        write_bytes: ph.write_bytes,
        steps: ph.steps.len() as u64,
    })
}

/// Removes what the replay leaves at its end, deepest first; after a failure (`stopped`),
/// whatever any phase made, so that a replay that stopped early leaves nothing either.
fn clean_up(program: &Program, dir: &Path, stopped: bool) -> Result<(), ReplayError> {
    let d = open_dir(dir)?;
    let mut first: Option<ReplayError> = None;
    let mut names: Vec<(&CString, bool)> = program.leftover.iter().map(|(n, d)| (n, *d)).collect();
    for ph in program.phases.iter().filter(|_| stopped) {
        for (n, s) in &ph.steps {
            match s {
                Step::Create { .. } => names.push((n, false)),
                Step::Mkdir => names.push((n, true)),
                _ => {}
            }
        }
    }
    // Descending byte order puts every name before its parent (a descendant is its
    // ancestor's name and more) and keeps a directory's entries together, as `rm -r` goes.
    names.sort_by(|a, b| b.0.cmp(a.0));
    names.dedup();
    for (n, is_dir) in names {
        let flag = if is_dir { libc::AT_REMOVEDIR } else { 0 };
        // SAFETY: valid C string and open directory.
        if unsafe { libc::unlinkat(d.as_raw_fd(), n.as_ptr(), flag) } != 0 {
            let e = io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::ENOENT) && first.is_none() {
                first = Some(ReplayError::Io {
                    op: "remove",
                    path: dir.join(std::ffi::OsStr::from_bytes(n.as_bytes())),
                    source: e,
                });
            }
        }
    }
    first.map_or(Ok(()), Err)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::{check, Lists};
    use crate::list::{parse, Role};

    struct Sync;
    impl DayEnd for Sync {
        fn end_of_day(&mut self, _: &Path, _: u32) -> Result<DayEndReport, String> {
            Ok(DayEndReport::default())
        }
    }

    #[test]
    fn a_replay_makes_reads_and_removes_its_files() {
        let dir = tempfile::tempdir().unwrap();
        let l = |t: &str, r| Some(parse(Path::new("x"), t, r).unwrap());
        let lists = Lists {
            install: l("a/b, 3000000, c\na/c, 10, cf\n", Role::Plain),
            boot: l("a/b, 3000000, s\n", Role::Plain),
            days: l(
                "[day 1]\nd/e, 5, c\na/c, 4, r, 6\n[day 2]\nd/e, 5, d\n",
                Role::Days,
            ),
        };
        let p = check(&lists).unwrap();
        let r = replay(&p, dir.path(), &AtomicBool::new(false), &mut Sync).unwrap();
        assert_eq!(r.days.len(), 2);
        let inst = r.install.as_ref().unwrap();
        assert_eq!(inst.phases[0].write_bytes, 3000010);
        assert_eq!(r.days[0].phases[0].read_bytes, 3000000);
        assert_eq!(r.days[0].phases[1].read_bytes, 4);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    struct Fails;
    impl DayEnd for Fails {
        fn end_of_day(&mut self, _: &Path, day: u32) -> Result<DayEndReport, String> {
            if day == 1 {
                Err("no".into())
            } else {
                Ok(DayEndReport::default())
            }
        }
    }

    #[test]
    fn a_replay_that_stops_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let l = |t: &str, r| Some(parse(Path::new("x"), t, r).unwrap());
        let lists = Lists {
            install: l(
                "a/b, 10, c
",
                Role::Plain,
            ),
            days: l(
                "[day 1]
d/e/f, 5, c
a/b, 10, d
[day 2]
d/e/g, 5, c
",
                Role::Days,
            ),
            ..Lists::default()
        };
        let p = check(&lists).unwrap();
        let e = replay(&p, dir.path(), &AtomicBool::new(false), &mut Fails).unwrap_err();
        assert!(matches!(e, ReplayError::DayEnd { day: 1, .. }), "{e}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        let e = replay(&p, dir.path(), &AtomicBool::new(true), &mut Sync).unwrap_err();
        assert!(e.is_interrupted());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        // A name of the replay's that exists already is refused, and kept.
        std::fs::create_dir(dir.path().join("d")).unwrap();
        std::fs::write(dir.path().join("d/mine"), "x").unwrap();
        let e = replay(&p, dir.path(), &AtomicBool::new(false), &mut Sync).unwrap_err();
        assert!(e.is_bad_input(), "{e}");
        assert!(dir.path().join("d/mine").exists());
        assert!(!dir.path().join("a").exists());
    }
}
