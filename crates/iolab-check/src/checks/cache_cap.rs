//! `cache-cap`: what the engine itself needed under a cache cap (`sut.cache_limit`).
//!
//! Needs: `cgroup_cache_limit_bytes` (the cap), `cache_cap_own_peak_bytes` and
//! `cache_cap_waits` (iolab_sut::cgroup::CapGuard: the memory of the engine's cgroup that was
//! not page cache, which iolab adds to the cgroup's limit as it grows, and how often threads
//! waited for the limit to rise).
//!
//! Fires:
//! * **warning** when threads waited: they allocated faster than the watcher raised the limit
//!   and slept until it did, so the timed region includes those waits (the kernel never
//!   kills iolab for it: the cgroup's OOM killer is off);
//! * **info** when the engine's own memory reached half the cap or more (the share at which
//!   `cache-cap-memory` warns before running): counted against the cap, as a plain memory
//!   cgroup counts it, it would have left little or no page cache (the run would have
//!   measured reclaim, or the kernel would have killed iolab). The page cache still had the
//!   whole cap; the machine had to have both.

use crate::{Check, Finding, RunFacts, Severity};
use iolab_util::units::format_bytes;
use serde_json::json;

const ID: &str = "cache-cap";

/// See the [module documentation](self).
pub struct CacheCap;

impl Check for CacheCap {
    fn id(&self) -> &'static str {
        ID
    }

    fn check(&self, f: &RunFacts) -> Option<Finding> {
        let cap = f.cgroup_cache_limit_bytes?;
        let own = f.cache_cap_own_peak_bytes?;
        let waits = f.cache_cap_waits.unwrap_or(0);
        let evidence = json!({
            "cache_limit_bytes": cap,
            "own_peak_bytes": own,
            "waits": waits,
        });
        let (cap_t, own_t) = (format_bytes(cap), format_bytes(own));
        if waits > 0 {
            return Some(Finding {
                id: ID,
                severity: Severity::Warning,
                evidence,
                explanation: format!(
                    "The engine's threads waited for memory {waits} time{} under the {cap_t} \
                     cache cap: their own memory (up to {own_t}) grew faster than iolab raised \
                     the cgroup's limit, and they slept until it did. The timed region \
                     includes those waits.",
                    if waits == 1 { "" } else { "s" }
                ),
                fix: "Give the workload's memory time to settle before the timed region \
                      (`procedure.warmup`), or use fewer threads or smaller buffers."
                    .into(),
            });
        }
        // The share at which `cache-cap-memory` warns before running.
        (own as f64 >= super::cache_cap_memory::WARN_SHARE * cap as f64).then(|| {
            let pct = own as f64 / cap as f64 * 100.0;
            let left = if own >= cap {
                "no page cache at all".to_string()
            } else {
                format!("{} of page cache", format_bytes(cap - own))
            };
            Finding {
                id: ID,
                severity: Severity::Info,
                evidence,
                explanation: format!(
                    "The engine's own memory (buffers, stacks, kernel memory) reached {own_t}, \
                     {pct:.0} % of the {cap_t} cache cap. iolab added it to the memory \
                     cgroup's limit, so the page cache still had {cap_t}; a plain memory cgroup \
                     counts it against the cap, which would have left {left} (the run would \
                     have measured reclaim, or the kernel would have killed the workload)."
                ),
                fix: "Nothing to do here; other tools given the same cap under a plain memory \
                      cgroup measure something else."
                    .into(),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    #[test]
    fn waits_warn_a_large_own_memory_informs_and_the_rest_is_silent() {
        let mut f = RunFacts::default();
        assert!(CacheCap.check(&f).is_none(), "no cap");
        f.cgroup_cache_limit_bytes = Some(128 * MIB);
        assert!(CacheCap.check(&f).is_none(), "unknown use");
        f.cache_cap_own_peak_bytes = Some(63 * MIB);
        f.cache_cap_waits = Some(0);
        assert!(CacheCap.check(&f).is_none(), "under half and no waits");
        f.cache_cap_own_peak_bytes = Some(96 * MIB);
        let x = CacheCap.check(&f).unwrap();
        assert_eq!(x.severity, Severity::Info);
        assert!(
            x.explanation.contains("75 % of the 128 MiB"),
            "{}",
            x.explanation
        );
        assert!(
            x.explanation.contains("left 32 MiB of page cache"),
            "{}",
            x.explanation
        );
        f.cache_cap_own_peak_bytes = Some(138 * MIB);
        let x = CacheCap.check(&f).unwrap();
        assert!(x.explanation.contains("138 MiB"), "{}", x.explanation);
        assert!(
            x.explanation.contains("no page cache at all"),
            "{}",
            x.explanation
        );
        f.cache_cap_waits = Some(3);
        let x = CacheCap.check(&f).unwrap();
        assert_eq!(x.severity, Severity::Warning);
        assert!(x.explanation.contains("3 times"), "{}", x.explanation);
        assert_eq!(x.evidence["waits"], 3);
    }
}
