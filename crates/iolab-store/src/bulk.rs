//! Whole-experiment reads for reports: one query per table instead of one per run, so a
//! report over 10 000 runs costs a handful of index range scans, not 60 000 round trips.

use std::collections::BTreeMap;

use crate::codec;
use crate::error::{Result, StoreError};
use crate::store::{db_err, to_u64, Store};
use crate::types::{ExperimentId, FlowopStats, LatencyStats, RunId};

impl Store {
    fn bulk_corrupt(&self, details: String) -> StoreError {
        StoreError::Corrupt {
            path: self.path.clone(),
            details,
        }
    }

    /// Every flowop row of an experiment's runs (all statuses), by run, in written order.
    pub fn experiment_flowops(
        &self,
        experiment: ExperimentId,
    ) -> Result<BTreeMap<RunId, Vec<FlowopStats>>> {
        let sql = |e| db_err(&self.path, e);
        let mut stmt = self
            .conn
            .prepare(
                "SELECT f.run_id, f.name, f.kind, f.ops, f.bytes, f.errors, f.lat_count,
                        f.lat_mean_ns, f.lat_stdev_ns, f.lat_min_ns, f.lat_p50_ns, f.lat_p90_ns,
                        f.lat_p99_ns, f.lat_p999_ns, f.lat_max_ns, f.histogram, f.extra_json
                 FROM flowop_stats f JOIN runs r ON r.id = f.run_id
                 JOIN configs c ON c.id = r.config_id
                 WHERE c.experiment_id = ?1 ORDER BY f.run_id, f.ordinal",
            )
            .map_err(sql)?;
        let mut rows = stmt.query([experiment.0]).map_err(sql)?;
        let mut out: BTreeMap<RunId, Vec<FlowopStats>> = BTreeMap::new();
        while let Some(r) = rows.next().map_err(sql)? {
            let u = |i| r.get::<_, i64>(i).map(to_u64).map_err(sql);
            let f = |i| {
                r.get::<_, Option<f64>>(i)
                    .map(|v| v.unwrap_or(f64::NAN))
                    .map_err(sql)
            };
            let run = RunId(r.get(0).map_err(sql)?);
            let name: String = r.get(1).map_err(sql)?;
            let hist: Vec<u8> = r.get(15).map_err(sql)?;
            let histogram = codec::decode_histogram(&hist).map_err(|e| {
                self.bulk_corrupt(format!(
                    "the histogram of flowop {name:?} of run {run}: {e}"
                ))
            })?;
            let extra: String = r.get(16).map_err(sql)?;
            let extra = serde_json::from_str(&extra).map_err(|source| StoreError::BadJson {
                path: self.path.clone(),
                what: format!("flowop {name:?} of run {run}"),
                source,
            })?;
            out.entry(run).or_default().push(FlowopStats {
                kind: r.get(2).map_err(sql)?,
                ops: u(3)?,
                bytes: u(4)?,
                errors: u(5)?,
                latency: LatencyStats {
                    count: u(6)?,
                    mean_ns: f(7)?,
                    stdev_ns: f(8)?,
                    min_ns: u(9)?,
                    p50_ns: u(10)?,
                    p90_ns: u(11)?,
                    p99_ns: u(12)?,
                    p999_ns: u(13)?,
                    max_ns: u(14)?,
                },
                name,
                histogram,
                extra,
            });
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::*;

    #[test]
    fn bulk_flowops_equal_the_per_run_ones() {
        let mut store = Store::open_in_memory().unwrap();
        let exp = store
            .create_experiment(&NewExperiment {
                name: "e".into(),
                source: "s".into(),
                spec: json!({}),
                seed: 1,
                created_at: Timestamp(0),
                iolab_version: "0".into(),
                host: json!({}),
            })
            .unwrap();
        let config = store
            .add_config(&NewConfig {
                experiment: exp,
                label: "c".into(),
                factors: Default::default(),
            })
            .unwrap();
        let mut ids = Vec::new();
        for rep in 0..3u32 {
            let mut r = RunRecord::new(NewRun {
                config,
                repetition: rep,
                seed: 1,
                status: RunStatus::Ok,
                error: None,
                started_at: Timestamp(0),
                ended_at: Timestamp(1),
                elapsed_ns: 1,
                environment: json!({}),
            });
            for k in 0..2u64 {
                r.flowops.push(FlowopStats {
                    name: format!("f{k}"),
                    kind: "write".into(),
                    ops: u64::from(rep) + k,
                    bytes: 4096,
                    errors: 0,
                    latency: LatencyStats {
                        mean_ns: f64::NAN,
                        ..LatencyStats::default()
                    },
                    histogram: vec![(100, 1), (u64::MAX, 2 + k)],
                    extra: json!({"k": k}),
                });
            }
            ids.push(store.record_run(&r).unwrap());
        }
        let bulk = store.experiment_flowops(exp).unwrap();
        assert_eq!(bulk.len(), 3);
        for id in ids {
            let one = store.run(id).unwrap().flowops;
            // NaN ≠ NaN: compare the debug text.
            assert_eq!(format!("{:?}", bulk[&id]), format!("{one:?}"));
        }
    }
}
