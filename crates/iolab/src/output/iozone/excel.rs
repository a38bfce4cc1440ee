//! iozone's `-R` report ("Excel output"), which parses where its fixed-width table does not:
//! in single-stream mode a block per figure — `"Writer report"`, a row of quoted record sizes
//! in kB, then per file size a row `"<file kB>"` followed by kB/s per record size (0 for a
//! cell auto mode skips; the row ends at the first record larger than the file); in
//! throughput mode iozone's throughput block, one row of "children see" kB/s per test.
//! Units are iozone's: 1 kB = 1024 bytes, rates truncated to whole kB/s as iozone prints them.

use std::io::{self, Write};

use iolab_iozone::{Figure, FigureResult, IozoneResult};

use super::{kib_per_s, IozoneReport};
use crate::output::Formatter;

pub struct Iozone;

impl Formatter<IozoneReport> for Iozone {
    fn write(&self, report: &IozoneReport, out: &mut dyn Write) -> io::Result<()> {
        let (throughput, single): (Vec<&IozoneResult>, Vec<&IozoneResult>) = report
            .results
            .iter()
            .partition(|r| r.plan.throughput_mode());
        if !single.is_empty() {
            excel(&single, &report.matrix_records, out)?;
        }
        for r in throughput {
            throughput_block(r, out)?;
        }
        Ok(())
    }
}

/// The single-stream blocks over every cell.
fn excel(results: &[&IozoneResult], header: &[u64], out: &mut dyn Write) -> io::Result<()> {
    let mut sizes: Vec<u64> = results.iter().map(|r| r.plan.size).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let mut records: Vec<u64> = results.iter().map(|r| r.plan.record).collect();
    records.extend_from_slice(header);
    records.sort_unstable();
    records.dedup();
    writeln!(out, "Excel output is below:")?;
    for fig in Figure::ALL {
        let Some(title) = fig.report_title() else {
            continue;
        };
        if !results.iter().any(|r| r.figure(fig).is_some()) {
            continue;
        }
        writeln!(out, "\n\"{title}\"")?;
        write!(out, "      ")?;
        for r in &records {
            write!(out, "  \"{}\"", r / 1024)?;
        }
        writeln!(out)?;
        for (i, &size) in sizes.iter().enumerate() {
            if i > 0 {
                writeln!(out)?;
            }
            write!(out, "\"{}\"  ", size / 1024)?;
            for &record in records.iter().take_while(|&&r| r <= size) {
                let v = results
                    .iter()
                    .find(|r| r.plan.size == size && r.plan.record == record)
                    .and_then(|r| r.figure(fig))
                    .map_or(0, |f| kib_per_s(f.rate()));
                write!(out, " {v} ")?;
            }
        }
        writeln!(out)?;
    }
    Ok(())
}

/// iozone's throughput-mode `-R` block: a row per test it knows, "children see" in kB/s.
fn throughput_block(r: &IozoneResult, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "\n\"Throughput report Y-axis is type of test X-axis is number of threads\""
    )?;
    writeln!(out, "\"Record size = {} kBytes \"", r.plan.record / 1024)?;
    writeln!(out, "\"Output is in kBytes/sec\"\n")?;
    for fig in Figure::THROUGHPUT_ORDER {
        let Some(f) = r.figure(fig) else { continue };
        let label = fig.throughput_label().unwrap_or_default();
        writeln!(out, "\"{label:>15} \" {:>10.2} \n", children_kib(f))?;
    }
    Ok(())
}

fn children_kib(f: &FigureResult) -> f64 {
    let v = f.children_see() / 1024.0;
    if v.is_finite() {
        v
    } else {
        0.0
    }
}
