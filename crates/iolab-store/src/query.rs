//! Reading the database back: lists, whole experiments, runs with their measurements, the
//! values statistics need, and the bookkeeping `--resume` needs.

use std::collections::{BTreeMap, BTreeSet};

use rusqlite::{params, OptionalExtension, Row};
use serde_json::Value;

use std::borrow::Cow;

use iolab_metrics::{Better, MetricDef};
use iolab_sys::process::{Liveness, ProcessIdentity};

use crate::codec;
use crate::error::{Result, StoreError};
use crate::store::{db_err, to_u64, Store};
use crate::types::{
    Config, ConfigId, ConfigOutcome, ConfigProgress, Experiment, ExperimentDetails, ExperimentId,
    ExperimentStatus, ExperimentSummary, Finding, FlowopStats, LatencyStats, Metric, MetricValues,
    MonitorSeries, Run, RunCounts, RunDetails, RunId, RunOutput, RunStatus, Series, Severity,
    StoredFinding, Timestamp,
};

const RUN_COLUMNS: &str = "r.id, r.config_id, r.repetition, r.seed, r.status, r.error, \
     r.started_ns, r.ended_ns, r.elapsed_ns, env.json";

/// A run row before its JSON is parsed (row closures cannot return our errors).
struct RawRun {
    id: i64,
    config: i64,
    repetition: u32,
    seed: i64,
    status: String,
    error: Option<String>,
    started: i64,
    ended: i64,
    elapsed: i64,
    env: String,
}

fn raw_run(r: &Row<'_>) -> rusqlite::Result<RawRun> {
    Ok(RawRun {
        id: r.get(0)?,
        config: r.get(1)?,
        repetition: r.get(2)?,
        seed: r.get(3)?,
        status: r.get(4)?,
        error: r.get(5)?,
        started: r.get(6)?,
        ended: r.get(7)?,
        elapsed: r.get(8)?,
        env: r.get(9)?,
    })
}

fn nan_if_null(v: Option<f64>) -> f64 {
    v.unwrap_or(f64::NAN)
}

impl Store {
    fn sql(&self) -> impl Fn(rusqlite::Error) -> StoreError + '_ {
        |e| db_err(&self.path, e)
    }

    fn json(&self, what: impl FnOnce() -> String, text: &str) -> Result<Value> {
        serde_json::from_str(text).map_err(|source| StoreError::BadJson {
            path: self.path.clone(),
            what: what(),
            source,
        })
    }

    fn corrupt(&self, details: String) -> StoreError {
        StoreError::Corrupt {
            path: self.path.clone(),
            details,
        }
    }

    fn run_status(&self, text: &str) -> Result<RunStatus> {
        RunStatus::parse(text).ok_or_else(|| self.corrupt(format!("unknown run status {text:?}")))
    }

    fn run_from_raw(&self, raw: RawRun) -> Result<Run> {
        Ok(Run {
            id: RunId(raw.id),
            config: ConfigId(raw.config),
            repetition: raw.repetition,
            seed: to_u64(raw.seed),
            status: self.run_status(&raw.status)?,
            error: raw.error,
            started_at: Timestamp(raw.started),
            ended_at: Timestamp(raw.ended),
            elapsed_ns: to_u64(raw.elapsed),
            environment: self.json(|| format!("the environment of run {}", raw.id), &raw.env)?,
        })
    }

    /// Every experiment, oldest first, with counts of configurations and runs by status.
    pub fn list_experiments(&self) -> Result<Vec<ExperimentSummary>> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT e.id, e.uuid, e.name, e.source, e.status, e.created_ns, e.finished_ns,
                        (SELECT count(*) FROM configs c WHERE c.experiment_id = e.id),
                        coalesce(rc.ok, 0), coalesce(rc.failed, 0), coalesce(rc.interrupted, 0),
                        e.owner_json
                 FROM experiments e
                 LEFT JOIN (SELECT c.experiment_id AS eid,
                                   sum(r.status = 'ok') AS ok,
                                   sum(r.status = 'failed') AS failed,
                                   sum(r.status = 'interrupted') AS interrupted
                            FROM runs r JOIN configs c ON c.id = r.config_id
                            GROUP BY c.experiment_id) rc ON rc.eid = e.id
                 ORDER BY e.id",
            )
            .map_err(self.sql())?;
        let rows = stmt
            .query_map([], |r| {
                Ok((
                    ExperimentId(r.get(0)?),
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, String>(4)?,
                    r.get::<_, i64>(5)?,
                    r.get::<_, Option<i64>>(6)?,
                    r.get::<_, i64>(7)?,
                    RunCounts {
                        ok: to_u64(r.get(8)?),
                        failed: to_u64(r.get(9)?),
                        interrupted: to_u64(r.get(10)?),
                    },
                    r.get::<_, Option<String>>(11)?,
                ))
            })
            .map_err(self.sql())?;
        let mut out = Vec::new();
        for row in rows {
            let (id, uuid, name, source, status, created, finished, configs, runs, owner) =
                row.map_err(self.sql())?;
            out.push(ExperimentSummary {
                id,
                uuid,
                name,
                source,
                status: self.experiment_status(&status, owner.as_deref())?,
                created_at: Timestamp(created),
                finished_at: finished.map(Timestamp),
                configs: to_u64(configs),
                runs,
            });
        }
        Ok(out)
    }

    /// The stored status, except that a `running` experiment whose process has ended on this
    /// machine (killed: it could not mark itself) is `interrupted`, as `iolab run` would have
    /// marked it. An owner on another machine, or none (schema 3, imported), leaves it as
    /// stored.
    fn experiment_status(&self, text: &str, owner: Option<&str>) -> Result<ExperimentStatus> {
        let status = ExperimentStatus::parse(text)
            .ok_or_else(|| self.corrupt(format!("unknown experiment status {text:?}")))?;
        let owner = owner.and_then(|o| serde_json::from_str::<ProcessIdentity>(o).ok());
        Ok(match (status, owner) {
            (ExperimentStatus::Running, Some(o)) if o.liveness() == Liveness::Gone => {
                ExperimentStatus::Interrupted
            }
            _ => status,
        })
    }

    /// The most recently created experiment (the default of `iolab show`).
    pub fn latest_experiment(&self) -> Result<Option<ExperimentId>> {
        self.conn
            .query_row("SELECT max(id) FROM experiments", [], |r| {
                r.get::<_, Option<i64>>(0)
            })
            .map(|id| id.map(ExperimentId))
            .map_err(self.sql())
    }

    /// The most recent experiment that did not finish: `running` (it crashed or is still
    /// going) or `interrupted`. What `iolab run --resume` picks up.
    pub fn latest_unfinished_experiment(&self) -> Result<Option<ExperimentId>> {
        self.conn
            .query_row(
                "SELECT max(id) FROM experiments WHERE status IN ('running', 'interrupted')",
                [],
                |r| r.get::<_, Option<i64>>(0),
            )
            .map(|id| id.map(ExperimentId))
            .map_err(self.sql())
    }

    /// The experiment with this uuid, if it is here.
    pub fn experiment_by_uuid(&self, uuid: &str) -> Result<Option<ExperimentId>> {
        self.conn
            .query_row("SELECT id FROM experiments WHERE uuid = ?1", [uuid], |r| {
                r.get(0)
            })
            .optional()
            .map(|id| id.map(ExperimentId))
            .map_err(self.sql())
    }

    pub fn experiment(&self, id: ExperimentId) -> Result<Experiment> {
        let row = self
            .conn
            .query_row(
                "SELECT e.uuid, e.name, e.source, e.status, e.seed, e.created_ns, e.finished_ns,
                        e.iolab_version, env.json, e.spec_json, e.owner_json
                 FROM experiments e JOIN environments env ON env.id = e.host_env_id
                 WHERE e.id = ?1",
                [id.0],
                |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, String>(2)?,
                        r.get::<_, String>(3)?,
                        r.get::<_, i64>(4)?,
                        r.get::<_, i64>(5)?,
                        r.get::<_, Option<i64>>(6)?,
                        r.get::<_, String>(7)?,
                        r.get::<_, String>(8)?,
                        r.get::<_, String>(9)?,
                        r.get::<_, Option<String>>(10)?,
                    ))
                },
            )
            .optional()
            .map_err(self.sql())?;
        let Some((uuid, name, source, status, seed, created, finished, version, host, spec, owner)) =
            row
        else {
            return Err(StoreError::NoSuchExperiment {
                path: self.path.clone(),
                id,
            });
        };
        Ok(Experiment {
            id,
            uuid,
            name,
            source,
            status: self.experiment_status(&status, owner.as_deref())?,
            seed: to_u64(seed),
            created_at: Timestamp(created),
            finished_at: finished.map(Timestamp),
            iolab_version: version,
            host: self.json(|| format!("the host of experiment {id}"), &host)?,
            spec: self.json(|| format!("the spec of experiment {id}"), &spec)?,
        })
    }

    /// The definitions of the metrics experiment `id`'s runs record, in declaration order;
    /// for an experiment stored before they were (schema 1), iolab-metrics' common table.
    pub fn metric_defs(&self, id: ExperimentId) -> Result<Vec<MetricDef>> {
        let defs = self.stored_metric_defs(id)?;
        if defs.is_empty() {
            return Ok(iolab_metrics::COMMON.to_vec());
        }
        Ok(defs)
    }

    /// Only the stored definitions (none for an experiment from schema 1).
    pub fn stored_metric_defs(&self, id: ExperimentId) -> Result<Vec<MetricDef>> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT name, unit, better, title, description, headline, exact FROM metric_defs
                 WHERE experiment_id = ?1 ORDER BY ordinal",
            )
            .map_err(self.sql())?;
        let rows = stmt
            .query_map([id.0], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, Option<String>>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, String>(4)?,
                    r.get::<_, bool>(5)?,
                    r.get::<_, bool>(6)?,
                ))
            })
            .map_err(self.sql())?;
        let mut defs = Vec::new();
        for row in rows {
            let (name, unit, better, title, description, headline, exact) =
                row.map_err(self.sql())?;
            defs.push(MetricDef {
                name: Cow::Owned(name),
                unit: Cow::Owned(unit),
                // The column's CHECK admits only these two.
                better: better.as_deref().and_then(Better::parse),
                title: Cow::Owned(title),
                description: Cow::Owned(description),
                headline,
                exact,
            });
        }
        Ok(defs)
    }

    /// An experiment's configurations, in the order they were added.
    pub fn configs(&self, experiment: ExperimentId) -> Result<Vec<Config>> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT id, label, factors_json, converged, outcome FROM configs
                 WHERE experiment_id = ?1 ORDER BY id",
            )
            .map_err(self.sql())?;
        let rows = stmt
            .query_map([experiment.0], |r| {
                Ok((
                    ConfigId(r.get(0)?),
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, Option<bool>>(3)?,
                    r.get::<_, Option<String>>(4)?,
                ))
            })
            .map_err(self.sql())?;
        let mut out = Vec::new();
        for row in rows {
            let (id, label, factors, converged, note) = row.map_err(self.sql())?;
            let factors =
                match self.json(|| format!("the factors of configuration {id}"), &factors)? {
                    Value::Object(map) => map,
                    other => {
                        return Err(self.corrupt(format!(
                            "the factors of configuration {id} are not a JSON object: {other}"
                        )))
                    }
                };
            out.push(Config {
                id,
                experiment,
                label,
                factors,
                outcome: converged.map(|converged| ConfigOutcome {
                    converged,
                    note: note.unwrap_or_default(),
                }),
            });
        }
        Ok(out)
    }

    /// An experiment's runs (without measurements) in the order they were recorded.
    pub fn runs(&self, experiment: ExperimentId) -> Result<Vec<Run>> {
        let mut stmt = self
            .conn
            .prepare(&format!(
                "SELECT {RUN_COLUMNS} FROM runs r
                 JOIN configs c ON c.id = r.config_id
                 JOIN environments env ON env.id = r.env_id
                 WHERE c.experiment_id = ?1 ORDER BY r.id"
            ))
            .map_err(self.sql())?;
        let raws = stmt
            .query_map([experiment.0], raw_run)
            .map_err(self.sql())?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(self.sql())?;
        raws.into_iter().map(|r| self.run_from_raw(r)).collect()
    }

    /// An experiment with its configurations and runs.
    pub fn experiment_details(&self, id: ExperimentId) -> Result<ExperimentDetails> {
        Ok(ExperimentDetails {
            experiment: self.experiment(id)?,
            configs: self.configs(id)?,
            runs: self.runs(id)?,
        })
    }

    /// A run with everything measured in it. Metrics come sorted by name; flowops, series,
    /// monitor series and findings in the order they were written.
    pub fn run(&self, id: RunId) -> Result<RunDetails> {
        let raw = self
            .conn
            .query_row(
                &format!(
                    "SELECT {RUN_COLUMNS} FROM runs r
                     JOIN environments env ON env.id = r.env_id WHERE r.id = ?1"
                ),
                [id.0],
                raw_run,
            )
            .optional()
            .map_err(self.sql())?;
        let Some(raw) = raw else {
            return Err(StoreError::NoSuchRun {
                path: self.path.clone(),
                id,
            });
        };
        Ok(RunDetails {
            run: self.run_from_raw(raw)?,
            metrics: self.run_metrics(id)?,
            flowops: self.run_flowops(id)?,
            series: self.run_series(id)?,
            monitor: self.run_monitor(id)?,
            findings: self
                .findings_where("f.run_id = ?1", id.0)?
                .into_iter()
                .map(|f| f.finding)
                .collect(),
            outputs: self.run_outputs(id)?,
        })
    }

    /// The raw output another tool left in run `id` (the `exec` kind), in the order stored;
    /// empty for a run of iolab's own kinds.
    pub fn run_outputs(&self, id: RunId) -> Result<Vec<RunOutput>> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT name, content FROM run_outputs WHERE run_id = ?1 ORDER BY ordinal",
            )
            .map_err(self.sql())?;
        let rows = stmt
            .query_map([id.0], |r| {
                Ok(RunOutput {
                    name: r.get(0)?,
                    content: r.get(1)?,
                })
            })
            .map_err(self.sql())?;
        rows.collect::<rusqlite::Result<_>>().map_err(self.sql())
    }

    fn run_metrics(&self, id: RunId) -> Result<Vec<Metric>> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT name, value, unit FROM run_metrics WHERE run_id = ?1 ORDER BY name",
            )
            .map_err(self.sql())?;
        let rows = stmt
            .query_map([id.0], |r| {
                Ok(Metric {
                    name: r.get(0)?,
                    value: nan_if_null(r.get(1)?),
                    unit: r.get(2)?,
                })
            })
            .map_err(self.sql())?;
        rows.collect::<rusqlite::Result<_>>().map_err(self.sql())
    }

    fn run_flowops(&self, id: RunId) -> Result<Vec<FlowopStats>> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT name, kind, ops, bytes, errors, lat_count, lat_mean_ns, lat_stdev_ns,
                        lat_min_ns, lat_p50_ns, lat_p90_ns, lat_p99_ns, lat_p999_ns, lat_max_ns,
                        histogram, extra_json
                 FROM flowop_stats WHERE run_id = ?1 ORDER BY ordinal",
            )
            .map_err(self.sql())?;
        let rows = stmt
            .query_map([id.0], |r| {
                let u = |i| r.get::<_, i64>(i).map(to_u64);
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    u(2)?,
                    u(3)?,
                    u(4)?,
                    LatencyStats {
                        count: u(5)?,
                        mean_ns: nan_if_null(r.get(6)?),
                        stdev_ns: nan_if_null(r.get(7)?),
                        min_ns: u(8)?,
                        p50_ns: u(9)?,
                        p90_ns: u(10)?,
                        p99_ns: u(11)?,
                        p999_ns: u(12)?,
                        max_ns: u(13)?,
                    },
                    r.get::<_, Vec<u8>>(14)?,
                    r.get::<_, String>(15)?,
                ))
            })
            .map_err(self.sql())?;
        let mut out = Vec::new();
        for row in rows {
            let (name, kind, ops, bytes, errors, latency, hist, extra) = row.map_err(self.sql())?;
            let histogram = codec::decode_histogram(&hist).map_err(|e| {
                self.corrupt(format!("the histogram of flowop {name:?} of run {id}: {e}"))
            })?;
            let extra = self.json(|| format!("flowop {name:?} of run {id}"), &extra)?;
            out.push(FlowopStats {
                name,
                kind,
                ops,
                bytes,
                errors,
                latency,
                histogram,
                extra,
            });
        }
        Ok(out)
    }

    fn run_series(&self, id: RunId) -> Result<Vec<Series>> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT name, width_ns, ops, bytes FROM interval_series
                 WHERE run_id = ?1 ORDER BY ordinal",
            )
            .map_err(self.sql())?;
        let rows = stmt
            .query_map([id.0], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    to_u64(r.get(1)?),
                    r.get::<_, Vec<u8>>(2)?,
                    r.get::<_, Vec<u8>>(3)?,
                ))
            })
            .map_err(self.sql())?;
        let mut out = Vec::new();
        for row in rows {
            let (name, width_ns, ops, bytes) = row.map_err(self.sql())?;
            let bad = |e: codec::DecodeError| {
                self.corrupt(format!("interval series {name:?} of run {id}: {e}"))
            };
            let ops = codec::decode_u64s(&ops).map_err(bad)?;
            let bytes = codec::decode_u64s(&bytes).map_err(bad)?;
            out.push(Series {
                name,
                width_ns,
                ops,
                bytes,
            });
        }
        Ok(out)
    }

    fn run_monitor(&self, id: RunId) -> Result<Vec<MonitorSeries>> {
        let mut metrics = self
            .conn
            .prepare_cached(
                "SELECT id, name, unit FROM monitor_metrics WHERE run_id = ?1 ORDER BY ordinal",
            )
            .map_err(self.sql())?;
        let list = metrics
            .query_map([id.0], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                ))
            })
            .map_err(self.sql())?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(self.sql())?;
        let mut samples = self
            .conn
            .prepare_cached(
                "SELECT t_ns, value FROM monitor_samples WHERE metric_id = ?1 ORDER BY seq",
            )
            .map_err(self.sql())?;
        let mut out = Vec::with_capacity(list.len());
        for (metric_id, metric, unit) in list {
            let points = samples
                .query_map([metric_id], |r| Ok((r.get(0)?, nan_if_null(r.get(1)?))))
                .map_err(self.sql())?
                .collect::<rusqlite::Result<Vec<_>>>()
                .map_err(self.sql())?;
            out.push(MonitorSeries {
                metric,
                unit,
                points,
            });
        }
        Ok(out)
    }

    fn findings_where(&self, condition: &str, value: i64) -> Result<Vec<StoredFinding>> {
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT f.config_id, f.run_id, f.check_id, f.severity, f.evidence_json,
                        f.explanation, f.fix
                 FROM findings f JOIN configs c ON c.id = f.config_id
                 WHERE {condition} ORDER BY f.id"
            ))
            .map_err(self.sql())?;
        let rows = stmt
            .query_map([value], |r| {
                Ok((
                    ConfigId(r.get(0)?),
                    r.get::<_, Option<i64>>(1)?.map(RunId),
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, String>(4)?,
                    r.get::<_, String>(5)?,
                    r.get::<_, String>(6)?,
                ))
            })
            .map_err(self.sql())?;
        let mut out = Vec::new();
        for row in rows {
            let (config, run, check, severity, evidence, explanation, fix) =
                row.map_err(self.sql())?;
            let severity = Severity::parse(&severity)
                .ok_or_else(|| self.corrupt(format!("unknown severity {severity:?}")))?;
            let evidence = self.json(|| format!("the evidence of finding {check:?}"), &evidence)?;
            out.push(StoredFinding {
                config,
                run,
                finding: Finding {
                    check,
                    severity,
                    evidence,
                    explanation,
                    fix,
                },
            });
        }
        Ok(out)
    }

    /// All findings of an experiment, about runs and about whole configurations.
    pub fn findings(&self, experiment: ExperimentId) -> Result<Vec<StoredFinding>> {
        self.findings_where("c.experiment_id = ?1", experiment.0)
    }

    /// Findings about a configuration as a whole (not about one of its runs).
    pub fn config_findings(&self, config: ConfigId) -> Result<Vec<Finding>> {
        Ok(self
            .findings_where("f.config_id = ?1 AND f.run_id IS NULL", config.0)?
            .into_iter()
            .map(|f| f.finding)
            .collect())
    }

    /// Every metric of a configuration's ok runs, for statistics across repetitions. Failed
    /// and interrupted runs are left out: their numbers cover a different amount of work.
    pub fn ok_metrics(&self, config: ConfigId) -> Result<BTreeMap<String, MetricValues>> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT m.name, m.unit, m.value, r.id FROM run_metrics m
                 JOIN runs r ON r.id = m.run_id
                 WHERE r.config_id = ?1 AND r.status = 'ok'
                 ORDER BY m.name, r.repetition, r.id",
            )
            .map_err(self.sql())?;
        let rows = stmt
            .query_map([config.0], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    nan_if_null(r.get(2)?),
                    RunId(r.get(3)?),
                ))
            })
            .map_err(self.sql())?;
        let mut out: BTreeMap<String, MetricValues> = BTreeMap::new();
        for row in rows {
            let (name, unit, value, run) = row.map_err(self.sql())?;
            let entry = out.entry(name).or_insert_with(|| MetricValues {
                unit,
                values: Vec::new(),
                runs: Vec::new(),
            });
            entry.values.push(value);
            entry.runs.push(run);
        }
        Ok(out)
    }

    /// One metric over a configuration's ok runs, in repetition order (empty if no run has
    /// it).
    pub fn ok_metric_values(&self, config: ConfigId, metric: &str) -> Result<Vec<f64>> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT m.value FROM run_metrics m JOIN runs r ON r.id = m.run_id
                 WHERE r.config_id = ?1 AND r.status = 'ok' AND m.name = ?2
                 ORDER BY r.repetition, r.id",
            )
            .map_err(self.sql())?;
        let rows = stmt
            .query_map(params![config.0, metric], |r| Ok(nan_if_null(r.get(0)?)))
            .map_err(self.sql())?;
        rows.collect::<rusqlite::Result<_>>().map_err(self.sql())
    }

    /// Per configuration, which repetitions are done and which failed or were interrupted:
    /// what `iolab run --resume` needs to go on without repeating finished runs.
    pub fn resume_state(&self, experiment: ExperimentId) -> Result<Vec<ConfigProgress>> {
        // Fails with NoSuchExperiment rather than returning an empty list.
        self.experiment(experiment)?;
        let configs = self.configs(experiment)?;
        let mut stmt = self
            .conn
            .prepare_cached("SELECT repetition, status FROM runs WHERE config_id = ?1 ORDER BY id")
            .map_err(self.sql())?;
        let mut out = Vec::with_capacity(configs.len());
        for c in configs {
            let attempts = stmt
                .query_map([c.id.0], |r| {
                    Ok((r.get::<_, u32>(0)?, r.get::<_, String>(1)?))
                })
                .map_err(self.sql())?
                .collect::<rusqlite::Result<Vec<_>>>()
                .map_err(self.sql())?;
            let mut ok = BTreeSet::new();
            let mut latest: BTreeMap<u32, RunStatus> = BTreeMap::new();
            for (rep, status) in attempts {
                let status = self.run_status(&status)?;
                if status == RunStatus::Ok {
                    ok.insert(rep);
                }
                latest.insert(rep, status);
            }
            let pick = |want: RunStatus| {
                latest
                    .iter()
                    .filter(|&(rep, &s)| s == want && !ok.contains(rep))
                    .map(|(&rep, _)| rep)
                    .collect()
            };
            out.push(ConfigProgress {
                config: c.id,
                label: c.label,
                failed: pick(RunStatus::Failed),
                interrupted: pick(RunStatus::Interrupted),
                ok: ok.into_iter().collect(),
                outcome: c.outcome,
            });
        }
        Ok(out)
    }
}
