//! iolab-micro: micro tests — one access pattern under one sync mode, every record timed
//! (Mobibench's micro tests, done right; docs/micro.md). The kind: `[workload] micro = { … }`
//! in an experiment and `iolab micro` on the command line.

pub mod kind;

/// What this place gives the rest of iolab (see [`iolab_kind::Plugin`]); its one line in the
/// registry is `&iolab_micro::PLUGIN`.
pub static PLUGIN: iolab_kind::Plugin = iolab_kind::Plugin {
    kinds: &[&kind::MICRO],
    commands: &[],
    files: &[],
    sections: &[],
    schemas: &[],
};
