//! `/proc/swaps`: active swap areas (a block device in use as swap must never be formatted).
//!
//! A header line, then `Filename Type Size Used Priority`; names use octal escapes like
//! mountinfo (`\040` for a space).

use std::path::PathBuf;

use crate::error::{read_to_string, Error};
use crate::mountinfo::unescape;

/// The file parsed here.
pub const PATH: &str = "/proc/swaps";

/// Paths of the active swap areas.
pub fn parse(text: &str) -> Vec<PathBuf> {
    text.lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .map(|p| PathBuf::from(unescape(p)))
        .collect()
}

/// Read and parse /proc/swaps.
pub fn read() -> Result<Vec<PathBuf>, Error> {
    Ok(parse(&read_to_string(PATH)?))
}

#[cfg(test)]
mod tests {
    #[test]
    fn lists_swap_devices() {
        let t = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n\
/dev/zram0                              partition\t8388604\t\t0\t\t100\n\
/swap\\040file                          file\t1024\t\t0\t\t-2\n";
        assert_eq!(
            super::parse(t),
            vec![
                std::path::PathBuf::from("/dev/zram0"),
                std::path::PathBuf::from("/swap file")
            ]
        );
        assert!(super::parse("Filename Type Size Used Priority\n").is_empty());
    }
}
