//! Targets: where a run's files live. One file per kind behind one small trait (`Acquire`):
//!
//! | kind | what iolab does | destructive? |
//! |---|---|---|
//! | [`Directory`] | uses an existing directory as is | no |
//! | [`Tmpfs`] | mounts a fresh tmpfs of the given size | no (its own memory) |
//! | [`LoopImage`] | creates a sparse image, attaches it (direct I/O), mkfs, mounts | only its own image |
//! | [`BlockDevice`] | mkfs and mounts a named device, after the safety checks | yes: needs `allow_destroy` |
//!
//! A loop image is created afresh for every run and deleted after it (rather than kept and
//! re-formatted): each run starts from a new sparse file, so nothing of an earlier run can
//! leak into it (not even blocks the host filesystem still holds), and a crash leaves only
//! things recovery removes entirely.

mod block_device;
mod directory;
mod loop_image;
mod tmpfs;

pub use block_device::BlockDevice;
pub use directory::Directory;
pub use loop_image::LoopImage;
pub use tmpfs::{Tmpfs, TmpfsSize};

use std::path::PathBuf;

use crate::blockdev::DevInfo;
use crate::error::Result;
use crate::plan::FsPlan;
use crate::session::Tx;

/// A validated target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// An existing directory.
    Directory(Directory),
    /// A fresh tmpfs.
    Tmpfs(Tmpfs),
    /// A loop device over an image iolab creates.
    LoopImage(LoopImage),
    /// A named block device.
    BlockDevice(BlockDevice),
}

impl Target {
    /// Whether the target needs a filesystem to be made on it.
    pub fn needs_mkfs(&self) -> bool {
        matches!(self, Target::LoopImage(_) | Target::BlockDevice(_))
    }

    pub(crate) fn as_acquire(&self) -> &dyn Acquire {
        match self {
            Target::Directory(t) => t,
            Target::Tmpfs(t) => t,
            Target::LoopImage(t) => t,
            Target::BlockDevice(t) => t,
        }
    }
}

/// What a target provides for a run.
pub(crate) enum Acquired {
    /// A directory ready for the workload (a directory target, or a mounted tmpfs).
    Ready {
        mountpoint: PathBuf,
        device: Option<DevInfo>,
    },
    /// A block device to format and mount.
    Device {
        device: DevInfo,
        /// Ask mkfs not to discard (keeps a preallocated image allocated).
        nodiscard: bool,
        /// For loop devices: whether direct I/O is on.
        direct_io: Option<bool>,
    },
}

/// Make a target ready, recording every change in the session's journal before making it.
pub(crate) trait Acquire {
    fn acquire(&self, tx: &mut Tx<'_>, fs: Option<&FsPlan>) -> Result<Acquired>;
}
