//! How much of a set of files is in the page cache: `cachestat(2)` (Linux 6.5+), or
//! `mincore(2)` on a read-only mapping where the kernel lacks it. Neither reads the data or
//! faults pages in, so measuring does not change what is measured.
//!
//! The files are opened once ([`RunFiles::open`]) and measured through those descriptors as
//! often as needed, so a measurement after `drop_caches` needs no path lookups (which would
//! read directories and inodes back in). Holding them open keeps the sampled files' inodes
//! and dentries cached across the drop; their data pages are still dropped (drop_caches
//! invalidates the pages of inodes in use too). The walk is bounded: at most
//! [`MAX_WALK`] entries are looked at and [`MAX_OPEN`] files opened, spread evenly over the
//! ones found; resident bytes of all files are estimated from that sample.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// Most directory entries looked at under the run's paths.
pub const MAX_WALK: usize = 100_000;

/// Most files held open and measured.
pub const MAX_OPEN: usize = 256;

/// The page-cache residency of the run's files at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Residency {
    /// Regular, non-empty files found.
    pub files: u64,
    /// Their total size.
    pub bytes: u64,
    /// Files measured (all of them, or an even sample of [`MAX_OPEN`]).
    pub sampled_files: u64,
    /// Size of the measured files.
    pub sampled_bytes: u64,
    /// Bytes of the measured files in the page cache.
    pub sampled_resident_bytes: u64,
    /// The files live in memory (tmpfs, ramfs): resident by nature, never dropped.
    pub memory_fs: bool,
}

impl Residency {
    /// Resident bytes of all the files, estimated from the sample.
    pub fn resident_bytes(&self) -> u64 {
        if self.sampled_bytes == 0 {
            return 0;
        }
        let est = u128::from(self.sampled_resident_bytes) * u128::from(self.bytes)
            / u128::from(self.sampled_bytes);
        u64::try_from(est).unwrap_or(u64::MAX)
    }
}

/// The run's files, opened for measuring.
#[derive(Debug)]
pub struct RunFiles {
    open: Vec<(File, u64)>,
    files: u64,
    bytes: u64,
    memory_fs: bool,
}

impl RunFiles {
    /// Every regular file at or under `paths` (a path that does not exist is skipped; links
    /// are not followed), opened read-only; an even sample of them if there are more than
    /// [`MAX_OPEN`]. Files that cannot be opened are left out.
    pub fn open(paths: &[PathBuf]) -> Self {
        let mut found: Vec<(PathBuf, u64)> = Vec::new();
        let mut budget = MAX_WALK;
        for p in paths {
            walk(p, &mut found, &mut budget);
        }
        let files = found.len() as u64;
        let bytes = found.iter().map(|(_, n)| n).sum();
        let n = found.len();
        let picked = (0..n.min(MAX_OPEN)).map(|i| &found[i * n / n.min(MAX_OPEN)]);
        let open: Vec<(File, u64)> = picked
            .filter_map(|(p, n)| {
                File::options()
                    .read(true)
                    .custom_flags(libc::O_CLOEXEC | libc::O_NOFOLLOW)
                    .open(p)
                    .ok()
                    .map(|f| (f, *n))
            })
            .collect();
        let memory_fs = open.first().is_some_and(|(f, _)| on_memory_fs(f));
        RunFiles {
            open,
            files,
            bytes,
            memory_fs,
        }
    }

    /// Asks the kernel to drop the (clean) cached pages of the opened files:
    /// `POSIX_FADV_DONTNEED`, which also drains every CPU's LRU batches when a page is held
    /// in one, where `drop_caches` would skip it. Best effort: errors are ignored, the
    /// residency measured afterwards tells what stayed.
    pub fn evict(&self) {
        for (f, _) in &self.open {
            // SAFETY: a plain advice call on a descriptor this struct owns.
            unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
        }
    }

    /// How much of the files is in the page cache now. A file that cannot be measured
    /// counts as not resident.
    pub fn residency(&self) -> Residency {
        let page = page_size();
        let mut r = Residency {
            files: self.files,
            bytes: self.bytes,
            memory_fs: self.memory_fs,
            ..Residency::default()
        };
        for (f, size) in &self.open {
            r.sampled_files += 1;
            r.sampled_bytes += size;
            let pages = cached_pages(f, *size, page).unwrap_or(0);
            r.sampled_resident_bytes += (pages * page).min(*size);
        }
        r
    }
}

fn walk(path: &Path, out: &mut Vec<(PathBuf, u64)>, budget: &mut usize) {
    if *budget == 0 {
        return;
    }
    *budget -= 1;
    let Ok(m) = std::fs::symlink_metadata(path) else {
        return;
    };
    if m.is_file() {
        if m.len() > 0 {
            out.push((path.to_owned(), m.len()));
        }
    } else if m.is_dir() {
        let Ok(rd) = std::fs::read_dir(path) else {
            return;
        };
        let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
        // Sorted, so that the sample does not depend on directory order.
        entries.sort();
        for e in entries {
            walk(&e, out, budget);
        }
    }
}

fn page_size() -> u64 {
    // SAFETY: sysconf has no memory-safety preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    u64::try_from(n).ok().filter(|n| *n > 0).unwrap_or(4096)
}

/// Whether `dir` is on a filesystem that keeps its files in memory (tmpfs, ramfs), whose
/// pages no cache drop or advice can empty; `None` when it cannot be told.
pub fn is_memory_fs(dir: &Path) -> Option<bool> {
    File::open(dir).ok().map(|f| on_memory_fs(&f))
}

fn on_memory_fs(f: &File) -> bool {
    // SAFETY: all-zero bytes are a valid `statfs` (plain integers).
    let mut s: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: the descriptor is open and `s` is a valid, writable statfs.
    if unsafe { libc::fstatfs(f.as_raw_fd(), &mut s) } != 0 {
        return false;
    }
    const RAMFS_MAGIC: i64 = 0x8584_58f6;
    // `f_type` and the magic constants are `long` or `unsigned int` depending on the target.
    #[allow(clippy::unnecessary_cast)]
    let (t, tmpfs) = (s.f_type as i64, libc::TMPFS_MAGIC as i64);
    t == tmpfs || t == RAMFS_MAGIC
}

/// Pages of `f` in the page cache.
fn cached_pages(f: &File, size: u64, page: u64) -> io::Result<u64> {
    match cachestat(f) {
        Ok(n) => Ok(n),
        // ENOSYS: before Linux 6.5; EPERM: a seccomp filter that does not know it.
        Err(e) if matches!(e.raw_os_error(), Some(libc::ENOSYS | libc::EPERM)) => {
            mincore_pages(f, size, page)
        }
        Err(e) => Err(e),
    }
}

/// `cachestat(2)` syscall number: 451 in the table every architecture shares since 5.x.
const SYS_CACHESTAT: libc::c_long = 451;

/// `struct cachestat_range` (include/uapi/linux/mman.h).
#[repr(C)]
struct CachestatRange {
    off: u64,
    /// 0: to the end of the file.
    len: u64,
}

/// `struct cachestat`.
#[repr(C)]
#[derive(Default)]
struct Cachestat {
    nr_cache: u64,
    nr_dirty: u64,
    nr_writeback: u64,
    nr_evicted: u64,
    nr_recently_evicted: u64,
}

fn cachestat(f: &File) -> io::Result<u64> {
    let range = CachestatRange { off: 0, len: 0 };
    let mut cs = Cachestat::default();
    // SAFETY: the descriptor is open; `range` and `cs` are live values of the layouts the
    // syscall reads and writes; flags must be 0.
    let r = unsafe {
        libc::syscall(
            SYS_CACHESTAT,
            f.as_raw_fd(),
            &range as *const CachestatRange,
            &mut cs as *mut Cachestat,
            0u32,
        )
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(cs.nr_cache)
}

/// A read-only shared mapping of part of a file, unmapped on drop. Mapping faults nothing in.
struct ReadMapping {
    addr: *mut libc::c_void,
    len: usize,
}

impl ReadMapping {
    fn new(f: &File, off: u64, len: usize) -> io::Result<Self> {
        let off = libc::off_t::try_from(off).map_err(io::Error::other)?;
        // SAFETY: a fresh read-only shared mapping of an open file; no other code sees it.
        let addr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_SHARED,
                f.as_raw_fd(),
                off,
            )
        };
        if addr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(ReadMapping { addr, len })
    }
}

impl Drop for ReadMapping {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly the mapping made in `new`.
        unsafe { libc::munmap(self.addr, self.len) };
    }
}

/// Resident pages by `mincore(2)` on a read-only shared mapping, a window at a time (the
/// vector is one byte per page).
fn mincore_pages(f: &File, size: u64, page: u64) -> io::Result<u64> {
    const WINDOW: u64 = 256 << 20;
    let mut resident = 0;
    let mut off = 0;
    let mut vec = Vec::new();
    while off < size {
        let len = usize::try_from((size - off).min(WINDOW)).map_err(io::Error::other)?;
        let m = ReadMapping::new(f, off, len)?;
        vec.clear();
        vec.resize(len.div_ceil(page as usize), 0u8);
        // SAFETY: `m` maps `len` bytes; `vec` has one byte per page of it.
        if unsafe { libc::mincore(m.addr, len, vec.as_mut_ptr()) } != 0 {
            return Err(io::Error::last_os_error());
        }
        resident += vec.iter().filter(|b| **b & 1 != 0).count() as u64;
        off += len as u64;
    }
    Ok(resident)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn scratch(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("iolab-residency-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("a/b")).unwrap();
        d
    }

    /// Maps `f` and reads every page, so that its pages are in the page cache and, being
    /// mapped, stay there even if something drops caches meanwhile.
    fn pin(f: &File, len: usize, page: usize) -> ReadMapping {
        let m = ReadMapping::new(f, 0, len).unwrap();
        for off in (0..len).step_by(page) {
            // SAFETY: `off` is inside the mapping.
            unsafe { std::ptr::read_volatile((m.addr as *const u8).add(off)) };
        }
        m
    }

    #[test]
    fn resident_pages_are_counted_and_both_methods_agree() {
        let d = scratch("written");
        let page = page_size();
        let data = d.join("a/b/data");
        let mut f = File::create(&data).unwrap();
        f.write_all(&vec![7u8; (8 * page) as usize]).unwrap();
        drop(f);
        std::fs::write(d.join("a/empty"), b"").unwrap();
        std::os::unix::fs::symlink(&data, d.join("link")).unwrap();
        let f = File::open(&data).unwrap();
        let pinned = pin(&f, (8 * page) as usize, page as usize);
        let files = RunFiles::open(&[d.clone(), d.join("nonexistent")]);
        let r = files.residency();
        let (g, size) = &files.open[0];
        let by_mincore = mincore_pages(g, *size, page).unwrap();
        let by_cachestat = cached_pages(g, *size, page).unwrap();
        drop(pinned);
        std::fs::remove_dir_all(&d).unwrap();
        assert_eq!(r.files, 1, "the empty file and the link are not counted");
        assert_eq!(r.bytes, 8 * page);
        assert_eq!(r.sampled_files, 1);
        assert_eq!(r.sampled_resident_bytes, 8 * page, "{r:?}");
        assert_eq!(r.resident_bytes(), 8 * page);
        assert!(!r.memory_fs || on_memory_fs(&f));
        assert_eq!(by_mincore, 8);
        assert_eq!(by_cachestat, 8);
    }

    #[test]
    fn large_trees_are_sampled_evenly() {
        let d = scratch("sampled");
        for i in 0..(MAX_OPEN * 2 + 10) {
            std::fs::write(d.join(format!("a/f{i:04}")), b"x").unwrap();
        }
        let r = RunFiles::open(std::slice::from_ref(&d)).residency();
        assert_eq!(r.files, (MAX_OPEN * 2 + 10) as u64);
        assert_eq!(r.sampled_files, MAX_OPEN as u64, "{r:?}");
        assert_eq!(r.bytes, r.files);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn estimate_scales_the_sample() {
        let r = Residency {
            files: 1000,
            bytes: 1000 << 20,
            sampled_files: 100,
            sampled_bytes: 100 << 20,
            sampled_resident_bytes: 25 << 20,
            memory_fs: false,
        };
        assert_eq!(r.resident_bytes(), 250 << 20);
        assert_eq!(Residency::default().resident_bytes(), 0);
    }

    #[test]
    fn tmpfs_is_a_memory_filesystem() {
        let p = Path::new("/dev/shm").join(format!("iolab-residency-{}", std::process::id()));
        std::fs::write(&p, b"x").unwrap();
        let r = RunFiles::open(std::slice::from_ref(&p)).residency();
        std::fs::remove_file(&p).unwrap();
        assert!(r.memory_fs, "{r:?}");
        assert_eq!(
            r.sampled_resident_bytes, 1,
            "tmpfs pages are always resident"
        );
    }
}
