//! A private tracefs instance: `instances/iolab-<pid>-<n>`, its own ring buffer, event
//! enables and filters, removed again when dropped.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::error::TraceError;
use crate::summary::{parse_cpu_stats, CpuBufferStats};

/// Where tracefs is usually mounted.
pub const TRACEFS_PATHS: [&str; 2] = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"];

/// Prefix of the instances this crate creates.
pub const INSTANCE_PREFIX: &str = "iolab-";

static NEXT: AtomicU64 = AtomicU64::new(0);

/// The mounted tracefs: the first of [`TRACEFS_PATHS`] with an `instances` directory.
pub fn tracefs_root() -> Result<PathBuf, TraceError> {
    for p in TRACEFS_PATHS {
        let root = Path::new(p);
        match std::fs::metadata(root.join("instances")) {
            Ok(m) if m.is_dir() => return Ok(root.to_owned()),
            Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
                return Err(TraceError::NeedsRoot(root.to_owned()))
            }
            _ => {}
        }
    }
    // Not mounted (a system without systemd's sys-kernel-tracing.mount): mount it where
    // the kernel provides the empty directory for it. Harmless, and what `mount -t tracefs`
    // by hand would do; only root may.
    let root = Path::new(TRACEFS_PATHS[0]);
    if root.is_dir() && mount_tracefs(root) && root.join("instances").is_dir() {
        return Ok(root.to_owned());
    }
    Err(TraceError::TracefsMissing(PathBuf::from(TRACEFS_PATHS[0])))
}

fn mount_tracefs(at: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(target) = std::ffi::CString::new(at.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: all pointers are NUL-terminated strings that outlive the call; no data.
    unsafe {
        libc::mount(
            c"nodev".as_ptr(),
            target.as_ptr(),
            c"tracefs".as_ptr(),
            0,
            std::ptr::null(),
        ) == 0
    }
}

/// Removes the instances iolab processes that no longer run left behind (`iolab-<pid>-<n>`
/// whose pid is gone: a SIGKILLed iolab never removed its own), returning them. Their ring
/// buffers hold kernel memory and their block events stay enabled until they go. Leaves
/// alone every other name, and the instances of live processes.
pub fn remove_stale_instances(root: &Path) -> Vec<PathBuf> {
    let Ok(dir) = std::fs::read_dir(root.join("instances")) else {
        return Vec::new();
    };
    let mut removed = Vec::new();
    for e in dir.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(INSTANCE_PREFIX))
            .and_then(|n| n.split_once('-'))
            .filter(|(_, n)| n.parse::<u64>().is_ok())
            .and_then(|(p, _)| p.parse::<i32>().ok())
            .filter(|&p| p > 0)
        else {
            continue;
        };
        // SAFETY: kill(2) with signal 0 only asks whether the process exists.
        let gone = unsafe { libc::kill(pid, 0) } != 0
            && io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
        if gone && std::fs::remove_dir(e.path()).is_ok() {
            removed.push(e.path());
        }
    }
    removed
}

/// A tracefs instance directory, removed on drop (errors ignored there; use
/// [`Instance::remove`] to see them).
#[derive(Debug)]
pub(crate) struct Instance {
    path: PathBuf,
    removed: bool,
}

impl Instance {
    /// Create `ROOT/instances/iolab-<pid>-<n>`.
    pub(crate) fn create(root: &Path) -> Result<Instance, TraceError> {
        // What a killed iolab left goes first, as `iolab recover` would.
        remove_stale_instances(root);
        let dir = root.join("instances");
        for _ in 0..1000 {
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let path = dir.join(format!("{INSTANCE_PREFIX}{}-{n}", std::process::id()));
            match std::fs::create_dir(&path) {
                Ok(()) => {
                    return Ok(Instance {
                        path,
                        removed: false,
                    })
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(TraceError::io("create", path, e)),
            }
        }
        Err(TraceError::io(
            "create",
            dir,
            io::Error::from(io::ErrorKind::AlreadyExists),
        ))
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Write `value` to a file of the instance.
    pub(crate) fn write(&self, rel: &str, value: &str) -> Result<(), TraceError> {
        let p = self.path.join(rel);
        std::fs::write(&p, value).map_err(|e| TraceError::io("write", p, e))
    }

    /// Buffer statistics of every CPU (`per_cpu/cpuN/stats`), by CPU number.
    pub(crate) fn cpu_stats(&self) -> Result<Vec<CpuBufferStats>, TraceError> {
        let dir = self.path.join("per_cpu");
        let entries = std::fs::read_dir(&dir).map_err(|e| TraceError::io("read", &dir, e))?;
        let mut out = Vec::new();
        for e in entries {
            let e = e.map_err(|e| TraceError::io("read", &dir, e))?;
            let name = e.file_name();
            let Some(cpu) = name
                .to_str()
                .and_then(|n| n.strip_prefix("cpu"))
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            let p = e.path().join("stats");
            let text = std::fs::read_to_string(&p).map_err(|e| TraceError::io("read", p, e))?;
            out.push(parse_cpu_stats(cpu, &text));
        }
        out.sort_by_key(|s| s.cpu);
        Ok(out)
    }

    /// Remove the instance (tracefs disables its events and frees its buffer). Retries for a
    /// moment while a file of it is still open (EBUSY).
    pub(crate) fn remove(&mut self) -> Result<(), TraceError> {
        if self.removed {
            return Ok(());
        }
        let mut tries = 0;
        loop {
            match std::fs::remove_dir(&self.path) {
                Ok(()) => break,
                Err(e) if e.kind() == io::ErrorKind::NotFound => break,
                Err(e) if e.raw_os_error() == Some(libc::EBUSY) && tries < 50 => {
                    tries += 1;
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(e) => return Err(TraceError::io("remove", self.path.clone(), e)),
            }
        }
        self.removed = true;
        Ok(())
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = self.remove();
    }
}
