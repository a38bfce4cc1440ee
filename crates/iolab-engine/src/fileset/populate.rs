//! Making a laid-out fileset real on disk (filebench's `fileset_create`); see
//! [`Fileset::populate`] for what it does and where it differs from filebench.

use std::ffi::OsString;
use std::fs::{self, DirBuilder, File, Metadata, OpenOptions};
use std::io::{self, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::{DirBuilderExt, FileExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use iolab_util::rng::Rng;

use super::{DirId, EntryId, Fileset, FilesetError, LeafDirId, ORDER_STREAM};
use crate::order::Feistel;

/// filebench's `FILE_ALLOC_BLOCK`.
const CHUNK: usize = 1 << 20;
/// One shared megabyte of zeros. It lives in .bss: never written, so it costs no memory.
static ZEROS: [u8; CHUNK] = [0; CHUNK];
/// filebench's `MAX_PARALLOC_THREADS`.
const MAX_PARALLOC: usize = 32;
/// Progress units: a created file or directory counts as much as 4 KiB of data.
const ITEM_UNITS: u64 = 4096;

/// The order in which preallocated files and leaf directories are created.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PopulateOrder {
    /// A seeded random permutation, as filebench's random pick from its free list.
    #[default]
    Shuffled,
    /// Tree order (entry 0, 1, 2, …): directory by directory.
    Sequential,
}

/// How to populate.
pub struct PopulateOpts<'a> {
    /// Threads to use. 0 or 1: one, unless the fileset says `paralloc`, which then uses the
    /// machine's CPUs (at most 32, filebench's limit of concurrent allocations). More than
    /// 1: that many, `paralloc` or not.
    pub threads: usize,
    pub order: PopulateOrder,
    /// Called now and then, from any population thread, with work done and total work.
    /// The units are bytes to write plus 4096 per file or directory to create (check, with
    /// reuse): show them as a fraction. The last call is `(total, total)`. Removing an old
    /// tree comes first and reports nothing.
    pub progress: &'a (dyn Fn(u64, u64) + Sync),
    /// `syncfs` the fileset's filesystem at the end, so that the run does not start with
    /// population's dirty data still being written back. filebench does not.
    pub sync: bool,
    /// Set from elsewhere (e.g. on Ctrl-C) to stop early with [`FilesetError::Interrupted`].
    pub cancel: Option<&'a AtomicBool>,
}

impl Default for PopulateOpts<'static> {
    fn default() -> Self {
        PopulateOpts {
            threads: 1,
            order: PopulateOrder::Shuffled,
            progress: &|_, _| {},
            sync: false,
            cancel: None,
        }
    }
}

impl std::fmt::Debug for PopulateOpts<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PopulateOpts")
            .field("threads", &self.threads)
            .field("order", &self.order)
            .field("sync", &self.sync)
            .finish_non_exhaustive()
    }
}

/// What population did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PopulateReport {
    pub threads: usize,
    /// An existing tree was kept (`reuse` or `trusttree`).
    pub reused: bool,
    /// Files, directories and links of an old tree removed first.
    pub removed: u64,
    pub remove_elapsed: Duration,
    /// Directories of the tree created (the root included; existing ones not counted).
    pub dirs_created: u64,
    pub files_created: u64,
    /// Existing files truncated or extended to their layout size (reuse).
    pub files_resized: u64,
    /// Existing files of the right size (reuse), or trusted (trusttree).
    pub files_kept: u64,
    pub leafdirs_created: u64,
    pub bytes_written: u64,
    /// The whole population, removal included.
    pub elapsed: Duration,
}

#[derive(Default)]
struct Counts {
    created: u64,
    resized: u64,
    kept: u64,
    bytes: u64,
}

impl Fileset {
    /// Creates the fileset on disk, as filebench's `fileset_create` does: removes an old
    /// `path/name` (unless reusing), creates the directories, then the preallocated files
    /// filled with zeros, then the preallocated leaf directories. Entries not preallocated do
    /// not exist on disk afterwards. Puts the entries' states back to the layout first
    /// ([`Fileset::reset`]), so call it before any worker picks. Errors name the path and carry
    /// the OS error (ENOSPC, EACCES, …).
    ///
    /// As in filebench:
    /// * every directory of the tree is created, whatever `prealloc` says (filebench master's
    ///   `fileset_create_subdirs`), so createfile never needs a `mkdir`;
    /// * files are written in 1 MiB chunks (`FILE_ALLOC_BLOCK`); modes 0644 and 0755;
    /// * preallocated files and leaf directories are created in a random order by default:
    ///   filebench takes them from its free list at random "to distribute initially allocated
    ///   files more randomly on storage media" (`FILESET_PICKUNIQUE`), and the creation order
    ///   decides where inodes and blocks land. iolab uses a seeded permutation;
    ///   [`PopulateOrder::Sequential`] gives tree order instead (about 1.7× faster, since it
    ///   creates each file with `openat` in its held-open directory).
    /// * `reuse` keeps an existing `path/name`; `trusttree` reuses it without looking at any
    ///   file (and fails if `path/name` does not exist, where filebench fails later).
    ///
    /// Deliberately unlike filebench:
    /// * The old tree is removed by iolab itself, not by `rm -rf` through a shell: it refuses a
    ///   `path/name` that is a symbolic link or a mount root, never follows a link, never
    ///   crosses into another filesystem, and never touches `path` itself.
    /// * With reuse, missing directories are created (filebench skips the tree and then fails
    ///   to create a missing file in a missing directory); a file that is too short is
    ///   extended with zeros from its end (filebench rewrites it from offset 0), one too long
    ///   is truncated; existing files and directories the layout does not preallocate are
    ///   left alone (and count as missing, as in filebench).
    /// * Population that cannot fit is refused before anything is written or removed
    ///   ([`check_space`]: the preallocated bytes, or with reuse the bytes missing, against
    ///   the filesystem's free space). A population that fails anyway (ENOSPC, EIO,
    ///   cancelled) removes what it created: the whole `path/name` without reuse (an existing
    ///   root directory is kept, empty), exactly the files and directories it made with reuse
    ///   (files it extended keep what was written). filebench leaves a full filesystem.
    /// * `paralloc` uses a pool of threads over disjoint chunks of entries instead of one
    ///   detached thread per file (at most 32 at a time).
    /// * filebench "frees" each file's cache after writing it (`FB_FREEMEM`: `msync` with
    ///   `MS_INVALIDATE`, which does not evict page cache on Linux). iolab does not; cache
    ///   state is the system-under-test layer's business (sync, drop caches), or set
    ///   [`PopulateOpts::sync`].
    pub fn populate(&self, opts: PopulateOpts<'_>) -> Result<PopulateReport, FilesetError> {
        self.populate_undoable(opts).map(|(report, _)| report)
    }

    /// [`Fileset::populate`], and what undoes it: [`Fileset::undo`] removes what this
    /// population created, for a caller whose next step fails (the next fileset of the run
    /// not populating) and who must leave nothing behind.
    pub fn populate_undoable(
        &self,
        opts: PopulateOpts<'_>,
    ) -> Result<(PopulateReport, Undo), FilesetError> {
        let start = Instant::now();
        self.reset();
        // Before the old tree goes: a refusal touches nothing (the space it frees counts).
        check_space(&[self])?;
        let threads = match opts.threads {
            0 | 1 if self.paralloc => std::thread::available_parallelism()
                .map_or(1, |n| n.get())
                .min(MAX_PARALLOC),
            0 | 1 => 1,
            n => n,
        };
        let mut report = PopulateReport {
            threads,
            ..PopulateReport::default()
        };

        let parent_md = match fs::metadata(&self.parent) {
            Ok(md) if md.is_dir() => md,
            Ok(_) => return Err(FilesetError::NotADirectory(self.parent.clone())),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(FilesetError::MissingDir(self.parent.clone()))
            }
            Err(e) => return Err(FilesetError::io("stat", &self.parent, e)),
        };
        let root = &self.root;
        let existing = match fs::symlink_metadata(root) {
            Ok(md) => Some(md),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(FilesetError::io("stat", root, e)),
        };
        if let Some(md) = &existing {
            if md.file_type().is_symlink() {
                return Err(FilesetError::Symlink(root.clone()));
            }
            // A different device than `path`, or the same inode (`path/name` resolving to
            // `path` itself, e.g. at "/"), means we would be emptying a filesystem's root.
            if md.dev() != parent_md.dev() || md.ino() == parent_md.ino() {
                return Err(FilesetError::MountPoint(root.clone()));
            }
            if !self.single_file && !md.is_dir() && (self.reuse || self.trusttree) {
                return Err(FilesetError::NotADirectory(root.clone()));
            }
        }
        if self.trusttree && existing.is_none() {
            return Err(FilesetError::TrustTreeMissing(root.clone()));
        }
        // filebench: trusttree reuses unconditionally; reuse only when the tree is there.
        let reusing = self.trusttree || (self.reuse && existing.is_some());
        report.reused = reusing;

        if let (Some(md), false) = (&existing, reusing) {
            let t = Instant::now();
            report.removed = remove_old(root, md, !self.single_file, threads)?;
            report.remove_elapsed = t.elapsed();
        }

        // With reuse, what population creates is recorded, to be removed again on failure;
        // otherwise everything under `path/name` is this population's.
        let made = (reusing && !self.trusttree).then(Made::default);
        let progress = Progress::new(self.total_units(), opts.progress, threads, opts.cancel);
        let result = if self.single_file {
            self.populate_single(reusing, &progress, &mut report, made.as_ref())
        } else {
            self.populate_tree(
                reusing,
                threads,
                opts.order,
                &progress,
                &mut report,
                made.as_ref(),
            )
        }
        .and_then(|()| {
            if progress.cancelled() {
                Err(FilesetError::Interrupted)
            } else {
                Ok(())
            }
        });
        let undo = Undo {
            made,
            root_was_dir: existing.as_ref().is_some_and(|m| m.is_dir()),
            threads,
        };
        if let Err(e) = result {
            // A full filesystem (or a cancelled run) must not stay full of half a fileset.
            self.undo(undo);
            return Err(e);
        }
        if opts.sync {
            let path = if self.single_file { &self.parent } else { root };
            if let Err(e) = syncfs(path) {
                self.undo(undo);
                return Err(e);
            }
        }
        (opts.progress)(progress.total, progress.total);
        report.elapsed = start.elapsed();
        Ok((report, undo))
    }

    fn total_units(&self) -> u64 {
        let pre_files = self.existing();
        let dirs = if self.trusttree { 0 } else { self.dirs() };
        (dirs + pre_files + self.existing_leafdirs()) * ITEM_UNITS + self.prealloc_bytes()
    }

    fn populate_single(
        &self,
        reusing: bool,
        progress: &Progress<'_>,
        report: &mut PopulateReport,
        made: Option<&Made>,
    ) -> Result<(), FilesetError> {
        let id = EntryId(0);
        if !self.exists(id) {
            return Ok(());
        }
        let mut c = Counts::default();
        let size = self.size(id);
        if self.trusttree {
            c.kept += 1;
        } else {
            ensure_file(&self.root, size, reusing, &mut c, &mut || {
                Made::push(made.map(|m| &m.files), 0)
            })?;
        }
        let mut pending = 0;
        progress.add(&mut pending, ITEM_UNITS + size);
        progress.flush(&mut pending);
        add_counts(report, &c);
        Ok(())
    }

    fn populate_tree(
        &self,
        reusing: bool,
        threads: usize,
        order: PopulateOrder,
        progress: &Progress<'_>,
        report: &mut PopulateReport,
        made_here: Option<&Made>,
    ) -> Result<(), FilesetError> {
        let trust = self.trusttree;

        // Directories, in tree order (parents first; a thread that gets ahead of another
        // creates the missing parents itself).
        if !trust {
            let made = parallel(
                threads,
                self.dirs(),
                Some(progress),
                |made: &mut u64, buf, pending, d| {
                    let id = DirId(d as u32);
                    *made += self.make_dir(id, buf, made_here)?;
                    progress.add(pending, ITEM_UNITS);
                    Ok(())
                },
            )?;
            report.dirs_created = made.iter().sum();
        }

        let perm = |n: u64, stream: u64| match order {
            PopulateOrder::Shuffled if n > 1 => {
                Some(Feistel::new(n, &mut Rng::stream(self.seed, stream)))
            }
            _ => None,
        };
        let at = |perm: &Option<Feistel>, p: u64| perm.as_ref().map_or(p, |f| f.get(p));

        let files = perm(self.entries(), ORDER_STREAM);
        let counts = parallel(
            threads,
            self.entries(),
            Some(progress),
            |w: &mut FileWorker, buf, pending, p| {
                let id = EntryId(at(&files, p) as u32);
                if !self.exists(id) {
                    return Ok(());
                }
                let size = self.size(id);
                if trust {
                    w.counts.kept += 1;
                } else if !reusing && files.is_none() {
                    let f = self.create_at(&mut w.dir, id, buf)?;
                    fill(&f, 0, size).map_err(|e| {
                        self.path_of(id, buf);
                        FilesetError::io("write", buf, e)
                    })?;
                    w.counts.created += 1;
                    w.counts.bytes += size;
                } else {
                    self.path_of(id, buf);
                    ensure_file(buf, size, reusing, &mut w.counts, &mut || {
                        Made::push(made_here.map(|m| &m.files), id.0)
                    })?;
                }
                progress.add(pending, ITEM_UNITS + size);
                Ok(())
            },
        )?;
        for w in &counts {
            add_counts(report, &w.counts);
        }

        let leaves = perm(self.leafdirs(), ORDER_STREAM + 1);
        let made = parallel(
            threads,
            self.leafdirs(),
            Some(progress),
            |made: &mut u64, buf, pending, p| {
                let id = LeafDirId(at(&leaves, p) as u32);
                if !self.leafdir_exists(id) {
                    return Ok(());
                }
                if !trust {
                    self.leafdir_path(id, buf);
                    if mkdir(buf, reusing)? {
                        Made::push(made_here.map(|m| &m.leafdirs), id.0);
                        *made += 1;
                    }
                }
                progress.add(pending, ITEM_UNITS);
                Ok(())
            },
        )?;
        report.leafdirs_created = made.iter().sum();
        Ok(())
    }

    /// Creates directory `id`, and its missing ancestors if another thread has not made them
    /// yet. Returns how many directories it created (0: `id` existed).
    fn make_dir(
        &self,
        id: DirId,
        buf: &mut PathBuf,
        made: Option<&Made>,
    ) -> Result<u64, FilesetError> {
        self.dir_path(id, buf);
        match DirBuilder::new().mode(0o755).create(&*buf) {
            Ok(()) => {
                Made::push(made.map(|m| &m.dirs), id.0);
                Ok(1)
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(0),
            Err(e) if e.kind() == io::ErrorKind::NotFound => match self.dir_parent(id) {
                Some(parent) => {
                    Ok(self.make_dir(parent, buf, made)? + self.make_dir(id, buf, made)?)
                }
                None => Err(FilesetError::io("mkdir", buf, e)),
            },
            Err(e) => Err(FilesetError::io("mkdir", buf, e)),
        }
    }
}

impl Fileset {
    /// Creates file `id` with openat(2) in its directory, which stays open while consecutive
    /// entries share it: one path component per create instead of a walk of the whole path
    /// (files sit about ten levels deep with filebench's default dirgamma). In tree order,
    /// consecutive entries share their directory; in a shuffled order they do not, so only
    /// sequential population uses this.
    fn create_at(
        &self,
        cache: &mut Option<(u32, OwnedFd)>,
        id: EntryId,
        buf: &mut PathBuf,
    ) -> Result<File, FilesetError> {
        let d = self.file_dir[id.index()];
        let dirfd = match cache {
            Some((cd, fd)) if *cd == d => fd,
            _ => {
                *cache = None;
                self.dir_path(DirId(d), buf);
                let f = OpenOptions::new()
                    .read(true)
                    .custom_flags(libc::O_PATH | libc::O_DIRECTORY)
                    .open(&*buf)
                    .map_err(|e| FilesetError::io("open", buf, e))?;
                &cache.insert((d, OwnedFd::from(f))).1
            }
        };
        let (name, start) = super::serial_ascii(self.serial_of(id));
        let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC | libc::O_CLOEXEC;
        // SAFETY: `dirfd` is open for the call and `name[start..]` is NUL-terminated.
        let fd = unsafe {
            libc::openat(
                dirfd.as_raw_fd(),
                name[start..].as_ptr().cast(),
                flags,
                0o644 as libc::c_uint,
            )
        };
        if fd < 0 {
            let e = io::Error::last_os_error();
            self.path_of(id, buf);
            return Err(FilesetError::io("create", buf, e));
        }
        // SAFETY: `fd` is a fresh descriptor that nothing else owns.
        Ok(unsafe { File::from_raw_fd(fd) })
    }
}

/// What a population with reuse created (ids), so that a failure can remove exactly that.
#[derive(Debug, Default)]
struct Made {
    files: Mutex<Vec<u32>>,
    leafdirs: Mutex<Vec<u32>>,
    dirs: Mutex<Vec<u32>>,
}

impl Made {
    /// Records `id` in `list` when recording.
    fn push(list: Option<&Mutex<Vec<u32>>>, id: u32) {
        if let Some(l) = list {
            l.lock().unwrap_or_else(|p| p.into_inner()).push(id);
        }
    }

    fn take(list: &Mutex<Vec<u32>>) -> Vec<u32> {
        std::mem::take(&mut *list.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

/// What a successful [`Fileset::populate_undoable`] created, for [`Fileset::undo`].
#[derive(Debug)]
pub struct Undo {
    /// With reuse, exactly what was created; `None`: everything under `path/name`.
    made: Option<Made>,
    root_was_dir: bool,
    threads: usize,
}

/// What one fileset's population is to write, in a [`FilesetError::NoSpace`] refusal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpaceNeed {
    /// The fileset's name (its `name=`).
    pub name: String,
    /// `path/name`.
    pub root: PathBuf,
    /// Bytes of file data.
    pub bytes: u64,
    /// What that takes on disk, as estimated: each file rounded up to whole blocks, and the
    /// metadata allowances ([`META_PER_FILE`], a block per directory).
    pub on_disk: u64,
    /// Files it creates.
    pub files: u64,
    /// The filesystem's block size.
    pub block: u64,
}

/// The metadata a file takes besides its data blocks, in the estimate of [`check_space`]:
/// an inode's worth. XFS (512-byte inodes) and btrfs take about that from the free space;
/// ext4 allocates its inodes with the filesystem and tmpfs charges none, where it is margin.
/// A directory is counted as one block (its entries).
pub const META_PER_FILE: u64 = 512;

/// The fundamental block size and the free space (for unprivileged users) of the filesystem
/// of `path`.
fn fs_space(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: a zeroed out-struct and a NUL-terminated path.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 || st.f_blocks == 0 {
        return None;
    }
    // f_frsize is the unit of the block counts; some filesystems leave it 0.
    let block = if st.f_frsize > 0 {
        st.f_frsize
    } else {
        st.f_bsize
    };
    #[allow(clippy::useless_conversion)] // fsblkcnt_t is not u64 everywhere
    let avail = u64::from(st.f_bavail).saturating_mul(block);
    Some((block.max(1), avail))
}

/// `bytes` rounded up to whole blocks of `block` bytes.
fn in_blocks(bytes: u64, block: u64) -> u64 {
    bytes.div_ceil(block).saturating_mul(block)
}

/// Refuses populations that cannot fit, before any of them writes or removes anything: what
/// all of `filesets` are to write, summed per filesystem, against the space free there for
/// unprivileged users. A fileset that fits alone may not fit beside the others, and a run
/// that finds that out only when populating the last one has filled the disk for nothing.
///
/// What a file takes is estimated with the filesystem's block size: its bytes rounded up to
/// whole blocks (a 1.5 KiB file takes a 4 KiB block), plus [`META_PER_FILE`] and a block per
/// directory, so that many small files whose bytes would fit are refused too. Only when the
/// whole would not fit does it look closer (a walk of the trees): with reuse, only what the
/// existing files lack is written; without, the old tree that population removes first frees
/// its blocks. A filesystem that stores small files inline may take less than estimated.
/// `trusttree` filesets write nothing; filesets whose `path` does not exist are left to
/// population to report.
pub fn check_space(filesets: &[&Fileset]) -> Result<(), FilesetError> {
    // Per filesystem (device of `path`): a representative path and its filesets.
    let mut groups: Vec<(u64, &Path, Vec<&Fileset>)> = Vec::new();
    for f in filesets.iter().copied().filter(|f| !f.trusttree) {
        let Ok(md) = fs::metadata(&f.parent) else {
            continue;
        };
        match groups.iter_mut().find(|g| g.0 == md.dev()) {
            Some(g) => g.2.push(f),
            None => groups.push((md.dev(), &f.parent, vec![f])),
        }
    }
    for (dev, path, members) in groups {
        let Some((block, avail)) = fs_space(path) else {
            continue;
        };
        let whole = members
            .iter()
            .fold(0u64, |sum, f| sum.saturating_add(f.on_disk(block, None)));
        if whole <= avail {
            continue;
        }
        // What the old trees free: all of it when population replaces them; for the
        // suggested scale also a reused tree's, whose files are resized to the new sizes.
        let (mut freed, mut reused) = (0u64, 0u64);
        let mut needs = Vec::with_capacity(members.len());
        for f in &members {
            let existing = fs::symlink_metadata(&f.root)
                .ok()
                .filter(|md| !md.file_type().is_symlink() && md.dev() == dev);
            let (bytes, on_disk) = match &existing {
                Some(md) if f.reuse => {
                    reused = reused.saturating_add(blocks_under(&f.root, md, dev));
                    f.missing(block)
                }
                Some(md) => {
                    freed = freed.saturating_add(blocks_under(&f.root, md, dev));
                    (f.prealloc_bytes(), f.on_disk(block, None))
                }
                None => (f.prealloc_bytes(), f.on_disk(block, None)),
            };
            needs.push(SpaceNeed {
                name: f.name.clone(),
                root: f.root.clone(),
                bytes,
                on_disk,
                files: f.existing(),
                block,
            });
        }
        let avail = avail.saturating_add(freed);
        let need = needs
            .iter()
            .fold(0u64, |sum, n| sum.saturating_add(n.on_disk));
        if need > avail {
            let fits_at = fits_at(&members, block, avail.saturating_add(reused));
            needs.retain(|n| n.bytes > 0 || n.on_disk > 0);
            return Err(FilesetError::NoSpace {
                filesets: needs,
                avail,
                fits_at,
            });
        }
    }
    Ok(())
}

/// The largest factor (below 1) on every file size at which `members` fit in `avail` bytes,
/// to suggest as a size scale; `None` when even one-byte files do not fit (too many files:
/// fewer are needed, not smaller ones). The sizes it tries are rounded up and a byte added,
/// so that a scale rounded down from it and applied to the sizes as written (which round to
/// the nearest byte) fits too.
fn fits_at(members: &[&Fileset], block: u64, avail: u64) -> Option<f64> {
    let need = |r: f64| {
        members
            .iter()
            .fold(0u64, |sum, f| sum.saturating_add(f.on_disk(block, Some(r))))
    };
    // Bisection on the logarithm: factors from 1e-12 to 1, to a relative 1e-6.
    let (mut lo, mut hi) = ((1e-12f64).ln(), 0f64);
    if need(lo.exp()) > avail {
        return None;
    }
    while hi - lo > 1e-6 {
        let mid = (lo + hi) / 2.0;
        if need(mid.exp()) <= avail {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Some(lo.exp())
}

/// Bytes allocated to `root` and everything under it on device `dev` (what removing it
/// frees), not following links; unreadable parts count as nothing.
fn blocks_under(root: &Path, md: &Metadata, dev: u64) -> u64 {
    let mut total = md.blocks().saturating_mul(512);
    if !md.is_dir() {
        return total;
    }
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let Ok(md) = fs::symlink_metadata(e.path()) else {
                continue;
            };
            if md.dev() != dev {
                continue;
            }
            total = total.saturating_add(md.blocks().saturating_mul(512));
            if md.is_dir() {
                stack.push(e.path());
            }
        }
    }
    total
}

impl Fileset {
    /// What populating writes, on a filesystem of `block`-byte blocks: every preallocated
    /// file rounded up to whole blocks plus [`META_PER_FILE`], and a block per directory
    /// (the tree's and the preallocated leaf directories). With `scale`, each nonempty file's
    /// size is multiplied by it, rounded up, plus a byte (see [`fits_at`]).
    fn on_disk(&self, block: u64, scale: Option<f64>) -> u64 {
        let mut total = 0u64;
        for i in 0..self.entries() as u32 {
            let id = EntryId(i);
            if !self.exists(id) {
                continue;
            }
            let size = match (self.size(id), scale) {
                (0, _) => 0,
                (size, None) => size,
                (size, Some(r)) => (size as f64 * r).ceil() as u64 + 1,
            };
            total = total
                .saturating_add(in_blocks(size, block))
                .saturating_add(META_PER_FILE);
        }
        let dirs = if self.single_file {
            0
        } else {
            self.dirs() + self.existing_leafdirs()
        };
        total.saturating_add(dirs.saturating_mul(block))
    }

    /// What reuse would write, in bytes and on disk (as [`Fileset::on_disk`]): what the
    /// preallocated files lack of their size, and the files missing altogether.
    fn missing(&self, block: u64) -> (u64, u64) {
        let mut buf = PathBuf::new();
        let (mut need, mut on_disk) = (0u64, 0u64);
        for i in 0..self.entries() as u32 {
            let id = EntryId(i);
            if !self.exists(id) {
                continue;
            }
            let size = self.size(id);
            let path = if self.single_file {
                self.root.as_path()
            } else {
                self.path_of(id, &mut buf);
                buf.as_path()
            };
            let have = match fs::symlink_metadata(path) {
                Ok(md) if md.is_file() => Some(md.len().min(size)),
                _ => None,
            };
            let more = in_blocks(size, block) - in_blocks(have.unwrap_or(0), block);
            let meta = if have.is_none() { META_PER_FILE } else { 0 };
            need = need.saturating_add(size - have.unwrap_or(0));
            on_disk = on_disk.saturating_add(more).saturating_add(meta);
        }
        (need, on_disk)
    }

    /// Removes what a population created (`undo` from [`Fileset::populate_undoable`] of this
    /// fileset): with reuse, exactly the files, leaf directories and directories it made;
    /// without, everything in `path/name`, and `path/name` itself unless it was a directory
    /// before. Nothing for `trusttree`. Best effort: the error that made the caller undo is
    /// the one to report.
    pub fn undo(&self, undo: Undo) {
        if self.trusttree {
            return;
        }
        let Undo {
            made,
            root_was_dir,
            threads,
        } = undo;
        let Some(made) = made else {
            if let Ok(md) = fs::symlink_metadata(&self.root) {
                if !md.file_type().is_symlink() {
                    let keep = root_was_dir && md.is_dir() && !self.single_file;
                    let _ = remove_old(&self.root, &md, keep, threads);
                }
            }
            return;
        };
        let mut buf = PathBuf::new();
        for i in Made::take(&made.files) {
            if self.single_file {
                let _ = fs::remove_file(&self.root);
            } else {
                self.path_of(EntryId(i), &mut buf);
                let _ = fs::remove_file(&buf);
            }
        }
        for i in Made::take(&made.leafdirs) {
            self.leafdir_path(LeafDirId(i), &mut buf);
            let _ = fs::remove_dir(&buf);
        }
        // Children before parents: a directory's id is larger than its parent's.
        let mut dirs = Made::take(&made.dirs);
        dirs.sort_unstable_by(|a, b| b.cmp(a));
        for i in dirs {
            self.dir_path(DirId(i), &mut buf);
            let _ = fs::remove_dir(&buf);
        }
    }
}

/// Bytes free for unprivileged users on the filesystem of `path` (statvfs `f_bavail`), or
/// `None` when the filesystem does not say.
#[cfg(test)]
fn free_space(path: &Path) -> Option<u64> {
    fs_space(path).map(|(_, avail)| avail)
}

/// Per-thread state of the file phase.
#[derive(Default)]
struct FileWorker {
    counts: Counts,
    /// The directory of the previous file, held open for [`Fileset::create_at`].
    dir: Option<(u32, OwnedFd)>,
}

fn add_counts(report: &mut PopulateReport, c: &Counts) {
    report.files_created += c.created;
    report.files_resized += c.resized;
    report.files_kept += c.kept;
    report.bytes_written += c.bytes;
}

/// mkdir that tolerates an existing directory when `existing_ok`. Returns whether it created.
fn mkdir(path: &Path, existing_ok: bool) -> Result<bool, FilesetError> {
    match DirBuilder::new().mode(0o755).create(path) {
        Ok(()) => Ok(true),
        Err(e) if existing_ok && e.kind() == io::ErrorKind::AlreadyExists => {
            match fs::symlink_metadata(path) {
                Ok(md) if md.is_dir() => Ok(false),
                _ => Err(FilesetError::io("mkdir", path, e)),
            }
        }
        Err(e) => Err(FilesetError::io("mkdir", path, e)),
    }
}

/// Makes `path` a regular file of `size` zero bytes. With `check`, an existing file is kept,
/// truncated or extended; without, the file is created (truncating anything there).
/// `created` is called as soon as a file that was not there has been created.
fn ensure_file(
    path: &Path,
    size: u64,
    check: bool,
    c: &mut Counts,
    created: &mut dyn FnMut(),
) -> Result<(), FilesetError> {
    if check {
        match fs::symlink_metadata(path) {
            Ok(md) if md.is_file() => {
                let len = md.len();
                if len == size {
                    c.kept += 1;
                    return Ok(());
                }
                let f = OpenOptions::new()
                    .write(true)
                    .open(path)
                    .map_err(|e| FilesetError::io("open", path, e))?;
                if len > size {
                    f.set_len(size)
                        .map_err(|e| FilesetError::io("truncate", path, e))?;
                } else {
                    fill(&f, len, size).map_err(|e| FilesetError::io("write", path, e))?;
                    c.bytes += size - len;
                }
                c.resized += 1;
                return Ok(());
            }
            Ok(_) => return Err(FilesetError::NotAFile(path.to_path_buf())),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(FilesetError::io("stat", path, e)),
        }
    }
    let f = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o644)
        .open(path)
        .map_err(|e| FilesetError::io("create", path, e))?;
    created();
    fill(&f, 0, size).map_err(|e| FilesetError::io("write", path, e))?;
    c.created += 1;
    c.bytes += size;
    Ok(())
}

/// Writes zeros over `[from, to)` in chunks of at most 1 MiB.
fn fill(f: &File, from: u64, to: u64) -> io::Result<()> {
    let mut off = from;
    while off < to {
        let n = (to - off).min(CHUNK as u64) as usize;
        if from == 0 {
            // Sequential writes from the start: plain write(2), like filebench.
            (&*f).write_all(&ZEROS[..n])?;
        } else {
            f.write_all_at(&ZEROS[..n], off)?;
        }
        off += n as u64;
    }
    Ok(())
}

fn syncfs(path: &Path) -> Result<(), FilesetError> {
    let f = File::open(path).map_err(|e| FilesetError::io("open", path, e))?;
    // SAFETY: syncfs only reads the descriptor, which `f` keeps open for the call.
    let r = unsafe { libc::syncfs(f.as_raw_fd()) };
    if r != 0 {
        return Err(FilesetError::io("syncfs", path, io::Error::last_os_error()));
    }
    Ok(())
}

/// Removes an old `path/name`: a non-directory is unlinked; a directory is emptied (its
/// children shared among the threads) and kept when `keep_dir`, removed otherwise. Never
/// follows a symbolic link and refuses to descend into another filesystem. Returns how many
/// entries it removed.
fn remove_old(
    root: &Path,
    md: &Metadata,
    keep_dir: bool,
    threads: usize,
) -> Result<u64, FilesetError> {
    if !md.is_dir() {
        fs::remove_file(root).map_err(|e| FilesetError::io("unlink", root, e))?;
        return Ok(1);
    }
    let dev = md.dev();
    let mut removed = 0;
    // Rescan until empty: entries unlinked during a readdir may hide others from it.
    loop {
        let children: Vec<OsString> = fs::read_dir(root)
            .map_err(|e| FilesetError::io("readdir", root, e))?
            .map(|e| e.map(|e| e.file_name()))
            .collect::<Result<_, _>>()
            .map_err(|e| FilesetError::io("readdir", root, e))?;
        if children.is_empty() {
            break;
        }
        let counts = parallel(
            threads,
            children.len() as u64,
            None,
            |n: &mut u64, buf, _, i| {
                buf.as_mut_os_string().clear();
                buf.push(root);
                buf.push(&children[i as usize]);
                *n += remove_entry(buf, dev)?;
                Ok(())
            },
        )?;
        removed += counts.iter().sum::<u64>();
    }
    if !keep_dir {
        fs::remove_dir(root).map_err(|e| FilesetError::io("rmdir", root, e))?;
        removed += 1;
    }
    Ok(removed)
}

/// Removes `path` (a directory recursively), not following links, staying on device `dev`.
/// `path` is used as the working buffer and restored before returning.
fn remove_entry(path: &mut PathBuf, dev: u64) -> Result<u64, FilesetError> {
    let md = match fs::symlink_metadata(&*path) {
        Ok(md) => md,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(FilesetError::io("stat", path, e)),
    };
    if !md.is_dir() {
        return unlink(path);
    }
    if md.dev() != dev {
        return Err(FilesetError::MountInside(path.clone()));
    }
    let mut removed = 0;
    loop {
        let mut any = false;
        let dir = fs::read_dir(&*path).map_err(|e| FilesetError::io("readdir", path, e))?;
        for entry in dir {
            let entry = entry.map_err(|e| FilesetError::io("readdir", path, e))?;
            any = true;
            let is_dir = entry
                .file_type()
                .map_err(|e| FilesetError::io("stat", &entry.path(), e))?
                .is_dir();
            path.push(entry.file_name());
            let r = if is_dir {
                remove_entry(path, dev)
            } else {
                unlink(path)
            };
            path.pop();
            removed += r?;
        }
        if !any {
            break;
        }
    }
    fs::remove_dir(&*path).map_err(|e| FilesetError::io("rmdir", path, e))?;
    Ok(removed + 1)
}

fn unlink(path: &Path) -> Result<u64, FilesetError> {
    match fs::remove_file(path) {
        Ok(()) => Ok(1),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(0),
        Err(e) => Err(FilesetError::io("unlink", path, e)),
    }
}

/// Shared progress: threads count locally and publish every `step` units.
struct Progress<'a> {
    done: AtomicU64,
    total: u64,
    step: u64,
    cb: &'a (dyn Fn(u64, u64) + Sync),
    cancel: Option<&'a AtomicBool>,
}

impl<'a> Progress<'a> {
    fn new(
        total: u64,
        cb: &'a (dyn Fn(u64, u64) + Sync),
        threads: usize,
        cancel: Option<&'a AtomicBool>,
    ) -> Progress<'a> {
        // About 1000 calls over the population, but not more often than every 16 items.
        let step = (total / 1000 / threads as u64).max(16 * ITEM_UNITS);
        Progress {
            done: AtomicU64::new(0),
            total,
            step,
            cb,
            cancel,
        }
    }

    fn cancelled(&self) -> bool {
        self.cancel.is_some_and(|c| c.load(Ordering::Relaxed))
    }

    #[inline]
    fn add(&self, pending: &mut u64, units: u64) {
        *pending += units;
        if *pending >= self.step {
            self.flush(pending);
        }
    }

    fn flush(&self, pending: &mut u64) {
        if *pending > 0 {
            let done = self.done.fetch_add(*pending, Ordering::Relaxed) + *pending;
            *pending = 0;
            (self.cb)(done.min(self.total), self.total);
        }
    }
}

/// Runs `f(state, path buffer, pending progress, i)` for every `i` in `0..n` on `threads`
/// threads (the caller's included), handing out disjoint chunks of consecutive indices.
/// Stops at the first error and returns it; otherwise returns each thread's state.
fn parallel<S, F>(
    threads: usize,
    n: u64,
    progress: Option<&Progress<'_>>,
    f: F,
) -> Result<Vec<S>, FilesetError>
where
    S: Default + Send,
    F: Fn(&mut S, &mut PathBuf, &mut u64, u64) -> Result<(), FilesetError> + Sync,
{
    let threads = threads.clamp(1, n.max(1) as usize);
    // Small chunks balance big files across threads; large ones keep the counter cold.
    let chunk = (n / (threads as u64 * 16)).clamp(1, 256);
    let next = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let error: Mutex<Option<FilesetError>> = Mutex::new(None);
    let fail = |e: FilesetError| {
        stop.store(true, Ordering::Relaxed);
        let mut slot = error.lock().unwrap_or_else(|p| p.into_inner());
        slot.get_or_insert(e);
    };
    let work = || {
        let mut state = S::default();
        let mut buf = PathBuf::new();
        let mut pending = 0u64;
        'outer: while !stop.load(Ordering::Relaxed) {
            let lo = next.fetch_add(chunk, Ordering::Relaxed);
            if lo >= n {
                break;
            }
            if progress.is_some_and(|p| p.cancelled()) {
                fail(FilesetError::Interrupted);
                break;
            }
            for i in lo..(lo + chunk).min(n) {
                if let Err(e) = f(&mut state, &mut buf, &mut pending, i) {
                    fail(e);
                    break 'outer;
                }
            }
        }
        if let Some(p) = progress {
            p.flush(&mut pending);
        }
        state
    };
    let states = if threads == 1 {
        vec![work()]
    } else {
        std::thread::scope(|s| {
            let mut handles = Vec::with_capacity(threads - 1);
            for t in 1..threads {
                match std::thread::Builder::new()
                    .name(format!("iolab-populate-{t}"))
                    .spawn_scoped(s, work)
                {
                    Ok(h) => handles.push(h),
                    Err(e) => {
                        fail(FilesetError::Spawn(e));
                        break;
                    }
                }
            }
            let mut states = vec![work()];
            for h in handles {
                // Our closures do not panic; if one did, re-raise it here.
                states.push(h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)));
            }
            states
        })
    };
    match error.into_inner().unwrap_or_else(|p| p.into_inner()) {
        Some(e) => Err(e),
        None => Ok(states),
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::spec;
    use super::*;
    use crate::fileset::{Cursor, Want};
    use iolab_util::setting::Worded;
    use iolab_workload::model::FilesetSpec;
    use iolab_workload::rv::Rv;
    use std::os::unix::fs::symlink;

    fn in_dir(dir: &Path, entries: u64, dirwidth: u64) -> FilesetSpec {
        let mut sp = spec(entries, dirwidth);
        sp.path = dir.to_path_buf();
        sp
    }

    fn count_files(dir: &Path) -> (u64, u64) {
        let (mut files, mut dirs) = (0, 0);
        for e in fs::read_dir(dir).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_dir() {
                dirs += 1;
                let (f, d) = count_files(&e.path());
                files += f;
                dirs += d;
            } else {
                files += 1;
            }
        }
        (files, dirs)
    }

    #[test]
    fn creates_exactly_the_preallocated_files_and_leafdirs() {
        let tmp = tempfile::tempdir().unwrap();
        let mut sp = in_dir(tmp.path(), 500, 8);
        sp.prealloc_pct = 60;
        sp.leafdirs = 40;
        sp.size = Rv::Gamma {
            min: 0.0,
            mean: 3000.0,
            gamma: 1500.0,
            round: 0,
        };
        let fs = Fileset::layout(&sp, 7).unwrap();
        let seen = Mutex::new(Vec::new());
        let progress = |d, t| seen.lock().unwrap().push((d, t));
        let report = fs
            .populate(PopulateOpts {
                threads: 2,
                progress: &progress,
                ..PopulateOpts::default()
            })
            .unwrap();
        let mut buf = PathBuf::new();
        let mut bytes = 0;
        for i in 0..fs.entries() as u32 {
            let id = EntryId(i);
            fs.path_of(id, &mut buf);
            match fs::symlink_metadata(&buf) {
                Ok(md) => {
                    assert!(
                        fs.exists(id),
                        "{} exists but was not preallocated",
                        buf.display()
                    );
                    assert_eq!(md.len(), fs.size(id), "{}", buf.display());
                    assert_eq!(md.mode() & 0o777 & !0o022, 0o644);
                    bytes += md.len();
                }
                Err(_) => assert!(!fs.exists(id), "{} missing", buf.display()),
            }
        }
        for i in 0..fs.leafdirs() as u32 {
            let id = LeafDirId(i);
            fs.leafdir_path(id, &mut buf);
            assert_eq!(buf.is_dir(), fs.leafdir_exists(id), "{}", buf.display());
        }
        for d in 0..fs.dirs() as u32 {
            fs.dir_path(DirId(d), &mut buf);
            assert!(buf.is_dir(), "{}", buf.display());
        }
        assert_eq!(report.files_created, fs.existing());
        assert_eq!(report.leafdirs_created, fs.existing_leafdirs());
        assert_eq!(report.dirs_created, fs.dirs());
        assert_eq!(report.bytes_written, bytes);
        assert_eq!(bytes, fs.prealloc_bytes());
        let (files, dirs) = count_files(fs.root());
        assert_eq!(files, fs.existing());
        assert_eq!(dirs, fs.dirs() - 1 + fs.existing_leafdirs());
        let seen = seen.into_inner().unwrap();
        let &(last, total) = seen.last().unwrap();
        assert_eq!(last, total);
        assert!(seen.windows(2).all(|w| w[0].1 == w[1].1));
    }

    #[test]
    fn an_old_tree_is_replaced_but_path_is_untouched() {
        let tmp = tempfile::tempdir().unwrap();
        let keep = tmp.path().join("neighbour");
        fs::write(&keep, b"mine").unwrap();
        let sp = in_dir(tmp.path(), 50, 5);
        let root = tmp.path().join("set");
        fs::create_dir_all(root.join("old/deeper")).unwrap();
        fs::write(root.join("old/deeper/x"), b"junk").unwrap();
        symlink(&keep, root.join("old/link")).unwrap();
        let fs_ = Fileset::layout(&sp, 1).unwrap();
        let report = fs_.populate(PopulateOpts::default()).unwrap();
        assert!(!report.reused);
        assert_eq!(report.removed, 4);
        assert!(!root.join("old").exists());
        assert_eq!(fs::read(&keep).unwrap(), b"mine", "a link was followed");
        assert_eq!(count_files(&root).0, 50);
    }

    #[test]
    fn refuses_a_symlinked_root() {
        let tmp = tempfile::tempdir().unwrap();
        let elsewhere = tmp.path().join("elsewhere");
        fs::create_dir(&elsewhere).unwrap();
        fs::write(elsewhere.join("precious"), b"x").unwrap();
        symlink(&elsewhere, tmp.path().join("set")).unwrap();
        let fs_ = Fileset::layout(&in_dir(tmp.path(), 10, 5), 1).unwrap();
        let err = fs_.populate(PopulateOpts::default()).unwrap_err();
        assert!(matches!(err, FilesetError::Symlink(_)), "{err}");
        assert!(err.is_bad_input());
        assert!(elsewhere.join("precious").exists());
    }

    #[test]
    fn refuses_a_mount_root() {
        // /dev/shm is a tmpfs mounted on the root filesystem's /dev (or devtmpfs): a fileset
        // named "shm" in /dev must not be emptied. Not run where that is not the layout.
        let (parent, name) = (Path::new("/dev"), "shm");
        let (Ok(p), Ok(r)) = (fs::metadata(parent), fs::metadata(parent.join(name))) else {
            return iolab_testkit::not_run("no /dev/shm here");
        };
        if p.dev() == r.dev() {
            return iolab_testkit::not_run("/dev/shm is not a mount point here");
        }
        let mut sp = spec(1, 1);
        sp.path = parent.to_path_buf();
        sp.name = name.into();
        let err = Fileset::layout(&sp, 1)
            .unwrap()
            .populate(PopulateOpts::default())
            .unwrap_err();
        assert!(matches!(err, FilesetError::MountPoint(_)), "{err}");
    }

    #[test]
    fn missing_parent_is_a_clear_error() {
        let tmp = tempfile::tempdir().unwrap();
        let sp = in_dir(&tmp.path().join("nope"), 10, 5);
        let err = Fileset::layout(&sp, 1)
            .unwrap()
            .populate(PopulateOpts::default())
            .unwrap_err();
        assert!(matches!(err, FilesetError::MissingDir(_)), "{err}");
        assert!(err.advice().is_some());
    }

    #[test]
    fn reuse_resizes_wrong_files_creates_missing_and_leaves_extras() {
        let tmp = tempfile::tempdir().unwrap();
        let mut sp = in_dir(tmp.path(), 20, 5);
        sp.size = Rv::Const(5000);
        let fs_ = Fileset::layout(&sp, 3).unwrap();
        fs_.populate(PopulateOpts::default()).unwrap();
        let mut buf = PathBuf::new();
        let path = |i: u32, buf: &mut PathBuf| {
            fs_.path_of(EntryId(i), buf);
            buf.clone()
        };
        let short = path(0, &mut buf);
        let long = path(1, &mut buf);
        let gone = path(2, &mut buf);
        fs::write(&short, vec![7u8; 100]).unwrap();
        fs::write(&long, vec![7u8; 9000]).unwrap();
        fs::remove_file(&gone).unwrap();
        let extra = fs_.root().join("extra");
        fs::write(&extra, b"x").unwrap();

        sp.reuse = true;
        let fs_ = Fileset::layout(&sp, 3).unwrap();
        let r = fs_.populate(PopulateOpts::default()).unwrap();
        assert!(r.reused);
        assert_eq!(
            (r.files_resized, r.files_created, r.files_kept, r.removed),
            (2, 1, 17, 0)
        );
        assert_eq!(r.bytes_written, 4900 + 5000);
        for p in [&short, &long, &gone] {
            assert_eq!(fs::metadata(p).unwrap().len(), 5000);
        }
        let data = fs::read(&short).unwrap();
        assert!(data[..100].iter().all(|&b| b == 7) && data[100..].iter().all(|&b| b == 0));
        assert!(extra.exists());

        // trusttree: no checks at all.
        fs::remove_file(&gone).unwrap();
        sp.trusttree = true;
        let r = Fileset::layout(&sp, 3)
            .unwrap()
            .populate(PopulateOpts::default())
            .unwrap();
        assert_eq!((r.files_kept, r.files_created, r.dirs_created), (20, 0, 0));
        assert!(!gone.exists());
    }

    #[test]
    fn trusttree_without_a_tree_is_an_error() {
        let tmp = tempfile::tempdir().unwrap();
        let mut sp = in_dir(tmp.path(), 10, 5);
        sp.trusttree = true;
        let err = Fileset::layout(&sp, 1)
            .unwrap()
            .populate(PopulateOpts::default())
            .unwrap_err();
        assert!(matches!(err, FilesetError::TrustTreeMissing(_)), "{err}");
    }

    #[test]
    fn single_file_lives_at_path_name() {
        let tmp = tempfile::tempdir().unwrap();
        let mut sp = in_dir(tmp.path(), 1, 0);
        sp.single_file = true;
        sp.size = Rv::Const(3 * CHUNK as u64 + 17);
        // A directory left there by an earlier fileset of the same name is replaced.
        fs::create_dir_all(tmp.path().join("set/00000001")).unwrap();
        let fs_ = Fileset::layout(&sp, 1).unwrap();
        let r = fs_.populate(PopulateOpts::default()).unwrap();
        assert_eq!((r.files_created, r.removed), (1, 2));
        let md = fs::metadata(tmp.path().join("set")).unwrap();
        assert!(md.is_file());
        assert_eq!(md.len(), 3 * CHUNK as u64 + 17);
        assert_eq!(fs_.existing(), 1);
        assert_eq!(fs_.pick(Want::Exists, Cursor::Shared), Some(EntryId(0)));
    }

    #[test]
    fn prealloc_zero_creates_only_the_tree() {
        let tmp = tempfile::tempdir().unwrap();
        let mut sp = in_dir(tmp.path(), 300, 10);
        sp.prealloc_pct = 0;
        sp.leafdirs = 30;
        let fs_ = Fileset::layout(&sp, 2).unwrap();
        let r = fs_
            .populate(PopulateOpts {
                order: PopulateOrder::Sequential,
                ..PopulateOpts::default()
            })
            .unwrap();
        assert_eq!((r.files_created, r.leafdirs_created), (0, 0));
        assert_eq!(count_files(fs_.root()), (0, fs_.dirs() - 1));
        assert_eq!(fs_.pick(Want::Exists, Cursor::Shared), None);
    }

    #[test]
    fn errors_carry_the_path_and_the_os_error() {
        let tmp = tempfile::tempdir().unwrap();
        let mut sp = in_dir(tmp.path(), 5, 5);
        sp.reuse = true;
        let fs_ = Fileset::layout(&sp, 1).unwrap();
        fs_.populate(PopulateOpts::default()).unwrap();
        // Make one file's place a directory: reuse cannot turn it into a file.
        let mut buf = PathBuf::new();
        fs_.path_of(EntryId(3), &mut buf);
        fs::remove_file(&buf).unwrap();
        fs::create_dir(&buf).unwrap();
        let err = fs_.populate(PopulateOpts::default()).unwrap_err();
        assert!(
            matches!(&err, FilesetError::NotAFile(p) if *p == buf),
            "{err}"
        );
        // An unwritable directory gives EACCES unless we are root (who may write anywhere).
        fs::remove_dir(&buf).unwrap();
        let e = ensure_file(
            Path::new("/proc/iolab-test"),
            1,
            false,
            &mut Counts::default(),
            &mut || {},
        )
        .unwrap_err();
        assert!(e.os_error().is_some(), "{e}");
        assert!(e.to_string().contains("/proc/iolab-test"), "{e}");
    }

    #[test]
    fn refuses_a_fileset_larger_than_the_free_space() {
        let tmp = tempfile::tempdir().unwrap();
        let mut sp = in_dir(tmp.path(), 10, 5);
        sp.size = Rv::Const(10 << 40); // 100 TiB in all
        let fs_ = Fileset::layout(&sp, 1).unwrap();
        let err = fs_.populate(PopulateOpts::default()).unwrap_err();
        match &err {
            FilesetError::NoSpace {
                filesets, avail, ..
            } => {
                assert_eq!(filesets.len(), 1);
                assert_eq!(filesets[0].root, fs_.root());
                assert_eq!(filesets[0].name, "set");
                assert_eq!(filesets[0].bytes, 100 << 40);
                assert!(*avail < 100 << 40);
            }
            other => panic!("expected NoSpace, got {other}"),
        }
        assert!(err.is_bad_input(), "exit 2: the workload asks for too much");
        assert!(err.to_string().contains("needs 100 TiB"), "{err}");
        assert!(err.advice().is_some());
        // Nothing written, nothing left.
        assert!(!fs_.root().exists());
        // trusttree writes nothing, so it is not checked.
        sp.trusttree = true;
        fs::create_dir(fs_.root()).unwrap();
        let fs_ = Fileset::layout(&sp, 1).unwrap();
        fs_.populate(PopulateOpts::default()).unwrap();
    }

    /// Issue 11: filesets that each fit but not together were refused only at the last one,
    /// after the others had filled the disk. All of a run's filesets are checked together.
    #[test]
    fn filesets_are_checked_for_space_together() {
        let tmp = tempfile::tempdir().unwrap();
        let avail = free_space(tmp.path()).unwrap();
        // Each takes 60% of the free space: either fits alone, both do not.
        let mut sp = in_dir(tmp.path(), 1, 1);
        sp.size = Rv::Const(avail / 10 * 6);
        let a = Fileset::layout(&sp, 1).unwrap();
        sp.name = "other".into();
        let b = Fileset::layout(&sp, 1).unwrap();
        check_space(&[&a]).unwrap();
        check_space(&[&b]).unwrap();
        let err = check_space(&[&a, &b]).unwrap_err();
        let FilesetError::NoSpace { filesets, .. } = &err else {
            panic!("expected NoSpace, got {err}");
        };
        let names: Vec<&str> = filesets.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(names, ["set", "other"]);
        let msg = err.to_string();
        assert!(msg.starts_with("the filesets "), "{msg}");
        assert!(msg.contains(" together but their filesystem has "), "{msg}");
        // trusttree writes nothing.
        sp.trusttree = true;
        let c = Fileset::layout(&sp, 1).unwrap();
        check_space(&[&a, &c]).unwrap();
    }

    /// The old tree a population removes first frees its space: a run that replaces its own
    /// previous fileset is not refused for the space that fileset takes.
    #[test]
    #[ignore = "needs root: mounts a small tmpfs"]
    fn the_old_tree_counts_as_free_space() {
        let small = iolab_testkit::Tmpfs::mount(8 << 20);
        // Six 1 MiB files fill most of 8 MiB; the same fileset again fits only because its
        // old tree goes first.
        let mut sp = in_dir(small.path(), 6, 10);
        sp.size = Rv::Const(1 << 20);
        let fs_ = Fileset::layout(&sp, 1).unwrap();
        fs_.populate(PopulateOpts::default()).unwrap();
        assert!(free_space(small.path()).unwrap() < 6 << 20);
        let again = Fileset::layout(&sp, 2).unwrap();
        check_space(&[&again]).unwrap();
        again.populate(PopulateOpts::default()).unwrap();
        // Twelve do not fit even then; refused with the old tree still in place.
        sp.entries = 12;
        let more = Fileset::layout(&sp, 3).unwrap();
        let before = tree_of(small.path());
        let err = more.populate(PopulateOpts::default()).unwrap_err();
        assert!(matches!(err, FilesetError::NoSpace { .. }), "{err}");
        assert_eq!(tree_of(small.path()), before, "a refusal touches nothing");
    }

    /// iolab issue 25: 1.5 KiB files were counted as 1.5 KiB, not as the 4 KiB block each
    /// takes: the check let through a fileset that then filled the filesystem.
    #[test]
    #[ignore = "needs root: mounts a small tmpfs"]
    fn files_are_counted_in_whole_blocks() {
        let small = iolab_testkit::Tmpfs::mount(8 << 20);
        // 3000 files of 1.5 KiB: 4.4 MiB of data, but 11.7 MiB of 4 KiB blocks.
        let mut sp = in_dir(small.path(), 3000, 100);
        sp.size = Rv::Const(1536);
        let fs_ = Fileset::layout(&sp, 1).unwrap();
        assert!(fs_.prealloc_bytes() < 5 << 20);
        let err = fs_.populate(PopulateOpts::default()).unwrap_err();
        let FilesetError::NoSpace { fits_at, .. } = &err else {
            panic!("expected NoSpace, got {err}");
        };
        assert!(
            err.to_string().contains(
                "on disk (4.4 MiB of data in 3000 files, each rounded up to whole 4 KiB blocks"
            ),
            "{err}"
        );
        // No smaller size helps: every file takes a block whatever its size.
        assert_eq!(*fits_at, None);
        assert_eq!(small.used(), 0, "a refusal writes nothing");
        // 1000 files of 6 KiB (two blocks each) do not fit either, but at two thirds of
        // their size (one block) they do; the factor found is one that fits.
        sp.entries = 1000;
        sp.size = Rv::Const(6 << 10);
        let fs_ = Fileset::layout(&sp, 1).unwrap();
        let err = check_space(&[&fs_]).unwrap_err();
        let FilesetError::NoSpace {
            fits_at: Some(r), ..
        } = err
        else {
            panic!("expected a factor, got {err}");
        };
        assert!((0.6..0.67).contains(&r), "{r}");
        sp.size = Rv::Const(6 << 10).scaled(r);
        let fs_ = Fileset::layout(&sp, 1).unwrap();
        fs_.populate(PopulateOpts::default()).unwrap();
    }

    /// Every path under `dir`, sorted.
    fn tree_of(dir: &Path) -> Vec<PathBuf> {
        fn walk(d: &Path, out: &mut Vec<PathBuf>) {
            for e in fs::read_dir(d).unwrap() {
                let p = e.unwrap().path();
                out.push(p.clone());
                if fs::symlink_metadata(&p).unwrap().is_dir() {
                    walk(&p, out);
                }
            }
        }
        let mut v = Vec::new();
        walk(dir, &mut v);
        v.sort();
        v
    }

    #[test]
    #[ignore = "needs root: mounts a small tmpfs"]
    fn a_failed_population_removes_what_it_created() {
        // 4 MiB of tmpfs with 200 inodes: 300 files of 100 bytes pass the space check (1.4
        // MiB of pages and metadata) but run out of inodes: ENOSPC part of the way.
        let small = iolab_testkit::Tmpfs::mount_inodes(4 << 20, 200);
        let keep = small.path().join("neighbour");
        fs::write(&keep, b"mine").unwrap();
        let mut sp = in_dir(small.path(), 300, 20);
        sp.size = Rv::Const(100);
        for (threads, order) in [(1, PopulateOrder::Shuffled), (2, PopulateOrder::Sequential)] {
            let fs_ = Fileset::layout(&sp, 1).unwrap();
            let err = fs_
                .populate(PopulateOpts {
                    threads,
                    order,
                    ..PopulateOpts::default()
                })
                .unwrap_err();
            assert_eq!(err.os_error(), Some(libc::ENOSPC), "{err}");
            assert!(!fs_.root().exists(), "the half-made tree was left");
            assert_eq!(tree_of(small.path()), std::slice::from_ref(&keep));
        }
        // An old tree in its place is replaced as usual; on failure the (emptied) root stays.
        fs::create_dir_all(small.path().join("set/old")).unwrap();
        let fs_ = Fileset::layout(&sp, 1).unwrap();
        fs_.populate(PopulateOpts::default()).unwrap_err();
        assert_eq!(
            tree_of(small.path()),
            [keep.clone(), small.path().join("set")]
        );
        assert!(small.used() <= 4096, "{} bytes still used", small.used());
    }

    #[test]
    #[ignore = "needs root: mounts a small tmpfs"]
    fn a_failed_reuse_removes_only_what_it_created() {
        // 8 MiB of tmpfs with 500 inodes. A first population of 300 one-page files fits;
        // reusing that tree for 700 files passes the space check but needs 400 more inodes:
        // ENOSPC.
        let small = iolab_testkit::Tmpfs::mount_inodes(8 << 20, 500);
        let mut sp = in_dir(small.path(), 300, 350);
        sp.dirgamma = 0;
        sp.size = Rv::Const(100);
        sp.reuse = true;
        let first = Fileset::layout(&sp, 1).unwrap();
        first.populate(PopulateOpts::default()).unwrap();
        // The user's own file in the tree, and one of ours gone.
        fs::write(first.root().join("users-notes"), b"mine").unwrap();
        let mut buf = PathBuf::new();
        first.path_of(EntryId(7), &mut buf);
        fs::remove_file(&buf).unwrap();
        let before = tree_of(small.path());

        sp.entries = 700;
        let second = Fileset::layout(&sp, 1).unwrap();
        assert!(
            second.dirs() > first.dirs(),
            "the test wants new directories too"
        );
        let err = second.populate(PopulateOpts::default()).unwrap_err();
        assert_eq!(err.os_error(), Some(libc::ENOSPC), "{err}");
        assert_eq!(tree_of(small.path()), before);
        assert_eq!(fs::read(first.root().join("users-notes")).unwrap(), b"mine");
    }

    /// A temporary directory on /dev/shm when that tmpfs has room for `inodes` more inodes
    /// (the scale tests measure iolab, not a shared disk), else the default temporary one.
    fn scratch_dir(inodes: u64) -> tempfile::TempDir {
        let shm = Path::new("/dev/shm");
        let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
        // SAFETY: a NUL-terminated path and a valid out-pointer.
        let ok = unsafe { libc::statvfs(c"/dev/shm".as_ptr(), &mut st) } == 0;
        #[allow(clippy::useless_conversion)] // fsfilcnt_t is not u64 everywhere
        let favail = u64::from(st.f_favail);
        if ok && favail > inodes {
            if let Ok(dir) = tempfile::tempdir_in(shm) {
                return dir;
            }
        }
        tempfile::tempdir().unwrap()
    }

    /// 1 000 000 empty files with paralloc on 2 threads: about 11 s in a debug build on
    /// tmpfs (2 cores), several minutes on a busy ext4 disk.
    #[test]
    fn a_million_empty_files() {
        let tmp = scratch_dir(1_100_000);
        let mut sp = in_dir(tmp.path(), 1_000_000, 20);
        sp.size = Rv::Const(0);
        sp.paralloc = true;
        let fs_ = Fileset::layout(&sp, 1).unwrap();
        let r = fs_
            .populate(PopulateOpts {
                threads: 2,
                ..PopulateOpts::default()
            })
            .unwrap();
        assert_eq!(r.files_created, 1_000_000);
        assert_eq!(r.dirs_created, fs_.dirs());
        let mut buf = PathBuf::new();
        for i in [0, 1, 499_999, 999_999] {
            fs_.path_of(EntryId(i), &mut buf);
            assert_eq!(fs::metadata(&buf).unwrap().len(), 0);
        }
        // The tree-order path (openat in a held directory) agrees, on a smaller set.
        let mut sp = in_dir(tmp.path(), 20_000, 20);
        sp.name = "seq".into();
        sp.size = Rv::Const(10);
        let fs_ = Fileset::layout(&sp, 2).unwrap();
        let r = fs_
            .populate(PopulateOpts {
                threads: 2,
                order: PopulateOrder::Sequential,
                ..PopulateOpts::default()
            })
            .unwrap();
        assert_eq!((r.files_created, r.bytes_written), (20_000, 200_000));
        for i in 0..20_000 {
            fs_.path_of(EntryId(i), &mut buf);
            assert_eq!(fs::metadata(&buf).unwrap().len(), 10);
        }
    }
}
