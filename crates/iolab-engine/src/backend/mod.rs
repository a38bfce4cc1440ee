//! I/O backends: one file each behind [`Backend`], like fio's `engines/`.
//!
//! A backend value belongs to one worker thread (io_uring keeps its ring there); each file the
//! thread opens is attached to it and gets the backend's own handle, [`Backend::File`]. Every
//! backend moves data synchronously ([`Backend::transfer`]); those whose capabilities say
//! `queued` also take requests to complete later ([`Backend::submit`], [`Backend::reap`]).
//! Every loop that drives them (a kind's record loop, WML's flowops) is generic over the
//! backend, so it is monomorphised and inlined per backend. What a backend can do is declared by its
//! [`EngineKind::caps`]; callers ask those flags, never the name. [`dispatch`] is the one place
//! a name selects code: adding a backend is one file and one line there.

mod kind;
mod mmap;
mod null;
mod psync;
mod sync;
mod uring;

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

pub use kind::{
    check_iodepth, parse_engine, parse_iodepth, DepthError, EngineCaps, EngineKind, FinalSync,
    OpenFlags, RecordSync, ENGINE_VALUE, IODEPTH_VALUE, MAX_IODEPTH,
};
pub use mmap::{MmapBackend, MmapFile};
pub use null::{NullBackend, NullFile};
pub use psync::{PsyncBackend, PsyncFile};
pub use sync::{SyncBackend, SyncFile};
pub use uring::{UringBackend, UringFile};

/// Direction of a transfer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    Read,
    Write,
}

impl Dir {
    pub fn name(self) -> &'static str {
        match self {
            Dir::Read => "read",
            Dir::Write => "write",
        }
    }
}

/// A transfer handed to a queued backend, to complete later.
#[derive(Debug, Clone, Copy)]
pub struct Request {
    pub dir: Dir,
    /// `len` bytes that stay valid, and untouched by anyone else, until the request is reaped.
    pub buf: *mut u8,
    pub len: usize,
    pub offset: u64,
    /// A sync ordered after the transfer; the request completes when the sync does.
    pub sync: Option<RecordSync>,
}

/// One worker thread's backend.
pub trait Backend: Sized {
    /// The name this backend is registered under; its capabilities are `KIND.caps()`.
    const KIND: EngineKind;

    /// The backend's hold on one open file.
    type File;

    /// A backend for one thread that keeps up to `depth` queued requests in flight.
    fn new(depth: usize) -> io::Result<Self>;

    /// Takes over an open file (`None` for backends that do no I/O, which open nothing). `len`
    /// is the size the caller expects it to have; `writable` whether it was opened for writing.
    fn attach(&mut self, file: Option<File>, len: u64, writable: bool) -> io::Result<Self::File>;

    /// The file behind a handle, for calls outside the data path (fstat, fadvise).
    fn file(f: &Self::File) -> Option<&File>;

    /// One request: moves up to `buf.len()` bytes at `offset` and returns how many moved
    /// (fewer at the end of the file; 0 past it).
    fn transfer(
        &mut self,
        f: &mut Self::File,
        dir: Dir,
        buf: &mut [u8],
        offset: u64,
    ) -> io::Result<usize>;

    /// Moves all of `buf` at `offset`, as many requests as that takes; running out of file
    /// is an error.
    #[inline]
    fn io(&mut self, f: &mut Self::File, dir: Dir, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let mut done = 0usize;
        // A partial write just before ENOSPC must surface as ENOSPC: loop on short transfers.
        while done < buf.len() {
            let n = self.transfer(f, dir, &mut buf[done..], offset + done as u64)?;
            if n == 0 {
                return Err(short_transfer(dir, done, buf.len()));
            }
            done += n;
        }
        Ok(())
    }

    /// Writes `buf` at the file's current end (one request; returns the bytes written).
    fn append(&mut self, f: &mut Self::File, buf: &[u8]) -> io::Result<usize>;

    /// The per-record durability call for the `len` bytes just written at `offset`.
    fn record_sync(
        &mut self,
        f: &mut Self::File,
        how: RecordSync,
        offset: u64,
        len: usize,
    ) -> io::Result<()>;

    /// Makes everything written to the file durable (fsync; msync for a mapping).
    fn sync(&mut self, f: &mut Self::File, how: FinalSync) -> io::Result<()>;

    /// Queues `req` under `slot` (below the backend's depth; one request per slot at a time).
    /// Only backends whose capabilities say `queued` take requests.
    ///
    /// # Safety
    /// `req.buf` must stay valid for `req.len` bytes, and not be used otherwise, until the
    /// slot's completion has been reported by [`Backend::reap`].
    unsafe fn submit(
        &mut self,
        _f: &mut Self::File,
        _slot: usize,
        _req: Request,
    ) -> io::Result<()> {
        Err(io::Error::from(io::ErrorKind::Unsupported))
    }

    /// Hands what is queued to the kernel without waiting for or collecting anything.
    fn start(&mut self) -> io::Result<()> {
        Ok(())
    }

    /// Starts what is queued and waits until at least `min` requests completed, reporting each
    /// as `done(slot, bytes moved or error)`; with `min` 0 it only starts and collects.
    fn reap(
        &mut self,
        _min: usize,
        _done: &mut dyn FnMut(usize, io::Result<usize>),
    ) -> io::Result<()> {
        Err(io::Error::from(io::ErrorKind::Unsupported))
    }
}

/// Code to run with a backend type: [`dispatch`] calls `visit` with the backend of an engine.
pub trait Visit {
    type Output;
    fn visit<B: Backend>(self) -> Self::Output;
}

/// Runs `v` with the backend registered for `kind`.
pub fn dispatch<V: Visit>(kind: EngineKind, v: V) -> V::Output {
    match kind {
        EngineKind::Psync => v.visit::<PsyncBackend>(),
        EngineKind::Sync => v.visit::<SyncBackend>(),
        EngineKind::Mmap => v.visit::<MmapBackend>(),
        EngineKind::IoUring => v.visit::<UringBackend>(),
        EngineKind::Null => v.visit::<NullBackend>(),
    }
}

/// Opens `path` the way every backend does: read-only for reads, read-write (created if
/// missing) for writes, plus the durability flags; never through a symbolic link (ELOOP).
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

/// The file a descriptor-based backend needs: backends that do I/O are always given one.
pub(crate) fn need_file(file: Option<File>) -> io::Result<File> {
    file.ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no file to do I/O on"))
}

/// Maps a syscall's -1 return to the thread's errno.
pub(crate) fn check(ret: libc::c_int) -> io::Result<()> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Runs a syscall returning a byte count until it is not interrupted.
pub(crate) fn retry(mut call: impl FnMut() -> libc::ssize_t) -> io::Result<usize> {
    loop {
        let n = call();
        if n >= 0 {
            return Ok(n as usize);
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

/// lseek(2) to the end of the file: where an append lands (filebench's lseek + write, so that
/// appends land at the real end even when other threads have the file open).
pub(crate) fn seek_end(fd: libc::c_int) -> io::Result<u64> {
    // SAFETY: lseek on a descriptor the caller owns.
    let at = unsafe { libc::lseek(fd, 0, libc::SEEK_END) };
    if at < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(at as u64)
}

/// fsync or fdatasync of a descriptor (shared by the descriptor-based backends).
pub(crate) fn fd_sync(fd: libc::c_int, data_only: bool) -> io::Result<()> {
    // SAFETY: plain syscalls on a descriptor we own.
    check(unsafe {
        if data_only {
            crate::nocancel::fdatasync(fd)
        } else {
            crate::nocancel::fsync(fd)
        }
    })
}

/// The per-record syncs of descriptor-based backends (msync needs a mapping).
pub(crate) fn fd_record_sync(fd: libc::c_int, how: RecordSync) -> io::Result<()> {
    match how {
        RecordSync::Fsync => fd_sync(fd, false),
        RecordSync::Fdatasync => fd_sync(fd, true),
        RecordSync::MsyncAsync | RecordSync::MsyncSync => {
            Err(io::Error::from(io::ErrorKind::Unsupported))
        }
    }
}

/// The error of a transfer that moved fewer bytes than asked.
pub fn short_transfer(dir: Dir, done: usize, want: usize) -> io::Error {
    io::Error::new(
        io::ErrorKind::UnexpectedEof,
        format!(
            "short {}: {done} of {want} bytes (file shorter than expected?)",
            dir.name()
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buffer::AlignedBuf;
    use std::os::unix::fs::FileExt;

    /// Drives one backend through what record loops and WML flowops ask of it, on a real file,
    /// and checks the file's contents and what each call reports.
    struct Exercise<'a>(&'a Path);

    impl Visit for Exercise<'_> {
        type Output = ();
        fn visit<B: Backend>(self) {
            let caps = B::KIND.caps();
            let name = B::KIND.name();
            let path = self.0.join(name);
            std::fs::write(&path, vec![7u8; 10_000]).unwrap();
            let mut b = B::new(4).unwrap();
            let file = (!caps.no_io).then(|| open_file(&path, true, OpenFlags::default()).unwrap());
            let mut f = b.attach(file, 10_000, true).unwrap();
            assert_eq!(B::file(&f).is_none(), caps.no_io, "{name}");
            let mut buf = vec![1u8; 4096];
            // A read across the end is short, one past it moves nothing.
            assert_eq!(
                b.transfer(&mut f, Dir::Read, &mut buf, 8192).unwrap(),
                1808,
                "{name}"
            );
            assert_eq!(
                b.transfer(&mut f, Dir::Read, &mut buf, 10_000).unwrap(),
                0,
                "{name}"
            );
            // Writes past the end grow the file; appends land at its end.
            b.io(&mut f, Dir::Write, &mut [2u8; 4096], 12_288).unwrap();
            assert_eq!(b.append(&mut f, &[3u8; 100]).unwrap(), 100, "{name}");
            b.sync(&mut f, FinalSync::Fsync).unwrap();
            b.io(&mut f, Dir::Read, &mut buf, 12_288).unwrap();
            if !caps.no_io {
                assert_eq!(buf, vec![2u8; 4096], "{name}");
            }
            assert_eq!(
                b.transfer(&mut f, Dir::Read, &mut buf, 16_384).unwrap(),
                100,
                "{name}"
            );
            let e = b.io(&mut f, Dir::Read, &mut buf, 16_384).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof, "{name}");
            if caps.queued {
                let mut bufs = AlignedBuf::zeroed(4 * 4096).unwrap();
                let base = bufs.as_mut_ptr();
                for slot in 0..4 {
                    let req = Request {
                        dir: Dir::Write,
                        buf: base.wrapping_add(slot * 4096),
                        len: 4096,
                        offset: slot as u64 * 4096,
                        sync: (slot == 3).then_some(RecordSync::Fdatasync),
                    };
                    // SAFETY: bufs outlives the reaping below.
                    unsafe { b.submit(&mut f, slot, req) }.unwrap();
                }
                let mut seen = Vec::new();
                while seen.len() < 4 {
                    b.reap(1, &mut |slot, r| seen.push((slot, r.unwrap())))
                        .unwrap();
                }
                seen.sort_unstable();
                assert_eq!(seen, [(0, 4096), (1, 4096), (2, 4096), (3, 4096)], "{name}");
            } else {
                // SAFETY: a refused request holds no buffer.
                let r = unsafe {
                    b.submit(
                        &mut f,
                        0,
                        Request {
                            dir: Dir::Read,
                            buf: buf.as_mut_ptr(),
                            len: 1,
                            offset: 0,
                            sync: None,
                        },
                    )
                };
                assert_eq!(r.unwrap_err().kind(), io::ErrorKind::Unsupported, "{name}");
            }
            drop(f);
            if !caps.no_io {
                let file = File::open(&path).unwrap();
                assert_eq!(file.metadata().unwrap().len(), 16_484, "{name}");
                let mut head = [0u8; 8];
                file.read_exact_at(&mut head, 0).unwrap();
                let want = if caps.queued { 0 } else { 7 };
                assert_eq!(head, [want; 8], "{name}");
            }
        }
    }

    /// WML's aio writes stay queued while the thread's other flowops transfer synchronously
    /// on the same backend: their completions must wait for the next reap, not be lost.
    struct Interleave<'a>(&'a Path);

    impl Visit for Interleave<'_> {
        type Output = ();
        fn visit<B: Backend>(self) {
            let path = self.0.join(B::KIND.name());
            let mut b = B::new(2).unwrap();
            let file = (!B::KIND.caps().no_io)
                .then(|| open_file(&path, true, OpenFlags::default()).unwrap());
            let mut f = b.attach(file, 0, true).unwrap();
            let mut bufs = AlignedBuf::zeroed(2 * 4096).unwrap();
            for slot in 0..2 {
                let req = Request {
                    dir: Dir::Write,
                    buf: bufs.as_mut_ptr().wrapping_add(slot * 4096),
                    len: 4096,
                    offset: slot as u64 * 4096,
                    sync: None,
                };
                // SAFETY: bufs outlives the reaping below.
                unsafe { b.submit(&mut f, slot, req) }.unwrap();
            }
            b.start().unwrap();
            // Whatever finishes while this one is waited for is kept.
            b.io(&mut f, Dir::Write, &mut [5u8; 100], 8192).unwrap();
            // Collected without waiting, so that a lost completion fails instead of hanging.
            let mut seen = Vec::new();
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
            while seen.len() < 2 && std::time::Instant::now() < deadline {
                b.reap(0, &mut |slot, r| seen.push((slot, r.unwrap())))
                    .unwrap();
                std::thread::yield_now();
            }
            seen.sort_unstable();
            assert_eq!(seen, [(0, 4096), (1, 4096)], "{}", B::KIND);
        }
    }

    #[test]
    fn synchronous_requests_keep_queued_completions_for_the_next_reap() {
        let dir = tempfile::tempdir().unwrap();
        for kind in EngineKind::ALL.into_iter().filter(|k| k.caps().queued) {
            dispatch(kind, Interleave(dir.path()));
        }
    }

    #[test]
    fn every_backend_reads_writes_appends_and_queues_as_its_caps_say() {
        let dir = tempfile::tempdir().unwrap();
        for kind in EngineKind::ALL {
            dispatch(kind, Exercise(dir.path()));
        }
    }
}
