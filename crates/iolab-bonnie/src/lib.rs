//! bonnie++'s phases with iolab's engine: per-char and block sequential output, rewrite,
//! per-char and block sequential input, random seeks by concurrent seekers, and sequential
//! and random file creation, stat and deletion — the same system calls in the same order as
//! bonnie++ 2.00 (docs/bonnie.md has the phase → syscalls table).
//!
//! The one option table ([`OPTIONS`]) gives `iolab bonnie`'s flags and the keys of
//! `[workload] bonnie = { … }`; [`BonnieSpec::validate`] turns a spec into the
//! [`BonniePlan`] that [`run_bonnie_cancellable`] runs. Unlike bonnie++, a phase too short
//! to time with a 1 µs clock is not hidden behind `+++++`: every phase is timed on iolab's
//! clock and says how precise its figure is ([`PhaseResult::rel_error`]). Libraries never
//! print: progress goes through the engine's [`iolab_kind::RunHooks`].

pub mod command;
mod error;
mod files;
mod io;
pub mod kind;
mod options;
pub mod output;
mod phase;
pub mod report;
mod run;

pub use error::BonnieError;
pub use options::{
    option, BonnieOption, BonniePlan, BonnieSpec, BonnieSpecError, Phases, DEFAULT_CHUNK,
    DEFAULT_SEEKERS, DEFAULT_SEEKS, MAX_FILES_K, OPTIONS,
};
pub use phase::{Phase, RateUnit};
pub use run::{
    data_file, file_dir, run_bonnie, run_bonnie_cancellable, BonnieResult, PhaseFigures,
    PhaseResult, MIN_TIME,
};

/// What this place gives the rest of iolab (see [`iolab_kind::Plugin`]); its one line in the
/// registry is `&iolab_bonnie::PLUGIN`.
pub static PLUGIN: iolab_kind::Plugin = iolab_kind::Plugin {
    kinds: &[&kind::BONNIE],
    commands: &[&command::BonnieCommand],
    files: &[],
    sections: &[&report::BonnieSection],
    schemas: &[output::SCHEMA],
};
