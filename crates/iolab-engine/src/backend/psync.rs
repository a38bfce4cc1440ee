//! `psync`: pread(2)/pwrite(2), one record per call (fio's psync engine).

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;

use super::{fd_record_sync, fd_sync, short_transfer, Dir, FinalSync, IoFile, RecordSync};

pub struct PsyncFile {
    file: File,
}

impl PsyncFile {
    pub fn new(file: File) -> PsyncFile {
        PsyncFile { file }
    }
}

impl IoFile for PsyncFile {
    #[inline]
    fn io(&mut self, dir: Dir, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let fd = self.file.as_raw_fd();
        let mut done = 0usize;
        // Loop on short transfers: a partial pwrite just before ENOSPC must surface as ENOSPC.
        while done < buf.len() {
            let rest = &mut buf[done..];
            let off = (offset + done as u64) as libc::off_t;
            // SAFETY: rest is a valid buffer of rest.len() bytes for the duration of the call.
            let n = unsafe {
                match dir {
                    Dir::Read => libc::pread(fd, rest.as_mut_ptr().cast(), rest.len(), off),
                    Dir::Write => libc::pwrite(fd, rest.as_ptr().cast(), rest.len(), off),
                }
            };
            if n < 0 {
                let err = io::Error::last_os_error();
                if err.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(err);
            }
            if n == 0 {
                return Err(short_transfer(dir, done, buf.len()));
            }
            done += n as usize;
        }
        Ok(())
    }

    fn record_sync(&mut self, how: RecordSync, _offset: u64, _len: usize) -> io::Result<()> {
        fd_record_sync(self.file.as_raw_fd(), how)
    }

    fn final_sync(&mut self, _how: FinalSync) -> io::Result<()> {
        fd_sync(self.file.as_raw_fd(), false)
    }
}
