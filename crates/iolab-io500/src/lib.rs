//! IO500 with iolab's runner: the ior and mdtest kinds' IO500 presets (ior-easy, ior-hard,
//! mdtest-easy, mdtest-hard) and a find, as IO500's twelve scored phases in its order, with
//! its rules — stonewalled writes with wear-out, reads of another node's data, caches
//! dropped between phases when the run drops them — and its score: the geometric means of
//! the bandwidth phases (GiB/s) and of the metadata phases (kIOPS), and the square root of
//! their product (docs/io500.md).
//!
//! The one option table ([`OPTIONS`]) gives `[workload] io500 = { … }`'s keys and `iolab
//! io500`'s flags. Under MPI every rank runs its share ([`run::run`]) and rank 0 scores the
//! ranks' records together ([`merge::merge`]).

pub mod command;
pub mod kind;
pub mod merge;
mod options;
pub mod output;
pub mod phases;
pub mod run;

pub use options::{
    option, Io500Option, Io500Plan, Io500Spec, Io500SpecError, IO500_STONEWALL, OPTIONS,
};
pub use run::{Io500Result, PhaseOutcome};

/// What this place gives the rest of iolab (see [`iolab_kind::Plugin`]); its one line in the
/// registry is `&iolab_io500::PLUGIN`.
pub static PLUGIN: iolab_kind::Plugin = iolab_kind::Plugin {
    kinds: &[&kind::IO500],
    commands: &[&command::Io500Command],
    files: &[],
    sections: &[],
    schemas: &[output::SCHEMA],
};

#[cfg(test)]
mod tests;
