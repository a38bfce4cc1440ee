//! `vm-cache-mode`: the VM's disk is cached by the host.
//!
//! Needs: `environment.vm_cache` (qemu's `cache=` for the run's disk); `sync_scope` for the
//! severity with `unsafe`. Judged before running too: the cache mode is planned.
//!
//! * `unsafe`: qemu acknowledges the guest's flushes without making anything durable on the
//!   host (Firecracker's default likewise acknowledges a flush without a host fsync). Error
//!   when the workload syncs (each write, some writes, or at the end of a pass): the cost of
//!   durability it asked for is not in its numbers. Warning otherwise: the host's page cache
//!   still holds the disk, as with `writeback`.
//! * `writeback`: the host's page cache holds the disk too — double caching. The guest's
//!   reads may come from host memory (dropping the guest's caches does not drop the host's),
//!   and its writes are durable only at its flushes: warning.
//! * `none` (O_DIRECT on the host) and `directsync` pass through the host's page cache
//!   neither way: silent.

use crate::{Check, Finding, RunFacts, Severity, SyncScope};
use serde_json::json;

const ID: &str = "vm-cache-mode";

/// See the [module documentation](self). No threshold: the cache mode decides.
pub struct VmCacheMode;

impl Check for VmCacheMode {
    fn id(&self) -> &'static str {
        ID
    }

    fn applies_before_run(&self) -> bool {
        true
    }

    fn check(&self, f: &RunFacts) -> Option<Finding> {
        let env = f.environment.as_ref()?;
        let mode = env.vm_cache.as_deref()?;
        let double = "The host's page cache holds the guest's disk too (double caching): the \
                      guest's reads may come from host memory — dropping the guest's caches \
                      does not drop the host's — and the device figures are not the disk's.";
        let (severity, explanation) = match mode {
            "unsafe" => {
                let syncs = matches!(
                    f.sync_scope,
                    Some(SyncScope::EachWrite | SyncScope::SomeWrites | SyncScope::EndOfPass)
                );
                let unsafe_ = "The VM's disk uses qemu's `cache=unsafe`: the guest's flushes \
                               are acknowledged without the host making the data durable \
                               (Firecracker's default likewise acknowledges a flush without a \
                               host fsync).";
                if syncs {
                    (
                        Severity::Error,
                        format!(
                            "{unsafe_} The workload asks for durability, so its syncs cost \
                             nothing they would cost on a disk: the number measures the host's \
                             memory. {double}"
                        ),
                    )
                } else {
                    (Severity::Warning, format!("{unsafe_} {double}"))
                }
            }
            "writeback" => (
                Severity::Warning,
                format!(
                    "The VM's disk uses qemu's `cache=writeback`. {double} Writes are durable \
                     only at the guest's flushes; until then the host's memory absorbs them."
                ),
            ),
            _ => return None,
        };
        Some(Finding {
            id: ID,
            severity,
            evidence: json!({
                "vm_cache": mode,
                "vm_accel": env.vm_accel,
                "sync_scope": f.sync_scope,
            }),
            explanation,
            fix: "Attach the VM's disk with `cache = \"none\"` (O_DIRECT on the host: the guest's \
                  reads and writes bypass the host's page cache and its flushes reach the \
                  disk), or `directsync`."
                .into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil;
    use crate::EnvFacts;

    fn cached(mut facts: RunFacts, mode: &str) -> RunFacts {
        facts.environment = Some(EnvFacts {
            vm_cache: Some(mode.into()),
            ..testutil::vm()
        });
        facts
    }

    #[test]
    fn unsafe_is_an_error_when_the_workload_syncs() {
        let f = cached(testutil::sync_write(), "unsafe");
        let x = VmCacheMode.check(&f).expect("fires");
        assert_eq!(x.severity, Severity::Error);
        assert_eq!(x.evidence["vm_cache"], "unsafe");
        assert_eq!(x.evidence["sync_scope"], "each_write");
        assert!(x.explanation.contains("acknowledged without the host"));
        assert!(x.explanation.contains("measures the host's memory"));
        assert!(x.fix.contains("cache = \"none\""));
        for scope in [SyncScope::SomeWrites, SyncScope::EndOfPass] {
            let mut f = f.clone();
            f.sync_scope = Some(scope);
            assert_eq!(VmCacheMode.check(&f).unwrap().severity, Severity::Error);
        }
    }

    #[test]
    fn unsafe_without_syncs_and_writeback_are_warnings() {
        let x = VmCacheMode
            .check(&cached(testutil::cold_read(), "unsafe"))
            .expect("fires");
        assert_eq!(x.severity, Severity::Warning);
        assert!(x.explanation.contains("double caching"));
        // Unknown sync scope: not known to sync, so not an error.
        let mut f = cached(testutil::sync_write(), "unsafe");
        f.sync_scope = None;
        assert_eq!(VmCacheMode.check(&f).unwrap().severity, Severity::Warning);

        let x = VmCacheMode
            .check(&cached(testutil::sync_write(), "writeback"))
            .expect("fires");
        assert_eq!(x.severity, Severity::Warning);
        assert!(
            x.explanation.contains("`cache=writeback`") && x.explanation.contains("double"),
            "{}",
            x.explanation
        );
    }

    #[test]
    fn silent_when_the_host_does_not_cache() {
        for mode in ["none", "directsync"] {
            assert_eq!(
                VmCacheMode.check(&cached(testutil::sync_write(), mode)),
                None
            );
        }
        assert_eq!(
            VmCacheMode.check(&testutil::within(testutil::cold_read(), testutil::vm())),
            None
        );
    }

    #[test]
    fn unknown_is_undecidable() {
        assert_eq!(VmCacheMode.check(&testutil::sync_write()), None);
        let mut f = cached(testutil::sync_write(), "unsafe");
        f.environment.as_mut().unwrap().vm_cache = None;
        assert_eq!(VmCacheMode.check(&f), None);
    }
}
