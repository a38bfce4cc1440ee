//! Btrfs: `mkfs.btrfs -f -q`. Its mounts show an anonymous device number in mountinfo; the
//! source names the device.

use std::ffi::OsString;
use std::path::Path;

use super::Filesystem;
use crate::util::os;

pub(super) struct Btrfs;

impl Filesystem for Btrfs {
    fn name(&self) -> &'static str {
        "btrfs"
    }

    fn mkfs_program(&self) -> Option<&'static str> {
        Some("mkfs.btrfs")
    }

    fn package(&self) -> &'static str {
        "btrfs-progs"
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
        // btrfs-progs 6.x: "device is too small to make filesystem, must be at least
        // 114294784" with the default profiles.
        114_294_784
    }
}
