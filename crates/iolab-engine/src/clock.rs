//! Timestamps for the hot loop.
//!
//! `Instant::now()` is a vDSO `clock_gettime`: on these VMs about 34 ns a call, two calls per
//! record — measurable against a 1.2 µs page-cache pread. When the kernel itself trusts the
//! TSC (its clocksource is `tsc`) and the CPU says the TSC is invariant (`constant_tsc` and
//! `nonstop_tsc`), a raw `rdtsc` costs about 12 ns and measures the same time; fio makes the
//! same choice (its `clocksource=cpu`). Ticks are converted with a factor calibrated against
//! CLOCK_MONOTONIC at start-up (10 ms; error < 10 ppm). Anywhere else, ticks are nanoseconds
//! from `Instant`.

use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy)]
pub struct Clock {
    origin: Instant,
    tsc: Option<Tsc>,
}

#[derive(Debug, Clone, Copy)]
struct Tsc {
    origin: u64,
    ns_per_tick: f64,
    /// `ns_per_tick` in 32.32 fixed point: the hot path converts with one integer multiply
    /// instead of two int↔float conversions (a few ns a record).
    ns_per_tick_q32: u64,
}

impl Tsc {
    fn new(origin: u64, ns_per_tick: f64) -> Tsc {
        Tsc {
            origin,
            ns_per_tick,
            ns_per_tick_q32: (ns_per_tick * (1u64 << 32) as f64).round() as u64,
        }
    }
}

impl Clock {
    /// Calibrates once; takes about 10 ms when the TSC is usable.
    pub fn new() -> Clock {
        match calibrate() {
            Some((origin, tsc)) => Clock {
                origin,
                tsc: Some(tsc),
            },
            None => Clock::monotonic(),
        }
    }

    /// A clock that never uses the TSC (for tests and comparison).
    pub fn monotonic() -> Clock {
        Clock {
            origin: Instant::now(),
            tsc: None,
        }
    }

    pub fn uses_tsc(&self) -> bool {
        self.tsc.is_some()
    }

    /// A timestamp in ticks; only differences and [`Clock::ns`] of them mean anything.
    #[inline]
    pub fn ticks(&self) -> u64 {
        match self.tsc {
            Some(_) => rdtsc(),
            None => self.origin.elapsed().as_nanos() as u64,
        }
    }

    /// Nanoseconds in `ticks` ticks.
    #[inline]
    pub fn ns(&self, ticks: u64) -> u64 {
        match self.tsc {
            Some(t) => ((u128::from(ticks) * u128::from(t.ns_per_tick_q32)) >> 32) as u64,
            None => ticks,
        }
    }

    /// Ticks in a duration (for deadlines and interval boundaries); saturates at `u64::MAX`
    /// (float-to-integer `as` saturates; u128 to u64 would wrap).
    pub fn ticks_in(&self, d: Duration) -> u64 {
        match self.tsc {
            Some(t) => (d.as_nanos() as f64 / t.ns_per_tick) as u64,
            None => u64::try_from(d.as_nanos()).unwrap_or(u64::MAX),
        }
    }

    /// The timestamp of an instant.
    pub fn ticks_at(&self, at: Instant) -> u64 {
        let ns =
            u64::try_from(at.saturating_duration_since(self.origin).as_nanos()).unwrap_or(u64::MAX);
        match self.tsc {
            Some(t) => t.origin.saturating_add((ns as f64 / t.ns_per_tick) as u64),
            None => ns,
        }
    }

    /// The timestamp `d` after `at`. A limit beyond the clock's range (`--time 9999999999s`)
    /// saturates to `u64::MAX`, a deadline that never comes, instead of wrapping to one that
    /// has already passed.
    pub fn deadline(&self, at: Instant, d: Duration) -> u64 {
        self.ticks_at(at).saturating_add(self.ticks_in(d))
    }
}

impl Default for Clock {
    fn default() -> Self {
        Clock::new()
    }
}

#[cfg(target_arch = "x86_64")]
#[inline]
fn rdtsc() -> u64 {
    // SAFETY: rdtsc has no preconditions on x86_64.
    unsafe { core::arch::x86_64::_rdtsc() }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline]
fn rdtsc() -> u64 {
    0
}

fn tsc_trusted() -> bool {
    if !cfg!(target_arch = "x86_64") {
        return false;
    }
    let source =
        std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource")
            .unwrap_or_default();
    if source.trim() != "tsc" {
        return false;
    }
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let flags = cpuinfo
        .lines()
        .find(|l| l.starts_with("flags"))
        .unwrap_or_default();
    let has = |f: &str| flags.split_whitespace().any(|x| x == f);
    has("constant_tsc") && has("nonstop_tsc")
}

/// The instant and TSC value read together at the start, and the tick length.
fn calibrate() -> Option<(Instant, Tsc)> {
    if !tsc_trusted() {
        return None;
    }
    let (i0, t0) = (Instant::now(), rdtsc());
    std::thread::sleep(Duration::from_millis(10));
    let (i1, t1) = (Instant::now(), rdtsc());
    let ticks = t1.checked_sub(t0).filter(|&t| t > 0)?;
    Some((i0, Tsc::new(t0, (i1 - i0).as_nanos() as f64 / ticks as f64)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_measure_real_time() {
        for clock in [Clock::new(), Clock::monotonic()] {
            let a = clock.ticks();
            let i = Instant::now();
            std::thread::sleep(Duration::from_millis(50));
            let b = clock.ticks();
            let real = i.elapsed().as_nanos() as f64;
            let measured = clock.ns(b - a) as f64;
            assert!(
                (measured / real - 1.0).abs() < 0.01,
                "tsc {}: {measured} vs {real}",
                clock.uses_tsc()
            );
            let one_s = clock.ns(clock.ticks_in(Duration::from_secs(1)));
            assert!(one_s.abs_diff(1_000_000_000) < 1000, "{one_s}");
        }
    }

    #[test]
    fn huge_limits_saturate_instead_of_wrapping() {
        const NS: u64 = 1_000_000_000;
        let now = Instant::now();
        // A 3 GHz TSC that has been counting for a while, and the plain monotonic clock.
        let tsc = Clock {
            origin: now,
            tsc: Some(Tsc::new(1 << 62, 1.0 / 3.0)),
        };
        for clock in [tsc, Clock::monotonic()] {
            let at = clock.ticks_at(now);
            for d in [
                Duration::from_secs(9_999_999_999),
                // 2^64 ns + 1 ms: as_nanos() as u64 would wrap to 1 ms.
                Duration::new(18_446_744_073, 710_551_616),
                Duration::MAX,
            ] {
                let end = clock.deadline(now, d);
                // At least 285 years away, or as far as the clock goes.
                assert!(
                    end == u64::MAX || (end > at && clock.ns(end - at) >= 9_000_000_000 * NS),
                    "tsc {}: {d:?} gave a deadline {} ns away",
                    clock.uses_tsc(),
                    clock.ns(end.wrapping_sub(at))
                );
            }
            assert_eq!(clock.deadline(now, Duration::MAX), u64::MAX);
            // Ordinary limits are unchanged.
            let one = clock.deadline(now, Duration::from_secs(1)) - at;
            assert!(clock.ns(one).abs_diff(1_000_000_000) < 1000);
        }
    }

    #[test]
    fn fixed_point_conversion_matches_floating_point() {
        // Tick lengths of 0.3-4 GHz TSCs; tick counts from one to a day's worth.
        for ns_per_tick in [0.25, 0.3571, 0.4166666, 1.0, 3.3333] {
            let c = Clock {
                origin: Instant::now(),
                tsc: Some(Tsc::new(0, ns_per_tick)),
            };
            for ticks in [1u64, 7, 1_000, 123_456_789, 86_400_000_000_000 * 4] {
                let exact = ticks as f64 * ns_per_tick;
                let got = c.ns(ticks) as f64;
                assert!(
                    (got - exact).abs() <= 1.0 + exact * 1e-9,
                    "{ticks} ticks of {ns_per_tick} ns: {got} vs {exact}"
                );
            }
        }
    }
}
