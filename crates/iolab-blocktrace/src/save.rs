//! Saving the request-level trace: every request issued to the device, with its completion
//! latency, in iolab's trace format (`iolab-tracefile`), in issue order.
//!
//! Requests complete out of order. Each issue takes the next sequence number and a slot in
//! a queue; a completion fills its slot; the front of the queue is written as soon as it is
//! complete. A request whose completion never comes (its event was lost) would hold the
//! queue up: beyond [`MAX_WAITING`] slots the front is written without a latency.
//! Requeued requests are forgotten (they are issued again, with a new slot).

use std::collections::VecDeque;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::TraceError;
use iolab_tracefile::{BlockRequest, IolabWriter, TraceInfo};

/// Slots kept waiting for a completion before the oldest is written without one.
const MAX_WAITING: usize = 1 << 16;

/// A saved request-level trace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedTrace {
    /// The file (iolab's trace format).
    pub path: PathBuf,
    /// Requests written.
    pub requests: u64,
    /// Of those, requests without a completion (still in flight at the end, or their
    /// completion event was lost).
    pub without_completion: u64,
}

enum Slot {
    Waiting(BlockRequest),
    Done(BlockRequest),
    Gone,
}

/// The writer side of [`SavedTrace`], fed by the summarizer.
pub(crate) struct RequestLog {
    writer: IolabWriter<File>,
    path: PathBuf,
    start_ns: u64,
    /// Sequence number of `slots[0]`.
    base: u64,
    slots: VecDeque<Slot>,
    without_completion: u64,
    error: Option<io::Error>,
}

impl RequestLog {
    pub(crate) fn create(path: &Path, info: &TraceInfo) -> Result<Self, TraceError> {
        let writer = IolabWriter::create(path, info)?;
        Ok(RequestLog {
            writer,
            path: path.to_owned(),
            start_ns: info.start_ns,
            base: 0,
            slots: VecDeque::new(),
            without_completion: 0,
            error: None,
        })
    }

    /// A request was issued at `time_ns` (trace clock); returns its sequence number.
    pub(crate) fn issue(&mut self, time_ns: u64, mut req: BlockRequest) -> u64 {
        req.time_ns = time_ns.saturating_sub(self.start_ns);
        self.slots.push_back(Slot::Waiting(req));
        let seq = self.base + self.slots.len() as u64 - 1;
        if self.slots.len() > MAX_WAITING {
            self.pop_front();
            self.drain();
        }
        seq
    }

    fn slot(&mut self, seq: u64) -> Option<&mut Slot> {
        let i = usize::try_from(seq.checked_sub(self.base)?).ok()?;
        self.slots.get_mut(i)
    }

    /// Request `seq` completed after `latency_ns`, with an error if `failed`.
    pub(crate) fn complete(&mut self, seq: u64, latency_ns: u64, failed: bool) {
        if let Some(s) = self.slot(seq) {
            if let Slot::Waiting(r) = s {
                let mut r = *r;
                r.latency_ns = Some(latency_ns);
                r.flags = r.flags.with(iolab_tracefile::Flags::ERROR, failed);
                *s = Slot::Done(r);
            }
            self.drain();
        }
    }

    /// Request `seq` was requeued: it will be issued again as a new request.
    pub(crate) fn forget(&mut self, seq: u64) {
        if let Some(s) = self.slot(seq) {
            *s = Slot::Gone;
            self.drain();
        }
    }

    fn write(&mut self, r: &BlockRequest) {
        if self.error.is_none() {
            if let Err(e) = self.writer.write(r) {
                self.error = Some(e);
            }
        }
    }

    fn pop_front(&mut self) {
        if let Some(s) = self.slots.pop_front() {
            self.base += 1;
            match s {
                Slot::Done(r) => self.write(&r),
                Slot::Waiting(r) => {
                    self.without_completion += 1;
                    self.write(&r);
                }
                Slot::Gone => {}
            }
        }
    }

    fn drain(&mut self) {
        while matches!(self.slots.front(), Some(Slot::Done(_) | Slot::Gone)) {
            self.pop_front();
        }
    }

    /// Write what is left (requests still in flight without a latency) and the record count.
    pub(crate) fn finish(mut self) -> Result<SavedTrace, TraceError> {
        while !self.slots.is_empty() {
            self.pop_front();
        }
        if let Some(e) = self.error.take() {
            return Err(TraceError::io("write", self.path, e));
        }
        let requests = self
            .writer
            .finish()
            .map_err(|e| TraceError::io("write", &self.path, e))?;
        Ok(SavedTrace {
            path: self.path,
            requests,
            without_completion: self.without_completion,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::{SectorRange, TraceDevice};
    use crate::summary::Summarizer;
    use iolab_sys::testutil::TempDir;
    use iolab_sys::DevT;
    use iolab_tracefile::{Flags, IolabReader, Op};

    fn line(t_us: u64, event: &str, rwbs: &str, sector: u64, nr: u32) -> String {
        let secs = t_us / 1_000_000;
        let us = t_us % 1_000_000;
        match event {
            "block_rq_issue" => format!(
                "dd-1 [000] ..... {secs}.{us:06}: block_rq_issue: 8,0 {rwbs} {} () {sector} + {nr} be,0,4 [dd]",
                u64::from(nr) * 512
            ),
            "block_rq_complete" => format!(
                "dd-1 [000] ..... {secs}.{us:06}: block_rq_complete: 8,0 {rwbs} () {sector} + {nr} be,0,4 [0]"
            ),
            _ => format!(
                "dd-1 [000] ..... {secs}.{us:06}: block_rq_requeue: 8,0 {rwbs} () {sector} + {nr} be,0,4 [0]"
            ),
        }
    }

    #[test]
    fn requests_are_saved_in_issue_order_with_latencies() {
        let t = TempDir::new("blocktrace-save");
        let path = t.0.join("t.iolt");
        // A partition starting at sector 2048: offsets are relative to it.
        let mut dev = TraceDevice::whole("sda", DevT::new(8, 0));
        dev.name = "sda1".into();
        dev.dev = DevT::new(8, 1);
        dev.partition = Some(SectorRange {
            start: 2048,
            sectors: 1 << 20,
        });
        let start = 1_000_000_000;
        let mut s = Summarizer::new(dev.clone(), start, 1_000_000_000, false);
        let info = TraceInfo {
            device: "sda1".into(),
            major: 8,
            minor: 1,
            sector_size: 512,
            partition_offset: 2048 * 512,
            start_ns: start,
        };
        s.set_log(RequestLog::create(&path, &info).unwrap());
        for l in [
            line(1_000_010, "block_rq_issue", "WS", 2048, 8),
            line(1_000_020, "block_rq_issue", "R", 4096, 16),
            line(1_000_025, "block_rq_issue", "FF", 0, 0),
            // Completions out of order: the read first.
            line(1_000_100, "block_rq_complete", "R", 4096, 16),
            line(1_000_110, "block_rq_complete", "FF", u64::MAX, 0),
            line(1_000_210, "block_rq_complete", "WS", 2048, 8),
            // A requeued request is issued again.
            line(1_000_300, "block_rq_issue", "W", 3000, 8),
            line(1_000_301, "block_rq_requeue", "W", 3000, 8),
            line(1_000_400, "block_rq_issue", "WFS", 3000, 8),
            // In flight at the end.
            line(1_000_500, "block_rq_issue", "R", 2056, 8),
            line(1_000_600, "block_rq_complete", "WFS", 3000, 8),
        ] {
            s.push_line(&l);
        }
        let saved = s.take_log().unwrap().finish().unwrap();
        assert_eq!(saved.requests, 5);
        assert_eq!(saved.without_completion, 1);
        let r = IolabReader::open(&path).unwrap();
        assert_eq!(r.info(), &info);
        let reqs: Vec<_> = r.map(Result::unwrap).collect();
        let got: Vec<_> = reqs
            .iter()
            .map(|r| (r.time_ns, r.op, r.offset, r.len, r.latency_ns))
            .collect();
        assert_eq!(
            got,
            [
                (10_000, Op::Write, 0, 4096, Some(200_000)),
                (20_000, Op::Read, 2048 * 512, 8192, Some(80_000)),
                (25_000, Op::Flush, 0, 0, Some(85_000)),
                (400_000, Op::Write, 952 * 512, 4096, Some(200_000)),
                (500_000, Op::Read, 8 * 512, 4096, None),
            ]
        );
        assert!(reqs[0].flags.has(Flags::SYNC));
        assert!(reqs[3].flags.has(Flags::FUA | Flags::SYNC));
        assert!(!reqs[1].flags.has(Flags::SYNC));
        assert!(reqs[2].flags.has(Flags::PREFLUSH));
    }
}
