//! F2FS: `mkfs.f2fs -f -q`, where the kernel has it. Many distribution and VM kernels are
//! built without CONFIG_F2FS_FS; [`super::availability`] then says so before anything is
//! changed.

use std::ffi::OsString;
use std::path::Path;

use super::Filesystem;
use crate::util::os;

pub(super) struct F2fs;

impl Filesystem for F2fs {
    fn name(&self) -> &'static str {
        "f2fs"
    }

    fn mkfs_program(&self) -> Option<&'static str> {
        Some("mkfs.f2fs")
    }

    fn package(&self) -> &'static str {
        "f2fs-tools"
    }

    fn mkfs_args(&self, device: &Path, user: &[String], nodiscard: bool) -> Vec<OsString> {
        let mut args = vec![os("-f"), os("-q")];
        if nodiscard {
            args.extend([os("-t"), os("0")]);
        }
        args.extend(user.iter().map(os));
        args.push(os(device));
        args
    }
}
