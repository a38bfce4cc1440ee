//! mobibench's result lines, byte for byte, so scripts written for mobibench keep working:
//! `[CPU] : Active,Idle,IoWait : a b c`, `[TIME] :%8ld sec %06ldus. …` (+ IOPS for random
//! modes) and `[CON SWITCHES] : total voluntary` (the lines Mobibench's modes share are
//! [`iolab_kind::output::mobibench`]'s).

use std::io::{self, Write};

use iolab_kind::output::mobibench::{cpu_line, printf_fixed, switches_line, time_fields};
use iolab_kind::output::Formatter;

use super::MicroReport;

pub struct Mobibench;

impl Formatter<MicroReport> for Mobibench {
    fn write(&self, report: &MicroReport, out: &mut dyn Write) -> io::Result<()> {
        let r = &report.result;
        cpu_line(report.system_cpu, out)?;
        let (sec, usec, _) = time_fields(r.elapsed_ns, r.bytes);
        // The stored rate; over no time it is NaN, which Mobibench's printf writes `nan`.
        let rate = super::bytes_per_s(report);
        write!(
            out,
            "[TIME] :{sec:>8} sec {usec:06}us. \t{} B/sec, \t{} KB/sec, \t{} MB/sec.",
            printf_fixed(rate, 0),
            printf_fixed(rate / 1024.0, 2),
            printf_fixed(rate / 1024.0 / 1024.0, 2)
        )?;
        if r.plan.access.is_random() {
            // mobibench's records are whole KiB; below that (or between) say bytes, never "0KB".
            let bs = r.plan.bs;
            let label = if bs.is_multiple_of(1024) {
                format!("{}KB", bs / 1024)
            } else {
                format!("{bs}B")
            };
            write!(out, " {} IOPS({label}) ", printf_fixed(rate / bs as f64, 2))?;
        }
        writeln!(out)?;
        switches_line(&r.usage.cpu(), out)
    }
}
