//! A pass-through FUSE filesystem for iolab's tests of failing devices.
//!
//! [`FaultFs::mount`] mounts a directory whose every operation goes to a backing directory.
//! While it is mounted the test arms [`Fault`]s: the reads, writes or fsyncs of the files
//! whose path contains a pattern then fail with an errno (EIO, ENOSPC, …) or stall until
//! released. With [`Options::power_cut`] the layer also keeps the data written but not yet
//! fsync'd in memory, as a disk's volatile cache would, and [`FaultFs::cut`] drops it: the
//! backing directory then holds what survives a power cut, to be mounted again.
//!
//! The filesystem runs as threads of the calling process; dropping the handle unmounts it
//! (stalled calls fail with EIO first, so that nothing waits on them).

mod faults;
mod fs;
mod lazy;

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

pub use faults::{Action, Fault, Hit, Op};

/// What went wrong, with what to do about it.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "mounting the fault filesystem on {}: {source}; it needs /dev/fuse and root (or \
         fusermount3, from Debian's fuse3)",
        mountpoint.display()
    )]
    Mount {
        mountpoint: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "unmounting {}: {detail}; `fusermount3 -u -z {}` detaches it",
        mountpoint.display(),
        mountpoint.display()
    )]
    Unmount { mountpoint: PathBuf, detail: String },
    #[error("writing the pending data of {} at unmount: {source}", backing.display())]
    Flush {
        backing: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// How to mount.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Keep written data in memory until fsync, for [`FaultFs::cut`].
    pub power_cut: bool,
    /// Threads serving the kernel: a stalled call holds one, the others go on.
    pub threads: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            power_cut: false,
            threads: 8,
        }
    }
}

/// A mounted fault filesystem; unmounted on drop.
pub struct FaultFs {
    shared: Arc<fs::Shared>,
    session: Option<fuser::BackgroundSession>,
    mountpoint: PathBuf,
    cut: bool,
}

impl std::fmt::Debug for FaultFs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FaultFs")
            .field("backing", &self.shared.backing)
            .field("mountpoint", &self.mountpoint)
            .finish()
    }
}

impl FaultFs {
    /// Mounts `mountpoint` as a pass-through of `backing` (both existing directories).
    pub fn mount(backing: &Path, mountpoint: &Path) -> Result<FaultFs, Error> {
        FaultFs::mount_with(backing, mountpoint, Options::default())
    }

    pub fn mount_with(backing: &Path, mountpoint: &Path, opts: Options) -> Result<FaultFs, Error> {
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| Error::Io { path, source }
        };
        let backing = backing.canonicalize().map_err(io(backing))?;
        let root = std::fs::metadata(&backing).map_err(io(&backing))?;
        let mountpoint = mountpoint.canonicalize().map_err(io(mountpoint))?;
        let shared = Arc::new(fs::Shared::new(backing, opts.power_cut, root.ino()));
        let mut config = fuser::Config::default();
        config.mount_options = vec![
            fuser::MountOption::FSName("iolab-faultfs".into()),
            fuser::MountOption::DefaultPermissions,
        ];
        config.acl = fuser::SessionACL::All;
        config.n_threads = Some(opts.threads.max(1));
        let session = fuser::spawn_mount(fs::PassFs(Arc::clone(&shared)), &mountpoint, &config)
            .map_err(|source| Error::Mount {
                mountpoint: mountpoint.clone(),
                source,
            })?;
        Ok(FaultFs {
            shared,
            session: Some(session),
            mountpoint,
            cut: false,
        })
    }

    /// Where it is mounted.
    pub fn path(&self) -> &Path {
        &self.mountpoint
    }

    /// The backing directory.
    pub fn backing(&self) -> &Path {
        &self.shared.backing
    }

    /// Arms a fault (beside those already armed; the first that fires decides a call).
    pub fn set_fault(&self, fault: Fault) {
        self.shared.faults.add(fault);
    }

    /// Disarms every fault; the stalled calls go through.
    pub fn clear_faults(&self) {
        self.shared.faults.clear();
    }

    /// Calls stalled now.
    pub fn stalled(&self) -> usize {
        self.shared.faults.stalled()
    }

    /// Waits until a call is stalled; false if `timeout` passed first.
    pub fn wait_stalled(&self, timeout: Duration) -> bool {
        self.shared.faults.wait_stalled(timeout)
    }

    /// The calls `op` made so far, on every file (those a fault hit included).
    pub fn calls(&self, op: Op) -> u64 {
        self.shared.faults.calls(op)
    }

    /// Every call a fault hit so far.
    pub fn hits(&self) -> Vec<Hit> {
        self.shared.faults.hits()
    }

    /// The power cut: data not yet fsync'd is lost (with [`Options::power_cut`]), stalled
    /// calls fail with EIO, and so does every call after it until the unmount. Returns the
    /// bytes lost.
    pub fn cut(&mut self) -> u64 {
        self.cut = true;
        self.shared.faults.kill();
        self.shared.lazy.as_ref().map_or(0, |l| l.cut())
    }

    /// Unmounts, reporting what went wrong (dropping unmounts too, silently). Without a cut,
    /// pending data is written first, as at a clean shutdown.
    pub fn unmount(mut self) -> Result<(), Error> {
        self.finish()
    }

    fn finish(&mut self) -> Result<(), Error> {
        let Some(session) = self.session.take() else {
            return Ok(());
        };
        let flushed = if self.cut {
            Ok(())
        } else {
            self.shared.sync_pending()
        };
        // Nothing may wait on a stalled call while the kernel unmounts.
        self.shared.faults.kill();
        let unmounted = session.umount_and_join();
        let still = is_mounted(&self.mountpoint);
        if still {
            // Busy (a process still has a file open): detach it; the kernel ends it when the
            // last file closes.
            let _ = Command::new("fusermount3")
                .args(["-u", "-z", "--"])
                .arg(&self.mountpoint)
                .output();
        }
        if is_mounted(&self.mountpoint) {
            return Err(Error::Unmount {
                mountpoint: self.mountpoint.clone(),
                detail: match unmounted {
                    Err(e) => e.to_string(),
                    Ok(()) => "still mounted".into(),
                },
            });
        }
        flushed.map_err(|source| Error::Flush {
            backing: self.shared.backing.clone(),
            source,
        })
    }
}

impl Drop for FaultFs {
    fn drop(&mut self) {
        let _ = self.finish();
    }
}

/// Whether a FUSE filesystem of ours is mounted on `path` (/proc/self/mountinfo).
fn is_mounted(path: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string("/proc/self/mountinfo") else {
        return false;
    };
    let want = path.to_string_lossy();
    text.lines().any(|l| {
        let f: Vec<&str> = l.split(' ').collect();
        f.get(4).is_some_and(|m| unescape(m) == want) && l.contains("iolab-faultfs")
    })
}

/// mountinfo escapes spaces, tabs, newlines and backslashes as octal.
fn unescape(s: &str) -> String {
    s.replace("\\040", " ")
        .replace("\\011", "\t")
        .replace("\\012", "\n")
        .replace("\\134", "\\")
}
