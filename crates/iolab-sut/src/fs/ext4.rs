//! ext4: `mkfs.ext4 -F -q`; `data=journal|ordered|writeback` checked at mount.
//!
//! The journalling mode can only be chosen when mounting: a remount with another `data=`
//! fails (fs/ext4/super.c: "Cannot change data mode on remount"), which is why every run
//! gets a fresh mount.

use std::ffi::OsString;
use std::path::Path;

use super::Filesystem;
use crate::mount::MountOptions;
use crate::util::os;

pub(super) struct Ext4;

impl Filesystem for Ext4 {
    fn name(&self) -> &'static str {
        "ext4"
    }

    fn mkfs_program(&self) -> Option<&'static str> {
        Some("mkfs.ext4")
    }

    fn package(&self) -> &'static str {
        "e2fsprogs"
    }

    fn mkfs_args(&self, device: &Path, user: &[String], nodiscard: bool) -> Vec<OsString> {
        let mut args = vec![os("-F"), os("-q")];
        let mut user = user.to_vec();
        if nodiscard {
            // mke2fs keeps only the last -E, so nodiscard joins the user's -E list.
            match user.iter().rposition(|a| a == "-E") {
                Some(i) if i + 1 < user.len() => user[i + 1].push_str(",nodiscard"),
                _ => user.extend(["-E".to_string(), "nodiscard".to_string()]),
            }
        }
        args.extend(user.iter().map(os));
        args.push(os(device));
        args
    }

    fn check_mount_options(&self, opts: &MountOptions) -> Result<(), String> {
        match opts.get("data") {
            None | Some("journal" | "ordered" | "writeback") => Ok(()),
            Some(other) => Err(format!(
                "ext4 data={other} is not a journalling mode; use data=journal, data=ordered \
                 (the default) or data=writeback"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_modes() {
        for ok in ["", "data=journal", "noatime,data=writeback", "data=ordered"] {
            assert!(Ext4
                .check_mount_options(&MountOptions::parse(ok).unwrap())
                .is_ok());
        }
        let e = Ext4
            .check_mount_options(&MountOptions::parse("data=journaled").unwrap())
            .unwrap_err();
        assert!(e.contains("data=writeback"), "{e}");
    }

    #[test]
    fn nodiscard_merges_into_the_users_extended_options() {
        let a = Ext4.mkfs_args(
            Path::new("/dev/loop1"),
            &["-E".into(), "lazy_itable_init=0".into()],
            true,
        );
        assert_eq!(
            a,
            [
                "-F",
                "-q",
                "-E",
                "lazy_itable_init=0,nodiscard",
                "/dev/loop1"
            ]
        );
        let a = Ext4.mkfs_args(Path::new("/dev/loop1"), &[], true);
        assert_eq!(a, ["-F", "-q", "-E", "nodiscard", "/dev/loop1"]);
    }
}
