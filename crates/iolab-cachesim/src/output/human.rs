//! `iolab cachesim`'s table.

use std::io::{self, Write};

use iolab_kind::output::{thousands, Formatter};

use super::CachesimReport;

/// The table.
pub struct Human;

impl Formatter<CachesimReport> for Human {
    fn write(&self, r: &CachesimReport, out: &mut dyn Write) -> io::Result<()> {
        human(r, out)
    }
}

fn human(r: &CachesimReport, out: &mut dyn Write) -> io::Result<()> {
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
    if st.dirty_evictions > 0 {
        let when = if o.writeback == crate::Writeback::Background.name() {
            "in the background, not in the service time"
        } else {
            "on eviction, in the service time"
        };
        writeln!(
            out,
            "write-back: {} dirty blocks, {} written back {when}; est. {:.3} s",
            thousands(st.dirty_evictions),
            mib(st.writeback_bytes),
            o.writeback_s
        )?;
    }
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
