//! iozone's `-R` report ("Excel output"), which parses where its fixed-width table does not:
//! in single-stream mode a block per figure — `"Writer report"`, a row of quoted record sizes
//! in kB, then per file size a row `"<file kB>"` followed by kB/s per record size (0 for a
//! cell auto mode skips; the row ends at the first record larger than the file); in
//! throughput mode iozone's throughput block, one row of "children see" kB/s per test.
//! Units are iozone's: 1 kB = 1024 bytes, rates truncated to whole kB/s as iozone prints them.
//! With `--cpu-utilization` (iozone's `-+u`), the same blocks again for CPU utilization in
//! percent, after the throughput ones, as iozone prints them. With `--ops` (iozone's `-O`),
//! the rates are operations (records) per second instead of kB/s; with `--us-per-op`
//! (`-N`, single stream only), microseconds per operation.
//!
//! The blocks are laid out once ([`sections`]); this module prints them as the `-R` text,
//! [`super::xls`] as the `-b` workbook.

use std::io::{self, Write};

use iolab_kind::output::Formatter;

use super::{children_and_parent, rate, IozoneReport, Run};
use crate::{Figure, FigureResult};

pub struct Iozone;

impl Formatter<IozoneReport> for Iozone {
    fn write(&self, report: &IozoneReport, out: &mut dyn Write) -> io::Result<()> {
        let mut first_grid = true;
        for section in sections(report) {
            match section {
                Section::Grids { cell, grids } => {
                    if first_grid {
                        writeln!(out, "Excel output is below:")?;
                        first_grid = false;
                    }
                    for g in &grids {
                        grid_text(g, cell, out)?;
                    }
                }
                Section::Throughput(t) => throughput_text(&t, out)?,
            }
        }
        Ok(())
    }
}

/// What a block shows per cell: iozone's kB/s, operations per second (`-O`), microseconds
/// per operation (`-N`), or (`-+u`) its CPU utilization.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Cell {
    Rate,
    Ops,
    Us,
    Cpu,
}

impl Cell {
    /// The value of figure `f` of a run with `record`-byte records; `rate` is the figure's
    /// stored rate in bytes/s (iolab's in single stream, "children see" in throughput mode).
    /// 0 when not finite (a cell iozone has no number for).
    fn value(self, f: &FigureResult, rate: f64, record: u64) -> f64 {
        let v = match self {
            Cell::Rate => rate / 1024.0,
            Cell::Ops => rate / record as f64,
            Cell::Us if f.ops() == 0 => 0.0,
            Cell::Us => f.elapsed_ns as f64 / 1000.0 / f.ops() as f64,
            Cell::Cpu => f.cpu_utilization(),
        };
        if v.is_finite() {
            v
        } else {
            0.0
        }
    }

    /// The single-stream value as iozone holds it: rates truncated to whole units, CPU
    /// utilization as it is.
    fn held(self, v: f64) -> f64 {
        if self == Cell::Cpu {
            v
        } else {
            v.trunc()
        }
    }
}

/// iozone's report, laid out once for its `-R` text and its `-b` workbook.
pub(super) enum Section {
    /// The single-stream blocks of one kind of cell, a block per figure.
    Grids { cell: Cell, grids: Vec<Grid> },
    /// A throughput-mode block.
    Throughput(ThroughputBlock),
}

/// One figure's block: a header of record sizes, a row per file size.
pub(super) struct Grid {
    pub figure: Figure,
    /// Record sizes in bytes (the header).
    pub records: Vec<u64>,
    /// Per file size (bytes): a value per record size up to the file's size (0 for a cell
    /// that did not run), as iozone holds it.
    pub rows: Vec<(u64, Vec<f64>)>,
}

/// A throughput-mode block over runs of one file and record size.
pub(super) struct ThroughputBlock {
    pub cell: Cell,
    pub record: u64,
    /// Per test iozone knows: its label and a value per run (thread count).
    pub rows: Vec<(&'static str, Vec<f64>)>,
}

/// The report's sections in iozone's order: the single-stream rate blocks, then their CPU
/// blocks (`-+u`); the throughput blocks, each followed by its CPU block.
pub(super) fn sections(report: &IozoneReport) -> Vec<Section> {
    let (throughput, single): (Vec<&Run>, Vec<&Run>) = report
        .runs
        .iter()
        .partition(|r| r.output.plan.throughput_mode());
    let rate = if report.ops {
        Cell::Ops
    } else if report.us_per_op {
        Cell::Us
    } else {
        Cell::Rate
    };
    let mut cells = vec![rate];
    if report.cpu_utilization {
        cells.push(Cell::Cpu);
    }
    let mut out = Vec::new();
    if !single.is_empty() {
        for &cell in &cells {
            out.push(Section::Grids {
                cell,
                grids: grids(&single, &report.matrix_records, cell),
            });
        }
    }
    // Runs of the same file and record size (a range of thread counts, iozone -l/-u)
    // share a block: a column per run, in order.
    let mut groups: Vec<Vec<&Run>> = Vec::new();
    for r in throughput {
        let plan = &r.output.plan;
        match groups.iter_mut().find(|g| {
            let first = &g[0].output.plan;
            first.size == plan.size && first.record == plan.record
        }) {
            Some(g) => g.push(r),
            None => groups.push(vec![r]),
        }
    }
    for g in &groups {
        for &cell in &cells {
            out.push(Section::Throughput(throughput_block(g, cell)));
        }
    }
    out
}

/// The single-stream blocks of one kind over every cell.
fn grids(runs: &[&Run], header: &[u64], cell: Cell) -> Vec<Grid> {
    let mut sizes: Vec<u64> = runs.iter().map(|r| r.output.plan.size).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let mut records: Vec<u64> = runs.iter().map(|r| r.output.plan.record).collect();
    records.extend_from_slice(header);
    records.sort_unstable();
    records.dedup();
    Figure::ALL
        .into_iter()
        // Random mix has no single-stream block in iozone. A re-test skipped by
        // `retests = false` (iozone -+n) still has its block, of 0s.
        .filter(|&fig| {
            fig.report_title().is_some()
                && runs
                    .iter()
                    .any(|r| r.output.plan.test_figures().any(|f| f == fig))
        })
        .map(|fig| Grid {
            figure: fig,
            records: records.clone(),
            rows: sizes
                .iter()
                .map(|&size| {
                    let values = records
                        .iter()
                        .take_while(|&&r| r <= size)
                        .map(|&record| {
                            // A cell auto mode skips is 0, as iozone prints it.
                            runs.iter()
                                .find(|r| {
                                    r.output.plan.size == size && r.output.plan.record == record
                                })
                                .and_then(|r| Some((r, r.output.figure(fig)?)))
                                .map_or(0.0, |(r, f)| {
                                    cell.held(cell.value(f, rate(r, fig), record))
                                })
                        })
                        .collect();
                    (size, values)
                })
                .collect(),
        })
        .collect()
}

/// iozone's throughput-mode block over runs of one file and record size: a row per test it
/// knows, with a column per run (thread count) of "children see" in the cell's unit, or
/// (`-+u`) the CPU utilization.
fn throughput_block(runs: &[&Run], cell: Cell) -> ThroughputBlock {
    let rows = Figure::THROUGHPUT_ORDER
        .into_iter()
        .filter(|&fig| {
            runs.iter()
                .any(|r| r.output.plan.test_figures().any(|f| f == fig))
        })
        .map(|fig| {
            let values = runs
                .iter()
                .map(|r| {
                    // A skipped re-test (iozone -+n) is 0.00, as iozone prints it.
                    r.output.figure(fig).map_or(0.0, |f| {
                        cell.value(f, children_and_parent(r, f).0, r.output.plan.record)
                    })
                })
                .collect();
            (fig.throughput_label().unwrap_or_default(), values)
        })
        .collect();
    ThroughputBlock {
        cell,
        record: runs[0].output.plan.record,
        rows,
    }
}

/// A single-stream block's title from its figure's `title` (ending in `suffix`: the text's
/// " report", the workbook's " Report"): the title itself, or for the CPU blocks iozone's
/// "… CPU utilization report (Zero values should be ignored)".
pub(super) fn block_title(title: &str, suffix: &str, cell: Cell) -> String {
    match cell {
        Cell::Rate | Cell::Ops | Cell::Us => title.to_string(),
        Cell::Cpu => format!(
            "{} CPU utilization report (Zero values should be ignored)",
            title.strip_suffix(suffix).unwrap_or(title)
        ),
    }
}

fn grid_text(g: &Grid, cell: Cell, out: &mut dyn Write) -> io::Result<()> {
    let title = g.figure.report_title().unwrap_or_default();
    writeln!(out, "\n\"{}\"", block_title(title, " report", cell))?;
    write!(out, "      ")?;
    for r in &g.records {
        write!(out, "  \"{}\"", r / 1024)?;
    }
    writeln!(out)?;
    for (i, (size, values)) in g.rows.iter().enumerate() {
        if i > 0 {
            writeln!(out)?;
        }
        write!(out, "\"{}\"  ", size / 1024)?;
        for &v in values {
            match cell {
                // Truncated, as iozone prints its rates.
                Cell::Rate | Cell::Ops | Cell::Us => write!(out, " {} ", v as u64)?,
                Cell::Cpu => write!(out, " {v:6.2}")?,
            }
        }
    }
    writeln!(out)
}

/// A throughput block's three header lines (the text's, unquoted).
pub(super) fn throughput_head(t: &ThroughputBlock) -> [String; 3] {
    let (what, unit) = match t.cell {
        Cell::Rate => ("Throughput", "kBytes/sec"),
        Cell::Ops => ("Throughput", "ops/sec"),
        Cell::Us => ("Throughput", "microseconds/op"),
        Cell::Cpu => ("CPU utilization", "CPU%"),
    };
    [
        format!("{what} report Y-axis is type of test X-axis is number of threads"),
        format!("Record size = {} kBytes", t.record / 1024),
        format!("Output is in {unit}"),
    ]
}

fn throughput_text(t: &ThroughputBlock, out: &mut dyn Write) -> io::Result<()> {
    let [title, record, unit] = throughput_head(t);
    writeln!(out, "\n\"{title}\"")?;
    writeln!(out, "\"{record} \"")?;
    writeln!(out, "\"{unit}\"\n")?;
    for (label, values) in &t.rows {
        write!(out, "\"{label:>15} \"")?;
        for v in values {
            write!(out, " {v:>10.2} ")?;
        }
        writeln!(out, "\n")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix::{self, Bounds};
    use crate::output::testing::{self, recorded};

    /// A run of `size` × `record` whose write pass moved `size` bytes in one second.
    fn result(size: u64, record: u64) -> Run {
        recorded(testing::result(size, record, 1, 1_000_000_000))
    }

    /// A report of `runs` with no option set.
    fn base(runs: Vec<Run>) -> IozoneReport {
        testing::report(runs)
    }

    fn render(report: &IozoneReport) -> String {
        let mut out = Vec::new();
        Iozone.write(report, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn ops_are_records_per_second_and_cpu_blocks_follow_the_rates() {
        // 1 MiB in 4 KiB records in one second: 1024 kB/s, 256 ops/s, 3906.25 µs per op.
        let one = || base(vec![result(1 << 20, 4 << 10)]);
        let cell = |v: &str| format!("\"Writer report\"\n        \"4\"\n\"1024\"   {v} \n");
        let text = render(&one());
        assert!(text.contains(&cell("1024")), "{text}");
        let text = render(&IozoneReport { ops: true, ..one() });
        assert!(text.contains(&cell("256")), "{text}");
        assert!(!text.contains("CPU utilization"));
        let text = render(&IozoneReport {
            us_per_op: true,
            ..one()
        });
        assert!(text.contains(&cell("3906")), "{text}");
        let text = render(&IozoneReport {
            cpu_utilization: true,
            ..one()
        });
        let rates = text.find("\"Re-writer report\"").unwrap();
        let cpu = text
            .find("\"Writer CPU utilization report (Zero values should be ignored)\"")
            .unwrap();
        assert!(rates < cpu, "{text}");
        // No CPU time was measured in this synthetic run: 0.00, as iozone prints it.
        assert!(text[cpu..].contains("\"1024\"     0.00\n"), "{text}");
    }

    #[test]
    fn auto_mode_rows_skip_as_iozone_does() {
        // Files of 16 and 32 MiB, records of 4 KiB … 128 KiB: the 32 MiB file skips the
        // records below 64 KiB, which iozone prints as 0.
        let b = Bounds {
            min_size: 16 << 20,
            max_size: 32 << 20,
            min_record: 4 << 10,
            max_record: 128 << 10,
            all_records: false,
        };
        let results = matrix::cells(&b)
            .into_iter()
            .map(|c| result(c.size, c.record))
            .collect();
        let text = render(&IozoneReport {
            matrix_records: matrix::records(&b),
            ..base(results)
        });
        let block = &text[text.find("\"Writer report\"").unwrap()..];
        let lines: Vec<&str> = block.lines().take(4).collect();
        assert_eq!(
            lines[1],
            "        \"4\"  \"8\"  \"16\"  \"32\"  \"64\"  \"128\""
        );
        assert_eq!(
            lines[2],
            "\"16384\"   16384  16384  16384  16384  16384  16384 "
        );
        assert_eq!(lines[3], "\"32768\"   0  0  0  0  32768  32768 ");
        assert!(text.contains("\"Re-writer report\""));
    }
}
