//! One small pure parser per /proc file this crate reads, each with a thin `read()`.

pub mod meminfo;
pub mod mountinfo;
pub mod self_cgroup;
pub mod swaps;
