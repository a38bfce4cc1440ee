//! iolab-kind: the seam between a workload kind and the rest of iolab.
//!
//! A kind (a workload language, a classic benchmark done natively, a simulation, …) lives in
//! one place of its own — a crate — and meets the rest of
//! iolab only here:
//!
//! - [`input`]: reading its `[workload]` keys from an experiment file, every mistake located
//!   at file:line:column;
//! - [`kind`]: the traits it implements — [`Kind`] (its keys, metrics, how it resolves a
//!   configuration) and [`Workload`] (what a validated workload means to do, how it runs once
//!   and what typed result it gives back);
//! - [`run`]: what a run gets ([`RunCtx`]) and the hooks through which it tells the runner
//!   where its timed region is ([`RunHooks`]);
//! - [`record`]: how it writes its measurements (the common metrics, its own);
//! - [`intent`]: what it tells the checks;
//! - [`command`]: the runs its command asks for ([`CommandPlan`]) and usage errors;
//! - [`ranks`]: the processes a run's workload is shared with (MPI ranks, or this one);
//! - [`table`]: the generic kind of a spec filled from one option table;
//! - [`cli`]: its commands on the command line, and what they ask of the binary ([`cli::Host`]);
//! - [`output`]: its results in its formats, and the one JSON stamp.
//!
//! The plan, the runner, the kinds and the engine depend on this crate; it depends on none of
//! them.

pub mod cli;
pub mod command;
pub mod input;
pub mod intent;
pub mod kind;
pub mod output;
pub mod plugin;
pub mod ranks;
pub mod record;
pub mod run;
pub mod table;

/// The seed of an experiment that names none, and of a command without `--seed`.
pub const DEFAULT_SEED: u64 = 1;

pub use command::{CommandConfig, CommandPlan, Origin, Runs, UsageError};
pub use intent::Intent;
pub use kind::{erase, DynWorkload, Kind, LoadContext, Outputs, Workload};
pub use plugin::Plugin;
pub use ranks::{Group, Ranks, Solo};
pub use run::{Event, NoSut, Remount, RunCtx, RunFailure, RunHooks, SutControl};
