//! Dropping the page cache before a run, and checking that the run's own files left it.
//!
//! `sync` first: drop_caches frees only clean pages, so dirty data written by the previous
//! run (or its population) would otherwise stay cached (Documentation/admin-guide/sysctl/
//! vm.rst, drop_caches). Then `POSIX_FADV_DONTNEED` on the run's files: drop_caches also
//! skips a page that sits in a CPU's LRU batch (a file just read or written; with large
//! folios a batch holds tens of MiB, and a 64 MiB file was seen to keep 22–37 MiB cached),
//! and the advice drains those batches on every CPU. Then `3` (page cache, dentries and
//! inodes). All of it up to [`DROP_ATTEMPTS`] times while the run's files stay.
//!
//! What matters for a cold start is that the run's files are not in the page cache, so that
//! is what is checked: their residency ([`crate::residency`]) right after the drop must be
//! (almost) nothing. The machine's `Cached` figure does not tell: another process writing
//! to a tmpfs (shmem is part of `Cached` and never dropped) or reading its own files refills
//! it while iolab syncs and drops, and mapped pages (programs, libraries) cannot be dropped
//! at all; a run could fail although its files were gone, or pass although they stayed.
//! `/proc/meminfo` before and after is kept in the [`DropReport`], for the
//! `cache-refilled` check to judge the rest of the machine.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use iolab_sys::meminfo::{self, Meminfo};

use crate::error::{Error, Result};
use crate::residency::{Residency, RunFiles};
use crate::util;

/// Bytes of the run's files allowed to stay resident after the drop, as a per-mille of the
/// files' bytes: a few pages may be read by someone in the instant between drop and check.
pub const RESIDENT_SLACK_PERMILLE: u64 = 10;

/// ... and at least this many bytes (16 pages), for small datasets.
pub const RESIDENT_SLACK_MIN_BYTES: u64 = 64 << 10;

/// The page cache around a drop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DropReport {
    /// /proc/meminfo before `sync`.
    pub before: Meminfo,
    /// /proc/meminfo after dropping.
    pub after: Meminfo,
    /// The run's files before `sync`.
    pub run_before: Residency,
    /// The run's files after dropping.
    pub run_after: Residency,
}

impl DropReport {
    /// kB by which `Cached` fell (0 if it grew).
    pub fn freed_kib(&self) -> u64 {
        self.before.cached.saturating_sub(self.after.cached) / 1024
    }

    /// Judge the drop: the run's files must have left the page cache, unless they live in
    /// memory (tmpfs), where nothing can be dropped.
    pub fn verify(&self) -> Result<()> {
        let r = &self.run_after;
        let slack = (r.bytes / 1000 * RESIDENT_SLACK_PERMILLE).max(RESIDENT_SLACK_MIN_BYTES);
        if r.memory_fs || r.resident_bytes() <= slack {
            return Ok(());
        }
        Err(Error::CachesNotDropped {
            resident_bytes: r.resident_bytes(),
            bytes: r.bytes,
            files: r.files,
            sampled_files: r.sampled_files,
        })
    }
}

/// `sync`, drop page cache, dentries and inodes, and check that the files at or under
/// `run_files` (the run's data files or directories) left the page cache
/// ([`Error::CachesNotDropped`] otherwise).
pub fn drop_caches(run_files: &[PathBuf]) -> Result<DropReport> {
    let report = drop_caches_unchecked(run_files)?;
    report.verify()?;
    Ok(report)
}

/// Like [`drop_caches`], returning the figures without judging them.
pub fn drop_caches_unchecked(run_files: &[PathBuf]) -> Result<DropReport> {
    // Opened (and the directories walked) before the drop, so that measuring afterwards
    // reads no metadata back in.
    let files = RunFiles::open(run_files);
    let before = meminfo::read()?;
    let run_before = files.residency();
    let knob = Path::new("/proc/sys/vm/drop_caches");
    let mut attempt = 0;
    loop {
        attempt += 1;
        // SAFETY: sync(2) has no failure mode.
        unsafe { libc::sync() };
        files.evict();
        util::write_value(knob, "3").map_err(|e| Error::io("write", knob, e))?;
        let report = DropReport {
            before: before.clone(),
            after: meminfo::read()?,
            run_before,
            run_after: files.residency(),
        };
        // A page that was busy for an instant (a CPU's LRU batch refilled while the advice
        // drained the others) goes on a second try; one that is mapped does not.
        if attempt == DROP_ATTEMPTS || report.verify().is_ok() {
            return Ok(report);
        }
    }
}

/// How many times `sync`, the advice and the drop are tried before the run's files are
/// judged to have stayed.
pub const DROP_ATTEMPTS: u32 = 3;

// Emptying the page cache in the middle of a run, for the kinds that do it between their
// parts (between days, between passes), timed.

/// `syncfs` of the filesystem `dir` is on (not `sync`: other filesystems' dirty data are
/// not the run's), timed.
pub fn syncfs(dir: &Path) -> Result<Duration, String> {
    let d = std::fs::File::open(dir).map_err(|e| format!("opening {}: {e}", dir.display()))?;
    let t = Instant::now();
    // SAFETY: a valid open descriptor.
    if unsafe { libc::syncfs(std::os::fd::AsRawFd::as_raw_fd(&d)) } != 0 {
        return Err(format!(
            "syncfs {}: {}",
            dir.display(),
            std::io::Error::last_os_error()
        ));
    }
    Ok(t.elapsed())
}

/// `sync`, then the kernel drops every clean page of the page cache (and the dentries and
/// inodes it can), the whole machine's, tried again while pages of `files` stay;
/// `setting` names what asked for it, for the error. Root only. How long it took.
pub fn drop_all(files: &[PathBuf], setting: &str) -> Result<Duration, String> {
    let t = Instant::now();
    drop_caches_unchecked(files)
        .map_err(|e| format!("dropping caches: {e} ({setting} needs root)"))?;
    Ok(t.elapsed())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(resident_after: u64, bytes: u64, memory_fs: bool) -> DropReport {
        let m = iolab_sys::meminfo::parse(
            "MemTotal: 1000 kB\nMemFree: 300 kB\nBuffers: 10 kB\nCached: 200 kB\n\
             SwapCached: 0 kB\nSwapTotal: 0 kB\nSwapFree: 0 kB\nDirty: 5 kB\nWriteback: 1 kB\n",
        )
        .unwrap();
        let r = |resident| Residency {
            files: 4,
            bytes,
            sampled_files: 4,
            sampled_bytes: bytes,
            sampled_resident_bytes: resident,
            memory_fs,
        };
        DropReport {
            before: m.clone(),
            after: m,
            run_before: r(bytes),
            run_after: r(resident_after),
        }
    }

    #[test]
    fn verdicts_are_about_the_run_files() {
        // Everything dropped; Cached did not fall (another process refilled it): fine.
        assert!(report(0, 1 << 30, false).verify().is_ok());
        assert_eq!(report(0, 1 << 30, false).freed_kib(), 0);
        // A few pages back: within the slack.
        assert!(report(8 << 20, 1 << 30, false).verify().is_ok());
        assert!(report(64 << 10, 1 << 20, false).verify().is_ok());
        // Half of it still cached: the run would start warm.
        let e = report(512 << 20, 1 << 30, false).verify().unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains("512 MiB of the run's 1 GiB (4 files) still in the page cache"),
            "{text}"
        );
        // tmpfs: always resident, never an error.
        assert!(report(1 << 30, 1 << 30, true).verify().is_ok());
        // No files (yet): nothing to judge.
        assert!(report(0, 0, false).verify().is_ok());
    }
}
