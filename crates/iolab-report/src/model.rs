//! The report's data: read once from the database by [`load`], then only rendered.

use std::collections::BTreeMap;

use iolab_metrics::MetricDef;
use iolab_stats::{detect_outliers, Level, Sample, Summary};
use iolab_store::{
    Config, ConfigId, ConfigOutcome, Experiment, ExperimentId, FlowopStats, RunCounts, RunDetails,
    RunId, RunStatus, Severity, Store, StoredFinding,
};
use iolab_workload::model::FlowopKind;
use serde::Serialize;
use serde_json::Value;

use crate::Result;

/// Runs per configuration drawn in the time series (the first ones); the rest are counted.
/// Keeps a report of thousands of runs small and quick to open.
pub const MAX_TIMELINE_RUNS: usize = 16;

/// A trailing interval the run ended inside is drawn at its real rate (its bytes over the
/// time it covered) only when it covers at least this fraction of the width, or is the run's
/// only interval: a sliver of a few milliseconds holds a handful of completions and no rate.
pub const MIN_PARTIAL_INTERVAL: f64 = 0.1;

/// A trailing interval short of its width by at most width ÷ this is a full one (as in
/// iolab-check): clock conversions round by nanoseconds.
const FULL_INTERVAL_SLACK_DIVISOR: u64 = 1000;

/// Monitor quantities the time series show.
const MONITOR_METRICS: [&str; 6] = [
    "cpu.usr_pct",
    "cpu.sys_pct",
    "cpu.iowait_pct",
    "dev.util_pct",
    "dev.rkB_per_s",
    "dev.wkB_per_s",
];

/// Whether a stored flowop row moves data (filebench's IO Summary operations and the
/// `read`/`write` records of single-pattern tests): its histogram joins the latency CDF. Kinds are flowop
/// names ([`FlowopKind::name`]).
fn moves_data(kind: &str) -> bool {
    FlowopKind::parse(kind).is_some_and(|k| k.is_io())
}

/// Everything a report shows.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReportData {
    pub experiment: Experiment,
    pub host: HostSummary,
    /// The experiment's headline metrics (from the definitions stored with it), summarised
    /// and charted for every configuration in this order.
    pub headline: Vec<MetricDef>,
    /// What the checks found, one entry per check (most severe first, then the most
    /// widespread): a check that fired on every configuration is explained once.
    pub findings: Vec<CheckFindings>,
    pub configs: Vec<ConfigReport>,
    /// What the sections given to [`load`] collected (a workload kind's own tables), each
    /// under its key in JSON.
    #[serde(flatten)]
    pub sections: crate::section::Sections,
    /// The factors and their levels, in the experiment file's order
    /// ([`ConfigReport::levels`] points into them).
    pub factors: Vec<crate::sweep::FactorLevels>,
    /// Miss-ratio curves of the saved block traces (`None` without them).
    pub miss_ratio_curves: Option<crate::mrc::MissRatioCurves>,
}

/// The host, in a few words.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct HostSummary {
    pub kernel: Option<String>,
    pub os: Option<String>,
    pub cpu: Option<String>,
    pub memory_bytes: Option<u64>,
    pub virtualization: Option<String>,
    /// Under MPI: how many ranks on which hosts (`4 ranks on 2 hosts: n1 ×2, n2 ×2`).
    pub ranks: Option<String>,
}

impl HostSummary {
    /// Picks the known fields out of the host environment JSON; missing ones stay `None`.
    pub fn from_host(host: &Value) -> HostSummary {
        let s = |k: &str| host.get(k).and_then(Value::as_str).map(str::to_string);
        let cpu = match (
            s("cpu_model"),
            host.get("logical_cpus").and_then(Value::as_u64),
        ) {
            (Some(m), Some(n)) => Some(format!("{m} × {n} logical CPUs")),
            (Some(m), None) => Some(m),
            (None, Some(n)) => Some(format!("{n} logical CPUs")),
            (None, None) => None,
        };
        let virtualization = host.get("virtualization").map(|v| {
            let mut parts = Vec::new();
            if let Some(h) = v.get("hypervisor").and_then(Value::as_str) {
                parts.push(format!("VM ({h})"));
            } else if v.get("vm").and_then(Value::as_bool) == Some(true) {
                parts.push("VM".to_string());
            }
            if let Some(c) = v.get("container").and_then(Value::as_str) {
                parts.push(format!("container ({c})"));
            }
            if parts.is_empty() {
                "bare metal".to_string()
            } else {
                parts.join(", ")
            }
        });
        let ranks = host.get("mpi").map(|m| {
            let names: Vec<&str> = m["hosts"]
                .as_array()
                .map(|h| {
                    h.iter()
                        .map(|h| h["hostname"].as_str().unwrap_or("?"))
                        .collect()
                })
                .unwrap_or_default();
            let mut counted: Vec<(&str, usize)> = Vec::new();
            for n in &names {
                match counted.iter_mut().find(|(c, _)| c == n) {
                    Some((_, k)) => *k += 1,
                    None => counted.push((n, 1)),
                }
            }
            let n = m["ranks"].as_u64().unwrap_or(names.len() as u64);
            let hosts = counted
                .iter()
                .map(|(h, k)| {
                    if *k > 1 {
                        format!("{h} ×{k}")
                    } else {
                        h.to_string()
                    }
                })
                .collect::<Vec<_>>()
                .join(", ");
            let s = |k: usize| if k == 1 { "" } else { "s" };
            format!(
                "{n} MPI rank{} on {} host{}: {hosts}",
                s(n as usize),
                counted.len(),
                s(counted.len())
            )
        });
        HostSummary {
            ranks,
            kernel: s("kernel_release").or_else(|| s("kernel")),
            os: s("os"),
            cpu,
            memory_bytes: host.get("mem_total_bytes").and_then(Value::as_u64),
            virtualization,
        }
    }
}

/// One configuration's part of the report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConfigReport {
    pub config: Config,
    /// Per factor of [`ReportData::factors`], the index of this configuration's level
    /// (`None`: it has no such factor).
    pub levels: Vec<Option<usize>>,
    pub runs: RunCounts,
    /// The [`ReportData::headline`] metrics, in that order, over the ok runs.
    pub metrics: Vec<MetricSummary>,
    /// Per flowop name over the ok runs, in first-seen order (block trace rows included).
    pub flowops: Vec<FlowopRow>,
    /// Merged latency histogram `(upper_ns, count)` of the I/O flowops of the ok runs.
    pub latency_histogram: Vec<(u64, u64)>,
    /// Merged request-size histogram `(largest size in bucket, count)` of the `trace` rows.
    pub size_histogram: Vec<(u64, u64)>,
    /// The first [`MAX_TIMELINE_RUNS`] runs, for the time series.
    pub timeline: Vec<RunTimeline>,
    /// Runs left out of [`Self::timeline`].
    pub timeline_omitted: usize,
    /// What the sections say about this configuration, each under its key in JSON.
    #[serde(flatten)]
    pub sections: BTreeMap<String, Value>,
}

/// A headline metric over a configuration's ok runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetricSummary {
    pub name: String,
    pub unit: String,
    /// Finite values only (a NaN value is counted in [`Self::nan_values`]).
    pub values: Vec<f64>,
    pub runs: Vec<RunId>,
    pub nan_values: usize,
    pub n: usize,
    /// NaN with no values.
    pub mean: f64,
    /// Student-t 95% interval of the mean; `None` below two values.
    pub ci: Option<(f64, f64)>,
    pub outliers: Vec<Outlier>,
}

/// A value flagged by Tukey's fences or the scaled-MAD rule (flagged, never dropped).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Outlier {
    pub run: RunId,
    pub value: f64,
    pub tukey: bool,
    pub mad: bool,
}

impl MetricSummary {
    pub fn new(name: &str, unit: &str, raw: &[f64], runs: &[RunId]) -> MetricSummary {
        let mut values = Vec::with_capacity(raw.len());
        let mut kept_runs = Vec::with_capacity(raw.len());
        for (i, &v) in raw.iter().enumerate() {
            if v.is_finite() {
                values.push(v);
                kept_runs.push(runs.get(i).copied().unwrap_or(RunId(0)));
            }
        }
        let nan_values = raw.len() - values.len();
        let mut mean = f64::NAN;
        let mut ci = None;
        let mut outliers = Vec::new();
        if values.len() == 1 {
            mean = values[0];
        }
        if let Ok(sample) = Sample::from_slice(&values) {
            let s = Summary::new(&sample, Level::P95);
            mean = s.mean;
            ci = Some((s.ci.lower, s.ci.upper));
            let report = detect_outliers(&sample);
            for (i, f) in report.flags.iter().enumerate() {
                if f.any() {
                    outliers.push(Outlier {
                        run: kept_runs[i],
                        value: values[i],
                        tukey: f.tukey,
                        mad: f.mad,
                    });
                }
            }
        }
        MetricSummary {
            name: name.to_string(),
            unit: unit.to_string(),
            n: values.len(),
            values,
            runs: kept_runs,
            nan_values,
            mean,
            ci,
            outliers,
        }
    }
}

impl MetricSummary {
    /// `mean ± half-width of the interval`, or the mean alone; durations and sizes in the
    /// unit that suits them (`3.326 ± 2.535 s`).
    pub(crate) fn ci_text(&self) -> String {
        crate::num::ci_text(self.mean, self.ci, &self.unit)
    }
}

/// One check over the experiment: where it fired, the numbers per configuration, and its
/// explanation and fix once.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckFindings {
    pub check: String,
    /// The most severe of its findings.
    pub severity: Severity,
    /// The explanation and fix of its first finding. Those of the others differ at most in
    /// their numbers (the checks word them from the evidence, which [`CheckHit::evidence`]
    /// has per configuration).
    pub explanation: String,
    pub fix: String,
    /// The configuration the explanation and fix were written for, when some other finding
    /// of the check words them differently; `None` when they are all the same.
    pub worded_for: Option<String>,
    /// The configurations it fired on, in configuration order.
    pub hits: Vec<CheckHit>,
}

/// One check's findings about one configuration and its runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckHit {
    pub config: ConfigId,
    pub label: String,
    pub severity: Severity,
    /// Runs it fired on, of `total_runs`.
    pub runs: usize,
    pub total_runs: u64,
    /// Whether it fired on the configuration as a whole (did-not-converge).
    pub about_config: bool,
    /// Its evidence over these findings, field by field in the evidence's order (a JSON
    /// object).
    #[serde(serialize_with = "as_map")]
    pub evidence: Vec<(String, Evidence)>,
}

fn as_map<S: serde::Serializer>(v: &[(String, Evidence)], s: S) -> Result<S::Ok, S::Error> {
    s.collect_map(v.iter().map(|(k, e)| (k, e)))
}

/// One evidence field over a configuration's findings of a check.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Evidence {
    /// The same in every finding (or not a number: the first finding's).
    Value(Value),
    /// A number that differed between runs.
    Range { min: f64, max: f64 },
}

impl CheckFindings {
    /// Configuration-level plus run-level count, for ordering.
    fn weight(&self) -> (Severity, usize, usize) {
        let runs = self.hits.iter().map(|h| h.runs).sum();
        (self.severity, self.hits.len(), runs)
    }
}

/// Groups `findings` by check over `configs` (each with its total number of runs).
pub(crate) fn group_findings(
    findings: &[StoredFinding],
    configs: &[(&Config, u64)],
) -> Vec<CheckFindings> {
    let mut groups: Vec<CheckFindings> = Vec::new();
    // Configuration order, then the order the findings were stored in.
    for &(config, total_runs) in configs {
        for f in findings.iter().filter(|f| f.config == config.id) {
            let finding = &f.finding;
            let gi = match groups.iter().position(|g| g.check == finding.check) {
                Some(i) => i,
                None => {
                    groups.push(CheckFindings {
                        check: finding.check.clone(),
                        severity: finding.severity,
                        explanation: finding.explanation.clone(),
                        fix: finding.fix.clone(),
                        worded_for: None,
                        hits: Vec::new(),
                    });
                    groups.len() - 1
                }
            };
            let g = &mut groups[gi];
            g.severity = g.severity.max(finding.severity);
            if g.worded_for.is_none()
                && (g.explanation != finding.explanation || g.fix != finding.fix)
            {
                g.worded_for = Some(
                    g.hits
                        .first()
                        .map_or_else(|| config.label.clone(), |h| h.label.clone()),
                );
            }
            if g.hits.last().is_none_or(|h| h.config != config.id) {
                g.hits.push(CheckHit {
                    config: config.id,
                    label: config.label.clone(),
                    severity: finding.severity,
                    runs: 0,
                    total_runs,
                    about_config: false,
                    evidence: Vec::new(),
                });
            }
            let hit = g.hits.last_mut().expect("pushed above");
            hit.severity = hit.severity.max(finding.severity);
            match f.run {
                Some(_) => hit.runs += 1,
                None => hit.about_config = true,
            }
            merge_evidence(&mut hit.evidence, &finding.evidence);
        }
    }
    groups.sort_by_key(|g| std::cmp::Reverse(g.weight()));
    groups
}

/// Adds one finding's evidence: numbers widen a range, anything else keeps its first value.
fn merge_evidence(into: &mut Vec<(String, Evidence)>, evidence: &Value) {
    let fields: Vec<(&str, &Value)> = match evidence {
        Value::Object(m) => m.iter().map(|(k, v)| (k.as_str(), v)).collect(),
        Value::Null => Vec::new(),
        other => vec![("value", other)],
    };
    for (key, v) in fields {
        if v.is_null() {
            continue;
        }
        let Some(slot) = into.iter_mut().find(|(k, _)| k == key) else {
            into.push((key.to_string(), Evidence::Value(v.clone())));
            continue;
        };
        let (Some(x), Some((min, max))) = (v.as_f64(), slot.1.bounds()) else {
            continue;
        };
        if x != min || x != max {
            slot.1 = Evidence::Range {
                min: min.min(x),
                max: max.max(x),
            };
        }
    }
}

impl Evidence {
    /// `(min, max)` of a number or a range.
    fn bounds(&self) -> Option<(f64, f64)> {
        match self {
            Evidence::Value(v) => v.as_f64().map(|x| (x, x)),
            Evidence::Range { min, max } => Some((*min, *max)),
        }
    }
}

/// One flowop over a configuration's ok runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FlowopRow {
    pub name: String,
    pub kind: String,
    pub runs: usize,
    pub ops: u64,
    pub bytes: u64,
    pub errors: u64,
    /// Operation-weighted mean latency over the runs.
    pub lat_mean_ns: f64,
    /// Mean of the runs' p99.
    pub lat_p99_ns: f64,
    /// Largest of the runs' maxima.
    pub lat_max_ns: u64,
}

/// One run's time series.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunTimeline {
    pub run: RunId,
    pub repetition: u32,
    pub status: RunStatus,
    pub elapsed_s: f64,
    /// `(seconds since start, MiB/s)` per interval of the `io` series, at the interval's
    /// end; see [`interval_rates`] for a trailing partial interval.
    pub mib_per_s: Vec<(f64, f64)>,
    /// `(seconds since start, %)`.
    pub cpu_usr_pct: Vec<(f64, f64)>,
    pub cpu_sys_pct: Vec<(f64, f64)>,
    pub cpu_iowait_pct: Vec<(f64, f64)>,
    pub dev_util_pct: Vec<(f64, f64)>,
    /// Read + write, MB/s (10^6 B/s, as iostat's kB are 1000 B).
    pub dev_mb_per_s: Vec<(f64, f64)>,
    pub lat_p99_ns: f64,
}

impl RunTimeline {
    fn from_details(d: &RunDetails) -> RunTimeline {
        let mib = d
            .series
            .iter()
            .find(|s| s.name == "io")
            .map(|s| {
                interval_rates(s.width_ns, &s.bytes, d.run.elapsed_ns)
                    .into_iter()
                    .map(|(t, v)| (t, v / 1_048_576.0))
                    .collect()
            })
            .unwrap_or_default();
        let pts = |name: &str| -> Vec<(f64, f64)> {
            d.monitor
                .iter()
                .find(|m| m.metric == name)
                .map(|m| m.points.iter().map(|&(t, v)| (t as f64 / 1e9, v)).collect())
                .unwrap_or_default()
        };
        let read = pts("dev.rkB_per_s");
        let write = pts("dev.wkB_per_s");
        let dev_mb_per_s = if read.len() == write.len() {
            read.iter()
                .zip(&write)
                .map(|(r, w)| (r.0, (r.1 + w.1) / 1000.0))
                .collect()
        } else {
            // Different sampling: show what there is.
            read.iter()
                .chain(&write)
                .map(|&(t, v)| (t, v / 1000.0))
                .collect()
        };
        let lat_p99_ns = d
            .metrics
            .iter()
            .find(|m| m.name == "lat_p99_ns")
            .map_or(f64::NAN, |m| m.value);
        RunTimeline {
            run: d.run.id,
            repetition: d.run.repetition,
            status: d.run.status,
            elapsed_s: d.run.elapsed_ns as f64 / 1e9,
            mib_per_s: mib,
            cpu_usr_pct: pts(MONITOR_METRICS[0]),
            cpu_sys_pct: pts(MONITOR_METRICS[1]),
            cpu_iowait_pct: pts(MONITOR_METRICS[2]),
            dev_util_pct: pts(MONITOR_METRICS[3]),
            dev_mb_per_s,
            lat_p99_ns,
        }
    }
}

/// `(seconds since start, per second)` for each interval of a series of `width_ns`-wide
/// intervals (interval k covers [k·width, (k+1)·width) of a run of `elapsed_ns`), placed at
/// the interval's end. Full intervals divide by the width. The last interval is partial when
/// the run ended inside it (elapsed < count × width, less a thousandth of the width): it is
/// divided by the time it covered, elapsed − (count − 1) × width, and placed at the run's
/// end — so a run shorter than one interval shows one point at its real rate — unless it
/// covers less than [`MIN_PARTIAL_INTERVAL`] of the width and is not the only interval; then
/// it is left out. An unknown (0) or inconsistent elapsed time leaves every interval full.
pub fn interval_rates(width_ns: u64, values: &[u64], elapsed_ns: u64) -> Vec<(f64, f64)> {
    let w = width_ns.max(1);
    let n = values.len() as u64;
    let mut out = Vec::with_capacity(values.len());
    for (k, &v) in (0u64..).zip(values) {
        let start = k.saturating_mul(w);
        let end = start.saturating_add(w);
        let partial = k + 1 == n
            && elapsed_ns > start
            && elapsed_ns.saturating_add(w / FULL_INTERVAL_SLACK_DIVISOR) < end;
        if !partial {
            out.push((end as f64 / 1e9, v as f64 / (w as f64 / 1e9)));
            continue;
        }
        let covered = elapsed_ns - start;
        if n > 1 && (covered as f64) < MIN_PARTIAL_INTERVAL * w as f64 {
            continue;
        }
        out.push((elapsed_ns as f64 / 1e9, v as f64 / (covered as f64 / 1e9)));
    }
    out
}

/// Reads everything the report of `experiment` needs: a few whole-experiment queries plus
/// the details of at most [`MAX_TIMELINE_RUNS`] runs per configuration, and what each of
/// `sections` (the workload kinds' own parts) collects.
pub fn load(
    store: &Store,
    experiment: ExperimentId,
    sections: &[&dyn crate::section::Section],
) -> Result<ReportData> {
    let details = store.experiment_details(experiment)?;
    let headline: Vec<MetricDef> = iolab_metrics::headline(&store.metric_defs(experiment)?)
        .cloned()
        .collect();
    let findings = store.findings(experiment)?;
    let flowops = store.experiment_flowops(experiment)?;
    let mut configs = Vec::with_capacity(details.configs.len());
    let mut ok_by_config = Vec::with_capacity(details.configs.len());
    let mut curves = crate::mrc::Collector::default();
    let (factors, levels) = crate::sweep::factors(&details.experiment.spec, &details.configs);
    for (config, levels) in details.configs.into_iter().zip(levels) {
        let runs: Vec<_> = details
            .runs
            .iter()
            .filter(|r| r.config == config.id)
            .collect();
        let mut counts = RunCounts::default();
        for r in &runs {
            match r.status {
                RunStatus::Ok => counts.ok += 1,
                RunStatus::Failed => counts.failed += 1,
                RunStatus::Interrupted => counts.interrupted += 1,
            }
        }
        let ok = store.ok_metrics(config.id)?;
        let metrics = headline
            .iter()
            .map(|d| match ok.get(d.name.as_ref()) {
                Some(v) => MetricSummary::new(&d.name, &v.unit, &v.values, &v.runs),
                None => MetricSummary::new(&d.name, "", &[], &[]),
            })
            .collect();

        let ok_flowops: Vec<&Vec<FlowopStats>> = runs
            .iter()
            .filter(|r| r.status == RunStatus::Ok)
            .filter_map(|r| flowops.get(&r.id))
            .collect();
        let (rows, latency_histogram, size_histogram) = aggregate_flowops(&ok_flowops);
        curves.add(&config.label, &runs, &flowops);

        let mut timeline = Vec::new();
        for r in runs.iter().take(MAX_TIMELINE_RUNS) {
            timeline.push(RunTimeline::from_details(&store.run(r.id)?));
        }
        ok_by_config.push((ok, ok_flowops));
        configs.push(ConfigReport {
            sections: BTreeMap::new(),
            timeline_omitted: runs.len() - timeline.len(),
            config,
            levels,
            runs: counts,
            metrics,
            flowops: rows,
            latency_histogram,
            size_histogram,
            timeline,
        });
    }
    let runs: Vec<crate::section::ConfigRuns> = configs
        .iter()
        .zip(&ok_by_config)
        .map(|(c, (ok, f))| crate::section::ConfigRuns {
            label: &c.config.label,
            ok_metrics: ok,
            ok_flowops: f,
        })
        .collect();
    let sections = crate::section::Sections::collect(
        sections,
        &crate::section::SectionInput {
            configs: &runs,
            factors: &factors,
        },
    );
    drop(runs);
    for (i, c) in configs.iter_mut().enumerate() {
        c.sections = sections.config_json(i);
    }
    let totals: Vec<(&Config, u64)> = configs
        .iter()
        .map(|c| (&c.config, c.runs.total()))
        .collect();
    Ok(ReportData {
        findings: group_findings(&findings, &totals),
        host: HostSummary::from_host(&details.experiment.host),
        experiment: details.experiment,
        headline,
        configs,
        sections,
        factors,
        miss_ratio_curves: curves.finish(),
    })
}

type Histogram = Vec<(u64, u64)>;

/// The flowop table, the merged latency histogram of the I/O flowops (all non-trace flowops
/// when none is an I/O kind) and the merged request-size histogram of the trace rows.
pub(crate) fn aggregate_flowops(
    runs: &[&Vec<FlowopStats>],
) -> (Vec<FlowopRow>, Histogram, Histogram) {
    struct Acc {
        row: FlowopRow,
        lat_sum: f64,
        lat_ops: f64,
        p99_sum: f64,
        p99_n: usize,
    }
    let mut accs: Vec<Acc> = Vec::new();
    let mut index: BTreeMap<(String, String), usize> = BTreeMap::new();
    let mut lat: BTreeMap<u64, u64> = BTreeMap::new();
    let mut lat_any: BTreeMap<u64, u64> = BTreeMap::new();
    let mut sizes: BTreeMap<u64, u64> = BTreeMap::new();
    for flowops in runs {
        for f in flowops.iter() {
            let key = (f.name.clone(), f.kind.clone());
            let i = *index.entry(key).or_insert_with(|| {
                accs.push(Acc {
                    row: FlowopRow {
                        name: f.name.clone(),
                        kind: f.kind.clone(),
                        runs: 0,
                        ops: 0,
                        bytes: 0,
                        errors: 0,
                        lat_mean_ns: f64::NAN,
                        lat_p99_ns: f64::NAN,
                        lat_max_ns: 0,
                    },
                    lat_sum: 0.0,
                    lat_ops: 0.0,
                    p99_sum: 0.0,
                    p99_n: 0,
                });
                accs.len() - 1
            });
            let a = &mut accs[i];
            a.row.runs += 1;
            a.row.ops = a.row.ops.saturating_add(f.ops);
            a.row.bytes = a.row.bytes.saturating_add(f.bytes);
            a.row.errors = a.row.errors.saturating_add(f.errors);
            a.row.lat_max_ns = a.row.lat_max_ns.max(f.latency.max_ns);
            let c = f.latency.count as f64;
            if c > 0.0 && f.latency.mean_ns.is_finite() {
                a.lat_sum += f.latency.mean_ns * c;
                a.lat_ops += c;
                a.p99_sum += f.latency.p99_ns as f64;
                a.p99_n += 1;
            }
            let target = if f.kind == "trace" {
                &mut sizes
            } else if moves_data(&f.kind) {
                &mut lat
            } else {
                &mut lat_any
            };
            for &(upper, count) in &f.histogram {
                let e = target.entry(upper).or_insert(0);
                *e = e.saturating_add(count);
            }
        }
    }
    let rows = accs
        .into_iter()
        .map(|mut a| {
            if a.lat_ops > 0.0 {
                a.row.lat_mean_ns = a.lat_sum / a.lat_ops;
            }
            if a.p99_n > 0 {
                a.row.lat_p99_ns = a.p99_sum / a.p99_n as f64;
            }
            a.row
        })
        .collect();
    let lat = if lat.is_empty() { lat_any } else { lat };
    (
        rows,
        lat.into_iter().filter(|&(_, c)| c > 0).collect(),
        sizes.into_iter().filter(|&(_, c)| c > 0).collect(),
    )
}

/// "3 of 5 runs", "configuration", or both.
pub(crate) fn hit_scope(h: &CheckHit) -> String {
    match (h.runs, h.about_config) {
        (0, true) => "configuration".to_string(),
        (n, false) => format!("{n} of {} runs", h.total_runs),
        (n, true) => format!("{n} of {} runs + configuration", h.total_runs),
    }
}

/// Where a check fired: "all 6 configurations, 12 of 12 runs".
pub(crate) fn check_scope(g: &CheckFindings, configs: usize) -> String {
    let hit = g.hits.len();
    let which = if hit == 2 && configs == 2 {
        "both configurations".to_string()
    } else if hit == configs && configs > 1 {
        format!("all {configs} configurations")
    } else if configs == 1 {
        "the configuration".to_string()
    } else {
        format!("{hit} of {configs} configurations")
    };
    let runs: usize = g.hits.iter().map(|h| h.runs).sum();
    let total: u64 = g.hits.iter().map(|h| h.total_runs).sum();
    if runs == 0 {
        return which;
    }
    format!("{which}, {runs} of their {total} runs")
}

/// One evidence field as text: bytes and nanoseconds with units, other numbers with about
/// four significant digits, ranges as `min–max`.
pub(crate) fn evidence_value(key: &str, e: &Evidence) -> String {
    let num = |x: f64| {
        if key.ends_with("_bytes") || key == "bytes" {
            iolab_util::units::format_bytes(x.max(0.0).round() as u64)
        } else if key.ends_with("_ns") {
            iolab_util::units::format_ns(x)
        } else if x.fract() == 0.0 && x.abs() < 1e15 {
            let n = crate::num::fmt_count(x.abs() as u64);
            if x < 0.0 {
                format!("-{n}")
            } else {
                n
            }
        } else {
            crate::num::fmt(x)
        }
    };
    match e {
        Evidence::Range { min, max } => format!("{}–{}", num(*min), num(*max)),
        Evidence::Value(Value::String(s)) => s.clone(),
        Evidence::Value(Value::Array(a)) if a.iter().all(Value::is_number) => {
            let items: Vec<String> = a.iter().filter_map(Value::as_f64).map(num).collect();
            format!("[{}]", items.join(", "))
        }
        Evidence::Value(v) => match v.as_f64() {
            Some(x) => num(x),
            None => v.to_string(),
        },
    }
}

/// A configuration's evidence in one line: `key value · key value`.
pub(crate) fn evidence_line(h: &CheckHit) -> String {
    h.evidence
        .iter()
        .map(|(k, e)| format!("{k} {}", evidence_value(k, e)))
        .collect::<Vec<_>>()
        .join(" · ")
}

/// Converged or not, for tables.
pub(crate) fn outcome_text(o: &Option<ConfigOutcome>) -> (&'static str, String) {
    match o {
        Some(o) if o.converged => ("yes", o.note.clone()),
        Some(o) => ("no", o.note.clone()),
        None => ("–", "no stopping-rule outcome recorded".to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The CDF takes exactly the flowops that move data, by their one list of names: no
    /// re-typed list that can name a flowop that does not exist (it once had `aioread`).
    #[test]
    fn latency_cdf_kinds_are_the_data_flowops() {
        for k in FlowopKind::ALL {
            assert_eq!(moves_data(k.name()), k.is_io(), "{}", k.name());
        }
        for not_a_flowop in [
            "aioread",
            "randread",
            "append",
            "trace",
            "sync",
            "composite",
        ] {
            assert!(!moves_data(not_a_flowop), "{not_a_flowop}");
        }
    }

    #[test]
    fn summary_skips_nan_and_flags_outliers() {
        let runs: Vec<RunId> = (1..=8).map(RunId).collect();
        let v = [10.0, 10.1, 9.9, 10.0, f64::NAN, 10.2, 9.8, 50.0];
        let s = MetricSummary::new("ops_per_s", "op/s", &v, &runs);
        assert_eq!((s.n, s.nan_values), (7, 1));
        let (lo, hi) = s.ci.unwrap();
        assert!(lo < s.mean && s.mean < hi);
        assert_eq!(s.outliers.len(), 1);
        assert_eq!(s.outliers[0].run, RunId(8));

        let one = MetricSummary::new("x", "", &[3.0], &[RunId(1)]);
        assert_eq!((one.mean, one.ci), (3.0, None));
        let none = MetricSummary::new("x", "", &[f64::NAN], &[RunId(1)]);
        assert!(none.mean.is_nan() && none.ci.is_none());
    }

    const MIB: u64 = 1 << 20;
    const SEC: u64 = 1_000_000_000;

    #[track_caller]
    fn close(got: &[(f64, f64)], want: &[(f64, f64)]) {
        assert_eq!(got.len(), want.len(), "{got:?} != {want:?}");
        for (g, w) in got.iter().zip(want) {
            assert!(
                (g.0 - w.0).abs() < 1e-9 && (g.1 - w.1).abs() < 1e-6 * w.1.abs().max(1.0),
                "{got:?} != {want:?}"
            );
        }
    }

    #[test]
    fn a_partial_last_interval_is_divided_by_the_time_it_covered() {
        // 4.256 s in 1 s intervals: the last one covers 0.256 s.
        let elapsed = 4_256_023_069;
        let r = interval_rates(SEC, &[737, 729, 1464, 985, 181], elapsed);
        let tail = 181.0 / 0.256_023_069;
        close(
            &r,
            &[
                (1.0, 737.0),
                (2.0, 729.0),
                (3.0, 1464.0),
                (4.0, 985.0),
                (elapsed as f64 / 1e9, tail),
            ],
        );
        // Full intervals (or a hair short of full) divide by the width.
        close(
            &interval_rates(SEC, &[10, 20], 2 * SEC),
            &[(1.0, 10.0), (2.0, 20.0)],
        );
        close(
            &interval_rates(SEC, &[10, 20], 2 * SEC - 1000),
            &[(1.0, 10.0), (2.0, 20.0)],
        );
    }

    #[test]
    fn a_run_shorter_than_one_interval_shows_its_real_rate() {
        // The review's case: 1 MiB in 9 ms was drawn as 1.0 MiB/s; its headline is ~111 MiB/s.
        let r = interval_rates(SEC, &[MIB], 9_000_000);
        close(&r, &[(0.009, MIB as f64 / 0.009)]);
        assert!((r[0].1 / MIB as f64 - 111.1).abs() < 0.1);
    }

    #[test]
    fn a_sliver_after_full_intervals_is_left_out() {
        // 3.002 s: the last interval covers 2 ms — one completion would read as 500×.
        let r = interval_rates(SEC, &[100, 100, 100, 1], 3_002_000_000);
        close(&r, &[(1.0, 100.0), (2.0, 100.0), (3.0, 100.0)]);
        // A tenth of the width is drawn.
        let r = interval_rates(SEC, &[100, 100, 10], 2_100_000_000);
        close(&r, &[(1.0, 100.0), (2.0, 100.0), (2.1, 100.0)]);
    }

    #[test]
    fn unknown_or_inconsistent_elapsed_leaves_intervals_full() {
        close(
            &interval_rates(SEC, &[10, 20], 0),
            &[(1.0, 10.0), (2.0, 20.0)],
        );
        // Elapsed before the last interval's start: the data disagree, do not invent.
        close(
            &interval_rates(SEC, &[10, 20, 30], SEC),
            &[(1.0, 10.0), (2.0, 20.0), (3.0, 30.0)],
        );
        assert!(interval_rates(0, &[], 5).is_empty());
    }

    #[test]
    fn evidence_reads_as_numbers_with_units() {
        let v = |k: &str, j: Value| evidence_value(k, &Evidence::Value(j));
        assert_eq!(v("dataset_bytes", serde_json::json!(1u64 << 30)), "1 GiB");
        assert_eq!(v("elapsed_ns", serde_json::json!(2_500_000)), "2.50 ms");
        assert_eq!(v("runs", serde_json::json!(12345)), "12,345");
        assert_eq!(v("delta", serde_json::json!(-3)), "-3");
        assert_eq!(v("ratio", serde_json::json!(0.25)), "0.2500");
        assert_eq!(v("ok", serde_json::json!(true)), "true");
        assert_eq!(v("device", serde_json::json!("vda")), "vda");
        assert_eq!(v("pct", serde_json::json!([6.39919, 0.0])), "[6.399, 0]");
        assert_eq!(
            evidence_value("x_ns", &Evidence::Range { min: 1e9, max: 2e9 }),
            "1.00 s–2.00 s"
        );
        let mut merged = Vec::new();
        for x in [3.0, 1.0, 2.0] {
            merge_evidence(
                &mut merged,
                &serde_json::json!({"x": x, "s": "a", "n": null}),
            );
        }
        assert_eq!(
            merged,
            [
                ("s".to_string(), Evidence::Value(serde_json::json!("a"))),
                ("x".to_string(), Evidence::Range { min: 1.0, max: 3.0 }),
            ]
        );
    }

    #[test]
    fn host_summary_reads_the_known_fields() {
        let h = HostSummary::from_host(&serde_json::json!({
            "kernel_release": "6.1.0", "cpu_model": "EPYC", "logical_cpus": 2,
            "mem_total_bytes": 1024, "virtualization": {"hypervisor": "kvm", "container": "docker"}
        }));
        assert_eq!(h.kernel.as_deref(), Some("6.1.0"));
        assert_eq!(h.cpu.as_deref(), Some("EPYC × 2 logical CPUs"));
        assert_eq!(
            h.virtualization.as_deref(),
            Some("VM (kvm), container (docker)")
        );
        assert_eq!(HostSummary::from_host(&Value::Null), HostSummary::default());
    }
}
