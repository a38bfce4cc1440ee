//! Mobibench's result lines, byte for byte, for the kinds that emulate Mobibench (its file
//! I/O tests, its DB mode), so scripts written for Mobibench keep working: `[CPU] : Active,Idle,
//! IoWait : a b c`, the fields of `[TIME] :%8ld sec %06ldus. …` and `[CON SWITCHES] : total
//! voluntary`.
//!
//! The CPU line uses Mobibench's own arithmetic: the first five /proc/stat columns only
//! (user nice system idle iowait), Active = user + nice + system. It is system-wide, as in
//! Mobibench; iolab's own per-thread CPU figures are in the other formats.

use std::io::{self, Write};

use crate::cli::SystemCpu;
use crate::record::Cpu;

/// `[CPU] : Active,Idle,IoWait : a b c`, from the system-wide CPU times at the start and
/// end of the timed region (zeros when they were not read).
pub fn cpu_line(system_cpu: Option<SystemCpu>, out: &mut dyn Write) -> io::Result<()> {
    let (active, idle, wait) = match system_cpu {
        Some((a, b)) => {
            let d = |x: u64, y: u64| x.saturating_sub(y) as f64;
            let act = d(b.user + b.nice + b.system, a.user + a.nice + a.system);
            let idle = d(b.idle, a.idle);
            let wait = d(b.iowait, a.iowait);
            let total = act + idle + wait;
            if total > 0.0 {
                (
                    act * 100.0 / total,
                    idle * 100.0 / total,
                    wait * 100.0 / total,
                )
            } else {
                (0.0, 0.0, 0.0)
            }
        }
        None => (0.0, 0.0, 0.0),
    };
    writeln!(
        out,
        "[CPU] : Active,Idle,IoWait : {active:.2} {idle:.2} {wait:.2}"
    )
}

/// A number as Mobibench's printf writes it with `decimals` decimals (`%.2f`): `nan` where
/// nothing was measured.
pub fn printf_fixed(value: f64, decimals: usize) -> String {
    if value.is_nan() {
        "nan".into()
    } else {
        format!("{value:.decimals$}")
    }
}

/// The `[TIME]` line's whole seconds, microseconds and `count` per second over `elapsed_ns`.
pub fn time_fields(elapsed_ns: u64, count: u64) -> (u64, u64, f64) {
    let time = elapsed_ns as f64 / 1e9;
    let rate = if time > 0.0 { count as f64 / time } else { 0.0 };
    (
        elapsed_ns / 1_000_000_000,
        (elapsed_ns % 1_000_000_000) / 1000,
        rate,
    )
}

/// `[CON SWITCHES] : total voluntary`, of the threads that did the work.
pub fn switches_line(cpu: &Cpu, out: &mut dyn Write) -> io::Result<()> {
    let vol = cpu.voluntary_switches;
    writeln!(
        out,
        "[CON SWITCHES] : {} {}",
        vol + cpu.involuntary_switches,
        vol
    )
}
