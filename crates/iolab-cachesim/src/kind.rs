//! Trace-driven cache simulation (docs/cachesim.md): `[workload] cachesim = { … }` in an
//! experiment, `iolab cachesim` on the command line; both read iolab-cachesim's one option
//! table, [`crate::OPTIONS`], through the readers of option tables ([`CachesimTable`]). A simulation does no I/O in a directory (the kind
//! needs no target) and is deterministic (one run is exact).

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::spec::{place, policy_text, CachesimOption, CachesimSettings, CachesimTable, SpecError};
use crate::{CachesimSpec, Outcome, RunError};
use iolab_engine::stats::LatencySummary;
use iolab_engine::usage::Usage;
use iolab_metrics::{Better, MetricDef};
use iolab_store::RunRecord;
use serde_json::{json, Map, Value};

use iolab_kind::record::{headline, metric, Totals};
use iolab_kind::table::{self, OptionTable, TableKind};
use iolab_kind::Intent;
use iolab_kind::Runs;
use iolab_kind::Workload;
use iolab_kind::{Origin, UsageError};
use iolab_kind::{RunCtx, RunFailure};
use iolab_util::option::OptionValue;
use iolab_util::setting::Worded;

/// The `[workload]` key.
pub const KEY: &str = "cachesim";

/// What cache simulations record besides the common metrics, all exact (the same trace and
/// cache give the same values anywhere) (whose `ops` are the simulated
/// requests, `bytes` the bytes they asked for, `elapsed_s` the simulator's time and `ops_per_s` the
/// simulation speed).
pub const METRICS: &[MetricDef] = &[
    MetricDef::new(
        "miss_ratio",
        "",
        Some(Better::Lower),
        "Miss ratio",
        "requests whose block was not cached, over all requests",
    )
    .headline()
    .exact(),
    MetricDef::new(
        "read_hit_ratio",
        "",
        Some(Better::Higher),
        "Read hit ratio",
        "reads whose block was cached, over all reads",
    )
    .exact(),
    MetricDef::new(
        "write_hit_ratio",
        "",
        Some(Better::Higher),
        "Write hit ratio",
        "writes whose block was cached, over all writes",
    )
    .exact(),
    MetricDef::new(
        "read_hits",
        "",
        None,
        "Read hits",
        "reads whose block was cached",
    )
    .exact(),
    MetricDef::new(
        "read_misses",
        "",
        None,
        "Read misses",
        "reads whose block was not cached",
    )
    .exact(),
    MetricDef::new(
        "write_hits",
        "",
        None,
        "Write hits",
        "writes whose block was cached",
    )
    .exact(),
    MetricDef::new(
        "write_misses",
        "",
        None,
        "Write misses",
        "writes whose block was not cached",
    )
    .exact(),
    MetricDef::new(
        "promotions",
        "",
        None,
        "Promotions",
        "blocks put into the cache",
    )
    .exact(),
    MetricDef::new(
        "demotions",
        "",
        None,
        "Demotions",
        "blocks evicted from the cache to make room",
    )
    .exact(),
    MetricDef::new(
        "dirty_evictions",
        "",
        Some(Better::Lower),
        "Dirty evictions",
        "evicted blocks that had to be written to the origin first (write-back)",
    )
    .headline()
    .exact(),
    MetricDef::new(
        "cache_read_bytes",
        "B",
        None,
        "Cache device reads",
        "bytes read from the cache device (hits, and dirty blocks on eviction)",
    )
    .exact(),
    MetricDef::new(
        "cache_write_bytes",
        "B",
        None,
        "Cache device writes",
        "bytes written to the cache device (fills and cached writes)",
    )
    .exact(),
    MetricDef::new(
        "origin_read_bytes",
        "B",
        Some(Better::Lower),
        "Origin reads",
        "bytes read from the origin device (read misses, each the bytes it asked for)",
    )
    .headline()
    .exact(),
    MetricDef::new(
        "origin_write_bytes",
        "B",
        Some(Better::Lower),
        "Origin writes",
        "bytes written to the origin device (write-through and bypassing writes, dirty evictions)",
    )
    .headline()
    .exact(),
    MetricDef::new(
        "metadata_bytes",
        "B",
        Some(Better::Lower),
        "Metadata memory",
        "estimated memory for the cache's metadata: the simulator's per-block and per-set arrays",
    )
    .headline()
    .exact(),
    MetricDef::new(
        "service_time_s",
        "s",
        Some(Better::Lower),
        "Estimated service time",
        "time the cache and origin devices need for the simulated traffic, from the device models",
    )
    .headline()
    .exact(),
    MetricDef::new(
        "writeback_s",
        "s",
        Some(Better::Lower),
        "Write-back time",
        "time the devices spend writing dirty blocks to the origin (a random read from the \
         cache, a random write to the origin each): inside the estimated service time with \
         writeback = on-eviction, in the origin's idle time with background",
    )
    .exact(),
    MetricDef::new(
        "service_ns_per_request",
        "ns",
        Some(Better::Lower),
        "Estimated time per request",
        "the estimated service time over the simulated requests",
    )
    .exact(),
];

/// The cachesim kind: no target, no I/O in a directory.
pub static CACHESIM: TableKind = TableKind {
    key: KEY,
    noun: "cache simulations",
    example: "cachesim = { trace = \"run.iolt\", size = \"64m\" }",
    metrics: || METRICS,
    misplaced: |_| "remove it: give the simulation's options inside cachesim = { … }",
    needs_target: false,
    resolve: |cx, entry, at| {
        table::read::<CachesimTable>(cx, entry, at).map(|r| {
            iolab_kind::erase(CachesimWorkload {
                spec: r.plan,
                origin: Origin::File,
            })
        })
    },
};

/// A validated simulation.
#[derive(Debug, Clone)]
pub struct CachesimWorkload {
    pub spec: CachesimSpec,
    origin: Origin,
}

impl CachesimWorkload {
    /// A spec error in the user's words: the flag or the key.
    fn spec_failure(&self, e: &SpecError) -> RunFailure {
        RunFailure {
            message: table::word::<CachesimTable>(self.origin, &e.phrase()),
            hint: e.hint.clone(),
            bad_input: true,
            interrupted: false,
            located: false,
        }
    }

    fn failure(&self, e: &RunError) -> RunFailure {
        match e {
            RunError::Spec(s) => self.spec_failure(s),
            other => RunFailure {
                message: format!("{}: {other}", self.origin.setting(KEY, "trace")),
                hint: other.hint(),
                bad_input: other.is_bad_input(),
                interrupted: matches!(other, RunError::Interrupted),
                located: false,
            },
        }
    }
}

impl Workload for CachesimWorkload {
    type Output = Outcome;

    fn kind(&self) -> &'static str {
        KEY
    }

    fn metrics(&self) -> &'static [MetricDef] {
        METRICS
    }

    fn intent(&self, base: Intent) -> Intent {
        Intent {
            no_io: true,
            threads: Some(1),
            ..base
        }
    }

    fn planned_duration(&self) -> Option<Duration> {
        None
    }

    fn deterministic(&self) -> bool {
        true
    }

    fn common_headline(&self) -> bool {
        false
    }

    fn run(&self, run: &mut RunCtx<'_>) -> Result<Self::Output, RunFailure> {
        let before = Usage::thread();
        let out = crate::run(&self.spec, run.cancel).map_err(|e| self.failure(&e))?;
        let used = Usage::thread() - before;
        add_record(run.record, &out, &used);
        Ok(out)
    }
}

/// Adds a simulation's results to `record`.
fn add_record(record: &mut RunRecord, o: &Outcome, usage: &Usage) {
    let s = &o.stats;
    let elapsed_ns = (o.simulate_s * 1e9).round() as u64;
    record.run.elapsed_ns = elapsed_ns;
    let bytes = s.cache.read_bytes()
        + s.cache.write_bytes()
        + s.origin.read_bytes()
        + s.origin.write_bytes();
    headline(
        record,
        Totals {
            ops: s.requests(),
            bytes,
            elapsed_ns,
            latency: &LatencySummary::default(),
            cpu: usage.cpu(),
        },
    );
    for (name, value) in [
        ("miss_ratio", s.miss_ratio()),
        ("read_hit_ratio", s.read_hit_ratio()),
        ("write_hit_ratio", s.write_hit_ratio()),
        ("read_hits", s.read_hits as f64),
        ("read_misses", s.read_misses() as f64),
        ("write_hits", s.write_hits as f64),
        ("write_misses", s.write_misses() as f64),
        ("promotions", s.promotions as f64),
        ("demotions", s.demotions as f64),
        ("dirty_evictions", s.dirty_evictions as f64),
        ("cache_read_bytes", s.cache.read_bytes() as f64),
        ("cache_write_bytes", s.cache.write_bytes() as f64),
        ("origin_read_bytes", s.origin.read_bytes() as f64),
        ("origin_write_bytes", s.origin.write_bytes() as f64),
        ("metadata_bytes", o.metadata_bytes as f64),
        ("service_time_s", o.service_s()),
        ("writeback_s", o.writeback_s),
        ("service_ns_per_request", o.service_us_per_request() * 1e3),
    ] {
        record.metrics.push(metric(METRICS, name, value));
    }
}

/// `iolab cachesim`: the command line's option values over the table's defaults as the
/// one-run plan, run in the current directory (which it does not touch).
pub fn from_command_line(
    values: &[(&'static CachesimOption, OptionValue)],
) -> Result<Runs<Outcome>, UsageError> {
    let mut settings = CachesimSettings::with_defaults(PathBuf::new());
    for (o, v) in values {
        o.apply(&mut settings, *v);
    }
    place(&mut settings, Path::new(""));
    let spec = CachesimTable::validate(&settings).map_err(|e| {
        let u = UsageError::new(e.to_string());
        match e.hint {
            Some(h) => u.hint(h),
            None => u,
        }
    })?;
    let name = format!(
        "cachesim {} size={} bs={} assoc={} {}",
        policy_text(&spec.cache),
        spec.cache.size,
        spec.cache.block_size,
        assoc_text(&spec),
        spec.cache.write.name()
    );
    // The devices as the models resolved them: the stored run keeps their figures even when
    // they came from saved results.
    let workload_json = json!({ KEY: options_json(&spec) });
    Ok(Runs::one(
        name,
        "iolab cachesim",
        PathBuf::from("."),
        0,
        CachesimWorkload {
            spec,
            origin: Origin::CommandLine,
        },
        workload_json,
    ))
}

fn assoc_text(spec: &CachesimSpec) -> String {
    match spec.cache.assoc {
        crate::Assoc::Full => "full".into(),
        crate::Assoc::Ways(w) => w.to_string(),
    }
}

/// A spec as `cachesim = { … }` would write it.
fn options_json(spec: &CachesimSpec) -> Value {
    let mut o = Map::new();
    o.insert("trace".into(), json!(spec.trace.display().to_string()));
    o.insert(
        "format".into(),
        json!(spec.format.as_ref().map_or("auto", |f| f.name())),
    );
    o.insert("policy".into(), json!(policy_text(&spec.cache)));
    o.insert("size".into(), json!(spec.cache.size));
    o.insert("block_size".into(), json!(spec.cache.block_size));
    o.insert("assoc".into(), json!(assoc_text(spec)));
    o.insert("write_policy".into(), json!(spec.cache.write.name()));
    o.insert("writeback".into(), json!(spec.writeback.name()));
    o.insert("cache_device".into(), json!(spec.cache_device.to_string()));
    o.insert(
        "origin_device".into(),
        json!(spec.origin_device.to_string()),
    );
    Value::Object(o)
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_kind::record::testing::{assert_declared, record};

    /// Seed 004's review: the sweep drew the miss ratio and the service time, not the
    /// traffic to the origin, the dirty evictions nor the metadata memory (the thesis's
    /// memory cost).
    #[test]
    fn the_headline_is_the_miss_ratio_time_traffic_dirty_evictions_and_memory() {
        let heads: Vec<&str> = METRICS
            .iter()
            .filter(|d| d.headline)
            .map(|d| d.name.as_ref())
            .collect();
        assert_eq!(
            heads,
            [
                "miss_ratio",
                "dirty_evictions",
                "origin_read_bytes",
                "origin_write_bytes",
                "metadata_bytes",
                "service_time_s"
            ]
        );
    }

    #[test]
    fn a_simulation_records_every_declared_metric() {
        let mut spec = CachesimSpec::with_defaults();
        spec.cache.size = 4 * 4096;
        let mut t: Vec<crate::Request> = [1u64, 2, 3, 1, 4, 5, 1]
            .iter()
            .map(|&i| crate::Request::read(i, 4096))
            .collect();
        crate::fill_next(&mut t, 0);
        let o = crate::run::run_requests(&spec, &t).unwrap();
        let mut rec = record();
        add_record(&mut rec, &o, &Usage::default());
        assert_declared(&rec, METRICS);
        let get = |n: &str| rec.metrics.iter().find(|m| m.name == n).unwrap().value;
        assert_eq!(get("ops"), 7.0);
        assert_eq!(get("read_misses"), 5.0);
        assert_eq!(get("miss_ratio"), 5.0 / 7.0);
    }

    /// The values of the options named with the texts given.
    fn values(given: &[(&str, &str)]) -> Vec<(&'static CachesimOption, OptionValue)> {
        given
            .iter()
            .map(|(n, t)| {
                let o = crate::spec::option(n).unwrap();
                (o, o.parse(t).unwrap())
            })
            .collect()
    }

    #[test]
    fn command_line_errors_name_the_flags() {
        let e = from_command_line(&values(&[
            ("trace", "t.oracleGeneral"),
            ("size", "1m"),
            ("assoc", "512"),
        ]))
        .unwrap_err();
        assert!(e.message.starts_with("--assoc: associativity 512"), "{e}");
        let e = from_command_line(&values(&[
            ("trace", "t"),
            ("size", "1m"),
            ("policy", "lfuu"),
        ]))
        .unwrap_err();
        assert!(
            e.message.contains("--policy") && e.message.contains("lfu"),
            "{e}"
        );
    }
}
