//! IOR's workload with iolab's runner: file per process or one shared file, segments of one
//! block per rank, blocks of transfers, sequential or shuffled; a write phase and a read
//! phase (of another node's data with `reorder`), each started at a barrier and timed as IOR
//! times it; stonewalling and wear-out; IO500's ior-easy and ior-hard as presets
//! (docs/ior.md).
//!
//! The one option table ([`OPTIONS`]) gives `[workload] ior = { … }`'s keys and, through
//! each option's IOR flag, the command line `iolab ior` reads. Under MPI every rank runs its
//! share ([`run::run`]) and rank 0 puts the ranks' records together ([`merge::merge`]): IOR's
//! bandwidth, the all-running window, elbencho's first-done and last-done rates, and the
//! slowest, fastest and mean rank.

pub mod command;
pub mod kind;
pub mod merge;
mod options;
pub mod output;
pub mod run;

pub use options::{
    option, IorOption, IorPlan, IorSpec, IorSpecError, Preset, DEFAULT_BLOCK, DEFAULT_TRANSFER,
    OPTIONS,
};
pub use run::{one_phase, Access, IorError, IorResult, PhaseResult};

/// What this place gives the rest of iolab (see [`iolab_kind::Plugin`]); its one line in the
/// registry is `&iolab_ior::PLUGIN`.
pub static PLUGIN: iolab_kind::Plugin = iolab_kind::Plugin {
    kinds: &[&kind::IOR],
    commands: &[&command::IorCommand],
    files: &[],
    sections: &[],
    schemas: &[output::SCHEMA],
};

#[cfg(test)]
mod ranks_tests;
