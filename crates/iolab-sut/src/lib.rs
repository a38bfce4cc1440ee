//! iolab-sut: the system under test — targets, mkfs/mount, kernel tunables, cache control,
//! a memory cgroup, safety checks, and a journal that puts everything back.
//!
//! The flow is parse → validate → act: a [`SutSpec`] (serde, from the experiment file) is
//! validated into a [`SutPlan`] without touching the machine; a [`Sut`] session then
//! [`prepare`](Sut::prepare)s each run and [`teardown`](Sut::teardown)s it.
//!
//! | module | what |
//! |---|---|
//! | [`spec`], [`plan`] | what the experiment asks for; the validated plan |
//! | [`target`] | directory, tmpfs, loop image, block device (one file each) |
//! | [`fs`] | ext4, xfs, btrfs, f2fs, tmpfs (one file each): mkfs, mount options, availability |
//! | [`tunable`] | kernel tunables by name (`vm.dirty_ratio`, `queue/scheduler`, paths) |
//! | [`cache`], [`residency`] | drop caches and check that the run's own files left the page cache (`cachestat(2)`, `mincore(2)`) |
//! | [`cgroup`] | a v1 memory cgroup capping the engine's page cache |
//! | [`throttle`] | a v1 blkio cgroup slowing the origin down like a disk (what it does and does not throttle) |
//! | [`container`] | a run in a container: cgroups with limits (v1, or v2 where enabled), new namespaces, the program PID 1 |
//! | [`stack`] | dm-cache and bcache stacked on the origin: specification, kernel detection |
//! | [`safety`] | refusing mounted, root, busy, foreign or signed devices |
//! | [`journal`], [`recover()`] | every change written down before it is made; undoing them |
//! | [`session`] | [`Sut`]: prepare/teardown, teardown on drop and from a signal thread |
//! | [`workdir`] | directories a workload needs that do not exist: made, journalled, removed after the run |
//!
//! Safety rules: iolab formats only loop images it created, or a device the experiment
//! names with `allow_destroy = true`; it refuses a device that is mounted, holds `/`, is in
//! use, or carries a signature (unless `force = true`); it undoes only what its journal
//! lists, and each undo checks that the entry names something iolab creates (`iolab-…`; a
//! workload's directory by its birth time, see [`workdir`]).
//!
//! f2fs is supported where the kernel has it; [`fs::availability`] says clearly when it does
//! not (e.g. a kernel built without CONFIG_F2FS_FS and no module loader). So do dm-cache and
//! bcache ([`stack::availability`]).
//!
//! This crate never prints; callers decide what the user sees.

pub mod blockdev;
pub mod cache;
pub mod cgroup;
pub mod container;
pub mod env;
pub mod error;
pub mod fs;
pub mod holders;
pub mod journal;
mod loopdev;
pub mod machine_lock;
pub mod mount;
pub mod plan;
mod recover;
pub mod residency;
pub mod safety;
pub mod session;
pub mod size;
pub mod spec;
pub mod stack;
pub mod target;
pub mod throttle;
pub mod tunable;
mod undo;
mod util;
pub mod workdir;

pub use blockdev::DevInfo;
pub use cache::{drop_caches, DropReport};
pub use cgroup::CacheCgroup;
pub use container::{Container, ContainerSpec, ContainerStats, Problem};
pub use env::{EnvKind, EnvPlan, EnvironmentSpec};
pub use error::{At, Error, MountFailure, Refusal, Result, SpecError};
pub use fs::{availability, Availability, FsKind};
pub use iolab_sys::DevT;
pub use journal::{Entry, Journal, Record, DEFAULT_JOURNAL};
pub use plan::{FsPlan, SutPlan, TunableSetting};
pub use recover::{recover, recover_path, RecoverReport, UndoAction, UndoReport};
pub use residency::Residency;
pub use session::{HandedOver, Prepared, Remounted, Sut, SutHandle, SutOptions};
pub use spec::{FsSpec, SutSpec, TargetSpec, ThrottleSpec};
pub use stack::{CacheSpec, StackedCache};
pub use target::Target;
pub use throttle::{Charged, Throttle, ThrottleCgroup};
pub use tunable::{AppliedTunable, TunableName};
pub use undo::Outcome;
pub use util::NAME_PREFIX;
pub use workdir::WorkDir;
