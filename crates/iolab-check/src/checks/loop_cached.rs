//! `loop-cached`: the run's device is a loop device without direct I/O.
//!
//! Needs: `device.is_loop` and `device.loop_direct_io`. Judged before running too.
//!
//! Fires (warning) when the device is a loop device with direct I/O off. The loop driver
//! then reads and writes its backing file through the host's page cache: "device" reads can
//! be served from host memory and writes are absorbed there, whatever the filesystem on the
//! loop device does — dropping caches drops the loop's cached backing file too, but anything
//! read or written during the run stays cached underneath. The loop device's own diskstats
//! cannot show this: they count requests to the loop device, not to the disk below.

use crate::{Check, Finding, RunFacts, Severity};
use serde_json::json;

const ID: &str = "loop-cached";

/// See the [module documentation](self). No threshold: the loop's `dio` flag decides.
pub struct LoopCached;

impl Check for LoopCached {
    fn id(&self) -> &'static str {
        ID
    }

    fn applies_before_run(&self) -> bool {
        true
    }

    fn check(&self, f: &RunFacts) -> Option<Finding> {
        if !f.device.is_loop? || f.device.loop_direct_io? {
            return None;
        }
        let name = f.device.name.as_deref().unwrap_or("the loop device");
        Some(Finding {
            id: ID,
            severity: Severity::Warning,
            evidence: json!({
                "device": f.device.name,
                "is_loop": true,
                "loop_direct_io": false,
            }),
            explanation: format!(
                "{name} is a loop device without direct I/O: it reads and writes its backing \
                 file through the host's page cache, so \"device\" reads can come from memory \
                 and writes are absorbed there. Its diskstats count requests to the loop \
                 device, not to the disk underneath."
            ),
            fix: "Attach the loop device with direct I/O (`direct_io = true` on the loop \
                  image; `losetup --direct-io=on`); the backing file's filesystem must support \
                  O_DIRECT."
                .into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{self, ev};

    #[test]
    fn fires_for_a_buffered_loop_device() {
        let mut f = testutil::cold_read();
        f.device.loop_direct_io = Some(false);
        let x = LoopCached.check(&f).expect("fires");
        assert_eq!(x.severity, Severity::Warning);
        assert_eq!(ev(&x, "device"), "loop0");
        assert_eq!(ev(&x, "loop_direct_io"), false);
        assert!(x.explanation.starts_with("loop0 is a loop device"));
    }

    #[test]
    fn silent_for_direct_loops_and_real_disks() {
        assert_eq!(LoopCached.check(&testutil::cold_read()), None);
        assert_eq!(LoopCached.check(&testutil::sync_write()), None);
    }

    #[test]
    fn boundary_needs_both_flags() {
        // A non-loop device with a stray dio=false is not a loop.
        let mut f = testutil::sync_write();
        f.device.loop_direct_io = Some(false);
        assert_eq!(LoopCached.check(&f), None);
    }

    #[test]
    fn unknown_is_undecidable() {
        let mut f = testutil::cold_read();
        f.device.loop_direct_io = None;
        assert_eq!(LoopCached.check(&f), None);
        f.device.loop_direct_io = Some(false);
        f.device.is_loop = None;
        assert_eq!(LoopCached.check(&f), None);
    }
}
