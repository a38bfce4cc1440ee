//! iozone's tests, natively (docs/iozone.md): write/rewrite, read/re-read, random read/write,
//! backward read, record rewrite, stride read, fwrite/fread, random mix and pwrite/pread over
//! one file per thread, single stream or in throughput mode, with the flush (fsync + close)
//! inside the timing or — iozone's default — after it.
//!
//! [`options`] holds the one option table (the `iolab iozone` flags, the `[workload] iozone =
//! { … }` keys and the docs come from it) and the spec → validate → plan step; [`run`] runs
//! a plan with real syscalls; [`matrix`] is auto mode's file-size × record-size matrix;
//! [`kind`] is the `[workload]` kind, [`command`] the `iolab iozone` command, [`output`] its
//! formats and [`report`] its part of the report. The crate never prints: its command writes
//! through the binary's [`iolab_kind::cli::Host`].

pub mod command;
pub mod kind;
pub mod matrix;
pub mod options;
pub mod output;
pub mod report;
pub mod run;

pub use options::{
    Figure, Flush, IozoneOption, IozonePlan, IozoneSpec, IozoneSpecError, Purge, Test, OPTIONS,
};
pub use run::{run_iozone, BetweenPasses, ChildResult, FigureResult, IozoneResult};

/// What this place gives the rest of iolab (see [`iolab_kind::Plugin`]); its one line in the
/// registry is `&iolab_iozone::PLUGIN`.
pub static PLUGIN: iolab_kind::Plugin = iolab_kind::Plugin {
    kinds: &[&kind::IOZONE],
    commands: &[&command::IozoneCommand],
    files: &[],
    sections: &[&report::IozonePassesSection, &report::IozoneSection],
    schemas: &[output::SCHEMA],
};
