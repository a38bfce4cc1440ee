//! Parts of the report that something outside this crate contributes — a workload kind's own
//! tables and charts (a classic tool's own tables, a matrix of heatmaps, a chart per day) —
//! behind one small
//! trait, so that the report names no kind. A [`Section`] reads what it shows from the
//! configurations' stored runs; its [`SectionView`] draws it in each format. The caller of
//! [`crate::load`] passes the sections it knows (the registry of kinds).

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::sync::Arc;

use iolab_store::{FlowopStats, MetricValues};
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Value;

use crate::model::ReportData;
use crate::sweep::FactorLevels;

/// One configuration, as a section reads it.
pub struct ConfigRuns<'a> {
    /// The configuration's label.
    pub label: &'a str,
    /// The values of every metric over its ok runs, by name.
    pub ok_metrics: &'a BTreeMap<String, MetricValues>,
    /// The flowop rows of each of its ok runs.
    pub ok_flowops: &'a [&'a Vec<FlowopStats>],
}

/// What a section reads.
pub struct SectionInput<'a> {
    /// Every configuration, in the report's order.
    pub configs: &'a [ConfigRuns<'a>],
    /// The experiment's factors and their levels.
    pub factors: &'a [FactorLevels],
}

/// Where a section is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// Right after the summary table: the kind's own form of the headline numbers.
    Summary,
    /// After the sweeps and the miss-ratio curves: the kind's detailed tables and charts.
    Details,
}

/// A part of the report.
pub trait Section: Sync {
    /// Its key in the JSON report.
    fn key(&self) -> &'static str;
    fn placement(&self) -> Placement;
    /// Reads what it shows; `None` when the experiment has nothing of it.
    fn collect(&self, input: &SectionInput<'_>) -> Option<Box<dyn SectionView>>;
}

/// A section's content, drawn in each format.
pub trait SectionView: Debug + Send + Sync {
    /// Appends its HTML (a `<section>` of its own) to `h`.
    fn html(&self, h: &mut String, data: &ReportData);
    /// Appends its Markdown to `s`.
    fn markdown(&self, s: &mut String, data: &ReportData);
    /// Its data in the JSON report, under its key at the top level (`None`: none there).
    fn json(&self) -> Option<Value> {
        None
    }
    /// Its data about configuration `i`, under its key in that configuration's entry.
    fn config_json(&self, _i: usize) -> Option<Value> {
        None
    }
}

/// A collected section, as the report keeps it.
#[derive(Debug, Clone)]
pub struct Placed {
    pub key: &'static str,
    pub placement: Placement,
    pub view: Arc<dyn SectionView>,
}

/// The collected sections, in the order they were given.
#[derive(Debug, Clone, Default)]
pub struct Sections(pub Vec<Placed>);

impl Sections {
    /// Reads every section of `sections` that has something to show.
    pub fn collect(sections: &[&dyn Section], input: &SectionInput<'_>) -> Sections {
        Sections(
            sections
                .iter()
                .filter_map(|s| {
                    Some(Placed {
                        key: s.key(),
                        placement: s.placement(),
                        view: Arc::from(s.collect(input)?),
                    })
                })
                .collect(),
        )
    }

    /// The sections drawn at `placement`.
    pub fn at(&self, placement: Placement) -> impl Iterator<Item = &Placed> {
        self.0.iter().filter(move |p| p.placement == placement)
    }

    /// What the sections say about configuration `i`, by key.
    pub fn config_json(&self, i: usize) -> BTreeMap<String, Value> {
        self.0
            .iter()
            .filter_map(|p| Some((p.key.to_string(), p.view.config_json(i)?)))
            .collect()
    }
}

/// Two reports agree on their sections when they say the same in JSON.
impl PartialEq for Sections {
    fn eq(&self, other: &Sections) -> bool {
        self.0.len() == other.0.len()
            && self.0.iter().zip(&other.0).all(|(a, b)| {
                a.key == b.key && a.placement == b.placement && a.view.json() == b.view.json()
            })
    }
}

/// Each section's top-level JSON under its key (flattened into the report).
impl Serialize for Sections {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        for p in &self.0 {
            if let Some(v) = p.view.json() {
                m.serialize_entry(p.key, &v)?;
            }
        }
        m.end()
    }
}
