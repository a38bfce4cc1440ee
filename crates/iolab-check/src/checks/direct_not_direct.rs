//! `direct-not-direct`: O_DIRECT was requested but did not bypass the cache.
//!
//! Needs: `o_direct == Some(true)`, and one of
//! * `fs_type` — tmpfs (or ramfs) has no device: error;
//! * `device.is_loop` and `device.loop_direct_io` — a loop device without direct I/O puts the
//!   host's page cache under the "direct" I/O: warning (`loop-cached` says so for any run);
//! * `app_read_bytes`, `app_write_bytes`, `device.read_bytes`, `device.write_bytes` — the
//!   device moved less than 50% of the application's bytes: error.
//!
//! The first that applies is reported.

use crate::format::{pct_of_fraction, ratio};
use crate::{Check, Finding, RunFacts, Severity};
use iolab_util::units::format_bytes;
use serde_json::json;

const ID: &str = "direct-not-direct";

/// Direct I/O moves exactly the application's bytes (aligned requests, no readahead), so a
/// healthy run sits at about 100% plus metadata; below half, most of the I/O went through the
/// page cache.
pub const MIN_DEVICE_FRACTION: f64 = 0.5;

/// See the [module documentation](self).
pub struct DirectNotDirect;

impl Check for DirectNotDirect {
    fn id(&self) -> &'static str {
        ID
    }

    fn check(&self, f: &RunFacts) -> Option<Finding> {
        if f.o_direct != Some(true) {
            return None;
        }
        if f.on_memory_fs() == Some(true) {
            let fs = f.fs_type.as_deref().unwrap_or("tmpfs");
            return Some(Finding {
                id: ID,
                severity: Severity::Error,
                evidence: json!({ "o_direct": true, "fs_type": fs }),
                explanation: format!(
                    "O_DIRECT was requested but the run directory is on {fs}, which has no \
                     device: since Linux 6.6 tmpfs accepts O_DIRECT and serves it from memory \
                     like any other I/O (earlier kernels refuse it with EINVAL). The number \
                     measures memory."
                ),
                fix: "Run on a filesystem over a block device (a loop image with \
                      `direct_io = true`, or a block device), or drop O_DIRECT for tmpfs."
                    .into(),
            });
        }
        if f.device.is_loop == Some(true) && f.device.loop_direct_io == Some(false) {
            let name = f.device.name.as_deref().unwrap_or("the loop device");
            return Some(Finding {
                id: ID,
                severity: Severity::Warning,
                evidence: json!({
                    "o_direct": true,
                    "device": f.device.name,
                    "is_loop": true,
                    "loop_direct_io": false,
                }),
                explanation: format!(
                    "O_DIRECT bypassed the page cache down to {name}, but that loop device \
                     reads and writes its backing file through the host's page cache (loop \
                     direct I/O is off): the cache is still there, one layer down."
                ),
                fix: "Attach the loop device with direct I/O (`direct_io = true` on the loop \
                      image; `losetup --direct-io=on`)."
                    .into(),
            });
        }
        let app = f.app_read_bytes?.checked_add(f.app_write_bytes?)?;
        let dev = f.device.read_bytes?.checked_add(f.device.write_bytes?)?;
        let frac = ratio(dev, app)?;
        if frac >= MIN_DEVICE_FRACTION {
            return None;
        }
        Some(Finding {
            id: ID,
            severity: Severity::Error,
            evidence: json!({
                "o_direct": true,
                "app_read_bytes": f.app_read_bytes,
                "app_write_bytes": f.app_write_bytes,
                "device_read_bytes": f.device.read_bytes,
                "device_write_bytes": f.device.write_bytes,
                "device_fraction": frac,
                "min_device_fraction": MIN_DEVICE_FRACTION,
                "fs_type": f.fs_type,
            }),
            explanation: format!(
                "O_DIRECT was requested, but the device moved only {} — {} of the {} the \
                 application read and wrote: the I/O went through the page cache. Some \
                 filesystems fall back to buffered I/O without an error (ext4 with \
                 data=journal does).",
                format_bytes(dev),
                pct_of_fraction(frac),
                format_bytes(app),
            ),
            fix: "Use a filesystem and mount options that honour O_DIRECT (not ext4 \
                  data=journal), and compare the device's bytes again."
                .into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{self, close, ev, ev_f64, GIB, MIB};

    fn direct_read() -> RunFacts {
        let mut f = testutil::cold_read();
        f.o_direct = Some(true);
        f.device.read_bytes = Some(GIB);
        f
    }

    #[test]
    fn fires_error_when_the_device_saw_little() {
        let mut f = direct_read();
        f.device.read_bytes = Some(40 * MIB);
        f.device.write_bytes = Some(MIB);
        let x = DirectNotDirect.check(&f).expect("fires");
        assert_eq!(x.severity, Severity::Error);
        assert_eq!(ev(&x, "app_read_bytes"), GIB);
        assert_eq!(ev(&x, "device_read_bytes"), 40 * MIB);
        assert_eq!(ev(&x, "device_write_bytes"), MIB);
        close(ev_f64(&x, "device_fraction"), 41.0 / 1024.0);
        assert!(x.explanation.contains("41 MiB"), "{}", x.explanation);
    }

    #[test]
    fn fires_error_on_tmpfs() {
        let mut f = direct_read();
        f.fs_type = Some("tmpfs".into());
        f.device = Default::default();
        let x = DirectNotDirect.check(&f).expect("fires");
        assert_eq!(x.severity, Severity::Error);
        assert_eq!(ev(&x, "fs_type"), "tmpfs");
        assert!(x.explanation.contains("6.6"));
    }

    #[test]
    fn fires_warning_on_a_buffered_loop_device() {
        let mut f = direct_read();
        f.device.loop_direct_io = Some(false);
        let x = DirectNotDirect.check(&f).expect("fires");
        assert_eq!(x.severity, Severity::Warning);
        assert_eq!(ev(&x, "loop_direct_io"), false);
        assert_eq!(ev(&x, "device"), "loop0");
    }

    #[test]
    fn silent_when_direct_io_reached_the_device() {
        assert_eq!(DirectNotDirect.check(&direct_read()), None);
        let mut f = testutil::sync_write();
        f.o_direct = Some(true);
        assert_eq!(DirectNotDirect.check(&f), None);
        // Not requested: not this check's business.
        let mut f = direct_read();
        f.o_direct = Some(false);
        f.device.read_bytes = Some(0);
        assert_eq!(DirectNotDirect.check(&f), None);
    }

    #[test]
    fn boundary_is_half_the_bytes() {
        let mut f = direct_read();
        f.device.read_bytes = Some(GIB / 2);
        assert_eq!(DirectNotDirect.check(&f), None);
        f.device.read_bytes = Some(GIB / 2 - 512);
        assert!(DirectNotDirect.check(&f).is_some());
    }

    #[test]
    fn unknown_facts_are_undecidable() {
        let mut f = direct_read();
        f.device.read_bytes = Some(0);
        let mut g = f.clone();
        g.o_direct = None;
        assert_eq!(DirectNotDirect.check(&g), None);
        let mut g = f.clone();
        g.app_write_bytes = None;
        assert_eq!(DirectNotDirect.check(&g), None);
        let mut g = f;
        g.device.write_bytes = None;
        assert_eq!(DirectNotDirect.check(&g), None);
    }
}
