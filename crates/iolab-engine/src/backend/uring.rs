//! `io_uring`: one ring per thread, shared by every file the thread has open. Queued requests
//! keep up to `depth` in flight; a request's sync is a second entry linked to its write
//! (IOSQE_IO_LINK), so it starts only after the write completed, and the request completes when
//! its sync does. A synchronous [`Backend::transfer`] is one entry submitted and waited for in
//! one io_uring_enter; completions of queued requests that arrive meanwhile are kept for the
//! next [`Backend::reap`]. Appends find the end with lseek(2); a sync is a plain fsync(2).

use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, RawFd};

use io_uring::{opcode, squeue, types, IoUring};

use super::{fd_sync, seek_end, short_transfer, Backend, Dir, EngineKind, FinalSync, RecordSync};
use super::{need_file, Request};

/// Marks the user_data of the sync half of a linked pair.
const SYNC_BIT: u64 = 1 << 63;
/// The user_data of the one synchronous request.
const DIRECT: u64 = u64::MAX;
/// The most one read or write moves on Linux (MAX_RW_COUNT); a synchronous request asks for
/// at most this much and, like pread/pwrite, reports a short transfer beyond.
const MAX_RW_COUNT: usize = 0x7fff_f000;

pub struct UringBackend {
    ring: IoUring,
    /// Per slot: what its request expects, and the transfer's result while a linked sync runs.
    slots: Vec<SlotState>,
    /// Entries pushed since the last io_uring_enter; zero means the SQ is empty.
    unsubmitted: usize,
    /// Queued requests that completed while a synchronous one was waited for.
    backlog: Vec<(usize, io::Result<usize>)>,
}

/// A file attached to the ring.
pub struct UringFile {
    fd: RawFd,
    file: File,
}

#[derive(Clone, Copy, Default)]
struct SlotState {
    len: u32,
    dir_write: bool,
    linked_sync: bool,
    /// The transfer's result (bytes or -errno), once it completed.
    res: i32,
}

impl SlotState {
    /// The request's outcome, once complete: bytes moved, or why not. A short write followed
    /// by a sync is an error (the kernel cancelled the sync).
    fn outcome(&self) -> io::Result<usize> {
        if self.res < 0 {
            return Err(io::Error::from_raw_os_error(-self.res));
        }
        let n = self.res as usize;
        if self.linked_sync && n != self.len as usize {
            let dir = if self.dir_write {
                Dir::Write
            } else {
                Dir::Read
            };
            return Err(short_transfer(dir, n, self.len as usize));
        }
        Ok(n)
    }
}

/// Books one completion of a queued request; returns the request's outcome once complete.
#[inline]
fn complete(slots: &mut [SlotState], data: u64, res: i32) -> Option<(usize, io::Result<usize>)> {
    let slot = (data & !SYNC_BIT) as usize;
    let state = slots.get_mut(slot)?;
    if data & SYNC_BIT == 0 {
        state.res = res;
        if state.linked_sync {
            return None; // the request completes with its sync (or its cancellation)
        }
    } else if res < 0 && state.res >= 0 && state.res as u32 == state.len {
        state.res = res;
    }
    Some((slot, state.outcome()))
}

fn entry(fd: RawFd, dir: Dir, buf: *mut u8, len: usize, offset: u64) -> io::Result<squeue::Entry> {
    let len = u32::try_from(len).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{len} bytes is more than one io_uring request can move (4 GiB)"),
        )
    })?;
    let fd = types::Fd(fd);
    Ok(match dir {
        Dir::Read => opcode::Read::new(fd, buf, len).offset(offset).build(),
        Dir::Write => opcode::Write::new(fd, buf, len).offset(offset).build(),
    })
}

fn sync_entry(fd: RawFd, how: RecordSync) -> io::Result<squeue::Entry> {
    let flags = match how {
        RecordSync::Fsync => types::FsyncFlags::empty(),
        RecordSync::Fdatasync => types::FsyncFlags::DATASYNC,
        RecordSync::MsyncAsync | RecordSync::MsyncSync => {
            return Err(io::Error::from(io::ErrorKind::Unsupported))
        }
    };
    Ok(opcode::Fsync::new(types::Fd(fd)).flags(flags).build())
}

impl UringBackend {
    /// A ring for `depth` queued requests with `entries` submission entries (a power of two).
    pub(crate) fn with_entries(depth: usize, entries: u32) -> io::Result<UringBackend> {
        Ok(UringBackend {
            ring: IoUring::new(entries)?,
            slots: vec![SlotState::default(); depth.max(1)],
            unsubmitted: 0,
            backlog: Vec::new(),
        })
    }

    /// Starts what is queued when fewer than `n` entries are free, so that a transfer and
    /// its linked sync go to the kernel together.
    fn make_room(&mut self, n: usize) -> io::Result<()> {
        let free = {
            let sq = self.ring.submission();
            sq.capacity() - sq.len()
        };
        if free < n {
            self.enter(0)?;
        }
        Ok(())
    }

    fn push(&mut self, entry: &squeue::Entry) -> io::Result<()> {
        // SAFETY: the caller vouches for the buffer the entry references (Backend::submit's
        // contract, or a synchronous request that is waited for before returning).
        unsafe { self.ring.submission().push(entry) }
            .map_err(|_| io::Error::other("io_uring submission queue full"))?;
        self.unsubmitted += 1;
        Ok(())
    }

    /// Submits what is queued and waits for `want` completions, retrying on EINTR.
    fn enter(&mut self, want: usize) -> io::Result<()> {
        loop {
            match self.ring.submit_and_wait(want) {
                Ok(_) => break,
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                Err(e) => return Err(e),
            }
        }
        self.unsubmitted = 0;
        Ok(())
    }

    /// Runs one request to completion, keeping queued completions for the next reap.
    fn direct(&mut self, entry: squeue::Entry) -> io::Result<i32> {
        self.make_room(1)?;
        self.push(&entry.user_data(DIRECT))?;
        loop {
            self.enter(1)?;
            let mut result = None;
            for cqe in self.ring.completion() {
                let (data, res) = (cqe.user_data(), cqe.result());
                if data == DIRECT {
                    result = Some(res);
                } else if let Some(done) = complete(&mut self.slots, data, res) {
                    self.backlog.push(done);
                }
            }
            if let Some(res) = result {
                if res < 0 {
                    return Err(io::Error::from_raw_os_error(-res));
                }
                return Ok(res);
            }
        }
    }

    /// [`Backend::submit`] on any descriptor.
    ///
    /// # Safety
    /// As for [`Backend::submit`]; and `fd` stays open until the request has been submitted.
    pub(crate) unsafe fn submit_fd(
        &mut self,
        fd: RawFd,
        slot: usize,
        req: Request,
    ) -> io::Result<()> {
        let mut e = entry(fd, req.dir, req.buf, req.len, req.offset)?.user_data(slot as u64);
        let sync = req.sync.map(|how| sync_entry(fd, how)).transpose()?;
        if sync.is_some() {
            e = e.flags(squeue::Flags::IO_LINK);
        }
        let state = self
            .slots
            .get_mut(slot)
            .ok_or_else(|| io::Error::other(format!("io_uring slot {slot} beyond the depth")))?;
        *state = SlotState {
            len: req.len as u32,
            dir_write: req.dir == Dir::Write,
            linked_sync: sync.is_some(),
            res: 0,
        };
        self.make_room(1 + usize::from(sync.is_some()))?;
        self.push(&e)?;
        if let Some(s) = sync {
            self.push(&s.user_data(slot as u64 | SYNC_BIT))?;
        }
        Ok(())
    }
}

impl Backend for UringBackend {
    const KIND: EngineKind = EngineKind::IoUring;
    type File = UringFile;

    fn new(depth: usize) -> io::Result<UringBackend> {
        // Two entries per queued request: a transfer and its linked sync.
        let entries = (depth.max(1) * 2).next_power_of_two();
        UringBackend::with_entries(depth, entries as u32)
    }

    fn attach(&mut self, file: Option<File>, _len: u64, _writable: bool) -> io::Result<UringFile> {
        let file = need_file(file)?;
        Ok(UringFile {
            fd: file.as_raw_fd(),
            file,
        })
    }

    fn file(f: &UringFile) -> Option<&File> {
        Some(&f.file)
    }

    fn transfer(
        &mut self,
        f: &mut UringFile,
        dir: Dir,
        buf: &mut [u8],
        offset: u64,
    ) -> io::Result<usize> {
        let len = buf.len().min(MAX_RW_COUNT);
        let e = entry(f.fd, dir, buf.as_mut_ptr(), len, offset)?;
        Ok(self.direct(e)? as usize)
    }

    fn append(&mut self, f: &mut UringFile, buf: &[u8]) -> io::Result<usize> {
        let end = seek_end(f.fd)?;
        // A write only reads from the buffer.
        let len = buf.len().min(MAX_RW_COUNT);
        let e = entry(f.fd, Dir::Write, buf.as_ptr().cast_mut(), len, end)?;
        Ok(self.direct(e)? as usize)
    }

    fn record_sync(
        &mut self,
        f: &mut UringFile,
        how: RecordSync,
        _offset: u64,
        _len: usize,
    ) -> io::Result<()> {
        self.direct(sync_entry(f.fd, how)?).map(|_| ())
    }

    fn sync(&mut self, f: &mut UringFile, _how: FinalSync) -> io::Result<()> {
        fd_sync(f.fd, false)
    }

    unsafe fn submit(&mut self, f: &mut UringFile, slot: usize, req: Request) -> io::Result<()> {
        // SAFETY: forwarded contract; f keeps its descriptor open.
        unsafe { self.submit_fd(f.fd, slot, req) }
    }

    fn start(&mut self) -> io::Result<()> {
        if self.unsubmitted > 0 {
            self.enter(0)?;
        }
        Ok(())
    }

    fn reap(
        &mut self,
        min: usize,
        done: &mut dyn FnMut(usize, io::Result<usize>),
    ) -> io::Result<()> {
        let mut completed = 0;
        for (slot, r) in self.backlog.drain(..) {
            done(slot, r);
            completed += 1;
        }
        loop {
            let want = min.saturating_sub(completed);
            // One syscall both submits what is queued and waits for completions.
            if self.unsubmitted > 0 || want > 0 {
                self.enter(want)?;
            }
            for cqe in self.ring.completion() {
                if let Some((slot, r)) = complete(&mut self.slots, cqe.user_data(), cqe.result()) {
                    completed += 1;
                    done(slot, r);
                }
            }
            if completed >= min {
                return Ok(());
            }
        }
    }
}
