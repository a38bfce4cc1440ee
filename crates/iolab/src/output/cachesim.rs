//! `iolab cachesim`'s result: a table for people, JSON (`iolab.cachesim/1`, docs/json.md).

use std::io::{self, Write};

use iolab_cachesim::{Outcome, Traffic};
use serde::Serialize;
use serde_json::json;

use iolab_kind::cli::Machine as Host;
use iolab_util::units::thousands;

/// The simulation's outcome and what was observed around it.
pub struct CachesimReport {
    pub result: Outcome,
    pub host: Host,
    pub findings: Vec<iolab_store::Finding>,
}

impl Serialize for CachesimReport {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let o = &self.result;
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
            "host": self.host,
            "findings": self.findings,
            "cache": {
                "policy": o.policy,
                "write_policy": o.write_policy,
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
                    "per_request_ns": o.service_us_per_request() * 1e3,
                },
                "simulate_ns": ns(o.simulate_s),
                "elapsed_ns": ns(o.elapsed_s),
                "requests_per_s": o.requests_per_s(),
            },
        })
        .serialize(s)
    }
}

/// The table.
pub fn human(r: &CachesimReport, out: &mut dyn Write) -> io::Result<()> {
    let o = &r.result;
    let st = &o.stats;
    let g = o.geometry;
    let assoc = if g.sets == 1 {
        "fully associative".to_string()
    } else if g.ways == 1 {
        format!("direct-mapped, {} sets", thousands(u64::from(g.sets)))
    } else {
        format!("{}-way, {} sets", g.ways, thousands(u64::from(g.sets)))
    };
    writeln!(
        out,
        "cache: {} blocks of {} B, {assoc}; policy {}, {}",
        thousands(u64::from(g.blocks)),
        g.block_size,
        o.policy,
        o.write_policy
    )?;
    let pct = |x: f64| format!("{:.2}%", x * 100.0);
    writeln!(out)?;
    writeln!(
        out,
        "{:<10} {:>14} {:>14} {:>14} {:>9}",
        "", "requests", "hits", "misses", "hit ratio"
    )?;
    for (name, n, h, hr) in [
        ("reads", st.reads, st.read_hits, st.read_hit_ratio()),
        ("writes", st.writes, st.write_hits, st.write_hit_ratio()),
        (
            "all",
            st.requests(),
            st.read_hits + st.write_hits,
            1.0 - st.miss_ratio(),
        ),
    ] {
        writeln!(
            out,
            "{name:<10} {:>14} {:>14} {:>14} {:>9}",
            thousands(n),
            thousands(h),
            thousands(n - h),
            if n == 0 { "-".into() } else { pct(hr) }
        )?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "promotions {}, demotions {}, dirty evictions {}, invalidations {}, bypassed {}",
        thousands(st.promotions),
        thousands(st.demotions),
        thousands(st.dirty_evictions),
        thousands(st.invalidations),
        thousands(st.bypasses)
    )?;
    let mib = |b: u64| format!("{:.1} MiB", b as f64 / 1048576.0);
    let kib = |b: u64| format!("{:.1} KiB", b as f64 / 1024.0);
    writeln!(
        out,
        "cache device:  read {}, written {}; est. busy {:.3} s",
        mib(st.cache.read_bytes()),
        mib(st.cache.write_bytes()),
        o.cache_device_s
    )?;
    writeln!(
        out,
        "origin device: read {}, written {}; est. busy {:.3} s",
        mib(st.origin.read_bytes()),
        mib(st.origin.write_bytes()),
        o.origin_device_s
    )?;
    writeln!(
        out,
        "estimated service time {:.3} s ({:.1} µs per request); metadata {}",
        o.service_s(),
        o.service_us_per_request(),
        kib(o.metadata_bytes)
    )?;
    let skipped = if o.skipped > 0 {
        format!(
            "; {} requests neither read nor write skipped",
            thousands(o.skipped)
        )
    } else {
        String::new()
    };
    writeln!(
        out,
        "simulated {} requests ({} trace) in {:.3} s: {:.2} M requests/s{skipped}",
        thousands(st.requests()),
        o.format,
        o.simulate_s,
        o.requests_per_s() / 1e6
    )
}
