//! filebench's result text with its own format strings (stats.c, `stats_snap`), so that
//! scripts that parse filebench output keep working:
//!
//! ```text
//! %4.3f: Per-Operation Breakdown
//! %-20s %dops %8.0lfops/s %5.1lfmb/s %8.3fms/op [%.3fms - %5.3fms]
//! %4.3f: IO Summary: %5d ops %5.3lf ops/s %0.0lf/%0.0lf rd/wr %5.1lfmb/s %5.3fms/op
//! ```
//!
//! Flowops are listed in reverse order of definition, as filebench's flowop list has them.
//! The leading timestamp is the run's elapsed time; rates divide by the measured interval.

use std::io::{self, Write};

use super::{secs, RunFormatter, RunReport};

pub struct Filebench;

impl RunFormatter for Filebench {
    fn write(&self, report: &RunReport, out: &mut dyn Write) -> io::Result<()> {
        let r = &report.result;
        let t = secs(r);
        writeln!(out, "{t:4.3}: Per-Operation Breakdown")?;
        for f in r.flowops.iter().rev() {
            let l = f.latency.summary();
            let (min, max) = if f.ops > 0 {
                (l.min_ns as f64 / 1e6, l.max_ns as f64 / 1e6)
            } else {
                (0.0, 0.0)
            };
            writeln!(
                out,
                "{:<20} {}ops {:8.0}ops/s {:5.1}mb/s {:8.3}ms/op [{:.3}ms - {:5.3}ms]",
                f.name,
                f.ops,
                f.ops as f64 / t,
                f.bytes as f64 / 1048576.0 / t,
                if f.ops > 0 { l.mean_ns / 1e6 } else { 0.0 },
                min,
                max
            )?;
        }
        let (ops, rd, wr, bytes, lat) = r.io_summary();
        writeln!(
            out,
            "{t:4.3}: IO Summary: {ops:5} ops {:5.3} ops/s {:.0}/{:.0} rd/wr {:5.1}mb/s {:5.3}ms/op",
            ops as f64 / t,
            rd as f64 / t,
            wr as f64 / t,
            bytes as f64 / 1048576.0 / t,
            if ops > 0 { lat / ops as f64 / 1e6 } else { 0.0 }
        )
    }
}
