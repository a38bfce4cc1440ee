//! Sizes as written in experiments: `4096`, `64k`, `512M`, `1G`, `1GiB`, `2T`.
//!
//! Suffixes are binary (K = 1024), as for truncate(1), mkfs and tmpfs's `size=`; `B` and
//! `iB` after the letter are accepted and mean the same.

/// Parse a size in bytes (iolab-util's one size parser); the error text says what is
/// accepted.
pub fn parse_size(text: &str) -> Result<u64, String> {
    iolab_util::parse_size(text).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_binary_suffixes() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("64k"), Ok(64 << 10));
        assert_eq!(parse_size("512M"), Ok(512 << 20));
        assert_eq!(parse_size("1G"), Ok(1 << 30));
        assert_eq!(parse_size("1GiB"), Ok(1 << 30));
        assert_eq!(parse_size("2TB"), Ok(2 << 40));
        assert_eq!(parse_size(" 3 M "), Ok(3 << 20));
        // The same parser as every other size: a fraction of a unit that is whole bytes.
        assert_eq!(parse_size("1.5G"), Ok(3 << 29));
    }

    #[test]
    fn rejects_garbage_with_advice() {
        for bad in ["", "M", "1.5K5", "1X", "-1", "1 G B"] {
            let e = parse_size(bad).unwrap_err();
            assert!(e.contains("512M") || e.contains("large"), "{bad}: {e}");
        }
        assert!(parse_size("99999999999T").is_err());
    }
}
