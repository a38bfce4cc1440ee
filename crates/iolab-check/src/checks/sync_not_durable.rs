//! `sync-not-durable`: durability was requested but the device did not make the data durable.
//!
//! Needs: `sync_scope` — [`SyncScope::EachWrite`] (each write durable before the next:
//! per-record fsync/fdatasync/msync(MS_SYNC), O_SYNC, O_DSYNC, `dsync` on every writing
//! flowop) or [`SyncScope::SomeWrites`] (WML sync flowops) — and a run that writes
//! (`app_write_bytes > 0`, or a writing `access` before running), and one of
//! * `fs_type` — on tmpfs (or ramfs) sync is a no-op: error. Judged before running too.
//! * `device.write_bytes` (each-write scope only) — below 50% of the least the device must
//!   have written: error. Each synced write reaches the device before the next write to its
//!   file is issued, so the device writes every application byte again — except that one
//!   device write of a block can make all the writes to that block in flight at that moment
//!   durable: the least is app bytes ÷ `writes_in_flight_per_file` (needed; 1 for a file
//!   written by one thread on a synchronous engine). With sync flowops which writes were
//!   synced is unknown, so there is no lower bound and this part is skipped.
//! * `device.flushes` — zero flushes, and zero FUA writes when `device.fua_writes` is known
//!   (traced runs): error when each write was synced, the device is known to have a volatile
//!   write cache and FUA is known; warning otherwise (with a write-through cache the block
//!   layer drops flushes, untraced FUA writes can make data durable without a flush, and a
//!   sync flowop may not have run). Skipped when `device.volatile_write_cache == Some(false)`.
//!
//! The first that applies is reported. A sync only at the end of a write pass
//! ([`SyncScope::EndOfPass`], a buffered single-pattern test) is not judged: it writes each dirty
//! block once however often it was overwritten (an 8 MiB file rewritten for 5 GiB is 8 MiB of
//! device writes), and on tmpfs it is the buffered run the user asked for.

use crate::format::{pct_of_fraction, ratio};
use crate::{Check, Finding, RunFacts, Severity, SyncScope};
use iolab_util::units::format_bytes;
use serde_json::json;

const ID: &str = "sync-not-durable";

/// Each synced write reaches the device (plus journal), so a healthy run sits at 100% of the
/// least the device must write or more; below half, most "durable" bytes were never written.
pub const MIN_DEVICE_FRACTION: f64 = 0.5;

/// See the [module documentation](self).
pub struct SyncNotDurable;

impl Check for SyncNotDurable {
    fn id(&self) -> &'static str {
        ID
    }

    fn applies_before_run(&self) -> bool {
        true
    }

    fn check(&self, f: &RunFacts) -> Option<Finding> {
        let scope = f.sync_scope?;
        let what = match scope {
            SyncScope::EachWrite => "for each write",
            SyncScope::SomeWrites => "by the workload's sync operations",
            SyncScope::Never | SyncScope::EndOfPass => return None,
        };
        if f.does_writes() != Some(true) {
            return None;
        }
        let app = f.app_write_bytes;
        let of_writes = app
            .map(|b| format!(" ({} of writes)", format_bytes(b)))
            .unwrap_or_default();
        if f.on_memory_fs() == Some(true) {
            let fs = f.fs_type.as_deref().unwrap_or("tmpfs");
            return Some(Finding {
                id: ID,
                severity: Severity::Error,
                evidence: json!({
                    "sync_scope": scope,
                    "app_write_bytes": app,
                    "fs_type": fs,
                }),
                explanation: format!(
                    "Durability was requested {what}{of_writes}, but the run directory is on \
                     {fs}: fsync and O_SYNC return at once and nothing is durable. The number \
                     measures memory."
                ),
                fix: "Run sync workloads on a filesystem over a block device.".into(),
            });
        }
        let app = app.filter(|&b| b > 0)?;
        let dev = &f.device;
        let name = dev.name.as_deref().unwrap_or("the device");
        let in_flight = f.writes_in_flight_per_file.filter(|&d| d > 0);
        if let (SyncScope::EachWrite, Some(written), Some(d)) = (scope, dev.write_bytes, in_flight)
        {
            let least = app / u64::from(d);
            let frac = ratio(written, least).unwrap_or(f64::INFINITY);
            if frac < MIN_DEVICE_FRACTION {
                let least_text = if d > 1 {
                    format!(
                        "{} it must write at least (the {} the application wrote, each write \
                         synced, ÷ {d} writes in flight per file, which one device write of a \
                         block may make durable together)",
                        format_bytes(least),
                        format_bytes(app)
                    )
                } else {
                    format!(
                        "{} the application wrote, each write synced and so each written to \
                         the device",
                        format_bytes(app)
                    )
                };
                return Some(Finding {
                    id: ID,
                    severity: Severity::Error,
                    evidence: json!({
                        "sync_scope": scope,
                        "app_write_bytes": app,
                        "writes_in_flight_per_file": d,
                        "least_device_write_bytes": least,
                        "device": dev.name,
                        "device_write_bytes": written,
                        "device_fraction": frac,
                        "min_device_fraction": MIN_DEVICE_FRACTION,
                        "flushes": dev.flushes,
                    }),
                    explanation: format!(
                        "Durability was requested for each write, but {name} wrote only {} — \
                         {} of the {least_text}: most of the \"durable\" data never reached it \
                         during the run (a sync that does nothing, e.g. under libeatmydata; \
                         the writes went to another device; or the filesystem compressed the \
                         data, e.g. btrfs `compress` with zero-filled records).",
                        format_bytes(written),
                        pct_of_fraction(frac),
                    ),
                    fix: "Check that the run directory is on the device being measured, that \
                          nothing intercepts fsync and that the filesystem does not compress; \
                          trace the run's block requests."
                        .into(),
                });
            }
        }
        let flushes = dev.flushes?;
        let fua = dev.fua_writes;
        if flushes > 0 || fua.unwrap_or(0) > 0 || dev.volatile_write_cache == Some(false) {
            return None;
        }
        let sure = scope == SyncScope::EachWrite
            && dev.volatile_write_cache == Some(true)
            && fua.is_some();
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
        if scope == SyncScope::SomeWrites {
            caveats.push("the sync operations may not have run on written files");
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
                "sync_scope": scope,
                "app_write_bytes": app,
                "device": dev.name,
                "device_write_bytes": dev.write_bytes,
                "flushes": flushes,
                "fua_writes": fua,
                "volatile_write_cache": dev.volatile_write_cache,
            }),
            explanation: format!(
                "Durability was requested {what} ({} of writes), but {name} received no \
                 flush{}: the data may sit in the device's volatile write cache, so the number \
                 does not include the cost of durability (mount options such as barrier=0 or \
                 nobarrier have this effect).{caveats}",
                format_bytes(app),
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
    use crate::testutil::{self, close, ev, ev_f64, GIB, MIB};
    use crate::Access;

    #[test]
    fn fires_error_when_the_bytes_never_reached_the_device() {
        let mut f = testutil::sync_write();
        f.device.write_bytes = Some(12 * MIB);
        let x = SyncNotDurable.check(&f).expect("fires");
        assert_eq!(x.severity, Severity::Error);
        assert_eq!(ev(&x, "app_write_bytes"), 256 * MIB);
        assert_eq!(ev(&x, "device_write_bytes"), 12 * MIB);
        assert_eq!(ev(&x, "least_device_write_bytes"), 256 * MIB);
        assert_eq!(ev(&x, "sync_scope"), "each_write");
        close(ev_f64(&x, "device_fraction"), 12.0 / 256.0);
        assert!(
            x.explanation.contains(
                "vdb wrote only 12 MiB — 4.7% of the 256 MiB the application wrote, each \
                 write synced and so each written to the device"
            ),
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
        assert!(x
            .explanation
            .contains("requested for each write (256 MiB of writes)"));
    }

    /// The review's run: `sync = "normal"` (only the final fsync), randwrite loops over an
    /// 8 MiB file for 5.3 GiB; the final fsync wrote the file once, 10 MiB with the journal.
    fn normal_overwrite_loop() -> RunFacts {
        let mut f = testutil::sync_write();
        f.sync_scope = Some(SyncScope::EndOfPass);
        f.app_write_bytes = Some(5427 * MIB);
        f.dataset_bytes = Some(8 * MIB);
        f.device.name = Some("loop0".into());
        f.device.write_bytes = Some(10 * MIB);
        f.device.flushes = Some(3);
        f
    }

    #[test]
    fn silent_for_a_sync_only_at_the_end_of_the_pass() {
        let mut f = normal_overwrite_loop();
        assert_eq!(SyncNotDurable.check(&f), None);
        // Not even without flushes: which writes the final sync covered is unknown.
        f.device.flushes = Some(0);
        f.device.fua_writes = Some(0);
        assert_eq!(SyncNotDurable.check(&f), None);
        // Nor on tmpfs: a buffered run on tmpfs is what was asked for.
        f.fs_type = Some("tmpfs".into());
        f.device = Default::default();
        f.app_write_bytes = Some(4 * MIB);
        assert_eq!(SyncNotDurable.check(&f), None);
        // The same facts with a per-record sync are the finding.
        f.sync_scope = Some(SyncScope::EachWrite);
        assert!(SyncNotDurable.check(&f).is_some());
    }

    #[test]
    fn writes_in_flight_lower_the_bytes_the_device_must_write() {
        // fsync per record through io_uring at depth 32 over a 64 KiB file: the writes in
        // flight to one block are made durable by one device write.
        let mut f = testutil::sync_write();
        f.writes_in_flight_per_file = Some(32);
        f.dataset_bytes = Some(64 << 10);
        f.device.write_bytes = Some(12 * MIB); // ≥ 256 MiB / 32 = 8 MiB
        assert_eq!(SyncNotDurable.check(&f), None);
        f.device.write_bytes = Some(4 * MIB - 512); // < half of 8 MiB
        let x = SyncNotDurable.check(&f).expect("fires");
        assert_eq!(x.severity, Severity::Error);
        assert_eq!(ev(&x, "least_device_write_bytes"), 8 * MIB);
        assert_eq!(ev(&x, "writes_in_flight_per_file"), 32);
        assert!(
            x.explanation.contains(
                "of the 8 MiB it must write at least (the 256 MiB the application wrote, \
                 each write synced, ÷ 32 writes in flight per file"
            ),
            "{}",
            x.explanation
        );
        f.device.write_bytes = Some(4 * MIB);
        assert_eq!(SyncNotDurable.check(&f), None, "exactly half");
        // Unknown: no lower bound, the bytes part is skipped, the flush part still judged.
        f.writes_in_flight_per_file = None;
        f.device.write_bytes = Some(0);
        assert_eq!(SyncNotDurable.check(&f), None);
        f.device.flushes = Some(0);
        let x = SyncNotDurable.check(&f).expect("no flush");
        assert!(x.explanation.contains("no flush"));
        // Fewer bytes than writes in flight: a bound of 0 never fires.
        let mut f = testutil::sync_write();
        f.app_write_bytes = Some(4096);
        f.writes_in_flight_per_file = Some(8192);
        f.device.write_bytes = Some(0);
        assert_eq!(SyncNotDurable.check(&f), None);
    }

    #[test]
    fn sync_flowops_give_no_byte_bound_and_at_most_a_warning() {
        // A WML workload with fsync flowops: which writes they covered is unknown.
        let mut f = testutil::sync_write();
        f.sync_scope = Some(SyncScope::SomeWrites);
        f.access = Some(Access::Mixed);
        f.app_write_bytes = Some(2 * GIB);
        f.device.write_bytes = Some(20 * MIB);
        assert_eq!(SyncNotDurable.check(&f), None, "no byte bound");
        f.device.flushes = Some(0);
        f.device.fua_writes = Some(0);
        let x = SyncNotDurable.check(&f).expect("no flush at all");
        assert_eq!(x.severity, Severity::Warning);
        assert!(x
            .explanation
            .contains("requested by the workload's sync operations"));
        assert!(x.explanation.contains("may not have run"));
        f.fs_type = Some("tmpfs".into());
        let x = SyncNotDurable.check(&f).expect("tmpfs");
        assert_eq!(x.severity, Severity::Error);
    }

    #[test]
    fn judged_before_running_on_tmpfs() {
        let plan = RunFacts {
            access: Some(Access::Write),
            sync_requested: Some(true),
            sync_scope: Some(SyncScope::EachWrite),
            fs_type: Some("tmpfs".into()),
            ..RunFacts::default()
        };
        let x = SyncNotDurable.check(&plan).expect("fires");
        assert_eq!(x.severity, Severity::Error);
        assert!(x.evidence["app_write_bytes"].is_null());
        assert!(x
            .explanation
            .contains("requested for each write, but the run directory is on tmpfs"));
        let reads = RunFacts {
            access: Some(Access::Read),
            ..plan.clone()
        };
        assert_eq!(SyncNotDurable.check(&reads), None);
        let ext4 = RunFacts {
            fs_type: Some("ext4".into()),
            ..plan
        };
        assert_eq!(SyncNotDurable.check(&ext4), None, "device facts unknown");
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
        f.device.write_bytes = Some(0);
        f.sync_scope = None;
        assert_eq!(
            SyncNotDurable.check(&f),
            None,
            "sync_requested alone may be only the final sync"
        );
        f.sync_scope = Some(SyncScope::EachWrite);
        f.app_write_bytes = None;
        f.access = None;
        assert_eq!(SyncNotDurable.check(&f), None);
        f.app_write_bytes = Some(0);
        f.access = Some(Access::Write);
        assert_eq!(SyncNotDurable.check(&f), None, "wrote nothing");
    }
}
