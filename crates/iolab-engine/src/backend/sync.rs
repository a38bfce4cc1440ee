//! `sync`: read(2)/write(2) at the file position, with lseek(2) only when the next record is
//! not where the last one ended — the syscall pattern of mobibench (lseek + write for random
//! records, bare writes for sequential ones).

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;

use super::{check, fd_record_sync, fd_sync, short_transfer, Dir, FinalSync, IoFile, RecordSync};

pub struct SyncFile {
    file: File,
    pos: u64,
}

impl SyncFile {
    pub fn new(file: File) -> SyncFile {
        SyncFile { file, pos: 0 }
    }
}

impl IoFile for SyncFile {
    #[inline]
    fn io(&mut self, dir: Dir, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let fd = self.file.as_raw_fd();
        if offset != self.pos {
            // SAFETY: lseek on a descriptor we own.
            let r = unsafe { libc::lseek(fd, offset as libc::off_t, libc::SEEK_SET) };
            check(if r < 0 { -1 } else { 0 })?;
            self.pos = offset;
        }
        let mut done = 0usize;
        while done < buf.len() {
            let rest = &mut buf[done..];
            // SAFETY: rest is valid for rest.len() bytes during the call.
            let n = unsafe {
                match dir {
                    Dir::Read => libc::read(fd, rest.as_mut_ptr().cast(), rest.len()),
                    Dir::Write => libc::write(fd, rest.as_ptr().cast(), rest.len()),
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
            self.pos += n as u64;
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
