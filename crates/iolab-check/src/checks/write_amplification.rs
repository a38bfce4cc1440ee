//! `write-amplification`: the device wrote far more, or far less, than the application.
//!
//! Needs: `app_write_bytes` (> 0) and `device.write_bytes`; for the "far less" case also
//! `sync_requested` and `o_direct` (both known to be off).
//!
//! Fires (info) when the ratio device ÷ app write bytes is
//! * `> 3`: journal, metadata and block rounding — the filesystem's cost of the writes;
//! * `< 0.5` for a buffered run (no sync, no O_DIRECT): the rest was still dirty in the page
//!   cache when the run ended. A sync-requested run wrote what was dirty: with a sync per
//!   write the gap is `sync-not-durable`'s finding, with one sync at the end of the pass it is
//!   overwrites reaching the device once; for an O_DIRECT run it is `direct-not-direct`'s. So
//!   this check stays silent there.

use crate::format::{pct_of_fraction, ratio};
use crate::{Check, Finding, RunFacts, Severity};
use iolab_util::units::{format_bytes, format_ns};
use serde_json::json;

const ID: &str = "write-amplification";

/// "Far more": ext4 `data=journal` writes data twice (journal, then home location) and a
/// 4 KiB fsync'ed write typically adds a journal commit block or two, so 2–3× is the normal
/// price of journaling; beyond 3× something else (sub-block writes, read-modify-write,
/// metadata-heavy workloads, another writer) is worth a look.
pub const HIGH_RATIO: f64 = 3.0;

/// "Far less": the same 50% the other byte-gap checks use — half the bytes missing cannot be
/// rounding or a few blocks of metadata.
pub const LOW_RATIO: f64 = 0.5;

/// See the [module documentation](self).
pub struct WriteAmplification;

impl Check for WriteAmplification {
    fn id(&self) -> &'static str {
        ID
    }

    fn check(&self, f: &RunFacts) -> Option<Finding> {
        let app = f.app_write_bytes?;
        let dev = f.device.write_bytes?;
        let r = ratio(dev, app)?;
        let evidence = json!({
            "app_write_bytes": app,
            "device_write_bytes": dev,
            "ratio": r,
            "high_ratio": HIGH_RATIO,
            "low_ratio": LOW_RATIO,
            "sync_requested": f.sync_requested,
            "o_direct": f.o_direct,
            "fs_type": f.fs_type,
            "dirty_expire_centisecs": f.dirty_expire_centisecs,
        });
        if r > HIGH_RATIO {
            return Some(Finding {
                id: ID,
                severity: Severity::Info,
                evidence,
                explanation: format!(
                    "The device wrote {} — {r:.2}× the {} the application wrote (more than \
                     {HIGH_RATIO}×): the journal, metadata and block rounding (a write smaller \
                     than a block costs a whole block{}) were written too. The number includes \
                     the filesystem's cost of each write.",
                    format_bytes(dev),
                    format_bytes(app),
                    if f.sync_requested == Some(true) {
                        "; each sync also commits the journal"
                    } else {
                        ""
                    },
                ),
                fix: "Expected with data journaling or small synchronous writes: compare \
                      configurations on device bytes as well as on throughput. If it is not \
                      expected, look for another writer (noisy-neighbour) or trace the run's \
                      block requests."
                    .into(),
            });
        }
        if r >= LOW_RATIO || f.sync_requested? || f.o_direct? {
            return None;
        }
        let expire = f
            .dirty_expire_centisecs
            .map(|cs| {
                format!(
                    " (vm.dirty_expire_centisecs: {})",
                    format_ns((cs * 10_000_000) as f64)
                )
            })
            .unwrap_or_default();
        Some(Finding {
            id: ID,
            severity: Severity::Info,
            evidence,
            explanation: format!(
                "The device wrote only {} — {} of the {} the application wrote: the rest was \
                 still dirty in the page cache when the run ended. Buffered writes are written \
                 back once they are old enough{expire} or dirty memory passes \
                 vm.dirty_background_ratio, so the number measures copying into memory more \
                 than writing to the device.",
                format_bytes(dev),
                pct_of_fraction(r),
                format_bytes(app),
            ),
            fix: "If the device is the question: end the timed region with fsync (a \
                  workload that syncs what it wrote), run longer than the writeback delay, \
                  or lower vm.dirty_expire_centisecs / vm.dirty_background_bytes for the run \
                  (`sut.tunables`)."
                .into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{self, close, ev, ev_f64, MIB};

    fn buffered_write() -> RunFacts {
        let mut f = testutil::sync_write();
        f.sync_requested = Some(false);
        f.device.write_bytes = Some(300 * MIB); // 256 MiB + journal
        f.device.flushes = Some(2);
        f
    }

    #[test]
    fn fires_info_for_heavy_journaling() {
        let mut f = testutil::sync_write();
        f.device.write_bytes = Some(1100 * MIB);
        let x = WriteAmplification.check(&f).expect("fires");
        assert_eq!(x.severity, Severity::Info);
        assert_eq!(ev(&x, "app_write_bytes"), 256 * MIB);
        assert_eq!(ev(&x, "device_write_bytes"), 1100 * MIB);
        close(ev_f64(&x, "ratio"), 1100.0 / 256.0);
        assert!(x.explanation.contains("4.30×"), "{}", x.explanation);
        assert!(x.explanation.contains("commits the journal"));
    }

    #[test]
    fn fires_info_when_buffered_writes_stayed_dirty() {
        let mut f = buffered_write();
        f.device.write_bytes = Some(40 * MIB);
        let x = WriteAmplification.check(&f).expect("fires");
        assert_eq!(x.severity, Severity::Info);
        close(ev_f64(&x, "ratio"), 40.0 / 256.0);
        assert_eq!(ev(&x, "dirty_expire_centisecs"), 3000);
        assert!(x.explanation.contains("still dirty"));
        assert!(x.explanation.contains("15.6% of the 256 MiB"));
        assert!(x.explanation.contains("30.00 s"));
    }

    #[test]
    fn silent_for_ordinary_ratios() {
        assert_eq!(WriteAmplification.check(&testutil::sync_write()), None); // 2.19×
        assert_eq!(WriteAmplification.check(&buffered_write()), None);
        assert_eq!(WriteAmplification.check(&testutil::cold_read()), None); // no writes
    }

    #[test]
    fn boundaries_are_exclusive() {
        let mut f = buffered_write();
        f.device.write_bytes = Some(768 * MIB); // exactly 3×
        assert_eq!(WriteAmplification.check(&f), None);
        f.device.write_bytes = Some(768 * MIB + 512);
        assert!(WriteAmplification.check(&f).is_some());
        f.device.write_bytes = Some(128 * MIB); // exactly 0.5×
        assert_eq!(WriteAmplification.check(&f), None);
        f.device.write_bytes = Some(128 * MIB - 512);
        assert!(WriteAmplification.check(&f).is_some());
    }

    #[test]
    fn low_ratio_is_left_to_sync_and_direct_checks_or_unknown() {
        let mut f = buffered_write();
        f.device.write_bytes = Some(0);
        let mut g = f.clone();
        g.sync_requested = Some(true);
        assert_eq!(WriteAmplification.check(&g), None);
        let mut g = f.clone();
        g.o_direct = Some(true);
        assert_eq!(WriteAmplification.check(&g), None);
        let mut g = f.clone();
        g.sync_requested = None;
        assert_eq!(WriteAmplification.check(&g), None);
        let mut g = f;
        g.device.write_bytes = None;
        assert_eq!(WriteAmplification.check(&g), None);
    }
}
