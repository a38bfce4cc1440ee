//! `hosts-differ`: under MPI, the ranks' hosts run different kernels or clock sources.
//!
//! Needs: `ranks` with at least two ranks, their hosts, and each host's kernel release or
//! clock source. An unknown value (`None`, empty) is left out: only values known to differ
//! count.
//!
//! Fires (warning) when the known kernel releases differ: the page cache, filesystems and
//! block layer change between releases, so the aggregate mixes systems and a rank's rate
//! says also which kernel it ran on. Fires (info) when only the clock sources differ: every
//! timestamp costs what its source costs (see `slow-clocksource`), so per-rank latencies
//! compare only between ranks on the same source, while the rates still mean what they say.

use super::{rank_list, ranks};
use crate::{Check, Finding, RunFacts, Severity};
use serde_json::{json, Value};

const ID: &str = "hosts-differ";

/// Hosts named per value in the explanation (the evidence lists them all).
const HOSTS_NAMED: usize = 4;

/// See the [module documentation](self).
pub struct HostsDiffer;

/// One value and the ranks and hosts that have it.
struct Group<'a> {
    value: &'a str,
    ranks: Vec<usize>,
    hosts: Vec<&'a str>,
}

/// The ranks grouped by their known `values` (in order of first appearance).
fn groups<'a>(hosts: &'a [String], values: &'a [Option<String>]) -> Vec<Group<'a>> {
    let mut out: Vec<Group<'a>> = Vec::new();
    for (rank, (host, value)) in hosts.iter().zip(values).enumerate() {
        let Some(value) = value.as_deref().filter(|v| !v.is_empty()) else {
            continue;
        };
        let i = match out.iter().position(|g| g.value == value) {
            Some(i) => i,
            None => {
                out.push(Group {
                    value,
                    ranks: Vec::new(),
                    hosts: Vec::new(),
                });
                out.len() - 1
            }
        };
        out[i].ranks.push(rank);
        if !out[i].hosts.contains(&host.as_str()) {
            out[i].hosts.push(host);
        }
    }
    out
}

/// `` `6.1.0` on n2, n3 (ranks 2-5)`` for each group.
fn words(groups: &[Group]) -> String {
    groups
        .iter()
        .map(|g| {
            let mut hosts: Vec<&str> = g.hosts.iter().copied().take(HOSTS_NAMED).collect();
            if g.hosts.len() > HOSTS_NAMED {
                hosts.push("…");
            }
            format!(
                "`{}` on {} ({})",
                g.value,
                hosts.join(", "),
                rank_list(g.ranks.iter().copied())
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn evidence(groups: &[Group]) -> Value {
    groups
        .iter()
        .map(|g| json!({"value": g.value, "ranks": g.ranks, "hosts": g.hosts}))
        .collect()
}

impl Check for HostsDiffer {
    fn id(&self) -> &'static str {
        ID
    }

    fn check(&self, f: &RunFacts) -> Option<Finding> {
        let r = ranks(f)?;
        let kernels = groups(&r.hosts, &r.kernels);
        let clocks = groups(&r.hosts, &r.clocksources);
        let kernels_differ = kernels.len() > 1;
        let clocks_differ = clocks.len() > 1;
        let mut sentences = Vec::new();
        if kernels_differ {
            sentences.push(format!(
                "The ranks ran on different kernel releases: {}. The page cache, filesystems \
                 and block layer change between releases, so the aggregate mixes systems and \
                 each rank's rate says also which kernel it ran on.",
                words(&kernels)
            ));
        }
        if clocks_differ {
            sentences.push(format!(
                "The ranks' hosts read time from different clock sources: {}. Each timestamp \
                 costs what its source costs, so per-rank latencies compare only between \
                 ranks on the same source.",
                words(&clocks)
            ));
        }
        if sentences.is_empty() {
            return None;
        }
        Some(Finding {
            id: ID,
            severity: if kernels_differ {
                Severity::Warning
            } else {
                Severity::Info
            },
            evidence: json!({
                "ranks": r.hosts.len(),
                "kernels_differ": kernels_differ,
                "clocksources_differ": clocks_differ,
                "kernels": evidence(&kernels),
                "clocksources": evidence(&clocks),
            }),
            explanation: sentences.join(" "),
            fix: if kernels_differ {
                "Run the ranks on hosts with the same kernel release (and clock source), or \
                 compare only results of the same set of hosts."
                    .into()
            } else {
                "Give every host the same clock source (tsc where offered: \
                 `/sys/devices/system/clocksource/clocksource0/current_clocksource`), or \
                 compare latencies only between ranks on the same source."
                    .into()
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::ranked;
    use crate::testutil::ev;

    fn hosts(names: &[&str], kernels: &[Option<&str>], clocks: &[Option<&str>]) -> RunFacts {
        let mut f = ranked(names, &[]);
        let r = f.ranks.as_mut().unwrap();
        r.kernels = kernels.iter().map(|k| k.map(String::from)).collect();
        r.clocksources = clocks.iter().map(|c| c.map(String::from)).collect();
        f
    }

    #[test]
    fn a_kernel_mismatch_names_the_ranks_and_hosts() {
        let f = hosts(
            &["n1", "n1", "n2", "n3", "n3"],
            &[
                Some("5.15.0"),
                Some("5.15.0"),
                Some("6.1.0"),
                Some("6.1.0"),
                None,
            ],
            &[Some("tsc"); 5],
        );
        let x = HostsDiffer.check(&f).expect("fires");
        assert_eq!(x.severity, Severity::Warning);
        assert_eq!(ev(&x, "kernels_differ"), true);
        assert_eq!(ev(&x, "clocksources_differ"), false);
        assert_eq!(ev(&x, "kernels")[1]["ranks"], json!([2, 3]));
        assert_eq!(ev(&x, "kernels")[1]["hosts"], json!(["n2", "n3"]));
        assert!(
            x.explanation.contains(
                "different kernel releases: `5.15.0` on n1 (ranks 0-1), `6.1.0` on n2, n3 \
                 (ranks 2-3)."
            ),
            "{}",
            x.explanation
        );
        assert!(!x.explanation.contains("clock sources"));
        assert!(x.fix.contains("same kernel release"));
    }

    #[test]
    fn a_clocksource_mismatch_alone_is_info() {
        let f = hosts(
            &["n1", "n2"],
            &[Some("6.1.0"), Some("6.1.0")],
            &[Some("tsc"), Some("hpet")],
        );
        let x = HostsDiffer.check(&f).expect("fires");
        assert_eq!(x.severity, Severity::Info);
        assert!(
            x.explanation
                .contains("different clock sources: `tsc` on n1 (rank 0), `hpet` on n2 (rank 1)."),
            "{}",
            x.explanation
        );
        assert!(x.fix.starts_with("Give every host the same clock source"));
        // Both differ: a warning that says both.
        let f = hosts(
            &["n1", "n2"],
            &[Some("6.1.0"), Some("6.8.0")],
            &[Some("tsc"), Some("hpet")],
        );
        let x = HostsDiffer.check(&f).expect("fires");
        assert_eq!(x.severity, Severity::Warning);
        assert!(x.explanation.contains("kernel releases"));
        assert!(x.explanation.contains("clock sources"));
    }

    #[test]
    fn silent_when_alike_or_unknown() {
        let same = hosts(
            &["n1", "n2"],
            &[Some("6.1.0"), Some("6.1.0")],
            &[Some("tsc"), Some("tsc")],
        );
        assert_eq!(HostsDiffer.check(&same), None);
        // Unknown is no difference.
        let unknown = hosts(
            &["n1", "n2", "n3"],
            &[Some("6.1.0"), None, Some("")],
            &[None, Some("hpet"), None],
        );
        assert_eq!(HostsDiffer.check(&unknown), None);
        assert_eq!(HostsDiffer.check(&hosts(&["n1", "n2"], &[], &[])), None);
        assert_eq!(HostsDiffer.check(&RunFacts::default()), None);
    }

    #[test]
    fn odd_facts_are_undecidable() {
        // One rank; lengths that disagree with the hosts.
        let one = hosts(&["n1"], &[Some("6.1.0")], &[Some("tsc")]);
        assert_eq!(HostsDiffer.check(&one), None);
        let short = hosts(&["n1", "n2", "n3"], &[Some("5.15.0"), Some("6.1.0")], &[]);
        assert_eq!(HostsDiffer.check(&short), None);
    }
}
