//! iolab-monitor: what the machine did while a workload ran.
//!
//! One small pure parser per /proc or /sys file (`parse(&str)`), tested on captured text, plus
//! a thin `read()` that reads the real file; derived metrics (CPU percentages, `iostat -x`
//! columns) next to the parser whose counters they use. Definitions follow
//! docs/metrics.md: disk metrics equal sysstat's `iostat -x`.
//!
//! | module | source |
//! |---|---|
//! | [`procstat`] | `/proc/stat`: CPU times, context switches, forks |
//! | [`meminfo`] | `/proc/meminfo`: memory, page cache, dirty data |
//! | [`vmstat`] | `/proc/vmstat`: faults, paging, swapping |
//! | [`diskstats`] | `/proc/diskstats`: block I/O counters and `iostat -x` columns |
//! | [`sysfs`] | `/sys/class/block`: device stacking (slaves, loop backing files) |
//! | [`pressure`] | `/proc/pressure/*`: pressure stall information |
//! | [`process`] | `/proc/[pid]/status`, `/proc/[pid]/stat`, `getrusage(2)` |
//! | [`environment`] | the machine and the storage under a path, as JSON for every run |
//! | [`perf`] | `perf_event_open(2)` software (and, where present, hardware) counters |
//! | [`blocktrace`] | tracefs block events: per-request counts, sizes, latency (blktrace without debugfs) |
//! | [`sampler`] | all of the above on a thread at a fixed interval: time series and run summaries |
//!
//! This crate never prints; callers decide what the user sees.

pub mod blocktrace;
pub mod diskstats;
pub mod environment;
pub mod error;
pub mod meminfo;
pub mod perf;
pub mod pressure;
pub mod process;
pub mod procstat;
pub mod sampler;
pub mod sysfs;
pub mod vmstat;

pub use blocktrace::{BlockTrace, BlockTracer, TraceDevice, TraceError, TraceOptions};
pub use environment::{BlockEnv, Environment, HostEnv, StorageEnv};
pub use error::{Error, ParseError, ParseErrorKind};

#[cfg(test)]
mod testutil;
