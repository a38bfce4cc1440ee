//! iozone's `-b FILE` workbook: the `-R` report's blocks as cells of an Excel worksheet in the
//! BIFF2 format iozone writes (a BOF record, a LABEL per text cell, a NUMBER per value, an
//! EOF record; little-endian). The cells sit where iozone 3.508 puts them:
//!
//! - single stream: row 0 the command line, row 1 a blank label, row 2 "The top row is
//!   records sizes, the left column is file sizes"; then per figure a title label ("Writer
//!   Report"…), a row of record sizes in kB from column 1, and per file size a row with the
//!   size in kB in column 0 and the values from column 1 (rates as whole kB/s). With the CPU
//!   blocks (`-+u`), one empty row, then the same blocks of CPU utilization.
//! - throughput mode: row 0 the command line, then per block its three header labels and a
//!   row per test: its label in column 0, a value per thread count from column 2.

use super::excel::{self, Cell, Section};
use super::IozoneReport;

/// BIFF record types.
const BOF: u16 = 0x0009;
const NUMBER: u16 = 0x0003;
const LABEL: u16 = 0x0004;
const EOF: u16 = 0x000a;
/// A BIFF2 label holds at most 255 bytes.
const MAX_LABEL: usize = 255;
/// The most columns of a BIFF2 worksheet.
pub const MAX_COLUMNS: usize = 256;
/// A throughput block's values start in this column (iozone's).
pub const THROUGHPUT_FIRST_COLUMN: usize = 2;

/// A BIFF2 worksheet being written.
struct Sheet {
    bytes: Vec<u8>,
}

impl Sheet {
    fn new() -> Sheet {
        let mut s = Sheet { bytes: Vec::new() };
        // Excel version 2, a worksheet.
        s.record(BOF, &[0x02, 0x00, 0x10, 0x00]);
        s
    }

    fn record(&mut self, kind: u16, body: &[u8]) {
        self.bytes.extend_from_slice(&kind.to_le_bytes());
        self.bytes
            .extend_from_slice(&(body.len() as u16).to_le_bytes());
        self.bytes.extend_from_slice(body);
    }

    /// Row, column and the three attribute bytes every cell record starts with.
    fn cell_head(row: u16, col: u16) -> Vec<u8> {
        let mut b = Vec::with_capacity(16);
        b.extend_from_slice(&row.to_le_bytes());
        b.extend_from_slice(&col.to_le_bytes());
        b.extend_from_slice(&[0, 0, 0]);
        b
    }

    fn number(&mut self, row: u16, col: u16, v: f64) {
        let mut b = Sheet::cell_head(row, col);
        b.extend_from_slice(&v.to_le_bytes());
        self.record(NUMBER, &b);
    }

    /// A text cell, in the single-byte code page BIFF2 readers assume: characters up to
    /// U+00FF as Latin-1, any other as `?`; beyond 255 characters the text is cut.
    fn label(&mut self, row: u16, col: u16, text: &str) {
        let bytes: Vec<u8> = text
            .chars()
            .take(MAX_LABEL)
            .map(|c| u8::try_from(u32::from(c)).unwrap_or(b'?'))
            .collect();
        let mut b = Sheet::cell_head(row, col);
        b.push(bytes.len() as u8);
        b.extend_from_slice(&bytes);
        self.record(LABEL, &b);
    }

    fn finish(mut self) -> Vec<u8> {
        self.record(EOF, &[]);
        self.bytes
    }
}

/// The workbook of `report`, headed by `command_line` as iozone heads it with its own.
pub fn workbook(report: &IozoneReport, command_line: &str) -> Vec<u8> {
    let mut s = Sheet::new();
    // Rows beyond 65535 and columns beyond 255 cannot be addressed in BIFF2: they are left
    // out (`iolab iozone --excel` refuses thread ranges that would need them).
    let mut row: u32 = 0;
    let at = |r: u32| u16::try_from(r).ok();
    let put_label = |s: &mut Sheet, r: u32, c: u16, t: &str| {
        if let Some(r) = at(r) {
            s.label(r, c, t)
        }
    };
    let put_number = |s: &mut Sheet, r: u32, c: usize, v: f64| {
        if let (Some(r), true) = (at(r), c < MAX_COLUMNS) {
            s.number(r, c as u16, v)
        }
    };
    put_label(&mut s, row, 0, command_line);
    row += 1;
    let mut first_grid = true;
    for section in excel::sections(report) {
        match section {
            Section::Grids { cell, grids } => {
                if first_grid {
                    put_label(&mut s, row, 0, " ");
                    put_label(
                        &mut s,
                        row + 1,
                        0,
                        "The top row is records sizes, the left column is file sizes",
                    );
                    row += 2;
                    first_grid = false;
                } else if cell == Cell::Cpu {
                    // iozone leaves a row before its CPU blocks.
                    row += 1;
                }
                for g in &grids {
                    let t = g.figure.workbook_title().unwrap_or_default();
                    put_label(&mut s, row, 0, &excel::block_title(t, " Report", cell));
                    row += 1;
                    for (j, r) in g.records.iter().enumerate() {
                        put_number(&mut s, row, j + 1, (r / 1024) as f64);
                    }
                    row += 1;
                    for (size, values) in &g.rows {
                        put_number(&mut s, row, 0, (size / 1024) as f64);
                        for (j, &v) in values.iter().enumerate() {
                            put_number(&mut s, row, j + 1, v);
                        }
                        row += 1;
                    }
                }
            }
            Section::Throughput(t) => {
                for line in excel::throughput_head(&t) {
                    put_label(&mut s, row, 0, &line);
                    row += 1;
                }
                for (label, values) in &t.rows {
                    put_label(&mut s, row, 0, &format!("{label:>15} "));
                    for (j, &v) in values.iter().enumerate() {
                        put_number(&mut s, row, j + THROUGHPUT_FIRST_COLUMN, v);
                    }
                    row += 1;
                }
            }
        }
    }
    s.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The records of a BIFF2 stream: (type, body).
    fn records(bytes: &[u8]) -> Vec<(u16, Vec<u8>)> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < bytes.len() {
            let kind = u16::from_le_bytes([bytes[i], bytes[i + 1]]);
            let len = usize::from(u16::from_le_bytes([bytes[i + 2], bytes[i + 3]]));
            out.push((kind, bytes[i + 4..i + 4 + len].to_vec()));
            i += 4 + len;
        }
        out
    }

    #[test]
    fn records_are_biff2_little_endian_and_long_labels_are_cut() {
        let mut s = Sheet::new();
        s.number(3, 1, 1024.5);
        s.label(258, 0, &format!("{}€", "é".repeat(299)));
        s.label(0, 1, "a€b");
        let r = records(&s.finish());
        assert_eq!(r[0], (BOF, vec![2, 0, 0x10, 0]));
        assert_eq!(r[1].0, NUMBER);
        assert_eq!(&r[1].1[..7], &[3, 0, 1, 0, 0, 0, 0]);
        assert_eq!(
            f64::from_le_bytes(r[1].1[7..15].try_into().unwrap()),
            1024.5
        );
        assert_eq!(r[2].0, LABEL);
        assert_eq!(&r[2].1[..4], &[2, 1, 0, 0], "row 258");
        // Latin-1, one byte a character, cut at 255 characters.
        assert_eq!(r[2].1[7], 255);
        assert_eq!(&r[2].1[8..], &[0xe9; 255][..]);
        assert_eq!(&r[3].1[7..], b"\x03a?b", "no € in the code page");
        assert_eq!(r[4], (EOF, Vec::new()));
    }
}
