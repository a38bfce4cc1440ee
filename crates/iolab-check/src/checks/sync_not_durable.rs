//! `sync-not-durable`: durability was requested but the device did not make the data durable.
//!
//! Needs: `sync_requested == Some(true)` and `app_write_bytes > 0`, and one of
//! * `fs_type` — on tmpfs (or ramfs) sync is a no-op: error;
//! * `device.write_bytes` — below 50% of the application's bytes: error;
//! * `device.flushes` — zero flushes, and zero FUA writes when `device.fua_writes` is known
//!   (traced runs): error when the device is known to have a volatile write cache and FUA is
//!   known, warning otherwise (with a write-through cache the block layer drops flushes, and
//!   untraced FUA writes can make data durable without a flush). Skipped when
//!   `device.volatile_write_cache == Some(false)`.
//!
//! The first that applies is reported.

use crate::format::{bytes, pct_of_fraction, ratio};
use crate::{Check, Finding, RunFacts, Severity};
use serde_json::json;

const ID: &str = "sync-not-durable";

/// A synced write reaches the device in full (plus journal), so a healthy run sits at 100% or
/// more; below half, most "durable" bytes were never written.
pub const MIN_DEVICE_FRACTION: f64 = 0.5;

/// See the [module documentation](self).
pub struct SyncNotDurable;

impl Check for SyncNotDurable {
    fn id(&self) -> &'static str {
        ID
    }

    fn check(&self, f: &RunFacts) -> Option<Finding> {
        if f.sync_requested != Some(true) {
            return None;
        }
        let app = f.app_write_bytes.filter(|&b| b > 0)?;
        if f.on_memory_fs() == Some(true) {
            let fs = f.fs_type.as_deref().unwrap_or("tmpfs");
            return Some(Finding {
                id: ID,
                severity: Severity::Error,
                evidence: json!({ "sync_requested": true, "app_write_bytes": app, "fs_type": fs }),
                explanation: format!(
                    "Durability was requested for {} of writes, but the run directory is on \
                     {fs}: fsync and O_SYNC return at once and nothing is durable. The number \
                     measures memory.",
                    bytes(app)
                ),
                fix: "Run sync workloads on a filesystem over a block device.".into(),
            });
        }
        let dev = &f.device;
        let name = dev.name.as_deref().unwrap_or("the device");
        if let Some(written) = dev.write_bytes {
            let frac = ratio(written, app)?;
            if frac < MIN_DEVICE_FRACTION {
                return Some(Finding {
                    id: ID,
                    severity: Severity::Error,
                    evidence: json!({
                        "sync_requested": true,
                        "app_write_bytes": app,
                        "device": dev.name,
                        "device_write_bytes": written,
                        "device_fraction": frac,
                        "min_device_fraction": MIN_DEVICE_FRACTION,
                        "flushes": dev.flushes,
                    }),
                    explanation: format!(
                        "Durability was requested, but {name} wrote only {} — {} of the {} \
                         the application wrote: most of the \"durable\" data never reached it \
                         during the run (a sync that does nothing, e.g. under libeatmydata, or \
                         the writes went to another device).",
                        bytes(written),
                        pct_of_fraction(frac),
                        bytes(app),
                    ),
                    fix: "Check that the run directory is on the device being measured and \
                          that nothing intercepts fsync; trace the run's block requests."
                        .into(),
                });
            }
        }
        let flushes = dev.flushes?;
        let fua = dev.fua_writes;
        if flushes > 0 || fua.unwrap_or(0) > 0 || dev.volatile_write_cache == Some(false) {
            return None;
        }
        let sure = dev.volatile_write_cache == Some(true) && fua.is_some();
        let mut caveats = Vec::new();
        if dev.volatile_write_cache.is_none() {
            caveats.push(
                "if the device's cache is write-through (queue/write_cache), the kernel drops \
                 flushes and this is expected",
            );
        }
        if fua.is_none() {
            caveats
                .push("FUA writes, which need no flush, are only visible when the run is traced");
        }
        let caveats = if caveats.is_empty() {
            String::new()
        } else {
            format!(" Unless: {}.", caveats.join("; "))
        };
        Some(Finding {
            id: ID,
            severity: if sure {
                Severity::Error
            } else {
                Severity::Warning
            },
            evidence: json!({
                "sync_requested": true,
                "app_write_bytes": app,
                "device": dev.name,
                "device_write_bytes": dev.write_bytes,
                "flushes": flushes,
                "fua_writes": fua,
                "volatile_write_cache": dev.volatile_write_cache,
            }),
            explanation: format!(
                "Durability was requested for {} of writes, but {name} received no flush{}: \
                 the data may sit in the device's volatile write cache, so the number does \
                 not include the cost of durability (mount options such as barrier=0 or \
                 nobarrier have this effect).{caveats}",
                bytes(app),
                if fua.is_some() {
                    " and no FUA write"
                } else {
                    ""
                },
            ),
            fix: "Remove barrier-disabling mount options, check the device's write cache \
                  setting, and trace the run (block_rq_issue) to see flushes and FUA writes."
                .into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{self, close, ev, ev_f64, MIB};

    #[test]
    fn fires_error_when_the_bytes_never_reached_the_device() {
        let mut f = testutil::sync_write();
        f.device.write_bytes = Some(12 * MIB);
        let x = SyncNotDurable.check(&f).expect("fires");
        assert_eq!(x.severity, Severity::Error);
        assert_eq!(ev(&x, "app_write_bytes"), 256 * MIB);
        assert_eq!(ev(&x, "device_write_bytes"), 12 * MIB);
        close(ev_f64(&x, "device_fraction"), 12.0 / 256.0);
        assert!(
            x.explanation.contains("vdb wrote only 12.0 MiB"),
            "{}",
            x.explanation
        );
    }

    #[test]
    fn fires_when_no_flush_reached_the_device() {
        let mut f = testutil::sync_write();
        f.device.flushes = Some(0);
        let x = SyncNotDurable.check(&f).expect("fires");
        // Untraced: FUA unknown, so not certain.
        assert_eq!(x.severity, Severity::Warning);
        assert_eq!(ev(&x, "flushes"), 0);
        assert!(x
            .explanation
            .contains("only visible when the run is traced"));
        f.device.fua_writes = Some(0);
        let x = SyncNotDurable.check(&f).expect("fires");
        assert_eq!(x.severity, Severity::Error);
        assert_eq!(ev(&x, "fua_writes"), 0);
        assert!(!x.explanation.contains("Unless"));
    }

    #[test]
    fn fires_on_tmpfs() {
        let mut f = testutil::sync_write();
        f.fs_type = Some("tmpfs".into());
        f.device = Default::default();
        let x = SyncNotDurable.check(&f).expect("fires");
        assert_eq!(x.severity, Severity::Error);
        assert_eq!(ev(&x, "fs_type"), "tmpfs");
    }

    #[test]
    fn silent_for_a_durable_run() {
        assert_eq!(SyncNotDurable.check(&testutil::sync_write()), None);
        assert_eq!(SyncNotDurable.check(&testutil::cold_read()), None);
    }

    #[test]
    fn fua_or_a_write_through_cache_explains_zero_flushes() {
        let mut f = testutil::sync_write();
        f.device.flushes = Some(0);
        f.device.fua_writes = Some(65_536);
        assert_eq!(SyncNotDurable.check(&f), None);
        f.device.fua_writes = None;
        f.device.volatile_write_cache = Some(false);
        assert_eq!(SyncNotDurable.check(&f), None);
        f.device.volatile_write_cache = None;
        let x = SyncNotDurable.check(&f).expect("fires");
        assert_eq!(x.severity, Severity::Warning);
        assert!(x.explanation.contains("write-through"));
    }

    #[test]
    fn boundary_is_half_the_bytes_and_one_flush() {
        let mut f = testutil::sync_write();
        f.device.write_bytes = Some(128 * MIB);
        assert_eq!(SyncNotDurable.check(&f), None);
        f.device.write_bytes = Some(128 * MIB - 512);
        assert!(SyncNotDurable.check(&f).is_some());
        let mut f = testutil::sync_write();
        f.device.flushes = Some(1);
        assert_eq!(SyncNotDurable.check(&f), None);
    }

    #[test]
    fn unknown_facts_are_undecidable() {
        let mut f = testutil::sync_write();
        f.device.flushes = None;
        assert_eq!(
            SyncNotDurable.check(&f),
            None,
            "bytes fine, flushes unknown"
        );
        let mut f = testutil::sync_write();
        f.device.flushes = Some(0);
        f.sync_requested = None;
        assert_eq!(SyncNotDurable.check(&f), None);
        f.sync_requested = Some(true);
        f.app_write_bytes = None;
        assert_eq!(SyncNotDurable.check(&f), None);
    }
}
