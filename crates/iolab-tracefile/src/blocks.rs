//! Block splitting: a block request (offset, length) touches the blocks
//! `offset / B ..= (offset + length − 1) / B` at block size `B`; each becomes one request
//! of a cache simulator, with the block number as object id and `B` as size.

use std::ops::Range;

use crate::error::Result;
use crate::record::{BlockRequest, ObjRequest};

/// Smallest block size accepted (a sector).
pub const MIN_BLOCK_SIZE: u64 = 512;
/// Largest block size accepted (dm-cache's largest, 1 GiB; it must fit oracleGeneral's u32).
pub const MAX_BLOCK_SIZE: u64 = 1 << 30;

/// Check a block size: a multiple of 512 from 512 B to 1 GiB.
pub fn check_block_size(bs: u64) -> Result<u64, String> {
    if !(MIN_BLOCK_SIZE..=MAX_BLOCK_SIZE).contains(&bs) || !bs.is_multiple_of(MIN_BLOCK_SIZE) {
        return Err(format!(
            "block size {bs}: expected a multiple of 512 bytes from 512 to 1073741824 (1 GiB)"
        ));
    }
    Ok(bs)
}

/// The block numbers `len` bytes at `offset` touch at block size `bs` (> 0); empty for
/// `len == 0` (flushes).
pub fn block_range(offset: u64, len: u64, bs: u64) -> Range<u64> {
    if len == 0 {
        return 0..0;
    }
    let first = offset / bs;
    let last = offset.saturating_add(len - 1) / bs;
    first..last + 1
}

/// Splits block requests into one [`ObjRequest`] per block (flushes, which touch no block,
/// are dropped: [`SplitBlocks::flushes`] counts them).
pub struct SplitBlocks<I> {
    inner: I,
    bs: u64,
    current: Option<(BlockRequest, Range<u64>)>,
    flushes: u64,
    requests: u64,
}

impl<I: Iterator<Item = Result<BlockRequest>>> SplitBlocks<I> {
    /// Split `inner` at block size `bs` (checked with [`check_block_size`] by the caller).
    pub fn new(inner: I, bs: u64) -> Self {
        SplitBlocks {
            inner,
            bs: bs.max(1),
            current: None,
            flushes: 0,
            requests: 0,
        }
    }

    /// Flush requests dropped so far.
    pub fn flushes(&self) -> u64 {
        self.flushes
    }

    /// Block requests read so far.
    pub fn requests(&self) -> u64 {
        self.requests
    }
}

impl<I: Iterator<Item = Result<BlockRequest>>> Iterator for SplitBlocks<I> {
    type Item = Result<ObjRequest>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some((r, blocks)) = &mut self.current {
                if let Some(b) = blocks.next() {
                    return Some(Ok(ObjRequest {
                        time: r.time_ns,
                        obj_id: b,
                        size: self.bs as u32,
                        op: r.op,
                        next_access: None,
                    }));
                }
            }
            match self.inner.next()? {
                Ok(r) => {
                    self.requests += 1;
                    if !r.op.has_blocks() || r.len == 0 {
                        self.flushes += u64::from(!r.op.has_blocks());
                        self.current = None;
                        continue;
                    }
                    let blocks = block_range(r.offset, u64::from(r.len), self.bs);
                    self.current = Some((r, blocks));
                }
                Err(e) => return Some(Err(e)),
            }
        }
    }
}
