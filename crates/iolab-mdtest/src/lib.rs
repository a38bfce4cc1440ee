//! mdtest's metadata phases with iolab: N files (or directories) per rank created, stat()ed,
//! read and removed, in mdtest's directory layout and with its names, each phase started at
//! a barrier of all ranks (one process without MPI) and timed from its release; stonewalling
//! as mdtest does it; IO500's mdtest-easy and mdtest-hard as presets.
//!
//! The one option table ([`OPTIONS`]) gives the keys of `[workload] mdtest = { … }`; `iolab
//! mdtest` takes mdtest's own flags ([`command`]). Every rank records its phases (items, rate,
//! start and end from the barrier, a 10 ms progress series); [`merge`] makes the honest
//! aggregates of all ranks (docs/mdtest.md says what each means).

pub mod command;
pub mod kind;
pub mod merge;
mod options;
pub mod output;
mod run;

pub use kind::{MdtestWorkload, METRICS};
pub use options::{
    option, MdtestOption, MdtestPlan, MdtestSpec, MdtestSpecError, Preset, HARD_BYTES, OPTIONS,
    PHASE_NAMES,
};
pub use run::{
    run_mdtest, Layout, MdtestError, MdtestResult, Phase, PhaseResult, BUCKET_NS, TEST_DIR,
};

/// What this place gives the rest of iolab; its line in the registry is
/// `&iolab_mdtest::PLUGIN`.
pub static PLUGIN: iolab_kind::Plugin = iolab_kind::Plugin {
    kinds: &[&kind::MDTEST],
    commands: &[&command::MdtestCommand],
    files: &[],
    sections: &[],
    schemas: &[output::SCHEMA],
};

#[cfg(test)]
mod tests;
