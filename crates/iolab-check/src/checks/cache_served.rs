//! `cache-served`: the device read far fewer bytes than the application read.
//!
//! Needs: `app_read_bytes` (> 0), `device.read_bytes`, `reads_cold`, and `o_direct` not
//! `Some(true)` (O_DIRECT reads that miss the device are `direct-not-direct`'s finding).
//! Uses, when known, `caches_dropped`, `cached_at_start_bytes`, `dataset_bytes` and the cache
//! size for the explanation.
//!
//! Fires when `device read bytes < 50% × app read bytes`, and says which case it is:
//! * reads meant to be cold (caches dropped) → warning: the number measures the page cache,
//!   not the device it claims to;
//! * reads not meant to be cold (caches kept, buffered) → info: served from memory by design.

use crate::format::{pct_of_fraction, ratio};
use crate::{Check, Finding, RunFacts, Severity};
use iolab_util::units::format_bytes;
use serde_json::json;

const ID: &str = "cache-served";

/// "Far fewer": with at most half of the bytes coming from the device, most reads were served
/// from memory. Readahead and whole-block reads only push the device's count *up*, so a
/// healthy cold run sits near or above 100% and 50% leaves room for metadata-only noise.
pub const MIN_DEVICE_FRACTION: f64 = 0.5;

/// See the [module documentation](self).
pub struct CacheServed;

impl Check for CacheServed {
    fn id(&self) -> &'static str {
        ID
    }

    fn check(&self, f: &RunFacts) -> Option<Finding> {
        if f.o_direct == Some(true) {
            return None;
        }
        let app = f.app_read_bytes?;
        let dev = f.device.read_bytes?;
        let frac = ratio(dev, app)?;
        if frac >= MIN_DEVICE_FRACTION {
            return None;
        }
        let cold = f.reads_cold?;
        let evidence = json!({
            "app_read_bytes": app,
            "device_read_bytes": dev,
            "device_fraction": frac,
            "min_device_fraction": MIN_DEVICE_FRACTION,
            "reads_cold": cold,
            "caches_dropped": f.caches_dropped,
            "cached_at_start_bytes": f.cached_at_start_bytes,
            "dataset_bytes": f.dataset_bytes,
            "cache_bytes": f.cache_capacity_bytes(),
        });
        let seen = format!(
            "the device{} read {} — {} of the {} the application read",
            f.device
                .name
                .as_deref()
                .map(|n| format!(" ({n})"))
                .unwrap_or_default(),
            format_bytes(dev),
            pct_of_fraction(frac),
            format_bytes(app),
        );
        if !cold {
            return Some(Finding {
                id: ID,
                severity: Severity::Info,
                evidence,
                explanation: format!(
                    "The reads were not meant to be cold (caches not dropped, no O_DIRECT), and \
                     {seen}: the page cache served the rest. The number measures cached reads \
                     — fine if that is the question, not a measure of the device."
                ),
                fix: "To measure the device, drop caches before each run \
                      (`procedure.drop_caches = true`) or read with O_DIRECT."
                    .into(),
            });
        }
        let mut why = String::new();
        if let Some(c) = f.cached_at_start_bytes {
            why += &format!(" Cached was {} at the start.", format_bytes(c));
        }
        if let (Some(d), Some(c)) = (f.dataset_bytes, f.cache_capacity_bytes()) {
            if d <= c {
                why += &format!(
                    " The dataset ({}) fits in the memory that could cache it ({}), so \
                     re-reads hit the cache.",
                    format_bytes(d),
                    format_bytes(c)
                );
            }
        }
        Some(Finding {
            id: ID,
            severity: Severity::Warning,
            evidence,
            explanation: format!(
                "The reads were meant to hit the device{}, but {seen}: the page cache served \
                 the rest, so the number measures memory, not the device.{why}",
                match f.caches_dropped {
                    Some(true) => " (caches were dropped before the run)",
                    _ => "",
                }
            ),
            fix: "Make the dataset larger than the cache (at least 3×; see cache-fit) or cap \
                  the cache with `sut.cache_limit`; check that the drop worked \
                  (`procedure.drop_caches`); or read with O_DIRECT."
                .into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{self, close, ev, ev_f64, GIB, MIB};

    #[test]
    fn fires_when_a_cold_read_misses_the_device() {
        let mut f = testutil::cold_read();
        f.device.read_bytes = Some(96 * MIB);
        f.dataset_bytes = Some(200 * MIB);
        let x = CacheServed.check(&f).expect("fires");
        assert_eq!(x.severity, Severity::Warning);
        assert_eq!(ev(&x, "app_read_bytes"), GIB);
        assert_eq!(ev(&x, "device_read_bytes"), 96 * MIB);
        assert_eq!(ev(&x, "cached_at_start_bytes"), 180 * MIB);
        close(ev_f64(&x, "device_fraction"), 96.0 / 1024.0);
        assert!(
            x.explanation.contains("9.4% of the 1 GiB"),
            "{}",
            x.explanation
        );
        assert!(x.explanation.contains("(loop0)"));
        assert!(x.explanation.contains("caches were dropped"));
        assert!(x.explanation.contains("fits in the memory"));
    }

    #[test]
    fn says_info_when_reads_were_not_meant_to_be_cold() {
        let mut f = testutil::cold_read();
        f.reads_cold = Some(false);
        f.caches_dropped = Some(false);
        f.device.read_bytes = Some(0);
        let x = CacheServed.check(&f).expect("fires");
        assert_eq!(x.severity, Severity::Info);
        assert_eq!(ev(&x, "reads_cold"), false);
        assert!(x.explanation.contains("not meant to be cold"));
        assert!(x.fix.contains("drop_caches"));
    }

    #[test]
    fn silent_when_the_device_read_it_all() {
        assert_eq!(CacheServed.check(&testutil::cold_read()), None);
        assert_eq!(CacheServed.check(&testutil::sync_write()), None, "no reads");
    }

    #[test]
    fn boundary_is_half_the_bytes() {
        let mut f = testutil::cold_read();
        f.device.read_bytes = Some(GIB / 2);
        assert_eq!(CacheServed.check(&f), None);
        f.device.read_bytes = Some(GIB / 2 - 512);
        assert!(CacheServed.check(&f).is_some());
    }

    #[test]
    fn leaves_o_direct_to_direct_not_direct_and_unknowns_alone() {
        let mut f = testutil::cold_read();
        f.device.read_bytes = Some(0);
        let mut g = f.clone();
        g.o_direct = Some(true);
        assert_eq!(CacheServed.check(&g), None);
        let mut g = f.clone();
        g.reads_cold = None;
        assert_eq!(CacheServed.check(&g), None);
        let mut g = f.clone();
        g.device.read_bytes = None;
        assert_eq!(CacheServed.check(&g), None);
        let mut g = f;
        g.app_read_bytes = None;
        assert_eq!(CacheServed.check(&g), None);
    }
}
