//! The validated plan for the SUT of one configuration (from [`crate::SutSpec::validate`]).

use crate::fs::FsKind;
use crate::mount::MountOptions;
use crate::target::Target;
use crate::tunable::TunableName;

/// Everything [`crate::Sut::prepare`] needs, already checked for consistency.
#[derive(Debug, Clone, PartialEq)]
pub struct SutPlan {
    /// Where the files live.
    pub target: Target,
    /// The filesystem to make (`Some` exactly for loop images and block devices, or tmpfs
    /// mount options for a tmpfs target).
    pub fs: Option<FsPlan>,
    /// Tunables, in name order.
    pub tunables: Vec<TunableSetting>,
    /// Memory-cgroup limit for the engine, bytes.
    pub cache_limit: Option<u64>,
    /// blkio throttling of the run's device for the engine's threads.
    pub throttle: Option<crate::throttle::Throttle>,
    /// A block cache stacked on the origin.
    pub cache: Option<crate::stack::StackedCache>,
    /// Where the workload runs (host, container, VM) and on which CPUs.
    pub environment: crate::env::EnvPlan,
    /// The run executes in a container with these limits (`None`: on the host).
    pub container: Option<crate::container::ContainerSpec>,
}

impl SutPlan {
    /// Whether preparing it changes anything on the machine (mounts, loop devices, images,
    /// tunables, cgroups, a container): everything but an existing directory used as it is. Plans that
    /// change nothing run in a [`crate::Sut::in_place`] session.
    pub fn changes_machine(&self) -> bool {
        !matches!(self.target, Target::Directory(_))
            || self.fs.is_some()
            || !self.tunables.is_empty()
            || self.cache_limit.is_some()
            || self.throttle.is_some()
            || self.cache.is_some()
            || !self.environment.is_host()
    }
}

/// A filesystem to make and mount.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FsPlan {
    /// Which.
    pub kind: FsKind,
    /// Extra mkfs arguments (before the device).
    pub mkfs_options: Vec<String>,
    /// Mount options.
    pub mount: MountOptions,
}

/// One tunable to set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TunableSetting {
    /// Its name.
    pub name: TunableName,
    /// The value to write.
    pub value: String,
}
