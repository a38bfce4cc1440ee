//! `engine-cpu-bound`: the engine's threads were busy on the CPU nearly all the time.
//!
//! Needs: `engine_task_clock_ns` (or, failing that, `engine_usr_sys_ns`), `elapsed_ns` and
//! `engine_threads` (both > 0). Uses `app_ops` for the CPU cost per operation when known.
//!
//! Fires (warning) when `cpu / elapsed / threads ≥ 0.9`: on average each thread ran on a core
//! for at least 90% of the run. A thread waiting for the device sleeps and is not on the CPU,
//! so a thread that is almost never off it was not waiting for storage — the number measures
//! how fast the CPU can issue (or copy) the I/O.

use crate::format::{pct_of_fraction, ratio};
use crate::{Check, Finding, RunFacts, Severity};
use iolab_util::units::format_ns;
use serde_json::json;

const ID: &str = "engine-cpu-bound";

/// 90% of a core per thread: the remaining 10% is scheduling noise and short waits; a thread
/// that waits for I/O in any real share of its time stays well below.
pub const CPU_BOUND_CORE_FRACTION: f64 = 0.9;

/// See the [module documentation](self).
pub struct EngineCpuBound;

impl Check for EngineCpuBound {
    fn id(&self) -> &'static str {
        ID
    }

    fn check(&self, f: &RunFacts) -> Option<Finding> {
        let (cpu, source) = f.engine_cpu_ns()?;
        let elapsed = f.elapsed_ns.filter(|&e| e > 0)?;
        let threads = f.engine_threads.filter(|&t| t > 0)?;
        let per_thread = ratio(cpu, elapsed)? / f64::from(threads);
        if per_thread < CPU_BOUND_CORE_FRACTION {
            return None;
        }
        let ns_per_op = f.app_ops.and_then(|ops| ratio(cpu, ops));
        let per_op = ns_per_op
            .map(|ns| format!(", {ns:.0} ns of CPU per operation"))
            .unwrap_or_default();
        Some(Finding {
            id: ID,
            severity: Severity::Warning,
            evidence: json!({
                "engine_cpu_ns": cpu,
                "cpu_source": source,
                "elapsed_ns": elapsed,
                "engine_threads": threads,
                "core_fraction_per_thread": per_thread,
                "cpu_bound_core_fraction": CPU_BOUND_CORE_FRACTION,
                "cpu_ns_per_op": ns_per_op,
            }),
            explanation: format!(
                "The engine's {threads} thread(s) were on a CPU {} of the time each on average \
                 ({} of {source} over {}{per_op}), at least {}: they hardly ever waited for \
                 the device, so the number measures how fast the CPU issues and copies the \
                 I/O (system calls, page cache, memcpy) more than the storage.",
                pct_of_fraction(per_thread),
                format_ns(cpu as f64),
                format_ns(elapsed as f64),
                pct_of_fraction(CPU_BOUND_CORE_FRACTION),
            ),
            fix: "Add threads (or iodepth with io_uring) and see whether throughput still \
                  scales; use larger requests; if the reads come from the cache \
                  (cache-served), make them cold."
                .into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{self, close, ev, ev_f64, SEC};

    #[test]
    fn fires_when_threads_spin_on_the_cpu() {
        let mut f = testutil::cold_read();
        f.engine_task_clock_ns = Some(76 * SEC); // 4 threads × 20 s × 0.95
        let x = EngineCpuBound.check(&f).expect("fires");
        assert_eq!(x.severity, Severity::Warning);
        assert_eq!(ev(&x, "engine_cpu_ns"), 76 * SEC);
        assert_eq!(ev(&x, "cpu_source"), "task-clock");
        assert_eq!(ev(&x, "elapsed_ns"), 20 * SEC);
        assert_eq!(ev(&x, "engine_threads"), 4);
        close(ev_f64(&x, "core_fraction_per_thread"), 0.95);
        close(ev_f64(&x, "cpu_ns_per_op"), 76e9 / 262_144.0);
        assert!(
            x.explanation.contains("95.0% of the time"),
            "{}",
            x.explanation
        );
    }

    #[test]
    fn falls_back_to_usr_sys() {
        let mut f = testutil::cold_read();
        f.engine_task_clock_ns = None;
        f.engine_usr_sys_ns = Some(80 * SEC);
        let x = EngineCpuBound.check(&f).expect("fires");
        assert_eq!(ev(&x, "cpu_source"), "usr+sys");
        close(ev_f64(&x, "core_fraction_per_thread"), 1.0);
    }

    #[test]
    fn silent_for_io_bound_threads() {
        assert_eq!(EngineCpuBound.check(&testutil::cold_read()), None);
        assert_eq!(EngineCpuBound.check(&testutil::sync_write()), None);
    }

    #[test]
    fn boundary_is_ninety_percent() {
        let mut f = testutil::cold_read();
        f.engine_task_clock_ns = Some(72 * SEC); // exactly 0.9
        assert!(EngineCpuBound.check(&f).is_some());
        f.engine_task_clock_ns = Some(72 * SEC - 1);
        assert_eq!(EngineCpuBound.check(&f), None);
    }

    #[test]
    fn unknown_facts_are_undecidable() {
        let mut f = testutil::cold_read();
        f.engine_task_clock_ns = Some(80 * SEC);
        let mut g = f.clone();
        g.engine_threads = None;
        assert_eq!(EngineCpuBound.check(&g), None);
        let mut g = f.clone();
        g.elapsed_ns = Some(0);
        assert_eq!(EngineCpuBound.check(&g), None);
        let mut g = f;
        g.engine_task_clock_ns = None;
        g.engine_usr_sys_ns = None;
        assert_eq!(EngineCpuBound.check(&g), None);
    }
}
