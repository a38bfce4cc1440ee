//! `null`: accepts every request and does nothing (fio's null engine) — measures iolab's own
//! per-record overhead and lets statistics and reports be tested without a device.

use std::io;

use super::{Dir, FinalSync, IoFile, RecordSync};

pub struct NullFile {
    depth: usize,
    queued: Vec<usize>,
}

impl NullFile {
    pub fn new(depth: usize) -> NullFile {
        NullFile {
            depth,
            queued: Vec::with_capacity(depth),
        }
    }
}

impl IoFile for NullFile {
    fn depth(&self) -> usize {
        self.depth
    }

    #[inline]
    fn io(&mut self, _dir: Dir, buf: &mut [u8], _offset: u64) -> io::Result<()> {
        std::hint::black_box(buf);
        Ok(())
    }

    fn record_sync(&mut self, _how: RecordSync, _offset: u64, _len: usize) -> io::Result<()> {
        Ok(())
    }

    fn final_sync(&mut self, _how: FinalSync) -> io::Result<()> {
        Ok(())
    }

    fn submit(&mut self, _: Dir, slot: usize, _: u64, _: Option<RecordSync>) -> io::Result<()> {
        self.queued.push(slot);
        Ok(())
    }

    fn reap(&mut self, _min: usize, done: &mut dyn FnMut(usize, io::Result<()>)) -> io::Result<()> {
        for slot in self.queued.drain(..) {
            done(slot, Ok(()));
        }
        Ok(())
    }
}
