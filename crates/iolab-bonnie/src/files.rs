//! The file phases, with bonnie++ 2.00's calls (docs/bonnie.md). Names are made before the
//! timing starts: `%010x` (the creation index) followed by 0–12 random alphanumerics for the
//! sequential phases, the random characters first for the random ones. Files are spread in
//! consecutive runs over `dirs` subdirectories `00000`, `00001`, … (the top directory when
//! there is one).
//!
//! | phase | timed, per file | timed at the end |
//! |---|---|---|
//! | seq_create / ran_create | `openat(O_CREAT\|O_EXCL\|O_WRONLY)`, the data in `file_chunk_size` `write`s, `close` — in creation order | `sync()` |
//! | seq_stat | `readdir`, `newfstatat`, and when it has data `openat(O_RDONLY)`, `read`s, `close` — in `readdir` order | — |
//! | seq_del | `readdir`, `unlinkat` — in `readdir` order | `rmdir`s, `sync()` |
//! | ran_stat | `newfstatat` (+ data) in a shuffled order | — |
//! | ran_del | `unlinkat` in another shuffled order | `rmdir`s, `sync()` |
//!
//! iolab names files relative to a descriptor of their directory (`openat`, `fstatat`,
//! `unlinkat`) where bonnie++ changes the working directory: a process's working directory
//! is shared by all its threads.

use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::RawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use iolab_engine::buffer::AlignedBuf;
use iolab_engine::stats::LatencyHistogram;
use iolab_engine::EngineError;
use iolab_util::rng::Rng;

use crate::error::BonnieError;
use crate::io::{fsync, read_full, write_full, Fd};
use crate::phase::Phase;
use crate::run::{io_err, Started, Worker};

const NAME_CHARS: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
/// bonnie++'s `RandExtraLen`.
const RANDOM_CHARS: u64 = 12;

/// The files' names, NUL-terminated in one buffer, and the directory of each.
struct Names {
    buf: Vec<u8>,
    start: Vec<usize>,
    per_dir: u64,
}

impl Names {
    fn new(files: u64, dirs: u32, random_first: bool, rng: &mut Rng) -> Names {
        let mut buf = Vec::with_capacity(files as usize * 18);
        let mut start = Vec::with_capacity(files as usize);
        let mut extra = [0u8; RANDOM_CHARS as usize];
        for i in 0..files {
            let len = rng.below(RANDOM_CHARS + 1) as usize;
            for c in &mut extra[..len] {
                *c = NAME_CHARS[rng.below(NAME_CHARS.len() as u64) as usize];
            }
            start.push(buf.len());
            let index = format!("{i:010x}");
            if random_first {
                buf.extend_from_slice(&extra[..len]);
                buf.extend_from_slice(index.as_bytes());
            } else {
                buf.extend_from_slice(index.as_bytes());
                buf.extend_from_slice(&extra[..len]);
            }
            buf.push(0);
        }
        Names {
            buf,
            start,
            per_dir: files.div_ceil(u64::from(dirs)).max(1),
        }
    }

    #[inline]
    fn name(&self, i: usize) -> &CStr {
        // Each name ends with the one NUL pushed after it and has none inside.
        CStr::from_bytes_until_nul(&self.buf[self.start[i]..]).unwrap_or_default()
    }

    #[inline]
    fn dir(&self, i: usize) -> usize {
        (i as u64 / self.per_dir) as usize
    }
}

/// The directories of one create/stat/delete round, opened before the timing starts.
struct Dirs {
    top: PathBuf,
    /// The directories that hold files (the top one, or its subdirectories), in order.
    paths: Vec<CString>,
    fds: Vec<Fd>,
}

impl Dirs {
    fn make(w: &mut Worker<'_, '_>) -> Result<Dirs, BonnieError> {
        let top = w.shared.dir.clone();
        let plan = w.shared.plan;
        std::fs::create_dir(&top)
            .map_err(|e| iolab_engine::files::create_error(&top, &plan.dir, e))?;
        w.made_dir = true;
        let mut dirs: Vec<PathBuf> = Vec::new();
        if plan.dirs > 1 {
            for d in 0..plan.dirs {
                let p = top.join(format!("{d:05}"));
                std::fs::create_dir(&p).map_err(|e| io_err("mkdir", &p, e))?;
                dirs.push(p);
            }
        } else {
            dirs.push(top.clone());
        }
        let mut paths = Vec::with_capacity(dirs.len());
        let mut fds = Vec::with_capacity(dirs.len());
        for p in dirs {
            let c = cpath(&p)?;
            fds.push(
                Fd::open(&c, libc::O_RDONLY | libc::O_DIRECTORY)
                    .map_err(|e| io_err("open", &p, e))?,
            );
            paths.push(c);
        }
        Ok(Dirs { top, paths, fds })
    }

    /// Closes the descriptors and removes the (empty) directories: inside the delete
    /// phases' timing, as bonnie++'s `rmdir`s are.
    fn remove(self) -> Result<(), BonnieError> {
        let Dirs { top, paths, fds } = self;
        for fd in fds {
            fd.close().map_err(|e| io_err("close", &top, e))?;
        }
        if paths.len() > 1 {
            for p in &paths {
                // SAFETY: a NUL-terminated path.
                if unsafe { libc::rmdir(p.as_ptr()) } != 0 {
                    let path = PathBuf::from(std::ffi::OsStr::from_bytes(p.as_bytes()));
                    return Err(io_err("rmdir", &path, io::Error::last_os_error()));
                }
            }
        }
        std::fs::remove_dir(&top).map_err(|e| io_err("rmdir", &top, e))
    }
}

fn cpath(p: &Path) -> Result<CString, BonnieError> {
    CString::new(p.as_os_str().as_bytes()).map_err(|_| {
        EngineError::Workload(format!("{} has a NUL byte in its name", p.display())).into()
    })
}

/// bonnie++'s global `sync()`, which ends the create and delete phases.
fn sync_all() {
    // SAFETY: sync takes no arguments and cannot fail.
    unsafe { libc::sync() };
}

/// Runs the six file phases.
pub(crate) fn run(w: &mut Worker<'_, '_>) -> Result<(), BonnieError> {
    let plan = w.plan().clone();
    let mut rng = Rng::stream(plan.seed, 3);
    let mut buf = AlignedBuf::zeroed(plan.file_chunk_size)
        .map_err(|e| EngineError::alloc("a file chunk", e))?;
    let buf = &mut buf.as_mut_slice()[..plan.file_chunk_size as usize];

    let names = Names::new(plan.files, plan.dirs, false, &mut rng);
    let dirs = Dirs::make(w)?;
    create(w, Phase::SeqCreate, &names, &dirs, buf, &mut rng)?;
    let t = by_readdir(w, Phase::SeqStat, &dirs, buf)?;
    w.finish(Phase::SeqStat, t.0, t.1, t.2, t.3);
    let t = by_readdir(w, Phase::SeqDel, &dirs, buf)?;
    dirs.remove()?;
    sync_all();
    w.finish(Phase::SeqDel, t.0, t.1, t.2, t.3);

    let names = Names::new(plan.files, plan.dirs, true, &mut rng);
    let dirs = Dirs::make(w)?;
    create(w, Phase::RanCreate, &names, &dirs, buf, &mut rng)?;
    let order = shuffled(plan.files, &mut rng);
    let t = by_name(w, Phase::RanStat, &names, &dirs, &order, buf)?;
    w.finish(Phase::RanStat, t.0, t.1, t.2, t.3);
    let order = shuffled(plan.files, &mut rng);
    let t = by_name(w, Phase::RanDel, &names, &dirs, &order, buf)?;
    dirs.remove()?;
    sync_all();
    w.finish(Phase::RanDel, t.0, t.1, t.2, t.3);
    w.made_dir = false;
    Ok(())
}

/// A timed phase whose end the caller decides: its start, operations, bytes and latencies.
struct Timed(Started, u64, u64, LatencyHistogram);

/// 0..n in a seeded Fisher–Yates order.
fn shuffled(n: u64, rng: &mut Rng) -> Vec<u32> {
    let mut v: Vec<u32> = (0..n as u32).collect();
    for i in (1..v.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        v.swap(i, j);
    }
    v
}

fn create(
    w: &mut Worker<'_, '_>,
    phase: Phase,
    names: &Names,
    dirs: &Dirs,
    buf: &[u8],
    rng: &mut Rng,
) -> Result<(), BonnieError> {
    let plan = w.plan().clone();
    let clock = w.clock();
    let (min, max) = (plan.min_file_size, plan.max_file_size);
    let chunk = plan.file_chunk_size as usize;
    let mut lat = LatencyHistogram::default();
    let mut bytes = 0u64;
    let s = w.start();
    for i in 0..plan.files as usize {
        let size = if max == 0 {
            0
        } else if min < max {
            min + rng.below(max - min + 1)
        } else {
            max
        };
        let t0 = clock.ticks();
        let d = names.dir(i);
        let failed = |op, e| io_err(op, &dirs_path(dirs, d, names.name(i)), e);
        let fd = Fd::openat(
            dirs.fds[d].0,
            names.name(i),
            libc::O_CREAT | libc::O_EXCL | libc::O_WRONLY,
            0o600,
        )
        .map_err(|e| failed("create", e))?;
        let mut left = size as usize;
        while left > 0 {
            let n = left.min(chunk);
            write_full(fd.0, &buf[..n]).map_err(|e| failed("write", e))?;
            left -= n;
        }
        if plan.sync {
            // bonnie++ -b: the file, then its directory, before the close.
            fsync(fd.0).map_err(|e| failed("fsync", e))?;
            fsync(dirs.fds[d].0).map_err(|e| failed("fsync (directory)", e))?;
        }
        fd.close().map_err(|e| failed("close", e))?;
        lat.record(clock.ns(clock.ticks() - t0));
        bytes += size;
        w.tick()?;
    }
    sync_all();
    w.finish(phase, s, plan.files, bytes, lat);
    Ok(())
}

fn dirs_path(dirs: &Dirs, d: usize, name: &CStr) -> PathBuf {
    PathBuf::from(std::ffi::OsStr::from_bytes(dirs.paths[d].as_bytes()))
        .join(std::ffi::OsStr::from_bytes(name.to_bytes()))
}

/// `fstatat`, and the file's data read in chunks when it has any: bonnie++'s `stat_file`.
/// Returns the bytes read.
#[inline]
fn stat_file(dir: RawFd, name: &CStr, buf: &mut [u8]) -> Result<u64, (&'static str, io::Error)> {
    // SAFETY: statx-compatible buffer zeroed; the name is NUL-terminated.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstatat(dir, name.as_ptr(), &mut st, 0) } != 0 {
        return Err(("stat", io::Error::last_os_error()));
    }
    let size = st.st_size as u64;
    if size > 0 {
        let fd = Fd::openat(dir, name, libc::O_RDONLY, 0).map_err(|e| ("open", e))?;
        let mut left = size as usize;
        while left > 0 {
            let n = left.min(buf.len());
            read_full(fd.0, &mut buf[..n]).map_err(|e| ("read", e))?;
            left -= n;
        }
        fd.close().map_err(|e| ("close", e))?;
    }
    Ok(size)
}

/// What the stat and delete phases do to one file: `unlinkat`, or [`stat_file`]. Returns the
/// bytes read.
#[inline]
fn visit(
    delete: bool,
    sync: bool,
    dir: RawFd,
    name: &CStr,
    buf: &mut [u8],
) -> Result<u64, (&'static str, io::Error)> {
    if !delete {
        return stat_file(dir, name, buf);
    }
    // SAFETY: a NUL-terminated name relative to the open directory.
    if unsafe { libc::unlinkat(dir, name.as_ptr(), 0) } != 0 {
        return Err(("unlink", io::Error::last_os_error()));
    }
    // bonnie++ -b: the directory after each unlink.
    if sync {
        fsync(dir).map_err(|e| ("fsync (directory)", e))?;
    }
    Ok(0)
}

/// The sequential stat and delete phases: each directory in turn, its entries in `readdir`
/// order; a timed operation runs from the `readdir` that finds a file to the end of what is
/// done to it.
fn by_readdir(
    w: &mut Worker<'_, '_>,
    phase: Phase,
    dirs: &Dirs,
    buf: &mut [u8],
) -> Result<Timed, BonnieError> {
    let plan = w.plan().clone();
    let clock = w.clock();
    let delete = phase == Phase::SeqDel;
    let mut lat = LatencyHistogram::default();
    let (mut count, mut bytes) = (0u64, 0u64);
    let s = w.start();
    for (d, path) in dirs.paths.iter().enumerate() {
        let shown = || PathBuf::from(std::ffi::OsStr::from_bytes(path.as_bytes()));
        // SAFETY: a NUL-terminated path; the stream is closed below on every path.
        let stream = unsafe { libc::opendir(path.as_ptr()) };
        if stream.is_null() {
            return Err(io_err("opendir", &shown(), io::Error::last_os_error()));
        }
        let dfd = unsafe { libc::dirfd(stream) };
        let result = (|| -> Result<(), BonnieError> {
            loop {
                let t0 = clock.ticks();
                // SAFETY: the stream is open; the entry is valid until the next readdir.
                let entry = unsafe { libc::readdir(stream) };
                if entry.is_null() {
                    return Ok(());
                }
                let name = unsafe { CStr::from_ptr((*entry).d_name.as_ptr()) };
                if name.to_bytes().first() == Some(&b'.') {
                    continue;
                }
                bytes += visit(delete, plan.sync, dfd, name, buf)
                    .map_err(|(op, e)| io_err(op, &dirs_path(dirs, d, name), e))?;
                lat.record(clock.ns(clock.ticks() - t0));
                count += 1;
                w.tick()?;
            }
        })();
        // SAFETY: opened above, closed once.
        unsafe { libc::closedir(stream) };
        result?;
    }
    if count != plan.files {
        return Err(BonnieError::Miscounted {
            dir: dirs.top.clone(),
            expected: plan.files,
            found: count,
        });
    }
    Ok(Timed(s, count, bytes, lat))
}

/// The random stat and delete phases: the files in `order`.
fn by_name(
    w: &mut Worker<'_, '_>,
    phase: Phase,
    names: &Names,
    dirs: &Dirs,
    order: &[u32],
    buf: &mut [u8],
) -> Result<Timed, BonnieError> {
    let clock = w.clock();
    let delete = phase == Phase::RanDel;
    let sync = w.plan().sync;
    let mut lat = LatencyHistogram::default();
    let mut bytes = 0u64;
    let s = w.start();
    for &i in order {
        let i = i as usize;
        let (d, name) = (names.dir(i), names.name(i));
        let dfd = dirs.fds[d].0;
        let t0 = clock.ticks();
        bytes += visit(delete, sync, dfd, name, buf)
            .map_err(|(op, e)| io_err(op, &dirs_path(dirs, d, name), e))?;
        lat.record(clock.ns(clock.ticks() - t0));
        w.tick()?;
    }
    Ok(Timed(s, order.len() as u64, bytes, lat))
}
