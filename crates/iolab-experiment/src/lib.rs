//! iolab-experiment: experiments — reading them into plans, the workload kinds, and the
//! runner every run goes through.
//!
//! The folders are the stages:
//!
//! - [`plan`]: an experiment file (TOML) is read and checked completely by [`load`] into an
//!   [`ExperimentPlan`] — every configuration of the matrix resolved, every error located at
//!   file:line:column — before anything on the machine is touched; [`plan::single`] makes the
//!   one-run plan of a kind's command (`iolab KIND …`, `iolab run FILE.f`). Pure: files are
//!   read, nothing is changed.
//! - [`kind`]: the workload kinds (each in its own crate, from the registry), behind one
//!   trait: their `[workload]` keys, their command-line mapping, their validated plan, how
//!   they run on the engine, the metrics they record.
//! - [`run`]: the runner executes any plan against the system under test — prepare, drop
//!   caches, monitor, run the kind, check, store every run, decide with the stopping rule.
//!
//! One crate, not three: a kind reads its keys with the plan's located reader and runs with
//! the runner's seam, so plan, kind and run would depend on each other in a cycle if split.
//!
//! This crate never prints; the binary decides what the user sees.

pub mod kind;
pub mod plan;
pub mod run;

pub use plan::error::{ExperimentError, ExperimentErrors};
pub use plan::load::{load, load_str, stage};
pub use plan::{
    ConfigPlan, ExperimentPlan, Order, Origin, Procedure, Repetitions, Stage, UsageError,
    DEFAULT_METRIC, DEFAULT_SEED,
};
