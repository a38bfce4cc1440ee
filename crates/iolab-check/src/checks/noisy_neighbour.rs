//! `noisy-neighbour`: other processes used a notable share of the CPU or of the device during
//! the run.
//!
//! Needs, for the CPU part: `cpu_busy_pct` and `engine_cpu_pct` (others = busy − own); for
//! the I/O part: `other_io_bytes` and `device.read_bytes` + `device.write_bytes`. Either part
//! alone can fire; a part whose facts are unknown is skipped.
//!
//! Fires (warning) when others used ≥ 10% of the machine's CPU on average, or moved ≥ 1% of
//! the bytes the device moved during the run.

use crate::format::{pct, pct_of_fraction};
use crate::{Check, Finding, RunFacts, Severity};
use iolab_util::units::format_bytes;
use serde_json::json;

const ID: &str = "noisy-neighbour";

/// 10% of the machine: the level at which other work visibly competes for cores, memory
/// bandwidth and caches (on a 4-CPU VM, 40% of one core); below it, an idle system's
/// housekeeping and the kernel's own work for the run (interrupts, writeback) fit.
pub const OTHERS_CPU_PCT: f64 = 10.0;

/// 1% of the device's bytes: the run's device should carry the run alone; a share this size
/// is already comparable to the run-to-run noise the stopping rule tries to resolve (5%).
pub const OTHER_IO_FRACTION: f64 = 0.01;

/// See the [module documentation](self).
pub struct NoisyNeighbour;

impl Check for NoisyNeighbour {
    fn id(&self) -> &'static str {
        ID
    }

    fn check(&self, f: &RunFacts) -> Option<Finding> {
        let others_cpu = match (f.cpu_busy_pct, f.engine_cpu_pct) {
            (Some(busy), Some(own)) if busy.is_finite() && own.is_finite() => {
                Some((busy - own).max(0.0))
            }
            _ => None,
        };
        let device_bytes = f
            .device
            .read_bytes
            .zip(f.device.write_bytes)
            .map(|(r, w)| r.saturating_add(w));
        let other_io = f.other_io_bytes.zip(device_bytes);
        let io_fraction = other_io.map(|(other, dev)| {
            if dev == 0 {
                if other == 0 {
                    0.0
                } else {
                    1.0
                }
            } else {
                other as f64 / dev as f64
            }
        });
        let cpu_fires = others_cpu.is_some_and(|p| p >= OTHERS_CPU_PCT);
        let io_fires = io_fraction.is_some_and(|x| x >= OTHER_IO_FRACTION);
        if !cpu_fires && !io_fires {
            return None;
        }
        let mut what = Vec::new();
        if let (true, Some(p)) = (cpu_fires, others_cpu) {
            what.push(format!(
                "other processes used {} of the machine's CPU on average (all CPUs {} busy, \
                 the engine {}; kernel work for the run outside its threads, such as \
                 writeback, counts here too)",
                pct(p),
                pct(f.cpu_busy_pct.unwrap_or(0.0)),
                pct(f.engine_cpu_pct.unwrap_or(0.0)),
            ));
        }
        if let (true, Some((other, dev)), Some(x)) = (io_fires, other_io, io_fraction) {
            what.push(format!(
                "other processes moved {} on {} — {} of the {} it moved during the run",
                format_bytes(other),
                f.device.name.as_deref().unwrap_or("the device"),
                pct_of_fraction(x),
                format_bytes(dev),
            ));
        }
        let mut text = what.join(", and ");
        if let Some(first) = text.get(..1) {
            text = first.to_uppercase() + &text[1..];
        }
        Some(Finding {
            id: ID,
            severity: Severity::Warning,
            evidence: json!({
                "cpu_busy_pct": f.cpu_busy_pct,
                "engine_cpu_pct": f.engine_cpu_pct,
                "others_cpu_pct": others_cpu,
                "others_cpu_limit_pct": OTHERS_CPU_PCT,
                "other_io_bytes": f.other_io_bytes,
                "device_bytes": device_bytes,
                "other_io_fraction": io_fraction,
                "other_io_limit_fraction": OTHER_IO_FRACTION,
            }),
            explanation: format!(
                "{text}. They compete with the run, so its number is lower and less repeatable \
                 than on a quiet machine."
            ),
            fix: "Find and stop the other load (top, pidstat, iotop during a run), keep the \
                  run's device to itself, and repeat the run."
                .into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{self, close, ev, ev_f64, GIB, MIB};

    #[test]
    fn fires_for_other_cpu_load() {
        let mut f = testutil::cold_read();
        f.cpu_busy_pct = Some(38.0);
        let x = NoisyNeighbour.check(&f).expect("fires");
        assert_eq!(x.severity, Severity::Warning);
        close(ev_f64(&x, "cpu_busy_pct"), 38.0);
        close(ev_f64(&x, "engine_cpu_pct"), 7.5);
        close(ev_f64(&x, "others_cpu_pct"), 30.5);
        assert!(x.explanation.starts_with("Other processes used 30.5%"));
    }

    #[test]
    fn fires_for_other_io_on_the_device() {
        let mut f = testutil::cold_read();
        f.other_io_bytes = Some(200 * MIB);
        let x = NoisyNeighbour.check(&f).expect("fires");
        assert_eq!(ev(&x, "other_io_bytes"), 200 * MIB);
        assert_eq!(ev(&x, "device_bytes"), 1128 * MIB);
        close(ev_f64(&x, "other_io_fraction"), 200.0 / 1128.0);
        assert!(x.explanation.contains("moved 200 MiB on loop0"));
        assert!(!x.explanation.contains("CPU"));
    }

    #[test]
    fn silent_on_a_quiet_machine() {
        assert_eq!(NoisyNeighbour.check(&testutil::cold_read()), None);
        assert_eq!(NoisyNeighbour.check(&testutil::sync_write()), None);
    }

    #[test]
    fn boundaries_are_inclusive() {
        let mut f = testutil::cold_read();
        f.cpu_busy_pct = Some(17.5); // others exactly 10%
        assert!(NoisyNeighbour.check(&f).is_some());
        f.cpu_busy_pct = Some(17.4);
        assert_eq!(NoisyNeighbour.check(&f), None);
        let mut f = testutil::sync_write();
        f.device.read_bytes = Some(0);
        f.device.write_bytes = Some(GIB);
        f.other_io_bytes = Some(GIB / 100 + 1);
        assert!(NoisyNeighbour.check(&f).is_some());
        f.other_io_bytes = Some(GIB / 100 - 1);
        assert_eq!(NoisyNeighbour.check(&f), None);
    }

    #[test]
    fn unknown_facts_are_undecidable() {
        let mut f = testutil::cold_read();
        f.cpu_busy_pct = Some(90.0);
        f.engine_cpu_pct = None;
        assert_eq!(NoisyNeighbour.check(&f), None);
        let mut f = testutil::cold_read();
        f.other_io_bytes = Some(GIB);
        f.device.write_bytes = None;
        assert_eq!(NoisyNeighbour.check(&f), None);
    }
}
