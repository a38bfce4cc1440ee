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
pub mod loop_cached;
pub mod memory_limit;
pub mod memory_pressure;
pub mod noisy_neighbour;
pub mod not_steady;
pub mod overran;
pub mod ran_dry;
pub mod short_run;
pub mod slow_clocksource;
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
pub use loop_cached::LoopCached;
pub use memory_limit::MemoryLimit;
pub use memory_pressure::MemoryPressure;
pub use noisy_neighbour::NoisyNeighbour;
pub use not_steady::NotSteady;
pub use overran::Overran;
pub use ran_dry::RanDry;
pub use short_run::ShortRun;
pub use slow_clocksource::SlowClocksource;
pub use sync_not_durable::SyncNotDurable;
pub use system_skipped::SystemSkipped;
pub use tcg::Tcg;
pub use throttle_bypassed::ThrottleBypassed;
pub use too_few_runs::TooFewRuns;
pub use vm_cache_mode::VmCacheMode;
pub use write_amplification::WriteAmplification;

use crate::Check;

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
    ]
}
