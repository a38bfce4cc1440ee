//! Safety checks before anything destructive happens to a block device.
//!
//! A device is refused when any of these holds (each reason is reported, with the setting
//! that overrides it where one does):
//! - it is not a block device;
//! - it, a partition of it, or a device built on it is mounted (/proc/self/mountinfo, by
//!   device number and, for btrfs's anonymous numbers, by source path) — never overridable;
//! - it holds the root filesystem: the root mount's device is it, a partition of it, or sits
//!   on it through dm/md — never overridable;
//! - something is built on it (holders: dm, md), it is active swap, or the kernel says it is
//!   busy when opened with O_EXCL (the kernel's own check for mounts, swap and md members) —
//!   never overridable;
//! - it is not a loop device iolab created in this session — overridable by
//!   `allow_destroy = true`;
//! - it carries a filesystem, swap, RAID, LUKS or partition-table signature — overridable by
//!   `force = true`.
//!
//! Signatures are read from the device's first 68 KiB (read-only) by magic number, the same
//! places blkid looks (libblkid's superblocks/*.c).

use std::fs::OpenOptions;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use iolab_sys::{mountinfo, swaps, DevT, SysBlock};

use crate::blockdev::DevInfo;
use crate::error::{Error, Refusal, Result};

/// What the checks found about a device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceReport {
    /// The device.
    pub device: DevInfo,
    /// Mount points of it, its partitions and holders.
    pub mounted_at: Vec<PathBuf>,
    /// It holds the root filesystem.
    pub backs_root: bool,
    /// Users other than mounts (holders, swap, exclusive openers).
    pub in_use_by: Vec<String>,
    /// A signature found on it.
    pub signature: Option<&'static str>,
}

/// Inspect a block device (read-only).
pub fn inspect(path: &Path) -> Result<DeviceReport, Refusal> {
    let device = DevInfo::of_path(path).map_err(|_| Refusal::NotBlockDevice)?;
    let sys = SysBlock::system();
    // The device itself, its partitions and what is built on them.
    let family: Vec<String> = std::iter::once(device.name.clone())
        .chain(sys.descendants(&device.name).unwrap_or_default())
        .collect();
    let family_devs: Vec<DevT> = family
        .iter()
        .filter_map(|n| sys.dev(n).ok())
        .chain([device.dev])
        .collect();
    let mounts = mountinfo::read().unwrap_or_default();
    let source_dev = |m: &mountinfo::Mount| {
        m.source
            .starts_with("/dev/")
            .then(|| DevT::of_block_device(Path::new(&m.source)).ok())
            .flatten()
    };
    let mut mounted_at: Vec<PathBuf> = mounts
        .iter()
        .filter(|m| {
            family_devs.contains(&m.dev) || source_dev(m).is_some_and(|d| family_devs.contains(&d))
        })
        .map(|m| m.mount_point.clone())
        .collect();
    mounted_at.dedup();

    let backs_root = mountinfo::top_mount_at(&mounts, Path::new("/"))
        .map(|root| {
            [Some(root.dev), source_dev(root)]
                .into_iter()
                .flatten()
                .filter_map(|d| sys.name_of(d).ok().flatten())
                .any(|n| {
                    n == device.name || sys.ancestors(&n).unwrap_or_default().contains(&device.name)
                })
        })
        .unwrap_or(false);

    let mut in_use_by: Vec<String> = family
        .iter()
        .flat_map(|n| sys.holders(n).unwrap_or_default())
        .map(|h| format!("{h} (a device built on it)"))
        .collect();
    in_use_by.dedup();
    // Unreadable /proc/swaps: the O_EXCL open below still catches an active swap device.
    for s in swaps::read().unwrap_or_default() {
        if DevT::of_block_device(&s).is_ok_and(|d| family_devs.contains(&d)) {
            in_use_by.push(format!("swap ({})", s.display()));
        }
    }
    if mounted_at.is_empty() && in_use_by.is_empty() && exclusively_busy(path) {
        in_use_by.push("another program (the kernel refuses an exclusive open: EBUSY)".into());
    }
    let signature = read_signature(path);
    Ok(DeviceReport {
        device,
        mounted_at,
        backs_root,
        in_use_by,
        signature,
    })
}

/// Decide whether a named block device may be formatted. `ours` says whether it is a loop
/// device iolab attached in this session.
pub fn check_block_device(
    path: &Path,
    allow_destroy: bool,
    force: bool,
    ours: impl Fn(&DevInfo) -> bool,
) -> Result<DevInfo> {
    let refused = |reasons| Error::Refused {
        device: path.to_owned(),
        reasons,
    };
    let report = inspect(path).map_err(|r| refused(vec![r]))?;
    let mut reasons = Vec::new();
    if !report.mounted_at.is_empty() {
        reasons.push(Refusal::Mounted {
            at: report.mounted_at.clone(),
        });
    }
    if report.backs_root {
        reasons.push(Refusal::BacksRoot);
    }
    for by in &report.in_use_by {
        reasons.push(Refusal::InUse { by: by.clone() });
    }
    if !allow_destroy && !ours(&report.device) {
        reasons.push(Refusal::NotOurs);
    }
    if let (Some(kind), false) = (report.signature, force) {
        reasons.push(Refusal::Signature { kind });
    }
    if reasons.is_empty() {
        Ok(report.device)
    } else {
        Err(refused(reasons))
    }
}

/// The kernel refuses O_EXCL opens of block devices that are mounted, active swap, md/dm
/// members or held by another exclusive opener (block/bdev.c). Read-only open; closed at once.
fn exclusively_busy(path: &Path) -> bool {
    match OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_EXCL | libc::O_CLOEXEC)
        .open(path)
    {
        Ok(_) => false,
        Err(e) => e.raw_os_error() == Some(libc::EBUSY),
    }
}

/// Bytes read from the start of a device to look for signatures.
pub const SIGNATURE_SPAN: usize = 70 * 1024;

fn read_signature(path: &Path) -> Option<&'static str> {
    let f = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_CLOEXEC)
        .open(path)
        .ok()?;
    let mut buf = vec![0u8; SIGNATURE_SPAN];
    let mut got = 0;
    while got < buf.len() {
        match f.read_at(&mut buf[got..], got as u64) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(_) => break,
        }
    }
    buf.truncate(got);
    signature(&buf)
}

fn at(buf: &[u8], off: usize, magic: &[u8]) -> bool {
    buf.get(off..off + magic.len()) == Some(magic)
}

fn le32(buf: &[u8], off: usize) -> Option<u32> {
    Some(u32::from_le_bytes(buf.get(off..off + 4)?.try_into().ok()?))
}

/// Recognise a signature in the first bytes of a device (pure; see [`SIGNATURE_SPAN`]).
pub fn signature(buf: &[u8]) -> Option<&'static str> {
    if at(buf, 0, b"LUKS\xba\xbe") {
        return Some("LUKS");
    }
    if at(buf, 0, b"XFSB") {
        return Some("xfs");
    }
    if at(buf, 0, b"hsqs") {
        return Some("squashfs");
    }
    // btrfs: primary superblock at 64 KiB, magic at +0x40.
    if at(buf, 65536 + 0x40, b"_BHRfS_M") {
        return Some("btrfs");
    }
    // ext2/3/4: superblock at 1024, s_magic (0xEF53, little-endian) at +0x38.
    if at(buf, 1024 + 0x38, &[0x53, 0xEF]) {
        let compat = le32(buf, 1024 + 0x5C).unwrap_or(0);
        let incompat = le32(buf, 1024 + 0x60).unwrap_or(0);
        // INCOMPAT_EXTENTS 0x40, INCOMPAT_FLEX_BG 0x200, INCOMPAT_64BIT 0x80.
        return Some(if incompat & (0x40 | 0x80 | 0x200) != 0 {
            "ext4"
        } else if compat & 0x4 != 0 {
            "ext3"
        } else {
            "ext2"
        });
    }
    if le32(buf, 1024) == Some(0xF2F5_2010) {
        return Some("f2fs");
    }
    if at(buf, 4096 - 10, b"SWAPSPACE2") || at(buf, 4096 - 10, b"SWAP-SPACE") {
        return Some("swap");
    }
    if le32(buf, 4096) == Some(0xa92b_4efc) {
        return Some("Linux RAID (md) member");
    }
    if at(buf, 512, b"LABELONE") {
        return Some("LVM physical volume");
    }
    if at(buf, 512, b"EFI PART") {
        return Some("GPT partition table");
    }
    if at(buf, 32769, b"CD001") {
        return Some("iso9660");
    }
    if at(buf, 510, &[0x55, 0xAA]) {
        if at(buf, 54, b"FAT") || at(buf, 82, b"FAT32") {
            return Some("vfat");
        }
        if at(buf, 3, b"NTFS    ") {
            return Some("ntfs");
        }
        return Some("MBR partition table");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blank() -> Vec<u8> {
        vec![0u8; SIGNATURE_SPAN]
    }

    #[test]
    fn blank_device_has_no_signature() {
        assert_eq!(signature(&blank()), None);
        assert_eq!(signature(&[]), None);
    }

    #[test]
    fn recognises_ext_family() {
        let mut b = blank();
        b[1080] = 0x53;
        b[1081] = 0xEF;
        assert_eq!(signature(&b), Some("ext2"));
        b[1024 + 0x5C] = 0x4;
        assert_eq!(signature(&b), Some("ext3"));
        b[1024 + 0x60] = 0x40 | 0x2;
        assert_eq!(signature(&b), Some("ext4"));
    }

    #[test]
    fn recognises_others() {
        let cases: &[(usize, &[u8], &str)] = &[
            (0, b"XFSB", "xfs"),
            (65600, b"_BHRfS_M", "btrfs"),
            (1024, &[0x10, 0x20, 0xF5, 0xF2], "f2fs"),
            (4086, b"SWAPSPACE2", "swap"),
            (512, b"EFI PART", "GPT partition table"),
            (510, &[0x55, 0xAA], "MBR partition table"),
            (0, b"LUKS\xba\xbe", "LUKS"),
            (32769, b"CD001", "iso9660"),
        ];
        for (off, magic, name) in cases {
            let mut b = blank();
            b[*off..off + magic.len()].copy_from_slice(magic);
            assert_eq!(signature(&b), Some(*name), "{name}");
        }
    }

    #[test]
    fn short_reads_do_not_panic() {
        let mut b = vec![0u8; 1082];
        b[1080] = 0x53;
        b[1081] = 0xEF;
        assert_eq!(signature(&b), Some("ext2"));
    }
}
