//! An existing directory: nothing is created, formatted or mounted.

use std::path::PathBuf;

use super::{Acquire, Acquired};
use crate::blockdev::DevInfo;
use crate::error::{Error, Result};
use crate::plan::FsPlan;
use crate::session::Tx;

/// An existing directory, used as is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Directory {
    /// The directory.
    pub path: PathBuf,
}

impl Acquire for Directory {
    fn acquire(&self, _tx: &mut Tx<'_>, _fs: Option<&FsPlan>) -> Result<Acquired> {
        let meta = std::fs::metadata(&self.path).map_err(|e| Error::io("use", &self.path, e))?;
        if !meta.is_dir() {
            return Err(Error::spec(
                "target.path",
                format!("{} is not a directory", self.path.display()),
            ));
        }
        let mountpoint =
            std::fs::canonicalize(&self.path).map_err(|e| Error::io("resolve", &self.path, e))?;
        Ok(Acquired::Ready {
            device: DevInfo::of_file(&mountpoint),
            mountpoint,
        })
    }
}
