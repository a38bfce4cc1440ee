//! The records: a block request (what the tracer saw) and an object request (what a cache
//! simulator consumes: one block, or one object of a libCacheSim trace).

use serde::{Deserialize, Serialize};

/// The operation of a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    /// Read data.
    Read,
    /// Write data.
    Write,
    /// Flush the device's volatile cache (no data, no blocks).
    Flush,
    /// Discard (trim) the range; secure erase is recorded as a discard too.
    Discard,
    /// Write zeroes to the range.
    WriteZeroes,
    /// Anything else (zone management, driver-private requests).
    Other,
}

impl Op {
    /// All operations, in code order.
    pub const ALL: [Op; 6] = [
        Op::Read,
        Op::Write,
        Op::Flush,
        Op::Discard,
        Op::WriteZeroes,
        Op::Other,
    ];

    /// The byte iolab's format stores.
    pub fn code(self) -> u8 {
        match self {
            Op::Read => 0,
            Op::Write => 1,
            Op::Flush => 2,
            Op::Discard => 3,
            Op::WriteZeroes => 4,
            Op::Other => 5,
        }
    }

    /// The operation of a stored byte.
    pub fn from_code(c: u8) -> Option<Op> {
        Op::ALL.get(usize::from(c)).copied()
    }

    /// The name in CSV traces and messages.
    pub fn name(self) -> &'static str {
        match self {
            Op::Read => "read",
            Op::Write => "write",
            Op::Flush => "flush",
            Op::Discard => "discard",
            Op::WriteZeroes => "write_zeroes",
            Op::Other => "other",
        }
    }

    /// Parse a CSV op: iolab's names and libCacheSim's (`get`, `set`, `delete`, ...),
    /// case-insensitive.
    pub fn parse(s: &str) -> Option<Op> {
        let s = s.trim();
        let is = |t: &str| s.eq_ignore_ascii_case(t);
        Some(if is("read") || is("get") || is("gets") || is("r") {
            Op::Read
        } else if is("write") || is("set") || is("add") || is("replace") || is("update") || is("w")
        {
            Op::Write
        } else if is("discard") || is("delete") || is("del") || is("d") {
            Op::Discard
        } else if is("flush") || is("f") {
            Op::Flush
        } else if is("write_zeroes") {
            Op::WriteZeroes
        } else if is("other") {
            Op::Other
        } else {
            return None;
        })
    }

    /// Whether the request addresses blocks (everything but a flush).
    pub fn has_blocks(self) -> bool {
        self != Op::Flush
    }
}

/// Flags of a block request, as the kernel's `rwbs` shows them. One byte in iolab's format.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Flags(pub u8);

impl Flags {
    /// `REQ_SYNC` (`S`).
    pub const SYNC: u8 = 1 << 0;
    /// `REQ_FUA` (`F` after the op): written through the device's cache.
    pub const FUA: u8 = 1 << 1;
    /// `REQ_PREFLUSH` (leading `F`): the device cache was flushed before.
    pub const PREFLUSH: u8 = 1 << 2;
    /// `REQ_META` (`M`).
    pub const META: u8 = 1 << 3;
    /// `REQ_RAHEAD` (`A`).
    pub const READAHEAD: u8 = 1 << 4;
    /// The request completed with an error.
    pub const ERROR: u8 = 1 << 5;

    /// Whether all bits of `bit` are set.
    pub fn has(self, bit: u8) -> bool {
        self.0 & bit == bit
    }

    /// With `bit` set or cleared.
    pub fn with(self, bit: u8, on: bool) -> Flags {
        Flags(if on { self.0 | bit } else { self.0 & !bit })
    }
}

/// One block request as the device saw it: issued at `time_ns`, covering `len` bytes from
/// byte `offset` of the traced device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockRequest {
    /// Issue to the driver, ns since the trace started ([`TraceInfo::start_ns`]).
    pub time_ns: u64,
    /// First byte on the traced device (for a partition: relative to the partition).
    pub offset: u64,
    /// Bytes (0 for flushes).
    pub len: u32,
    /// Issue → completion, ns; `None` if the completion was not seen.
    pub latency_ns: Option<u64>,
    /// Operation.
    pub op: Op,
    /// Flags.
    pub flags: Flags,
}

/// The device a block trace comes from and when it started: the header of iolab's format.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceInfo {
    /// Kernel name of the traced device (`loop3`, `vda2`); at most 32 bytes are stored.
    pub device: String,
    /// Its major number (0 if unknown).
    pub major: u32,
    /// Its minor number.
    pub minor: u32,
    /// The device's logical block size, bytes (512 if unknown).
    pub sector_size: u32,
    /// For a partition: where it starts on its disk, bytes (offsets are relative to it).
    pub partition_offset: u64,
    /// Start of the trace on `CLOCK_MONOTONIC`, ns.
    pub start_ns: u64,
}

impl Default for TraceInfo {
    fn default() -> Self {
        TraceInfo {
            device: String::new(),
            major: 0,
            minor: 0,
            sector_size: 512,
            partition_offset: 0,
            start_ns: 0,
        }
    }
}

/// One request of a cache simulator: one block of a split block request, or one record of a
/// libCacheSim trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ObjRequest {
    /// Time in the trace's unit: ns for iolab traces, what the file says for oracleGeneral
    /// (seconds by libCacheSim's convention) and CSV.
    pub time: u64,
    /// Object id: the block number (byte offset / block size) for block traces.
    pub obj_id: u64,
    /// Object size, bytes (the block size for block traces).
    pub size: u32,
    /// Operation: [`Op::Read`] for formats without one (oracleGeneral, CSV without an op
    /// column); see [`crate::Format::has_ops`].
    pub op: Op,
    /// Index (from 0) of the next request to the same object, `None` if there is none or it
    /// is not known ([`crate::Format::has_next_access`]).
    pub next_access: Option<u64>,
}
