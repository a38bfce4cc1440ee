//! Checks ("findings") that say when a measurement is not what it seems: pure logic over
//! facts the runner collected, no I/O, no printing.
//!
//! iolab practises active benchmarking (docs/checks.md): the
//! engine's byte and operation counts are set against what the kernel saw — diskstats, the
//! block tracer, /proc — and every gap that changes what a number means becomes a
//! [`Finding`]: an id, a [`Severity`], the evidence (numbers, as JSON), an explanation and a
//! fix, like a linter's diagnostic. `docs/checks.md` lists every check with its thresholds.
//!
//! * [`RunFacts`] holds what is known after a run; every field is optional and a check that
//!   needs an unknown fact returns `None` — it never guesses.
//! * [`run_checks`] runs every check of [`all`] on a run's facts.
//! * [`pre_run_checks`] runs the checks that can be judged from the plan alone
//!   ([`Check::applies_before_run`]) on [`PlanFacts`] — what `iolab check EXPERIMENT.toml`
//!   reports before anything runs.
//! * `did-not-converge` is about a configuration ([`Check::config_level`]): it looks only at
//!   [`RunFacts::stopping`], which the runner sets once a configuration's repetitions end.
//!
//! ```
//! use iolab_check::{run_checks, Access, DeviceFacts, RunFacts};
//!
//! // A "cold" 1 GiB read for which the device read 64 MiB: the page cache served it.
//! let facts = RunFacts {
//!     access: Some(Access::Read),
//!     reads_cold: Some(true),
//!     o_direct: Some(false),
//!     app_read_bytes: Some(1 << 30),
//!     device: DeviceFacts { read_bytes: Some(64 << 20), ..DeviceFacts::default() },
//!     ..RunFacts::default()
//! };
//! let findings = run_checks(&facts);
//! assert_eq!(findings.len(), 1);
//! assert_eq!(findings[0].id, "cache-served");
//! assert_eq!(findings[0].evidence["device_read_bytes"], 64 << 20);
//! ```

pub mod checks;
mod facts;
mod finding;
mod format;

#[cfg(test)]
mod testutil;

pub use facts::{
    full_intervals, Access, CacheDropFacts, DatasetAdvice, DeviceFacts, EnvFacts, FlowopCount,
    PlanFacts, RankFacts, RunFacts, StoppingOutcome, SyncScope, TimedPass, UntimedFlush,
    FULL_INTERVAL_SLACK_DIVISOR,
};
pub use finding::{Finding, Severity};

/// One check: one file in `src/checks/`, one entry in `docs/checks.md`.
pub trait Check: Send + Sync {
    /// The id findings carry, e.g. `cache-fit`.
    fn id(&self) -> &'static str;

    /// The check can be judged from [`PlanFacts`] (turned into [`RunFacts`] with
    /// [`PlanFacts::to_run_facts`]) before running.
    fn applies_before_run(&self) -> bool {
        false
    }

    /// The finding is about a whole configuration, not one run (store it with the
    /// configuration).
    fn config_level(&self) -> bool {
        false
    }

    /// The finding, or `None` when the facts are fine or the facts the check needs are
    /// unknown.
    fn check(&self, facts: &RunFacts) -> Option<Finding>;
}

/// Every check, in the order of `docs/checks.md`.
pub fn all() -> Vec<Box<dyn Check>> {
    checks::all()
}

/// The findings about one run (and, when [`RunFacts::stopping`] is set, its configuration),
/// in the order of [`all`].
pub fn run_checks(facts: &RunFacts) -> Vec<Finding> {
    all().iter().filter_map(|c| c.check(facts)).collect()
}

/// The findings that can be made before running, from the plan alone.
pub fn pre_run_checks(facts: &PlanFacts) -> Vec<Finding> {
    let facts = facts.to_run_facts();
    all()
        .iter()
        .filter(|c| c.applies_before_run())
        .filter_map(|c| c.check(&facts))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil;
    use std::collections::BTreeSet;

    fn doc() -> String {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/checks.md");
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    /// The first cell of each row of the table under `## Checks`, e.g. `cache-fit`.
    fn doc_table_ids(doc: &str) -> Vec<String> {
        let table = doc
            .split("\n## Checks\n")
            .nth(1)
            .expect("a `## Checks` section")
            .split("\n## ")
            .next()
            .unwrap();
        let rows: Vec<&str> = table
            .lines()
            .filter(|l| l.starts_with('|'))
            .skip(2) // header and separator
            .collect();
        assert!(!rows.is_empty(), "the check table has no rows");
        rows.iter()
            .map(|row| {
                let cells: Vec<&str> = row.split('|').map(str::trim).collect();
                assert_eq!(cells.len(), 8, "6 columns expected in {row:?}");
                cells[1].trim_matches('`').to_string()
            })
            .collect()
    }

    /// The `- `id`` bullets of the `## Before running` section.
    fn doc_pre_run_ids(doc: &str) -> BTreeSet<String> {
        let section = doc
            .split("\n## Before running\n")
            .nth(1)
            .expect("a `## Before running` section")
            .split("\n## ")
            .next()
            .unwrap();
        section
            .lines()
            .filter_map(|l| l.strip_prefix("- `"))
            .map(|l| l.split('`').next().unwrap().to_string())
            .collect()
    }

    #[test]
    fn ids_are_unique_and_match_the_doc_table_in_order() {
        let ids: Vec<&str> = all().iter().map(|c| c.id()).collect();
        let unique: BTreeSet<&str> = ids.iter().copied().collect();
        assert_eq!(unique.len(), ids.len(), "duplicate ids in {ids:?}");
        let doc = doc();
        assert_eq!(doc_table_ids(&doc), ids);
        for id in ids {
            assert!(
                doc.contains(&format!("\n### `{id}`\n")),
                "docs/checks.md has no section for {id}"
            );
        }
    }

    #[test]
    fn doc_lists_exactly_the_pre_run_checks() {
        let pre: BTreeSet<String> = all()
            .iter()
            .filter(|c| c.applies_before_run())
            .map(|c| c.id().to_string())
            .collect();
        assert_eq!(
            pre,
            [
                "cache-fit",
                "sync-not-durable",
                "short-run",
                "loop-cached",
                "throttle-bypassed",
                "cache-cap-memory",
                "vm-cache-mode",
                "tcg",
                "cpuset-mismatch"
            ]
            .map(String::from)
            .into()
        );
        assert_eq!(doc_pre_run_ids(&doc()), pre);
    }

    #[test]
    fn only_the_stopping_rule_checks_are_config_level() {
        let config: Vec<&str> = all()
            .iter()
            .filter(|c| c.config_level())
            .map(|c| c.id())
            .collect();
        assert_eq!(config, ["did-not-converge", "too-few-runs"]);
    }

    #[test]
    fn nothing_known_means_nothing_found() {
        assert!(run_checks(&RunFacts::default()).is_empty());
        assert!(pre_run_checks(&PlanFacts::default()).is_empty());
    }

    #[test]
    fn healthy_runs_have_no_findings() {
        for facts in [testutil::cold_read(), testutil::sync_write()] {
            assert_eq!(run_checks(&facts), vec![], "{facts:#?}");
        }
    }

    #[test]
    fn healthy_runs_in_a_container_or_a_vm_have_no_findings() {
        for env in [testutil::container(), testutil::vm()] {
            for facts in [testutil::cold_read(), testutil::sync_write()] {
                let facts = testutil::within(facts, env.clone());
                assert_eq!(run_checks(&facts), vec![], "{facts:#?}");
            }
        }
    }

    #[test]
    fn the_plan_s_environment_is_judged_before_running() {
        let plan = PlanFacts {
            access: Some(Access::Write),
            sync_requested: Some(true),
            sync_scope: Some(SyncScope::EachWrite),
            environment: Some(EnvFacts {
                vm_cache: Some("unsafe".into()),
                vm_accel: Some("tcg".into()),
                // Measured facts in a plan are not judged before running.
                clocksource: Some("hpet".into()),
                memory_failcnt: Some(3),
                ..testutil::vm()
            }),
            ..PlanFacts::default()
        };
        let found = pre_run_checks(&plan);
        let ids: Vec<&str> = found.iter().map(|x| x.id).collect();
        assert_eq!(ids, ["vm-cache-mode", "tcg"]);
        assert_eq!(found[0].severity, Severity::Error);
    }

    #[test]
    fn a_cached_run_on_a_buffered_loop_shows_each_problem_once() {
        let mut f = testutil::cold_read();
        f.dataset_bytes = Some(512 << 20);
        f.cgroup_cache_limit_bytes = None; // 8 GiB MemTotal caches it
        f.device.read_bytes = Some(3 << 20);
        f.device.util_avg_pct = Some(1.2);
        f.device.util_series_pct = None;
        f.device.loop_direct_io = Some(false);
        let ids: Vec<&str> = run_checks(&f).iter().map(|x| x.id).collect();
        assert_eq!(
            ids,
            ["cache-fit", "cache-served", "device-idle", "loop-cached"]
        );
    }

    #[test]
    fn config_facts_give_only_the_config_finding() {
        let f = RunFacts {
            stopping: Some(StoppingOutcome {
                converged: false,
                runs: 20,
                rel_half_width: Some(0.081),
                target: Some(0.05),
                metric: Some("ops_per_s".into()),
                min_runs: None,
            }),
            ..RunFacts::default()
        };
        let ids: Vec<&str> = run_checks(&f).iter().map(|x| x.id).collect();
        assert_eq!(ids, ["did-not-converge"]);
    }

    #[test]
    fn pre_run_checks_judge_the_plan() {
        let plan = PlanFacts {
            dataset_advice: None,
            access: Some(Access::Write),
            reads_cold: Some(true),
            o_direct: Some(false),
            sync_requested: Some(false),
            dataset_bytes: Some(64 << 20),
            mem_total_bytes: Some(8 << 30),
            duration_ns: Some(10_000_000_000),
            interval_ns: Some(1_000_000_000),
            dirty_expire_centisecs: Some(3000),
            dirty_writeback_centisecs: Some(500),
            fs_type: Some("ext4".into()),
            device_name: Some("loop0".into()),
            is_loop: Some(true),
            loop_direct_io: Some(false),
            ..PlanFacts::default()
        };
        let ids: Vec<&str> = pre_run_checks(&plan).iter().map(|x| x.id).collect();
        // A write run: cache-fit needs reads. 10 s < 30 s expire: short-run.
        assert_eq!(ids, ["short-run", "loop-cached"]);

        let read_plan = PlanFacts {
            access: Some(Access::Read),
            duration_ns: Some(60_000_000_000),
            loop_direct_io: Some(true),
            ..plan.clone()
        };
        let ids: Vec<&str> = pre_run_checks(&read_plan).iter().map(|x| x.id).collect();
        assert_eq!(ids, ["cache-fit"]);

        // fsync per record on tmpfs: nothing can be durable. A sync only at the end of the
        // pass (a buffered single-pattern test) on tmpfs is a buffered run, as asked.
        let tmpfs_plan = PlanFacts {
            sync_requested: Some(true),
            sync_scope: Some(SyncScope::EachWrite),
            duration_ns: Some(60_000_000_000),
            dirty_expire_centisecs: Some(3000),
            fs_type: Some("tmpfs".into()),
            device_name: None,
            is_loop: Some(false),
            loop_direct_io: None,
            ..plan
        };
        let found = pre_run_checks(&tmpfs_plan);
        let ids: Vec<&str> = found.iter().map(|x| x.id).collect();
        assert_eq!(ids, ["sync-not-durable"]);
        assert_eq!(found[0].severity, Severity::Error);
        let normal = PlanFacts {
            sync_scope: Some(SyncScope::EndOfPass),
            ..tmpfs_plan
        };
        assert_eq!(pre_run_checks(&normal), vec![]);
    }

    #[test]
    fn findings_serialize_with_their_evidence() {
        let mut f = testutil::cold_read();
        f.device.read_bytes = Some(0);
        let finding = run_checks(&f)
            .into_iter()
            .find(|x| x.id == "cache-served")
            .unwrap();
        let v = serde_json::to_value(&finding).unwrap();
        assert_eq!(v["id"], "cache-served");
        assert_eq!(v["severity"], "warning");
        assert_eq!(v["evidence"]["device_read_bytes"], 0);
        assert!(v["explanation"].as_str().unwrap().contains("0 B"));
    }
}
