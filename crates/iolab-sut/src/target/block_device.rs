//! A block device named by the experiment: formatted only after the safety checks pass.

use std::path::PathBuf;

use super::{Acquire, Acquired};
use crate::error::{Error, Result};
use crate::plan::FsPlan;
use crate::safety;
use crate::session::Tx;

/// A named block device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockDevice {
    /// Its path (symlinks such as /dev/disk/by-id/… are resolved).
    pub path: PathBuf,
    /// Allow formatting a device iolab did not create.
    pub allow_destroy: bool,
    /// Allow formatting over an existing filesystem or partition-table signature.
    pub force: bool,
}

impl Acquire for BlockDevice {
    fn acquire(&self, tx: &mut Tx<'_>, _fs: Option<&FsPlan>) -> Result<Acquired> {
        let path =
            std::fs::canonicalize(&self.path).map_err(|e| Error::io("use", &self.path, e))?;
        let ours = tx.our_images();
        let device = safety::check_block_device(&path, self.allow_destroy, self.force, |d| {
            d.backing.as_ref().is_some_and(|b| ours.contains(b))
        })
        .map_err(|e| match e {
            Error::Refused { reasons, .. } => Error::Refused {
                device: self.path.clone(),
                reasons,
            },
            e => e,
        })?;
        Ok(Acquired::Device {
            device,
            nodiscard: false,
            direct_io: None,
        })
    }
}
