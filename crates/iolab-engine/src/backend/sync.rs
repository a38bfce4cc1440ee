//! `sync`: read(2)/write(2) at the file position, with lseek(2) only when the next request is
//! not where the last one ended — the syscall pattern of mobibench (lseek + write for random
//! records, bare writes for sequential ones).

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;

use crate::nocancel;

use super::{
    fd_record_sync, fd_sync, need_file, retry, seek_end, Backend, Dir, EngineKind, FinalSync,
    RecordSync,
};

pub struct SyncBackend;

pub struct SyncFile {
    file: File,
    /// The descriptor's file position, as far as this handle moved it.
    pos: u64,
}

impl Backend for SyncBackend {
    const KIND: EngineKind = EngineKind::Sync;
    type File = SyncFile;

    fn new(_depth: usize) -> io::Result<SyncBackend> {
        Ok(SyncBackend)
    }

    fn attach(&mut self, file: Option<File>, _len: u64, _writable: bool) -> io::Result<SyncFile> {
        Ok(SyncFile {
            file: need_file(file)?,
            pos: 0,
        })
    }

    fn file(f: &SyncFile) -> Option<&File> {
        Some(&f.file)
    }

    #[inline]
    fn transfer(
        &mut self,
        f: &mut SyncFile,
        dir: Dir,
        buf: &mut [u8],
        offset: u64,
    ) -> io::Result<usize> {
        let fd = f.file.as_raw_fd();
        if offset != f.pos {
            // SAFETY: lseek on a descriptor we own.
            let r = unsafe { crate::nocancel::lseek(fd, offset as libc::off_t, libc::SEEK_SET) };
            if r < 0 {
                return Err(io::Error::last_os_error());
            }
            f.pos = offset;
        }
        // SAFETY: buf is valid for buf.len() bytes during each call.
        let n = retry(|| unsafe {
            match dir {
                Dir::Read => nocancel::read(fd, buf.as_mut_ptr().cast(), buf.len()),
                Dir::Write => nocancel::write(fd, buf.as_ptr().cast(), buf.len()),
            }
        })?;
        f.pos += n as u64;
        Ok(n)
    }

    fn append(&mut self, f: &mut SyncFile, buf: &[u8]) -> io::Result<usize> {
        let fd = f.file.as_raw_fd();
        f.pos = seek_end(fd)?;
        // SAFETY: buf is valid for buf.len() bytes during the call.
        let n = retry(|| unsafe { nocancel::write(fd, buf.as_ptr().cast(), buf.len()) })?;
        f.pos += n as u64;
        Ok(n)
    }

    fn record_sync(
        &mut self,
        f: &mut SyncFile,
        how: RecordSync,
        _offset: u64,
        _len: usize,
    ) -> io::Result<()> {
        fd_record_sync(f.file.as_raw_fd(), how)
    }

    fn sync(&mut self, f: &mut SyncFile, _how: FinalSync) -> io::Result<()> {
        fd_sync(f.file.as_raw_fd(), false)
    }
}
