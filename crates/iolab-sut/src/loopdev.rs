//! Loop devices through the kernel's ioctls (include/uapi/linux/loop.h), which is what
//! `losetup -f --show --direct-io=on IMAGE` does, with two differences that matter here:
//!
//! - Direct I/O is checked, not hoped for: losetup only warns when the kernel falls back to
//!   buffered I/O; we read `/sys/block/loopN/loop/dio` back and fail with advice, because a
//!   loop device whose image sits in the host's page cache measures memory, not a disk.
//! - `LO_FLAGS_AUTOCLEAR` is set and the session keeps the device open: if iolab is killed,
//!   the kernel detaches the device by itself once the last user (its mount) is gone, so a
//!   crash leaves at most a mount behind, which `recover` unmounts.
//!
//! Detaching finds devices by backing file: a loop device is iolab's when its backing file is
//! an image iolab recorded in its journal, whatever its number (numbers are reused).

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use iolab_sys::SysBlock;

use crate::blockdev::DevInfo;
use crate::error::{Error, Result};

const LOOP_SET_FD: libc::c_ulong = 0x4C00;
const LOOP_CLR_FD: libc::c_ulong = 0x4C01;
const LOOP_SET_STATUS64: libc::c_ulong = 0x4C04;
const LOOP_GET_STATUS64: libc::c_ulong = 0x4C05;
const LOOP_SET_DIRECT_IO: libc::c_ulong = 0x4C08;
const LOOP_CONFIGURE: libc::c_ulong = 0x4C0A;
const LOOP_CTL_GET_FREE: libc::c_ulong = 0x4C82;

const LO_FLAGS_AUTOCLEAR: u32 = 4;
const LO_FLAGS_DIRECT_IO: u32 = 16;
const LO_NAME_SIZE: usize = 64;

/// `struct loop_info64`.
#[repr(C)]
#[derive(Clone, Copy)]
struct LoopInfo64 {
    lo_device: u64,
    lo_inode: u64,
    lo_rdevice: u64,
    lo_offset: u64,
    lo_sizelimit: u64,
    lo_number: u32,
    lo_encrypt_type: u32,
    lo_encrypt_key_size: u32,
    lo_flags: u32,
    lo_file_name: [u8; LO_NAME_SIZE],
    lo_crypt_name: [u8; LO_NAME_SIZE],
    lo_encrypt_key: [u8; 32],
    lo_init: [u64; 2],
}

/// `struct loop_config` (Linux 5.8+).
#[repr(C)]
struct LoopConfig {
    fd: u32,
    block_size: u32,
    info: LoopInfo64,
    reserved: [u64; 8],
}

fn zeroed_info() -> LoopInfo64 {
    LoopInfo64 {
        lo_device: 0,
        lo_inode: 0,
        lo_rdevice: 0,
        lo_offset: 0,
        lo_sizelimit: 0,
        lo_number: 0,
        lo_encrypt_type: 0,
        lo_encrypt_key_size: 0,
        lo_flags: 0,
        lo_file_name: [0; LO_NAME_SIZE],
        lo_crypt_name: [0; LO_NAME_SIZE],
        lo_encrypt_key: [0; 32],
        lo_init: [0; 2],
    }
}

fn ioctl_ptr<T>(fd: &File, req: libc::c_ulong, arg: *mut T) -> io::Result<libc::c_int> {
    // SAFETY: `fd` is open; `arg` points to a live value of the type the request expects.
    let r = unsafe { libc::ioctl(fd.as_raw_fd(), req as _, arg) };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

fn ioctl_val(fd: &File, req: libc::c_ulong, arg: libc::c_ulong) -> io::Result<libc::c_int> {
    // SAFETY: `fd` is open; the request takes an integer argument.
    let r = unsafe { libc::ioctl(fd.as_raw_fd(), req as _, arg) };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

/// A loop device attached by this process. Keeping it alive keeps the device open, which
/// (with autoclear) keeps it attached; dropping it lets the kernel detach it when unused.
#[derive(Debug)]
pub struct LoopDevice {
    /// Device information (`/dev/loopN`).
    pub info: DevInfo,
    /// Whether direct I/O is active (verified in sysfs).
    pub direct_io: bool,
    /// Held open for the device's lifetime (see the module comment); never read.
    _file: File,
}

impl LoopDevice {
    /// Attach `image` to a free loop device.
    pub fn attach(image: &Path, direct_io: bool) -> Result<LoopDevice> {
        let err = |op, e: io::Error, hint: Option<String>| Error::Loop {
            op,
            path: image.to_owned(),
            error: e,
            hint,
        };
        let backing = OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_CLOEXEC)
            .open(image)
            .map_err(|e| err("open", e, None))?;
        let ctl = OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_CLOEXEC)
            .open("/dev/loop-control")
            .map_err(|e| {
                err(
                    "attach",
                    e,
                    Some("/dev/loop-control is missing or not writable: needs root and the loop driver".into()),
                )
            })?;
        // LOOP_CTL_GET_FREE then configure races with other attachers; EBUSY means someone
        // took the device first, so ask again (losetup does the same).
        let mut last = None;
        for _ in 0..16 {
            let n = ioctl_val(&ctl, LOOP_CTL_GET_FREE, 0).map_err(|e| err("attach", e, None))?;
            let path = PathBuf::from(format!("/dev/loop{n}"));
            let dev = match OpenOptions::new()
                .read(true)
                .write(true)
                .custom_flags(libc::O_CLOEXEC)
                .open(&path)
            {
                Ok(f) => f,
                Err(e) => {
                    last = Some(e);
                    continue;
                }
            };
            match configure(&dev, &backing, image, direct_io) {
                Ok(()) => {}
                Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {
                    last = Some(e);
                    continue;
                }
                Err(e) => return Err(err("attach", e, None)),
            }
            let info =
                DevInfo::of_path(&path).map_err(|e| err("attach", io::Error::other(e), None))?;
            let dio = SysBlock::system()
                .loop_attrs(&info.name)
                .and_then(|a| a.dio)
                .unwrap_or(false);
            let loopdev = LoopDevice {
                info,
                direct_io: dio,
                _file: dev,
            };
            if direct_io && !dio {
                let path = loopdev.info.path.clone();
                drop(loopdev);
                let _ = detach_device(&path);
                return Err(Error::Loop {
                    op: "enable direct I/O on",
                    path: image.to_owned(),
                    error: io::Error::from_raw_os_error(libc::EINVAL),
                    hint: Some(
                        "the kernel fell back to buffered I/O: put the image on a disk \
                         filesystem that supports O_DIRECT (not tmpfs/overlayfs), or set \
                         `direct_io = false` and accept that the host page cache serves reads"
                            .into(),
                    ),
                });
            }
            return Ok(loopdev);
        }
        Err(err(
            "attach",
            last.unwrap_or_else(|| io::Error::from_raw_os_error(libc::EBUSY)),
            Some("no free loop device could be claimed; too many attached?".into()),
        ))
    }
}

fn configure(dev: &File, backing: &File, image: &Path, direct_io: bool) -> io::Result<()> {
    let mut info = zeroed_info();
    info.lo_flags = LO_FLAGS_AUTOCLEAR | if direct_io { LO_FLAGS_DIRECT_IO } else { 0 };
    let name = image.as_os_str().as_encoded_bytes();
    let n = name.len().min(LO_NAME_SIZE - 1);
    info.lo_file_name[..n].copy_from_slice(&name[..n]);
    let mut cfg = LoopConfig {
        fd: backing.as_raw_fd() as u32,
        block_size: 0,
        info,
        reserved: [0; 8],
    };
    match ioctl_ptr(dev, LOOP_CONFIGURE, &mut cfg) {
        Ok(_) => Ok(()),
        // Before 5.8: set the fd, then the status, then direct I/O, as losetup did.
        Err(e) if matches!(e.raw_os_error(), Some(libc::EINVAL) | Some(libc::ENOTTY)) => {
            ioctl_val(dev, LOOP_SET_FD, backing.as_raw_fd() as libc::c_ulong)?;
            let mut info = info;
            info.lo_flags = LO_FLAGS_AUTOCLEAR;
            if let Err(e) = ioctl_ptr(dev, LOOP_SET_STATUS64, &mut info) {
                let _ = ioctl_val(dev, LOOP_CLR_FD, 0);
                return Err(e);
            }
            if direct_io {
                // A failure here shows up as dio = 0 in sysfs and is reported by the caller.
                let _ = ioctl_val(dev, LOOP_SET_DIRECT_IO, 1);
            }
            Ok(())
        }
        Err(e) => Err(e),
    }
}

/// Detach one loop device (an unattached device is fine). If it is still open elsewhere (a
/// mount), the kernel marks it autoclear and detaches it when that user goes away.
pub fn detach_device(path: &Path) -> io::Result<()> {
    let f = match OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_CLOEXEC)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    match ioctl_val(&f, LOOP_CLR_FD, 0) {
        Ok(_) => Ok(()),
        Err(e) if e.raw_os_error() == Some(libc::ENXIO) => Ok(()),
        Err(e) => Err(e),
    }
}

/// (st_dev, st_ino) of the file behind an attached loop device.
fn backing_ids(path: &Path) -> Option<(u64, u64)> {
    let f = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_CLOEXEC)
        .open(path)
        .ok()?;
    let mut info = zeroed_info();
    ioctl_ptr(&f, LOOP_GET_STATUS64, &mut info).ok()?;
    Some((info.lo_device, info.lo_inode))
}

/// Loop devices whose backing file is `image` (compared by path as the kernel reports it,
/// and, while the image exists, by device and inode too).
pub fn devices_backed_by(image: &Path) -> Vec<PathBuf> {
    let ids = std::fs::metadata(image).ok().map(|m| (m.dev(), m.ino()));
    SysBlock::system()
        .attached_loops()
        .unwrap_or_default()
        .into_iter()
        .filter(|(_, backing, _)| backing == image)
        .map(|(name, _, _)| PathBuf::from("/dev").join(name))
        .filter(|dev| match (ids, backing_ids(dev)) {
            // Same path but another inode: the image was replaced; not ours.
            (Some(a), Some(b)) => a == b,
            _ => true,
        })
        .collect()
}

/// Detach every loop device backed by `image`; returns the devices detached.
///
/// A device still open elsewhere (a dying mkfs, a lazily unmounted filesystem) is only marked
/// for autoclear by LOOP_CLR_FD and goes away when that user closes it; wait a few seconds
/// for that, then report it as busy.
pub fn detach_image(image: &Path) -> io::Result<Vec<PathBuf>> {
    let devs = devices_backed_by(image);
    for d in &devs {
        detach_device(d)?;
    }
    for _ in 0..100 {
        if devs.iter().all(|d| !still_backed_by(d, image)) {
            return Ok(devs);
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let busy: Vec<String> = devs
        .iter()
        .filter(|d| still_backed_by(d, image))
        .map(|d| d.display().to_string())
        .collect();
    Err(io::Error::new(
        io::ErrorKind::ResourceBusy,
        format!(
            "{} still attached: open by another process; it detaches by itself (autoclear) \
             when that process closes it",
            busy.join(", ")
        ),
    ))
}

fn still_backed_by(dev: &Path, image: &Path) -> bool {
    dev.file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| SysBlock::system().loop_backing_file(n).ok().flatten())
        .is_some_and(|(p, _)| p == image)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn struct_layouts_match_the_uapi_header() {
        // loop_info64: 5×u64 + 4×u32 + 64 + 64 + 32 + 2×u64 = 232 bytes.
        assert_eq!(std::mem::size_of::<LoopInfo64>(), 232);
        // loop_config: 2×u32 + loop_info64 + 8×u64.
        assert_eq!(std::mem::size_of::<LoopConfig>(), 8 + 232 + 64);
    }
}
