//! From events to a summary: requests matched issue → completion, counted by operation and
//! flag, request sizes, sequentiality, latency, queue depth and throughput over time.
//!
//! Definitions (all at the request level, i.e. what the driver was asked to do, after the
//! block layer merged and split bios):
//!
//! - A request is counted when it is **issued** (`block_rq_issue`, blkparse `D`): its
//!   operation (read, write, flush, discard, other), flags (FUA, preflush, sync, meta,
//!   read-ahead), size and position.
//! - **Flushes** are issued requests that flush the volatile cache: flush requests (`FF`, `F`)
//!   and data requests carrying a preflush (a leading `F`). **FUA** requests are those with
//!   an `F` after the operation (`WFS`). A device without a volatile cache gets neither: the
//!   block layer drops them; a device without FUA gets a flush after the write instead.
//! - **Latency** is issue → completion, matched by device, operation and start sector (flush
//!   requests, issued at sector 0 and completed at sector `u64::MAX`, are matched in order).
//!   A partial completion leaves the rest in flight. A request is complete when all its
//!   sectors are. The block layer's flush machinery also completes the *original* request of
//!   a flush sequence with 0 sectors without issuing it; those are counted apart
//!   ([`BlockTrace::flush_sequence_completions`]), not as unmatched.
//! - **Queue time** is insert → issue (`block_rq_insert`, `I` → `D`), for requests that went
//!   through a scheduler or software queue; requests issued directly have none.
//! - **Sequential**: a read (write) request starting at the sector where the previously
//!   issued read (write) request ended. Seek distances of the others go into forward and
//!   backward power-of-two histograms (bytes).
//! - **Intervals** split the trace into fixed periods from its start: bytes and requests
//!   *completed* in each (as iostat counts them), flush requests completed, and the number of
//!   requests in flight (issued, not yet completed): maximum and time-weighted mean.
//!
//! Times come from the trace clock at microsecond resolution, so latencies below 1 µs read 0.

use std::collections::{HashMap, VecDeque};
use std::io::{self, Write};

use serde::{Deserialize, Serialize};

use crate::device::TraceDevice;
use crate::event::{format_blkparse, parse_line, parse_lost_line, Action, Event};
use crate::rwbs::Op;
use crate::save::{RequestLog, SavedTrace};
use iolab_sys::DevT;
use iolab_tracefile::{BlockRequest, Flags, Op as FileOp};

/// A power-of-two histogram: bucket `low` counts values in `[low, 2·low)`, bucket 0 counts 0.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pow2Histogram {
    /// Non-empty buckets, by increasing `low`.
    pub buckets: Vec<Bucket>,
}

/// One bucket of a [`Pow2Histogram`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bucket {
    /// Lower bound (0 or a power of two); the bucket holds values in `[low, 2·low)`.
    pub low: u64,
    /// Values in it.
    pub count: u64,
}

impl Pow2Histogram {
    /// The bucket a value falls in (its lower bound).
    pub fn bucket_of(value: u64) -> u64 {
        if value == 0 {
            0
        } else {
            1u64 << (63 - value.leading_zeros())
        }
    }

    /// Count one value.
    pub fn record(&mut self, value: u64) {
        let low = Self::bucket_of(value);
        match self.buckets.binary_search_by_key(&low, |b| b.low) {
            Ok(i) => self.buckets[i].count += 1,
            Err(i) => self.buckets.insert(i, Bucket { low, count: 1 }),
        }
    }

    /// Values counted.
    pub fn total(&self) -> u64 {
        self.buckets.iter().map(|b| b.count).sum()
    }

    /// The bucket with the most values (the lower one on a tie), `None` if empty.
    pub fn mode(&self) -> Option<Bucket> {
        self.buckets
            .iter()
            .copied()
            .reduce(|best, b| if b.count > best.count { b } else { best })
    }

    /// Add another histogram's counts.
    pub fn merge(&mut self, other: &Pow2Histogram) {
        for b in &other.buckets {
            match self.buckets.binary_search_by_key(&b.low, |x| x.low) {
                Ok(i) => self.buckets[i].count += b.count,
                Err(i) => self.buckets.insert(i, *b),
            }
        }
    }
}

/// Percentiles of a latency distribution, nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    /// Requests measured.
    pub count: u64,
    /// Smallest.
    pub min_ns: u64,
    /// Mean.
    pub mean_ns: f64,
    /// Median.
    pub p50_ns: u64,
    /// 90th percentile.
    pub p90_ns: u64,
    /// 99th percentile.
    pub p99_ns: u64,
    /// 99.9th percentile.
    pub p999_ns: u64,
    /// Largest.
    pub max_ns: u64,
}

/// An HDR histogram of nanoseconds (3 significant digits, grows as needed).
struct LatencyHist(Option<hdrhistogram::Histogram<u64>>);

impl LatencyHist {
    fn new() -> Self {
        LatencyHist(hdrhistogram::Histogram::new(3).ok())
    }

    fn record(&mut self, ns: u64) {
        if let Some(h) = &mut self.0 {
            // Auto-resizing: only absurd values (> 2^62) could fail; they are skipped.
            let _ = h.record(ns);
        }
    }

    fn summary(&self) -> Option<LatencySummary> {
        let h = self.0.as_ref()?;
        if h.is_empty() {
            return None;
        }
        Some(LatencySummary {
            count: h.len(),
            min_ns: h.min(),
            mean_ns: h.mean(),
            p50_ns: h.value_at_quantile(0.5),
            p90_ns: h.value_at_quantile(0.9),
            p99_ns: h.value_at_quantile(0.99),
            p999_ns: h.value_at_quantile(0.999),
            max_ns: h.max(),
        })
    }
}

/// Requests of one data direction (read or write).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DirStats {
    /// Requests issued.
    pub requests: u64,
    /// Bytes of those requests.
    pub bytes: u64,
    /// Request sizes, bytes.
    pub sizes: Pow2Histogram,
    /// Requests that started where the previous request of this direction ended.
    pub sequential: u64,
    /// Requests that had a previous request of this direction (the denominator).
    pub after_another: u64,
    /// Forward seek distances (start − previous end > 0), bytes.
    pub forward_seeks: Pow2Histogram,
    /// Backward seek distances (previous end − start > 0), bytes.
    pub backward_seeks: Pow2Histogram,
    /// Issue → completion.
    pub latency: Option<LatencySummary>,
}

impl DirStats {
    /// Fraction of requests that were sequential, `None` with fewer than two requests.
    pub fn sequential_fraction(&self) -> Option<f64> {
        (self.after_another > 0).then(|| self.sequential as f64 / self.after_another as f64)
    }
}

/// Count, bytes and latency of requests of some other kind.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OpStats {
    /// Requests issued.
    pub requests: u64,
    /// Their bytes (`nr_sector · 512`).
    pub bytes: u64,
    /// Issue → completion.
    pub latency: Option<LatencySummary>,
}

/// Bios queued (`block_bio_queue`): what the filesystem / application asked for, before
/// merging, splitting and the flush machinery.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BioStats {
    /// Bios queued.
    pub bios: u64,
    /// Read bios.
    pub reads: u64,
    /// Bytes of read bios.
    pub read_bytes: u64,
    /// Write bios.
    pub writes: u64,
    /// Bytes of write bios.
    pub write_bytes: u64,
    /// Bios asking for a preflush (leading `F`), including empty ones (`FWS 0 + 0`: fsync).
    pub preflush: u64,
    /// Bios asking for FUA.
    pub fua: u64,
    /// Bios marked sync.
    pub sync: u64,
    /// Discard bios.
    pub discards: u64,
}

/// One period of the trace.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IntervalStats {
    /// Start, nanoseconds from the start of the trace.
    pub start_ns: u64,
    /// Bytes of read requests completed in it.
    pub read_bytes: u64,
    /// Bytes of write requests completed in it.
    pub write_bytes: u64,
    /// Read requests completed.
    pub reads: u64,
    /// Write requests completed.
    pub writes: u64,
    /// Flush requests completed.
    pub flushes: u64,
    /// Most requests in flight at once.
    pub max_inflight: u32,
    /// Time-weighted mean of requests in flight (`aqu-sz` seen from the trace).
    pub mean_inflight: f64,
}

/// Buffer statistics of one CPU (`per_cpu/cpuN/stats`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuBufferStats {
    /// The CPU.
    pub cpu: u32,
    /// `overrun`: events overwritten before they were read (overwrite mode).
    pub overrun: u64,
    /// `commit overrun`: events lost while the buffer was being written.
    pub commit_overrun: u64,
    /// `dropped events`: events refused because the buffer was full (no-overwrite mode).
    pub dropped: u64,
}

impl CpuBufferStats {
    /// Events lost on this CPU.
    pub fn lost(&self) -> u64 {
        self.overrun + self.commit_overrun + self.dropped
    }
}

/// Parse a `per_cpu/cpuN/stats` file (`key: value` lines). Missing keys read 0.
pub fn parse_cpu_stats(cpu: u32, text: &str) -> CpuBufferStats {
    let mut s = CpuBufferStats {
        cpu,
        ..Default::default()
    };
    for line in text.lines() {
        let Some((k, v)) = line.split_once(':') else {
            continue;
        };
        let v = v.trim().parse::<u64>().unwrap_or(0);
        match k.trim() {
            "overrun" => s.overrun = v,
            "commit overrun" => s.commit_overrun = v,
            "dropped events" => s.dropped = v,
            _ => {}
        }
    }
    s
}

/// Events lost because the reader fell behind.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LostEvents {
    /// Best estimate: the larger of the buffer statistics and the stream's LOST lines.
    pub total: u64,
    /// Per-CPU buffer statistics read at the end.
    pub per_cpu: Vec<CpuBufferStats>,
    /// Sum of the `CPU:N [LOST K EVENTS]` lines in the stream.
    pub in_stream: u64,
}

/// Events seen, by kind.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventCounts {
    /// `block_bio_queue`.
    pub queue: u64,
    /// `block_rq_insert`.
    pub insert: u64,
    /// `block_rq_issue`.
    pub issue: u64,
    /// `block_rq_complete`.
    pub complete: u64,
    /// `block_rq_requeue`.
    pub requeue: u64,
    /// Non-empty lines that were neither an event nor a LOST line.
    pub unparsed: u64,
    /// The first few of those, for diagnosis.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unparsed_examples: Vec<String>,
}

/// What the block layer did on a device during a trace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BlockTrace {
    /// The device traced.
    pub device: TraceDevice,
    /// Start of the trace on the trace clock (`CLOCK_MONOTONIC` for the `mono` clock), ns.
    pub start_ns: u64,
    /// Length of the trace, ns.
    pub duration_ns: u64,
    /// Length of the periods of [`BlockTrace::intervals`], ns.
    pub interval_ns: u64,
    /// The tracefs clock the timestamps come from.
    pub clock: String,
    /// Resolution of the timestamps, ns (1000: the text format prints microseconds).
    pub resolution_ns: u64,
    /// The tracefs events that were enabled.
    pub events_enabled: Vec<String>,
    /// Events seen.
    pub events: EventCounts,
    /// Read requests.
    pub reads: DirStats,
    /// Write requests.
    pub writes: DirStats,
    /// Requests that flush the device's cache (flush requests and preflushes).
    pub flushes: OpStats,
    /// Requests with FUA (forced unit access); their bytes are also in `writes`.
    pub fua: OpStats,
    /// Discard and secure-erase requests.
    pub discards: OpStats,
    /// Other requests: write-zeroes (`N` on 6.18), zone management, driver-private.
    pub other: OpStats,
    /// Requests marked sync (`S`).
    pub sync: u64,
    /// Requests marked metadata (`M`).
    pub meta: u64,
    /// Read-ahead requests (`A`).
    pub readahead: u64,
    /// Bios queued, if `block_bio_queue` was traced.
    pub bios: Option<BioStats>,
    /// Sizes of read and write requests, bytes.
    pub sizes: Pow2Histogram,
    /// Issue → completion of read and write requests.
    pub latency: Option<LatencySummary>,
    /// Insert → issue, for requests that were inserted into a queue first.
    pub queue_time: Option<LatencySummary>,
    /// Most requests in flight at once.
    pub max_inflight: u32,
    /// Per-period throughput and queue depth.
    pub intervals: Vec<IntervalStats>,
    /// Events lost.
    pub lost: LostEvents,
    /// Completions (of at least one sector) without a matching issue: their issue was lost
    /// or happened before the trace started.
    pub unmatched_completions: u64,
    /// 0-sector completions of the original request of a flush sequence (never issued).
    pub flush_sequence_completions: u64,
    /// Requests issued but not completed when the trace stopped.
    pub in_flight_at_end: u64,
    /// Completions with a non-zero error.
    pub errors: u64,
    /// Every event in order, if the tracer was asked to keep them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub records: Vec<Event>,
    /// The request-level trace, if it was saved ([`crate::TraceOptions::save`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub saved: Option<SavedTrace>,
}

impl BlockTrace {
    /// Bytes of read and write requests issued.
    pub fn data_bytes(&self) -> u64 {
        self.reads.bytes + self.writes.bytes
    }

    /// Write the kept records in blkparse format, one per line, times relative to the start.
    pub fn write_blkparse(&self, out: &mut dyn Write) -> io::Result<()> {
        for ev in &self.records {
            writeln!(out, "{}", format_blkparse(ev, self.start_ns))?;
        }
        Ok(())
    }
}

/// Direction index into per-direction state.
fn dir_of(op: Op) -> Option<usize> {
    match op {
        Op::Read => Some(0),
        Op::Write => Some(1),
        _ => None,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Key {
    dev: DevT,
    sector: u64,
    op: Op,
}

struct InFlight {
    issue_ns: u64,
    remaining: u32,
    /// Sequence number in the saved trace.
    seq: Option<u64>,
}

#[derive(Default)]
struct DirState {
    stats: DirStats,
    prev_end: Option<u64>,
}

/// Most insert times kept while waiting for their issue; beyond this (requests merged after
/// insertion never issue) the table is cleared.
const MAX_PENDING_INSERTS: usize = 1 << 20;
/// Longest interval series kept; later periods (a very long trace with a very short interval,
/// or a clock jump) are not in [`BlockTrace::intervals`].
const MAX_INTERVALS: u64 = 1 << 20;
/// Unparsed lines kept as examples.
const UNPARSED_EXAMPLES: usize = 5;

/// Builds a [`BlockTrace`] from events, one at a time, in the order `trace_pipe` gives them.
///
/// The tracer feeds it from its reader thread; it can also summarize saved `trace_pipe` text
/// (feed [`Summarizer::push_line`]).
pub struct Summarizer {
    device: TraceDevice,
    start_ns: u64,
    interval_ns: u64,
    keep_records: bool,
    records: Vec<Event>,
    seq: HashMap<u32, u64>,
    events: EventCounts,
    lost_in_stream: u64,
    dirs: [DirState; 2],
    flushes: OpStats,
    fua: OpStats,
    discards: OpStats,
    other: OpStats,
    sync: u64,
    meta: u64,
    readahead: u64,
    bios: BioStats,
    inflight: HashMap<Key, VecDeque<InFlight>>,
    inflight_flushes: VecDeque<(DevT, u64, Option<u64>)>,
    inserted: HashMap<Key, VecDeque<u64>>,
    inserted_len: usize,
    lat: [LatencyHist; 2],
    lat_flush: LatencyHist,
    lat_discard: LatencyHist,
    lat_other: LatencyHist,
    lat_fua: LatencyHist,
    lat_queue: LatencyHist,
    depth: u32,
    max_depth: u32,
    last_ns: u64,
    intervals: Vec<IntervalStats>,
    area: Vec<f64>,
    unmatched: u64,
    flush_seq: u64,
    errors: u64,
    log: Option<RequestLog>,
}

impl Summarizer {
    /// A summarizer for a trace of `device` that started at `start_ns` on the trace clock,
    /// with periods of `interval_ns` (at least 1). `keep_records` keeps every event.
    pub fn new(device: TraceDevice, start_ns: u64, interval_ns: u64, keep_records: bool) -> Self {
        Summarizer {
            device,
            start_ns,
            interval_ns: interval_ns.max(1),
            keep_records,
            records: Vec::new(),
            seq: HashMap::new(),
            events: EventCounts::default(),
            lost_in_stream: 0,
            dirs: Default::default(),
            flushes: OpStats::default(),
            fua: OpStats::default(),
            discards: OpStats::default(),
            other: OpStats::default(),
            sync: 0,
            meta: 0,
            readahead: 0,
            bios: BioStats::default(),
            inflight: HashMap::new(),
            inflight_flushes: VecDeque::new(),
            inserted: HashMap::new(),
            inserted_len: 0,
            lat: [LatencyHist::new(), LatencyHist::new()],
            lat_flush: LatencyHist::new(),
            lat_discard: LatencyHist::new(),
            lat_other: LatencyHist::new(),
            lat_fua: LatencyHist::new(),
            lat_queue: LatencyHist::new(),
            depth: 0,
            max_depth: 0,
            last_ns: start_ns,
            intervals: Vec::new(),
            area: Vec::new(),
            unmatched: 0,
            flush_seq: 0,
            errors: 0,
            log: None,
        }
    }

    /// Save every request to `log` from now on.
    pub(crate) fn set_log(&mut self, log: RequestLog) {
        self.log = Some(log);
    }

    /// The request log, to finish it (before [`Summarizer::finish`]).
    pub(crate) fn take_log(&mut self) -> Option<RequestLog> {
        self.log.take()
    }

    /// Record an issued request in the log; its sequence number there.
    fn log_issue(&mut self, ev: &Event) -> Option<u64> {
        let log = self.log.as_mut()?;
        let k = ev.kind;
        let op = match k.op {
            Op::Read => FileOp::Read,
            Op::Write => FileOp::Write,
            Op::Flush => FileOp::Flush,
            Op::Discard | Op::SecureErase => FileOp::Discard,
            Op::WriteZeroes => FileOp::WriteZeroes,
            _ => FileOp::Other,
        };
        let part_start = self.device.partition.map_or(0, |p| p.start);
        let offset = if op == FileOp::Flush {
            0
        } else {
            ev.sector.saturating_sub(part_start).saturating_mul(512)
        };
        let flags = Flags::default()
            .with(Flags::SYNC, k.sync)
            .with(Flags::FUA, k.fua)
            .with(Flags::PREFLUSH, k.preflush)
            .with(Flags::META, k.meta)
            .with(Flags::READAHEAD, k.readahead);
        Some(log.issue(
            ev.time_ns,
            BlockRequest {
                time_ns: 0,
                offset,
                len: u32::try_from(ev.len_bytes()).unwrap_or(u32::MAX),
                latency_ns: None,
                op,
                flags,
            },
        ))
    }

    fn log_complete(&mut self, seq: Option<u64>, latency_ns: u64, ev: &Event) {
        if let (Some(log), Some(seq)) = (self.log.as_mut(), seq) {
            log.complete(seq, latency_ns, ev.error.is_some_and(|e| e != 0));
        }
    }

    /// Feed one line of `trace_pipe` text (without or with its newline).
    pub fn push_line(&mut self, line: &str) {
        if let Some(ev) = parse_line(line) {
            self.push_event(ev);
        } else if let Some(lost) = parse_lost_line(line) {
            self.lost_in_stream += lost.count;
        } else if !line.trim().is_empty() {
            self.events.unparsed += 1;
            if self.events.unparsed_examples.len() < UNPARSED_EXAMPLES {
                self.events
                    .unparsed_examples
                    .push(line.chars().take(200).collect());
            }
        }
    }

    /// Feed one event. Its `seq` is replaced by the per-CPU sequence number.
    pub fn push_event(&mut self, mut ev: Event) {
        let seq = self.seq.entry(ev.cpu).or_insert(0);
        *seq += 1;
        ev.seq = *seq;
        match ev.action {
            Action::Queue => self.on_queue(&ev),
            Action::Insert => self.on_insert(&ev),
            Action::Issue => self.on_issue(&ev),
            Action::Complete => self.on_complete(&ev),
            Action::Requeue => self.on_requeue(&ev),
        }
        if self.keep_records {
            self.records.push(ev);
        }
    }

    fn key(ev: &Event) -> Key {
        Key {
            dev: ev.dev,
            sector: ev.sector,
            op: ev.kind.op,
        }
    }

    fn on_queue(&mut self, ev: &Event) {
        self.events.queue += 1;
        let b = &mut self.bios;
        b.bios += 1;
        match ev.kind.op {
            Op::Read => {
                b.reads += 1;
                b.read_bytes += ev.len_bytes();
            }
            Op::Write => {
                b.writes += 1;
                b.write_bytes += ev.len_bytes();
            }
            Op::Discard | Op::SecureErase => b.discards += 1,
            _ => {}
        }
        b.preflush += u64::from(ev.kind.is_flush());
        b.fua += u64::from(ev.kind.fua);
        b.sync += u64::from(ev.kind.sync);
    }

    fn on_insert(&mut self, ev: &Event) {
        self.events.insert += 1;
        if self.inserted_len >= MAX_PENDING_INSERTS {
            self.inserted.clear();
            self.inserted_len = 0;
        }
        self.inserted
            .entry(Self::key(ev))
            .or_default()
            .push_back(ev.time_ns);
        self.inserted_len += 1;
    }

    fn on_issue(&mut self, ev: &Event) {
        self.events.issue += 1;
        let key = Self::key(ev);
        if let Some(q) = self.inserted.get_mut(&key) {
            if let Some(t) = q.pop_front() {
                self.inserted_len -= 1;
                self.lat_queue.record(ev.time_ns.saturating_sub(t));
            }
            if q.is_empty() {
                self.inserted.remove(&key);
            }
        }
        let k = ev.kind;
        let bytes = ev.len_bytes();
        self.sync += u64::from(k.sync);
        self.meta += u64::from(k.meta);
        self.readahead += u64::from(k.readahead);
        if k.is_flush() {
            self.flushes.requests += 1;
        }
        if k.fua {
            self.fua.requests += 1;
            self.fua.bytes += bytes;
        }
        match k.op {
            Op::Read | Op::Write => {
                let d = &mut self.dirs[usize::from(k.op == Op::Write)];
                let s = &mut d.stats;
                s.requests += 1;
                s.bytes += bytes;
                s.sizes.record(bytes);
                if let Some(prev_end) = d.prev_end {
                    s.after_another += 1;
                    if ev.sector == prev_end {
                        s.sequential += 1;
                    } else if ev.sector > prev_end {
                        s.forward_seeks
                            .record((ev.sector - prev_end).saturating_mul(512));
                    } else {
                        s.backward_seeks
                            .record((prev_end - ev.sector).saturating_mul(512));
                    }
                }
                d.prev_end = Some(ev.sector.saturating_add(u64::from(ev.nr_sector)));
            }
            Op::Flush => {}
            Op::Discard | Op::SecureErase => {
                self.discards.requests += 1;
                self.discards.bytes += bytes;
            }
            _ => {
                self.other.requests += 1;
                self.other.bytes += bytes;
            }
        }
        let seq = self.log_issue(ev);
        if k.op == Op::Flush {
            self.inflight_flushes.push_back((ev.dev, ev.time_ns, seq));
        } else {
            self.inflight.entry(key).or_default().push_back(InFlight {
                issue_ns: ev.time_ns,
                remaining: ev.nr_sector,
                seq,
            });
        }
        self.set_depth(ev.time_ns, self.depth + 1);
    }

    fn on_complete(&mut self, ev: &Event) {
        self.events.complete += 1;
        if ev.error.is_some_and(|e| e != 0) {
            self.errors += 1;
        }
        let k = ev.kind;
        if k.op == Op::Flush {
            let Some(pos) = self.inflight_flushes.iter().position(|f| f.0 == ev.dev) else {
                self.unmatched += 1;
                return;
            };
            let (_, issued, seq) = self
                .inflight_flushes
                .remove(pos)
                .unwrap_or((ev.dev, 0, None));
            self.lat_flush.record(ev.time_ns.saturating_sub(issued));
            self.log_complete(seq, ev.time_ns.saturating_sub(issued), ev);
            self.finish_request(ev, 0);
            return;
        }
        let key = Self::key(ev);
        let Some(q) = self.inflight.get_mut(&key) else {
            if ev.nr_sector == 0 {
                self.flush_seq += 1;
            } else {
                self.unmatched += 1;
            }
            return;
        };
        let Some(mut req) = q.pop_front() else {
            self.inflight.remove(&key);
            self.unmatched += 1;
            return;
        };
        if q.is_empty() {
            self.inflight.remove(&key);
        }
        if ev.nr_sector > 0 && ev.nr_sector < req.remaining {
            // Partial completion: the rest stays in flight, starting after the part done.
            req.remaining -= ev.nr_sector;
            let rest = Key {
                sector: ev.sector.saturating_add(u64::from(ev.nr_sector)),
                ..key
            };
            self.inflight.entry(rest).or_default().push_front(req);
            self.count_completed(ev, ev.len_bytes());
            return;
        }
        let lat = ev.time_ns.saturating_sub(req.issue_ns);
        self.log_complete(req.seq, lat, ev);
        match k.op {
            Op::Read | Op::Write => self.lat[usize::from(k.op == Op::Write)].record(lat),
            Op::Discard | Op::SecureErase => self.lat_discard.record(lat),
            _ => self.lat_other.record(lat),
        }
        if k.fua {
            self.lat_fua.record(lat);
        }
        if k.preflush {
            self.lat_flush.record(lat);
        }
        self.finish_request(ev, ev.len_bytes());
    }

    fn on_requeue(&mut self, ev: &Event) {
        self.events.requeue += 1;
        // The request will be issued again: it is no longer in flight.
        let removed = if ev.kind.op == Op::Flush {
            match self.inflight_flushes.iter().position(|f| f.0 == ev.dev) {
                Some(pos) => self.inflight_flushes.remove(pos).map(|f| f.2),
                None => None,
            }
        } else {
            let key = Self::key(ev);
            let r = self
                .inflight
                .get_mut(&key)
                .and_then(|q| q.pop_front())
                .map(|f| f.seq);
            if self.inflight.get(&key).is_some_and(|q| q.is_empty()) {
                self.inflight.remove(&key);
            }
            r
        };
        if let Some(seq) = removed {
            if let (Some(log), Some(seq)) = (self.log.as_mut(), seq) {
                log.forget(seq);
            }
            self.set_depth(ev.time_ns, self.depth.saturating_sub(1));
        }
    }

    /// The last part of a request completed.
    fn finish_request(&mut self, ev: &Event, bytes: u64) {
        self.count_completed(ev, bytes);
        if ev.kind.op == Op::Flush {
            if let Some(iv) = self.interval_at(ev.time_ns) {
                iv.flushes += 1;
            }
        } else if let Some(d) = dir_of(ev.kind.op) {
            if let Some(iv) = self.interval_at(ev.time_ns) {
                if d == 0 {
                    iv.reads += 1;
                } else {
                    iv.writes += 1;
                }
            }
        }
        self.set_depth(ev.time_ns, self.depth.saturating_sub(1));
    }

    fn count_completed(&mut self, ev: &Event, bytes: u64) {
        let op = ev.kind.op;
        if let Some(iv) = self.interval_at(ev.time_ns) {
            match op {
                Op::Read => iv.read_bytes += bytes,
                Op::Write => iv.write_bytes += bytes,
                _ => {}
            }
        }
    }

    fn interval_index(&self, t: u64) -> Option<usize> {
        let i = t.saturating_sub(self.start_ns) / self.interval_ns;
        (i < MAX_INTERVALS).then_some(i as usize)
    }

    fn ensure_intervals(&mut self, i: usize) {
        while self.intervals.len() <= i {
            let n = self.intervals.len() as u64;
            self.intervals.push(IntervalStats {
                start_ns: n.saturating_mul(self.interval_ns),
                ..Default::default()
            });
            self.area.push(0.0);
        }
    }

    fn interval_at(&mut self, t: u64) -> Option<&mut IntervalStats> {
        let i = self.interval_index(t)?;
        self.ensure_intervals(i);
        self.intervals.get_mut(i)
    }

    /// Integrate the current depth up to `t` over the intervals it spans.
    fn advance(&mut self, t: u64) {
        let t = t.max(self.last_ns);
        if self.depth > 0 {
            let mut from = self.last_ns;
            while from < t {
                let Some(i) = self.interval_index(from) else {
                    break;
                };
                self.ensure_intervals(i);
                let end = self
                    .start_ns
                    .saturating_add((i as u64 + 1).saturating_mul(self.interval_ns))
                    .min(t);
                let end = end.max(from + 1).min(t);
                self.area[i] += f64::from(self.depth) * (end - from) as f64;
                let iv = &mut self.intervals[i];
                iv.max_inflight = iv.max_inflight.max(self.depth);
                from = end;
            }
        }
        self.last_ns = t;
    }

    fn set_depth(&mut self, t: u64, depth: u32) {
        self.advance(t);
        self.depth = depth;
        self.max_depth = self.max_depth.max(depth);
        if let Some(iv) = self.interval_at(t) {
            iv.max_inflight = iv.max_inflight.max(depth);
        }
    }

    /// Finish at `stop_ns` (trace clock) with the buffer statistics read at the end and the
    /// names of the events that were enabled.
    pub fn finish(
        mut self,
        stop_ns: u64,
        clock: &str,
        cpu_stats: Vec<CpuBufferStats>,
        events_enabled: Vec<String>,
    ) -> BlockTrace {
        let stop_ns = stop_ns.max(self.last_ns);
        self.advance(stop_ns);
        if stop_ns > self.start_ns {
            if let Some(last) = self.interval_index(stop_ns - 1) {
                self.ensure_intervals(last);
            }
        }
        for (i, iv) in self.intervals.iter_mut().enumerate() {
            let begin = self.start_ns.saturating_add(iv.start_ns);
            let end = begin
                .saturating_add(self.interval_ns)
                .min(stop_ns.max(begin.saturating_add(1)));
            iv.mean_inflight = self.area[i] / (end - begin).max(1) as f64;
        }
        let [r, w] = self.dirs;
        let mut reads = r.stats;
        let mut writes = w.stats;
        reads.latency = self.lat[0].summary();
        writes.latency = self.lat[1].summary();
        let mut sizes = reads.sizes.clone();
        sizes.merge(&writes.sizes);
        let mut data_lat = LatencyHist::new();
        if let (Some(all), Some(a), Some(b)) = (&mut data_lat.0, &self.lat[0].0, &self.lat[1].0) {
            let _ = all.add(a);
            let _ = all.add(b);
        }
        self.flushes.latency = self.lat_flush.summary();
        self.fua.latency = self.lat_fua.summary();
        self.discards.latency = self.lat_discard.summary();
        self.other.latency = self.lat_other.summary();
        let lost_stats: u64 = cpu_stats.iter().map(CpuBufferStats::lost).sum();
        let in_flight_at_end = self.inflight.values().map(|q| q.len() as u64).sum::<u64>()
            + self.inflight_flushes.len() as u64;
        let bios = (events_enabled.iter().any(|e| e == "block_bio_queue") || self.events.queue > 0)
            .then_some(self.bios);
        BlockTrace {
            device: self.device,
            start_ns: self.start_ns,
            duration_ns: stop_ns - self.start_ns,
            interval_ns: self.interval_ns,
            clock: clock.to_owned(),
            resolution_ns: 1000,
            events_enabled,
            events: self.events,
            reads,
            writes,
            flushes: self.flushes,
            fua: self.fua,
            discards: self.discards,
            other: self.other,
            sync: self.sync,
            meta: self.meta,
            readahead: self.readahead,
            bios,
            sizes,
            latency: data_lat.summary(),
            queue_time: self.lat_queue.summary(),
            max_inflight: self.max_depth,
            intervals: self.intervals,
            lost: LostEvents {
                total: lost_stats.max(self.lost_in_stream),
                per_cpu: cpu_stats,
                in_stream: self.lost_in_stream,
            },
            unmatched_completions: self.unmatched,
            flush_sequence_completions: self.flush_seq,
            in_flight_at_end,
            errors: self.errors,
            records: self.records,
            saved: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dev() -> TraceDevice {
        TraceDevice::whole("loop1", DevT::new(7, 1))
    }

    fn summarize(text: &str, keep: bool) -> BlockTrace {
        let first = text.lines().find_map(parse_line).map_or(0, |e| e.time_ns);
        let mut s = Summarizer::new(dev(), first, 1_000_000_000, keep);
        for l in text.lines() {
            s.push_line(l);
        }
        let last = text
            .lines()
            .rev()
            .find_map(parse_line)
            .map_or(0, |e| e.time_ns);
        s.finish(last, "mono", Vec::new(), vec!["block_rq_issue".into()])
    }

    #[test]
    fn pow2_histogram() {
        assert_eq!(Pow2Histogram::bucket_of(0), 0);
        assert_eq!(Pow2Histogram::bucket_of(1), 1);
        assert_eq!(Pow2Histogram::bucket_of(4095), 2048);
        assert_eq!(Pow2Histogram::bucket_of(4096), 4096);
        assert_eq!(Pow2Histogram::bucket_of(u64::MAX), 1 << 63);
        let mut h = Pow2Histogram::default();
        for v in [4096, 4096, 8192, 1 << 20, 0] {
            h.record(v);
        }
        assert_eq!(h.total(), 5);
        assert_eq!(
            h.mode(),
            Some(Bucket {
                low: 4096,
                count: 2
            })
        );
        assert_eq!(h.buckets.first().map(|b| b.low), Some(0));
        let mut g = Pow2Histogram::default();
        g.record(1 << 20);
        g.record(3);
        h.merge(&g);
        assert_eq!(h.total(), 7);
        assert_eq!(
            h.buckets.iter().map(|b| b.low).collect::<Vec<_>>(),
            [0, 2, 4096, 8192, 1 << 20]
        );
        assert_eq!(Pow2Histogram::default().mode(), None);
    }

    #[test]
    fn direct_writes_and_reads() {
        let t = summarize(
            "\
              dd-22764   [001] ..... 10303.919020: block_bio_queue: 7,1 WS 0 + 2048 [dd]
              dd-22764   [001] ..... 10303.919210: block_rq_issue: 7,1 WS 1048576 () 0 + 2048 be,0,4 [dd]
     ksoftirqd/1-22      [001] ..s.. 10303.924679: block_rq_complete: 7,1 WS () 0 + 2048 be,0,4 [0]
              dd-22764   [001] ..... 10303.926848: block_rq_issue: 7,1 WS 1048576 () 2048 + 2048 be,0,4 [dd]
     ksoftirqd/0-14      [000] ..s.. 10303.927904: block_rq_complete: 7,1 WS () 2048 + 2048 be,0,4 [0]
              dd-22764   [001] ..... 10303.928499: block_rq_issue: 7,1 WS 1048576 () 8192 + 2048 be,0,4 [dd]
     ksoftirqd/1-22      [001] ..s.. 10303.929589: block_rq_complete: 7,1 WS () 8192 + 2048 be,0,4 [0]
              dd-22765   [001] ..... 10303.933043: block_rq_issue: 7,1 RS 65536 () 0 + 128 be,0,4 [dd]
          <idle>-0       [001] ..s1. 10303.936077: block_rq_complete: 7,1 RS () 0 + 128 be,0,4 [0]
",
            true,
        );
        assert_eq!(t.writes.requests, 3);
        assert_eq!(t.writes.bytes, 3 << 20);
        assert_eq!(t.writes.sequential, 1);
        assert_eq!(t.writes.after_another, 2);
        assert_eq!(t.writes.sequential_fraction(), Some(0.5));
        assert_eq!(
            t.writes.forward_seeks.buckets,
            [Bucket {
                low: 2 << 20,
                count: 1
            }]
        );
        assert_eq!(t.reads.requests, 1);
        assert_eq!(t.reads.sequential_fraction(), None);
        assert_eq!(
            t.sizes.mode(),
            Some(Bucket {
                low: 1 << 20,
                count: 3
            })
        );
        assert_eq!(t.sync, 4);
        let lat = t.writes.latency.unwrap();
        assert_eq!(lat.count, 3);
        assert!((lat.max_ns as f64 - 5_469_000.0).abs() < 6_000.0, "{lat:?}");
        assert_eq!(t.latency.unwrap().count, 4);
        assert_eq!(t.max_inflight, 1);
        assert_eq!(t.unmatched_completions, 0);
        assert_eq!(t.in_flight_at_end, 0);
        assert_eq!(t.bios.as_ref().unwrap().write_bytes, 1 << 20);
        assert_eq!(t.records.len(), 10 - 1);
        assert_eq!(t.records[1].seq, 2);
        assert_eq!(t.intervals.len(), 1);
        assert_eq!(t.intervals[0].write_bytes, 3 << 20);
        assert!(t.intervals[0].mean_inflight > 0.5 && t.intervals[0].mean_inflight <= 1.0);
        let mut out = Vec::new();
        t.write_blkparse(&mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text.lines().next(),
            Some("  7,1    1        1     0.000000000 22764  Q  WS 0 + 2048 [dd]")
        );
    }

    #[test]
    fn flush_sequences_and_fua() {
        // fsync without data (FWS 0 + 0), then a jbd2 commit block (FWFSM) on a device without
        // FUA: flush, write, flush, then the original request completes with 0 sectors.
        let t = summarize(
            "\
       mkfs.ext4-22766   [000] ..... 10303.953257: block_bio_queue: 7,1 FWS 0 + 0 [mkfs.ext4]
    kworker/0:2H-32181   [000] ..... 10303.953308: block_rq_issue: 7,1 FF 0 () 0 + 0 none,0,0 [kworker/0:2H]
     ksoftirqd/1-22      [001] ..s.. 10303.955035: block_rq_complete: 7,1 FF () 18446744073709551615 + 0 none,0,0 [0]
     ksoftirqd/1-22      [001] d.s1. 10303.955055: block_rq_complete: 7,1 WS () 0 + 0 be,0,4 [0]
    jbd2/loop1-8-22774   [000] ..... 10304.054480: block_bio_queue: 7,1 FWFSM 229396 + 2 [jbd2/loop1-8]
    kworker/0:2H-32181   [000] ..... 10304.054488: block_rq_issue: 7,1 FF 0 () 0 + 0 none,0,0 [kworker/0:2H]
     ksoftirqd/0-14      [000] ..s.. 10304.054673: block_rq_complete: 7,1 FF () 18446744073709551615 + 0 none,0,0 [0]
    kworker/0:2H-32181   [000] ..... 10304.054680: block_rq_insert: 7,1 WSM 1024 () 229396 + 2 be,0,3 [kworker/0:2H]
    kworker/0:2H-32181   [000] ..... 10304.054681: block_rq_issue: 7,1 WSM 1024 () 229396 + 2 be,0,3 [kworker/0:2H]
     ksoftirqd/0-14      [000] ..s.. 10304.054779: block_rq_complete: 7,1 WSM () 229396 + 2 be,0,3 [0]
    kworker/0:2H-32181   [000] ..... 10304.054787: block_rq_issue: 7,1 FF 0 () 0 + 0 none,0,0 [kworker/0:2H]
     ksoftirqd/0-14      [000] ..s.. 10304.054863: block_rq_complete: 7,1 FF () 18446744073709551615 + 0 none,0,0 [0]
     ksoftirqd/0-14      [000] d.s1. 10304.054864: block_rq_complete: 7,1 WSM () 229396 + 0 be,0,3 [0]
           mount-22769   [001] ..... 10304.055983: block_bio_queue: 7,1 WFS 2 + 2 [mount]
           mount-22769   [001] ..... 10304.056010: block_rq_issue: 7,1 WFS 1024 () 2 + 2 be,0,4 [mount]
     ksoftirqd/1-22      [001] ..s.. 10304.056642: block_rq_complete: 7,1 WFS () 2 + 2 be,0,4 [0]
",
            false,
        );
        assert_eq!(t.flushes.requests, 3);
        assert_eq!(t.flushes.latency.unwrap().count, 3);
        assert_eq!(t.flush_sequence_completions, 2);
        assert_eq!(t.unmatched_completions, 0);
        assert_eq!(t.fua.requests, 1);
        assert_eq!(t.fua.bytes, 1024);
        assert_eq!(t.writes.requests, 2);
        assert_eq!(t.meta, 1);
        assert_eq!(t.queue_time.unwrap().count, 1);
        assert_eq!(t.queue_time.unwrap().max_ns, 1000);
        let bios = t.bios.unwrap();
        assert_eq!((bios.bios, bios.preflush, bios.fua), (3, 2, 2));
        assert_eq!(t.intervals.iter().map(|i| i.flushes).sum::<u64>(), 3);
        assert_eq!(t.in_flight_at_end, 0);
        assert!(t.records.is_empty());
    }

    #[test]
    fn partial_completion_requeue_errors_and_garbage() {
        let t = summarize(
            "\
a-1 [000] ..... 1.000000: block_rq_issue: 8,0 R 8192 () 100 + 16 be,0,4 [a]
a-1 [000] ..... 1.000010: block_rq_issue: 8,0 R 4096 () 100 + 8 be,0,4 [a]
a-1 [000] ..... 1.000020: block_rq_complete: 8,0 R () 100 + 8 be,0,4 [0]
a-1 [000] ..... 1.000030: block_rq_complete: 8,0 R () 108 + 8 be,0,4 [0]
a-1 [000] ..... 1.000040: block_rq_complete: 8,0 R () 100 + 8 be,0,4 [-5]
a-1 [000] ..... 1.000050: block_rq_issue: 8,0 W 4096 () 0 + 8 be,0,4 [a]
a-1 [000] ..... 1.000060: block_rq_requeue: 8,0 W () 0 + 8 be,0,4 [0]
a-1 [000] ..... 1.000070: block_rq_issue: 8,0 W 4096 () 0 + 8 be,0,4 [a]
a-1 [000] ..... 1.000080: block_rq_complete: 8,0 W () 0 + 8 be,0,4 [0]
a-1 [000] ..... 1.000090: block_rq_complete: 8,0 W () 64 + 8 be,0,4 [0]
a-1 [000] ..... 1.000100: block_rq_issue: 8,0 D 1048576 () 4096 + 2048 be,0,4 [a]
a-1 [000] ..... 1.000110: block_rq_issue: 8,0 NS 1048576 () 8192 + 2048 be,0,4 [a]
a-1 [000] ..... 1.000120: block_rq_complete: 8,0 FF () 18446744073709551615 + 0 none,0,0 [0]
CPU:0 [LOST 7 EVENTS]
this is not an event
",
            false,
        );
        assert_eq!(t.reads.requests, 2);
        assert_eq!(t.reads.latency.unwrap().count, 2);
        assert_eq!(t.errors, 1);
        assert_eq!(t.events.requeue, 1);
        assert_eq!(t.writes.requests, 2);
        assert_eq!(t.writes.latency.unwrap().count, 1);
        assert_eq!(t.unmatched_completions, 2);
        assert_eq!(t.discards.requests, 1);
        assert_eq!(t.discards.bytes, 1 << 20);
        assert_eq!(t.other.requests, 1);
        assert_eq!(t.in_flight_at_end, 2);
        assert_eq!(t.lost.in_stream, 7);
        assert_eq!(t.lost.total, 7);
        assert_eq!(t.events.unparsed, 1);
        assert_eq!(t.events.unparsed_examples, ["this is not an event"]);
        assert_eq!(t.max_inflight, 2);
        assert_eq!(t.intervals[0].read_bytes, 24 * 512);
    }

    #[test]
    fn intervals_split_depth_over_time() {
        let mut s = Summarizer::new(dev(), 0, 1000, false);
        let ev = |t: u64, action: Action, sector: u64| {
            let line = match action {
                Action::Issue => format!(
                    "a-1 [000] ..... 0.{:06}: block_rq_issue: 7,1 W 4096 () {sector} + 8 [a]",
                    t / 1000
                ),
                _ => format!(
                    "a-1 [000] ..... 0.{:06}: block_rq_complete: 7,1 W () {sector} + 8 [0]",
                    t / 1000
                ),
            };
            parse_line(&line).unwrap()
        };
        // One request in flight from 1000 to 3000 ns: intervals 1 and 2 fully busy.
        s.push_event(ev(1000, Action::Issue, 0));
        s.push_event(ev(3000, Action::Complete, 0));
        let t = s.finish(
            4000,
            "mono",
            vec![parse_cpu_stats(
                0,
                "overrun: 3\ncommit overrun: 1\ndropped events: 2\n",
            )],
            Vec::new(),
        );
        let means: Vec<f64> = t.intervals.iter().map(|i| i.mean_inflight).collect();
        assert_eq!(means, [0.0, 1.0, 1.0, 0.0]);
        assert_eq!(t.intervals[1].max_inflight, 1);
        assert_eq!(t.intervals[3].write_bytes, 4096);
        assert_eq!(t.lost.total, 6);
        assert!(t.bios.is_none());
    }

    #[test]
    fn extreme_times_and_intervals_do_not_panic() {
        for (start, interval) in [(0, u64::MAX), (u64::MAX - 5, 1), (5, 1), (0, 1)] {
            let mut s = Summarizer::new(dev(), start, interval, false);
            for l in [
                "a-1 [000] ..... 18446744073.709551: block_rq_issue: 7,1 W 4096 () 0 + 8 [a]",
                "a-1 [000] ..... 0.000001: block_rq_issue: 7,1 R 4096 () 0 + 8 [a]",
                "a-1 [000] ..... 0.000002: block_rq_complete: 7,1 W () 0 + 8 [0]",
                "a-1 [000] ..... 18446744073.709551: block_rq_complete: 7,1 R () 0 + 8 [0]",
                "a-1 [000] ..... 0.000003: block_rq_complete: 7,1 FF () 0 + 0 [0]",
            ] {
                s.push_line(l);
            }
            let t = s.finish(0, "mono", Vec::new(), Vec::new());
            assert!(t.intervals.len() as u64 <= MAX_INTERVALS + 1);
            assert!(t.intervals.iter().all(|i| i.mean_inflight.is_finite()));
        }
    }

    #[test]
    fn cpu_stats() {
        let s = parse_cpu_stats(
            3,
            "entries: 70\noverrun: 2075\ncommit overrun: 0\nbytes: 4064\noldest event ts: 10420.161049\nnow ts: 10421.190000\ndropped events: 0\nread events: 0\n",
        );
        assert_eq!(
            s,
            CpuBufferStats {
                cpu: 3,
                overrun: 2075,
                commit_overrun: 0,
                dropped: 0
            }
        );
        assert_eq!(parse_cpu_stats(0, "garbage\n:").lost(), 0);
    }
}
