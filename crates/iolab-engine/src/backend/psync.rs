//! `psync`: pread(2)/pwrite(2), one call per request (fio's psync engine); appends are
//! lseek(2) to the end and write(2), as filebench does them.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;

use crate::nocancel;

use super::{
    fd_record_sync, fd_sync, need_file, retry, seek_end, Backend, Dir, EngineKind, FinalSync,
    RecordSync,
};

pub struct PsyncBackend;

pub struct PsyncFile {
    file: File,
}

impl Backend for PsyncBackend {
    const KIND: EngineKind = EngineKind::Psync;
    type File = PsyncFile;

    fn new(_depth: usize) -> io::Result<PsyncBackend> {
        Ok(PsyncBackend)
    }

    fn attach(&mut self, file: Option<File>, _len: u64, _writable: bool) -> io::Result<PsyncFile> {
        Ok(PsyncFile {
            file: need_file(file)?,
        })
    }

    fn file(f: &PsyncFile) -> Option<&File> {
        Some(&f.file)
    }

    #[inline]
    fn transfer(
        &mut self,
        f: &mut PsyncFile,
        dir: Dir,
        buf: &mut [u8],
        offset: u64,
    ) -> io::Result<usize> {
        let fd = f.file.as_raw_fd();
        let off = offset as libc::off_t;
        // SAFETY: buf is valid for buf.len() bytes for the duration of each call.
        retry(|| unsafe {
            match dir {
                Dir::Read => nocancel::pread(fd, buf.as_mut_ptr().cast(), buf.len(), off),
                Dir::Write => nocancel::pwrite(fd, buf.as_ptr().cast(), buf.len(), off),
            }
        })
    }

    fn append(&mut self, f: &mut PsyncFile, buf: &[u8]) -> io::Result<usize> {
        let fd = f.file.as_raw_fd();
        seek_end(fd)?;
        // SAFETY: buf is valid for buf.len() bytes during the call.
        retry(|| unsafe { nocancel::write(fd, buf.as_ptr().cast(), buf.len()) })
    }

    fn record_sync(
        &mut self,
        f: &mut PsyncFile,
        how: RecordSync,
        _offset: u64,
        _len: usize,
    ) -> io::Result<()> {
        fd_record_sync(f.file.as_raw_fd(), how)
    }

    fn sync(&mut self, f: &mut PsyncFile, _how: FinalSync) -> io::Result<()> {
        fd_sync(f.file.as_raw_fd(), false)
    }
}
