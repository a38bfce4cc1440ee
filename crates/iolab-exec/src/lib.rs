//! iolab-exec: the `exec` workload kind — another benchmark (fio, iperf3, sysbench,
//! UnixBench, bonnie++, iozone, filebench, or any program through the generic adapter) run
//! under iolab's runner, so that repetitions until the CI is tight, the monitors, the checks,
//! the results database, compare and reports serve it as they serve iolab's own kinds.
//!
//! | module | content |
//! |---|---|
//! | [`command`] | `iolab run FILE` for a tool's own files (`job.fio`) |
//! | [`kind`] | `exec = { tool = "…", … }`: the common keys, the adapter's, located errors, the program found or named with how to install it |
//! | [`run`] | one run: inputs in a scratch directory, setup, the server, the timed main command under supervision (timeout, Ctrl-C, its own process group), cleanup, leftovers removed, the output parsed |
//! | `netns` | a network namespace pair for a server that must not share the client's stack |
//! | [`stored`] | the raw output kept with each run, and read back |
//! | [`views`] | the report's three views: claimed, system calls, device |
//! | [`reparse`] | stored runs read again by the current parsers: what changed |
//!
//! How each tool is run and read is its adapter's business (iolab-tools); this crate never
//! names a tool.

pub mod command;
pub mod kind;
mod netns;
pub mod reparse;
pub mod run;
pub mod stored;
pub mod views;

pub use kind::{ExecKind, EXEC, KEY};
pub use netns::{exists as namespace_exists, PREFIX as NAMESPACE_PREFIX};
pub use run::ExecWorkload;

/// What this place gives the rest of iolab (see [`iolab_kind::Plugin`]).
pub static PLUGIN: iolab_kind::Plugin = iolab_kind::Plugin {
    kinds: &[&kind::EXEC],
    commands: &[],
    files: &[&command::ToolFiles],
    sections: &[&views::ThreeViews],
    schemas: &[command::SCHEMA],
};
