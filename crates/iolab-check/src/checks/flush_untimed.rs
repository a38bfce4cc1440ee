//! `flush-untimed`: a write figure whose timed window ended before the data reached the
//! device — the page cache's speed, quoted as the storage's (seed report 001's iozone runs
//! without `-e`).
//!
//! Needs: `app_write_bytes` (> 0), `flush_timed = Some(false)`, `o_direct` not `Some(true)`,
//! and `device.write_bytes` over the timed region.
//!
//! Fires (warning) when the device wrote less than [`MAX_DEVICE_FRACTION`] of what was
//! written: most of it was still dirty in memory when the clock stopped.

use crate::format::{pct_of_fraction, ratio};
use crate::{Check, Finding, RunFacts, Severity};
use iolab_util::units::format_bytes;
use serde_json::json;

const ID: &str = "flush-untimed";

/// Half, as the other byte-gap checks: with less than half on the device by the end of the
/// window, the figure is mostly memory bandwidth. Background write-back
/// (`vm.dirty_expire_centisecs`) writes some of it during a long run; that is why the check
/// looks at the device rather than firing on the setting alone.
pub const MAX_DEVICE_FRACTION: f64 = 0.5;

/// See the [module documentation](self).
pub struct FlushUntimed;

impl Check for FlushUntimed {
    fn id(&self) -> &'static str {
        ID
    }

    fn check(&self, f: &RunFacts) -> Option<Finding> {
        if f.flush_timed != Some(false) || f.o_direct == Some(true) {
            return None;
        }
        let app = f.app_write_bytes.filter(|b| *b > 0)?;
        let dev = f.device.write_bytes?;
        let frac = ratio(dev, app)?;
        if frac >= MAX_DEVICE_FRACTION {
            return None;
        }
        let who = if f.app_claimed == Some(true) {
            "the tool's"
        } else {
            "the"
        };
        Some(Finding {
            id: ID,
            severity: Severity::Warning,
            evidence: json!({
                "app_write_bytes": app,
                "device_write_bytes": dev,
                "device_fraction": frac,
                "max_device_fraction": MAX_DEVICE_FRACTION,
                "flush_timed": false,
                "dirty_expire_centisecs": f.dirty_expire_centisecs,
            }),
            explanation: format!(
                "{} write figure was timed without flushing: {} were written, but the device{} \
                 wrote {} ({}) before the clock stopped. The rest was still dirty in the page \
                 cache, so the figure is how fast memory took the writes, not the storage.",
                capitalize(who),
                format_bytes(app),
                f.device
                    .name
                    .as_deref()
                    .map(|n| format!(" ({n})"))
                    .unwrap_or_default(),
                format_bytes(dev),
                pct_of_fraction(frac),
            ),
            fix: "Time the flush with the writes (iozone -e, fio end_fsync=1, iolab's \
                  flush = \"included\"), or write with O_DIRECT; or quote the figure as a page-\
                  cache figure."
                .into(),
        })
    }
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{self, ev, MIB};

    fn untimed(dev: u64) -> RunFacts {
        let mut f = testutil::sync_write();
        f.flush_timed = Some(false);
        f.sync_requested = Some(false);
        f.app_claimed = Some(true);
        f.app_write_bytes = Some(96 * MIB);
        f.device.write_bytes = Some(dev);
        f
    }

    #[test]
    fn fires_when_the_device_saw_little_of_an_untimed_write() {
        let x = FlushUntimed.check(&untimed(4 * MIB)).expect("fires");
        assert_eq!(x.severity, Severity::Warning);
        assert_eq!(ev(&x, "device_write_bytes"), 4 * MIB);
        assert!(
            x.explanation.starts_with("The tool's write figure"),
            "{}",
            x.explanation
        );
        assert!(x.explanation.contains("96 MiB"), "{}", x.explanation);
        assert!(x.fix.contains("-e"));
    }

    #[test]
    fn silent_when_timed_direct_or_on_the_device() {
        assert_eq!(FlushUntimed.check(&untimed(90 * MIB)), None);
        let mut f = untimed(0);
        f.flush_timed = Some(true);
        assert_eq!(FlushUntimed.check(&f), None);
        f.flush_timed = None;
        assert_eq!(FlushUntimed.check(&f), None);
        f.flush_timed = Some(false);
        f.o_direct = Some(true);
        assert_eq!(FlushUntimed.check(&f), None);
    }
}
