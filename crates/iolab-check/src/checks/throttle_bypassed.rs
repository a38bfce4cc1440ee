//! `throttle-bypassed`: writes reached the throttled origin without passing its limits.
//!
//! Needs: `throttle_limits_writes` (true), `throttle_charged_write_bytes`,
//! `device.write_bytes`, and `o_direct` not true.
//!
//! Fires (warning) when the device wrote more than the throttle's cgroup was charged, by at
//! least [`MIN_BYPASS_FRACTION`] of the device's writes and [`MIN_BYPASS_BYTES`]. cgroup
//! v1's blkio throttle charges a bio to the cgroup of the task that submits it. Buffered
//! writes are written back by the kernel's flusher threads (background writeback, dirty
//! expiry, `sync(2)`), which v1 does not attribute to the cgroup that dirtied the pages: those
//! bios pass at full speed (measured on Linux 6.18: 100 MiB of buffered writes flushed with 0
//! bytes charged, while O_DIRECT writes and the workload's own fsync were held to the
//! limit). So the origin was faster than the disk it is meant to imitate for those bytes.
//!
//! Before the run (`iolab check`, nothing measured yet) it fires when the workload writes
//! buffered and syncs nothing itself: then its writes can only reach the device through the
//! flusher threads.
//!
//! In a container (`environment.kind == "container"`) the limits are the container's blkio
//! write limit (`environment.io`), charged the same way, and the finding says so.
//!
//! An O_DIRECT workload has no buffered data to write back: what the device wrote beyond
//! the charge there is the filesystem's own (its journal thread, ext4's lazy inode-table
//! initialisation after a fresh mkfs), not the workload escaping its limits, so the check
//! stays silent.

use crate::{Access, Check, Finding, RunFacts, Severity};
use iolab_util::units::format_bytes;
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

    fn applies_before_run(&self) -> bool {
        true
    }

    fn check(&self, f: &RunFacts) -> Option<Finding> {
        if f.throttle_limits_writes != Some(true) || f.o_direct == Some(true) {
            return None;
        }
        let Some(charged) = f.throttle_charged_write_bytes else {
            return planned(f);
        };
        let dev = f.device.write_bytes?;
        let bypass = dev.saturating_sub(charged);
        if bypass < MIN_BYPASS_BYTES || (bypass as f64) < MIN_BYPASS_FRACTION * dev as f64 {
            return None;
        }
        let (written, charged_text) = (format_bytes(dev), format_bytes(charged));
        let gap = format!(
            "{} ({:.0}%)",
            format_bytes(bypass),
            bypass as f64 / dev as f64 * 100.0
        );
        let how = "cgroup v1 throttles the I/O the workload's threads submit themselves; \
                   buffered writes written back by the kernel's flusher threads (and the \
                   filesystem's journal) pass at full speed";
        let (explanation, fix) = if in_container(f) {
            (
                format!(
                    "The device wrote {written} but the container's blkio write limit \
                     (environment.io) was charged only {charged_text}: {gap} went past it. \
                     {how}, so for them the container's disk was faster than its limit."
                ),
                CONTAINER_FIX,
            )
        } else {
            (
                format!(
                    "The throttled device wrote {written} but the throttle was charged only \
                     {charged_text}: {gap} went past the write limits. {how}, so for them the \
                     origin was faster than the disk it imitates."
                ),
                "Throttle what v1 can: O_DIRECT writes, or the workload's own fsync/fdatasync \
                 (writeback it starts is charged to it); or use a slow device. Reads that miss \
                 the page cache are throttled either way.",
            )
        };
        Some(Finding {
            id: ID,
            severity: Severity::Warning,
            evidence: json!({
                "device_write_bytes": dev,
                "charged_write_bytes": charged,
                "bypass_bytes": bypass,
                "min_bypass_fraction": MIN_BYPASS_FRACTION,
            }),
            explanation,
            fix: fix.into(),
        })
    }
}

/// What a container's limit applies to, and what to do when its writes bypass it.
const CONTAINER_FIX: &str = "Write with O_DIRECT (sync = \"direct\") or sync the writes \
                             (fsync/fdatasync: writeback the workload starts is charged to \
                             it) for `environment.io` to hold them; otherwise the limit holds \
                             only reads that miss the page cache and direct writes — state it \
                             so, or leave `environment.io` out.";

/// The limits are a container's blkio limit (`environment.io`), not `sut.throttle`.
fn in_container(f: &RunFacts) -> bool {
    f.environment
        .as_ref()
        .is_some_and(|e| e.kind == "container")
}

/// Before the run: buffered writes the workload does not sync itself.
fn planned(f: &RunFacts) -> Option<Finding> {
    if f.sync_requested != Some(false) || f.access == Some(Access::Read) {
        return None;
    }
    let (limits, who, fix) = if in_container(f) {
        (
            "The container's blkio write limit (environment.io) limits writes",
            "The container",
            CONTAINER_FIX,
        )
    } else {
        (
            "The device is throttled with write limits",
            "The origin",
            "Write with O_DIRECT (sync = \"direct\") or sync the writes (fsync/fdatasync), \
             whose writeback the workload's own threads do and the limits apply to.",
        )
    };
    Some(Finding {
        id: ID,
        severity: Severity::Warning,
        evidence: json!({ "o_direct": false, "sync_requested": false }),
        explanation: format!(
            "{limits}, but the workload writes through the page cache and syncs nothing \
             itself: the kernel's flusher threads will write its data back, and cgroup v1 does \
             not throttle them. {who} will be as fast as the device for those writes."
        ),
        fix: fix.into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil;

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
        // O_DIRECT: the gap is the filesystem's own background writes.
        let mut direct = facts(Some(true), 48 << 20, 60 << 20);
        direct.o_direct = Some(true);
        assert!(ThrottleBypassed.check(&direct).is_none());
        // Not throttled, or reads only.
        assert!(ThrottleBypassed.check(&facts(None, 0, 100 << 20)).is_none());
        assert!(ThrottleBypassed
            .check(&facts(Some(false), 0, 100 << 20))
            .is_none());
        let mut unknown = facts(Some(true), 0, 0);
        unknown.device.write_bytes = None;
        assert!(ThrottleBypassed.check(&unknown).is_none());
    }

    #[test]
    fn in_a_container_it_names_the_containers_limit() {
        let mut f = facts(Some(true), 0, 100 << 20);
        f.environment = Some(testutil::container());
        let found = ThrottleBypassed.check(&f).unwrap();
        assert_eq!(found.evidence["bypass_bytes"], 100u64 << 20);
        assert!(
            found.explanation.contains(
                "the container's blkio write limit (environment.io) was charged only 0 B"
            ),
            "{}",
            found.explanation
        );
        assert!(found.explanation.contains("flusher"));
        assert!(
            !found.explanation.contains("origin"),
            "{}",
            found.explanation
        );
        assert!(found.fix.contains("`environment.io`") && found.fix.contains("O_DIRECT"));
        // Before the run, too.
        f.throttle_charged_write_bytes = None;
        f.o_direct = Some(false);
        f.sync_requested = Some(false);
        let found = ThrottleBypassed.check(&f).unwrap();
        assert!(
            found.explanation.starts_with(
                "The container's blkio write limit (environment.io) limits writes, but"
            ),
            "{}",
            found.explanation
        );
        assert!(found.explanation.contains("The container will be as fast"));
        assert!(found.fix.contains("`environment.io`"));
        // A VM's or the host's run keeps the origin's wording.
        f.environment = Some(testutil::vm());
        let found = ThrottleBypassed.check(&f).unwrap();
        assert!(found.explanation.contains("The origin will"));
    }

    #[test]
    fn before_the_run_buffered_unsynced_writes_are_predicted() {
        let mut f = RunFacts {
            throttle_limits_writes: Some(true),
            o_direct: Some(false),
            sync_requested: Some(false),
            access: Some(Access::Write),
            ..RunFacts::default()
        };
        let found = ThrottleBypassed.check(&f).unwrap();
        assert!(found.explanation.contains("will"), "{}", found.explanation);
        f.sync_requested = Some(true);
        assert!(ThrottleBypassed.check(&f).is_none());
        f.sync_requested = Some(false);
        f.access = Some(Access::Read);
        assert!(ThrottleBypassed.check(&f).is_none());
        f.access = None;
        f.sync_requested = None;
        assert!(ThrottleBypassed.check(&f).is_none(), "unknown sync");
    }
}
