//! `memory-pressure`: the run spent a notable share of its timed region waiting for memory.
//!
//! Needs: `psi_memory_full_pct` (PSI memory `full` over the timed region); uses
//! `psi_memory_some_pct`, the cache cap and MemTotal for the explanation.
//!
//! Fires (warning) when **`full` ≥ 10%** of the timed region: for a tenth of the run every
//! non-idle task waited for memory at once — reclaim, or refaults of pages evicted a moment
//! before. The number then measures the memory manager, not the storage: a memory cgroup
//! (`sut.cache_limit`) whose limit the workload's own memory (its processes, page tables,
//! their files' metadata) nearly fills reclaims on every allocation, and its runs last longer
//! than planned and run many times slower (seed report 000: 78–89% `full`, 10 s runs lasting
//! 12.5–20.7 s). A quiet machine shows `full` near 0%; a busy one (builds, other benchmarks)
//! a few percent, which is why the threshold is a tenth. `some` alone (one task waiting) is
//! not judged: page-cache reclaim in a capped cache is what the cap is for.

use crate::format::pct;
use crate::{Check, Finding, RunFacts, Severity};
use iolab_util::units::format_bytes;
use serde_json::json;

const ID: &str = "memory-pressure";

/// PSI memory `full`, % of the timed region, from which the check fires (inclusive).
pub const MAX_FULL_PCT: f64 = 10.0;

/// See the [module documentation](self).
pub struct MemoryPressure;

impl Check for MemoryPressure {
    fn id(&self) -> &'static str {
        ID
    }

    fn check(&self, f: &RunFacts) -> Option<Finding> {
        let full = f.psi_memory_full_pct.filter(|p| p.is_finite())?;
        if full < MAX_FULL_PCT {
            return None;
        }
        // A cap below the machine's memory is where the pressure comes from.
        let cap = f
            .cgroup_cache_limit_bytes
            .filter(|&c| f.mem_total_bytes.is_none_or(|m| c < m));
        let some = f
            .psi_memory_some_pct
            .filter(|p| p.is_finite())
            .map(|s| format!(" (and at least one task for {})", pct(s)))
            .unwrap_or_default();
        let elapsed = f
            .elapsed_ns
            .map(|e| format!(" of its {}", iolab_util::units::format_ns(e as f64)))
            .unwrap_or_default();
        let (why, fix) = match cap {
            Some(c) => (
                format!(
                    " The page cache is capped at {} (`sut.cache_limit`): a memory cgroup \
                     charges the workload's own memory too (its processes, their page \
                     tables and file metadata), and when that nearly fills the limit every \
                     allocation waits for reclaim.",
                    format_bytes(c)
                ),
                format!(
                    "Raise `sut.cache_limit` above {} plus the workload's own memory (its \
                     processes' resident size), or run fewer processes; then the cap limits \
                     the page cache only.",
                    format_bytes(c)
                ),
            ),
            None => (
                " Memory was short for the workload and whatever else ran on the machine."
                    .to_string(),
                "Free memory for the run (stop other memory-heavy processes) or shrink the \
                 workload's own memory (fewer processes or threads)."
                    .to_string(),
            ),
        };
        Some(Finding {
            id: ID,
            severity: Severity::Warning,
            evidence: json!({
                "psi_memory_full_pct": full,
                "psi_memory_some_pct": f.psi_memory_some_pct,
                "max_full_pct": MAX_FULL_PCT,
                "elapsed_ns": f.elapsed_ns,
                "cgroup_cache_limit_bytes": cap,
                "mem_total_bytes": f.mem_total_bytes,
            }),
            explanation: format!(
                "Every task on the machine waited for memory for {}{elapsed}{some} (PSI \
                 memory full): the run measured memory reclaim, not only storage.{why} Its \
                 operations stall and the run may last longer than planned.",
                pct(full)
            ),
            fix,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{self, close, ev, ev_f64, GIB, MIB, SEC};

    fn pressed(full: f64) -> RunFacts {
        let mut f = testutil::cold_read();
        f.psi_memory_full_pct = Some(full);
        f.psi_memory_some_pct = Some(full + 5.0);
        f.cgroup_cache_limit_bytes = Some(128 * MIB);
        f.elapsed_ns = Some(20 * SEC);
        f
    }

    #[test]
    fn fires_for_the_seed_runs_and_names_the_cap() {
        // Seed report 000's capped readers=100 runs: 78–89% full.
        let x = MemoryPressure.check(&pressed(83.4)).expect("fires");
        assert_eq!(x.severity, Severity::Warning);
        close(ev_f64(&x, "psi_memory_full_pct"), 83.4);
        assert_eq!(ev(&x, "cgroup_cache_limit_bytes"), 128 * MIB);
        assert!(
            x.explanation.contains("for 83.4% of its 20.00 s"),
            "{}",
            x.explanation
        );
        assert!(x.explanation.contains("measured memory reclaim"));
        assert!(x.explanation.contains("capped at 128 MiB"));
        assert!(x.fix.contains("sut.cache_limit"));
    }

    #[test]
    fn without_a_cap_it_blames_memory_not_the_cap() {
        let mut f = pressed(40.0);
        f.cgroup_cache_limit_bytes = None;
        let x = MemoryPressure.check(&f).expect("fires");
        assert!(!x.explanation.contains("capped"));
        assert!(x.evidence["cgroup_cache_limit_bytes"].is_null());
        // A "cap" above the machine's memory caps nothing.
        f.cgroup_cache_limit_bytes = Some(64 * GIB);
        let x = MemoryPressure.check(&f).expect("fires");
        assert!(!x.explanation.contains("capped"));
    }

    #[test]
    fn boundary_and_unknown() {
        assert!(MemoryPressure.check(&pressed(MAX_FULL_PCT)).is_some());
        assert_eq!(MemoryPressure.check(&pressed(9.99)), None);
        // A build machine's few percent is not the run's problem.
        assert_eq!(MemoryPressure.check(&pressed(3.9)), None);
        let mut f = pressed(50.0);
        f.psi_memory_full_pct = None;
        assert_eq!(MemoryPressure.check(&f), None);
        f.psi_memory_full_pct = Some(f64::NAN);
        assert_eq!(MemoryPressure.check(&f), None);
    }
}
