//! iolab-blocktrace: block-layer tracing through tracefs events — blktrace without debugfs.
//! Runs use it (`--trace-blocks`) and so does `iolab trace`, which needs none of the
//! samplers.
//!
//! blktrace needs debugfs, which kernel lockdown closes; the block layer's trace events
//! (`events/block/block_rq_issue`, `block_rq_complete`, ...) in tracefs record the same
//! actions. [`BlockTracer::start`] creates a private tracefs instance
//! (`/sys/kernel/tracing/instances/iolab-<pid>-<n>`, its own ring buffer, so other tracing
//! is not disturbed), sets its clock to `mono` (`CLOCK_MONOTONIC`, the clock of
//! `std::time::Instant`), enables the events with a filter on the device, and reads the
//! instance's `trace_pipe` text on a background thread into a [`Summarizer`].
//! [`BlockTracer::stop`] drains the pipe, reads the per-CPU buffer statistics (events lost
//! when the reader fell behind are reported, never silently dropped), removes the instance
//! and returns a [`BlockTrace`]. The instance is also removed when a tracer is dropped.
//!
//! | module | content |
//! |---|---|
//! | [`event`] | one `trace_pipe` line → [`Event`] ([`parse_line`]); blkparse-style output ([`format_blkparse`]) |
//! | [`rwbs`] | the `rwbs` field (`WS`, `FF`, `WFS`, `FWFSM`, `D`, ...) → [`Rwbs`] |
//! | [`summary`] | matching issue → completion; counts, sizes, sequentiality, latency, depth → [`BlockTrace`] |
//! | [`device`] | `/dev/x`, `x`, `maj:min`, or a path → [`TraceDevice`], and its event filters |
//! | `tracefs` | the instance directory and its files |
//! | `save` | the request-level trace in iolab's trace format ([`SavedTrace`], [`TraceOptions::save`]) |
//! | `tracer` | [`BlockTracer`], [`TraceOptions`] |
//!
//! Facts this relies on (checked on Linux 6.18):
//! - Block trace events encode `dev` as the kernel's `MKDEV`: `major << 20 | minor`; the
//!   filter `dev == 7340033` selects 7:1.
//! - Request events carry the whole disk's number; `block_bio_queue` the partition's.
//! - Flush requests are issued with `rwbs` `FF` at sector 0 and complete at sector
//!   `u64::MAX` (`(sector_t)-1`), so they are matched in order rather than by sector.
//! - The text format prints microseconds, whatever the clock.
//!
//! This crate never prints.

pub mod device;
pub mod error;
pub mod event;
pub mod rwbs;
mod save;
pub mod summary;
mod tracefs;
mod tracer;

pub use device::{SectorRange, TraceDevice};
pub use error::TraceError;
pub use event::{format_blkparse, parse_line, parse_lost_line, Action, Event, LostLine};
pub use rwbs::{Op, Rwbs};
pub use save::SavedTrace;
pub use summary::{
    parse_cpu_stats, BioStats, BlockTrace, Bucket, CpuBufferStats, DirStats, EventCounts,
    IntervalStats, LatencySummary, LostEvents, OpStats, Pow2Histogram, Summarizer,
};
pub use tracefs::{remove_stale_instances, tracefs_root, INSTANCE_PREFIX, TRACEFS_PATHS};
pub use tracer::{monotonic_ns, BlockTracer, TraceOptions, TRACE_CLOCK};
