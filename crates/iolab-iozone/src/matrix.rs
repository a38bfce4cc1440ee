//! Auto mode's matrix (iozone `-a`): file sizes from 64 KiB to 512 MiB and record sizes from
//! 4 KiB to 16 MiB, each doubling; a record larger than the file is not a cell, and files
//! larger than 16 MiB skip records below 64 KiB ("it takes forever and becomes very
//! uninteresting", iozone's `auto_test`) unless every record size is asked for (`-z`).
//!
//! In iolab every cell is a configuration of its own (factors `size` × `record`), with its
//! own repetitions; the report draws the matrix from them.

use serde::Serialize;

pub const AUTO_MIN_SIZE: u64 = 64 << 10;
pub const AUTO_MAX_SIZE: u64 = 512 << 20;
pub const AUTO_MIN_RECORD: u64 = 4 << 10;
pub const AUTO_MAX_RECORD: u64 = 16 << 20;
/// Files larger than this skip the small records.
pub const CROSSOVER: u64 = 16 << 20;
/// The smallest record of files beyond [`CROSSOVER`].
pub const LARGE_RECORD: u64 = 64 << 10;

/// One cell: a file size and a record size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Cell {
    pub size: u64,
    pub record: u64,
}

/// The bounds of a matrix (iozone `-n`/`-g` for files, `-y`/`-q` for records, `-z`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    pub min_size: u64,
    pub max_size: u64,
    pub min_record: u64,
    pub max_record: u64,
    /// Keep the small records of large files (iozone `-z`).
    pub all_records: bool,
}

impl Default for Bounds {
    fn default() -> Self {
        Bounds {
            min_size: AUTO_MIN_SIZE,
            max_size: AUTO_MAX_SIZE,
            min_record: AUTO_MIN_RECORD,
            max_record: AUTO_MAX_RECORD,
            all_records: false,
        }
    }
}

/// Whether iozone's auto mode skips this cell (it prints 0 for it in its `-R` report).
pub fn skipped(cell: Cell, all_records: bool) -> bool {
    !all_records && cell.size > CROSSOVER && cell.record < LARGE_RECORD
}

/// The doublings of `min` up to `max` (`min` itself when it is above `max`: no values).
fn doublings(min: u64, max: u64) -> impl Iterator<Item = u64> {
    std::iter::successors(Some(min.max(1)), |&v| v.checked_mul(2)).take_while(move |&v| v <= max)
}

/// The file sizes of the matrix, smallest first.
pub fn sizes(b: &Bounds) -> Vec<u64> {
    doublings(b.min_size, b.max_size).collect()
}

/// The record sizes of the matrix, smallest first.
pub fn records(b: &Bounds) -> Vec<u64> {
    doublings(b.min_record, b.max_record).collect()
}

/// The cells that run, file size by file size, records ascending.
pub fn cells(b: &Bounds) -> Vec<Cell> {
    let mut out = Vec::new();
    for size in sizes(b) {
        for record in records(b) {
            let c = Cell { size, record };
            if record <= size && !skipped(c, b.all_records) {
                out.push(c);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_matrix_is_iozones() {
        let b = Bounds::default();
        assert_eq!(sizes(&b).len(), 14); // 64 KiB … 512 MiB
        assert_eq!(records(&b).len(), 13); // 4 KiB … 16 MiB
        let c = cells(&b);
        // 64 KiB files: records 4 … 64 KiB.
        assert_eq!(c.iter().filter(|c| c.size == 64 << 10).count(), 5);
        // 16 MiB files still take 4 KiB records; 32 MiB ones start at 64 KiB.
        assert!(c.contains(&Cell {
            size: 16 << 20,
            record: 4 << 10
        }));
        let big: Vec<u64> = c
            .iter()
            .filter(|c| c.size == 32 << 20)
            .map(|c| c.record)
            .collect();
        assert_eq!(big.first(), Some(&(64 << 10)));
        assert_eq!(big.last(), Some(&(16 << 20)));
        let all = cells(&Bounds {
            all_records: true,
            ..b
        });
        assert!(all.len() > c.len());
        assert!(all.iter().all(|c| c.record <= c.size));
    }
}
