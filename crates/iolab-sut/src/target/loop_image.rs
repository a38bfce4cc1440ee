//! A loop device over a sparse image file iolab creates, attached with direct I/O so the
//! host's page cache does not serve the guest filesystem's reads.

use std::fs::OpenOptions;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use super::{Acquire, Acquired};
use crate::error::{Error, Result};
use crate::journal::Entry;
use crate::loopdev::LoopDevice;
use crate::mount;
use crate::plan::FsPlan;
use crate::session::Tx;
use crate::util;

/// A loop image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoopImage {
    /// Image size, bytes.
    pub size: u64,
    /// Where to create the image (`None`: the session's default image directory). It should
    /// be on a disk filesystem: direct I/O does not work on tmpfs.
    pub image_dir: Option<PathBuf>,
    /// Attach with direct I/O (default true).
    pub direct_io: bool,
    /// Allocate the image's blocks up front (fallocate) instead of a sparse file, and ask mkfs
    /// not to discard them, so the host filesystem does not allocate during the run.
    pub preallocate: bool,
}

impl Acquire for LoopImage {
    fn acquire(&self, tx: &mut Tx<'_>, _fs: Option<&FsPlan>) -> Result<Acquired> {
        let dir = self
            .image_dir
            .clone()
            .unwrap_or_else(|| tx.options().image_dir.clone());
        // Canonical, so the path recorded is the one the kernel reports as backing file.
        let dir = mount::ensure_dir(&dir)?;
        check_space(&dir, self.size)?;
        let image = dir.join(format!("{}.img", util::unique_name()));
        let seq = tx.record(Entry::Image {
            path: image.clone(),
        })?;
        let file = match OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_CLOEXEC)
            .open(&image)
        {
            Ok(f) => f,
            Err(e) => {
                // Not created: nothing to undo, and the name must not be deleted later.
                tx.abandon(seq);
                return Err(Error::io("create", &image, e));
            }
        };
        file.set_len(self.size)
            .map_err(|e| Error::io("size", &image, e))?;
        if self.preallocate {
            // SAFETY: valid fd; mode 0 allocates blocks and extends nothing (already sized).
            let r = unsafe { libc::fallocate(file.as_raw_fd(), 0, 0, self.size as libc::off_t) };
            if r != 0 {
                return Err(Error::io("preallocate", &image, io::Error::last_os_error()));
            }
        }
        drop(file);
        let seq = tx.record(Entry::Loop {
            image: image.clone(),
        })?;
        let dev = LoopDevice::attach(&image, self.direct_io)?;
        let device = dev.info.clone();
        let direct_io = dev.direct_io;
        tx.keep_loop(seq, dev);
        Ok(Acquired::Device {
            device,
            nodiscard: self.preallocate,
            direct_io: Some(direct_io),
        })
    }
}

fn check_space(dir: &Path, size: u64) -> Result<()> {
    let c = util::cstring(dir).map_err(|e| Error::io("inspect", dir, e))?;
    // SAFETY: zeroed statvfs is a valid out-parameter; c is a valid C string.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return Err(Error::io("inspect", dir, io::Error::last_os_error()));
    }
    let free = st.f_bavail as u64 * st.f_frsize as u64;
    if free < size {
        return Err(Error::spec(
            "target.size",
            format!(
                "the image needs up to {} MiB but {} has only {} MiB free; choose a smaller \
                 size or another image_dir",
                size >> 20,
                dir.display(),
                free >> 20
            ),
        ));
    }
    Ok(())
}
