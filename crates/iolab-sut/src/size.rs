//! Sizes as written in experiments: `4096`, `64k`, `512M`, `1G`, `1GiB`, `2T`.
//!
//! Suffixes are binary (K = 1024), as for truncate(1), mkfs and tmpfs's `size=`; `B` and
//! `iB` after the letter are accepted and mean the same.

/// Parse a size in bytes; the error text says what is accepted.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let digits_end = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, suffix) = t.split_at(digits_end);
    let bad = || {
        format!(
            "{text:?} is not a size; write bytes or a number with K, M, G or T (binary: 1K = 1024), \
             e.g. \"512M\""
        )
    };
    let n: u64 = num.parse().map_err(|_| bad())?;
    let suffix = suffix.trim();
    let unit = suffix
        .strip_suffix("iB")
        .or_else(|| suffix.strip_suffix('B'))
        .unwrap_or(suffix);
    let shift = match unit {
        "" => 0,
        "k" | "K" => 10,
        "m" | "M" => 20,
        "g" | "G" => 30,
        "t" | "T" => 40,
        _ => return Err(bad()),
    };
    n.checked_mul(1u64 << shift)
        .ok_or_else(|| format!("{text:?} is too large"))
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
    }

    #[test]
    fn rejects_garbage_with_advice() {
        for bad in ["", "M", "1.5G", "1X", "-1", "1 G B"] {
            let e = parse_size(bad).unwrap_err();
            assert!(e.contains("512M") || e.contains("large"), "{bad}: {e}");
        }
        assert!(parse_size("99999999999T").is_err());
    }
}
