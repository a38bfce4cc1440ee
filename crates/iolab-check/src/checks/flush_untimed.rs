//! `flush-untimed`: a write figure whose timed window ended before the data reached the
//! device — the page cache's speed, quoted as the storage's (seed report 001's iozone runs
//! without `-e`).
//!
//! Needs: written bytes (`app_write_bytes` > 0), `flush_timed = Some(false)`, `o_direct` not
//! `Some(true)`, and one of:
//! * `untimed_flush`: the passes' timed time and the flush after it (iolab's own iozone
//!   flushes outside the figure, inside the run). Fires (warning) when the flush took at
//!   least [`MAX_UNTIMED_SHARE`] of the time the writes took to reach the device;
//! * `device.write_bytes` over the timed region, for a tool that leaves its writes to the
//!   kernel's write-back after it exits. Fires when the device wrote less than
//!   [`MAX_DEVICE_FRACTION`] of what was written;
//! * for a tool that flushes after its window but before it exits (iozone without `-e`):
//!   `claimed_seconds` and `elapsed_ns`. Fires when the rate it claims is at least
//!   [`MAX_CLAIM_OVER_DEVICE`] times the device's write rate over the run.

use crate::format::{pct_of_fraction, ratio};
use crate::{Check, Finding, RunFacts, Severity};
use iolab_util::units::{format_bytes, format_ns};
use serde_json::json;

const ID: &str = "flush-untimed";

/// Half of the bytes, as the other byte-gap checks: with less than half on the device by the
/// end of the window, the figure is mostly memory bandwidth. Background write-back
/// (`vm.dirty_expire_centisecs`) writes some of it during a long run; that is why the check
/// looks at the device rather than firing on the setting alone.
pub const MAX_DEVICE_FRACTION: f64 = 0.5;

/// Half of the time: when the flush the figure leaves out took as long as the writes it
/// times, the figure is at least twice what the storage did.
pub const MAX_UNTIMED_SHARE: f64 = 0.5;

/// Twice: a tool's own start-up and its other passes fall in the run but not in its figure,
/// so an honest write figure can be somewhat above the device's average over the run; twice
/// as fast as the device ever wrote is not start-up.
pub const MAX_CLAIM_OVER_DEVICE: f64 = 2.0;

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
        let who = if f.app_claimed == Some(true) {
            "The tool's"
        } else {
            "The"
        };
        let fix = "Time the flush with the writes (iozone -e, fio end_fsync=1, iolab's \
                   flush = \"included\"), or write with O_DIRECT; or quote the figure as a \
                   page-cache figure.";
        if let Some(u) = f.untimed_flush {
            let total = u.timed_ns + u.flush_ns;
            let share = ratio(u.flush_ns, total)?;
            if share < MAX_UNTIMED_SHARE {
                return None;
            }
            return Some(Finding {
                id: ID,
                severity: Severity::Warning,
                evidence: json!({
                    "app_write_bytes": app,
                    "timed_ns": u.timed_ns,
                    "untimed_flush_ns": u.flush_ns,
                    "untimed_share": share,
                    "max_untimed_share": MAX_UNTIMED_SHARE,
                    "flush_timed": false,
                }),
                explanation: format!(
                    "{who} write figure was timed without its flush: writing {} took {} in the \
                     figure, and the fsync and close after it {} more ({} of the time the \
                     data took to reach the device). The figure is how fast memory took the \
                     writes, {:.1}× what the storage did.",
                    format_bytes(app),
                    format_ns(u.timed_ns as f64),
                    format_ns(u.flush_ns as f64),
                    pct_of_fraction(share),
                    total as f64 / u.timed_ns.max(1) as f64,
                ),
                fix: fix.into(),
            });
        }
        let dev = f.device.write_bytes?;
        let frac = ratio(dev, app)?;
        if frac >= MAX_DEVICE_FRACTION {
            return claimed_beyond_device(f, app, dev, who, fix);
        }
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
                "{who} write figure was timed without flushing: {} were written, but the \
                 device{} wrote {} ({}) before the clock stopped. The rest was still dirty in \
                 the page cache, so the figure is how fast memory took the writes, not the \
                 storage.",
                format_bytes(app),
                f.device
                    .name
                    .as_deref()
                    .map(|n| format!(" ({n})"))
                    .unwrap_or_default(),
                format_bytes(dev),
                pct_of_fraction(frac),
            ),
            fix: fix.into(),
        })
    }
}

/// A tool that flushes after its timed window but before it exits (iozone without `-e`
/// fsyncs untimed): the device wrote the bytes within the run, far slower than the tool
/// claims to have written them.
fn claimed_beyond_device(
    f: &RunFacts,
    app: u64,
    dev: u64,
    who: &str,
    fix: &str,
) -> Option<Finding> {
    if f.app_claimed != Some(true) {
        return None;
    }
    let claimed_s = f.claimed_seconds.filter(|s| *s > 0.0)?;
    let run_s = f.elapsed_ns? as f64 / 1e9;
    if run_s <= 0.0 {
        return None;
    }
    let claimed_rate = app as f64 / claimed_s;
    let device_rate = dev as f64 / run_s;
    let times = claimed_rate / device_rate.max(1.0);
    if times < MAX_CLAIM_OVER_DEVICE {
        return None;
    }
    Some(Finding {
        id: ID,
        severity: Severity::Warning,
        evidence: json!({
            "app_write_bytes": app,
            "claimed_seconds": claimed_s,
            "claimed_bytes_per_s": claimed_rate,
            "device_write_bytes": dev,
            "run_seconds": run_s,
            "device_bytes_per_s": device_rate,
            "ratio": times,
            "max_ratio": MAX_CLAIM_OVER_DEVICE,
            "flush_timed": false,
        }),
        explanation: format!(
            "{who} write figure was timed without its flush: it claims {} written at {}/s, \
             but the device took the whole run ({}) to write {} — {}/s, {times:.1}× slower. \
             The flush happened after the tool's clock stopped, so its figure is how fast \
             memory took the writes.",
            format_bytes(app),
            format_bytes(claimed_rate as u64),
            format_ns(run_s * 1e9),
            format_bytes(dev),
            format_bytes(device_rate as u64),
        ),
        fix: fix.into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{self, ev, MIB};
    use crate::UntimedFlush;

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

    /// Seed report 001 on this machine, iolab's iozone with `flush = "excluded"`: the 96 MiB
    /// write pass was timed at 24 ms, its flush took 45 ms more; on a file 4× the cache cap
    /// the flush was a fifth of the pass.
    #[test]
    fn fires_when_the_untimed_flush_took_longer_than_the_timed_writes() {
        let mut f = untimed(96 * MIB);
        f.app_claimed = Some(false);
        f.untimed_flush = Some(UntimedFlush {
            timed_ns: 24_000_000,
            flush_ns: 45_000_000,
        });
        let x = FlushUntimed.check(&f).expect("fires");
        assert_eq!(ev(&x, "untimed_flush_ns"), 45_000_000);
        assert!(
            x.explanation.starts_with("The write figure"),
            "{}",
            x.explanation
        );
        assert!(x.explanation.contains("2.9×"), "{}", x.explanation);
        f.untimed_flush = Some(UntimedFlush {
            timed_ns: 172_000_000,
            flush_ns: 47_000_000,
        });
        assert_eq!(FlushUntimed.check(&f), None);
    }

    /// The real iozone without `-e` on this machine: 128 MiB (write and rewrite) claimed in
    /// 17 ms, the device wrote them all during the 0.5 s run (iozone fsyncs untimed).
    #[test]
    fn fires_when_the_claimed_rate_is_far_beyond_the_devices() {
        let mut f = untimed(128 * MIB);
        f.app_write_bytes = Some(128 * MIB);
        f.claimed_seconds = Some(0.017);
        f.elapsed_ns = Some(500_000_000);
        let x = FlushUntimed.check(&f).expect("fires");
        assert_eq!(ev(&x, "device_write_bytes"), 128 * MIB);
        assert!(x.explanation.contains("29.4× slower"), "{}", x.explanation);
        // An honest figure: the device kept up with the claim.
        f.claimed_seconds = Some(0.4);
        assert_eq!(FlushUntimed.check(&f), None);
        // iolab's own counts are not claims.
        f.claimed_seconds = Some(0.017);
        f.app_claimed = Some(false);
        assert_eq!(FlushUntimed.check(&f), None);
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
