//! Numbers as explanations show them. Evidence keeps the raw numbers; these are for prose.
//! Bytes and durations use iolab-workload's `format_bytes` and `format_ns`, as everything
//! iolab prints does.

/// A size as experiment files accept it (`sut.cache_limit`, a workload's `size`): a whole number
/// with a binary suffix (`682M`, `24G`, `8704K`), in the largest unit that stays within 1% of
/// `n`, rounded down (`up == false`, for a limit `n` must not exceed) or up (for a minimum);
/// plain bytes when no unit does.
pub(crate) fn size_value(n: u64, up: bool) -> String {
    for (shift, suffix) in [(40, "T"), (30, "G"), (20, "M"), (10, "K")] {
        let unit = 1u64 << shift;
        let k = if up { n.div_ceil(unit) } else { n / unit };
        let off = (u128::from(k) * u128::from(unit)).abs_diff(u128::from(n));
        if k > 0 && off * 100 <= u128::from(n) {
            return format!("{k}{suffix}");
        }
    }
    n.to_string()
}

/// A fraction as a percentage: `0.123` → `12.3%`, `0.00012` → `0.012%`.
pub(crate) fn pct_of_fraction(f: f64) -> String {
    pct(f * 100.0)
}

/// A percentage, one decimal, three below 0.1% so that a small share does not read as 0:
/// `12.34` → `12.3%`, `0.012` → `0.012%`.
pub(crate) fn pct(p: f64) -> String {
    if p != 0.0 && p.abs() < 0.1 {
        format!("{p:.3}%")
    } else {
        format!("{p:.1}%")
    }
}

/// `a / b` for counts, `None` when `b` is 0.
pub(crate) fn ratio(a: u64, b: u64) -> Option<f64> {
    (b > 0).then(|| a as f64 / b as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(pct_of_fraction(0.1234), "12.3%");
        assert_eq!(pct(99.96), "100.0%");
        assert_eq!(pct(0.0), "0.0%");
        assert_eq!(pct_of_fraction(0.00012), "0.012%");
        assert_eq!(ratio(1, 4), Some(0.25));
        assert_eq!(ratio(1, 0), None);
    }

    #[test]
    fn size_values_round_the_asked_way_in_a_unit_within_one_percent() {
        // 4.8 GiB / 3 = 1.6 GiB, which the experiment parser rejects as "1.6 GiB".
        assert_eq!(size_value((48 << 30) / 30, false), "1638M");
        assert_eq!(size_value((48 << 30) / 30, true), "1639M");
        assert_eq!(size_value((2 << 30) / 3, false), "682M");
        assert_eq!(size_value(24 << 30, true), "24G");
        assert_eq!(size_value(24 << 30, false), "24G");
        assert_eq!(
            size_value((24 << 30) + 1, true),
            "24577M",
            "never below a minimum"
        );
        assert_eq!(
            size_value((24 << 30) - 1, false),
            "24575M",
            "never above a limit"
        );
        assert_eq!(size_value(17 << 19, false), "8704K"); // 8.5 MiB
        assert_eq!(size_value(3 << 40, false), "3T");
        assert_eq!(size_value(1000, false), "1000");
        assert_eq!(size_value(0, true), "0");
    }
}
