//! Sizes and durations as users write them (`4k`, `64m`, `1.5g`, `30s`, `500ms`), and as
//! iolab prints them ([`format_bytes`], [`format_ns`]).
//!
//! Suffixes are binary (k = 1024), as in fio and filebench; `KiB`, `KB` and `K` all mean 1024
//! because storage tools have always used them that way and a silent ×1000 would be worse.

use std::time::Duration;

/// A size or duration that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnitError {
    #[error("{0:?} is not a size: write bytes or a number with an optional suffix K, M, G or T (binary: 1K = 1024), e.g. \"512M\" or \"1.5G\"")]
    BadSize(String),
    #[error("`{0}` is not a whole number of bytes")]
    FractionalBytes(String),
    #[error("`{0}` is too large")]
    Overflow(String),
    #[error("`{0}` is not a duration: expected a number with a suffix ms, s, m or h (e.g. 500ms, 30s, 2m)")]
    BadDuration(String),
}

/// Parses a byte size: a decimal number with an optional binary suffix.
pub fn parse_size(text: &str) -> Result<u64, UnitError> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, suffix) = t.split_at(split);
    if num.is_empty() {
        return Err(UnitError::BadSize(text.to_string()));
    }
    let shift = match suffix.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        _ => return Err(UnitError::BadSize(text.to_string())),
    };
    let mult = 1u64 << shift;
    if let Ok(n) = num.parse::<u64>() {
        return n
            .checked_mul(mult)
            .ok_or_else(|| UnitError::Overflow(text.to_string()));
    }
    let f: f64 = num
        .parse()
        .map_err(|_| UnitError::BadSize(text.to_string()))?;
    let bytes = f * mult as f64;
    if bytes.fract() != 0.0 {
        return Err(UnitError::FractionalBytes(text.to_string()));
    }
    if bytes > u64::MAX as f64 {
        return Err(UnitError::Overflow(text.to_string()));
    }
    Ok(bytes as u64)
}

/// Parses a duration; a bare number means seconds.
pub fn parse_duration(text: &str) -> Result<Duration, UnitError> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, suffix) = t.split_at(split);
    let value: f64 = num
        .parse()
        .map_err(|_| UnitError::BadDuration(text.to_string()))?;
    let secs = match suffix {
        "" | "s" | "sec" => value,
        "ms" => value / 1e3,
        "us" => value / 1e6,
        "m" | "min" => value * 60.0,
        "h" => value * 3600.0,
        _ => return Err(UnitError::BadDuration(text.to_string())),
    };
    Duration::try_from_secs_f64(secs).map_err(|_| UnitError::BadDuration(text.to_string()))
}

/// A duration as [`parse_duration`] reads it back, in the largest unit that keeps it whole:
/// `10s`, `1500ms`, `250us`, `0.5us` — for stored options, which must not round (`1500us`
/// is not `1ms`).
pub fn duration_text(d: Duration) -> String {
    let ns = d.as_nanos();
    if ns.is_multiple_of(1_000_000_000) {
        format!("{}s", ns / 1_000_000_000)
    } else if ns.is_multiple_of(1_000_000) {
        format!("{}ms", ns / 1_000_000)
    } else if ns.is_multiple_of(1_000) {
        format!("{}us", ns / 1_000)
    } else {
        format!("{}us", ns as f64 / 1e3)
    }
}

/// A byte count in the largest binary unit that keeps it at least 1, one decimal unless whole:
/// `512 B`, `4 KiB`, `1.5 GiB`. The one byte formatter for everything iolab prints.
pub fn format_bytes(bytes: u64) -> String {
    const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    // 1023.96 KiB would print as "1024.0 KiB".
    if unit > 0 && unit < UNITS.len() - 1 && (value * 10.0).round() >= 10240.0 {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 || value.fract() == 0.0 {
        format!("{value} {}", UNITS[unit])
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// A duration in nanoseconds in the largest unit that keeps it at least 1, two decimals
/// (whole nanoseconds): `812 ns`, `3.45 µs`, `1.23 ms`, `2.50 s`; `–` when not finite. The
/// one duration formatter for latencies and times iolab prints.
pub fn format_ns(ns: f64) -> String {
    if !ns.is_finite() {
        return "–".to_string();
    }
    let a = ns.abs();
    if a < 1e3 {
        format!("{ns:.0} ns")
    } else if a < 1e6 {
        format!("{:.2} µs", ns / 1e3)
    } else if a < 1e9 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.2} s", ns / 1e9)
    }
}

/// Durations by their length in nanoseconds, and sizes in bytes: `(size, written from, symbol)`,
/// the units a table column or a chart axis writes its numbers in ([`human_unit`]). A
/// duration is written in minutes from 2 minutes on and in hours from 2 hours on, so that
/// `7200 s` reads `2 h`.
const DURATION_UNITS: [(f64, f64, &str); 6] = [
    (1.0, 0.0, "ns"),
    (1e3, 1e3, "µs"),
    (1e6, 1e6, "ms"),
    (1e9, 1e9, "s"),
    (60e9, 120e9, "min"),
    (3600e9, 7200e9, "h"),
];
const BYTE_UNITS: [(f64, f64, &str); 6] = [
    (1.0, 0.0, "B"),
    (1024.0, 1024.0, "KiB"),
    (1048576.0, 1048576.0, "MiB"),
    (1073741824.0, 1073741824.0, "GiB"),
    (1099511627776.0, 1099511627776.0, "TiB"),
    (1125899906842624.0, 1125899906842624.0, "PiB"),
];

/// The unit in which numbers of `unit` around `magnitude` (in `unit`s) are written when they
/// share one — a table cell's mean and interval, a chart axis's ticks: `(its size in
/// `unit`s, its symbol)`, the largest unit that `magnitude` reaches. `None` for a unit that is
/// not a duration (`ns`, `us`, `ms`, `s`) or a size (`B`, `KiB`, `MiB`, `GiB`): rates and
/// counts keep theirs.
pub fn human_unit(unit: &str, magnitude: f64) -> Option<(f64, &'static str)> {
    let (base, table) = match unit {
        "ns" => (1.0, &DURATION_UNITS),
        "us" | "µs" => (1e3, &DURATION_UNITS),
        "ms" => (1e6, &DURATION_UNITS),
        "s" => (1e9, &DURATION_UNITS),
        "B" => (1.0, &BYTE_UNITS),
        "KiB" => (1024.0, &BYTE_UNITS),
        "MiB" => (1048576.0, &BYTE_UNITS),
        "GiB" => (1073741824.0, &BYTE_UNITS),
        _ => return None,
    };
    let m = if magnitude.is_finite() {
        magnitude.abs() * base
    } else {
        0.0
    };
    let &(size, _, symbol) = table
        .iter()
        .rev()
        .find(|(_, from, _)| m >= *from)
        .unwrap_or(&table[0]);
    Some((size / base, symbol))
}

/// An integer with thousands separators.
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A value of a metric in `unit`, in the unit that reads best, with about three significant
/// digits: durations (`ns`, `us`, `ms`, `s`) as [`format_ns`] writes them, sizes (`B`,
/// `bytes`, `KiB`, `MiB`, `GiB`) and byte rates (`B/s`, `KiB/s`, `MiB/s`, `GiB/s`) in binary
/// units, other rates (`op/s`, `txn/s`) with k/M; anything else as a plain number followed by
/// its unit. Never an exponent for the magnitudes storage shows (`3.326e9` ns is `3.33 s`).
pub fn format_quantity(value: f64, unit: &str) -> String {
    const BYTES: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if !value.is_finite() {
        return "–".to_string();
    }
    let scaled = |v: f64, base: f64, names: &[&str], suffix: &str| {
        let mut v = v;
        let mut i = 0;
        while v.abs() >= base && i + 1 < names.len() {
            v /= base;
            i += 1;
        }
        format!("{} {}{suffix}", sig3(v), names[i])
    };
    let ns = match unit {
        "ns" => Some(1.0),
        "us" | "µs" => Some(1e3),
        "ms" => Some(1e6),
        "s" => Some(1e9),
        _ => None,
    };
    if let Some(k) = ns {
        return format_ns(value * k);
    }
    let (rate, base_unit) = match unit.strip_suffix("/s") {
        Some(u) => (true, u),
        None => (false, unit),
    };
    let shift = match base_unit {
        "B" | "bytes" => Some(0),
        "KiB" => Some(1),
        "MiB" => Some(2),
        "GiB" => Some(3),
        _ => None,
    };
    if let Some(shift) = shift {
        let bytes = value * 1024f64.powi(shift);
        return scaled(bytes, 1024.0, &BYTES, if rate { "/s" } else { "" });
    }
    if rate {
        // Bits take their prefixes without a space, as network people write them (Gbit/s).
        let sep = if base_unit == "bit" { "" } else { " " };
        let names = [
            base_unit.to_string(),
            format!("k{sep}{base_unit}"),
            format!("M{sep}{base_unit}"),
            format!("G{sep}{base_unit}"),
            format!("T{sep}{base_unit}"),
        ];
        let names: Vec<&str> = names.iter().map(|s| s.as_ref()).collect();
        return scaled(value, 1000.0, &names, "/s");
    }
    if unit.is_empty() {
        sig3(value)
    } else {
        format!("{} {unit}", sig3(value))
    }
}

/// About three significant digits, without exponent below 10¹⁵ (larger numbers are written
/// whole).
fn sig3(v: f64) -> String {
    let a = v.abs();
    let decimals = if a == 0.0 || a >= 100.0 {
        0
    } else if a >= 10.0 {
        1
    } else if a >= 1.0 {
        2
    } else {
        // 0.0123: three significant digits after the leading zeros, at most 6 decimals.
        ((-a.log10()).floor() as usize + 3).min(6)
    };
    format!("{v:.decimals$}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duration_text_reads_back_exactly() {
        for text in ["10s", "1500ms", "250us", "1500us", "0.5us", "3m", "90ms"] {
            let d = parse_duration(text).unwrap();
            assert_eq!(parse_duration(&duration_text(d)).unwrap(), d, "{text}");
        }
        assert_eq!(duration_text(Duration::from_micros(1500)), "1500us");
        assert_eq!(duration_text(Duration::from_secs(180)), "180s");
        assert_eq!(duration_text(Duration::from_millis(1500)), "1500ms");
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4096").unwrap(), 4096);
        assert_eq!(parse_size("4k").unwrap(), 4096);
        assert_eq!(parse_size("4K").unwrap(), 4096);
        assert_eq!(parse_size("4KiB").unwrap(), 4096);
        assert_eq!(parse_size("64m").unwrap(), 64 << 20);
        assert_eq!(parse_size("1.5g").unwrap(), 3 << 29);
        assert_eq!(parse_size("2t").unwrap(), 2 << 40);
        assert!(matches!(
            parse_size("1.3k"),
            Err(UnitError::FractionalBytes(_))
        ));
        assert!(matches!(parse_size("4x"), Err(UnitError::BadSize(_))));
        assert!(matches!(parse_size(""), Err(UnitError::BadSize(_))));
        assert!(matches!(parse_size("k"), Err(UnitError::BadSize(_))));
        assert!(matches!(
            parse_size("99999999999t"),
            Err(UnitError::Overflow(_))
        ));
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("30").unwrap(), Duration::from_secs(30));
        assert_eq!(parse_duration("30s").unwrap(), Duration::from_secs(30));
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_duration("1.5h").unwrap(), Duration::from_secs(5400));
        assert!(parse_duration("soon").is_err());
        assert!(parse_duration("-1s").is_err());
    }

    #[test]
    fn formatting() {
        assert_eq!(format_bytes(0), "0 B");
        assert_eq!(format_bytes(512), "512 B");
        assert_eq!(format_bytes(1023), "1023 B");
        assert_eq!(format_bytes(4096), "4 KiB");
        assert_eq!(format_bytes(3 << 29), "1.5 GiB");
        assert_eq!(format_bytes((1 << 20) - 20), "1.0 MiB", "not 1024.0 KiB");
        assert_eq!(format_bytes(5 << 50), "5 PiB");
        assert_eq!(format_bytes(u64::MAX), "16 EiB");
        assert_eq!(format_ns(812.0), "812 ns");
        assert_eq!(format_ns(3450.0), "3.45 µs");
        assert_eq!(format_ns(1_230_000.0), "1.23 ms");
        assert_eq!(format_ns(2.5e9), "2.50 s");
        assert_eq!(format_ns(-1500.0), "-1.50 µs");
        assert_eq!(format_ns(f64::NAN), "–");
    }

    #[test]
    fn human_units_are_the_largest_the_magnitude_reaches() {
        assert_eq!(human_unit("ns", 3_326_103_438.0), Some((1e9, "s")));
        assert_eq!(human_unit("ns", 463_740.0), Some((1e3, "µs")));
        assert_eq!(human_unit("ns", 0.0), Some((1.0, "ns")));
        assert_eq!(human_unit("s", 0.5), Some((1e-3, "ms")));
        assert_eq!(human_unit("s", 20.0 * 3600.0), Some((3600.0, "h")));
        assert_eq!(human_unit("s", 119.0), Some((1.0, "s")));
        assert_eq!(human_unit("s", 600.0), Some((60.0, "min")));
        assert_eq!(human_unit("B", 3.0 * 1048576.0), Some((1048576.0, "MiB")));
        assert_eq!(human_unit("KiB", 2048.0), Some((1024.0, "MiB")));
        assert_eq!(human_unit("op/s", 1e9), None);
        assert_eq!(human_unit("", 1.0), None);
        assert_eq!(human_unit("ns", f64::NAN), Some((1.0, "ns")));
    }

    #[test]
    fn thousands_separates() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(1234567), "1,234,567");
        assert_eq!(thousands(123), "123");
    }

    #[test]
    fn quantities_in_human_units() {
        assert_eq!(format_quantity(3_326_103_438.0, "ns"), "3.33 s");
        assert_eq!(format_quantity(2.5, "s"), "2.50 s");
        assert_eq!(format_quantity(3.326e9, "B"), "3.10 GiB");
        assert_eq!(format_quantity(512.0, "bytes"), "512 B");
        assert_eq!(format_quantity(2048.0, "KiB"), "2.00 MiB");
        assert_eq!(format_quantity(812.4, "MiB/s"), "812 MiB/s");
        assert_eq!(format_quantity(4096.0, "MiB/s"), "4.00 GiB/s");
        assert_eq!(format_quantity(1536.0, "B/s"), "1.50 KiB/s");
        assert_eq!(format_quantity(12_345.0, "op/s"), "12.3 k op/s");
        assert_eq!(format_quantity(2.5e6, "op/s"), "2.50 M op/s");
        assert_eq!(format_quantity(2.5e9, "op/s"), "2.50 G op/s");
        assert_eq!(format_quantity(18_143_217_191.7, "bit/s"), "18.1 Gbit/s");
        assert_eq!(format_quantity(940e6, "bit/s"), "940 Mbit/s");
        assert_eq!(format_quantity(950.0, "op/s"), "950 op/s");
        assert_eq!(format_quantity(12.345, "%"), "12.3 %");
        assert_eq!(format_quantity(0.01234, ""), "0.0123");
        assert_eq!(format_quantity(f64::NAN, "ns"), "–");
    }
}
