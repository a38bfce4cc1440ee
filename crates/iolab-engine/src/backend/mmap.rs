//! `mmap`: each file is mapped MAP_SHARED when it is attached; requests copy into (writes) or
//! out of (reads) the mapping, a per-record msync covers the record's pages, and a sync is
//! msync(MS_SYNC) of the whole mapping (mobibench's mmap, mmap+MS_ASYNC and mmap+MS_SYNC).
//!
//! A write past the end first extends the file with fallocate(2) and remaps it: a store into
//! a page the filesystem cannot allocate is a SIGBUS, not an error, so blocks are reserved
//! before any store (a filesystem without fallocate gets them written with zeros). A read past
//! the mapped end looks at the file's size again (another thread may have grown it). A file
//! opened O_SYNC or O_DSYNC gets each write msync'ed before it returns, as the flag does for
//! write(2).

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::ptr::NonNull;

use super::{check, need_file, Backend, Dir, EngineKind, FinalSync, RecordSync};

pub struct MmapBackend {
    page: usize,
}

pub struct MmapFile {
    file: File,
    /// None while the file is empty (a mapping cannot be empty).
    map: Option<NonNull<u8>>,
    len: usize,
    writable: bool,
    /// O_SYNC or O_DSYNC: every write is made durable before it returns.
    sync_writes: bool,
    page: usize,
}

// SAFETY: the mapping is owned by this value and only accessed through &mut self.
unsafe impl Send for MmapFile {}

impl Backend for MmapBackend {
    const KIND: EngineKind = EngineKind::Mmap;
    type File = MmapFile;

    fn new(_depth: usize) -> io::Result<MmapBackend> {
        // SAFETY: sysconf is always safe to call.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
        Ok(MmapBackend { page })
    }

    fn attach(&mut self, file: Option<File>, _len: u64, writable: bool) -> io::Result<MmapFile> {
        let file = need_file(file)?;
        // SAFETY: fcntl(F_GETFL) on a descriptor we own.
        let flags = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_GETFL) };
        check(flags)?;
        let mut f = MmapFile {
            file,
            map: None,
            len: 0,
            writable,
            sync_writes: flags & (libc::O_SYNC | libc::O_DSYNC) != 0,
            page: self.page,
        };
        f.remap()?;
        Ok(f)
    }

    fn file(f: &MmapFile) -> Option<&File> {
        Some(&f.file)
    }

    #[inline]
    fn transfer(
        &mut self,
        f: &mut MmapFile,
        dir: Dir,
        buf: &mut [u8],
        offset: u64,
    ) -> io::Result<usize> {
        f.copy(dir, buf.as_mut_ptr(), buf.len(), offset)
    }

    fn append(&mut self, f: &mut MmapFile, buf: &[u8]) -> io::Result<usize> {
        let end = f.file.metadata()?.len();
        // A write only reads from the buffer.
        f.copy(Dir::Write, buf.as_ptr().cast_mut(), buf.len(), end)
    }

    fn record_sync(
        &mut self,
        f: &mut MmapFile,
        how: RecordSync,
        offset: u64,
        len: usize,
    ) -> io::Result<()> {
        match how {
            RecordSync::MsyncAsync => f.msync(offset as usize, len, libc::MS_ASYNC),
            RecordSync::MsyncSync => f.msync(offset as usize, len, libc::MS_SYNC),
            RecordSync::Fsync | RecordSync::Fdatasync => {
                Err(io::Error::from(io::ErrorKind::Unsupported))
            }
        }
    }

    fn sync(&mut self, f: &mut MmapFile, _how: FinalSync) -> io::Result<()> {
        f.msync(0, f.len, libc::MS_SYNC)
    }
}

impl MmapFile {
    /// Copies `len` bytes between `buf` and the file at `offset` (fewer at the end of the file
    /// for reads); `buf` is only read for writes.
    #[inline]
    fn copy(&mut self, dir: Dir, buf: *mut u8, len: usize, offset: u64) -> io::Result<usize> {
        if dir == Dir::Write && !self.writable {
            return Err(io::Error::from_raw_os_error(libc::EBADF));
        }
        let end = offset
            .checked_add(len as u64)
            .and_then(|e| usize::try_from(e).ok())
            .ok_or_else(|| io::Error::from_raw_os_error(libc::EFBIG))?;
        if end > self.len {
            match dir {
                Dir::Read => self.remap()?,
                Dir::Write => self.extend(end)?,
            }
        }
        let off = offset as usize;
        let n = end.min(self.len).saturating_sub(off);
        let Some(map) = self.map.filter(|_| n > 0) else {
            return Ok(0);
        };
        // SAFETY: [off, off + n) is inside the mapping (checked above), and buf holds `len`
        // bytes, at least n, that do not alias it.
        unsafe {
            let p = map.as_ptr().add(off);
            match dir {
                Dir::Read => std::ptr::copy_nonoverlapping(p, buf, n),
                Dir::Write => std::ptr::copy_nonoverlapping(buf, p, n),
            }
        }
        if dir == Dir::Write && self.sync_writes {
            self.msync(off, n, libc::MS_SYNC)?;
        }
        Ok(n)
    }

    /// Maps the file at its current size (nothing while it is empty).
    fn remap(&mut self) -> io::Result<()> {
        let size = self.file.metadata()?.len();
        let len = usize::try_from(size).map_err(|_| io::Error::from_raw_os_error(libc::EFBIG))?;
        if len == self.len {
            return Ok(());
        }
        self.unmap();
        if len == 0 {
            return Ok(());
        }
        let prot = if self.writable {
            libc::PROT_READ | libc::PROT_WRITE
        } else {
            libc::PROT_READ
        };
        // SAFETY: a fresh shared mapping of our own descriptor; checked for MAP_FAILED.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                prot,
                libc::MAP_SHARED,
                self.file.as_raw_fd(),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        self.map = NonNull::new(ptr.cast());
        self.len = len;
        Ok(())
    }

    /// Grows the file to at least `end` bytes with its blocks allocated, and remaps it.
    fn extend(&mut self, end: usize) -> io::Result<()> {
        let size = self.file.metadata()?.len();
        let end = end as u64;
        if end > size {
            let fd = self.file.as_raw_fd();
            loop {
                // SAFETY: a plain syscall on a descriptor we own.
                let r = unsafe {
                    libc::fallocate(fd, 0, size as libc::off_t, (end - size) as libc::off_t)
                };
                if r == 0 {
                    break;
                }
                let e = io::Error::last_os_error();
                match e.raw_os_error() {
                    Some(libc::EINTR) => continue,
                    Some(libc::EOPNOTSUPP) => {
                        let zeros = vec![0u8; (end - size).min(1 << 20) as usize];
                        let mut at = size;
                        while at < end {
                            let n = (end - at).min(zeros.len() as u64) as usize;
                            self.file.write_all_at(&zeros[..n], at)?;
                            at += n as u64;
                        }
                        break;
                    }
                    _ => return Err(e),
                }
            }
        }
        self.remap()
    }

    fn msync(&self, start: usize, len: usize, flags: libc::c_int) -> io::Result<()> {
        let Some(map) = self.map else {
            return Ok(());
        };
        let end = (start + len).min(self.len);
        if start >= end {
            return Ok(());
        }
        // msync needs a page-aligned address: widen the range down to the page boundary.
        let aligned = start - start % self.page;
        // SAFETY: the range lies inside our mapping.
        check(unsafe { libc::msync(map.as_ptr().add(aligned).cast(), end - aligned, flags) })
    }

    fn unmap(&mut self) {
        if let Some(map) = self.map.take() {
            // SAFETY: unmapping exactly what remap mapped.
            unsafe { libc::munmap(map.as_ptr().cast(), self.len) };
        }
        self.len = 0;
    }
}

impl Drop for MmapFile {
    fn drop(&mut self) {
        self.unmap();
    }
}
