//! iolab's engine: worker threads issuing real syscalls through pluggable backends, timing
//! every record on the monotonic clock into HDR histograms and per-interval counters.
//!
//! The engine runs validated plans from `iolab-workload` and never prints; progress and
//! start/stop instants reach the caller through [`Observer`].

pub mod backend;
pub mod buffer;
pub mod clock;
pub mod error;
pub mod fdtable;
pub mod files;
pub mod fileset;
pub mod gate;
pub mod nocancel;
pub mod order;
pub use iolab_util::rng;
pub mod stats;
pub mod usage;
pub mod workload;

pub use error::EngineError;
