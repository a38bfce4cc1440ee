//! Number formatting shared by the renderers.

/// A value with about four significant digits, thousands grouped; `–` when not finite.
pub fn fmt(v: f64) -> String {
    if !v.is_finite() {
        return "–".to_string();
    }
    let a = v.abs();
    let decimals = if a >= 1000.0 || a == 0.0 {
        0
    } else if a >= 100.0 {
        1
    } else if a >= 10.0 {
        2
    } else if a >= 1.0 {
        3
    } else {
        4
    };
    let s = format!("{v:.decimals$}");
    group(&s)
}

/// A count, exactly, with thousands separators (never "192.0").
pub fn fmt_count(n: u64) -> String {
    group(&n.to_string())
}

fn group(s: &str) -> String {
    let (sign, rest) = s.strip_prefix('-').map_or(("", s), |r| ("-", r));
    let (int, frac) = rest
        .split_once('.')
        .map_or((rest, None), |(i, f)| (i, Some(f)));
    let mut out = String::new();
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    match frac {
        Some(f) => format!("{sign}{out}.{f}"),
        None => format!("{sign}{out}"),
    }
}

/// A duration in nanoseconds with a readable unit.
pub fn fmt_ns(ns: f64) -> String {
    if !ns.is_finite() {
        return "–".to_string();
    }
    let a = ns.abs();
    if a >= 1e9 {
        format!("{:.3} s", ns / 1e9)
    } else if a >= 1e6 {
        format!("{:.3} ms", ns / 1e6)
    } else if a >= 1e3 {
        format!("{:.2} µs", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}

/// A byte count with a binary unit.
pub fn fmt_bytes(b: f64) -> String {
    if !b.is_finite() {
        return "–".to_string();
    }
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = b;
    let mut i = 0;
    while v.abs() >= 1024.0 && i + 1 < UNITS.len() {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{v:.0} B")
    } else {
        format!("{v:.1} {}", UNITS[i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(fmt(1234567.8), "1,234,568");
        assert_eq!(fmt(-12.3456), "-12.35");
        assert_eq!(fmt(f64::NAN), "–");
        assert_eq!(fmt_ns(1500.0), "1.50 µs");
        assert_eq!(fmt_bytes(4096.0), "4.0 KiB");
        assert_eq!(fmt_bytes(f64::INFINITY), "–");
        assert_eq!(fmt_count(192), "192");
        assert_eq!(fmt_count(1_234_567), "1,234,567");
    }
}
