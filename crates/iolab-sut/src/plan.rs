//! The validated plan for the SUT of one configuration (from [`crate::SutSpec::validate`]).

use crate::fs::FsKind;
use crate::mount::MountOptions;
use crate::target::Target;
use crate::tunable::TunableName;

/// Everything [`crate::Sut::prepare`] needs, already checked for consistency.
#[derive(Debug, Clone, PartialEq, Eq)]
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
