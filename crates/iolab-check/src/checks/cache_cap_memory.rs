//! `cache-cap-memory`: the workload's own memory approaches the page-cache cap.
//!
//! Needs: `cgroup_cache_limit_bytes` (`sut.cache_limit`) and `engine_memory_bytes` (the
//! workload's I/O buffers and thread stacks, estimated from its plan). Judged before running
//! only: after a run, what the cap did is in the run's environment (`sut.cache_cap`).
//!
//! Fires (warning) when the estimate is at least [`WARN_SHARE`] of the cap. A v1 memory
//! cgroup charges iolab's own memory together with the page cache; iolab adds that memory
//! to the cgroup's limit (`iolab_sut::cap`) so that the cap still holds page cache only,
//! and the kernel never kills iolab for it. The run then takes up to cap + that memory, and
//! when the engine's memory grows fast (all threads allocating their buffers at once) it
//! takes its pages from the cache for a moment: with memory of the order of the cap, the
//! cache the run measures is not the one the experiment meant, and the machine needs the sum.

use crate::{Check, Finding, RunFacts, Severity};
use iolab_util::units::format_bytes;
use serde_json::json;

const ID: &str = "cache-cap-memory";

/// The workload's memory as a share of the cap from which the check warns.
pub const WARN_SHARE: f64 = 0.5;

/// See the [module documentation](self).
pub struct CacheCapMemory;

impl Check for CacheCapMemory {
    fn id(&self) -> &'static str {
        ID
    }

    fn applies_before_run(&self) -> bool {
        true
    }

    fn check(&self, f: &RunFacts) -> Option<Finding> {
        let cap = f.cgroup_cache_limit_bytes?;
        let memory = f.engine_memory_bytes?;
        let share = memory as f64 / cap.max(1) as f64;
        if share < WARN_SHARE {
            return None;
        }
        let threads = f
            .engine_threads
            .map(|n| format!(" ({n} threads' I/O buffers and stacks)"))
            .unwrap_or_default();
        Some(Finding {
            id: ID,
            severity: Severity::Warning,
            evidence: json!({
                "cgroup_cache_limit_bytes": cap,
                "engine_memory_bytes": memory,
                "engine_threads": f.engine_threads,
                "share_of_cap": share,
                "warn_share": WARN_SHARE,
            }),
            explanation: format!(
                "The workload's own memory, about {}{threads}, is {:.0}% of the page-cache cap \
                 ({}). iolab adds its own memory to the cache cgroup's limit so that the cap \
                 holds page cache only (up to {} in all), but while the threads allocate their \
                 buffers they take those pages from the cache, and the machine must have the \
                 sum free.",
                format_bytes(memory),
                share * 100.0,
                format_bytes(cap),
                format_bytes(cap.saturating_add(memory)),
            ),
            fix: "Raise `sut.cache_limit` well above the workload's memory, or give the \
                  workload fewer threads or smaller I/O sizes."
                .into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{self, ev, MIB};

    #[test]
    fn fires_when_the_workloads_memory_approaches_the_cap() {
        // Seed 000's quick look: 100 readers with 1 MiB buffers under a 128 MiB cap.
        let mut f = testutil::cold_read();
        f.cgroup_cache_limit_bytes = Some(128 * MIB);
        f.engine_memory_bytes = Some(119 * MIB);
        f.engine_threads = Some(100);
        let x = CacheCapMemory.check(&f).expect("fires");
        assert_eq!(x.severity, Severity::Warning);
        assert_eq!(ev(&x, "engine_memory_bytes"), 119 * MIB);
        assert!(
            x.explanation.contains("about 119 MiB (100 threads'"),
            "{}",
            x.explanation
        );
        assert!(
            x.explanation
                .contains("93% of the page-cache cap (128 MiB)"),
            "{}",
            x.explanation
        );
        assert!(x.explanation.contains("up to 247 MiB"), "{}", x.explanation);
        assert!(x.fix.contains("sut.cache_limit"));
    }

    #[test]
    fn silent_below_half_the_cap_without_a_cap_or_without_an_estimate() {
        let mut f = testutil::cold_read();
        f.cgroup_cache_limit_bytes = Some(128 * MIB);
        f.engine_memory_bytes = Some(63 * MIB);
        assert!(CacheCapMemory.check(&f).is_none());
        f.engine_memory_bytes = Some(64 * MIB);
        assert!(CacheCapMemory.check(&f).is_some(), "exactly half warns");
        f.cgroup_cache_limit_bytes = None;
        assert!(CacheCapMemory.check(&f).is_none());
        f.cgroup_cache_limit_bytes = Some(128 * MIB);
        f.engine_memory_bytes = None;
        assert!(CacheCapMemory.check(&f).is_none());
    }
}
