//! `system-skipped`: the workload's `system` commands were not run.
//!
//! Needs: `skipped_system` (the commands a WML workload asked to run that were skipped:
//! `iolab run --no-system`, `workload.system = false`).
//!
//! Fires (warning) when any was skipped. Workloads use `system` to sync, drop caches, set
//! tunables or start services before or between phases; none of that happened, so the run is
//! not the workload as written. Skipping is right for a file nobody has read (it would run
//! any shell command as iolab's user), and this says so next to the numbers.

use crate::{Check, Finding, RunFacts, Severity};
use serde_json::json;

const ID: &str = "system-skipped";

/// See the [module documentation](self).
pub struct SystemSkipped;

impl Check for SystemSkipped {
    fn id(&self) -> &'static str {
        ID
    }

    fn check(&self, f: &RunFacts) -> Option<Finding> {
        let skipped = f.skipped_system.as_deref().filter(|s| !s.is_empty())?;
        let list = skipped
            .iter()
            .map(|c| format!("`{c}`"))
            .collect::<Vec<_>>()
            .join(", ");
        Some(Finding {
            id: ID,
            severity: Severity::Warning,
            evidence: json!({ "skipped": skipped }),
            explanation: format!(
                "The workload's `system` command{} {list} did not run: whatever {} (sync, drop \
                 caches, set tunables, start services) did not happen, so the run is not the \
                 workload as written.",
                if skipped.len() == 1 { "" } else { "s" },
                if skipped.len() == 1 {
                    "it does"
                } else {
                    "they do"
                },
            ),
            fix: "Read the commands; if they are safe and matter, let them run (drop \
                  `--no-system`, or `workload.system = false`), or do their part yourself \
                  before the run."
                .into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fires_only_when_a_command_was_skipped() {
        let mut f = RunFacts::default();
        assert!(SystemSkipped.check(&f).is_none(), "unknown");
        f.skipped_system = Some(vec![]);
        assert!(SystemSkipped.check(&f).is_none(), "none skipped");
        f.skipped_system = Some(vec![
            "sync".into(),
            "echo 3 > /proc/sys/vm/drop_caches".into(),
        ]);
        let found = SystemSkipped.check(&f).unwrap();
        assert_eq!(found.severity, Severity::Warning);
        assert!(
            found.explanation.contains("`sync`, `echo 3"),
            "{}",
            found.explanation
        );
        assert_eq!(found.evidence["skipped"][0], "sync");
    }
}
