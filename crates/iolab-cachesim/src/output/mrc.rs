//! `iolab cachesim mrc`'s formats: the curve as a table, as CSV (`size_blocks,miss_ratio,
//! misses`) or as JSON (`iolab.mrc/1`, docs/json.md).

use std::io::{self, Write};

use iolab_kind::output::{thousands, Formatter};
use iolab_mrc::Mrc;
use serde::Serialize;

/// The stamp of `iolab cachesim mrc --format json` (docs/json.md).
pub const SCHEMA: &str = "iolab.mrc/1";

/// A trace's miss-ratio curve and how it was computed.
pub struct MrcReport {
    /// The trace, as given.
    pub trace: String,
    /// Its format's name.
    pub format: &'static str,
    /// `exact`, or the SHARDS sampling used.
    pub method: String,
    pub mrc: Mrc,
    /// (cache size in blocks, miss ratio) at the sizes shown.
    pub curve: Vec<(u64, f64)>,
    /// Memory of the structure that computed it.
    pub structure_bytes: usize,
    pub elapsed_s: f64,
}

impl MrcReport {
    /// The misses at miss ratio `r`.
    fn misses(&self, r: f64) -> u64 {
        (r * self.mrc.requests).round() as u64
    }

    /// What the table's first line says (on standard error, before the table).
    pub fn summary(&self) -> String {
        format!(
            "{}: {} requests ({}), {} first requests; LRU miss-ratio curve, {}, {:.2} s",
            self.trace,
            thousands(self.mrc.requests.round() as u64),
            self.format,
            thousands(self.mrc.cold.round() as u64),
            self.method,
            self.elapsed_s
        )
    }
}

/// A readable table.
pub struct Human;

impl Formatter<MrcReport> for Human {
    fn write(&self, r: &MrcReport, out: &mut dyn Write) -> io::Result<()> {
        writeln!(
            out,
            "{:>14}  {:>10}  {:>14}",
            "size (blocks)", "miss ratio", "misses"
        )?;
        for &(s, ratio) in &r.curve {
            writeln!(
                out,
                "{:>14}  {:>10.4}  {:>14}",
                thousands(s),
                ratio,
                thousands(r.misses(ratio))
            )?;
        }
        Ok(())
    }
}

/// `size_blocks,miss_ratio,misses` per line.
pub struct Csv;

impl Formatter<MrcReport> for Csv {
    fn write(&self, r: &MrcReport, out: &mut dyn Write) -> io::Result<()> {
        writeln!(out, "size_blocks,miss_ratio,misses")?;
        for &(s, ratio) in &r.curve {
            writeln!(out, "{s},{ratio:.6},{}", r.misses(ratio))?;
        }
        Ok(())
    }
}

/// Everything, machine-readable.
pub struct Json;

impl Formatter<MrcReport> for Json {
    fn write(&self, r: &MrcReport, out: &mut dyn Write) -> io::Result<()> {
        #[derive(Serialize)]
        struct Point {
            size_blocks: u64,
            miss_ratio: f64,
            misses: u64,
        }
        #[derive(Serialize)]
        struct Doc<'a> {
            schema: &'static str,
            trace: &'a str,
            format: &'a str,
            method: &'a str,
            requests: u64,
            cold_misses: u64,
            structure_bytes: usize,
            elapsed_s: f64,
            curve: Vec<Point>,
        }
        let doc = Doc {
            schema: SCHEMA,
            trace: &r.trace,
            format: r.format,
            method: &r.method,
            requests: r.mrc.requests.round() as u64,
            cold_misses: r.mrc.cold.round() as u64,
            structure_bytes: r.structure_bytes,
            elapsed_s: r.elapsed_s,
            curve: r
                .curve
                .iter()
                .map(|&(s, ratio)| Point {
                    size_blocks: s,
                    miss_ratio: ratio,
                    misses: r.misses(ratio),
                })
                .collect(),
        };
        serde_json::to_writer_pretty(&mut *out, &doc).map_err(io::Error::other)?;
        writeln!(out)
    }
}
