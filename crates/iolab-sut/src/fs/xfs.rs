//! XFS: `mkfs.xfs -f -q`. xfsprogs 5.19+ refuses filesystems under 300 MiB.

use std::ffi::OsString;
use std::path::Path;

use super::Filesystem;
use crate::util::os;

pub(super) struct Xfs;

impl Filesystem for Xfs {
    fn name(&self) -> &'static str {
        "xfs"
    }

    fn mkfs_program(&self) -> Option<&'static str> {
        Some("mkfs.xfs")
    }

    fn package(&self) -> &'static str {
        "xfsprogs"
    }

    fn mkfs_args(&self, device: &Path, user: &[String], nodiscard: bool) -> Vec<OsString> {
        let mut args = vec![os("-f"), os("-q")];
        if nodiscard {
            args.push(os("-K"));
        }
        args.extend(user.iter().map(os));
        args.push(os(device));
        args
    }

    fn min_size(&self) -> u64 {
        300 << 20
    }
}
