//! tmpfs: no mkfs; a fresh mount is a fresh filesystem. `size=` is required by the target
//! (an unbounded tmpfs can take half of RAM), given as bytes or a percentage of RAM.

use std::ffi::OsString;
use std::path::Path;

use super::Filesystem;
use crate::mount::MountOptions;

pub(super) struct Tmpfs;

impl Filesystem for Tmpfs {
    fn name(&self) -> &'static str {
        "tmpfs"
    }

    fn mkfs_program(&self) -> Option<&'static str> {
        None
    }

    fn package(&self) -> &'static str {
        "(none: tmpfs is part of the kernel)"
    }

    fn mkfs_args(&self, _device: &Path, _user: &[String], _nodiscard: bool) -> Vec<OsString> {
        Vec::new()
    }

    fn check_mount_options(&self, opts: &MountOptions) -> Result<(), String> {
        if let Some(size) = opts.get("size") {
            let ok = match size.strip_suffix('%') {
                Some(p) => p.parse::<u32>().is_ok_and(|p| (1..=100).contains(&p)),
                None => crate::size::parse_size(size).is_ok(),
            };
            if !ok {
                return Err(format!(
                    "tmpfs size={size} is neither a size (\"1G\") nor a percentage of RAM (\"10%\")"
                ));
            }
        }
        Ok(())
    }
}
