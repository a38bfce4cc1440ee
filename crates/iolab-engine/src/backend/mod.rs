//! I/O backends: one file each behind [`IoFile`], like fio's `engines/`.
//!
//! A backend is bound to one open file for one thread. Synchronous backends implement
//! [`IoFile::io`]; queued backends (io_uring) also implement [`IoFile::submit`] and
//! [`IoFile::reap`] and report a depth above one. The runner is generic over the backend so
//! the hot loop is monomorphised and inlined per backend.

mod mmap;
mod null;
mod psync;
mod sync;
mod uring;

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

pub use iolab_workload::micro::{FinalSync, OpenFlags, RecordSync};
pub use mmap::MmapFile;
pub use null::NullFile;
pub use psync::PsyncFile;
pub use sync::SyncFile;
pub use uring::UringFile;

/// Direction of a record transfer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    Read,
    Write,
}

/// One thread's handle on one file, through one backend.
pub trait IoFile {
    /// Records that may be in flight at once; 1 for synchronous backends.
    fn depth(&self) -> usize {
        1
    }

    /// Transfers one whole record at `offset` and returns once it is done.
    fn io(&mut self, dir: Dir, buf: &mut [u8], offset: u64) -> io::Result<()>;

    /// The per-record durability call for the record just written.
    fn record_sync(&mut self, how: RecordSync, offset: u64, len: usize) -> io::Result<()>;

    /// The call that ends a write pass.
    fn final_sync(&mut self, how: FinalSync) -> io::Result<()>;

    /// Queues the transfer of buffer slot `slot` at `offset`, followed by `sync` when given
    /// (ordered after the transfer). Only backends with `depth() > 1` support it.
    fn submit(
        &mut self,
        _dir: Dir,
        _slot: usize,
        _offset: u64,
        _sync: Option<RecordSync>,
    ) -> io::Result<()> {
        Err(io::Error::from(io::ErrorKind::Unsupported))
    }

    /// Pushes queued requests to the kernel and waits until at least `min` records completed,
    /// reporting each as `done(slot, result)`.
    fn reap(
        &mut self,
        _min: usize,
        _done: &mut dyn FnMut(usize, io::Result<()>),
    ) -> io::Result<()> {
        Err(io::Error::from(io::ErrorKind::Unsupported))
    }

    /// The buffer of a queued slot, so the runner can fill it with the data pattern.
    fn slot_buffer(&mut self, _slot: usize) -> Option<&mut [u8]> {
        None
    }
}

/// Opens `path` the way every backend does: read-only for reads, read-write (created if
/// missing) for writes, plus the sync mode's flags; never through a symbolic link (ELOOP).
pub fn open_file(path: &Path, write: bool, flags: OpenFlags) -> io::Result<File> {
    let mut custom = libc::O_NOFOLLOW;
    if flags.o_sync {
        custom |= libc::O_SYNC;
    }
    if flags.o_dsync {
        custom |= libc::O_DSYNC;
    }
    if flags.o_direct {
        custom |= libc::O_DIRECT;
    }
    OpenOptions::new()
        .read(true)
        .write(write)
        .create(write)
        .mode(0o644)
        .custom_flags(custom)
        .open(path)
}

/// Maps a syscall's -1 return to the thread's errno.
pub(crate) fn check(ret: libc::c_int) -> io::Result<()> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// fsync or fdatasync of a descriptor (shared by the descriptor-based backends).
pub(crate) fn fd_sync(fd: libc::c_int, data_only: bool) -> io::Result<()> {
    // SAFETY: plain syscalls on a descriptor we own.
    check(unsafe {
        if data_only {
            libc::fdatasync(fd)
        } else {
            libc::fsync(fd)
        }
    })
}

/// The per-record and final syncs of descriptor-based backends (msync needs a mapping).
pub(crate) fn fd_record_sync(fd: libc::c_int, how: RecordSync) -> io::Result<()> {
    match how {
        RecordSync::Fsync => fd_sync(fd, false),
        RecordSync::Fdatasync => fd_sync(fd, true),
        RecordSync::MsyncAsync | RecordSync::MsyncSync => {
            Err(io::Error::from(io::ErrorKind::Unsupported))
        }
    }
}

pub(crate) fn short_transfer(dir: Dir, done: usize, want: usize) -> io::Error {
    let what = match dir {
        Dir::Read => "read",
        Dir::Write => "write",
    };
    io::Error::new(
        io::ErrorKind::UnexpectedEof,
        format!("short {what}: {done} of {want} bytes (file shorter than expected?)"),
    )
}
