//! Cache simulations in the report: what the estimated service time charges write-back for,
//! next to the sweep's charts of the results (drawn from the headline metrics: miss ratio,
//! origin traffic, dirty evictions, metadata memory, service time).

use std::fmt::Write as _;

use iolab_report::escape::escape_html as esc;
use iolab_report::num;
use iolab_report::section::{Placement, Section, SectionInput, SectionView};
use iolab_report::ReportData;
use serde::Serialize;

/// The report's `cachesim` section.
pub struct CachesimSection;

/// One configuration that wrote dirty blocks back.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WriteBack {
    pub label: String,
    pub dirty_evictions: f64,
    /// Device time of those write-backs, seconds.
    pub writeback_s: f64,
    /// The estimated service time, seconds.
    pub service_time_s: f64,
}

/// What the section says.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CachesimNotes {
    /// Simulations in the experiment.
    pub simulations: usize,
    /// Those that wrote dirty blocks back.
    pub write_back: Vec<WriteBack>,
}

impl Section for CachesimSection {
    fn key(&self) -> &'static str {
        "cachesim"
    }

    fn placement(&self) -> Placement {
        Placement::Details
    }

    fn collect(&self, input: &SectionInput<'_>) -> Option<Box<dyn SectionView>> {
        let first = |c: &iolab_report::section::ConfigRuns<'_>, name: &str| {
            c.ok_metrics
                .get(name)
                .and_then(|v| v.values.iter().copied().find(|x| x.is_finite()))
        };
        let mut simulations = 0;
        let mut write_back = Vec::new();
        for c in input.configs {
            // A simulation is exact: any one run's value is the configuration's.
            let (Some(dirty), Some(service)) =
                (first(c, "dirty_evictions"), first(c, "service_time_s"))
            else {
                continue;
            };
            simulations += 1;
            if dirty > 0.0 {
                write_back.push(WriteBack {
                    label: c.label.to_string(),
                    dirty_evictions: dirty,
                    writeback_s: first(c, "writeback_s").unwrap_or(f64::NAN),
                    service_time_s: service,
                });
            }
        }
        (simulations > 0).then(|| {
            Box::new(CachesimNotes {
                simulations,
                write_back,
            }) as Box<dyn SectionView>
        })
    }
}

const MODEL: &str = "The estimated service time sums, over every request the simulation sent \
                     to a device, the device model's latency plus the bytes over its rate: \
                     random or sequential as the request's block follows the previous one or \
                     not, one request at a time, the two devices never overlapping — an \
                     estimate for comparing configurations, not a wall clock \
                     (docs/cachesim.md, \"The device model\").";

const WRITE_BACK: &str = "Write-back: every dirty block that leaves the cache is priced as a \
                          random read from the cache device and a random write to the origin \
                          (on a hard disk a seek, 8 ms), where write-through's writes of a \
                          sequential stream are priced as sequential writes. With writeback = \
                          \"on-eviction\" (the default) that time is in the service time, as \
                          if requests waited for every write-back: this is why write-back can \
                          come out slower than write-through although it writes less to the \
                          origin. Real write-back caches (dm-cache, bcache) write dirty blocks \
                          back in the origin's idle time: writeback = \"background\" leaves \
                          that time out of the service time; write-back time is shown either \
                          way (docs/cachesim.md, \"Write-back in the estimate\").";

impl CachesimNotes {
    /// `(min, max)` of `f` over the write-back configurations.
    fn range(&self, f: impl Fn(&WriteBack) -> f64) -> (f64, f64) {
        self.write_back
            .iter()
            .map(f)
            .filter(|x| x.is_finite())
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
                (lo.min(x), hi.max(x))
            })
    }

    /// One sentence on the write-back configurations' numbers.
    fn summary(&self) -> Option<String> {
        let n = self.write_back.len();
        if n == 0 {
            return None;
        }
        let (dlo, dhi) = self.range(|w| w.dirty_evictions);
        let (wlo, whi) = self.range(|w| w.writeback_s);
        let (plo, phi) = self.range(|w| w.writeback_s / w.service_time_s * 100.0);
        let span = |lo: f64, hi: f64, f: &dyn Fn(f64) -> String| {
            if lo == hi {
                f(lo)
            } else {
                format!("{} – {}", f(lo), f(hi))
            }
        };
        Some(format!(
            "{n} of the {} simulations wrote dirty blocks back: {} dirty evictions, {} s of \
             write-back time — {} % of their estimated service time (above 100 %: outside it, \
             writeback = \"background\").",
            self.simulations,
            span(dlo, dhi, &|x| num::fmt_count(x.round() as u64)),
            span(wlo, whi, &num::fmt),
            span(plo, phi, &|x| format!("{x:.0}")),
        ))
    }
}

impl SectionView for CachesimNotes {
    fn html(&self, h: &mut String, _data: &ReportData) {
        let _ = write!(
            h,
            "<section id=\"cachesim\"><h2>Cache simulation: what the estimate counts</h2><p>{}</p><p>{}</p>",
            esc(MODEL),
            esc(WRITE_BACK)
        );
        if let Some(s) = self.summary() {
            let _ = write!(h, "<p>{}</p>", esc(&s));
        }
        h.push_str("</section>");
    }

    fn markdown(&self, s: &mut String, _data: &ReportData) {
        let _ = write!(
            s,
            "\n## Cache simulation: what the estimate counts\n\n{MODEL}\n\n{WRITE_BACK}\n"
        );
        if let Some(t) = self.summary() {
            let _ = write!(s, "\n{t}\n");
        }
    }

    fn json(&self) -> Option<serde_json::Value> {
        serde_json::to_value(self).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_report::load;
    use iolab_report::testing::{assert_structure, record, render_all, store_with};
    use iolab_store::{Metric, RunStatus};

    /// Seed 004's review: write-back came out 12× slower than write-through, and nothing
    /// said why.
    #[test]
    fn the_report_explains_what_write_back_is_charged() {
        let (mut store, exp, c) =
            store_with(&["write_policy=write-through", "write_policy=write-back"]);
        for (config, dirty, wb, service) in [(c[0], 0.0, 0.0, 2.0), (c[1], 300.0, 2.4, 3.0)] {
            let mut r = record(config, 0, RunStatus::Ok, 100.0);
            for (name, v) in [
                ("dirty_evictions", dirty),
                ("writeback_s", wb),
                ("service_time_s", service),
            ] {
                r.metrics.push(Metric::new(name, v, ""));
            }
            store.record_run(&r).unwrap();
        }
        let data = load(&store, exp, &[&CachesimSection]).unwrap();
        let (html, md, json) = render_all(&data);
        assert_structure(&html);
        let section = &html[html.find("id=\"cachesim\"").expect("the section")..];
        assert!(section.contains("random write to the origin"), "{section}");
        assert!(
            section.contains("writeback = &quot;background&quot;"),
            "{section}"
        );
        assert!(
            md.contains("1 of the 2 simulations wrote dirty blocks back: 300 dirty evictions, 2.400 s of write-back time — 80 % of their estimated service time"),
            "{md}"
        );
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(v["cachesim"]["write_back"][0]["dirty_evictions"], 300.0);
        // Not a simulation: no section.
        let (store, exp, _) = store_with(&["a"]);
        let (html, _, _) = render_all(&load(&store, exp, &[&CachesimSection]).unwrap());
        assert!(!html.contains("id=\"cachesim\""));
    }
}
