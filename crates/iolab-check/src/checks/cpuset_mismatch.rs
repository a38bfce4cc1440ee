//! `cpuset-mismatch`: environments compared with each other ran on different CPUs.
//!
//! Needs: `environment.compared` (the experiment's environments and their CPU sets) and
//! `environment.cpuset`. Judged before running too.
//!
//! Fires (warning) when the experiment compares more than one kind of environment and this
//! run's CPU set differs from another environment's (or one is pinned and another is not).
//! CPU placement alone moved the same fio job from 13.5k to 17.3k IOPS (CPU 0 against CPU 1
//! of the development VM): a difference between environments pinned differently may be the
//! CPUs', not the environments'.

use crate::{Check, Finding, RunFacts, Severity};
use iolab_sys::cpus::format_cpu_list;
use serde_json::json;

const ID: &str = "cpuset-mismatch";

/// See the [module documentation](self).
pub struct CpusetMismatch;

fn words(set: &Option<Vec<u32>>) -> String {
    set.as_deref().map_or_else(
        || "any CPU".into(),
        |s| format!("CPUs {}", format_cpu_list(s)),
    )
}

impl Check for CpusetMismatch {
    fn id(&self) -> &'static str {
        ID
    }

    fn applies_before_run(&self) -> bool {
        true
    }

    fn check(&self, f: &RunFacts) -> Option<Finding> {
        let env = f.environment.as_ref()?;
        let compared = env.compared.as_ref()?;
        let mut kinds: Vec<&str> = compared.iter().map(|(k, _)| k.as_str()).collect();
        kinds.sort_unstable();
        kinds.dedup();
        if kinds.len() < 2 {
            return None;
        }
        let other = compared
            .iter()
            .find(|(k, set)| *set != env.cpuset && *k != env.kind)?;
        Some(Finding {
            id: ID,
            severity: Severity::Warning,
            evidence: json!({
                "kind": env.kind,
                "cpuset": env.cpuset.as_deref().map(format_cpu_list),
                "other_kind": other.0,
                "other_cpuset": other.1.as_deref().map(format_cpu_list),
            }),
            explanation: format!(
                "This {} ran on {}, the {} it is compared with on {}: CPU placement alone can \
                 move a result by a quarter, so a difference between them may be the CPUs'.",
                env.kind,
                words(&env.cpuset),
                other.0,
                words(&other.1),
            ),
            fix: "Give every environment the same `environment.cpuset` (or none: iolab then pins \
                  them all to the same CPUs)."
                .into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::EnvFacts;

    fn facts(
        kind: &str,
        cpuset: Option<Vec<u32>>,
        compared: &[(&str, Option<Vec<u32>>)],
    ) -> RunFacts {
        RunFacts {
            environment: Some(EnvFacts {
                kind: kind.into(),
                cpuset,
                compared: Some(
                    compared
                        .iter()
                        .map(|(k, s)| (k.to_string(), s.clone()))
                        .collect(),
                ),
                ..EnvFacts::default()
            }),
            ..RunFacts::default()
        }
    }

    #[test]
    fn fires_when_environments_ran_on_different_cpus() {
        let f = facts(
            "container",
            Some(vec![1]),
            &[("host", Some(vec![0])), ("container", Some(vec![1]))],
        );
        let x = CpusetMismatch.check(&f).expect("fires");
        assert_eq!(x.severity, Severity::Warning);
        assert_eq!(x.evidence["other_cpuset"], "0");
        assert!(x
            .explanation
            .contains("ran on CPUs 1, the host it is compared with on CPUs 0"));
        let unpinned = facts("vm", None, &[("host", Some(vec![1])), ("vm", None)]);
        assert!(CpusetMismatch.check(&unpinned).is_some());
    }

    #[test]
    fn silent_when_pinned_alike_or_nothing_is_compared() {
        let same = facts(
            "vm",
            Some(vec![1]),
            &[("host", Some(vec![1])), ("vm", Some(vec![1]))],
        );
        assert_eq!(CpusetMismatch.check(&same), None);
        // One kind only: a cpuset factor is the experiment's question, not a mistake.
        let one = facts(
            "host",
            Some(vec![0]),
            &[("host", Some(vec![0])), ("host", Some(vec![1]))],
        );
        assert_eq!(CpusetMismatch.check(&one), None);
        assert_eq!(CpusetMismatch.check(&RunFacts::default()), None);
    }
}
