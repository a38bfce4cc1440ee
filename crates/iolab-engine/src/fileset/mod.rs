//! Filesets: the files and directories a WML workload works on, laid out without I/O,
//! populated on disk, and picked concurrently by worker threads.
//!
//! Three steps, each in its own file:
//! * [`Fileset::layout`] (tree.rs): decides the directory tree, every entry's size and which
//!   entries are preallocated, from the spec and a seed, as filebench's `fileset_populate`
//!   does (same seed, same fileset).
//! * [`Fileset::populate`] (populate.rs): makes that on disk, like filebench's
//!   `fileset_create`, optionally with several threads.
//! * [`Fileset::pick`] and friends (pick.rs): lock-free round-robin picking in the hot loop.
//!
//! Memory: an entry costs 16 bytes (size `u64`, directory `u32`, state `u32`); names are
//! `%08d` serials computed from the entry's position in its directory and paths are built on
//! demand into the caller's buffer, so 10 M entries take about 170 MB where filebench's
//! `filesetentry_t` (≈ 100 bytes plus a path string each) would need over 1 GB — and filebench
//! caps filesets at 1 048 576 entries anyway.
//!
//! Which seed: pass a different one per fileset, e.g. `Rng::stream(run_seed, index).next_u64()`;
//! the tree, the sizes and the preallocation draw from independent streams of it, so changing
//! `prealloc` does not change the sizes.

mod pick;
mod populate;
mod tree;

use iolab_util::phrase;
use iolab_util::setting::{Phrase, Setting, Worded};
use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use iolab_util::rng::Rng;
use iolab_workload::model::FilesetSpec;
use iolab_workload::rv::Rv;

pub use pick::{Cursor, Want};
pub use populate::{
    check_space, PopulateOpts, PopulateOrder, PopulateReport, SpaceNeed, Undo, META_PER_FILE,
};
pub use tree::MAX_DEPTH;

use pick::Pool;
use tree::{DirRec, NO_PARENT};

/// Streams of the fileset's seed.
const TREE_STREAM: u64 = 1;
const SIZE_STREAM: u64 = 2;
const PREALLOC_STREAM: u64 = 3;
const LEAF_PREALLOC_STREAM: u64 = 4;
pub(crate) const ORDER_STREAM: u64 = 5;

/// Why a fileset could not be laid out or populated. Every variant names the path.
#[derive(Debug, thiserror::Error)]
pub enum FilesetError {
    #[error("fileset name {0:?} must be one path component (not empty, no '/', not . or ..)")]
    BadName(String),
    #[error("a fileset of more than {count} {what} is not supported")]
    TooLarge { what: &'static str, count: u64 },
    /// iolab's index of the fileset (a few bytes per entry) would not fit the memory this
    /// process may have: refused before any of it is allocated.
    #[error(
        "fileset `{name}`: {entries} entries need {} of memory for iolab's index of them; this \
         process can have {}",
        iolab_util::units::format_bytes(*need),
        iolab_util::units::format_bytes(*have)
    )]
    NoMemory {
        name: String,
        entries: u64,
        need: u64,
        have: u64,
    },
    #[error("directory {0} does not exist")]
    MissingDir(PathBuf),
    #[error("{0} is not a directory")]
    NotADirectory(PathBuf),
    #[error("{0} is a symbolic link: iolab neither removes nor fills a fileset through a link")]
    Symlink(PathBuf),
    #[error("{0} is the root of a mounted filesystem: iolab will not empty a whole filesystem")]
    MountPoint(PathBuf),
    #[error("{0} is a mount point inside the fileset: iolab does not remove across filesystems")]
    MountInside(PathBuf),
    #[error("{0} does not exist, but the fileset says trusttree")]
    TrustTreeMissing(PathBuf),
    #[error("{0} exists but is not a regular file")]
    NotAFile(PathBuf),
    #[error("{op} {path}: {}", iolab_util::errno::describe(.source))]
    Io {
        op: &'static str,
        path: PathBuf,
        source: io::Error,
    },
    /// The filesets to populate need more than their filesystem has free (checked for all of
    /// a run's filesets together by [`check_space`], before anything is written).
    #[error("{}", no_space_message(.filesets, *.avail))]
    NoSpace {
        /// The filesets on that filesystem that write something, in order.
        filesets: Vec<SpaceNeed>,
        /// Free bytes, counting the old trees population would remove first.
        avail: u64,
        /// The largest factor on every file size at which they would fit (a size scale to
        /// suggest); `None` when smaller files would not do (too many files).
        fits_at: Option<f64>,
    },
    #[error("cannot start a population thread: {0}")]
    Spawn(io::Error),
    /// The caller's cancel flag was set.
    #[error("interrupted while populating")]
    Interrupted,
}

/// "the fileset /d/a needs 2.0 GiB but its filesystem has 1.0 GiB free", or for several "the
/// filesets /d/a (1.0 GiB) and /d/b (1.0 GiB) need 2.0 GiB together but their filesystem has …".
/// When the data would fit and it is the rounding to whole blocks and the metadata that do
/// not, the sizes on disk, and why.
fn no_space_message(filesets: &[SpaceNeed], avail: u64) -> String {
    let human = crate::buffer::human;
    let data = filesets.iter().fold(0u64, |t, n| t.saturating_add(n.bytes));
    // The data alone does not fit: its size says it all.
    let by_data = data > avail;
    let size = |n: &SpaceNeed| if by_data { n.bytes } else { n.on_disk };
    let total = filesets.iter().fold(0u64, |t, n| t.saturating_add(size(n)));
    let why = if by_data {
        String::new()
    } else {
        let files = filesets.iter().fold(0u64, |t, n| t.saturating_add(n.files));
        let block = filesets.first().map_or(0, |n| n.block);
        format!(
            " on disk ({} of data in {files} files, each rounded up to whole {} blocks, plus \
             metadata)",
            human(&data),
            human(&block)
        )
    };
    let avail = human(&avail);
    match filesets {
        [one] => format!(
            "the fileset {} needs {}{why} but its filesystem has {avail} free",
            one.root.display(),
            human(&size(one))
        ),
        many => {
            let each: Vec<String> = many
                .iter()
                .map(|n| format!("{} ({})", n.root.display(), human(&size(n))))
                .collect();
            format!(
                "the filesets {} need {}{why} together but their filesystem has {avail} free",
                each.join(", "),
                human(&total)
            )
        }
    }
}

impl FilesetError {
    /// True when the workload or the target is at fault (exit code 2), false when the
    /// population failed (1).
    pub fn is_bad_input(&self) -> bool {
        matches!(
            self,
            FilesetError::BadName(_)
                | FilesetError::TooLarge { .. }
                | FilesetError::MissingDir(_)
                | FilesetError::NotADirectory(_)
                | FilesetError::Symlink(_)
                | FilesetError::MountPoint(_)
                | FilesetError::MountInside(_)
                | FilesetError::TrustTreeMissing(_)
                | FilesetError::NotAFile(_)
                | FilesetError::NoSpace { .. }
        )
    }

    /// The OS error behind the failure (ENOSPC, EIO, …), if any.
    pub fn os_error(&self) -> Option<i32> {
        match self {
            FilesetError::Io { source, .. } | FilesetError::Spawn(source) => source.raw_os_error(),
            _ => None,
        }
    }
}

impl Worded for FilesetError {
    fn phrase(&self) -> Phrase {
        Phrase::text(self.to_string())
    }

    /// What the user can do about it.
    fn advice(&self) -> Option<Phrase> {
        let text = Some(match self {
            FilesetError::MissingDir(_) => {
                return Some(phrase!(
                    "create the fileset's path first, or pass another {}",
                    Setting::Dir
                ))
            }
            FilesetError::Symlink(_) | FilesetError::MountPoint(_) => {
                "give the fileset a name of its own: it lives in path/name and is replaced on each run"
            }
            FilesetError::MountInside(_) => "unmount it, or move the fileset elsewhere",
            FilesetError::TrustTreeMissing(_) => "drop trusttree for the first run, which creates the tree",
            FilesetError::NotAFile(_) => "remove it, or drop reuse so that the tree is recreated",
            FilesetError::NoSpace { .. } => {
                "use fewer or smaller files (entries, size, prealloc), or a path on a larger filesystem"
            }
            _ => match self.os_error() {
                Some(libc::ENOSPC) => "the filesystem is full: use fewer or smaller files",
                Some(libc::EDQUOT) => "a disk quota is exhausted: use fewer or smaller files",
                Some(libc::EMFILE) | Some(libc::ENFILE) => "raise the open-file limit (ulimit -n)",
                Some(libc::EIO) => "the device reported an I/O error: check dmesg",
                Some(libc::EACCES) | Some(libc::EPERM) => {
                    "permission denied: check the directory's owner and mode, or run as root"
                }
                Some(libc::EROFS) => {
                    return Some(phrase!(
                        "the filesystem is read-only: pass another {}",
                        Setting::Dir
                    ))
                }
                _ => return None,
            },
        });
        text.map(Phrase::text)
    }
}

impl FilesetError {
    fn io(op: &'static str, path: &Path, source: io::Error) -> FilesetError {
        FilesetError::Io {
            op,
            path: path.to_path_buf(),
            source,
        }
    }
}

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(u32);

        impl $name {
            pub fn new(index: u32) -> $name {
                $name(index)
            }

            /// Position in the fileset, `0..count`.
            pub fn index(self) -> usize {
                self.0 as usize
            }
        }
    };
}

id_type!(
    /// A file entry of a fileset (in tree order: the order filebench numbers them).
    EntryId
);
id_type!(
    /// A leaf directory (the empty directories that makedir/removedir work on).
    LeafDirId
);
id_type!(
    /// A directory of the tree (listdir's picks); 0 is the fileset's root `path/name`.
    DirId
);

/// Memory per entry of a laid-out fileset: its directory (u32), size (u64) and state (u32).
const INDEX_BYTES_PER_ENTRY: u64 = 16;
/// Memory per leaf directory: its directory and its state.
const INDEX_BYTES_PER_LEAFDIR: u64 = 8;

/// The memory [`Fileset::layout`] takes for `entries` files and `leafdirs` leaf directories
/// (their directories, a small fraction more, aside).
pub fn index_bytes(entries: u64, leafdirs: u64) -> u64 {
    entries
        .saturating_mul(INDEX_BYTES_PER_ENTRY)
        .saturating_add(leafdirs.saturating_mul(INDEX_BYTES_PER_LEAFDIR))
}

/// The most memory this process can have: the machine's RAM and swap, or less under a
/// `ulimit -v` (RLIMIT_AS). `None` when neither can be read.
pub fn memory_limit() -> Option<u64> {
    // SAFETY: both calls only fill the zeroed structs they are given.
    let mut si: libc::sysinfo = unsafe { std::mem::zeroed() };
    let ram = (unsafe { libc::sysinfo(&mut si) } == 0).then(|| {
        (si.totalram as u64)
            .saturating_add(si.totalswap as u64)
            .saturating_mul(u64::from(si.mem_unit))
    });
    let mut rl: libc::rlimit = unsafe { std::mem::zeroed() };
    let rlimit = (unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut rl) } == 0
        && rl.rlim_cur != libc::RLIM_INFINITY)
        .then_some(rl.rlim_cur as u64);
    match (ram, rlimit) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Refuses a fileset whose index would not fit in memory, before anything is allocated:
/// `entries=1e12` must be an error, not an abort when the allocation fails.
pub fn check_memory(spec: &FilesetSpec) -> Result<(), FilesetError> {
    if spec.single_file {
        return Ok(());
    }
    let need = index_bytes(spec.entries, spec.leafdirs);
    match memory_limit() {
        Some(have) if need > have => Err(FilesetError::NoMemory {
            name: spec.name.clone(),
            entries: spec.entries,
            need,
            have,
        }),
        _ => Ok(()),
    }
}

/// A fileset laid out in memory: its tree, sizes and per-entry states.
#[derive(Debug)]
pub struct Fileset {
    name: String,
    /// The directory the fileset lives in (`path`).
    parent: PathBuf,
    /// `path/name`: the tree's root, or the file itself for `define file`.
    root: PathBuf,
    single_file: bool,
    reuse: bool,
    trusttree: bool,
    paralloc: bool,
    prealloc_pct: u8,
    seed: u64,
    size_rv: Rv,
    mean_depth: f64,
    mean_width: f64,
    layout_bytes: u64,
    prealloc_bytes: u64,
    dirs: Vec<DirRec>,
    file_dir: Vec<u32>,
    sizes: Vec<AtomicU64>,
    files: Pool,
    leaf_dir: Vec<u32>,
    leaves: Pool,
    dir_pool: Pool,
}

impl Fileset {
    /// Decides, without I/O, the directory tree, every entry's size (`spec.size` sampled once
    /// per entry, in entry order) and which entries population creates (`prealloc_pct`
    /// percent, drawn per entry as filebench does with `rand()`, so the count varies around
    /// the percentage). The same spec and seed give the same fileset.
    ///
    /// The tree replays filebench's `fileset_populate_subdir`: the root `path/name` is never a
    /// leaf and adds subdirectories `00000001, 00000002, …` until every entry has a place;
    /// every other directory draws a depth (gamma of shape `dirgamma/1000` and mean
    /// ln(entries + leafdirs) / ln(dirwidth), truncated, 0 → 1; fixed when `dirgamma` is 0; or
    /// `dirdepth`) and a width (gamma of the same shape and mean `dirwidth`, fixed when
    /// `dirgamma` is 0); a directory at least as deep as its drawn depth is a leaf holding
    /// ⌈width⌉ files `%08d` from 1, otherwise ⌈width⌉ subdirectories; then the same again for
    /// leaf directories. Because each directory draws its own depth and deeper subtrees hold
    /// more files, files end up well below the mean depth (≈ 9 levels for 200 000 entries of
    /// width 20), exactly as in filebench. Entry ids follow filebench's numbering (tree order),
    /// which round-robin picking walks.
    ///
    /// Deliberately unlike filebench (and documented with the workload language):
    /// * filebench restarts the serial at 1 for the leaf-directory loop, so a leaf directory
    ///   collides with the file of the same name in its directory, and subdirectories made for
    ///   leaf directories merge with those made for files. iolab continues the serials: every
    ///   entry has its own path.
    /// * `dirwidth` 0 (filebench: one file per directory, through `ln 0`) means no limit:
    ///   every entry in the one directory `path/name/00000001/`.
    /// * A mean depth that is not finite (`dirwidth` 1, where filebench's `(int)inf` is
    ///   undefined behaviour) is taken as 1, giving one file per directory; depths are capped
    ///   at [`MAX_DEPTH`].
    /// * With `dirdepth`, filebench replaces the variable's mean by the computed mean depth;
    ///   iolab does the same for uniform and gamma variables and samples other kinds as given.
    /// * `define file` (`single_file`) is one entry at `path/name` itself, no tree (filebench
    ///   1.4's meaning, which raw devices need; 1.5 makes it a one-entry fileset at
    ///   `path/name/00000001/00000001`).
    /// * filebench caps a fileset at 1 048 576 entries; iolab at 2³² − 2.
    pub fn layout(spec: &FilesetSpec, seed: u64) -> Result<Fileset, FilesetError> {
        let name_ok = !spec.name.is_empty()
            && !spec.name.contains('/')
            && spec.name != "."
            && spec.name != "..";
        if !name_ok {
            return Err(FilesetError::BadName(spec.name.clone()));
        }
        let limit = |what, count: u64| {
            u32::try_from(count)
                .ok()
                .filter(|&c| c != u32::MAX)
                .ok_or(FilesetError::TooLarge {
                    what,
                    count: u64::from(u32::MAX) - 1,
                })
        };
        let (entries, leafdirs) = if spec.single_file {
            (1, 0)
        } else {
            (
                limit("entries", spec.entries)?,
                limit("leafdirs", spec.leafdirs)?,
            )
        };
        check_memory(spec)?;
        let tree = if spec.single_file {
            tree::Tree {
                dirs: Vec::new(),
                file_dir: vec![NO_PARENT],
                leaf_dir: Vec::new(),
                mean_depth: 0.0,
                mean_width: 0.0,
            }
        } else {
            let mut rng = Rng::stream(seed, TREE_STREAM);
            tree::build(
                entries,
                leafdirs,
                &spec.dirwidth,
                spec.dirgamma,
                spec.dirdepth.as_ref(),
                &mut rng,
            )?
        };
        let n = tree.file_dir.len();
        let fs = Fileset {
            name: spec.name.clone(),
            parent: spec.path.clone(),
            root: spec.path.join(&spec.name),
            single_file: spec.single_file,
            reuse: spec.reuse,
            trusttree: spec.trusttree,
            paralloc: spec.paralloc,
            prealloc_pct: spec.prealloc_pct.min(100),
            seed,
            size_rv: spec.size.clone(),
            mean_depth: tree.mean_depth,
            mean_width: tree.mean_width,
            layout_bytes: 0,
            prealloc_bytes: 0,
            sizes: (0..n).map(|_| AtomicU64::new(0)).collect(),
            files: Pool::new(n),
            leaves: Pool::new(tree.leaf_dir.len()),
            dir_pool: Pool::new(tree.dirs.len()),
            dirs: tree.dirs,
            file_dir: tree.file_dir,
            leaf_dir: tree.leaf_dir,
        };
        let (layout_bytes, prealloc_bytes) = fs.reset();
        Ok(Fileset {
            layout_bytes,
            prealloc_bytes,
            ..fs
        })
    }

    /// Puts every entry back as the layout decided it: sizes as sampled, the preallocated
    /// entries existing and the others missing, nothing claimed or open, rotors at 0.
    /// [`Fileset::populate`] calls it; call it yourself before reusing a populated tree for
    /// another run with `trusttree`-like assumptions. Not while workers pick.
    ///
    /// Returns (total bytes of all entries, bytes of the preallocated ones).
    pub fn reset(&self) -> (u64, u64) {
        let mut sizes = Rng::stream(self.seed, SIZE_STREAM);
        let mut pre = Rng::stream(self.seed, PREALLOC_STREAM);
        let pct = u64::from(self.prealloc_pct);
        let (mut total, mut prealloc) = (0u64, 0u64);
        self.files.reset(|i| {
            let size = self.size_rv.sample(&mut sizes);
            self.sizes[i].store(size, Ordering::Relaxed);
            total = total.saturating_add(size);
            let exists = pre.below(100) < pct;
            if exists {
                prealloc = prealloc.saturating_add(size);
            }
            exists
        });
        let mut leaf_pre = Rng::stream(self.seed, LEAF_PREALLOC_STREAM);
        // filebench preallocates leaf directories with the same percentage as files.
        self.leaves.reset(|_| leaf_pre.below(100) < pct);
        self.dir_pool.reset(|_| true);
        (total, prealloc)
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// `path/name`: the tree's root directory, or the file itself for `define file`.
    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn is_single_file(&self) -> bool {
        self.single_file
    }

    /// Number of file entries.
    pub fn entries(&self) -> u64 {
        self.files.len() as u64
    }

    /// File entries that exist now (O(1)).
    pub fn existing(&self) -> u64 {
        self.files.existing()
    }

    pub fn leafdirs(&self) -> u64 {
        self.leaves.len() as u64
    }

    pub fn existing_leafdirs(&self) -> u64 {
        self.leaves.existing()
    }

    /// Directories of the tree, the root included (0 for `define file`).
    pub fn dirs(&self) -> u64 {
        self.dirs.len() as u64
    }

    /// The mean depth the tree was drawn with: ln(entries + leafdirs) / ln(dirwidth).
    pub fn mean_depth(&self) -> f64 {
        self.mean_depth
    }

    /// The mean directory width the tree was drawn with (infinite for `dirwidth` 0).
    pub fn mean_width(&self) -> f64 {
        self.mean_width
    }

    /// Sum of all entries' layout sizes.
    pub fn layout_bytes(&self) -> u64 {
        self.layout_bytes
    }

    /// Sum of the preallocated entries' sizes: what population writes.
    pub fn prealloc_bytes(&self) -> u64 {
        self.prealloc_bytes
    }

    /// The entry's size: the layout's until [`Fileset::set_size`] changes it. filebench never
    /// updates it (a `workingset` of 0 means the size at population), so the engine should
    /// change it only where iolab means the current size.
    #[inline]
    pub fn size(&self, id: EntryId) -> u64 {
        self.sizes[id.index()].load(Ordering::Relaxed)
    }

    #[inline]
    pub fn set_size(&self, id: EntryId, size: u64) {
        self.sizes[id.index()].store(size, Ordering::Relaxed);
    }

    /// Raises the size to at least `end` (an append); returns the new size.
    #[inline]
    pub fn grow_size(&self, id: EntryId, end: u64) -> u64 {
        self.sizes[id.index()]
            .fetch_max(end, Ordering::Relaxed)
            .max(end)
    }

    /// Whether the entry exists (as the fileset believes: population made it, or the last
    /// release said so).
    #[inline]
    pub fn exists(&self, id: EntryId) -> bool {
        self.files.exists(id.index())
    }

    /// Whether a thread has claimed the entry (between a pick and its release).
    #[inline]
    pub fn is_busy(&self, id: EntryId) -> bool {
        self.files.is_busy(id.index())
    }

    /// How many fd slots hold the entry open.
    #[inline]
    pub fn open_count(&self, id: EntryId) -> u32 {
        self.files.open_count(id.index())
    }

    /// Picks a file entry: walks round-robin from the cursor to the first entry in the wanted
    /// state that no thread has claimed, and claims it. `None` when a whole cycle finds none:
    /// the caller counts the flowop as "ran dry" and goes on (filebench ends the whole run
    /// with no results here).
    ///
    /// The claim lasts until [`Fileset::release`] or [`Fileset::release_opened`].
    #[inline]
    pub fn pick(&self, want: Want, cursor: Cursor<'_>) -> Option<EntryId> {
        self.files.pick(want, cursor).map(|i| EntryId(i as u32))
    }

    /// Picks an existing entry for an fd slot (openfile) and registers the open in the same
    /// atomic step, without claiming it: many threads can open the same file at once (a
    /// `define file` shared by every thread), and no deletion can take it in between, since
    /// [`Want::ExistsNotOpen`] needs no open and no claim in the same state word. Uses the
    /// same rotor as [`Want::Exists`]. Call [`Fileset::closed`] when the slot closes, or when
    /// the open(2) fails.
    #[inline]
    pub fn pick_open(&self, cursor: Cursor<'_>) -> Option<EntryId> {
        self.files.pick_open(cursor).map(|i| EntryId(i as u32))
    }

    /// Claims one particular entry if it is idle and `want` accepts it (deletefile of the file
    /// in the thread's own slot). Never waits: filebench blocks until the entry is idle.
    #[inline]
    pub fn try_claim(&self, id: EntryId, want: Want) -> bool {
        self.files.try_claim_if(id.index(), want)
    }

    /// Ends a claim and records whether the entry now exists (createfile → true, deletefile
    /// → false, anything else → what it was).
    #[inline]
    pub fn release(&self, id: EntryId, exists: bool) {
        self.files.release(id.index(), exists, false);
    }

    /// Ends a claim on an entry now open in an fd slot (openfile, createfile): the entry
    /// exists and stays pickable by others, as in filebench, until [`Fileset::closed`].
    #[inline]
    pub fn release_opened(&self, id: EntryId) {
        self.files.release(id.index(), true, true);
    }

    /// An fd slot closed the entry.
    #[inline]
    pub fn closed(&self, id: EntryId) {
        self.files.closed(id.index());
    }

    /// Picks a leaf directory (makedir: `Missing`, removedir: `Exists`).
    #[inline]
    pub fn pick_leafdir(&self, want: Want, cursor: Cursor<'_>) -> Option<LeafDirId> {
        self.leaves.pick(want, cursor).map(|i| LeafDirId(i as u32))
    }

    #[inline]
    pub fn release_leafdir(&self, id: LeafDirId, exists: bool) {
        self.leaves.release(id.index(), exists, false);
    }

    #[inline]
    pub fn leafdir_exists(&self, id: LeafDirId) -> bool {
        self.leaves.exists(id.index())
    }

    /// Picks a directory of the tree for listdir (filebench's `FILESET_PICKDIR`, which
    /// includes the root). Directories always exist.
    #[inline]
    pub fn pick_dir(&self, cursor: Cursor<'_>) -> Option<DirId> {
        self.dir_pool
            .pick(Want::Any, cursor)
            .map(|i| DirId(i as u32))
    }

    #[inline]
    pub fn release_dir(&self, id: DirId) {
        self.dir_pool.release(id.index(), true, false);
    }

    /// The directory an entry lives in (`None` for `define file`).
    pub fn dir_of(&self, id: EntryId) -> Option<DirId> {
        let d = self.file_dir[id.index()];
        (d != NO_PARENT).then_some(DirId(d))
    }

    /// Writes the entry's path into `buf` (cleared first). Allocates only while `buf` grows.
    pub fn path_of(&self, id: EntryId, buf: &mut PathBuf) {
        let d = self.file_dir[id.index()];
        if d == NO_PARENT {
            set_path(buf, &self.root);
            return;
        }
        self.dir_path_into(d, buf);
        push_serial(buf.as_mut_os_string(), self.serial_of(id));
    }

    /// The entry's name in its directory (not for `define file`).
    fn serial_of(&self, id: EntryId) -> u32 {
        let rec = &self.dirs[self.file_dir[id.index()] as usize];
        id.0 - rec.first_file + 1
    }

    /// Writes the leaf directory's path into `buf`.
    pub fn leafdir_path(&self, id: LeafDirId, buf: &mut PathBuf) {
        let d = self.leaf_dir[id.index()];
        let rec = &self.dirs[d as usize];
        let serial = rec.leaf_serial_base + (id.0 - rec.first_leafdir) + 1;
        self.dir_path_into(d, buf);
        push_serial(buf.as_mut_os_string(), serial);
    }

    /// Writes the directory's path into `buf` (`DirId` 0 is the root, `path/name`).
    pub fn dir_path(&self, id: DirId, buf: &mut PathBuf) {
        self.dir_path_into(id.0, buf);
    }

    fn dir_path_into(&self, dir: u32, buf: &mut PathBuf) {
        let mut chain = [0u32; MAX_DEPTH as usize];
        let mut len = 0;
        let mut d = dir;
        while self.dirs[d as usize].parent != NO_PARENT {
            let rec = &self.dirs[d as usize];
            chain[len] = rec.serial;
            len += 1;
            d = rec.parent;
        }
        set_path(buf, &self.root);
        let os = buf.as_mut_os_string();
        for &serial in chain[..len].iter().rev() {
            push_serial(os, serial);
        }
    }

    /// Heap bytes of the per-entry and per-directory metadata, from the capacities allocated:
    /// what a fileset costs in memory beyond its fixed-size header.
    pub fn memory_bytes(&self) -> usize {
        use std::mem::size_of;
        self.dirs.capacity() * size_of::<DirRec>()
            + self.file_dir.capacity() * size_of::<u32>()
            + self.sizes.capacity() * size_of::<AtomicU64>()
            + self.leaf_dir.capacity() * size_of::<u32>()
            + self.files.heap_bytes()
            + self.leaves.heap_bytes()
            + self.dir_pool.heap_bytes()
    }

    /// Depth of a directory below the root (the root is 0): for statistics and tests.
    pub fn dir_depth(&self, id: DirId) -> u32 {
        self.dirs[id.index()].depth - 1
    }

    /// The parent of a directory (`None` for the root).
    pub fn dir_parent(&self, id: DirId) -> Option<DirId> {
        let p = self.dirs[id.index()].parent;
        (p != NO_PARENT).then_some(DirId(p))
    }
}

fn set_path(buf: &mut PathBuf, root: &Path) {
    let os = buf.as_mut_os_string();
    os.clear();
    os.push(root.as_os_str());
}

/// `%08d` of `serial` (serials past 99 999 999 take more digits, as with printf) followed by a
/// NUL, in a fixed buffer, and the index where the digits start.
fn serial_ascii(serial: u32) -> ([u8; 11], usize) {
    let mut d = [b'0'; 11];
    d[10] = 0;
    let mut n = serial;
    let mut i = 10;
    while n > 0 {
        i -= 1;
        d[i] = b'0' + (n % 10) as u8;
        n /= 10;
    }
    (d, i.min(2))
}

/// Appends `/%08d` without allocating.
fn push_serial(os: &mut OsString, serial: u32) {
    let (digits, start) = serial_ascii(serial);
    os.push("/");
    // ASCII digits are always UTF-8.
    os.push(std::str::from_utf8(&digits[start..10]).unwrap_or_default());
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::collections::HashSet;

    pub(crate) fn spec(entries: u64, dirwidth: u64) -> FilesetSpec {
        FilesetSpec {
            name: "set".into(),
            path: PathBuf::from("/base"),
            entries,
            leafdirs: 0,
            size: Rv::Const(1024),
            dirwidth: Rv::Const(dirwidth),
            dirgamma: 1500,
            dirdepth: None,
            prealloc_pct: 100,
            paralloc: false,
            reuse: false,
            trusttree: false,
            readonly: false,
            writeonly: false,
            single_file: false,
        }
    }

    fn paths(fs: &Fileset) -> Vec<PathBuf> {
        let mut buf = PathBuf::new();
        (0..fs.entries() as u32)
            .map(|i| {
                fs.path_of(EntryId(i), &mut buf);
                buf.clone()
            })
            .collect()
    }

    fn sizes(fs: &Fileset) -> Vec<u64> {
        (0..fs.entries() as u32)
            .map(|i| fs.size(EntryId(i)))
            .collect()
    }

    #[test]
    fn serials_are_percent_08d() {
        let mut s = OsString::new();
        for (n, want) in [
            (1, "/00000001"),
            (42, "/00000042"),
            (99_999_999, "/99999999"),
            (123_456_789, "/123456789"),
            (u32::MAX, "/4294967295"),
        ] {
            s.clear();
            push_serial(&mut s, n);
            assert_eq!(s, want);
        }
    }

    #[test]
    fn layout_is_deterministic_per_seed() {
        let mut sp = spec(2000, 7);
        sp.size = Rv::Gamma {
            min: 0.0,
            mean: 16384.0,
            gamma: 1500.0,
            round: 0,
        };
        sp.prealloc_pct = 50;
        sp.leafdirs = 30;
        let a = Fileset::layout(&sp, 1).unwrap();
        let b = Fileset::layout(&sp, 1).unwrap();
        let c = Fileset::layout(&sp, 2).unwrap();
        assert_eq!(sizes(&a), sizes(&b));
        assert_eq!(paths(&a), paths(&b));
        assert_eq!(a.dirs, b.dirs);
        let ex = |f: &Fileset| (0..2000).map(|i| f.exists(EntryId(i))).collect::<Vec<_>>();
        assert_eq!(ex(&a), ex(&b));
        assert_ne!(sizes(&a), sizes(&c));
        assert_ne!(a.dirs, c.dirs);
        assert_ne!(ex(&a), ex(&c));
        // Gamma sizes average out near the mean.
        let mean = sizes(&a).iter().sum::<u64>() as f64 / 2000.0;
        assert!((mean - 16384.0).abs() < 0.1 * 16384.0, "{mean}");
        assert_eq!(a.layout_bytes(), sizes(&a).iter().sum::<u64>());
    }

    #[test]
    fn every_path_is_unique_and_made_of_serials() {
        let mut sp = spec(3000, 5);
        sp.leafdirs = 500;
        let fs = Fileset::layout(&sp, 9).unwrap();
        let mut seen = HashSet::new();
        let mut buf = PathBuf::new();
        for p in paths(&fs) {
            assert!(seen.insert(p));
        }
        for i in 0..fs.leafdirs() as u32 {
            fs.leafdir_path(LeafDirId(i), &mut buf);
            assert!(
                seen.insert(buf.clone()),
                "leafdir {} collides",
                buf.display()
            );
        }
        for d in 0..fs.dirs() as u32 {
            fs.dir_path(DirId(d), &mut buf);
            assert!(seen.insert(buf.clone()), "dir {} collides", buf.display());
        }
        for p in &seen {
            let rest = p.strip_prefix("/base/set").unwrap();
            for c in rest.components() {
                let c = c.as_os_str().to_str().unwrap();
                assert!(c.len() == 8 && c.bytes().all(|b| b.is_ascii_digit()), "{c}");
            }
        }
        // Parents are laid out before their children (population relies on it).
        for d in 1..fs.dirs() as u32 {
            assert!(fs.dir_parent(DirId(d)).unwrap().0 < d);
        }
    }

    #[test]
    fn filebench_example_path_and_fixed_shape() {
        // 5000 entries of width 10 with a fixed tree: mean depth ln 5000 / ln 10 = 3.7,
        // truncated to 3 as filebench's (int) does: root → 50 dirs → 10 dirs each → 10 files.
        let mut sp = spec(5000, 10);
        sp.dirgamma = 0;
        let fs = Fileset::layout(&sp, 0).unwrap();
        assert_eq!(fs.dirs(), 1 + 50 + 500);
        let mut buf = PathBuf::new();
        fs.path_of(EntryId(0), &mut buf);
        assert_eq!(buf, Path::new("/base/set/00000001/00000001/00000001"));
        fs.path_of(EntryId(12), &mut buf);
        assert_eq!(buf, Path::new("/base/set/00000001/00000002/00000003"));
        fs.path_of(EntryId(4999), &mut buf);
        assert_eq!(buf, Path::new("/base/set/00000050/00000010/00000010"));
        for p in paths(&fs) {
            assert_eq!(p.components().count(), 6, "{}", p.display());
        }
    }

    #[test]
    fn gamma_tree_has_the_mean_width_and_depth() {
        let sp = spec(200_000, 20);
        let fs = Fileset::layout(&sp, 3).unwrap();
        // Children per non-root directory: files, leaf dirs and subdirectories.
        let mut children = vec![0u64; fs.dirs() as usize];
        for d in 1..fs.dirs() as u32 {
            children[fs.dir_parent(DirId(d)).unwrap().index()] += 1;
        }
        for i in 0..fs.entries() as u32 {
            children[fs.dir_of(EntryId(i)).unwrap().index()] += 1;
        }
        // filebench's loop runs ⌈w⌉ times for a gamma width w of mean 20, so the mean is about
        // 20.5; directories cut short when the files run out pull it down a little.
        let n = fs.dirs() - 1;
        let mean = children[1..].iter().sum::<u64>() as f64 / n as f64;
        assert!(n > 1000, "{n} directories");
        assert!((18.5..22.0).contains(&mean), "mean width {mean}");
        // Mean depth ln(200000)/ln(20) = 4.07. Each directory draws its own depth and only
        // becomes a leaf once it is at least that deep, and a non-leaf subtree holds ~20× more
        // files per level, so files sit well below the mean depth: an independent simulation of
        // filebench's recursion puts them 9.2 levels below the root on average.
        assert!((fs.mean_depth() - 4.074).abs() < 0.01);
        let depth_sum: u64 = (0..fs.entries() as u32)
            .map(|i| u64::from(fs.dir_depth(fs.dir_of(EntryId(i)).unwrap())))
            .sum();
        let file_depth = depth_sum as f64 / fs.entries() as f64;
        assert!(
            (7.0..12.0).contains(&file_depth),
            "mean file depth {file_depth}"
        );
        assert!((0..fs.dirs() as u32).all(|d| fs.dir_depth(DirId(d)) < MAX_DEPTH));
    }

    #[test]
    fn dirwidth_zero_puts_everything_in_one_directory() {
        let mut sp = spec(1000, 0);
        sp.leafdirs = 10;
        let fs = Fileset::layout(&sp, 1).unwrap();
        assert_eq!(fs.dirs(), 2);
        let mut buf = PathBuf::new();
        fs.path_of(EntryId(999), &mut buf);
        assert_eq!(buf, Path::new("/base/set/00000001/00001000"));
        fs.leafdir_path(LeafDirId(0), &mut buf);
        assert_eq!(buf, Path::new("/base/set/00000001/00001001"));
    }

    #[test]
    fn dirwidth_one_gives_one_file_per_directory() {
        let mut sp = spec(50, 1);
        sp.dirgamma = 0;
        let fs = Fileset::layout(&sp, 1).unwrap();
        assert_eq!(fs.dirs(), 51);
        let mut buf = PathBuf::new();
        fs.path_of(EntryId(49), &mut buf);
        assert_eq!(buf, Path::new("/base/set/00000050/00000001"));
    }

    #[test]
    fn single_file_is_path_name_itself() {
        let mut sp = spec(7, 20);
        sp.single_file = true;
        sp.size = Rv::Const(1 << 30);
        let fs = Fileset::layout(&sp, 1).unwrap();
        assert_eq!((fs.entries(), fs.dirs(), fs.leafdirs()), (1, 0, 0));
        let mut buf = PathBuf::from("/something/long/to/be/cleared");
        fs.path_of(EntryId(0), &mut buf);
        assert_eq!(buf, Path::new("/base/set"));
        assert_eq!(fs.size(EntryId(0)), 1 << 30);
        assert_eq!(fs.dir_of(EntryId(0)), None);
        assert_eq!(fs.pick_dir(Cursor::Shared), None);
    }

    #[test]
    fn prealloc_is_a_per_entry_draw_like_filebench() {
        let mut sp = spec(100_000, 20);
        sp.prealloc_pct = 80;
        sp.leafdirs = 10_000;
        let fs = Fileset::layout(&sp, 11).unwrap();
        // Binomial(100000, 0.8): sd 126.
        let e = fs.existing();
        assert!((79_400..80_600).contains(&e), "{e}");
        let l = fs.existing_leafdirs();
        assert!((7_800..8_200).contains(&l), "{l}");
        let bytes: u64 = (0..100_000)
            .filter(|&i| fs.exists(EntryId(i)))
            .map(|i| fs.size(EntryId(i)))
            .sum();
        assert_eq!(fs.prealloc_bytes(), bytes);
        for (pct, want) in [(0, 0), (100, 100_000)] {
            sp.prealloc_pct = pct;
            assert_eq!(Fileset::layout(&sp, 11).unwrap().existing(), want);
        }
    }

    /// The most children (files and subdirectories) of any directory but the root.
    fn widest_dir(fs: &Fileset) -> usize {
        let mut children = vec![0usize; fs.dirs() as usize];
        for d in 1..fs.dirs() as u32 {
            children[fs.dir_parent(DirId(d)).unwrap().index()] += 1;
        }
        for i in 0..fs.entries() as u32 {
            children[fs.dir_of(EntryId(i)).unwrap().index()] += 1;
        }
        children[1..].iter().copied().max().unwrap_or(0)
    }

    /// Issue 11: filebench takes a random variable for `dirwidth` and draws it per directory
    /// (fileset.c, `fileset_populate_subdir`); iolab refused it.
    #[test]
    fn a_random_dirwidth_is_drawn_per_directory() {
        let mut sp = spec(10_000, 3);
        // A constant 3 is the mean of a gamma draw per directory: some have more.
        assert!(widest_dir(&Fileset::layout(&sp, 2).unwrap()) > 3);
        // A variable that always draws 3 gives at most 3, whatever `dirgamma` says.
        sp.dirwidth = Rv::Tabular {
            rows: vec![iolab_workload::rv::TableRow {
                percent: 100.0,
                low: 3.0,
                high: 3.0,
            }],
            round: 0,
        };
        let fs = Fileset::layout(&sp, 2).unwrap();
        assert_eq!(widest_dir(&fs), 3);
        assert_eq!(fs.mean_width(), 3.0);
        // A fractional draw allows ⌈w⌉ children (filebench loops while i < w + 1).
        sp.dirwidth = Rv::Uniform {
            min: 2.5,
            mean: 2.5,
            round: 0,
        };
        assert_eq!(widest_dir(&Fileset::layout(&sp, 2).unwrap()), 3);
    }

    #[test]
    fn depth_variable_gets_filebench_mean() {
        let mut sp = spec(100_000, 10);
        sp.dirgamma = 0;
        // filebench replaces the variable's mean (here 50) with the computed mean depth (5).
        sp.dirdepth = Some(Rv::Uniform {
            min: 0.0,
            mean: 50.0,
            round: 0,
        });
        let fs = Fileset::layout(&sp, 4).unwrap();
        let max = (0..fs.dirs() as u32)
            .map(|d| fs.dir_depth(DirId(d)))
            .max()
            .unwrap();
        assert!(max <= 10, "max depth {max}");
    }

    #[test]
    fn rejects_bad_names_and_sizes() {
        for name in ["", ".", "..", "a/b"] {
            let mut sp = spec(1, 1);
            sp.name = name.into();
            assert!(matches!(
                Fileset::layout(&sp, 0),
                Err(FilesetError::BadName(_))
            ));
        }
        let sp = spec(u64::from(u32::MAX) + 5, 20);
        assert!(matches!(
            Fileset::layout(&sp, 0),
            Err(FilesetError::TooLarge { .. })
        ));
    }

    /// An index larger than the memory the process may have is refused before it is
    /// allocated (it was an abort: "memory allocation of … bytes failed").
    #[test]
    fn an_index_larger_than_memory_is_refused() {
        let limit = memory_limit().expect("sysinfo works");
        let entries = limit / INDEX_BYTES_PER_ENTRY + 1;
        if entries > u64::from(u32::MAX) - 1 {
            return; // A machine this large indexes every fileset iolab accepts.
        }
        let sp = spec(entries, 0);
        let e = check_memory(&sp).unwrap_err();
        assert!(matches!(e, FilesetError::NoMemory { .. }), "{e}");
        assert!(e.to_string().contains("of memory for iolab's index"), "{e}");
        assert!(matches!(
            Fileset::layout(&sp, 0),
            Err(FilesetError::NoMemory { .. })
        ));
        assert!(check_memory(&spec(1000, 10)).is_ok());
        assert_eq!(index_bytes(10, 2), 10 * 16 + 2 * 8);
    }

    #[test]
    fn reset_restores_the_layout_state() {
        let mut sp = spec(100, 10);
        sp.prealloc_pct = 50;
        let fs = Fileset::layout(&sp, 5).unwrap();
        let before = fs.existing();
        let id = fs.pick(Want::Exists, Cursor::Shared).unwrap();
        fs.set_size(id, 1);
        fs.release(id, false);
        assert_eq!(fs.existing(), before - 1);
        assert_eq!(fs.grow_size(id, 10), 10);
        fs.reset();
        assert_eq!(fs.existing(), before);
        assert!(fs.exists(id));
        assert_eq!(fs.size(id), 1024);
    }

    /// 10 M entries must stay within 64 bytes each (tree + entries + state).
    #[test]
    fn ten_million_entries_fit_in_64_bytes_each() {
        let mut sp = spec(10_000_000, 20);
        sp.leafdirs = 0;
        sp.prealloc_pct = 80;
        let fs = Fileset::layout(&sp, 1).unwrap();
        let per_entry = fs.memory_bytes() as f64 / 10_000_000.0;
        assert!(per_entry <= 64.0, "{per_entry} bytes per entry");
        assert!(
            per_entry <= 20.0,
            "{per_entry} bytes per entry (design: ~17)"
        );
    }
}
