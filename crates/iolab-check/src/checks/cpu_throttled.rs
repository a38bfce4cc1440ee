//! `cpu-throttled`: a CPU quota throttled the workload.
//!
//! Needs: `environment.cpu_throttled_periods`, and `environment.cpu_periods` or
//! `environment.cpu_throttled_ns` with `elapsed_ns` (the quota in CPUs and the cpuset are
//! evidence only).
//!
//! Fires (warning) when the run was throttled in some period and either share reaches its
//! threshold: throttled periods ≥ [`MIN_THROTTLED_PERIOD_FRACTION`] of the periods, or
//! throttled time ≥ [`MIN_THROTTLED_TIME_FRACTION`] of the elapsed time. A CFS quota
//! (cgroup `cpu.cfs_quota_us`, Docker's `--cpus`) is CPU time per scheduling period, not a
//! share of the machine: threads that use it up early in a period all wait for the next one,
//! even when their average use over the run stays well below the quota (kubernetes issue
//! #67577). An I/O workload is bursty — a burst of completions wakes every thread at once —
//! so a quota that looks generous adds waits to its latencies, and "a container is slower
//! than the host" may be the quota, not the container. A cpuset limits the CPUs without
//! throttling.
//!
//! `throttled_time` is summed over the CPUs' run queues, so it can exceed the elapsed time;
//! the time share is only a second way in for a run with few periods.

use crate::format::{pct_of_fraction, ratio};
use crate::{Check, Finding, RunFacts, Severity};
use iolab_util::units::format_ns;
use serde_json::json;

const ID: &str = "cpu-throttled";

/// A throttled period in a hundred: a burst held back about once a second with Docker's
/// 100 ms period, enough to be seen in a latency distribution's tail.
pub const MIN_THROTTLED_PERIOD_FRACTION: f64 = 0.01;

/// Throttled time, a hundredth of the elapsed time: waits of that size show in the mean.
pub const MIN_THROTTLED_TIME_FRACTION: f64 = 0.01;

/// See the [module documentation](self).
pub struct CpuThrottled;

impl Check for CpuThrottled {
    fn id(&self) -> &'static str {
        ID
    }

    fn check(&self, f: &RunFacts) -> Option<Finding> {
        let env = f.environment.as_ref()?;
        let throttled = env.cpu_throttled_periods.filter(|&n| n > 0)?;
        let period_frac = env.cpu_periods.and_then(|p| ratio(throttled, p));
        let time_frac = env
            .cpu_throttled_ns
            .zip(f.elapsed_ns)
            .and_then(|(t, e)| ratio(t, e));
        let by_periods = period_frac.is_some_and(|x| x >= MIN_THROTTLED_PERIOD_FRACTION);
        let by_time = time_frac.is_some_and(|x| x >= MIN_THROTTLED_TIME_FRACTION);
        if !by_periods && !by_time {
            return None;
        }
        let quota = env
            .cpu_quota_cpus
            .map(|q| format!(" of {q} CPUs"))
            .unwrap_or_default();
        let periods = match (env.cpu_periods, period_frac) {
            (Some(p), Some(x)) => format!(
                " in {throttled} of its {p} periods ({})",
                pct_of_fraction(x)
            ),
            _ => format!(" in {throttled} periods"),
        };
        let time = env
            .cpu_throttled_ns
            .map(|t| {
                let of = f
                    .elapsed_ns
                    .map(|e| format!(" (the run lasted {})", format_ns(e as f64)))
                    .unwrap_or_default();
                format!(", {} in all{of}", format_ns(t as f64))
            })
            .unwrap_or_default();
        Some(Finding {
            id: ID,
            severity: Severity::Warning,
            evidence: json!({
                "kind": env.kind,
                "cpu_quota_cpus": env.cpu_quota_cpus,
                "cpuset": env.cpuset,
                "cpu_periods": env.cpu_periods,
                "cpu_throttled_periods": throttled,
                "cpu_throttled_s": env.cpu_throttled_ns.map(|t| t as f64 / 1e9),
                "elapsed_ns": f.elapsed_ns,
                "throttled_period_fraction": period_frac,
                "throttled_time_fraction": time_frac,
                "min_throttled_period_fraction": MIN_THROTTLED_PERIOD_FRACTION,
                "min_throttled_time_fraction": MIN_THROTTLED_TIME_FRACTION,
            }),
            explanation: format!(
                "The CPU quota{quota} throttled the workload{periods}{time}: its threads \
                 waited for the next scheduling period. A CFS quota (Docker's `--cpus`) is CPU \
                 time per period, not a share of the machine: a burst that uses it up early in \
                 a period waits even when the average use over the run stays below the quota, \
                 so the numbers include those waits — the difference from the host may be the \
                 quota, not the environment."
            ),
            fix: "Compare environments without a CPU quota (`environment.cpus` unset), or \
                  confine the container with a cpuset (`environment.cpuset`), which limits the \
                  CPUs without throttling."
                .into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{self, close, ev, ev_f64, SEC};
    use crate::EnvFacts;

    fn throttled(periods: u64, throttled: u64, throttled_ns: u64) -> RunFacts {
        testutil::within(
            testutil::cold_read(),
            EnvFacts {
                cpu_quota_cpus: Some(0.5),
                cpu_periods: Some(periods),
                cpu_throttled_periods: Some(throttled),
                cpu_throttled_ns: Some(throttled_ns),
                ..testutil::container()
            },
        )
    }

    #[test]
    fn fires_when_the_quota_held_the_workload_back() {
        // 20 s with a 100 ms period: 200 periods, 37 throttled for 1.2 s.
        let x = CpuThrottled
            .check(&throttled(200, 37, 1_200_000_000))
            .expect("fires");
        assert_eq!(x.severity, Severity::Warning);
        assert_eq!(ev(&x, "cpu_throttled_periods"), 37);
        assert_eq!(ev(&x, "cpu_periods"), 200);
        close(ev_f64(&x, "cpu_quota_cpus"), 0.5);
        close(ev_f64(&x, "cpu_throttled_s"), 1.2);
        close(ev_f64(&x, "throttled_period_fraction"), 0.185);
        assert!(
            x.explanation.contains(
                "quota of 0.5 CPUs throttled the workload in 37 of its 200 periods (18.5%)"
            ),
            "{}",
            x.explanation
        );
        assert!(x.explanation.contains("below the quota"));
        assert!(x.fix.contains("environment.cpuset"));
    }

    #[test]
    fn either_share_is_enough() {
        // 2 of 200 periods (1%), little time.
        assert!(CpuThrottled.check(&throttled(200, 2, 1_000)).is_some());
        // 1 of 1000 periods, but 0.5 s of 20 s throttled (2.5%).
        assert!(CpuThrottled.check(&throttled(1000, 1, SEC / 2)).is_some());
        // Time share alone, periods unknown.
        let mut f = throttled(1000, 1, SEC / 2);
        f.environment.as_mut().unwrap().cpu_periods = None;
        assert!(CpuThrottled.check(&f).is_some());
    }

    #[test]
    fn silent_below_both_thresholds_and_without_throttling() {
        // 1 of 200 periods (0.5%), 0.1 s of 20 s (0.5%).
        assert_eq!(CpuThrottled.check(&throttled(200, 1, SEC / 10)), None);
        assert_eq!(CpuThrottled.check(&throttled(200, 0, 0)), None);
        let healthy = testutil::within(testutil::cold_read(), testutil::container());
        assert_eq!(CpuThrottled.check(&healthy), None);
        assert_eq!(CpuThrottled.check(&testutil::cold_read()), None);
    }

    #[test]
    fn unknown_is_undecidable() {
        let mut f = throttled(200, 37, SEC);
        let env = f.environment.as_mut().unwrap();
        env.cpu_periods = None;
        env.cpu_throttled_ns = None;
        assert_eq!(CpuThrottled.check(&f), None);
        let mut f = throttled(200, 37, SEC);
        f.environment.as_mut().unwrap().cpu_throttled_periods = None;
        assert_eq!(CpuThrottled.check(&f), None);
        // Throttled time without the run's length: no share to judge.
        let mut f = throttled(200, 1, SEC);
        f.environment.as_mut().unwrap().cpu_periods = None;
        f.elapsed_ns = None;
        assert_eq!(CpuThrottled.check(&f), None);
    }
}
