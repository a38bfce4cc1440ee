//! SQLite runs in the report: what a transaction cost in system calls, per configuration —
//! the evidence that explains the journal modes (a DELETE journal is unlinked at every
//! commit, a TRUNCATE one cut, WAL syncs once), next to the transactions per second.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use iolab_report::escape::{escape_html as esc, escape_md};
use iolab_report::num;
use iolab_report::section::{Placement, Section, SectionInput, SectionView};
use iolab_report::ReportData;
use iolab_store::MetricValues;
use serde::Serialize;

/// The report's `sqlite` section: the system calls per transaction.
pub struct SqliteSection;

/// One configuration's transactions, means over its ok runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PerTransaction {
    pub txn_per_s: f64,
    pub fsyncs: f64,
    /// Of the fsyncs, those of the database's directory.
    pub dir_fsyncs: f64,
    pub unlinks: f64,
    pub ftruncates: f64,
    pub writes: f64,
    /// Bytes SQLite wrote per transaction (journal, WAL and database pages).
    pub bytes_written: f64,
}

/// A column: its heading and its value.
type Column = (&'static str, fn(&PerTransaction) -> f64);

const COLUMNS: &[Column] = &[
    ("txn/s", |p| p.txn_per_s),
    ("fsyncs", |p| p.fsyncs),
    ("of them directory", |p| p.dir_fsyncs),
    ("unlinks", |p| p.unlinks),
    ("ftruncates", |p| p.ftruncates),
    ("writes", |p| p.writes),
    ("KiB written", |p| p.bytes_written / 1024.0),
];

impl Section for SqliteSection {
    fn key(&self) -> &'static str {
        "sqlite"
    }

    fn placement(&self) -> Placement {
        Placement::Summary
    }

    fn collect(&self, input: &SectionInput<'_>) -> Option<Box<dyn SectionView>> {
        let rows: Vec<(String, Option<PerTransaction>)> = input
            .configs
            .iter()
            .map(|c| (c.label.to_string(), per_transaction(c.ok_metrics)))
            .collect();
        if rows.iter().all(|r| r.1.is_none()) {
            return None;
        }
        Some(Box::new(SqliteCalls { rows }))
    }
}

/// A configuration's SQLite figures (`None` when its runs were not SQLite runs).
pub fn per_transaction(ok: &BTreeMap<String, MetricValues>) -> Option<PerTransaction> {
    let mean = |name: &str| -> Option<f64> { ok.get(name)?.finite_mean() };
    // Bytes per transaction run by run: runs of different lengths weigh the same.
    let bytes_per_tx = match (ok.get("bytes"), ok.get("ops")) {
        (Some(b), Some(o)) => {
            let v: Vec<f64> = b
                .values
                .iter()
                .zip(&o.values)
                .filter(|(_, o)| **o > 0.0)
                .map(|(b, o)| b / o)
                .filter(|x| x.is_finite())
                .collect();
            if v.is_empty() {
                f64::NAN
            } else {
                v.iter().sum::<f64>() / v.len() as f64
            }
        }
        _ => f64::NAN,
    };
    Some(PerTransaction {
        fsyncs: mean("fsyncs_per_tx")?,
        txn_per_s: mean("ops_per_s").unwrap_or(f64::NAN),
        dir_fsyncs: mean("dir_fsyncs_per_tx").unwrap_or(f64::NAN),
        unlinks: mean("unlinks_per_tx").unwrap_or(f64::NAN),
        ftruncates: mean("ftruncates_per_tx").unwrap_or(f64::NAN),
        writes: mean("writes_per_tx").unwrap_or(f64::NAN),
        bytes_written: bytes_per_tx,
    })
}

/// The table of every configuration that ran SQLite.
#[derive(Debug)]
struct SqliteCalls {
    rows: Vec<(String, Option<PerTransaction>)>,
}

const NOTE: &str = "System calls SQLite made per transaction in the timed region (iolab's hooks \
                    into SQLite's unix VFS), means over the ok runs: these explain the journal \
                    modes — DELETE creates and unlinks its journal at every commit, TRUNCATE \
                    cuts it, WAL appends and syncs once (docs/sqlite.md). A time-limited WAL \
                    run's final checkpoint adds its syncs to the last transactions.";

/// Per-transaction counts to two decimals (they are near whole numbers); rates as
/// everywhere.
fn cell(i: usize, v: f64) -> String {
    if i == 0 || !v.is_finite() {
        num::fmt(v)
    } else {
        format!("{v:.2}")
    }
}

impl SectionView for SqliteCalls {
    fn html(&self, h: &mut String, _data: &ReportData) {
        let _ = write!(
            h,
            "<section id=\"sqlite\"><h2>SQLite: system calls per transaction</h2><p \
             class=\"muted\">{}</p><table class=\"sqlite\"><thead><tr><th \
             rowspan=\"2\">configuration</th><th rowspan=\"2\">txn/s</th><th colspan=\"{}\">per \
             transaction</th></tr><tr>",
            esc(NOTE),
            COLUMNS.len() - 1
        );
        for (title, _) in &COLUMNS[1..] {
            let _ = write!(h, "<th>{}</th>", esc(title));
        }
        h.push_str("</tr></thead><tbody>");
        for (label, p) in &self.rows {
            let Some(p) = p else { continue };
            let _ = write!(h, "<tr><td>{}</td>", esc(label));
            for (i, (_, f)) in COLUMNS.iter().enumerate() {
                let _ = write!(h, "<td class=\"n\">{}</td>", esc(&cell(i, f(p))));
            }
            h.push_str("</tr>");
        }
        h.push_str("</tbody></table></section>");
    }

    fn markdown(&self, s: &mut String, _data: &ReportData) {
        let _ = write!(
            s,
            "\n## SQLite: system calls per transaction\n\n{NOTE}\n\n| configuration | txn/s |"
        );
        for (title, _) in &COLUMNS[1..] {
            let _ = write!(s, " {title}/txn |");
        }
        s.push_str("\n|---|");
        s.push_str(&"---:|".repeat(COLUMNS.len()));
        s.push('\n');
        for (label, p) in &self.rows {
            let Some(p) = p else { continue };
            let _ = write!(s, "| {} |", escape_md(label));
            for (i, (_, f)) in COLUMNS.iter().enumerate() {
                let _ = write!(s, " {} |", cell(i, f(p)));
            }
            s.push('\n');
        }
    }

    /// The configuration's figures per transaction, in its entry of the JSON report.
    fn config_json(&self, i: usize) -> Option<serde_json::Value> {
        serde_json::to_value(self.rows.get(i)?.1.as_ref()?).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_report::load;
    use iolab_report::testing::{assert_structure, record, render_all, store_with};
    use iolab_store::{Metric, RunStatus};

    /// The seed-002 review: the calls that explain the journal modes were only in `--json`.
    #[test]
    fn the_report_shows_each_configurations_calls_per_transaction() {
        let (mut store, exp, c) = store_with(&["journal=delete", "journal=wal", "other"]);
        for rep in 0..2 {
            for (config, fsyncs, unlinks) in [(c[0], 4.0, 1.0), (c[1], 1.0, 0.0)] {
                let mut r = record(config, rep, RunStatus::Ok, 100.0);
                for (name, v) in [
                    ("fsyncs_per_tx", fsyncs),
                    ("dir_fsyncs_per_tx", fsyncs / 4.0),
                    ("unlinks_per_tx", unlinks),
                    ("ftruncates_per_tx", 0.0),
                    ("writes_per_tx", 6.0),
                    ("ops", 1000.0),
                    ("bytes", 1000.0 * 8192.0),
                ] {
                    r.metrics.push(Metric::new(name, v, ""));
                }
                store.record_run(&r).unwrap();
            }
        }
        store
            .record_run(&record(c[2], 0, RunStatus::Ok, 100.0))
            .unwrap();
        let data = load(&store, exp, &[&SqliteSection]).unwrap();
        let (html, md, json) = render_all(&data);
        assert_structure(&html);
        let section = &html[html.find("id=\"sqlite\"").expect("a sqlite section")..];
        let section = &section[..section.find("</section>").unwrap()];
        for h in [
            "fsyncs",
            "of them directory",
            "unlinks",
            "ftruncates",
            "txn/s",
        ] {
            assert!(section.contains(h), "{h}");
        }
        assert!(section.contains(
            "<tr><td>journal=delete</td><td class=\"n\">100.0</td><td \
             class=\"n\">4.00</td><td class=\"n\">1.00</td><td class=\"n\">1.00</td>"
        ));
        assert!(!section.contains(">other<"), "not a SQLite configuration");
        assert!(
            md.contains("| journal=wal | 100.0 | 1.00 | 0.25 | 0.00 | 0.00 | 6.00 | 8.00 |"),
            "{md}"
        );
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(v["configs"][0]["sqlite"]["unlinks"], 1.0);
        assert_eq!(v["configs"][0]["sqlite"]["bytes_written"], 8192.0);
        // Other kinds' experiments have no such section.
        let (store, exp, _) = store_with(&["a"]);
        let (html, _, _) = render_all(&load(&store, exp, &[&SqliteSection]).unwrap());
        assert!(!html.contains("id=\"sqlite\""));
    }
}
