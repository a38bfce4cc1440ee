//! `slow-clocksource`: the workload's kernel reads time from a slow clock source.
//!
//! Needs: `environment.clocksource` (the current clock source of the kernel the workload
//! ran on — the guest's in a VM); `environment.available_clocksources` for the fix.
//!
//! Fires (warning) when the clock source is not one of [`FAST_CLOCKSOURCES`]. Those are read
//! in user space through the vDSO in a few nanoseconds; any other (hpet, acpi_pm, jiffies,
//! xen, …) makes every `clock_gettime` a system call or a slow device read. A benchmark
//! reads the clock around every operation, so its latencies include that read and its rates
//! drop with it: in seed report 003 a slow clock source made time reads 5× slower than tsc. A VM
//! often boots on such a source when the host's TSC is not trusted, so host and guest
//! numbers then differ by the clock, not the storage.

use crate::{Check, Finding, RunFacts, Severity};
use serde_json::json;

const ID: &str = "slow-clocksource";

/// Clock sources read through the vDSO without a system call: the TSC, and the
/// paravirtual or architectural counters built on it or on the ARM generic timer.
pub const FAST_CLOCKSOURCES: [&str; 4] = [
    "tsc",
    "kvm-clock",
    "arch_sys_counter",
    "hyperv_clocksource_tsc_page",
];

/// See the [module documentation](self).
pub struct SlowClocksource;

impl Check for SlowClocksource {
    fn id(&self) -> &'static str {
        ID
    }

    fn check(&self, f: &RunFacts) -> Option<Finding> {
        let env = f.environment.as_ref()?;
        let current = env.clocksource.as_deref().filter(|c| !c.is_empty())?;
        if FAST_CLOCKSOURCES.contains(&current) {
            return None;
        }
        let available = env.available_clocksources.as_deref();
        let fast: Vec<&str> = available
            .unwrap_or_default()
            .iter()
            .map(String::as_str)
            .filter(|c| FAST_CLOCKSOURCES.contains(c))
            .collect();
        let fix = match fast.first() {
            Some(c) => format!(
                "Switch to {c}, which this kernel offers: `echo {c} > \
                 /sys/devices/system/clocksource/clocksource0/current_clocksource`{}.",
                if env.kind == "vm" {
                    " in the guest"
                } else {
                    ""
                }
            ),
            None => format!(
                "Switch to tsc where available \
                 (`/sys/devices/system/clocksource/clocksource0/current_clocksource`){}; \
                 otherwise compare only with runs on the same clock source.",
                match available {
                    Some(_) =>
                        ": this kernel offers no fast one (an unstable TSC; in a VM, \
                                give the guest kvm-clock or an invariant TSC)",
                    None => "",
                }
            ),
        };
        Some(Finding {
            id: ID,
            severity: Severity::Warning,
            evidence: json!({
                "kind": env.kind,
                "clocksource": current,
                "available_clocksources": available,
                "fast_clocksources": FAST_CLOCKSOURCES,
            }),
            explanation: format!(
                "The workload's kernel reads time from `{current}`, which has no fast \
                 user-space read: every timestamp is a system call or a slow device read. \
                 The latency figures include it (a slow source made time reads 5× slower \
                 than tsc in seed report 003), so they compare only with runs on the same clock source."
            ),
            fix,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{self, ev};
    use crate::EnvFacts;

    fn clocked(current: Option<&str>, available: Option<&[&str]>) -> RunFacts {
        testutil::within(
            testutil::cold_read(),
            EnvFacts {
                clocksource: current.map(String::from),
                available_clocksources: available
                    .map(|a| a.iter().map(|s| s.to_string()).collect()),
                ..testutil::vm()
            },
        )
    }

    #[test]
    fn fires_for_a_slow_source_and_offers_the_fast_one() {
        let x = SlowClocksource
            .check(&clocked(Some("hpet"), Some(&["hpet", "acpi_pm", "tsc"])))
            .expect("fires");
        assert_eq!(x.severity, Severity::Warning);
        assert_eq!(ev(&x, "clocksource"), "hpet");
        assert_eq!(ev(&x, "available_clocksources")[2], "tsc");
        assert!(x.explanation.contains("`hpet`"), "{}", x.explanation);
        assert!(
            x.fix
                .starts_with("Switch to tsc, which this kernel offers: `echo tsc >"),
            "{}",
            x.fix
        );
        assert!(x.fix.ends_with("in the guest."), "{}", x.fix);
    }

    #[test]
    fn says_so_when_no_fast_source_is_offered() {
        for current in ["acpi_pm", "jiffies"] {
            let x = SlowClocksource
                .check(&clocked(Some(current), Some(&["hpet", "acpi_pm"])))
                .expect("fires");
            assert!(x.fix.contains("offers no fast one"), "{}", x.fix);
        }
        let x = SlowClocksource
            .check(&clocked(Some("hpet"), None))
            .expect("fires");
        assert!(
            x.fix.starts_with("Switch to tsc where available"),
            "{}",
            x.fix
        );
        assert!(!x.fix.contains("offers"), "{}", x.fix);
    }

    #[test]
    fn silent_on_the_fast_sources() {
        for c in FAST_CLOCKSOURCES {
            assert_eq!(SlowClocksource.check(&clocked(Some(c), None)), None, "{c}");
        }
        assert_eq!(
            SlowClocksource.check(&testutil::within(
                testutil::cold_read(),
                testutil::container()
            )),
            None
        );
    }

    #[test]
    fn unknown_is_undecidable() {
        assert_eq!(SlowClocksource.check(&clocked(None, Some(&["hpet"]))), None);
        assert_eq!(SlowClocksource.check(&clocked(Some(""), None)), None);
        assert_eq!(SlowClocksource.check(&testutil::cold_read()), None);
    }
}
