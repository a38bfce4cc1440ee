//! iolab-monitor: what the machine did while a workload ran.
//!
//! One small pure parser per /proc file the samplers alone read (`parse(&str)`), tested on
//! captured text, plus a thin `read()` that reads the real file; derived metrics (CPU
//! percentages, `iostat -x` columns) next to the parser whose counters they use. The files
//! the system under test reads too (`/proc/meminfo`, mountinfo, `/sys/class/block`) are
//! parsed in `iolab-sys`, and so are the error types. Definitions follow
//! docs/metrics.md: disk metrics equal sysstat's `iostat -x`.
//!
//! | module | source |
//! |---|---|
//! | [`procstat`] | `/proc/stat`: CPU times, context switches, forks |
//! | [`vmstat`] | `/proc/vmstat`: faults, paging, swapping |
//! | [`diskstats`] | `/proc/diskstats`: block I/O counters and `iostat -x` columns |
//! | [`pressure`] | `/proc/pressure/*`: pressure stall information |
//! | [`process`] | `/proc/[pid]/status`, `/proc/[pid]/stat`, `getrusage(2)` |
//! | [`environment`] | the machine and the storage under a path, as JSON for every run |
//! | [`perf`] | `perf_event_open(2)` software (and, where present, hardware) counters |
//! | [`sampler`] | all of the above on a thread at a fixed interval: time series and run summaries |
//!
//! This crate never prints; callers decide what the user sees.

pub mod diskstats;
pub mod environment;
pub mod perf;
pub mod pressure;
pub mod process;
pub mod procstat;
pub mod sampler;
pub mod vmstat;

pub use environment::{BlockEnv, Environment, HostEnv, StorageEnv};
pub use iolab_sys::{Error, ParseError, ParseErrorKind};
