//! The `rwbs` field of the block trace events: operation and flags of a request or bio.
//!
//! The kernel builds it in `blk_fill_rwbs()` (kernel/trace/blktrace.c), in this order:
//!
//! 1. `F` if the request carries `REQ_PREFLUSH` (flush the volatile cache *before* the data);
//! 2. the operation: `R` read, `W` write, `D` discard, `DE` secure erase, `F` flush
//!    (`REQ_OP_FLUSH`), `ZA`/`ZR`/`ZRA`/`ZF`/`ZO`/`ZC` zone append/reset/reset-all/finish/
//!    open/close, `WZ` write-zeroes on kernels that spell it out, `N` anything else (on 6.18
//!    that includes write-zeroes, which `mkfs.ext4` issues);
//! 3. flags: `F` `REQ_FUA` (write through the cache), `A` read-ahead, `S` sync, `M` metadata,
//!    `U` (older: `a`) atomic write.
//!
//! So a leading `F` followed by an operation letter is a preflush, an `F` after the operation is
//! FUA, and a lone `F` (or `FS`) is a flush-only request. The block layer's flush machinery
//! turns a bio `FWFSM` (preflush + write + FUA) into separate requests: `FF` (a flush request,
//! itself marked preflush), then the data `WSM` (with `F` kept only if the device supports
//! FUA, else followed by another `FF`), which is what `block_rq_issue` shows.

use serde::{Deserialize, Serialize};

/// The operation of a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    /// `R`
    Read,
    /// `W`
    Write,
    /// `F`: flush the device's volatile cache, no data.
    Flush,
    /// `D`
    Discard,
    /// `DE`
    SecureErase,
    /// `WZ` (kernels that spell it out; 6.18 writes `N`).
    WriteZeroes,
    /// `ZA`
    ZoneAppend,
    /// `ZR`
    ZoneReset,
    /// `ZRA`
    ZoneResetAll,
    /// `ZF`
    ZoneFinish,
    /// `ZO`
    ZoneOpen,
    /// `ZC`
    ZoneClose,
    /// `N`: any other operation (write-zeroes on 6.18, driver-private requests).
    Other,
}

impl Op {
    /// Whether the op moves data between memory and the device (read or write).
    pub fn is_data(self) -> bool {
        matches!(self, Op::Read | Op::Write)
    }
}

/// A decoded `rwbs` string.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Rwbs {
    /// The operation.
    pub op: Op,
    /// `REQ_PREFLUSH`: leading `F`.
    pub preflush: bool,
    /// `REQ_FUA`: `F` after the operation.
    pub fua: bool,
    /// `REQ_RAHEAD`: `A`.
    pub readahead: bool,
    /// `REQ_SYNC`: `S`.
    pub sync: bool,
    /// `REQ_META`: `M`.
    pub meta: bool,
    /// `REQ_ATOMIC`: `U` (or `a`).
    pub atomic: bool,
}

fn is_op_start(c: u8) -> bool {
    matches!(c, b'R' | b'W' | b'D' | b'F' | b'Z' | b'N')
}

impl Rwbs {
    /// A request of `op` without flags.
    pub fn new(op: Op) -> Self {
        Rwbs {
            op,
            preflush: false,
            fua: false,
            readahead: false,
            sync: false,
            meta: false,
            atomic: false,
        }
    }

    /// Decode an `rwbs` string. `None` if it is empty or does not start with an operation (or
    /// a preflush `F`). Unknown flag letters after the operation are ignored, so that a newer
    /// kernel's extra flags do not make whole events unreadable.
    pub fn parse(s: &str) -> Option<Rwbs> {
        let b = s.as_bytes();
        if b.is_empty() || !is_op_start(b[0]) {
            return None;
        }
        let mut i = 0;
        let mut preflush = false;
        if b[0] == b'F' && b.len() > 1 && is_op_start(b[1]) {
            preflush = true;
            i = 1;
        }
        let next = |j: usize| b.get(j).copied();
        let (op, len) = match b[i] {
            b'R' => (Op::Read, 1),
            b'W' if next(i + 1) == Some(b'Z') => (Op::WriteZeroes, 2),
            b'W' => (Op::Write, 1),
            b'D' if next(i + 1) == Some(b'E') => (Op::SecureErase, 2),
            b'D' => (Op::Discard, 1),
            b'F' => (Op::Flush, 1),
            b'N' => (Op::Other, 1),
            b'Z' => match next(i + 1) {
                Some(b'A') => (Op::ZoneAppend, 2),
                Some(b'R') if next(i + 2) == Some(b'A') => (Op::ZoneResetAll, 3),
                Some(b'R') => (Op::ZoneReset, 2),
                Some(b'F') => (Op::ZoneFinish, 2),
                Some(b'O') => (Op::ZoneOpen, 2),
                Some(b'C') => (Op::ZoneClose, 2),
                _ => (Op::Other, 1),
            },
            _ => return None,
        };
        let mut r = Rwbs::new(op);
        r.preflush = preflush;
        for &c in &b[i + len..] {
            match c {
                b'F' => r.fua = true,
                b'A' => r.readahead = true,
                b'S' => r.sync = true,
                b'M' => r.meta = true,
                b'U' | b'a' => r.atomic = true,
                _ => {}
            }
        }
        Some(r)
    }

    /// Whether this request or bio asks for a cache flush: a flush request, or a preflush.
    pub fn is_flush(&self) -> bool {
        self.op == Op::Flush || self.preflush
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Rwbs {
        Rwbs::parse(s).unwrap_or_else(|| panic!("{s} did not parse"))
    }

    #[test]
    fn ops() {
        assert_eq!(p("R").op, Op::Read);
        assert_eq!(p("W").op, Op::Write);
        assert_eq!(p("D").op, Op::Discard);
        assert_eq!(p("DS").op, Op::Discard);
        assert_eq!(p("DE").op, Op::SecureErase);
        assert_eq!(p("NS").op, Op::Other);
        assert_eq!(p("WZ").op, Op::WriteZeroes);
        assert_eq!(p("ZA").op, Op::ZoneAppend);
        assert_eq!(p("ZRA").op, Op::ZoneResetAll);
        assert_eq!(p("ZR").op, Op::ZoneReset);
        assert_eq!(p("ZF").op, Op::ZoneFinish);
        assert_eq!(p("ZO").op, Op::ZoneOpen);
        assert_eq!(p("ZC").op, Op::ZoneClose);
    }

    #[test]
    fn flush_preflush_and_fua() {
        // A flush request as the flush machinery issues it: REQ_OP_FLUSH | REQ_PREFLUSH.
        let ff = p("FF");
        assert_eq!(ff.op, Op::Flush);
        assert!(ff.preflush && !ff.fua && ff.is_flush());
        // A lone flush, and a flush with REQ_SYNC.
        assert_eq!(p("F").op, Op::Flush);
        assert!(!p("F").preflush);
        let fs = p("FS");
        assert_eq!(fs.op, Op::Flush);
        assert!(fs.sync && !fs.preflush);
        // fsync of an empty range: preflush + write (no data) + sync.
        let fws = p("FWS");
        assert!(fws.preflush && fws.op == Op::Write && fws.sync && !fws.fua);
        // FUA write: F after the op.
        let wfs = p("WFS");
        assert!(!wfs.preflush && wfs.op == Op::Write && wfs.fua && wfs.sync);
        assert!(!wfs.is_flush());
        // jbd2 commit block: preflush + write + FUA + sync + meta.
        let c = p("FWFSM");
        assert!(c.preflush && c.op == Op::Write && c.fua && c.sync && c.meta);
        let ra = p("RAM");
        assert!(ra.readahead && ra.meta && ra.op == Op::Read);
        assert!(p("WU").atomic && p("Wa").atomic);
    }

    #[test]
    fn odd_input() {
        assert_eq!(Rwbs::parse(""), None);
        assert_eq!(Rwbs::parse("S"), None);
        assert_eq!(Rwbs::parse("x"), None);
        assert_eq!(Rwbs::parse("é"), None);
        // Unknown flags are ignored.
        assert_eq!(p("WSQ"), p("WS"));
        assert_eq!(p("Z").op, Op::Other);
        assert_eq!(p("Zx").op, Op::Other);
    }
}
