//! `cache-refilled`: while iolab dropped the page cache before the run, something else filled
//! it again.
//!
//! Needs: `cache_drop` (the runner sets it when it dropped caches).
//!
//! Fires (warning) when the page cache others added during the sync and drop — at least
//! `Cached` after − (`Cached` before − the run's own pages the drop freed), see
//! [`CacheDropFacts::refill_bytes`](crate::CacheDropFacts::refill_bytes) — is 16 MiB or
//! more. The run itself is fine: the runner has checked that its files left the cache, so
//! it started cold. But another process is reading or writing files, or filling a tmpfs,
//! at the same time: it competes with the run for memory (and perhaps the device), and the
//! machine's `Cached` says nothing about the run's dataset. Before iolab checked the run's
//! own files, such a refill failed the run ("drop_caches did not free the page cache").

use crate::{Check, Finding, RunFacts, Severity};
use iolab_util::units::format_bytes;
use serde_json::json;

const ID: &str = "cache-refilled";

/// 16 MiB: a drop takes from milliseconds to about a second (the `sync` before it waits for
/// every dirty page of the machine); within that, an otherwise quiet system's own activity
/// (logs, the journal, cron) adds at most a few MiB. A refill this size is somebody's I/O.
pub const REFILL_MIN_BYTES: u64 = 16 << 20;

/// See the [module documentation](self).
pub struct CacheRefilled;

impl Check for CacheRefilled {
    fn id(&self) -> &'static str {
        ID
    }

    fn check(&self, f: &RunFacts) -> Option<Finding> {
        let d = f.cache_drop.as_ref()?;
        let refill = d.refill_bytes();
        if refill < REFILL_MIN_BYTES {
            return None;
        }
        let shmem = d.shmem_growth_bytes();
        let tmpfs = if shmem > 0 {
            format!(
                "; of it, Shmem (tmpfs and shared memory, which no drop can free) grew by {}",
                format_bytes(shmem)
            )
        } else {
            String::new()
        };
        Some(Finding {
            id: ID,
            severity: Severity::Warning,
            evidence: json!({
                "refill_bytes": refill,
                "cached_before_bytes": d.cached_before_bytes,
                "cached_after_bytes": d.cached_after_bytes,
                "shmem_before_bytes": d.shmem_before_bytes,
                "shmem_after_bytes": d.shmem_after_bytes,
                "shmem_growth_bytes": shmem,
                "run_files": d.run_files,
                "run_bytes": d.run_bytes,
                "run_resident_before_bytes": d.run_resident_before_bytes,
                "run_resident_after_bytes": d.run_resident_after_bytes,
            }),
            explanation: format!(
                "While the page cache was dropped before the run, something else added at \
                 least {} to it (Cached went from {} to {}, although the run's own files gave \
                 up {}{tmpfs}). The run's files were out of the cache ({} of {} resident \
                 after the drop), so the run started cold; but another process is reading or \
                 writing files, or filling a tmpfs, at the same time: it competes with the run \
                 for memory, and perhaps for the device.",
                format_bytes(refill),
                format_bytes(d.cached_before_bytes),
                format_bytes(d.cached_after_bytes),
                format_bytes(
                    d.run_resident_before_bytes
                        .saturating_sub(d.run_resident_after_bytes)
                ),
                format_bytes(d.run_resident_after_bytes),
                format_bytes(d.run_bytes),
            ),
            fix: "Measure on a quiet machine: find the other I/O (`pidstat -d 1`, `iotop -o`) \
                  and any growing tmpfs (`df -t tmpfs`) and stop them for the experiment."
                .into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{self, ev, MIB};
    use crate::CacheDropFacts;

    const KIB: u64 = 1024;

    /// The report that led to this check: Cached 2761064 kB before, 2767204 kB after, 2698168
    /// kB of it shmem, while another process kept a large tmpfs and did I/O. The run's files
    /// (64 MiB) were cached before and gone after.
    fn reported() -> CacheDropFacts {
        CacheDropFacts {
            cached_before_bytes: 2_761_064 * KIB,
            cached_after_bytes: 2_767_204 * KIB,
            shmem_before_bytes: Some(2_680_000 * KIB),
            shmem_after_bytes: Some(2_698_168 * KIB),
            run_files: 1,
            run_bytes: 64 * MIB,
            run_resident_before_bytes: 64 * MIB,
            run_resident_after_bytes: 0,
        }
    }

    #[test]
    fn fires_for_the_reported_refill() {
        let mut f = testutil::cold_read();
        f.cache_drop = Some(reported());
        let x = CacheRefilled.check(&f).expect("fires");
        assert_eq!(x.severity, Severity::Warning);
        // 2767204 − (2761064 − 65536) kB = 71676 kB.
        assert_eq!(ev(&x, "refill_bytes"), 71_676 * KIB);
        assert_eq!(ev(&x, "shmem_growth_bytes"), 18_168 * KIB);
        assert_eq!(ev(&x, "run_resident_after_bytes"), 0);
        assert!(
            x.explanation.contains("added at least 70.0 MiB")
                && x.explanation.contains("Shmem")
                && x.explanation.contains("0 B of 64 MiB resident"),
            "{}",
            x.explanation
        );
    }

    #[test]
    fn silent_when_the_drop_freed_what_it_should() {
        let mut f = testutil::cold_read();
        // Quiet machine: Cached fell by the run's files and more.
        f.cache_drop = Some(CacheDropFacts {
            cached_after_bytes: 900 * MIB,
            cached_before_bytes: 2_000 * MIB,
            ..reported()
        });
        assert_eq!(CacheRefilled.check(&f), None);
        // Nothing dropped at all (the run's files were not cached), a little noise.
        f.cache_drop = Some(CacheDropFacts {
            cached_before_bytes: 300 * MIB,
            cached_after_bytes: 302 * MIB,
            run_resident_before_bytes: 0,
            ..reported()
        });
        assert_eq!(CacheRefilled.check(&f), None);
        // Not dropped: unknown, silent.
        f.cache_drop = None;
        assert_eq!(CacheRefilled.check(&f), None);
        assert_eq!(CacheRefilled.check(&testutil::cold_read()), None);
    }

    #[test]
    fn boundary_is_sixteen_mib() {
        let mut d = CacheDropFacts {
            cached_before_bytes: 1_000 * MIB,
            cached_after_bytes: 1_000 * MIB + REFILL_MIN_BYTES,
            shmem_before_bytes: None,
            shmem_after_bytes: None,
            run_files: 0,
            run_bytes: 0,
            run_resident_before_bytes: 0,
            run_resident_after_bytes: 0,
        };
        let mut f = testutil::cold_read();
        f.cache_drop = Some(d.clone());
        let x = CacheRefilled.check(&f).expect("16 MiB fires");
        assert!(
            !x.explanation.contains("Shmem"),
            "unknown shmem: not mentioned"
        );
        d.cached_after_bytes -= 1;
        f.cache_drop = Some(d);
        assert_eq!(CacheRefilled.check(&f), None);
    }
}
