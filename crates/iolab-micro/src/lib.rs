//! iolab-micro: micro tests — one access pattern under one sync mode, every record timed
//! (Mobibench's micro tests, done right; docs/micro.md). The kind: `[workload] micro = { … }`
//! in an experiment and `iolab micro` on the command line.
//!
//! The one option table ([`OPTIONS`]) gives `iolab micro`'s flags and the keys of
//! `[workload] micro = { … }`; [`MicroSpec::validate`] turns a spec into the [`MicroPlan`]
//! that [`run_micro_cancellable`] runs on the engine's backends. Libraries never print:
//! progress goes through [`iolab_kind::RunHooks`].

pub mod command;
pub mod kind;
mod options;
pub mod output;
mod run;
mod spec;

pub use options::{option, MicroOption, OPTIONS};
pub use run::{data_file, run_micro, run_micro_cancellable, MicroResult, ThreadSummary, INTERVAL};
pub use spec::{
    default_engine, Access, DataPattern, MicroPlan, MicroSpec, MicroSpecError, SyncMode,
};

/// What this place gives the rest of iolab (see [`iolab_kind::Plugin`]); its one line in the
/// registry is `&iolab_micro::PLUGIN`.
pub static PLUGIN: iolab_kind::Plugin = iolab_kind::Plugin {
    kinds: &[&kind::MICRO],
    commands: &[&command::MicroCommand],
    files: &[],
    sections: &[],
    schemas: &[output::SCHEMA],
};
