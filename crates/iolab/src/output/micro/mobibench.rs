//! mobibench's result lines, byte for byte, so scripts written for mobibench keep working:
//! `[CPU] : Active,Idle,IoWait : a b c`, `[TIME] :%8ld sec %06ldus. …` (+ IOPS for random
//! modes) and `[CON SWITCHES] : total voluntary`.
//!
//! The CPU line uses mobibench's own arithmetic: the first five /proc/stat columns only
//! (user nice system idle iowait), Active = user + nice + system. It is system-wide, as in
//! mobibench; iolab's own per-thread CPU figures are in the other formats.

use std::io::{self, Write};

use iolab_engine::usage::Usage;
use iolab_monitor::procstat::CpuTimes;

use super::super::{Formatter, MicroReport};

pub struct Mobibench;

impl Formatter<MicroReport> for Mobibench {
    fn write(&self, report: &MicroReport, out: &mut dyn Write) -> io::Result<()> {
        let r = &report.result;
        cpu_line(report.system_cpu, out)?;
        let (sec, usec, rate) = time_fields(r.elapsed_ns, r.bytes);
        write!(
            out,
            "[TIME] :{sec:>8} sec {usec:06}us. \t{rate:.0} B/sec, \t{:.2} KB/sec, \t{:.2} MB/sec.",
            rate / 1024.0,
            rate / 1024.0 / 1024.0
        )?;
        if r.plan.access.is_random() {
            // mobibench's records are whole KiB; below that (or between) say bytes, never "0KB".
            let bs = r.plan.bs;
            let label = if bs.is_multiple_of(1024) {
                format!("{}KB", bs / 1024)
            } else {
                format!("{bs}B")
            };
            write!(out, " {:.2} IOPS({label}) ", rate / bs as f64)?;
        }
        writeln!(out)?;
        switches_line(&r.usage, out)
    }
}

/// `[CPU] : Active,Idle,IoWait : a b c`, from the system-wide CPU times at the start and
/// end of the timed region (zeros when they were not read).
pub fn cpu_line(system_cpu: Option<(CpuTimes, CpuTimes)>, out: &mut dyn Write) -> io::Result<()> {
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

/// `[CON SWITCHES] : total voluntary`.
pub fn switches_line(usage: &Usage, out: &mut dyn Write) -> io::Result<()> {
    let vol = usage.voluntary_switches;
    writeln!(
        out,
        "[CON SWITCHES] : {} {}",
        vol + usage.involuntary_switches,
        vol
    )
}
