//! Dropping the page cache, and checking that it happened.
//!
//! `sync` first: drop_caches frees only clean pages, so dirty data written by the previous
//! run would otherwise stay cached (Documentation/admin-guide/sysctl/vm.rst, drop_caches).
//! Then `3` (page cache, dentries and inodes). The check compares `Cached` in /proc/meminfo
//! before and after; `Shmem` (tmpfs) is part of `Cached` and can never be dropped, so only
//! the rest counts as droppable.

use std::path::Path;

use crate::error::{Error, Result};
use crate::procfs::meminfo::{self, CacheFigures};
use crate::util;

/// Below this much droppable cache (kB) there is nothing meaningful to drop, and a `Cached`
/// that did not fall is not an error.
pub const NOTHING_TO_DROP_KIB: u64 = 16 * 1024;

/// Page cache before and after a drop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DropReport {
    /// Before `sync`.
    pub before: CacheFigures,
    /// After dropping.
    pub after: CacheFigures,
}

impl DropReport {
    /// kB of page cache freed (0 if it grew).
    pub fn freed_kib(&self) -> u64 {
        self.before.cached_kib.saturating_sub(self.after.cached_kib)
    }

    /// Judge the drop: `Cached` must have fallen, unless there was nothing to drop.
    pub fn verify(&self) -> Result<()> {
        if self.after.cached_kib < self.before.cached_kib
            || self.before.droppable_kib() <= NOTHING_TO_DROP_KIB
        {
            Ok(())
        } else {
            Err(Error::CachesNotDropped {
                before_kib: self.before.cached_kib,
                after_kib: self.after.cached_kib,
                shmem_kib: self.after.shmem_kib,
            })
        }
    }
}

/// `sync`, drop page cache, dentries and inodes, and verify that `Cached` fell
/// ([`Error::CachesNotDropped`] otherwise).
pub fn drop_caches() -> Result<DropReport> {
    let report = drop_caches_unchecked()?;
    report.verify()?;
    Ok(report)
}

/// Like [`drop_caches`], returning the figures without judging them.
pub fn drop_caches_unchecked() -> Result<DropReport> {
    let path = Path::new("/proc/meminfo");
    let before = meminfo::read().map_err(|e| Error::io("read", path, e))?;
    // SAFETY: sync(2) has no failure mode.
    unsafe { libc::sync() };
    let knob = Path::new("/proc/sys/vm/drop_caches");
    util::write_value(knob, "3").map_err(|e| Error::io("write", knob, e))?;
    let after = meminfo::read().map_err(|e| Error::io("read", path, e))?;
    Ok(DropReport { before, after })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figs(cached: u64, shmem: u64) -> CacheFigures {
        CacheFigures {
            cached_kib: cached,
            shmem_kib: shmem,
            ..CacheFigures::default()
        }
    }

    #[test]
    fn verdicts() {
        let ok = DropReport {
            before: figs(4_000_000, 100_000),
            after: figs(150_000, 100_000),
        };
        assert!(ok.verify().is_ok());
        assert_eq!(ok.freed_kib(), 3_850_000);

        let failed = DropReport {
            before: figs(4_000_000, 100_000),
            after: figs(4_000_000, 100_000),
        };
        let e = failed.verify().unwrap_err().to_string();
        assert!(e.contains("4000000 kB before"), "{e}");

        // Only tmpfs data cached: nothing droppable, not an error.
        let shmem_only = DropReport {
            before: figs(2_000_000, 1_995_000),
            after: figs(2_000_100, 1_995_100),
        };
        assert!(shmem_only.verify().is_ok());
    }
}
