//! `io_uring`: up to `depth` records in flight per thread. A per-record sync is queued as a
//! second request linked to the write (IOSQE_IO_LINK), so it starts only after the write
//! completed; the record completes when its sync does.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;

use io_uring::{opcode, squeue, types, IoUring};

use super::{fd_sync, short_transfer, Dir, FinalSync, IoFile, RecordSync};
use crate::buffer::AlignedBuf;

/// Marks the user_data of the sync half of a linked pair.
const SYNC_BIT: u64 = 1 << 63;

pub struct UringFile {
    file: File,
    ring: IoUring,
    depth: usize,
    bs: usize,
    bufs: AlignedBuf,
    /// Per slot: bytes expected from its transfer, and whether a linked sync follows it.
    slots: Vec<SlotState>,
    /// Requests pushed since the last submit; zero means the SQ is empty.
    unsubmitted: usize,
}

#[derive(Clone, Copy, Default)]
struct SlotState {
    dir_write: bool,
    linked_sync: bool,
    error: Option<i32>,
}

impl UringFile {
    pub fn new(file: File, depth: usize, bs: usize) -> io::Result<UringFile> {
        // Two entries per record: a transfer and possibly its linked sync.
        let entries = (depth * 2).next_power_of_two() as u32;
        let ring = IoUring::new(entries)?;
        // An allocation failure comes back as an io::Error holding the AllocError.
        let bufs = AlignedBuf::zeroed((bs as u64).saturating_mul(depth as u64))?;
        Ok(UringFile {
            file,
            ring,
            depth,
            bs,
            bufs,
            slots: vec![SlotState::default(); depth],
            unsubmitted: 0,
        })
    }

    fn fd(&self) -> types::Fd {
        types::Fd(self.file.as_raw_fd())
    }

    fn push(&mut self, entry: squeue::Entry) -> io::Result<()> {
        // SAFETY: every buffer referenced by an entry lives in self.bufs, which outlives the
        // ring's use of it (the runner reaps all slots before dropping the backend).
        unsafe { self.ring.submission().push(&entry) }
            .map_err(|_| io::Error::other("io_uring submission queue full"))?;
        self.unsubmitted += 1;
        Ok(())
    }

    fn transfer_entry(&mut self, dir: Dir, slot: usize, offset: u64) -> squeue::Entry {
        let ptr = self.bufs.as_mut_ptr().wrapping_add(slot * self.bs);
        let len = self.bs as u32;
        match dir {
            Dir::Read => opcode::Read::new(self.fd(), ptr, len)
                .offset(offset)
                .build(),
            Dir::Write => opcode::Write::new(self.fd(), ptr, len)
                .offset(offset)
                .build(),
        }
        .user_data(slot as u64)
    }

    fn sync_entry(&self, how: RecordSync, slot: usize) -> io::Result<squeue::Entry> {
        let flags = match how {
            RecordSync::Fsync => types::FsyncFlags::empty(),
            RecordSync::Fdatasync => types::FsyncFlags::DATASYNC,
            _ => return Err(io::Error::from(io::ErrorKind::Unsupported)),
        };
        Ok(opcode::Fsync::new(self.fd())
            .flags(flags)
            .build()
            .user_data(slot as u64 | SYNC_BIT))
    }
}

fn result_error(res: i32) -> io::Error {
    io::Error::from_raw_os_error(-res)
}

impl IoFile for UringFile {
    fn depth(&self) -> usize {
        self.depth
    }

    fn io(&mut self, dir: Dir, buf: &mut [u8], offset: u64) -> io::Result<()> {
        if dir == Dir::Write {
            self.bufs.as_mut_slice()[..buf.len()].copy_from_slice(buf);
        }
        self.submit(dir, 0, offset, None)?;
        let mut outcome = Ok(());
        self.reap(1, &mut |_, r| outcome = r)?;
        if dir == Dir::Read {
            buf.copy_from_slice(&self.bufs.as_slice()[..buf.len()]);
        }
        outcome
    }

    fn record_sync(&mut self, how: RecordSync, _offset: u64, _len: usize) -> io::Result<()> {
        let entry = self.sync_entry(how, 0)?.user_data(SYNC_BIT | u64::MAX >> 1);
        self.push(entry)?;
        self.ring.submit_and_wait(1)?;
        self.unsubmitted = 0;
        let cqe = self
            .ring
            .completion()
            .next()
            .ok_or_else(|| io::Error::other("io_uring: no completion"))?;
        if cqe.result() < 0 {
            return Err(result_error(cqe.result()));
        }
        Ok(())
    }

    fn final_sync(&mut self, _how: FinalSync) -> io::Result<()> {
        fd_sync(self.file.as_raw_fd(), false)
    }

    fn submit(
        &mut self,
        dir: Dir,
        slot: usize,
        offset: u64,
        sync: Option<RecordSync>,
    ) -> io::Result<()> {
        let mut entry = self.transfer_entry(dir, slot, offset);
        if sync.is_some() {
            entry = entry.flags(squeue::Flags::IO_LINK);
        }
        self.slots[slot] = SlotState {
            dir_write: dir == Dir::Write,
            linked_sync: sync.is_some(),
            error: None,
        };
        self.push(entry)?;
        if let Some(how) = sync {
            let e = self.sync_entry(how, slot)?;
            self.push(e)?;
        }
        Ok(())
    }

    fn reap(&mut self, min: usize, done: &mut dyn FnMut(usize, io::Result<()>)) -> io::Result<()> {
        let mut completed = 0;
        loop {
            let want = min.saturating_sub(completed);
            // One syscall both submits what is queued and waits for completions.
            if self.unsubmitted > 0 || want > 0 {
                loop {
                    match self.ring.submit_and_wait(want) {
                        Ok(_) => break,
                        Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                        Err(e) => return Err(e),
                    }
                }
                self.unsubmitted = 0;
            }
            let bs = self.bs as i32;
            for cqe in self.ring.completion() {
                let data = cqe.user_data();
                let res = cqe.result();
                let slot = (data & !SYNC_BIT) as usize;
                let state = &mut self.slots[slot];
                if data & SYNC_BIT == 0 {
                    // The transfer half.
                    if res < 0 {
                        state.error = Some(res);
                    } else if res != bs {
                        state.error = Some(i32::MIN);
                    }
                    if state.linked_sync {
                        continue; // the record completes with its sync (or its cancellation)
                    }
                } else if res < 0 && state.error.is_none() {
                    state.error = Some(res);
                }
                completed += 1;
                let dir = if state.dir_write {
                    Dir::Write
                } else {
                    Dir::Read
                };
                let result = match state.error {
                    None => Ok(()),
                    Some(i32::MIN) => Err(short_transfer(dir, 0, bs as usize)),
                    Some(e) => Err(result_error(e)),
                };
                done(slot, result);
            }
            if completed >= min {
                return Ok(());
            }
        }
    }

    fn slot_buffer(&mut self, slot: usize) -> Option<&mut [u8]> {
        let bs = self.bs;
        self.bufs.as_mut_slice().get_mut(slot * bs..(slot + 1) * bs)
    }
}
