//! A fresh tmpfs of a given size on an iolab mount point (source name `iolab-…`).

use std::fmt;

use super::{Acquire, Acquired};
use crate::error::Result;
use crate::plan::FsPlan;
use crate::session::Tx;
use crate::util;

/// tmpfs's `size=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TmpfsSize {
    /// Bytes.
    Bytes(u64),
    /// Percent of RAM (1–100).
    PercentOfRam(u8),
}

impl fmt::Display for TmpfsSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TmpfsSize::Bytes(b) => write!(f, "{b}"),
            TmpfsSize::PercentOfRam(p) => write!(f, "{p}%"),
        }
    }
}

/// A tmpfs mounted for the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tmpfs {
    /// Its size limit.
    pub size: TmpfsSize,
}

impl Acquire for Tmpfs {
    fn acquire(&self, tx: &mut Tx<'_>, fs: Option<&FsPlan>) -> Result<Acquired> {
        let opts = fs
            .map(|f| f.mount.clone())
            .unwrap_or_default()
            .with_default("size", &self.size.to_string());
        let mountpoint = tx.mount_fresh(&util::unique_name(), "tmpfs", &opts)?;
        Ok(Acquired::Ready {
            mountpoint,
            device: None,
        })
    }
}
