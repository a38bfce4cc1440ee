//! bonnie runs drawn as bonnie++ draws them (its `bon_csv2html` tables): one row per
//! configuration, the I/O phases grouped as Sequential Output (per char, block, rewrite),
//! Sequential Input (per char, block) and Random (seeks), the file phases as Sequential and
//! Random Create (create, read, delete), each with its rate and `%CP`, and a latency row.
//! Unlike bonnie++ every cell has a number (no `+++++`); rates are iolab's units (MiB/s,
//! seeks/s, files/s), means over the configuration's ok runs with their 95% interval.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use iolab_report::escape::{escape_html as esc, escape_md};
use iolab_report::num;
use iolab_report::section::{Placement, Section, SectionInput, SectionView};
use iolab_report::{MetricSummary, ReportData};
use iolab_store::MetricValues;
use serde::Serialize;

use crate::{Phase, RateUnit};

/// One phase of one configuration, over its ok runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BonniePhase {
    /// bonnie++'s label: `putc`, `put_block`, … `ran_del`.
    pub phase: String,
    pub rate: MetricSummary,
    pub cpu_pct: MetricSummary,
    /// The slowest operation of any run.
    pub lat_max_ns: f64,
    /// The phase's shortest elapsed time over the runs, in seconds (NaN when not recorded).
    pub elapsed_min_s: f64,
}

impl BonniePhase {
    /// Some run's phase lasted less than bonnie++'s 0.5 s: bonnie++ would show `+++++`.
    pub fn short(&self) -> bool {
        self.elapsed_min_s < crate::MIN_TIME.as_secs_f64()
    }
}

/// The report's `bonnie` section: bonnie++'s tables.
pub struct BonnieSection;

impl Section for BonnieSection {
    fn key(&self) -> &'static str {
        "bonnie"
    }

    fn placement(&self) -> Placement {
        Placement::Summary
    }

    fn collect(&self, input: &SectionInput<'_>) -> Option<Box<dyn SectionView>> {
        let configs: Vec<ConfigPhases> = input
            .configs
            .iter()
            .map(|c| ConfigPhases {
                label: c.label.to_string(),
                phases: phases(c.ok_metrics),
                size: phase_total(c.ok_flowops, Phase::PutBlock, |f| f.bytes)
                    .or_else(|| phase_total(c.ok_flowops, Phase::GetBlock, |f| f.bytes)),
                files: phase_total(c.ok_flowops, Phase::SeqCreate, |f| f.ops),
            })
            .collect();
        if configs.iter().all(|c| c.phases.is_empty()) {
            return None;
        }
        Some(Box::new(BonnieTables { configs }))
    }
}

/// One configuration's phases.
#[derive(Debug, Clone, PartialEq)]
struct ConfigPhases {
    label: String,
    phases: Vec<BonniePhase>,
    /// The test file's size (bonnie++'s `Size` column): the block output's bytes.
    size: Option<u64>,
    /// The files of the file phases (bonnie++'s `Num Files`): those created in order.
    files: Option<u64>,
}

/// `what` of phase `p`'s flowop row in the configuration's first run that has one.
fn phase_total(
    runs: &[&Vec<iolab_store::FlowopStats>],
    p: Phase,
    what: fn(&iolab_store::FlowopStats) -> u64,
) -> Option<u64> {
    runs.iter()
        .flat_map(|r| r.iter())
        .find(|f| f.name == p.label() && f.extra.get("elapsed_ns").is_some())
        .map(what)
}

/// bonnie++'s first column after the name: the file size, or the file count in units of
/// 1024 as `-n` takes it (`16` for 16,384 files).
fn size_text(c: &ConfigPhases) -> String {
    c.size
        .map_or(String::new(), iolab_util::units::format_bytes)
}

fn files_text(c: &ConfigPhases) -> String {
    c.files.map_or(String::new(), |n| {
        if n % 1024 == 0 {
            (n / 1024).to_string()
        } else {
            format!("{:.2}", n as f64 / 1024.0)
        }
    })
}

/// bonnie++'s tables of every configuration (configurations without bonnie runs have no
/// phases).
#[derive(Debug)]
struct BonnieTables {
    configs: Vec<ConfigPhases>,
}

impl SectionView for BonnieTables {
    fn html(&self, h: &mut String, _data: &ReportData) {
        render(h, &self.configs);
    }

    fn markdown(&self, s: &mut String, _data: &ReportData) {
        markdown(s, &self.configs);
    }

    /// Each configuration's phases, in its entry of the JSON report.
    fn config_json(&self, i: usize) -> Option<serde_json::Value> {
        serde_json::to_value(&self.configs.get(i)?.phases).ok()
    }
}

/// The bonnie phases a configuration's runs recorded (none for other kinds).
pub fn phases(ok: &BTreeMap<String, MetricValues>) -> Vec<BonniePhase> {
    let summary = |name: &str| {
        ok.get(name)
            .map(|v| MetricSummary::new(name, &v.unit, &v.values, &v.runs))
    };
    Phase::ALL
        .iter()
        .filter_map(|p| {
            Some(BonniePhase {
                phase: p.label().to_string(),
                rate: summary(p.rate_metric())?,
                cpu_pct: summary(p.cpu_metric())?,
                lat_max_ns: fold(ok, p.latency_metric(), f64::max),
                elapsed_min_s: fold(ok, p.elapsed_metric(), f64::min),
            })
        })
        .collect()
}

/// The metric `name` over the runs folded with `f` (NaN when it was not recorded).
fn fold(ok: &BTreeMap<String, MetricValues>, name: &str, f: fn(f64, f64) -> f64) -> f64 {
    ok.get(name)
        .map_or(f64::NAN, |v| v.values.iter().copied().fold(f64::NAN, f))
}

/// The column groups of bonnie++'s two tables: (group title, [(column title, phase)]).
type Group = (&'static str, &'static [(&'static str, Phase)]);

const IO: &[Group] = &[
    (
        "Sequential Output",
        &[
            ("Per Chr", Phase::Putc),
            ("Block", Phase::PutBlock),
            ("Rewrite", Phase::Rewrite),
        ],
    ),
    (
        "Sequential Input",
        &[("Per Chr", Phase::Getc), ("Block", Phase::GetBlock)],
    ),
    ("Random", &[("Seeks", Phase::Seeks)]),
];

const FILES: &[Group] = &[
    (
        "Sequential Create",
        &[
            ("Create", Phase::SeqCreate),
            ("Read", Phase::SeqStat),
            ("Delete", Phase::SeqDel),
        ],
    ),
    (
        "Random Create",
        &[
            ("Create", Phase::RanCreate),
            ("Read", Phase::RanStat),
            ("Delete", Phase::RanDel),
        ],
    ),
];

fn unit(p: Phase) -> &'static str {
    match p.unit() {
        RateUnit::Bytes => "MiB/s",
        RateUnit::Seeks => "/s",
        RateUnit::Files => "/s",
    }
}

fn cell(m: &MetricSummary) -> String {
    let text = match m.ci {
        Some((lo, hi)) => format!("{} ± {}", num::fmt(m.mean), num::fmt((hi - lo) / 2.0)),
        None => num::fmt(m.mean),
    };
    esc(&text).into_owned()
}

/// `%CP` as bonnie++ prints it: a whole number.
fn percent(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.0}")
    } else {
        "–".to_string()
    }
}

/// A configuration's figures for `p`, when it ran it.
fn has(c: &ConfigPhases, p: Phase) -> Option<&BonniePhase> {
    c.phases.iter().find(|b| b.phase == p.label())
}

/// One of bonnie++'s two tables, or nothing when no configuration ran its phases; `first`
/// is the column after the name (its heading and its text), as in bonnie++'s tables.
fn table(
    h: &mut String,
    all: &[ConfigPhases],
    groups: &[Group],
    first: (&str, fn(&ConfigPhases) -> String),
) {
    let configs: Vec<&ConfigPhases> = all
        .iter()
        .filter(|c| {
            groups
                .iter()
                .any(|g| g.1.iter().any(|(_, p)| has(c, *p).is_some()))
        })
        .collect();
    if configs.is_empty() {
        return;
    }
    let _ = write!(
        h,
        "<div class=\"scroll\"><table class=\"bonnie\"><thead><tr><th \
         rowspan=\"3\">configuration</th><th rowspan=\"3\">{}</th>",
        esc(first.0)
    );
    for (title, cols) in groups {
        let _ = write!(h, "<th colspan=\"{}\">{}</th>", 2 * cols.len(), esc(title));
    }
    h.push_str("</tr><tr>");
    for (_, cols) in groups {
        for (title, _) in *cols {
            let _ = write!(h, "<th colspan=\"2\">{}</th>", esc(title));
        }
    }
    h.push_str("</tr><tr>");
    for (_, cols) in groups {
        for (_, p) in *cols {
            let _ = write!(h, "<th>{}</th><th>%CP</th>", unit(*p));
        }
    }
    h.push_str("</tr></thead><tbody>");
    for c in &configs {
        let _ = write!(
            h,
            "<tr><td>{}</td><td class=\"n\">{}</td>",
            esc(&c.label),
            esc(&(first.1)(c))
        );
        for (_, cols) in groups {
            for (_, p) in *cols {
                match has(c, *p) {
                    Some(b) => {
                        let _ = write!(
                            h,
                            "<td class=\"n\">{}{}</td><td class=\"n\">{}</td>",
                            cell(&b.rate),
                            if b.short() { "*" } else { "" },
                            percent(b.cpu_pct.mean)
                        );
                    }
                    None => h.push_str("<td></td><td></td>"),
                }
            }
        }
        h.push_str("</tr>");
        let _ = write!(
            h,
            "<tr class=\"muted\"><td colspan=\"2\">latency (max)</td>"
        );
        for (_, cols) in groups {
            for (_, p) in *cols {
                let lat = has(c, *p).map_or(String::new(), |b| {
                    iolab_util::units::format_ns(b.lat_max_ns)
                });
                let _ = write!(h, "<td class=\"n\" colspan=\"2\">{}</td>", esc(&lat));
            }
        }
        h.push_str("</tr>");
    }
    h.push_str("</tbody></table></div>");
}

/// The `bonnie` section: bonnie++'s tables for the configurations that ran bonnie phases.
fn render(h: &mut String, configs: &[ConfigPhases]) {
    h.push_str("<section id=\"bonnie\"><h2>bonnie++ phases</h2><p class=\"muted\">bonnie++'s tables: rates (MiB/s for the I/O phases, seeks and files per second) and %CP, mean ± half-width of the 95% interval over the ok runs; the slowest operation of any run below. Every phase has a number: where bonnie++ prints +++++ (a phase under 0.5 s), iolab's clock measured it (docs/bonnie.md).</p>");
    table(h, configs, IO, ("Size", size_text));
    table(h, configs, FILES, ("Num Files", files_text));
    if configs
        .iter()
        .flat_map(|c| &c.phases)
        .any(BonniePhase::short)
    {
        h.push_str("<p class=\"muted\">* under 0.5 s in at least one run, where bonnie++ prints +++++: iolab's clock times it to within two clock reads (tens of nanoseconds); how much such a short phase varies from run to run is what the ± interval says.</p>");
    }
    h.push_str("</section>");
}

/// The same tables in Markdown, one row per configuration and phase group.
fn markdown(s: &mut String, configs: &[ConfigPhases]) {
    s.push_str("\n## bonnie++ phases\n\nRate and %CP per phase (mean ± half-width of the 95% interval over the ok runs), the slowest operation of any run; no +++++: a rate marked * lasted under 0.5 s in some run, where bonnie++ prints +++++ (docs/bonnie.md).\n\n| configuration | phase | rate | %CP | max latency |\n|---|---|---:|---:|---:|\n");
    for c in configs {
        for b in &c.phases {
            let unit = Phase::ALL
                .iter()
                .find(|p| p.label() == b.phase)
                .map_or("", |p| unit(*p));
            let _ = writeln!(
                s,
                "| {} | {} | {}{} {unit} | {} | {} |",
                escape_md(&c.label),
                b.phase,
                cell(&b.rate),
                if b.short() { "*" } else { "" },
                percent(b.cpu_pct.mean),
                iolab_util::units::format_ns(b.lat_max_ns)
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_report::load;
    use iolab_report::testing::{assert_structure, record, render_all, store_with};
    use iolab_store::{Metric, RunStatus};

    /// bon_csv2html's tables: the file size after the name in the I/O table, the file
    /// count (in units of 1024) in the files table.
    #[test]
    fn the_tables_have_bonnies_size_and_file_count_columns() {
        let (mut store, exp, c) = store_with(&["journal=ordered"]);
        let mut r = record(c[0], 0, RunStatus::Ok, 100.0);
        for p in [Phase::PutBlock, Phase::SeqCreate] {
            r.metrics.push(Metric::new(p.rate_metric(), 100.0, "MiB/s"));
            r.metrics.push(Metric::new(p.cpu_metric(), 50.0, "%"));
            let (ops, bytes) = if p == Phase::PutBlock {
                (256, 256 << 20)
            } else {
                (16 * 1024, 0)
            };
            r.flowops.push(iolab_store::FlowopStats {
                name: p.label().into(),
                kind: "write".into(),
                ops,
                bytes,
                errors: 0,
                latency: iolab_store::LatencyStats::default(),
                histogram: Vec::new(),
                extra: serde_json::json!({ "elapsed_ns": 2_000_000_000u64 }),
            });
        }
        store.record_run(&r).unwrap();
        let data = load(&store, exp, &[&BonnieSection]).unwrap();
        let (html, _, _) = render_all(&data);
        let section = &html[html.find("id=\"bonnie\"").unwrap()..];
        let section = &section[..section.find("</section>").unwrap()];
        assert!(section.contains("<th rowspan=\"3\">Size</th>"), "{section}");
        assert!(
            section.contains("<th rowspan=\"3\">Num Files</th>"),
            "{section}"
        );
        assert!(
            section.contains("<td>journal=ordered</td><td class=\"n\">256 MiB</td>"),
            "{section}"
        );
        assert!(
            section.contains("<td>journal=ordered</td><td class=\"n\">16</td>"),
            "{section}"
        );
    }

    #[test]
    fn bonnie_runs_get_bonnies_tables_and_other_runs_none() {
        let (mut store, exp, c) = store_with(&["journal=ordered", "other"]);
        for rep in 0..2 {
            let mut r = record(c[0], rep, RunStatus::Ok, 100.0);
            for (i, p) in Phase::ALL.iter().enumerate() {
                if *p == Phase::Putc {
                    continue; // skipped, as with a char_size of 0
                }
                r.metrics.push(Metric::new(
                    p.rate_metric(),
                    100.0 + i as f64 + rep as f64,
                    "op/s",
                ));
                r.metrics.push(Metric::new(p.cpu_metric(), 50.0, "%"));
                r.metrics.push(Metric::new(
                    p.latency_metric(),
                    1000.0 * (rep + 1) as f64,
                    "ns",
                ));
                let elapsed = if *p == Phase::Seeks { 0.01 } else { 2.0 };
                r.metrics
                    .push(Metric::new(p.elapsed_metric(), elapsed, "s"));
            }
            store.record_run(&r).unwrap();
        }
        store
            .record_run(&record(c[1], 0, RunStatus::Ok, 100.0))
            .unwrap();
        let data = load(&store, exp, &[&BonnieSection]).unwrap();
        assert_eq!(
            data.configs[0].sections["bonnie"].as_array().unwrap().len(),
            11
        );
        assert!(data.configs[1].sections["bonnie"]
            .as_array()
            .unwrap()
            .is_empty());
        let ok = phases(&store.ok_metrics(c[0]).unwrap());
        let seeks = ok.iter().find(|b| b.phase == "seeks").unwrap();
        assert_eq!(seeks.rate.n, 2);
        assert_eq!(seeks.lat_max_ns, 2000.0, "the slowest of any run");
        assert!(seeks.short(), "10 ms: bonnie++'s +++++");
        assert!(!ok[0].short());
        let (html, markdown, json) = render_all(&data);
        assert_structure(&html);
        assert!(markdown.contains("## bonnie++ phases"), "{markdown}");
        assert!(
            markdown.contains("| journal=ordered | seeks |"),
            "{markdown}"
        );
        let section = &html[html.find("id=\"bonnie\"").expect("a bonnie section")..];
        let section = &section[..section.find("</section>").unwrap()];
        for h in [
            "Sequential Output",
            "Sequential Input",
            "Random Create",
            "%CP",
        ] {
            assert!(section.contains(h), "{h}");
        }
        assert!(section.contains("journal=ordered") && !section.contains(">other<"));
        assert_eq!(
            section.matches("*</td>").count(),
            1,
            "the seeks' rate is marked"
        );
        assert!(section.contains("under 0.5 s in at least one run"));
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(v["configs"][0]["bonnie"].as_array().unwrap().len(), 11);
        // An experiment without bonnie runs has no such section.
        let (store, exp, _) = store_with(&["a"]);
        let (html, _, _) = render_all(&load(&store, exp, &[&BonnieSection]).unwrap());
        assert!(!html.contains("id=\"bonnie\""));
    }
}
