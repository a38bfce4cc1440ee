//! `cache-fit`: the dataset fits in the memory that could cache it, yet its reads are meant to
//! hit the device.
//!
//! Needs: whether the run reads (`app_read_bytes`, else `access`), `reads_cold`, `o_direct`,
//! `cache_purged_each_pass` (absent: no), `dataset_bytes`, and `mem_total_bytes` and/or
//! `cgroup_cache_limit_bytes`. Judged before running too.
//!
//! Fires (warning) when the run reads, its reads are meant to be cold, they are buffered
//! (with O_DIRECT the cache is bypassed; `direct-not-direct` checks that it was), the
//! workload does not empty the cache before each pass itself (a purge between passes;
//! `cache-served` checks that the device then did the reads), and
//! `dataset ≤ 3 × min(MemTotal, cgroup limit)`. Dropping caches makes only the *first* read of
//! each block cold: a dataset the cache can hold is served from memory from then on (re-reads,
//! `loops`, random reads over a timed run), and the number measures the page cache.

use crate::format::{ratio, size_value};
use crate::{Check, Finding, RunFacts, Severity};
use iolab_util::units::format_bytes;
use serde_json::json;

const ID: &str = "cache-fit";

/// The run rule (docs/checks.md, `cache-fit`): test files of at least three times the memory
/// that could cache them, so that the cache holds at most a third of the data — what it
/// keeps of earlier passes then serves a minor share of the reads.
pub const MIN_DATASET_TO_CACHE: u64 = 3;

/// The smallest page-cache cap iolab-sut accepts (`sut.cache_limit`).
const MIN_CACHE_LIMIT: u64 = 8 << 20;

/// See the [module documentation](self).
pub struct CacheFit;

impl Check for CacheFit {
    fn id(&self) -> &'static str {
        ID
    }

    fn applies_before_run(&self) -> bool {
        true
    }

    fn check(&self, f: &RunFacts) -> Option<Finding> {
        if !f.does_reads()? || !f.reads_cold? || f.o_direct? {
            return None;
        }
        if f.cache_purged_each_pass == Some(true) {
            return None;
        }
        let dataset = f.dataset_bytes?;
        let cache = f.cache_capacity_bytes()?;
        let needed = u128::from(MIN_DATASET_TO_CACHE) * u128::from(cache);
        if u128::from(dataset) > needed {
            return None;
        }
        let needed = u64::try_from(needed).unwrap_or(u64::MAX);
        let by_cgroup = matches!(
            (f.cgroup_cache_limit_bytes, f.mem_total_bytes),
            (Some(c), Some(m)) if c < m
        ) || f.mem_total_bytes.is_none();
        let which = if by_cgroup {
            "the cache cgroup's limit"
        } else {
            "MemTotal"
        };
        let times = ratio(dataset, cache).unwrap_or(f64::INFINITY);
        // Values for the experiment file are written as its size parser accepts them (a
        // whole number with K/M/G/T), rounded so that they pass the rule: exactly 3× fires,
        // so the dataset must exceed `needed` and the cap must stay below dataset ÷ 3.
        let advice = f.dataset_advice.clone().unwrap_or_default();
        let grow = advice
            .grow
            .as_deref()
            .unwrap_or("make the dataset larger than {needed}")
            .replace("{needed}", &format_bytes(needed))
            .replace("{value}", &size_value(needed.saturating_add(1), true));
        // The largest cap under which the dataset is more than 3× the cache, rounded down.
        let cap = dataset.saturating_sub(1) / MIN_DATASET_TO_CACHE;
        let cap_value = (cap >= MIN_CACHE_LIMIT).then(|| size_value(cap, false));
        // In a container or a VM the cap is the environment's memory (`sut.cache_limit`
        // limits iolab's own process and is refused there).
        let setting = match f.environment.as_ref().map(|e| e.kind.as_str()) {
            Some("container") => "environment.memory",
            Some("vm") => "the VM's environment.memory",
            _ => "sut.cache_limit",
        };
        let cap_hint = cap_value
            .as_ref()
            .map(|v| match setting {
                "sut.cache_limit" => {
                    format!(", or cap the page cache with `sut.cache_limit = \"{v}\"` (or less)")
                }
                s => format!(", or lower {s} (the memory that caches the files)"),
            })
            .unwrap_or_default();
        let why = advice.why.as_deref().unwrap_or(
            "Dropping caches makes only the first read of each block cold: after that the page \
             cache can serve the reads, so the number may measure memory rather than the device",
        );
        Some(Finding {
            id: ID,
            severity: Severity::Warning,
            evidence: json!({
                "dataset_bytes": dataset,
                "mem_total_bytes": f.mem_total_bytes,
                "cgroup_cache_limit_bytes": f.cgroup_cache_limit_bytes,
                "cache_bytes": cache,
                "dataset_to_cache": times,
                "min_dataset_to_cache": MIN_DATASET_TO_CACHE,
                "min_dataset_bytes": needed,
                "suggested_cache_limit": cap_value,
            }),
            explanation: format!(
                "The dataset ({}) is {times:.2}× the memory that could cache it ({}, {which}); \
                 the run rule asks for at least {MIN_DATASET_TO_CACHE}× (docs/checks.md). \
                 {why}.",
                format_bytes(dataset),
                format_bytes(cache),
            ),
            fix: format!(
                "{grow}{cap_hint}{}",
                advice
                    .other_fixes
                    .as_deref()
                    .unwrap_or("; or read with O_DIRECT.")
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{self, close, ev, ev_f64, GIB, MIB};
    use crate::Access;

    #[test]
    fn fires_when_a_cold_read_dataset_fits_in_memory() {
        let mut f = testutil::cold_read();
        f.cgroup_cache_limit_bytes = None;
        f.dataset_bytes = Some(2 * GIB); // MemTotal 8 GiB
        let x = CacheFit.check(&f).expect("fires");
        assert_eq!(x.severity, Severity::Warning);
        assert_eq!(ev(&x, "dataset_bytes"), 2 * GIB);
        assert_eq!(ev(&x, "mem_total_bytes"), 8 * GIB);
        assert_eq!(ev(&x, "cache_bytes"), 8 * GIB);
        assert_eq!(ev(&x, "min_dataset_bytes"), 24 * GIB);
        close(ev_f64(&x, "dataset_to_cache"), 0.25);
        assert!(x.explanation.contains("2 GiB") && x.explanation.contains("MemTotal"));
        assert!(
            x.fix.contains("`size` above 24 GiB (`size = \"24577M\"`)"),
            "{}",
            x.fix
        );
        assert!(x.fix.contains("cache_limit = \"682M\""), "{}", x.fix);
        let mut in_vm = f.clone();
        in_vm.environment = Some(crate::EnvFacts {
            kind: "vm".into(),
            ..crate::EnvFacts::default()
        });
        let x = CacheFit.check(&in_vm).expect("fires");
        assert!(!x.fix.contains("sut.cache_limit"), "{}", x.fix);
        assert!(x.fix.contains("environment.memory"), "{}", x.fix);
        assert_eq!(ev(&x, "suggested_cache_limit"), "682M");
    }

    /// `sut.cache_limit`'s own parser: the suggestion must be a value the experiment accepts.
    fn parse_cache_limit(text: &str) -> Option<u64> {
        iolab_sut::size::parse_size(text).ok()
    }

    #[test]
    fn the_suggested_cache_limit_is_one_the_experiment_accepts_and_satisfies_the_rule() {
        assert_eq!(parse_cache_limit("1.6 GiB"), None);
        // The review's case: 4.8 GiB read cold with 8 GiB of memory; 4.8 / 3 = 1.6 GiB.
        for dataset in [
            48 * GIB / 10,
            2 * GIB,
            24 * MIB + 3,
            3 * GIB,
            5 * GIB + 12_345,
        ] {
            let mut f = testutil::cold_read();
            f.cgroup_cache_limit_bytes = None;
            f.dataset_bytes = Some(dataset);
            let x = CacheFit.check(&f).expect("fires");
            let value = ev(&x, "suggested_cache_limit")
                .as_str()
                .unwrap()
                .to_string();
            assert!(x.fix.contains(&format!("cache_limit = \"{value}\"")));
            let limit = parse_cache_limit(&value).unwrap_or_else(|| panic!("{value}"));
            assert!(limit >= MIN_CACHE_LIMIT, "{value}");
            assert!(
                limit * 100 >= dataset / 3 * 99,
                "{value}: within 1% of the most"
            );
            // With that cap the check is satisfied.
            f.cgroup_cache_limit_bytes = Some(limit);
            assert_eq!(CacheFit.check(&f), None, "{value} for {dataset}");
        }
        let mut f = testutil::cold_read();
        f.cgroup_cache_limit_bytes = None;
        f.dataset_bytes = Some(48 * GIB / 10);
        let x = CacheFit.check(&f).expect("fires");
        assert_eq!(ev(&x, "suggested_cache_limit"), "1638M");
        // 3 × 8 GiB fires, so the size suggested is above it (rounded up in MiB), and the
        // check is satisfied with it.
        assert!(x.fix.contains("`size = \"24577M\"`"), "{}", x.fix);
        f.dataset_bytes = Some(24577 * MIB);
        assert_eq!(CacheFit.check(&f), None);
    }

    #[test]
    fn silent_when_the_cgroup_cap_makes_the_dataset_large_enough() {
        // 1 GiB dataset, 256 MiB cap: 4× the cache.
        assert_eq!(CacheFit.check(&testutil::cold_read()), None);
    }

    #[test]
    fn boundary_is_exactly_three_times_the_cache() {
        let mut f = testutil::cold_read();
        f.dataset_bytes = Some(768 * MIB); // 3 × 256 MiB
        let x = CacheFit.check(&f).expect("≤ 3× fires");
        assert!(x.explanation.contains("the cache cgroup's limit"));
        assert_eq!(ev(&x, "cgroup_cache_limit_bytes"), 256 * MIB);
        f.dataset_bytes = Some(768 * MIB + 1);
        assert_eq!(CacheFit.check(&f), None);
    }

    #[test]
    fn silent_for_direct_warm_or_write_only_runs() {
        let small = |f: &mut RunFacts| f.dataset_bytes = Some(64 * MIB);
        let mut f = testutil::cold_read();
        small(&mut f);
        f.o_direct = Some(true);
        assert_eq!(CacheFit.check(&f), None);
        let mut f = testutil::cold_read();
        small(&mut f);
        f.reads_cold = Some(false);
        assert_eq!(CacheFit.check(&f), None);
        let mut f = testutil::sync_write();
        small(&mut f);
        assert_eq!(CacheFit.check(&f), None);
        // A workload that empties the cache before each pass (a purge) reads cold.
        let mut f = testutil::cold_read();
        small(&mut f);
        assert!(CacheFit.check(&f).is_some());
        f.cache_purged_each_pass = Some(false);
        assert!(CacheFit.check(&f).is_some());
        f.cache_purged_each_pass = Some(true);
        assert_eq!(CacheFit.check(&f), None);
    }

    #[test]
    fn unknown_facts_are_undecidable() {
        let mut f = testutil::cold_read();
        f.dataset_bytes = Some(64 * MIB);
        for spoil in [
            |f: &mut RunFacts| f.dataset_bytes = None,
            |f: &mut RunFacts| f.reads_cold = None,
            |f: &mut RunFacts| f.o_direct = None,
            |f: &mut RunFacts| {
                f.mem_total_bytes = None;
                f.cgroup_cache_limit_bytes = None
            },
            |f: &mut RunFacts| {
                f.app_read_bytes = None;
                f.access = None
            },
        ] {
            let mut g = f.clone();
            spoil(&mut g);
            assert_eq!(CacheFit.check(&g), None);
        }
        assert!(CacheFit.check(&f).is_some());
    }

    #[test]
    fn judged_from_a_plan_with_a_wml_fix() {
        let f = RunFacts {
            dataset_advice: Some(crate::DatasetAdvice {
                grow: Some(
                    "grow the filesets beyond {needed} (`size_scale`, or the filesets' \
                     `entries` and `filesize`)"
                        .into(),
                ),
                ..crate::DatasetAdvice::default()
            }),
            access: Some(Access::Mixed),
            reads_cold: Some(true),
            o_direct: Some(false),
            dataset_bytes: Some(4 * MIB),
            cgroup_cache_limit_bytes: Some(64 * MIB),
            ..RunFacts::default()
        };
        let x = CacheFit.check(&f).expect("fires");
        assert!(x.fix.contains("grow the filesets beyond 192 MiB"));
        assert!(!x.fix.contains("cache_limit"), "4 MiB / 3 is below 8 MiB");
        assert!(x.evidence["suggested_cache_limit"].is_null());
        assert!(x.evidence["mem_total_bytes"].is_null());
        assert_eq!(ev(&x, "cache_bytes"), 64 * MIB);
    }
}
