//! Replays drawn as the time per day (docs/replay.md): one line per configuration, each
//! point the mean over the configuration's ok runs of the day's time from mount to completed
//! unmount, with the runs' range. A replay run stores one flowop row per day (kind
//! `replay_day`, `extra.day`, `extra.time_ns`), so the chart needs neither the factors nor
//! the metric definitions.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use iolab_store::FlowopStats;
use serde::Serialize;

use iolab_report::escape::escape_html as esc;
use iolab_report::num;
use iolab_report::section::{Placement, Section, SectionInput, SectionView};
use iolab_report::svg::{self, Line, LineOpts};
use iolab_report::ReportData;

/// The report's `replay` section: the time per day.
pub struct ReplaySection;

impl Section for ReplaySection {
    fn key(&self) -> &'static str {
        "replay"
    }

    fn placement(&self) -> Placement {
        Placement::Details
    }

    fn collect(&self, input: &SectionInput<'_>) -> Option<Box<dyn SectionView>> {
        let mut c = Collector::default();
        for config in input.configs {
            c.add(config.label, config.ok_flowops);
        }
        Some(Box::new(c.finish()?))
    }
}

impl SectionView for ReplayDays {
    fn html(&self, h: &mut String, _data: &ReportData) {
        render(h, self);
    }

    fn markdown(&self, s: &mut String, _data: &ReportData) {
        markdown(s, self);
    }

    fn json(&self) -> Option<serde_json::Value> {
        serde_json::to_value(self).ok()
    }
}

/// Every configuration's days.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ReplayDays {
    pub configs: Vec<ConfigDays>,
}

/// One configuration's days over its ok runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConfigDays {
    pub label: String,
    pub days: Vec<DayTime>,
}

/// One day (0: the install).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DayTime {
    pub day: u32,
    pub mean_s: f64,
    pub min_s: f64,
    pub max_s: f64,
    pub runs: usize,
}

/// Collects the days of the replay runs of an experiment, configuration by configuration.
#[derive(Default)]
struct Collector {
    configs: Vec<ConfigDays>,
}

impl Collector {
    /// Adds one configuration's ok runs.
    pub fn add(&mut self, label: &str, runs: &[&Vec<FlowopStats>]) {
        let mut per_day: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
        for flowops in runs {
            for f in flowops.iter().filter(|f| f.kind == "replay_day") {
                let (Some(day), Some(ns)) = (
                    f.extra.get("day").and_then(|v| v.as_u64()),
                    f.extra.get("time_ns").and_then(|v| v.as_u64()),
                ) else {
                    continue;
                };
                per_day
                    .entry(u32::try_from(day).unwrap_or(u32::MAX))
                    .or_default()
                    .push(ns as f64 / 1e9);
            }
        }
        if per_day.is_empty() {
            return;
        }
        let days = per_day
            .into_iter()
            .map(|(day, v)| DayTime {
                day,
                mean_s: v.iter().sum::<f64>() / v.len() as f64,
                min_s: v.iter().copied().fold(f64::INFINITY, f64::min),
                max_s: v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                runs: v.len(),
            })
            .collect();
        self.configs.push(ConfigDays {
            label: label.to_string(),
            days,
        });
    }

    pub fn finish(self) -> Option<ReplayDays> {
        (!self.configs.is_empty()).then_some(ReplayDays {
            configs: self.configs,
        })
    }
}

/// The chart: time per day (the install left out), one line per configuration, and dots for
/// the runs' range where a configuration ran more than once.
fn render(h: &mut String, r: &ReplayDays) {
    h.push_str(
        "<section id=\"replay\"><h2>Replay: time per day</h2><p class=\"muted\">Per \
         configuration, the mean over its ok runs of each day's time from mount to completed \
         unmount (boot list, the day's operations, the flush); dots: the fastest and slowest \
         run.</p><div class=\"replay-days\" style=\"max-width:1000px\">",
    );
    // The days as an ordinal axis: one tick per day, labelled with its number (a numeric
    // axis wrote `4.000 … 20.00`); the chart at the section's width, not a grid's thumbnail.
    let levels: Vec<u32> = all_days(r).into_iter().filter(|&d| d > 0).collect();
    let x = |day: u32| levels.iter().position(|&d| d == day).unwrap_or(0) as f64;
    let mut lines = Vec::new();
    for (i, c) in r.configs.iter().enumerate() {
        let days = || c.days.iter().filter(|d| d.day > 0);
        lines.push(Line {
            label: c.label.clone(),
            colour: svg::colour(i),
            points: days().map(|d| (x(d.day), d.mean_s)).collect(),
            dots: false,
            whiskers: Vec::new(),
        });
        if days().any(|d| d.runs > 1) {
            lines.push(Line {
                label: format!("{} (range)", c.label),
                colour: svg::colour(i),
                points: days()
                    .flat_map(|d| [(x(d.day), d.min_s), (x(d.day), d.max_s)])
                    .collect(),
                dots: true,
                whiskers: Vec::new(),
            });
        }
    }
    h.push_str(&svg::line_chart(
        "time per day",
        &lines,
        &LineOpts {
            x_label: "day".into(),
            // Ticks in a duration's own unit (`2 s`, `1 min`), not `1.000`.
            y_unit: "s".into(),
            x_levels: levels.iter().map(u32::to_string).collect(),
            ..LineOpts::default()
        },
    ));
    h.push_str("</div>");
    let _ = write!(h, "<table><thead><tr><th>day</th>");
    for c in &r.configs {
        let _ = write!(h, "<th>{}</th>", esc(&c.label));
    }
    h.push_str("</tr></thead><tbody>");
    for day in all_days(r) {
        let _ = write!(h, "<tr><td>{}</td>", day_name(day));
        for c in &r.configs {
            let v = c.days.iter().find(|d| d.day == day);
            let _ = write!(
                h,
                "<td>{}</td>",
                v.map_or(String::new(), |d| num::fmt(d.mean_s))
            );
        }
        h.push_str("</tr>");
    }
    h.push_str("</tbody></table></section>");
}

fn all_days(r: &ReplayDays) -> Vec<u32> {
    let mut days: Vec<u32> = r
        .configs
        .iter()
        .flat_map(|c| c.days.iter().map(|d| d.day))
        .collect();
    days.sort_unstable();
    days.dedup();
    days
}

fn day_name(day: u32) -> String {
    if day == 0 {
        "install".into()
    } else {
        day.to_string()
    }
}

/// The days as a Markdown table: a row per day, a column per configuration, mean seconds.
fn markdown(s: &mut String, r: &ReplayDays) {
    s.push_str("\n## Replay: time per day\n\nMean seconds from mount to completed unmount over each configuration's ok runs.\n\n| day |");
    for c in &r.configs {
        let _ = write!(s, " {} |", c.label);
    }
    s.push_str("\n|---|");
    s.push_str(&"---:|".repeat(r.configs.len()));
    s.push('\n');
    for day in all_days(r) {
        let _ = write!(s, "| {} |", day_name(day));
        for c in &r.configs {
            let v = c
                .days
                .iter()
                .find(|d| d.day == day)
                .map_or(String::new(), |d| num::fmt(d.mean_s));
            let _ = write!(s, " {v} |");
        }
        s.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn day(d: u64, ns: u64) -> FlowopStats {
        FlowopStats {
            name: format!("day {d}"),
            kind: "replay_day".into(),
            ops: 0,
            bytes: 0,
            errors: 0,
            latency: iolab_store::LatencyStats {
                count: 0,
                mean_ns: f64::NAN,
                stdev_ns: f64::NAN,
                min_ns: 0,
                p50_ns: 0,
                p90_ns: 0,
                p99_ns: 0,
                p999_ns: 0,
                max_ns: 0,
            },
            histogram: Vec::new(),
            extra: json!({"day": d, "time_ns": ns}),
        }
    }

    #[test]
    fn days_are_averaged_over_runs_and_drawn_per_configuration() {
        let a = vec![
            day(0, 5_000_000_000),
            day(1, 1_000_000_000),
            day(2, 2_000_000_000),
        ];
        let b = vec![
            day(0, 5_000_000_000),
            day(1, 3_000_000_000),
            day(2, 2_000_000_000),
        ];
        let mut c = Collector::default();
        c.add("ext4", &[&a, &b]);
        c.add("other kind", &[&Vec::new()]);
        let r = c.finish().unwrap();
        assert_eq!(r.configs.len(), 1);
        let d1 = &r.configs[0].days[1];
        assert_eq!(
            (d1.day, d1.mean_s, d1.min_s, d1.max_s, d1.runs),
            (1, 2.0, 1.0, 3.0, 2)
        );
        let mut h = String::new();
        render(&mut h, &r);
        assert!(h.contains("<svg") && h.contains("ext4"), "{h}");
        // Seed 004's review: a thumbnail in a grid of charts, with ticks `4.000 … 20.00`.
        assert!(!h.contains("class=\"charts\""), "{h}");
        let svg = &h[h.find("<svg").unwrap()..h.find("</svg>").unwrap()];
        assert!(
            svg.contains(">1</text>") && svg.contains(">2</text>"),
            "{svg}"
        );
        // The y axis writes durations in their unit: `2 s`, not `2.000`.
        assert!(!svg.contains(".000</text>"), "{svg}");
        assert!(svg.contains(" s</text>"), "{svg}");
        let mut m = String::new();
        markdown(&mut m, &r);
        assert!(m.contains("| 1 | 2 |") || m.contains("| 1 | 2.0"), "{m}");
        assert!(Collector::default().finish().is_none());
    }
}
