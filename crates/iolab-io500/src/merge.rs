//! The run's phases and scores from every rank's record: each phase's rate as IOR and mdtest
//! define it (all ranks' work over the first rank's start to the last rank's end; every
//! rank's phase clock starts at the release of the phase's barrier, so the times line up),
//! then IO500's scores from those rates, and whether the run keeps IO500's rules.

use std::time::Duration;

use iolab_kind::record::metric;
use iolab_store::{Metric, RunRecord};

use crate::options::IO500_STONEWALL;
use crate::phases::{Group, Step, METRICS, PHASES};

const GIB: f64 = (1u64 << 30) as f64;

fn value(r: &RunRecord, name: &str) -> Option<f64> {
    r.metrics.iter().find(|m| m.name == name).map(|m| m.value)
}

/// IO500's score of a group: the geometric mean of its phases' scores, those not above 0
/// left out (as IO500 leaves out a phase that did not run); 0 when none is left.
pub fn geometric_mean(scores: impl IntoIterator<Item = f64>) -> f64 {
    let (mut log_sum, mut n) = (0.0, 0u32);
    for s in scores {
        if s > 0.0 && s.is_finite() {
            log_sum += s.ln();
            n += 1;
        }
    }
    if n == 0 {
        0.0
    } else {
        (log_sum / f64::from(n)).exp()
    }
}

/// Every phase's merged figures and the scores, from the ranks' records (rank order); a
/// phase not every rank recorded is left out.
pub fn phases_and_scores(records: &[RunRecord], stonewall: Duration) -> Vec<Metric> {
    let mut out = Vec::new();
    for p in &PHASES {
        let get = |r: &RunRecord, n: &str| value(r, &format!("{}.{n}", p.key));
        let ranks: Vec<(f64, f64, f64)> = records
            .iter()
            .filter_map(|r| Some((get(r, "start_s")?, get(r, "end_s")?, get(r, p.work())?)))
            .collect();
        if ranks.is_empty() || ranks.len() != records.len() {
            continue;
        }
        let start = ranks.iter().map(|r| r.0).fold(f64::INFINITY, f64::min);
        let end = ranks.iter().map(|r| r.1).fold(f64::NEG_INFINITY, f64::max);
        let work: f64 = ranks.iter().map(|r| r.2).sum();
        let wall = end - start;
        let per = match p.group {
            Group::Bandwidth => GIB,
            Group::Metadata => 1000.0,
        };
        let rate = if wall > 0.0 {
            work / per / wall
        } else {
            f64::NAN
        };
        let sum = |n: &str| records.iter().filter_map(|r| get(r, n)).sum::<f64>();
        let mut named = vec![
            (p.work(), work),
            (p.rate(), rate),
            ("start_s", start),
            ("end_s", end),
            ("elapsed_s", wall),
        ];
        match (p.group, p.step) {
            (Group::Bandwidth, Step::Ior(_, a)) => {
                named.push(("ops", sum("ops")));
                if a == iolab_ior::Access::Read {
                    named.push(("stamp_errors", sum("stamp_errors")));
                }
            }
            (_, Step::Find) => named.push(("found", sum("found"))),
            _ => {}
        }
        out.extend(
            named
                .into_iter()
                .map(|(n, v)| metric(&METRICS, &format!("{}.{n}", p.key), v)),
        );
    }
    let got = |name: &str| {
        out.iter()
            .find(|m| m.name == name)
            .map_or(f64::NAN, |m| m.value)
    };
    let group = |g: Group| {
        geometric_mean(
            PHASES
                .iter()
                .filter(|p| p.group == g)
                .map(|p| got(&format!("{}.{}", p.key, p.rate()))),
        )
    };
    let (bw, md) = (group(Group::Bandwidth), group(Group::Metadata));
    let valid = invalid(stonewall, &got).is_empty();
    out.extend([
        metric(&METRICS, "io500.score", (bw * md).sqrt()),
        metric(&METRICS, "io500.bw_gib_per_s", bw),
        metric(&METRICS, "io500.md_kiops", md),
        metric(&METRICS, "io500.valid", if valid { 1.0 } else { 0.0 }),
    ]);
    out
}

/// Why a run with `stonewall` whose merged metrics `get` gives is not a valid IO500 result
/// (empty: it is), in IO500's words where it has them.
pub fn invalid(stonewall: Duration, get: &dyn Fn(&str) -> f64) -> Vec<String> {
    let mut why = Vec::new();
    if stonewall < IO500_STONEWALL {
        why.push(format!(
            "the stonewall is {}, shorter than IO500's {} s",
            iolab_util::units::duration_text(stonewall),
            IO500_STONEWALL.as_secs()
        ));
    }
    for p in &PHASES {
        let m = |n: &str| get(&format!("{}.{n}", p.key));
        let elapsed = m("elapsed_s");
        if elapsed.is_nan() {
            why.push(format!("{} did not run", p.name));
            continue;
        }
        if p.write && elapsed < stonewall.as_secs_f64() {
            why.push(format!(
                "{} needed {elapsed:.3} s instead of the stonewall's {}: it ran out of work \
                 first (give a larger `scale`)",
                p.name,
                iolab_util::units::duration_text(stonewall)
            ));
        }
        if m("stamp_errors") > 0.0 {
            why.push(format!(
                "{} read {} transfers of data the write phase did not stamp",
                p.name,
                m("stamp_errors")
            ));
        }
        if matches!(p.step, Step::Find) && m("found") == 0.0 {
            why.push("find found nothing".into());
        }
    }
    why
}

/// The run as a whole from every rank's record: [`phases_and_scores`] and the common
/// counts and rates over the phases' time.
pub fn merge(records: &[RunRecord], stonewall: Duration) -> Vec<Metric> {
    let mut out = phases_and_scores(records, stonewall);
    let got = |name: String| out.iter().find(|m| m.name == name).map_or(0.0, |m| m.value);
    let (mut bytes, mut ops, mut elapsed) = (0.0, 0.0, 0.0);
    for p in &PHASES {
        let m = |n: &str| got(format!("{}.{n}", p.key));
        match p.group {
            Group::Bandwidth => {
                bytes += m("bytes");
                ops += m("ops");
            }
            Group::Metadata => ops += m("items"),
        }
        elapsed += m("elapsed_s");
    }
    let common = iolab_metrics::COMMON;
    let rate = |x: f64| if elapsed > 0.0 { x / elapsed } else { f64::NAN };
    out.extend([
        metric(common, "bytes", bytes),
        metric(common, "ops", ops),
        metric(common, "elapsed_s", elapsed),
        metric(common, "mib_per_s", rate(bytes) / 1048576.0),
        metric(common, "ops_per_s", rate(ops)),
    ]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_are_io500s_geometric_means() {
        assert!((geometric_mean([2.0, 8.0]) - 4.0).abs() < 1e-12);
        // A phase that scored 0 (did not run) is left out, as IO500 leaves it out.
        assert!((geometric_mean([2.0, 0.0, 8.0]) - 4.0).abs() < 1e-12);
        assert_eq!(geometric_mean([0.0, f64::NAN]), 0.0);
    }

    fn rank(f: impl Fn(&str) -> Option<(f64, f64, f64)>) -> RunRecord {
        let mut r = iolab_kind::record::testing::record();
        for p in &PHASES {
            if let Some((start, end, work)) = f(p.key) {
                for (n, v) in [("start_s", start), ("end_s", end), (p.work(), work)] {
                    r.metrics
                        .push(metric(&METRICS, &format!("{}.{n}", p.key), v));
                }
            }
        }
        r.metrics.push(metric(&METRICS, "find.found", 1.0));
        r
    }

    #[test]
    fn a_phases_rate_is_all_work_over_first_start_to_last_end() {
        // Two ranks: each bandwidth phase 1 GiB per rank, rank 0 over 0..1 s and rank 1
        // over 0.5..2 s; each metadata phase 1000 items per rank over 0..0.5 s and 0..1 s.
        let gib = GIB;
        let recs = [
            rank(|k| {
                Some(if k.starts_with("ior") {
                    (0.0, 1.0, gib)
                } else {
                    (0.0, 0.5, 1000.0)
                })
            }),
            rank(|k| {
                Some(if k.starts_with("ior") {
                    (0.5, 2.0, gib)
                } else {
                    (0.0, 1.0, 1000.0)
                })
            }),
        ];
        let m = phases_and_scores(&recs, IO500_STONEWALL);
        let get = |n: &str| m.iter().find(|x| x.name == n).map_or(f64::NAN, |x| x.value);
        assert_eq!(get("ior_easy_write.gib_per_s"), 1.0);
        assert_eq!(get("ior_easy_write.elapsed_s"), 2.0);
        assert_eq!(get("mdtest_hard_stat.kiops"), 2.0);
        assert_eq!(get("io500.bw_gib_per_s"), 1.0);
        assert!((get("io500.md_kiops") - 2.0).abs() < 1e-12);
        assert!((get("io500.score") - 2f64.sqrt()).abs() < 1e-12);
        // The writes ended long before 300 s: not a valid IO500 result.
        assert_eq!(get("io500.valid"), 0.0);
        let why = invalid(Duration::from_millis(1500), &get);
        assert!(
            why.iter().any(|w| w.contains("shorter than IO500's 300 s")),
            "{why:?}"
        );
        assert!(
            why.iter()
                .any(|w| w.starts_with("mdtest-easy-write needed")),
            "{why:?}"
        );
        assert!(
            !why.iter().any(|w| w.starts_with("ior-easy-write")),
            "2 s ≥ 1.5 s: {why:?}"
        );
    }

    #[test]
    fn a_phase_one_rank_lacks_is_left_out() {
        let recs = [
            rank(|_| Some((0.0, 1.0, 1.0))),
            rank(|k| (k != "find").then_some((0.0, 1.0, 1.0))),
        ];
        let m = phases_and_scores(&recs, IO500_STONEWALL);
        assert!(!m.iter().any(|x| x.name == "find.kiops"));
        let get = |n: &str| m.iter().find(|x| x.name == n).map_or(f64::NAN, |x| x.value);
        assert!(invalid(IO500_STONEWALL, &get).contains(&"find did not run".to_string()));
    }
}
