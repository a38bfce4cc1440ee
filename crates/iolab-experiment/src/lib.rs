//! iolab-experiment: experiment files and their execution.
//!
//! parse → validate → run: an experiment file (TOML) is read and checked completely by
//! [`load`] into an [`ExperimentPlan`] — every configuration of the matrix resolved, every
//! error located at file:line:column — before anything on the machine is touched; the
//! [`runner`] then executes the plan against the system under test and stores every run.
//!
//! This crate never prints; the binary decides what the user sees.

mod error;
mod factors;
mod load;
pub mod monitor;
pub mod plan;
mod read;
pub mod record;
pub mod runner;
mod subst;
mod sut;
mod tree;
mod workload;

pub use error::{ExperimentError, ExperimentErrors};
pub use load::{load, load_str};

pub use plan::{
    ConfigPlan, ExperimentPlan, Order, Procedure, Repetitions, WmlPlan, WorkloadPlan,
    DEFAULT_METRIC, METRICS,
};
