//! `mmap`: the file is mapped MAP_SHARED once; records are copied into (writes) or out of
//! (reads) the mapping, per-record msync covers the record's pages, and a write pass ends with
//! msync(MS_SYNC) of the whole mapping (mobibench's mmap, mmap+MS_ASYNC and mmap+MS_SYNC).

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::ptr::NonNull;

use super::{check, Dir, FinalSync, IoFile, RecordSync};

pub struct MmapFile {
    // Kept open for the life of the mapping (not required by POSIX, but keeps the inode pinned
    // visibly in /proc/PID/fd for anyone watching the run).
    _file: File,
    map: NonNull<u8>,
    len: usize,
    page: usize,
}

// SAFETY: the mapping is owned by this value and only accessed through &mut self.
unsafe impl Send for MmapFile {}

impl MmapFile {
    /// Maps `len` bytes of `file`. With `extend`, the file is first sized to `len` (for
    /// append; the micro runner has already allocated its blocks with fallocate, since a
    /// store into a page the filesystem cannot allocate is a SIGBUS, not an error).
    pub fn new(file: File, len: u64, writable: bool, extend: bool) -> io::Result<MmapFile> {
        if extend {
            file.set_len(len)?;
        }
        let prot = if writable {
            libc::PROT_READ | libc::PROT_WRITE
        } else {
            libc::PROT_READ
        };
        let len = usize::try_from(len).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        // SAFETY: a fresh shared mapping of our own descriptor; checked for MAP_FAILED.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                prot,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: sysconf is always safe to call.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
        Ok(MmapFile {
            _file: file,
            map: NonNull::new(ptr.cast()).expect("mmap returned a non-null mapping"),
            len,
            page,
        })
    }

    fn msync(&self, start: usize, len: usize, flags: libc::c_int) -> io::Result<()> {
        // msync needs a page-aligned address: widen the range down to the page boundary.
        let aligned = start - start % self.page;
        // SAFETY: the range lies inside our mapping.
        check(unsafe {
            libc::msync(
                self.map.as_ptr().add(aligned).cast(),
                len + (start - aligned),
                flags,
            )
        })
    }
}

impl IoFile for MmapFile {
    #[inline]
    fn io(&mut self, dir: Dir, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let off = offset as usize;
        if off + buf.len() > self.len {
            return Err(io::Error::from(io::ErrorKind::UnexpectedEof));
        }
        // SAFETY: [off, off + len) is inside the mapping (checked above); buf does not alias it.
        unsafe {
            let p = self.map.as_ptr().add(off);
            match dir {
                Dir::Read => std::ptr::copy_nonoverlapping(p, buf.as_mut_ptr(), buf.len()),
                Dir::Write => std::ptr::copy_nonoverlapping(buf.as_ptr(), p, buf.len()),
            }
        }
        Ok(())
    }

    fn record_sync(&mut self, how: RecordSync, offset: u64, len: usize) -> io::Result<()> {
        match how {
            RecordSync::MsyncAsync => self.msync(offset as usize, len, libc::MS_ASYNC),
            RecordSync::MsyncSync => self.msync(offset as usize, len, libc::MS_SYNC),
            RecordSync::Fsync | RecordSync::Fdatasync => {
                Err(io::Error::from(io::ErrorKind::Unsupported))
            }
        }
    }

    fn final_sync(&mut self, _how: FinalSync) -> io::Result<()> {
        self.msync(0, self.len, libc::MS_SYNC)
    }
}

impl Drop for MmapFile {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly what `new` mapped.
        unsafe { libc::munmap(self.map.as_ptr().cast(), self.len) };
    }
}
