//! Counting the system calls SQLite makes, per thread, as strace would see them.
//!
//! Two hooks into SQLite's own `unix` VFS, both documented interfaces of SQLite:
//!
//! - its system-call table (`xSetSystemCall`): `write`, `pwrite`, `pwrite64`, `ftruncate`
//!   and `unlink` are replaced by wrappers that count each call (and the bytes written) and
//!   call the original; so is `openDirectory`, which SQLite calls for exactly one purpose:
//!   to fsync the directory right after it (when a journal or WAL was created, or a journal
//!   deleted with `synchronous=EXTRA`), so each directory it opens is one directory fsync;
//! - a VFS of its own, `iolab-counting`, which opens files through `unix` and gives them a
//!   copy of the `unix` file methods whose `xSync` counts: SQLite's `unixSync` makes exactly
//!   one `fsync` (or `fdatasync`, per its compile options) per call. `fsync` is not in the
//!   system-call table, hence this.
//!
//! The counters are thread-local, so a worker reads its own calls without any locking, and
//! other threads' SQLite use (iolab's results database) never mixes in. The system-call
//! table is process-wide: the wrappers count on every thread but cost one thread-local
//! addition each.

use std::cell::Cell;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::ops::{Add, Sub};
use std::sync::{Mutex, OnceLock};

use rusqlite::ffi;
use serde::Serialize;

/// System calls made by SQLite on one thread.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Calls {
    /// `fsync`/`fdatasync` calls, files and directories.
    pub fsync: u64,
    /// Of those, the syncs of a directory.
    pub dir_fsync: u64,
    pub unlink: u64,
    pub ftruncate: u64,
    /// `write`, `pwrite` and `pwrite64` calls.
    pub write: u64,
    /// Bytes those writes wrote.
    pub write_bytes: u64,
}

impl Calls {
    const ZERO: Calls = Calls {
        fsync: 0,
        dir_fsync: 0,
        unlink: 0,
        ftruncate: 0,
        write: 0,
        write_bytes: 0,
    };

    /// The calling thread's counts so far.
    pub fn thread() -> Calls {
        CALLS.with(Cell::get)
    }
}

impl Sub for Calls {
    type Output = Calls;
    fn sub(self, o: Calls) -> Calls {
        Calls {
            fsync: self.fsync - o.fsync,
            dir_fsync: self.dir_fsync - o.dir_fsync,
            unlink: self.unlink - o.unlink,
            ftruncate: self.ftruncate - o.ftruncate,
            write: self.write - o.write,
            write_bytes: self.write_bytes - o.write_bytes,
        }
    }
}

impl Add for Calls {
    type Output = Calls;
    fn add(self, o: Calls) -> Calls {
        Calls {
            fsync: self.fsync + o.fsync,
            dir_fsync: self.dir_fsync + o.dir_fsync,
            unlink: self.unlink + o.unlink,
            ftruncate: self.ftruncate + o.ftruncate,
            write: self.write + o.write,
            write_bytes: self.write_bytes + o.write_bytes,
        }
    }
}

thread_local! {
    static CALLS: Cell<Calls> = const { Cell::new(Calls::ZERO) };
}

#[inline]
fn bump(f: impl FnOnce(&mut Calls)) {
    CALLS.with(|c| {
        let mut v = c.get();
        f(&mut v);
        c.set(v);
    });
}

/// The name of the counting VFS, for `sqlite3_open_v2`.
pub const VFS_NAME: &CStr = c"iolab-counting";

type WriteFn = unsafe extern "C" fn(c_int, *const c_void, usize) -> isize;
type PwriteFn = unsafe extern "C" fn(c_int, *const c_void, usize, i64) -> isize;
type FtruncateFn = unsafe extern "C" fn(c_int, i64) -> c_int;
type UnlinkFn = unsafe extern "C" fn(*const c_char) -> c_int;
type OpenDirFn = unsafe extern "C" fn(*const c_char, *mut c_int) -> c_int;
type SyncFn = unsafe extern "C" fn(*mut ffi::sqlite3_file, c_int) -> c_int;
/// An entry of SQLite's system-call table (`sqlite3_syscall_ptr`).
type Raw = unsafe extern "C" fn();

/// SQLite's own functions, called by the wrappers.
struct Originals {
    unix: usize,
    write: Option<WriteFn>,
    pwrite: Option<PwriteFn>,
    pwrite64: Option<PwriteFn>,
    ftruncate: Option<FtruncateFn>,
    unlink: Option<UnlinkFn>,
    open_directory: Option<OpenDirFn>,
}

/// Set once, before the first wrapper is swapped in.
static ORIGINALS: OnceLock<Originals> = OnceLock::new();
/// The outcome of [`install`].
static INSTALLED: OnceLock<Result<(), String>> = OnceLock::new();

/// Installs the hooks (once per process) and registers the counting VFS. Call before any
/// connection is opened with [`VFS_NAME`].
pub fn install() -> Result<(), String> {
    INSTALLED
        .get_or_init(|| {
            // SAFETY: sqlite3_vfs_find initialises SQLite and returns a pointer to a VFS
            // object that lives as long as the process.
            let unix = unsafe { ffi::sqlite3_vfs_find(c"unix".as_ptr()) };
            if unix.is_null() {
                return Err("this SQLite has no unix VFS".into());
            }
            // SAFETY: `unix` is SQLite's unix VFS; the system calls are swapped once,
            // before any connection of ours exists, for wrappers of the same signature.
            unsafe { hook(unix) }
        })
        .clone()
}

unsafe fn hook(unix: *mut ffi::sqlite3_vfs) -> Result<(), String> {
    let v = unsafe { &*unix };
    let (Some(get), Some(set)) = (v.xGetSystemCall, v.xSetSystemCall) else {
        return Err("the unix VFS does not let its system calls be replaced".into());
    };
    let current = |name: &CStr| unsafe { get(unix, name.as_ptr()) };
    // SAFETY (transmutes): the table holds each function under its C signature.
    let o = unsafe {
        Originals {
            unix: unix as usize,
            write: current(c"write").map(|f| std::mem::transmute::<Raw, WriteFn>(f)),
            pwrite: current(c"pwrite").map(|f| std::mem::transmute::<Raw, PwriteFn>(f)),
            pwrite64: current(c"pwrite64").map(|f| std::mem::transmute::<Raw, PwriteFn>(f)),
            ftruncate: current(c"ftruncate").map(|f| std::mem::transmute::<Raw, FtruncateFn>(f)),
            unlink: current(c"unlink").map(|f| std::mem::transmute::<Raw, UnlinkFn>(f)),
            open_directory: current(c"openDirectory")
                .map(|f| std::mem::transmute::<Raw, OpenDirFn>(f)),
        }
    };
    if o.open_directory.is_none() || o.unlink.is_none() || o.ftruncate.is_none() {
        return Err("the unix VFS lacks openDirectory, unlink or ftruncate".into());
    }
    // Kept before the swap, so that a wrapper always finds its original. Nothing of ours
    // uses SQLite yet, and other threads' connections (the results database) are idle while
    // a run is being set up.
    let o = ORIGINALS.get_or_init(|| o);
    // SAFETY (transmutes): SQLite calls each entry under the signature of the function it
    // replaces, which is the wrapper's.
    let wrappers: [(&CStr, bool, Raw); 6] = unsafe {
        [
            (
                c"write",
                o.write.is_some(),
                std::mem::transmute::<WriteFn, Raw>(count_write),
            ),
            (
                c"pwrite",
                o.pwrite.is_some(),
                std::mem::transmute::<PwriteFn, Raw>(count_pwrite),
            ),
            (
                c"pwrite64",
                o.pwrite64.is_some(),
                std::mem::transmute::<PwriteFn, Raw>(count_pwrite64),
            ),
            (
                c"ftruncate",
                true,
                std::mem::transmute::<FtruncateFn, Raw>(count_ftruncate),
            ),
            (
                c"unlink",
                true,
                std::mem::transmute::<UnlinkFn, Raw>(count_unlink),
            ),
            (
                c"openDirectory",
                true,
                std::mem::transmute::<OpenDirFn, Raw>(count_open_directory),
            ),
        ]
    };
    for (name, present, f) in wrappers {
        if present && unsafe { set(unix, name.as_ptr(), Some(f)) } != ffi::SQLITE_OK {
            return Err(format!("cannot hook {}", name.to_string_lossy()));
        }
    }
    // The counting VFS: the unix one under another name, opening files through it.
    let mut vfs: ffi::sqlite3_vfs = unsafe { std::ptr::read(unix) };
    vfs.zName = VFS_NAME.as_ptr();
    vfs.pNext = std::ptr::null_mut();
    vfs.xOpen = Some(counting_open);
    let vfs = Box::leak(Box::new(vfs));
    if unsafe { ffi::sqlite3_vfs_register(vfs, 0) } != ffi::SQLITE_OK {
        return Err("cannot register the counting VFS".into());
    }
    Ok(())
}

/// SQLite's original functions (always set before a wrapper can run).
fn early() -> Option<&'static Originals> {
    ORIGINALS.get()
}

unsafe extern "C" fn count_write(fd: c_int, buf: *const c_void, n: usize) -> isize {
    let r = match early().and_then(|o| o.write) {
        Some(f) => unsafe { f(fd, buf, n) },
        None => -1,
    };
    bump(|c| {
        c.write += 1;
        c.write_bytes += r.max(0) as u64;
    });
    r
}

unsafe extern "C" fn count_pwrite(fd: c_int, buf: *const c_void, n: usize, off: i64) -> isize {
    let r = match early().and_then(|o| o.pwrite) {
        Some(f) => unsafe { f(fd, buf, n, off) },
        None => -1,
    };
    bump(|c| {
        c.write += 1;
        c.write_bytes += r.max(0) as u64;
    });
    r
}

unsafe extern "C" fn count_pwrite64(fd: c_int, buf: *const c_void, n: usize, off: i64) -> isize {
    let r = match early().and_then(|o| o.pwrite64) {
        Some(f) => unsafe { f(fd, buf, n, off) },
        None => -1,
    };
    bump(|c| {
        c.write += 1;
        c.write_bytes += r.max(0) as u64;
    });
    r
}

unsafe extern "C" fn count_ftruncate(fd: c_int, len: i64) -> c_int {
    bump(|c| c.ftruncate += 1);
    match early().and_then(|o| o.ftruncate) {
        Some(f) => unsafe { f(fd, len) },
        None => -1,
    }
}

unsafe extern "C" fn count_unlink(path: *const c_char) -> c_int {
    bump(|c| c.unlink += 1);
    match early().and_then(|o| o.unlink) {
        Some(f) => unsafe { f(path) },
        None => -1,
    }
}

/// Both callers in SQLite fsync the directory once when this succeeds with a descriptor.
unsafe extern "C" fn count_open_directory(path: *const c_char, fd: *mut c_int) -> c_int {
    let rc = match early().and_then(|o| o.open_directory) {
        Some(f) => unsafe { f(path, fd) },
        None => ffi::SQLITE_CANTOPEN,
    };
    if rc == ffi::SQLITE_OK && unsafe { *fd } >= 0 {
        bump(|c| {
            c.fsync += 1;
            c.dir_fsync += 1;
        });
    }
    rc
}

/// The unix file methods with a counting `xSync`, and the original `xSync`. `repr(C)` with
/// the methods first: a file's `pMethods` points at the start of this.
#[repr(C)]
struct CountingMethods {
    methods: ffi::sqlite3_io_methods,
    sync: SyncFn,
}

/// One copy per distinct method table the unix VFS hands out (one per locking style), for
/// the life of the process; addresses kept as integers.
static PATCHED: Mutex<Vec<(usize, usize)>> = Mutex::new(Vec::new());

fn counting_methods(orig: *const ffi::sqlite3_io_methods) -> *const ffi::sqlite3_io_methods {
    let mut list = PATCHED.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(&(_, p)) = list.iter().find(|(o, _)| *o == orig as usize) {
        return p as *const ffi::sqlite3_io_methods;
    }
    // SAFETY: `orig` is a method table of the unix VFS, which lives as long as the process.
    let mut methods = unsafe { std::ptr::read(orig) };
    let Some(sync) = methods.xSync else {
        return orig;
    };
    methods.xSync = Some(counting_sync);
    let leaked: &'static CountingMethods = Box::leak(Box::new(CountingMethods { methods, sync }));
    let p = leaked as *const CountingMethods as *const ffi::sqlite3_io_methods;
    list.push((orig as usize, p as usize));
    p
}

unsafe extern "C" fn counting_sync(file: *mut ffi::sqlite3_file, flags: c_int) -> c_int {
    // SAFETY: only files opened by `counting_open` have these methods.
    let m = unsafe { (*file).pMethods } as *const CountingMethods;
    bump(|c| c.fsync += 1);
    unsafe { ((*m).sync)(file, flags) }
}

unsafe extern "C" fn counting_open(
    _vfs: *mut ffi::sqlite3_vfs,
    name: *const c_char,
    file: *mut ffi::sqlite3_file,
    flags: c_int,
    out_flags: *mut c_int,
) -> c_int {
    let Some(o) = early() else {
        return ffi::SQLITE_CANTOPEN;
    };
    let unix = o.unix as *mut ffi::sqlite3_vfs;
    // SAFETY: the unix VFS's xOpen, on the file object SQLite allocated with its size (our
    // VFS copies its szOsFile).
    let rc = match unsafe { (*unix).xOpen } {
        Some(open) => unsafe { open(unix, name, file, flags, out_flags) },
        None => ffi::SQLITE_CANTOPEN,
    };
    if rc == ffi::SQLITE_OK {
        let m = unsafe { (*file).pMethods };
        if !m.is_null() {
            unsafe { (*file).pMethods = counting_methods(m) };
        }
    }
    rc
}
