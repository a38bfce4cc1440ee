//! One mdtest run on this rank: mdtest's directory layout and names, each phase started at
//! a barrier and timed from its release to this rank's last item, stonewalling as mdtest
//! does it, and a 10 ms progress timeline per phase for the aggregates.
//!
//! Layout (mdtest 4, flat tree, iteration 0): `DIR/test-dir.0-0/` holds `mdtest_tree.0/`
//! shared by every rank, or with `unique_dir` one `mdtest_tree.R.0/` per rank R. Items are
//! `file.mdtest.R.I` and `dir.mdtest.R.I`. With stride S among N ranks, rank R creates its
//! items in tree (R+S)%N (a directory per rank) and names them after itself; it stats the
//! items of rank (R+S)%N in tree (R+2S)%N, reads those of (R+2S)%N in (R+3S)%N and removes
//! those of (R+3S)%N in (R+4S)%N — each time the ones the rank S places on made.

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::Instant;

use iolab_engine::usage::Usage;
use iolab_kind::{Ranks, RunCtx, RunFailure};
use serde::Serialize;

use crate::options::MdtestPlan;

/// Width of a phase's progress buckets.
pub const BUCKET_NS: u64 = 10_000_000;

/// mdtest's test directory for iteration 0.
pub const TEST_DIR: &str = "test-dir.0-0";

/// A phase of a run, in the order a run does them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Phase {
    DirCreate,
    DirStat,
    DirRemove,
    Create,
    Stat,
    Read,
    Remove,
}

impl Phase {
    pub const ALL: [Phase; 7] = [
        Phase::DirCreate,
        Phase::DirStat,
        Phase::DirRemove,
        Phase::Create,
        Phase::Stat,
        Phase::Read,
        Phase::Remove,
    ];

    /// The metric prefix and series name.
    pub fn name(self) -> &'static str {
        [
            "dir_create",
            "dir_stat",
            "dir_remove",
            "create",
            "stat",
            "read",
            "remove",
        ][self as usize]
    }

    /// mdtest's name in its summary.
    pub fn title(self) -> &'static str {
        [
            "Directory creation",
            "Directory stat",
            "Directory removal",
            "File creation",
            "File stat",
            "File read",
            "File removal",
        ][self as usize]
    }

    fn dirs(self) -> bool {
        matches!(self, Phase::DirCreate | Phase::DirStat | Phase::DirRemove)
    }

    fn creates(self) -> bool {
        matches!(self, Phase::DirCreate | Phase::Create)
    }

    /// How many strides on the phase's names are (mdtest's mk/stat/read/rm names).
    fn name_shift(self) -> u64 {
        match self {
            Phase::DirCreate | Phase::Create => 0,
            Phase::DirStat | Phase::Stat => 1,
            Phase::Read => 2,
            Phase::DirRemove | Phase::Remove => 3,
        }
    }

    /// How many strides on the phase's directory is with a directory per rank (mdtest's
    /// chdir/stat/read/rm directories: one more than the names').
    fn dir_shift(self) -> u64 {
        match self {
            Phase::Read => 3,
            Phase::DirRemove | Phase::Remove => 4,
            p => p.name_shift() + 1,
        }
    }

    /// Whether the phase runs in `plan`.
    pub fn planned(self, plan: &MdtestPlan) -> bool {
        let kind = if self.dirs() { plan.dirs } else { plan.files };
        kind && match self {
            Phase::DirCreate | Phase::Create => plan.create,
            Phase::DirStat | Phase::Stat => plan.stat,
            Phase::Read => plan.read,
            Phase::DirRemove | Phase::Remove => plan.remove,
        }
    }
}

/// One phase on this rank. Times are from the release of the phase's starting barrier.
#[derive(Debug, Clone, Serialize)]
pub struct PhaseResult {
    pub phase: Phase,
    pub items: u64,
    /// Bytes written (create) or read (read).
    pub bytes: u64,
    /// When the rank started the phase: the release (0), which is every rank's origin.
    pub start_ns: u64,
    /// When the last item ended.
    pub end_ns: u64,
    /// Items done when the stonewall hit, and when (create phases with a stonewall that
    /// hit).
    pub stonewall: Option<(u64, u64)>,
    /// Items done in each [`BUCKET_NS`] from the release.
    pub buckets: Vec<u64>,
}

impl PhaseResult {
    pub fn ops_per_s(&self) -> f64 {
        iolab_kind::record::per_second(self.items as f64, self.end_ns - self.start_ns)
    }
}

/// What a run gives back on this rank.
#[derive(Debug, Clone, Serialize)]
pub struct MdtestResult {
    pub rank: usize,
    pub ranks: usize,
    /// The stride used.
    pub stride: u64,
    pub items: u64,
    pub phases: Vec<PhaseResult>,
    /// The timed region.
    pub elapsed_ns: u64,
    #[serde(skip)]
    pub usage: Usage,
    pub test_dir: PathBuf,
}

/// Why a run failed on this rank.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MdtestError {
    #[error("{what} {}: {err}", path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        err: String,
        errno: i32,
    },
    #[error("{0}")]
    Ranks(String),
    #[error("interrupted")]
    Interrupted,
}

impl MdtestError {
    fn io(what: &'static str, path: PathBuf) -> MdtestError {
        let e = std::io::Error::last_os_error();
        MdtestError::Io {
            what,
            path,
            err: e.to_string(),
            errno: e.raw_os_error().unwrap_or(0),
        }
    }

    /// What to do about it.
    pub fn hint(&self) -> Option<&'static str> {
        match self {
            MdtestError::Io { errno, .. } if *errno == libc::ENOSPC => Some(
                "the filesystem is full (blocks or inodes): use fewer items or a larger target",
            ),
            MdtestError::Io { errno, .. } if *errno == libc::ENOENT => Some(
                "an item another rank was to make is missing: run create before stat, read or \
                 remove, with the same items, ranks and stride",
            ),
            MdtestError::Io { errno, .. } if *errno == libc::EEXIST => Some(
                "items of an earlier run are still there: remove the test directory, or run \
                 the remove phase",
            ),
            _ => None,
        }
    }
}

/// The NUL-ended name of one item, rewritten in place for each item: the hot loops allocate
/// nothing.
struct Names {
    buf: Vec<u8>,
    prefix: usize,
}

impl Names {
    fn new(prefix: &str) -> Names {
        let mut buf = Vec::with_capacity(prefix.len() + 24);
        buf.extend_from_slice(prefix.as_bytes());
        Names {
            prefix: buf.len(),
            buf,
        }
    }

    fn item(&mut self, mut i: u64) -> *const libc::c_char {
        self.buf.truncate(self.prefix);
        let mut digits = [0u8; 20];
        let mut n = digits.len();
        loop {
            n -= 1;
            digits[n] = b'0' + (i % 10) as u8;
            i /= 10;
            if i == 0 {
                break;
            }
        }
        self.buf.extend_from_slice(&digits[n..]);
        self.buf.push(0);
        self.buf.as_ptr().cast()
    }

    fn text(&self) -> &str {
        std::str::from_utf8(&self.buf[..self.buf.len().saturating_sub(1)]).unwrap_or("")
    }
}

fn cstr(p: &Path) -> CString {
    CString::new(p.as_os_str().as_bytes()).unwrap_or_default()
}

/// `mkdir`, an existing directory being fine (mdtest warns and goes on).
fn make_dir(p: &Path) -> Result<(), MdtestError> {
    // SAFETY: a NUL-ended path.
    if unsafe { libc::mkdir(cstr(p).as_ptr(), 0o775) } == 0
        || std::io::Error::last_os_error().raw_os_error() == Some(libc::EEXIST)
    {
        Ok(())
    } else {
        Err(MdtestError::io("cannot make the directory", p.into()))
    }
}

fn open_dir(p: &Path) -> Result<OwnedFd, MdtestError> {
    // SAFETY: a NUL-ended path; the descriptor is owned from here.
    let fd = unsafe {
        libc::open(
            cstr(p).as_ptr(),
            libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(MdtestError::io("cannot open the directory", p.into()));
    }
    // SAFETY: fd was just opened and is owned by nothing else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn synced(r: Result<(), RunFailure>) -> Result<(), MdtestError> {
    r.map_err(|f| MdtestError::Ranks(f.message))
}

/// The tree directory of rank `r`.
fn tree(test_dir: &Path, unique: bool, r: u64) -> PathBuf {
    if unique {
        test_dir.join(format!("mdtest_tree.{r}.0"))
    } else {
        test_dir.join("mdtest_tree.0")
    }
}

/// Where one run's phases work on this rank, made before its timed region: the test
/// directory and the trees, the stride, the buffer of the files' data. IO500 runs the phases
/// of its two mdtest workloads apart, between other workloads' phases, through it.
pub struct Layout {
    pub test_dir: PathBuf,
    rank: u64,
    size: u64,
    /// The stride used.
    pub stride: u64,
    buf: Vec<u8>,
}

impl Layout {
    /// Makes the test directory and this rank's tree, untimed as mdtest's tree creation is
    /// apart from the phases (every rank calls it: it syncs).
    pub fn make(plan: &MdtestPlan, ranks: &dyn Ranks) -> Result<Layout, MdtestError> {
        let (rank, size) = (ranks.rank() as u64, ranks.size().max(1) as u64);
        let stride = plan.stride.unwrap_or(ranks.ranks_per_node() as u64) % size;
        let test_dir = plan.dir.join(TEST_DIR);
        if rank == 0 {
            make_dir(&test_dir)?;
        }
        synced(ranks.barrier())?;
        if plan.unique_dir || rank == 0 {
            make_dir(&tree(&test_dir, plan.unique_dir, rank))?;
        }
        synced(ranks.barrier())?;
        Ok(Layout {
            test_dir,
            rank,
            size,
            stride,
            buf: vec![0x5a_u8; plan.write_bytes.max(plan.read_bytes) as usize],
        })
    }

    /// One phase on this rank, `items` items of it (a create's count when it follows one:
    /// stonewalling may have changed it), between a barrier at its start and one at its
    /// end, inside the caller's timed region.
    pub fn phase(
        &mut self,
        plan: &MdtestPlan,
        phase: Phase,
        run: &mut RunCtx<'_>,
        items: u64,
    ) -> Result<PhaseResult, MdtestError> {
        let (rank, size, stride) = (self.rank, self.size, self.stride);
        let dir = if plan.unique_dir {
            tree(
                &self.test_dir,
                true,
                (rank + phase.dir_shift() * stride) % size,
            )
        } else {
            tree(&self.test_dir, false, 0)
        };
        let owner = (rank + phase.name_shift() * stride) % size;
        let kind = if phase.dirs() { "dir" } else { "file" };
        let names = Names::new(&format!("{kind}.mdtest.{owner}."));
        run_phase(phase, plan, run, &dir, names, &mut self.buf, items)
    }

    /// Removes the trees, then the test directory (mdtest's tree removal, after the remove
    /// phases; every rank calls it: it syncs).
    pub fn remove(&self, plan: &MdtestPlan, ranks: &dyn Ranks) -> Result<(), MdtestError> {
        if plan.unique_dir || self.rank == 0 {
            remove_dir(&tree(&self.test_dir, plan.unique_dir, self.rank))?;
        }
        synced(ranks.barrier())?;
        if self.rank == 0 {
            remove_dir(&self.test_dir)?;
        }
        Ok(())
    }
}

/// Runs `plan` on this rank (`run.ranks`), calling the hooks around the timed region.
pub fn run_mdtest(plan: &MdtestPlan, run: &mut RunCtx<'_>) -> Result<MdtestResult, MdtestError> {
    let ranks = run.ranks;
    let mut layout = Layout::make(plan, ranks)?;
    run.hooks.run_files(vec![layout.test_dir.clone()]);
    run.hooks.timed_start();
    let started = Instant::now();
    let usage = Usage::thread();
    let mut items = plan.items;
    let mut phases = Vec::new();
    for phase in Phase::ALL.into_iter().filter(|p| p.planned(plan)) {
        if matches!(phase, Phase::DirStat | Phase::Stat | Phase::Read) && !phases.is_empty() {
            // Between the previous phase's closing barrier and this one's opening barrier:
            // caches are dropped here when the run drops them.
            run.hooks.between_phases();
        }
        let r = layout.phase(plan, phase, run, items)?;
        if phase.creates() {
            // Later phases do what the creates did (stonewalling may have changed it).
            items = r.items;
        }
        phases.push(r);
    }
    let elapsed_ns = started.elapsed().as_nanos() as u64;
    let usage = Usage::thread() - usage;
    run.hooks.timed_end();
    if plan.remove {
        layout.remove(plan, ranks)?;
    }
    Ok(MdtestResult {
        rank: layout.rank as usize,
        ranks: layout.size as usize,
        stride: layout.stride,
        items: plan.items,
        phases,
        elapsed_ns,
        usage,
        test_dir: layout.test_dir,
    })
}

fn remove_dir(p: &Path) -> Result<(), MdtestError> {
    std::fs::remove_dir(p).map_err(|e| MdtestError::Io {
        what: "cannot remove the directory",
        path: p.into(),
        err: e.to_string(),
        errno: e.raw_os_error().unwrap_or(0),
    })
}

/// One phase: a barrier, then `items` items (fewer when a stonewall hits), then a barrier.
fn run_phase(
    phase: Phase,
    plan: &MdtestPlan,
    run: &mut RunCtx<'_>,
    dir: &Path,
    mut names: Names,
    buf: &mut [u8],
    items: u64,
) -> Result<PhaseResult, MdtestError> {
    let ranks = run.ranks;
    synced(ranks.barrier())?;
    let t0 = Instant::now();
    // The phase's clock starts at the release, on every rank: their times align.
    let start_ns = 0;
    let dfd = open_dir(dir)?;
    let mut buckets: Vec<u64> = Vec::with_capacity(1024);
    let wall = plan
        .stonewall
        .filter(|_| phase.creates())
        .map(|d| d.as_nanos() as u64);
    let mut st = Work {
        phase,
        plan,
        dfd: dfd.as_raw_fd(),
        dir,
        buf,
        bytes: 0,
    };
    let mut done = 0;
    let mut stonewall = None;
    while done < items {
        if run.cancel.load(Ordering::Relaxed) {
            return Err(MdtestError::Interrupted);
        }
        st.item(&mut names, done)?;
        done += 1;
        let now = t0.elapsed().as_nanos() as u64;
        count(&mut buckets, now);
        if wall.is_some_and(|w| now > w) {
            stonewall = Some((done, now));
            break;
        }
    }
    let mut items_done = done;
    if wall.is_some() {
        // mdtest: every rank goes on to the most items any rank made by the stonewall (all
        // of them when none was stopped), without a stonewall.
        let most = ranks
            .sync_max(done)
            .map_err(|f| MdtestError::Ranks(f.message))?;
        while items_done < most {
            if run.cancel.load(Ordering::Relaxed) {
                return Err(MdtestError::Interrupted);
            }
            st.item(&mut names, items_done)?;
            items_done += 1;
            count(&mut buckets, t0.elapsed().as_nanos() as u64);
        }
    }
    let end_ns = t0.elapsed().as_nanos() as u64;
    let bytes = st.bytes;
    drop(dfd);
    synced(ranks.barrier())?;
    Ok(PhaseResult {
        phase,
        items: items_done,
        bytes,
        start_ns,
        end_ns,
        stonewall: stonewall.filter(|_| wall.is_some()),
        buckets,
    })
}

/// One more item done at `now_ns` from the release.
fn count(buckets: &mut Vec<u64>, now_ns: u64) {
    let b = (now_ns / BUCKET_NS) as usize;
    if b >= buckets.len() {
        buckets.resize(b + 1, 0);
    }
    buckets[b] += 1;
}

/// What the items of one phase are done with.
struct Work<'a> {
    phase: Phase,
    plan: &'a MdtestPlan,
    dfd: libc::c_int,
    dir: &'a Path,
    buf: &'a mut [u8],
    bytes: u64,
}

impl Work<'_> {
    /// Item `i`: the system calls mdtest makes for it, relative to the phase's directory.
    fn item(&mut self, names: &mut Names, i: u64) -> Result<(), MdtestError> {
        let name = names.item(i);
        let fail = |what, names: &Names| MdtestError::io(what, self.dir.join(names.text()));
        // SAFETY (every call below): `name` is NUL-ended and lives in `names` until the next
        // item; descriptors are this function's own; `buf` is as long as the lengths given.
        match self.phase {
            Phase::DirCreate => {
                if unsafe { libc::mkdirat(self.dfd, name, 0o775) } != 0 {
                    return Err(fail("cannot create the directory", names));
                }
            }
            Phase::DirStat | Phase::Stat => {
                let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
                if unsafe { libc::fstatat(self.dfd, name, st.as_mut_ptr(), 0) } != 0 {
                    return Err(fail("cannot stat", names));
                }
            }
            Phase::DirRemove => {
                if unsafe { libc::unlinkat(self.dfd, name, libc::AT_REMOVEDIR) } != 0 {
                    return Err(fail("cannot remove the directory", names));
                }
            }
            Phase::Remove => {
                if unsafe { libc::unlinkat(self.dfd, name, 0) } != 0 {
                    return Err(fail("cannot remove the file", names));
                }
            }
            Phase::Create => {
                let fd = unsafe {
                    libc::openat(
                        self.dfd,
                        name,
                        libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC,
                        0o664,
                    )
                };
                if fd < 0 {
                    return Err(fail("cannot create the file", names));
                }
                let n = self.plan.write_bytes as usize;
                let ok = n == 0
                    || (unsafe { libc::pwrite(fd, self.buf.as_ptr().cast(), n, 0) } == n as isize
                        && (!self.plan.sync || unsafe { libc::fsync(fd) } == 0));
                let err = (!ok).then(|| fail("cannot write the file", names));
                unsafe { libc::close(fd) };
                if let Some(e) = err {
                    return Err(e);
                }
                self.bytes += n as u64;
            }
            Phase::Read => {
                let fd = unsafe { libc::openat(self.dfd, name, libc::O_RDONLY | libc::O_CLOEXEC) };
                if fd < 0 {
                    return Err(fail("cannot open the file", names));
                }
                let n = self.plan.read_bytes as usize;
                let got = if n == 0 {
                    0
                } else {
                    unsafe { libc::pread(fd, self.buf.as_mut_ptr().cast(), n, 0) }
                };
                let err = if got < 0 {
                    Some(fail("cannot read the file", names))
                } else if got as usize != n {
                    Some(MdtestError::Io {
                        what: "short read of",
                        path: self.dir.join(names.text()),
                        err: format!("{got} of {n} bytes"),
                        errno: 0,
                    })
                } else {
                    None
                };
                unsafe { libc::close(fd) };
                if let Some(e) = err {
                    return Err(e);
                }
                self.bytes += n as u64;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_rewritten_in_place() {
        let mut n = Names::new("file.mdtest.3.");
        n.item(0);
        assert_eq!(n.text(), "file.mdtest.3.0");
        let p = n.buf.as_ptr();
        n.item(1234567);
        assert_eq!(n.text(), "file.mdtest.3.1234567");
        n.item(u64::MAX);
        assert_eq!(n.text(), format!("file.mdtest.3.{}", u64::MAX));
        assert_eq!(p, n.buf.as_ptr(), "no allocation");
    }

    #[test]
    fn each_phase_works_on_the_items_mdtest_does() {
        // Rank 1 of 4, stride 1, a directory per rank.
        let (r, s, n) = (1u64, 1u64, 4u64);
        let at = |p: Phase| ((r + p.name_shift() * s) % n, (r + p.dir_shift() * s) % n);
        assert_eq!(at(Phase::Create), (1, 2));
        assert_eq!(at(Phase::Stat), (2, 3));
        assert_eq!(at(Phase::Read), (3, 0));
        assert_eq!(at(Phase::Remove), (0, 1));
        // What rank r stats, rank r+s created: same names in the same directory.
        assert_eq!(
            (at(Phase::Stat).0, at(Phase::Stat).1),
            ((r + s) % n, ((r + s) % n + s) % n)
        );
    }
}
