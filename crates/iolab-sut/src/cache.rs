//! Dropping the page cache, and checking that it happened.
//!
//! `sync` first: drop_caches frees only clean pages, so dirty data written by the previous
//! run would otherwise stay cached (Documentation/admin-guide/sysctl/vm.rst, drop_caches).
//! Then `3` (page cache, dentries and inodes). The check compares `Cached` in /proc/meminfo
//! before and after; `Shmem` (tmpfs) is part of `Cached` and can never be dropped, so only
//! the rest counts as droppable.

use std::path::Path;

use iolab_sys::meminfo::{self, Meminfo};

use crate::error::{Error, Result};
use crate::util;

/// Below this much droppable cache (kB) there is nothing meaningful to drop, and a `Cached`
/// that did not fall is not an error.
pub const NOTHING_TO_DROP_KIB: u64 = 16 * 1024;

/// Page cache before and after a drop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DropReport {
    /// Before `sync`.
    pub before: Meminfo,
    /// After dropping.
    pub after: Meminfo,
}

impl DropReport {
    /// kB of page cache freed (0 if it grew).
    pub fn freed_kib(&self) -> u64 {
        self.before.cached.saturating_sub(self.after.cached) / 1024
    }

    /// Judge the drop: `Cached` must have fallen, unless there was nothing to drop.
    pub fn verify(&self) -> Result<()> {
        if self.after.cached < self.before.cached
            || self.before.droppable() / 1024 <= NOTHING_TO_DROP_KIB
        {
            Ok(())
        } else {
            Err(Error::CachesNotDropped {
                before_kib: self.before.cached / 1024,
                after_kib: self.after.cached / 1024,
                shmem_kib: self.after.shmem.unwrap_or(0) / 1024,
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
    let before = meminfo::read()?;
    // SAFETY: sync(2) has no failure mode.
    unsafe { libc::sync() };
    let knob = Path::new("/proc/sys/vm/drop_caches");
    util::write_value(knob, "3").map_err(|e| Error::io("write", knob, e))?;
    let after = meminfo::read()?;
    Ok(DropReport { before, after })
}
