//! Number formatting shared by the renderers (bytes and durations: iolab-util's
//! `format_bytes`, `format_ns` and `human_unit`, as everywhere in iolab).

use iolab_util::units::human_unit;

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

/// A value of a metric in `unit`: a duration or a size in the unit that suits it (`3.326 s`,
/// `12.5 MiB`), anything else as a number (its unit is the column's or the axis's).
pub fn with_unit(v: f64, unit: &str) -> String {
    match human_unit(unit, v) {
        Some((size, symbol)) if v.is_finite() => format!("{} {symbol}", fmt(v / size)),
        _ => fmt(v),
    }
}

/// `mean ± half-width` of an interval, both in the unit that suits the mean (`3.326 ± 2.535 s`
/// rather than `3,326,103,438 ± 2,535,106,510` ns), or the mean alone without an interval.
pub fn ci_text(mean: f64, ci: Option<(f64, f64)>, unit: &str) -> String {
    let Some((lo, hi)) = ci else {
        return with_unit(mean, unit);
    };
    let half = (hi - lo) / 2.0;
    let magnitude = if mean.is_finite() && mean != 0.0 {
        mean
    } else {
        half
    };
    match human_unit(unit, magnitude) {
        Some((size, symbol)) if mean.is_finite() => {
            format!("{} ± {} {symbol}", fmt(mean / size), fmt(half / size))
        }
        _ => format!("{} ± {}", fmt(mean), fmt(half)),
    }
}

/// A column or axis title: `Throughput (op/s)`, but `p99 latency` when the values carry
/// their own unit ([`with_unit`]).
pub fn title(title: &str, unit: &str) -> String {
    if unit.is_empty() || human_unit(unit, 1.0).is_some() {
        title.to_string()
    } else {
        format!("{title} ({unit})")
    }
}

/// How the ticks of an axis of `unit` whose ticks are `step` apart and reach `max` are
/// written: in the unit that suits `max` (`0`, `1 s`, `2 s`, …), with as many decimals as the
/// step needs and no more (`0.5`, not `0.5000`; `4`, not `4.000`).
pub fn tick_format(unit: &str, max: f64, step: f64) -> impl Fn(f64) -> String {
    let (size, symbol) = human_unit(unit, max).unwrap_or((1.0, ""));
    let s = step / size;
    let decimals = if s.is_finite() && s > 0.0 && s < 1.0 {
        // 0.25 needs two decimals, 0.5 one.
        (0..6)
            .find(|&d| {
                let scaled = s * 10f64.powi(d);
                (scaled - scaled.round()).abs() < 1e-6 * scaled.max(1.0)
            })
            .unwrap_or(3) as usize
    } else {
        0
    };
    move |v: f64| {
        let text = group(&format!("{:.decimals$}", v / size + 0.0));
        if v == 0.0 {
            "0".to_string()
        } else if symbol.is_empty() {
            text
        } else {
            format!("{text} {symbol}")
        }
    }
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

    /// The review's `3,326,103,438 ± 2,535,106,510` (ns) in the summary table.
    #[test]
    fn durations_and_sizes_are_written_in_their_unit() {
        let ci = Some((
            3_326_103_438.0 - 2_535_106_510.0,
            3_326_103_438.0 + 2_535_106_510.0,
        ));
        assert_eq!(ci_text(3_326_103_438.0, ci, "ns"), "3.326 ± 2.535 s");
        assert_eq!(ci_text(463_740.0, None, "ns"), "463.7 µs");
        assert_eq!(
            ci_text(2156.0, Some((412.0, 3900.0)), "op/s"),
            "2,156 ± 1,744"
        );
        assert_eq!(with_unit(12.5 * 1048576.0, "B"), "12.50 MiB");
        assert_eq!(with_unit(f64::NAN, "ns"), "–");
        assert_eq!(title("p99 latency", "ns"), "p99 latency");
        assert_eq!(title("Throughput", "op/s"), "Throughput (op/s)");
        assert_eq!(title("Operations", ""), "Operations");
    }

    #[test]
    fn ticks_have_the_decimals_their_step_needs() {
        let f = tick_format("", 20.0, 4.0);
        assert_eq!([f(0.0), f(4.0), f(20.0)], ["0", "4", "20"]);
        let f = tick_format("", 1.0, 0.25);
        assert_eq!([f(0.5), f(0.75)], ["0.50", "0.75"]);
        let f = tick_format("ns", 8e9, 2e9);
        assert_eq!([f(0.0), f(2e9), f(8e9)], ["0", "2 s", "8 s"]);
        let f = tick_format("s", 20.0 * 3600.0, 4.0 * 3600.0);
        assert_eq!(f(4.0 * 3600.0), "4 h");
        let axis = crate::svg::Axis::linear(300.0, None, "s");
        let ticks: Vec<&str> = axis.ticks.iter().map(|t| t.1.as_str()).collect();
        assert_eq!(ticks, ["0", "1 min", "2 min", "3 min", "4 min", "5 min"]);
        let f = tick_format("", 3e7, 1e7);
        assert_eq!(f(3e7), "30,000,000");
    }
}
