//! Number formatting shared by the renderers (bytes and durations: iolab-workload's
//! `format_bytes` and `format_ns`, as everywhere in iolab).

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(fmt(1234567.8), "1,234,568");
        assert_eq!(fmt(-12.3456), "-12.35");
        assert_eq!(fmt(f64::NAN), "–");
        assert_eq!(fmt_count(192), "192");
        assert_eq!(fmt_count(1_234_567), "1,234,567");
    }
}
