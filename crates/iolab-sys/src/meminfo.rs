//! `/proc/meminfo`: memory, page cache and dirty data, converted to bytes.
//!
//! The kernel writes most values as `Key:   12345 kB`, where "kB" means KiB (×1024); those
//! become bytes here. A few values are plain counts without a unit (`HugePages_Total`,
//! `HugePages_Free`, …) and are kept as they are.
//!
//! `Cached` includes `Shmem` (tmpfs, shared anonymous memory, SysV shm), which drop_caches
//! cannot free (Documentation/filesystems/proc.rst); [`Meminfo::droppable`] is the rest.

use std::collections::BTreeMap;

use crate::error::{parse_u64, read_to_string, Error, ParseError, ParseErrorKind};

/// The file this module parses.
pub const PATH: &str = "/proc/meminfo";

/// A `/proc/meminfo` sample. All sizes in bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Meminfo {
    /// `MemTotal`: usable RAM (physical minus reserved and the kernel image).
    pub mem_total: u64,
    /// `MemFree`: RAM not used for anything.
    pub mem_free: u64,
    /// `MemAvailable`: the kernel's estimate of memory available to start new work without
    /// swapping (page cache and reclaimable slab count). Kernel 3.14+.
    pub mem_available: Option<u64>,
    /// `Buffers`: block-device page cache (metadata of filesystems, raw device reads).
    pub buffers: u64,
    /// `Cached`: page cache of files (includes `Shmem`/tmpfs, excludes `SwapCached`).
    pub cached: u64,
    /// `SwapCached`: swapped-out memory that is back in RAM and still in the swap file.
    pub swap_cached: u64,
    /// `SwapTotal`.
    pub swap_total: u64,
    /// `SwapFree`.
    pub swap_free: u64,
    /// `Dirty`: page cache waiting to be written back.
    pub dirty: u64,
    /// `Writeback`: page cache being written back right now.
    pub writeback: u64,
    /// `Shmem`: shared memory and tmpfs (part of `cached`). Kernel 2.6.32+.
    pub shmem: Option<u64>,
    /// `SReclaimable`: slab that can be reclaimed (dentries, inodes). Kernel 2.6.19+.
    pub s_reclaimable: Option<u64>,
    /// Every key of the file: bytes for values written in kB, plain counts otherwise.
    pub entries: BTreeMap<String, u64>,
}

impl Meminfo {
    /// Any key of the file (bytes for kB values), e.g. `get("AnonPages")`.
    pub fn get(&self, key: &str) -> Option<u64> {
        self.entries.get(key).copied()
    }

    /// Memory available to new work, as procps-ng 4 `free` counts it: `MemAvailable`, or
    /// `MemFree` where the kernel lacks it (before 3.14) or where it exceeds `MemTotal`
    /// (a distorted value inside some containers).
    pub fn available(&self) -> u64 {
        match self.mem_available {
            Some(a) if a <= self.mem_total => a,
            _ => self.mem_free,
        }
    }

    /// "used" as procps-ng 4 `free` computes it: `MemTotal − available`, falling back to
    /// `MemTotal − MemFree` when that would be negative. (procps 3.3 used
    /// total − free − buffers − cache instead.)
    pub fn used(&self) -> u64 {
        self.mem_total
            .checked_sub(self.available())
            .unwrap_or_else(|| self.mem_total.saturating_sub(self.mem_free))
    }

    /// The part of `Cached` that is not shmem: file pages that drop_caches can free once they
    /// are clean and unmapped. Where the kernel lacks `Shmem` (before 2.6.32), all of `Cached`.
    pub fn droppable(&self) -> u64 {
        self.cached.saturating_sub(self.shmem.unwrap_or(0))
    }

    /// `free`'s "buff/cache": `Buffers + Cached + SReclaimable`.
    pub fn buff_cache(&self) -> u64 {
        self.buffers + self.cached + self.s_reclaimable.unwrap_or(0)
    }
}

/// Parse the text of `/proc/meminfo`.
///
/// `MemTotal`, `MemFree`, `Buffers`, `Cached`, `SwapCached`, `SwapTotal`, `SwapFree`,
/// `Dirty` and `Writeback` are required (every 2.6+ kernel writes them); unknown keys are kept
/// in [`Meminfo::entries`].
pub fn parse(text: &str) -> Result<Meminfo, ParseError> {
    let mut entries = BTreeMap::new();
    for (idx, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let Some((key, rest)) = line.split_once(':') else {
            return Err(ParseError::at(
                PATH,
                idx,
                ParseErrorKind::Malformed("expected `Key: value [kB]`"),
                line,
            ));
        };
        let mut it = rest.split_ascii_whitespace();
        let value = it.next().unwrap_or("");
        let value = parse_u64(PATH, idx, line, key, value)?;
        let value = match it.next() {
            None => value,
            Some("kB") => value.checked_mul(1024).ok_or_else(|| {
                ParseError::at(
                    PATH,
                    idx,
                    ParseErrorKind::Malformed("value too large"),
                    line,
                )
            })?,
            Some(_) => {
                return Err(ParseError::at(
                    PATH,
                    idx,
                    ParseErrorKind::Malformed("unknown unit (expected kB or none)"),
                    line,
                ))
            }
        };
        entries.insert(key.to_owned(), value);
    }
    let need = |key: &'static str| {
        entries
            .get(key)
            .copied()
            .ok_or(ParseError::whole(PATH, ParseErrorKind::Missing(key)))
    };
    Ok(Meminfo {
        mem_total: need("MemTotal")?,
        mem_free: need("MemFree")?,
        mem_available: entries.get("MemAvailable").copied(),
        buffers: need("Buffers")?,
        cached: need("Cached")?,
        swap_cached: need("SwapCached")?,
        swap_total: need("SwapTotal")?,
        swap_free: need("SwapFree")?,
        dirty: need("Dirty")?,
        writeback: need("Writeback")?,
        shmem: entries.get("Shmem").copied(),
        s_reclaimable: entries.get("SReclaimable").copied(),
        entries,
    })
}

/// Read and parse `/proc/meminfo`.
pub fn read() -> Result<Meminfo, Error> {
    Ok(parse(&read_to_string(PATH)?)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CAPTURED: &str = include_str!("../tests/fixtures/proc_meminfo.txt");
    const KIB: u64 = 1024;

    #[test]
    fn parses_captured_file() {
        let m = parse(CAPTURED).unwrap();
        assert_eq!(m.mem_total, 24684096 * KIB);
        assert_eq!(m.mem_free, 23914432 * KIB);
        assert_eq!(m.mem_available, Some(24359028 * KIB));
        assert_eq!(m.buffers, 7776 * KIB);
        assert_eq!(m.cached, 616864 * KIB);
        assert_eq!(m.dirty, 1688 * KIB);
        assert_eq!(m.writeback, 0);
        assert_eq!(m.shmem, Some(8788 * KIB));
        assert_eq!(m.s_reclaimable, Some(69736 * KIB));
        assert_eq!(m.get("AnonPages"), Some(11592 * KIB));
        // Unit-less counts stay counts; kB values become bytes.
        assert_eq!(m.get("HugePages_Total"), Some(0));
        assert_eq!(m.get("Hugepagesize"), Some(2048 * KIB));
        assert_eq!(m.get("Active(file)"), Some(190696 * KIB));
        // free(1): used = total − available; buff/cache = buffers + cached + SReclaimable.
        assert_eq!(m.used(), (24684096 - 24359028) * KIB);
        assert_eq!(m.buff_cache(), (7776 + 616864 + 69736) * KIB);
        assert_eq!(m.droppable(), (616864 - 8788) * KIB);
    }

    const OLD: &str = "MemTotal: 1000 kB\nMemFree: 300 kB\nBuffers: 10 kB\nCached: 200 kB\n\
                       SwapCached: 0 kB\nSwapTotal: 0 kB\nSwapFree: 0 kB\nDirty: 5 kB\n\
                       Writeback: 1 kB\n";

    #[test]
    fn kernel_without_mem_available_uses_free() {
        let m = parse(OLD).unwrap();
        assert_eq!(m.mem_available, None);
        assert_eq!(m.shmem, None);
        assert_eq!(m.available(), 300 * KIB);
        assert_eq!(m.used(), 700 * KIB);
        assert_eq!(m.buff_cache(), 210 * KIB);
        assert_eq!(m.droppable(), 200 * KIB, "no Shmem line: all of Cached");
    }

    #[test]
    fn available_above_total_falls_back_to_free() {
        let text = format!("{OLD}MemAvailable: 5000 kB\n");
        let m = parse(&text).unwrap();
        assert_eq!(m.available(), 300 * KIB);
        assert_eq!(m.used(), 700 * KIB);
    }

    #[test]
    fn errors() {
        let e = parse("MemTotal: 1000 kB\nMemFree: lots kB\n").unwrap_err();
        assert_eq!(e.line, Some(2));
        assert!(matches!(e.kind, ParseErrorKind::BadNumber { .. }));
        let e = parse("MemTotal 1000 kB\n").unwrap_err();
        assert_eq!(e.line, Some(1));
        let e = parse("MemTotal: 1 MB\n").unwrap_err();
        assert!(matches!(e.kind, ParseErrorKind::Malformed(_)));
        let e = parse("MemTotal: 1000 kB\n").unwrap_err();
        assert_eq!(e.kind, ParseErrorKind::Missing("MemFree"));
    }

    #[test]
    fn reads_this_machine() {
        let m = read().unwrap();
        assert!(m.mem_total > 0);
        assert!(m.used() <= m.mem_total);
    }
}
