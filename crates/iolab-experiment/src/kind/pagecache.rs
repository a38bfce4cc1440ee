//! Emptying the page cache in the middle of a run, for the kinds that do it between their
//! parts (replay between days, iozone between passes): `syncfs` of the run's filesystem and
//! the kernel's cache drop, timed.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// `syncfs` of the filesystem `dir` is on (not `sync`: other filesystems' dirty data are
/// not the run's), timed.
pub(crate) fn syncfs(dir: &Path) -> Result<Duration, String> {
    let d = std::fs::File::open(dir).map_err(|e| format!("opening {}: {e}", dir.display()))?;
    let t = Instant::now();
    // SAFETY: a valid open descriptor.
    if unsafe { libc::syncfs(std::os::fd::AsRawFd::as_raw_fd(&d)) } != 0 {
        return Err(format!(
            "syncfs {}: {}",
            dir.display(),
            std::io::Error::last_os_error()
        ));
    }
    Ok(t.elapsed())
}

/// `sync`, then the kernel drops every clean page of the page cache (and the dentries and
/// inodes it can), the whole machine's, tried again while pages of `files` stay;
/// `setting` names what asked for it, for the error. Root only. How long it took.
pub(crate) fn drop_all(files: &[PathBuf], setting: &str) -> Result<Duration, String> {
    let t = Instant::now();
    iolab_sut::cache::drop_caches_unchecked(files)
        .map_err(|e| format!("dropping caches: {e} ({setting} needs root)"))?;
    Ok(t.elapsed())
}
