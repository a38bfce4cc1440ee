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

/// Everything, machine-readable, under the one stamp.
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
        iolab_kind::output::json::write(SCHEMA, &doc, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(f: &dyn Formatter<MrcReport>, r: &MrcReport) -> String {
        let mut out = Vec::new();
        f.write(r, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn the_curve_in_each_format_and_json_under_the_one_stamp() {
        // 1 2 1 3 1: the three first requests miss at every size; the second 1 hits from 2
        // blocks, the third from 2 blocks.
        let mrc = iolab_mrc::exact([1, 2, 1, 3, 1]);
        let r = MrcReport {
            trace: "t.oracleGeneral".into(),
            format: "oracleGeneral",
            method: "exact".into(),
            curve: mrc.curve(&[1, 2]),
            mrc,
            structure_bytes: 64,
            elapsed_s: 0.5,
        };
        let json = text(&Json, &r);
        let stamp = format!(
            "{{\n  \"schema\": \"{SCHEMA}\",\n  \"iolab_version\": \"{}\",\n",
            env!("CARGO_PKG_VERSION")
        );
        assert!(json.starts_with(&stamp), "{json}");
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(
            (v["requests"].as_u64(), v["cold_misses"].as_u64()),
            (Some(5), Some(3))
        );
        assert_eq!(v["curve"][0]["misses"], 5);
        assert_eq!(v["curve"][1]["misses"], 3);
        assert_eq!(
            text(&Csv, &r),
            "size_blocks,miss_ratio,misses\n1,1.000000,5\n2,0.600000,3\n"
        );
        assert!(text(&Human, &r).ends_with("             2      0.6000               3\n"));
        assert_eq!(
            r.summary(),
            "t.oracleGeneral: 5 requests (oracleGeneral), 3 first requests; LRU miss-ratio curve, exact, 0.50 s"
        );
    }
}
