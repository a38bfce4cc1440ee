//! `null`: accepts every request and does nothing (fio's null engine) — measures iolab's own
//! cost per operation and lets statistics and reports be tested without a device. It opens no
//! file; each handle only tracks the size its file would have, so that reads end where the
//! file would end and whole-file reads stop.

use std::fs::File;
use std::io;

use super::{Backend, Dir, EngineKind, FinalSync, RecordSync, Request};

pub struct NullBackend {
    /// Queued requests: slot and the bytes they will report.
    queued: Vec<(usize, usize)>,
}

pub struct NullFile {
    size: u64,
}

impl NullFile {
    /// The bytes a request would move on a file of this size.
    fn moved(&mut self, dir: Dir, len: usize, offset: u64) -> usize {
        match dir {
            Dir::Read => (self.size.saturating_sub(offset)).min(len as u64) as usize,
            Dir::Write => {
                self.size = self.size.max(offset.saturating_add(len as u64));
                len
            }
        }
    }
}

impl Backend for NullBackend {
    const KIND: EngineKind = EngineKind::Null;
    type File = NullFile;

    fn new(depth: usize) -> io::Result<NullBackend> {
        Ok(NullBackend {
            queued: Vec::with_capacity(depth),
        })
    }

    fn attach(&mut self, _file: Option<File>, len: u64, _writable: bool) -> io::Result<NullFile> {
        Ok(NullFile { size: len })
    }

    fn file(_f: &NullFile) -> Option<&File> {
        None
    }

    #[inline]
    fn transfer(
        &mut self,
        f: &mut NullFile,
        dir: Dir,
        buf: &mut [u8],
        offset: u64,
    ) -> io::Result<usize> {
        let n = f.moved(dir, buf.len(), offset);
        std::hint::black_box(buf);
        Ok(n)
    }

    fn append(&mut self, f: &mut NullFile, buf: &[u8]) -> io::Result<usize> {
        f.size = f.size.saturating_add(buf.len() as u64);
        Ok(buf.len())
    }

    fn record_sync(
        &mut self,
        _f: &mut NullFile,
        _how: RecordSync,
        _offset: u64,
        _len: usize,
    ) -> io::Result<()> {
        Ok(())
    }

    fn sync(&mut self, _f: &mut NullFile, _how: FinalSync) -> io::Result<()> {
        Ok(())
    }

    unsafe fn submit(&mut self, f: &mut NullFile, slot: usize, req: Request) -> io::Result<()> {
        let n = f.moved(req.dir, req.len, req.offset);
        self.queued.push((slot, n));
        Ok(())
    }

    fn reap(
        &mut self,
        _min: usize,
        done: &mut dyn FnMut(usize, io::Result<usize>),
    ) -> io::Result<()> {
        for (slot, n) in self.queued.drain(..) {
            done(slot, Ok(n));
        }
        Ok(())
    }
}
