//! Simulating a trace file: read it in chunks, feed the simulator, and sum up.

use std::fmt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use iolab_tracefile::{ObjRequest, Op as TraceOp, ZeroBased};
use serde::Serialize;

use crate::cache::{Geometry, Simulator, Stats};
use crate::model::{writeback_traffic, Writeback};
use crate::spec::{config_error, policy_text, CachesimSpec, SpecError};
use crate::{fill_next, Op, Request, NEVER};

/// Requests fed to the simulator at a time (the cancel flag is looked at between chunks).
const CHUNK: usize = 1 << 16;

/// What a simulation found.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    /// The trace's format (as read).
    pub format: String,
    /// The policy with its parameters: `clock:m=4`.
    pub policy: String,
    /// The write policy.
    pub write_policy: &'static str,
    /// When write-back's dirty blocks go to the origin, for the estimate.
    pub writeback: &'static str,
    /// The cache's shape.
    pub geometry: Geometry,
    /// The counters.
    pub stats: Stats,
    /// Trace requests that were not reads or writes (discards, other), not simulated.
    pub skipped: u64,
    /// Estimated bytes of metadata for this cache and policy.
    pub metadata_bytes: u64,
    /// Estimated time the cache device is busy, seconds.
    pub cache_device_s: f64,
    /// Estimated time the origin device is busy, seconds.
    pub origin_device_s: f64,
    /// Estimated time both devices spend writing dirty blocks back, seconds: part of the two
    /// above with `writeback = on-eviction`, left out of them (the origin's idle time) with
    /// `background`.
    pub writeback_s: f64,
    /// CPU-side time in the simulator (trace reading excluded), seconds; not deterministic.
    pub simulate_s: f64,
    /// The whole run including reading the trace, seconds; not deterministic.
    pub elapsed_s: f64,
    /// What is odd about the input without changing the results, for the caller to tell.
    pub warnings: Vec<Warning>,
}

/// Something about the input worth telling that did not stop or change the simulation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum Warning {
    /// oracleGeneral next-access fields counted from 0, which the policy does not read.
    ZeroBasedNextAccess {
        /// The trace.
        path: PathBuf,
        /// What its reader took.
        found: ZeroBased,
    },
    /// The trace's format does not say which requests are reads and which writes: every
    /// request was simulated as a read, under a write policy that only changes writes.
    NoOps {
        /// The trace.
        path: PathBuf,
        /// Its format's name.
        format: &'static str,
    },
}

impl Warning {
    /// The warning for a trace whose reader took next-access fields counted from 0, if it did.
    pub fn zero_based(path: &std::path::Path, found: Option<ZeroBased>) -> Option<Warning> {
        found.map(|found| Warning::ZeroBasedNextAccess {
            path: path.to_owned(),
            found,
        })
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::ZeroBasedNextAccess { path, found } => write!(
                f,
                "{}: {} next-access field(s) point at their own record (the first: record {}): \
                 the positions seem to count from 0, and oracleGeneral's count from 1. Only \
                 Belady reads them, so these results are not affected; to run Belady, rewrite \
                 them with `iolab trace convert {} OUT.oracleGeneral --to oracleGeneral`",
                path.display(),
                found.records,
                found.first,
                path.display()
            ),
            Warning::NoOps { path, format } => write!(
                f,
                "{}: {format} records do not say whether a request reads or writes: every \
                 request was simulated as a read, so the write policy changes nothing; to \
                 simulate writes, use a trace that records them (iolab's own, `iolab trace \
                 --save`, or CSV with an op column: `--format csv:op-col=N`)",
                path.display()
            ),
        }
    }
}

impl Outcome {
    /// Estimated service time of both devices, seconds.
    pub fn service_s(&self) -> f64 {
        self.cache_device_s + self.origin_device_s
    }

    /// Estimated service time per request, microseconds.
    pub fn service_us_per_request(&self) -> f64 {
        let n = self.stats.requests();
        if n == 0 {
            0.0
        } else {
            self.service_s() * 1e6 / n as f64
        }
    }

    /// Simulated requests per second of simulator time.
    pub fn requests_per_s(&self) -> f64 {
        if self.simulate_s > 0.0 {
            self.stats.requests() as f64 / self.simulate_s
        } else {
            0.0
        }
    }
}

/// Why a simulation did not finish.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The spec is not valid.
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// The trace could not be read.
    #[error(transparent)]
    Trace(#[from] iolab_tracefile::Error),
    /// The cancel flag was set.
    #[error("interrupted")]
    Interrupted,
}

impl RunError {
    /// Whether the user's input is to blame (exit 2).
    pub fn is_bad_input(&self) -> bool {
        match self {
            RunError::Spec(_) => true,
            RunError::Trace(e) => e.is_bad_input(),
            RunError::Interrupted => false,
        }
    }

    /// What to do about it.
    pub fn hint(&self) -> Option<String> {
        match self {
            RunError::Spec(e) => e.hint.clone(),
            RunError::Trace(e) => e.hint(),
            RunError::Interrupted => None,
        }
    }
}

/// The simulator's request for a trace record; `None` for records that are neither reads
/// nor writes.
#[inline]
fn request(r: &ObjRequest) -> Option<Request> {
    // The one rule of which requests a cache sees, shared with the miss-ratio curves.
    if !iolab_mrc::is_cache_request(r.op) {
        return None;
    }
    let op = match r.op {
        TraceOp::Read => Op::Read,
        _ => Op::Write,
    };
    Some(Request {
        id: r.obj_id,
        next: r.next_access.unwrap_or(NEVER),
        size: r.size,
        op,
    })
}

/// Simulates `spec`'s trace on its cache. `cancel` is looked at between chunks.
pub fn run(spec: &CachesimSpec, cancel: &AtomicBool) -> Result<Outcome, RunError> {
    let started = Instant::now();
    spec.check_inputs()?;
    let mut sim = spec.cache.build().map_err(config_error)?;
    let (format, reader) = iolab_tracefile::open(&spec.trace, spec.format.as_ref())?;
    if format.is_block_level() {
        iolab_tracefile::check_block_size(spec.cache.block_size).map_err(|e| SpecError {
            option: "block_size",
            message: e,
            hint: Some("iolab traces are split into blocks of this size".into()),
        })?;
    }
    // Only a policy that reads the trace's next-access field needs it right; the others
    // take fields counted from 0 (libCacheSim checks none) and the caller is told once.
    let reads_next = sim.needs_future() && format.has_next_access();
    let reader = if reads_next {
        reader
    } else {
        reader.accept_zero_based_next_access()
    };
    let mut objects = reader.objects(spec.cache.block_size);
    let mut skipped = 0u64;
    let mut simulate_s = 0.0;
    // Records that are not simulated shift later indices; the next-request index must then
    // be computed over the simulated requests, so read everything first.
    let compute_next = sim.needs_future() && !format.has_next_access();
    if compute_next {
        let mut all = Vec::new();
        for r in objects.by_ref() {
            match request(&r?) {
                Some(q) => all.push(q),
                None => skipped += 1,
            }
            if all.len() % CHUNK == 0 && cancel.load(Ordering::Relaxed) {
                return Err(RunError::Interrupted);
            }
        }
        fill_next(&mut all, 0);
        let t = Instant::now();
        sim.run(&all);
        simulate_s = t.elapsed().as_secs_f64();
    } else {
        let mut buf: Vec<Request> = Vec::with_capacity(CHUNK);
        loop {
            buf.clear();
            for r in objects.by_ref() {
                match request(&r?) {
                    Some(q) => buf.push(q),
                    None => skipped += 1,
                }
                if buf.len() == CHUNK {
                    break;
                }
            }
            if buf.is_empty() {
                break;
            }
            if cancel.load(Ordering::Relaxed) {
                return Err(RunError::Interrupted);
            }
            let t = Instant::now();
            sim.run(&buf);
            simulate_s += t.elapsed().as_secs_f64();
        }
    }
    let mut out = outcome(spec, &*sim, format.name(), skipped, simulate_s, started);
    // Object traces without operations are read-only by nature (libCacheSim reads them so);
    // a write policy other than the default says writes were expected.
    if !format.has_ops() && spec.cache.write != crate::WritePolicy::WriteThrough {
        out.warnings.push(Warning::NoOps {
            path: spec.trace.clone(),
            format: format.name(),
        });
    }
    out.warnings.extend(Warning::zero_based(
        &spec.trace,
        objects.zero_based_next_access(),
    ));
    Ok(out)
}

/// Simulates an in-memory trace (tests, benchmarks) like [`run`] without the file; the
/// trace's [`Request::next`] must be filled in ([`fill_next`]) for policies that read it.
pub fn run_requests(spec: &CachesimSpec, trace: &[Request]) -> Result<Outcome, SpecError> {
    let started = Instant::now();
    let mut sim = spec.cache.build().map_err(config_error)?;
    let t = Instant::now();
    sim.run(trace);
    let simulate_s = t.elapsed().as_secs_f64();
    Ok(outcome(spec, &*sim, "memory", 0, simulate_s, started))
}

fn outcome(
    spec: &CachesimSpec,
    sim: &dyn Simulator,
    format: &str,
    skipped: u64,
    simulate_s: f64,
    started: Instant,
) -> Outcome {
    let stats = sim.stats();
    let (wb_cache, wb_origin) = writeback_traffic(stats.dirty_evictions, stats.writeback_bytes);
    let (cache, origin) = match spec.writeback {
        Writeback::OnEviction => (stats.cache, stats.origin),
        Writeback::Background => (
            stats.cache.without(&wb_cache),
            stats.origin.without(&wb_origin),
        ),
    };
    Outcome {
        format: format.to_string(),
        policy: policy_text(&spec.cache),
        write_policy: spec.cache.write.name(),
        writeback: spec.writeback.name(),
        geometry: sim.geometry(),
        stats,
        skipped,
        metadata_bytes: sim.metadata_bytes(),
        cache_device_s: spec.cache_device.seconds(&cache),
        origin_device_s: spec.origin_device.seconds(&origin),
        writeback_s: spec.cache_device.seconds(&wb_cache) + spec.origin_device.seconds(&wb_origin),
        simulate_s,
        elapsed_s: started.elapsed().as_secs_f64(),
        warnings: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CachesimSpec, WritePolicy, Writeback};

    /// Seed 004's review: write-back came out 12× slower than write-through because every
    /// dirty eviction is priced as a random write to the hard disk, on the request's path.
    /// In the background the same writes leave the service time, and say what they cost.
    #[test]
    fn background_write_back_leaves_the_dirty_evictions_out_of_the_service_time() {
        let mut spec = CachesimSpec::with_defaults();
        spec.cache.size = 2 * 4096;
        spec.cache.write = WritePolicy::WriteBack;
        // A sequential stream of 8 block writes through 2 blocks: 6 dirty evictions.
        let t: Vec<Request> = (0..8).map(|i| Request::write(i, 4096)).collect();
        let now = run_requests(&spec, &t).unwrap();
        spec.writeback = Writeback::Background;
        let bg = run_requests(&spec, &t).unwrap();
        assert_eq!(now.stats, bg.stats, "the same simulation");
        assert_eq!(now.stats.dirty_evictions, 6);
        assert_eq!(now.stats.writeback_bytes, 6 * 4096);
        // Each a random read from the ssd and a random write to the hdd.
        let mib = 1048576.0;
        let one = 1e-4 + 4096.0 / (500.0 * mib) + 8e-3 + 4096.0 / (150.0 * mib);
        assert!(
            (now.writeback_s - 6.0 * one).abs() < 1e-12,
            "{}",
            now.writeback_s
        );
        assert_eq!(bg.writeback_s, now.writeback_s);
        assert!(
            (now.service_s() - bg.service_s() - now.writeback_s).abs() < 1e-12,
            "{} {}",
            now.service_s(),
            bg.service_s()
        );
        assert_eq!(bg.writeback, "background");
        // Write-through writes nothing back; the mode changes nothing there.
        spec.cache.write = WritePolicy::WriteThrough;
        let wt = run_requests(&spec, &t).unwrap();
        assert_eq!(wt.writeback_s, 0.0);
        spec.writeback = Writeback::OnEviction;
        assert_eq!(run_requests(&spec, &t).unwrap().service_s(), wt.service_s());
    }
}
