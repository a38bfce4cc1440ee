//! iolab-micro: micro tests — one access pattern under one sync mode, every record timed
//! (Mobibench's micro tests, done right; docs/micro.md). The kind: `[workload] micro = { … }`
//! in an experiment and `iolab micro` on the command line.

pub mod kind;
