//! `device-idle`: the device's %util stayed low although the run's I/O was meant for it.
//!
//! Needs: `device.util_avg_pct` (or `device.util_series_pct` to average), and that the run
//! did I/O meant for the device — reads (`app_read_bytes`/`access`) with `reads_cold`, or
//! writes (`app_write_bytes`/`access`) with `o_direct` or syncs during the run (`sync_scope`
//! each write or some writes; without a scope, `sync_requested`). Buffered writes, and writes
//! synced once at the end of a pass, are not meant to reach the device during the run, so
//! they do not count.
//!
//! Fires (warning) when the average %util is below 20%.
//!
//! %util is the share of time the device had at least one request in flight (iostat's
//! definition). For devices that serve requests in parallel (SSDs, NVMe, RAID, virtio) a high
//! %util does not mean saturation, so this check never fires on high values; a *low* value is
//! still meaningful in any case: for most of the run nothing was in flight at all.

use crate::format::pct;
use crate::{Check, Finding, RunFacts, Severity, SyncScope};
use serde_json::json;

const ID: &str = "device-idle";

/// Idle for more than four fifths of the run: far from the "busy most of the time" that a
/// benchmark of the device needs, and well above sampling noise of the 1 s util samples.
pub const IDLE_UTIL_PCT: f64 = 20.0;

/// See the [module documentation](self).
pub struct DeviceIdle;

/// The run's I/O was meant to reach the device (`None` if that cannot be told).
fn meant_for_device(f: &RunFacts) -> Option<bool> {
    let reads = match f.does_reads() {
        Some(true) => f.reads_cold,
        other => other,
    };
    let writes = match f.does_writes() {
        Some(true) => match (f.o_direct, f.sync_scope) {
            (Some(true), _) => Some(true),
            // A single sync at the end of a pass sends the writes to the device only then:
            // an idle device during the rest of the run is what that mode does.
            (_, Some(SyncScope::EachWrite | SyncScope::SomeWrites)) => Some(true),
            (Some(false), Some(SyncScope::EndOfPass | SyncScope::Never)) => Some(false),
            _ => match (f.sync_requested, f.o_direct) {
                (Some(true), _) | (_, Some(true)) => Some(true),
                (Some(false), Some(false)) => Some(false),
                _ => None,
            },
        },
        other => other,
    };
    match (reads, writes) {
        (Some(true), _) | (_, Some(true)) => Some(true),
        (Some(false), Some(false)) => Some(false),
        _ => None,
    }
}

impl Check for DeviceIdle {
    fn id(&self) -> &'static str {
        ID
    }

    fn check(&self, f: &RunFacts) -> Option<Finding> {
        let series = f.device.util_series_pct.as_deref();
        let util = f.device.util_avg_pct.or_else(|| {
            let s = series.filter(|s| !s.is_empty())?;
            Some(s.iter().sum::<f64>() / s.len() as f64)
        })?;
        if !util.is_finite() || util >= IDLE_UTIL_PCT || !meant_for_device(f)? {
            return None;
        }
        let (min, max) = series
            .filter(|s| !s.is_empty())
            .map(|s| {
                let min = s.iter().copied().fold(f64::INFINITY, f64::min);
                let max = s.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                (Some(min), Some(max))
            })
            .unwrap_or((None, None));
        let name = f.device.name.as_deref().unwrap_or("the device");
        Some(Finding {
            id: ID,
            severity: Severity::Warning,
            evidence: json!({
                "device": f.device.name,
                "util_avg_pct": util,
                "idle_util_pct": IDLE_UTIL_PCT,
                "util_min_pct": min,
                "util_max_pct": max,
                "util_series_pct": series,
            }),
            explanation: format!(
                "{name} had a request in flight only {} of the time on average (below {}), \
                 although the run's I/O was meant for it: the workload did not stress the \
                 device, so the number says more about the application, the engine or the \
                 page cache than about the device. (%util only tells whether anything was in \
                 flight: on devices that serve requests in parallel even 100% is not \
                 saturation, but a low value means the device mostly waited.)",
                pct(util),
                pct(IDLE_UTIL_PCT),
            ),
            fix: "Raise the load (more threads, a deeper iodepth, larger requests) and see \
                  where the time went: engine-cpu-bound, cache-served, ran-dry, or think time \
                  in the workload."
                .into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{self, close, ev, ev_f64};

    #[test]
    fn fires_when_a_cold_read_leaves_the_device_idle() {
        let mut f = testutil::cold_read();
        f.device.util_avg_pct = Some(6.5);
        f.device.util_series_pct = Some(vec![4.0, 7.0, 9.0, 6.0]);
        let x = DeviceIdle.check(&f).expect("fires");
        assert_eq!(x.severity, Severity::Warning);
        close(ev_f64(&x, "util_avg_pct"), 6.5);
        close(ev_f64(&x, "util_min_pct"), 4.0);
        close(ev_f64(&x, "util_max_pct"), 9.0);
        assert_eq!(ev(&x, "util_series_pct")[3], 6.0);
        assert_eq!(ev(&x, "device"), "loop0");
        assert!(x.explanation.contains("6.5% of the time"));
        assert!(x.explanation.contains("in parallel"));
    }

    #[test]
    fn averages_the_series_when_no_average_is_given() {
        let mut f = testutil::sync_write();
        f.device.util_avg_pct = None;
        f.device.util_series_pct = Some(vec![10.0, 12.0, 14.0]);
        let x = DeviceIdle.check(&f).expect("fires for sync writes");
        close(ev_f64(&x, "util_avg_pct"), 12.0);
    }

    #[test]
    fn silent_for_busy_devices() {
        assert_eq!(DeviceIdle.check(&testutil::cold_read()), None);
        assert_eq!(DeviceIdle.check(&testutil::sync_write()), None);
    }

    #[test]
    fn boundary_is_twenty_percent() {
        let mut f = testutil::cold_read();
        f.device.util_avg_pct = Some(20.0);
        assert_eq!(DeviceIdle.check(&f), None);
        f.device.util_avg_pct = Some(19.99);
        assert!(DeviceIdle.check(&f).is_some());
    }

    #[test]
    fn silent_when_the_io_was_not_meant_for_the_device_or_unknown() {
        // Buffered writes: writeback may come after the run.
        let mut f = testutil::sync_write();
        f.sync_requested = Some(false);
        f.sync_scope = Some(SyncScope::Never);
        f.device.util_avg_pct = Some(3.0);
        assert_eq!(DeviceIdle.check(&f), None);
        // One sync at the end of the pass (a buffered single-pattern test): durability was asked
        // for, but the device only sees the writes at the end.
        f.sync_requested = Some(true);
        f.sync_scope = Some(SyncScope::EndOfPass);
        assert_eq!(DeviceIdle.check(&f), None);
        f.sync_scope = Some(SyncScope::EachWrite);
        assert!(DeviceIdle.check(&f).is_some(), "per-record syncs are");
        f.sync_requested = None;
        f.sync_scope = None;
        assert_eq!(DeviceIdle.check(&f), None);
        f.o_direct = Some(true);
        assert!(
            DeviceIdle.check(&f).is_some(),
            "O_DIRECT writes are meant for it"
        );
        // Warm reads.
        let mut f = testutil::cold_read();
        f.device.util_avg_pct = Some(3.0);
        f.reads_cold = Some(false);
        assert_eq!(DeviceIdle.check(&f), None);
        // No util at all (tmpfs).
        let mut f = testutil::cold_read();
        f.device.util_avg_pct = None;
        f.device.util_series_pct = None;
        assert_eq!(DeviceIdle.check(&f), None);
    }
}
