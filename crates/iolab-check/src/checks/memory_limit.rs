//! `memory-limit`: the workload reached its environment's memory limit.
//!
//! Needs: `environment.oom_kills` or `environment.memory_failcnt` (the limit and the peak
//! are evidence only).
//!
//! Fires (error) when the limit's OOM killer ended a process (`oom_kills > 0`): the run did
//! not do all the work it was meant to, and its numbers are those of whatever survived.
//! Otherwise fires (warning) when the usage hit the limit at all (`memory_failcnt > 0`): a
//! memory cgroup charges the page cache too, so at the limit the kernel reclaimed inside the
//! container and dropped page cache the host, with its whole memory, would have kept. Reads
//! that the host would serve from memory then go to the device, dirty pages are written back
//! early, and the numbers include that reclaim: they compare with the host's only as "under
//! this limit". Any hit counts — there is no share of the run to judge, and one hit means the
//! cache was already as large as the limit allows.

use crate::{Check, Finding, RunFacts, Severity};
use iolab_util::units::format_bytes;
use serde_json::json;

const ID: &str = "memory-limit";

/// See the [module documentation](self). No threshold: any OOM kill, any limit hit.
pub struct MemoryLimit;

impl Check for MemoryLimit {
    fn id(&self) -> &'static str {
        ID
    }

    fn check(&self, f: &RunFacts) -> Option<Finding> {
        let env = f.environment.as_ref()?;
        let kills = env.oom_kills.filter(|&n| n > 0);
        let hits = env.memory_failcnt.filter(|&n| n > 0);
        if kills.is_none() && hits.is_none() {
            return None;
        }
        let limit = env
            .memory_limit_bytes
            .map(|l| format!(" ({})", format_bytes(l)))
            .unwrap_or_default();
        let peak = env
            .memory_peak_bytes
            .map(|p| format!("; its peak was {}", format_bytes(p)))
            .unwrap_or_default();
        let (severity, explanation) = match kills {
            Some(n) => (
                Severity::Error,
                format!(
                    "The memory limit{limit} killed {n} process{} of the workload (the \
                     kernel's OOM killer{peak}): the run did not do all its work, and its \
                     numbers are those of what survived.",
                    if n == 1 { "" } else { "es" }
                ),
            ),
            None => (
                Severity::Warning,
                format!(
                    "The workload reached the memory limit{limit} {} time{}{peak} \
                     (memory.failcnt). The limit charges the page cache too: the kernel \
                     reclaimed inside the environment and dropped page cache the host would \
                     have kept, so reads went to the device and dirty pages were written back \
                     early. The numbers include that reclaim.",
                    hits.unwrap_or(0),
                    if hits == Some(1) { "" } else { "s" }
                ),
            ),
        };
        Some(Finding {
            id: ID,
            severity,
            evidence: json!({
                "kind": env.kind,
                "memory_limit_bytes": env.memory_limit_bytes,
                "memory_peak_bytes": env.memory_peak_bytes,
                "memory_failcnt": env.memory_failcnt,
                "oom_kills": env.oom_kills,
            }),
            explanation,
            fix: "Raise `environment.memory` above the workload's own memory plus the page \
                  cache it should keep, or state the limit with the numbers as part of the \
                  environment they were measured in."
                .into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{self, ev, GIB, MIB};
    use crate::EnvFacts;

    fn limited(failcnt: u64, oom_kills: u64) -> RunFacts {
        testutil::within(
            testutil::cold_read(),
            EnvFacts {
                memory_limit_bytes: Some(256 * MIB),
                memory_peak_bytes: Some(256 * MIB),
                memory_failcnt: Some(failcnt),
                oom_kills: Some(oom_kills),
                ..testutil::container()
            },
        )
    }

    #[test]
    fn an_oom_kill_is_an_error() {
        let x = MemoryLimit.check(&limited(812, 1)).expect("fires");
        assert_eq!(x.severity, Severity::Error);
        assert_eq!(ev(&x, "oom_kills"), 1);
        assert_eq!(ev(&x, "memory_limit_bytes"), 256 * MIB);
        assert!(
            x.explanation
                .starts_with("The memory limit (256 MiB) killed 1 process of the workload"),
            "{}",
            x.explanation
        );
        assert!(x.fix.contains("environment.memory"));
        let x = MemoryLimit.check(&limited(0, 3)).expect("fires");
        assert!(x.explanation.contains("killed 3 processes"));
    }

    #[test]
    fn reaching_the_limit_is_a_warning_about_reclaim() {
        let x = MemoryLimit.check(&limited(812, 0)).expect("fires");
        assert_eq!(x.severity, Severity::Warning);
        assert_eq!(ev(&x, "memory_failcnt"), 812);
        assert!(
            x.explanation
                .contains("reached the memory limit (256 MiB) 812 times; its peak was 256 MiB"),
            "{}",
            x.explanation
        );
        assert!(x.explanation.contains("the kernel reclaimed inside"));
        assert!(MemoryLimit.check(&limited(1, 0)).is_some());
    }

    #[test]
    fn silent_within_the_limit() {
        assert_eq!(MemoryLimit.check(&limited(0, 0)), None);
        let healthy = testutil::within(testutil::cold_read(), testutil::container());
        assert_eq!(MemoryLimit.check(&healthy), None);
        assert_eq!(MemoryLimit.check(&testutil::cold_read()), None);
    }

    #[test]
    fn unknown_is_undecidable_but_one_known_count_is_enough() {
        let mut f = limited(0, 0);
        let env = f.environment.as_mut().unwrap();
        env.memory_failcnt = None;
        env.oom_kills = None;
        assert_eq!(MemoryLimit.check(&f), None);
        let mut f = limited(5, 0);
        f.environment.as_mut().unwrap().oom_kills = None;
        assert_eq!(
            MemoryLimit.check(&f).map(|x| x.severity),
            Some(Severity::Warning)
        );
        let mut f = limited(0, 2);
        let env = f.environment.as_mut().unwrap();
        env.memory_failcnt = None;
        env.memory_limit_bytes = None;
        env.memory_peak_bytes = Some(GIB);
        let x = MemoryLimit.check(&f).expect("fires");
        assert!(
            x.explanation
                .starts_with("The memory limit killed 2 processes"),
            "{}",
            x.explanation
        );
    }
}
