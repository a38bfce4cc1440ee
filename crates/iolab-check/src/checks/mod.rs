//! One module per check, each a unit struct implementing [`Check`]. The module's doc comment
//! says which facts the check needs, when it fires and why its thresholds (public constants)
//! are what they are; `docs/checks.md` says the same for users.
//!
//! The structs are also re-exported here, e.g. [`CacheFit`].

pub mod cache_cap;
pub mod cache_cap_memory;
pub mod cache_fit;
pub mod cache_refilled;
pub mod cache_served;
pub mod claims_beyond_syscalls;
pub mod cpu_throttled;
pub mod cpuset_mismatch;
pub mod device_idle;
pub mod did_not_converge;
pub mod direct_not_direct;
pub mod engine_cpu_bound;
pub mod flush_untimed;
pub mod hosts_differ;
pub mod loop_cached;
pub mod memory_limit;
pub mod memory_pressure;
pub mod noisy_neighbour;
pub mod not_steady;
pub mod overran;
pub mod ran_dry;
pub mod rank_skew;
pub mod short_run;
pub mod slow_clocksource;
pub mod straggler;
pub mod sync_not_durable;
pub mod system_skipped;
pub mod tcg;
pub mod throttle_bypassed;
pub mod too_few_runs;
pub mod vm_cache_mode;
pub mod write_amplification;

pub use cache_cap::CacheCap;
pub use cache_cap_memory::CacheCapMemory;
pub use cache_fit::CacheFit;
pub use cache_refilled::CacheRefilled;
pub use cache_served::CacheServed;
pub use claims_beyond_syscalls::ClaimsBeyondSyscalls;
pub use cpu_throttled::CpuThrottled;
pub use cpuset_mismatch::CpusetMismatch;
pub use device_idle::DeviceIdle;
pub use did_not_converge::DidNotConverge;
pub use direct_not_direct::DirectNotDirect;
pub use engine_cpu_bound::EngineCpuBound;
pub use flush_untimed::FlushUntimed;
pub use hosts_differ::HostsDiffer;
pub use loop_cached::LoopCached;
pub use memory_limit::MemoryLimit;
pub use memory_pressure::MemoryPressure;
pub use noisy_neighbour::NoisyNeighbour;
pub use not_steady::NotSteady;
pub use overran::Overran;
pub use ran_dry::RanDry;
pub use rank_skew::RankSkew;
pub use short_run::ShortRun;
pub use slow_clocksource::SlowClocksource;
pub use straggler::Straggler;
pub use sync_not_durable::SyncNotDurable;
pub use system_skipped::SystemSkipped;
pub use tcg::Tcg;
pub use throttle_bypassed::ThrottleBypassed;
pub use too_few_runs::TooFewRuns;
pub use vm_cache_mode::VmCacheMode;
pub use write_amplification::WriteAmplification;

use crate::{Check, RankFacts, RunFacts};
use iolab_sys::cpus::format_cpu_list;

/// Every check, in the order of `docs/checks.md`.
pub(crate) fn all() -> Vec<Box<dyn Check>> {
    vec![
        Box::new(CacheFit),
        Box::new(CacheServed),
        Box::new(WriteAmplification),
        Box::new(ClaimsBeyondSyscalls),
        Box::new(FlushUntimed),
        Box::new(DeviceIdle),
        Box::new(DirectNotDirect),
        Box::new(SyncNotDurable),
        Box::new(EngineCpuBound),
        Box::new(NoisyNeighbour),
        Box::new(CacheRefilled),
        Box::new(MemoryPressure),
        Box::new(ShortRun),
        Box::new(Overran),
        Box::new(NotSteady),
        Box::new(RanDry),
        Box::new(DidNotConverge),
        Box::new(TooFewRuns),
        Box::new(LoopCached),
        Box::new(SystemSkipped),
        Box::new(CacheCap),
        Box::new(CacheCapMemory),
        Box::new(ThrottleBypassed),
        Box::new(CpuThrottled),
        Box::new(MemoryLimit),
        Box::new(VmCacheMode),
        Box::new(Tcg),
        Box::new(SlowClocksource),
        Box::new(CpusetMismatch),
        Box::new(RankSkew),
        Box::new(Straggler),
        Box::new(HostsDiffer),
    ]
}

/// The run's ranks for the rank checks: at least two, and every per-rank list either one
/// entry per rank or empty (not recorded). Anything else is not a run the checks can read,
/// so they stay silent rather than pair a rank with another's facts.
pub(crate) fn ranks(f: &RunFacts) -> Option<&RankFacts> {
    let r = f.ranks.as_ref()?;
    let n = r.hosts.len();
    let fits = |len: usize| len == n || len == 0;
    (n >= 2 && fits(r.timed_unix_ns.len()) && fits(r.kernels.len()) && fits(r.clocksources.len()))
        .then_some(r)
}

/// Each rank's timed region, when recorded for every rank and none ends before it starts.
pub(crate) fn rank_spans(r: &RankFacts) -> Option<&[[u64; 2]]> {
    let t = r.timed_unix_ns.as_slice();
    (!t.is_empty() && t.iter().all(|[s, e]| e >= s)).then_some(t)
}

/// The ranks ran on more than one host, so their times are on more than one clock.
pub(crate) fn several_hosts(r: &RankFacts) -> bool {
    r.hosts.iter().any(|h| *h != r.hosts[0])
}

/// Ranks in words with a compact list, e.g. `rank 3`, `ranks 0-3,8`.
pub(crate) fn rank_list(ranks: impl IntoIterator<Item = usize>) -> String {
    let ranks: Vec<u32> = ranks
        .into_iter()
        .map(|r| u32::try_from(r).unwrap_or(u32::MAX))
        .collect();
    let word = if ranks.len() == 1 { "rank" } else { "ranks" };
    format!("{word} {}", format_cpu_list(&ranks))
}

/// Rank facts for tests: each rank's host and timed region (ns), kernels and clock sources
/// not recorded.
#[cfg(test)]
pub(crate) fn ranked(hosts: &[&str], timed: &[[u64; 2]]) -> RunFacts {
    RunFacts {
        ranks: Some(RankFacts {
            hosts: hosts.iter().map(|h| h.to_string()).collect(),
            timed_unix_ns: timed.to_vec(),
            ..RankFacts::default()
        }),
        ..RunFacts::default()
    }
}
