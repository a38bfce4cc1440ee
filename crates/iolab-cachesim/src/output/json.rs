//! `iolab cachesim --json`: schema `iolab.cachesim/1` (docs/json.md). The schema is bumped
//! whenever a field changes meaning or goes away; new fields may appear within a version.

use std::io::{self, Write};

use iolab_kind::output::Formatter;
use serde_json::{json, Value};

use super::CachesimReport;
use crate::Traffic;

/// The JSON document.
pub struct Json;

impl Formatter<CachesimReport> for Json {
    fn write(&self, r: &CachesimReport, out: &mut dyn Write) -> io::Result<()> {
        iolab_kind::output::json::write(super::SCHEMA, &doc(r), out)
    }
}

/// The document: everything the table says, and the machine and findings around it.
fn doc(r: &CachesimReport) -> Value {
    let o = &r.result;
    let st = &o.stats;
    let traffic = |t: &Traffic| {
        json!({
            "read_ops": t.ops[0][0] + t.ops[0][1],
            "read_sequential_ops": t.ops[0][1],
            "read_bytes": t.read_bytes(),
            "write_ops": t.ops[1][0] + t.ops[1][1],
            "write_sequential_ops": t.ops[1][1],
            "write_bytes": t.write_bytes(),
        })
    };
    let ns = |secs: f64| (secs * 1e9).round() as u64;
    json!({
        "host": r.host,
        "findings": r.findings,
        "cache": {
            "policy": o.policy,
            "write_policy": o.write_policy,
            "writeback": o.writeback,
            "blocks": o.geometry.blocks,
            "ways": o.geometry.ways,
            "sets": o.geometry.sets,
            "block_size": o.geometry.block_size,
        },
        "trace": { "format": o.format, "skipped": o.skipped },
        "result": {
            "requests": st.requests(),
            "bytes": st.bytes,
            "reads": st.reads,
            "writes": st.writes,
            "read_hits": st.read_hits,
            "read_misses": st.read_misses(),
            "write_hits": st.write_hits,
            "write_misses": st.write_misses(),
            "misses": st.misses(),
            "miss_ratio": st.miss_ratio(),
            "read_hit_ratio": st.read_hit_ratio(),
            "write_hit_ratio": st.write_hit_ratio(),
            "promotions": st.promotions,
            "demotions": st.demotions,
            "dirty_evictions": st.dirty_evictions,
            "invalidations": st.invalidations,
            "bypasses": st.bypasses,
            "cache_device": traffic(&st.cache),
            "origin_device": traffic(&st.origin),
            "metadata_bytes": o.metadata_bytes,
            "service_time": {
                "cache_device_ns": ns(o.cache_device_s),
                "origin_device_ns": ns(o.origin_device_s),
                "total_ns": ns(o.service_s()),
                "writeback_ns": ns(o.writeback_s),
                "per_request_ns": o.service_us_per_request() * 1e3,
            },
            "simulate_ns": ns(o.simulate_s),
            "elapsed_ns": ns(o.elapsed_s),
            "requests_per_s": o.requests_per_s(),
        },
    })
}
