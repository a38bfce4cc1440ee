//! `tcg`: the VM was emulated (qemu TCG), not virtualised.
//!
//! Needs: `environment.vm_accel`. Judged before running too: the accelerator is planned
//! (resolved where the machine is known).
//!
//! Fires (warning) when it is `tcg`. TCG translates every guest instruction in software: the
//! guest's CPU is several times to tens of times slower than the host's, its timers and
//! interrupts too, and how much slower depends on the code it runs, not on the storage. Its
//! numbers say what works — the workload runs, the checks' facts are collected, the
//! durability path holds — not how fast. Only a KVM guest (hardware virtualisation:
//! VT-x/AMD-V) runs at near the host's speed; TCG numbers compare with nothing as
//! performance, host or container.

use crate::{Check, Finding, RunFacts, Severity};
use serde_json::json;

const ID: &str = "tcg";

/// See the [module documentation](self). No threshold: the accelerator decides.
pub struct Tcg;

impl Check for Tcg {
    fn id(&self) -> &'static str {
        ID
    }

    fn applies_before_run(&self) -> bool {
        true
    }

    fn check(&self, f: &RunFacts) -> Option<Finding> {
        let env = f.environment.as_ref()?;
        if env.vm_accel.as_deref()? != "tcg" {
            return None;
        }
        Some(Finding {
            id: ID,
            severity: Severity::Warning,
            evidence: json!({ "kind": env.kind, "vm_accel": "tcg" }),
            explanation: "The VM is emulated (qemu TCG): every guest instruction is translated \
                          in software, so its CPU, timers and interrupts run many times slower \
                          than the host's, by how much depending on the code. Its numbers say \
                          what works, not how fast."
                .into(),
            fix: "Compare VM performance only on KVM (hardware virtualisation, VT-x/AMD-V); \
                  never compare TCG numbers with host or container numbers as performance."
                .into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{self, ev};
    use crate::EnvFacts;

    fn accel(a: Option<&str>) -> RunFacts {
        testutil::within(
            testutil::cold_read(),
            EnvFacts {
                vm_accel: a.map(String::from),
                ..testutil::vm()
            },
        )
    }

    #[test]
    fn fires_for_an_emulated_guest() {
        let x = Tcg.check(&accel(Some("tcg"))).expect("fires");
        assert_eq!(x.severity, Severity::Warning);
        assert_eq!(ev(&x, "vm_accel"), "tcg");
        assert_eq!(ev(&x, "kind"), "vm");
        assert!(x.explanation.contains("not how fast"));
        assert!(x.fix.contains("KVM"));
    }

    #[test]
    fn silent_on_kvm_and_outside_vms() {
        assert_eq!(Tcg.check(&accel(Some("kvm"))), None);
        assert_eq!(
            Tcg.check(&testutil::within(
                testutil::cold_read(),
                testutil::container()
            )),
            None
        );
    }

    #[test]
    fn unknown_is_undecidable() {
        assert_eq!(Tcg.check(&accel(None)), None);
        assert_eq!(Tcg.check(&testutil::cold_read()), None);
    }
}
