//! `throttle-bypassed`: writes reached the throttled origin without passing its limits.
//!
//! Needs: `throttle_limits_writes` (true), `throttle_charged_write_bytes` and
//! `device.write_bytes`.
//!
//! Fires (warning) when the device wrote more than the throttle's cgroup was charged, by at
//! least [`MIN_BYPASS_FRACTION`] of the device's writes and [`MIN_BYPASS_BYTES`]. cgroup
//! v1's blkio throttle charges a bio to the cgroup of the task that submits it. Buffered
//! writes are written back by the kernel's flusher threads (background writeback, dirty
//! expiry, `sync(2)`), which v1 does not attribute to the cgroup that dirtied the pages: those
//! bios pass at full speed (measured on Linux 6.18: 100 MiB of buffered writes flushed with 0
//! bytes charged, while O_DIRECT writes and the workload's own fsync were held to the
//! limit). So the origin was faster than the disk it is meant to imitate for those bytes.

use crate::{Check, Finding, RunFacts, Severity};
use iolab_workload::units::format_bytes;
use serde_json::json;

const ID: &str = "throttle-bypassed";

/// The filesystem's own metadata and journal (written by its journal thread, which is not
/// in the cgroup either) are a few percent of a data-heavy run: a tenth is more than that.
pub const MIN_BYPASS_FRACTION: f64 = 0.1;

/// Below 1 MiB the bypass is a journal commit or two, whatever the fraction.
pub const MIN_BYPASS_BYTES: u64 = 1 << 20;

/// See the [module documentation](self).
pub struct ThrottleBypassed;

impl Check for ThrottleBypassed {
    fn id(&self) -> &'static str {
        ID
    }

    fn check(&self, f: &RunFacts) -> Option<Finding> {
        if f.throttle_limits_writes != Some(true) {
            return None;
        }
        let charged = f.throttle_charged_write_bytes?;
        let dev = f.device.write_bytes?;
        let bypass = dev.saturating_sub(charged);
        if bypass < MIN_BYPASS_BYTES || (bypass as f64) < MIN_BYPASS_FRACTION * dev as f64 {
            return None;
        }
        Some(Finding {
            id: ID,
            severity: Severity::Warning,
            evidence: json!({
                "device_write_bytes": dev,
                "charged_write_bytes": charged,
                "bypass_bytes": bypass,
                "min_bypass_fraction": MIN_BYPASS_FRACTION,
            }),
            explanation: format!(
                "The throttled device wrote {} but the throttle was charged only {}: {} ({:.0}%) \
                 went past the write limits. cgroup v1 throttles the I/O the workload's threads \
                 submit themselves; buffered writes written back by the kernel's flusher \
                 threads (and the filesystem's journal) pass at full speed, so for them the \
                 origin was faster than the disk it imitates.",
                format_bytes(dev),
                format_bytes(charged),
                format_bytes(bypass),
                bypass as f64 / dev as f64 * 100.0,
            ),
            fix: "Throttle what v1 can: O_DIRECT writes, or the workload's own fsync/fdatasync \
                  (writeback it starts is charged to it); or use a slow device. Reads that miss \
                  the page cache are throttled either way."
                .into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(limits: Option<bool>, charged: u64, dev: u64) -> RunFacts {
        let mut f = RunFacts {
            throttle_limits_writes: limits,
            throttle_charged_write_bytes: Some(charged),
            ..RunFacts::default()
        };
        f.device.write_bytes = Some(dev);
        f
    }

    #[test]
    fn fires_when_writes_escape_the_limits() {
        let f = facts(Some(true), 0, 100 << 20);
        let found = ThrottleBypassed.check(&f).unwrap();
        assert_eq!(found.severity, Severity::Warning);
        assert_eq!(found.evidence["bypass_bytes"], 100u64 << 20);
        assert!(
            found.explanation.contains("flusher"),
            "{}",
            found.explanation
        );
        // Direct I/O: everything charged but a little journal.
        assert!(ThrottleBypassed
            .check(&facts(Some(true), 64 << 20, (64 << 20) + (300 << 10)))
            .is_none());
        // A large run with a small fraction bypassed.
        assert!(ThrottleBypassed
            .check(&facts(Some(true), 1 << 30, (1 << 30) + (20 << 20)))
            .is_none());
        // Not throttled, or reads only.
        assert!(ThrottleBypassed.check(&facts(None, 0, 100 << 20)).is_none());
        assert!(ThrottleBypassed
            .check(&facts(Some(false), 0, 100 << 20))
            .is_none());
        let mut unknown = facts(Some(true), 0, 0);
        unknown.device.write_bytes = None;
        assert!(ThrottleBypassed.check(&unknown).is_none());
    }
}
