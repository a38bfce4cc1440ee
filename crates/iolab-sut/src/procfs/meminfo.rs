//! `/proc/meminfo`: only the page-cache fields drop_caches is judged by.
//!
//! Lines are `Key:   value kB`; `Cached` includes `Shmem` (tmpfs, shared anonymous memory),
//! which drop_caches cannot free (Documentation/filesystems/proc.rst).

use std::io;

/// Page-cache figures, in kB (the kernel's kB are KiB).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CacheFigures {
    /// `Cached`: page cache, including shmem.
    pub cached_kib: u64,
    /// `Shmem`: tmpfs and shared memory, part of `Cached`, never dropped.
    pub shmem_kib: u64,
    /// `Buffers`: block-device page cache.
    pub buffers_kib: u64,
    /// `MemTotal`.
    pub total_kib: u64,
}

impl CacheFigures {
    /// The part of the page cache that drop_caches can free (clean pages of it, at least).
    pub fn droppable_kib(&self) -> u64 {
        self.cached_kib.saturating_sub(self.shmem_kib)
    }
}

/// Parse the text of /proc/meminfo. Missing fields read as 0 (`Shmem` appeared in 2.6.32).
pub fn parse(text: &str) -> Result<CacheFigures, String> {
    let mut f = CacheFigures::default();
    let mut seen_cached = false;
    for line in text.lines() {
        let Some((key, rest)) = line.split_once(':') else {
            continue;
        };
        let slot = match key {
            "Cached" => {
                seen_cached = true;
                &mut f.cached_kib
            }
            "Shmem" => &mut f.shmem_kib,
            "Buffers" => &mut f.buffers_kib,
            "MemTotal" => &mut f.total_kib,
            _ => continue,
        };
        let num = rest.split_whitespace().next().unwrap_or("");
        *slot = num
            .parse()
            .map_err(|_| format!("/proc/meminfo: {key}: not a number: {num:?}"))?;
    }
    if !seen_cached {
        return Err("/proc/meminfo: no `Cached` line".into());
    }
    Ok(f)
}

/// Read and parse /proc/meminfo.
pub fn read() -> io::Result<CacheFigures> {
    let text = std::fs::read_to_string("/proc/meminfo")?;
    parse(&text).map_err(io::Error::other)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "MemTotal:       49368192 kB\nMemFree:        40000000 kB\n\
Buffers:          123456 kB\nCached:          4000000 kB\nSwapCached:            0 kB\n\
Shmem:            500000 kB\n";

    #[test]
    fn parses_cache_fields() {
        let f = parse(SAMPLE).unwrap();
        assert_eq!(f.cached_kib, 4_000_000);
        assert_eq!(f.shmem_kib, 500_000);
        assert_eq!(f.buffers_kib, 123_456);
        assert_eq!(f.total_kib, 49_368_192);
        assert_eq!(f.droppable_kib(), 3_500_000);
    }

    #[test]
    fn swapcached_is_not_cached() {
        let f = parse("Cached: 10 kB\nSwapCached: 99 kB\n").unwrap();
        assert_eq!(f.cached_kib, 10);
    }

    #[test]
    fn missing_cached_is_an_error() {
        assert!(parse("MemTotal: 1 kB\n").is_err());
        assert!(parse("Cached: x kB\n").is_err());
    }
}
