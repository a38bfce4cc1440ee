//! `/proc/swaps`: active swap areas (a block device in use as swap must never be formatted).
//!
//! Header line, then `Filename Type Size Used Priority`; names use octal escapes like
//! mountinfo (`\040` for a space).

use std::path::PathBuf;

/// Paths of the active swap areas.
pub fn parse(text: &str) -> Vec<PathBuf> {
    text.lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .map(|p| PathBuf::from(super::mountinfo::unescape(p)))
        .collect()
}

/// Read /proc/swaps (empty when it cannot be read).
pub fn read() -> Vec<PathBuf> {
    std::fs::read_to_string("/proc/swaps")
        .map(|t| parse(&t))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    #[test]
    fn lists_swap_devices() {
        let t = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n\
/dev/zram0                              partition\t8388604\t\t0\t\t100\n";
        assert_eq!(
            super::parse(t),
            vec![std::path::PathBuf::from("/dev/zram0")]
        );
        assert!(super::parse("Filename Type Size Used Priority\n").is_empty());
    }
}
