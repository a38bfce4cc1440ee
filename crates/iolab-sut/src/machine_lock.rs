//! One iolab at a time changes this machine's tunables.
//!
//! Each session's journal records a tunable's original value before changing it and writes it
//! back at teardown. Two iolab processes with different journals (two state directories, or
//! tests running side by side) that change the same tunable would each take the other's value
//! for the original: the first sets 1234 over 3000, the second records 1234 and sets 1235, the
//! first restores 3000, the second restores 1234 — and the machine keeps 1234. So a session
//! takes this machine-wide lock (an `flock(2)` on a file under /run, whatever its journal) before
//! its first tunable change and gives it up once it has put every tunable back; a second
//! session that wants to change tunables meanwhile waits for it, up to [`WAIT`].

use std::fs::File;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::util;

/// The lock file: under /run (a tmpfs per boot, like the tunables' values), else the temp dir.
pub fn path() -> PathBuf {
    let run = Path::new("/run");
    if run.is_dir() {
        run.join("iolab-tunables.lock")
    } else {
        std::env::temp_dir().join("iolab-tunables.lock")
    }
}

/// How long a session waits for another to put its tunables back.
pub const WAIT: Duration = Duration::from_secs(300);

/// The lock, held while it lives.
#[derive(Debug)]
pub struct TunablesLock {
    _file: File,
}

impl TunablesLock {
    /// Takes the lock at `path`, waiting up to `wait` while another process holds it.
    pub fn acquire(path: &Path, wait: Duration) -> Result<TunablesLock> {
        let file = util::open_lock_file(path)?;
        let deadline = Instant::now() + wait;
        loop {
            if util::try_flock(&file).map_err(|e| Error::io("lock", path, e))? {
                return Ok(TunablesLock { _file: file });
            }
            if Instant::now() >= deadline {
                let ino = file.metadata().map(|m| m.ino()).unwrap_or(0);
                return Err(Error::TunablesBusy {
                    path: path.to_owned(),
                    holder: crate::journal::lock_holder(ino),
                    waited: wait,
                });
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_waits_then_is_told_who_holds_it() {
        let p = std::env::temp_dir().join(format!("{}.lock", crate::util::unique_name()));
        let first = TunablesLock::acquire(&p, Duration::ZERO).unwrap();
        // A second open file description conflicts even in the same process, as a second
        // session's would.
        let e = TunablesLock::acquire(&p, Duration::from_millis(120)).unwrap_err();
        let msg = e.to_string();
        assert!(
            matches!(e, Error::TunablesBusy { holder: Some(pid), .. } if pid == std::process::id()),
            "{msg}"
        );
        assert!(
            msg.contains(&format!("process {}", std::process::id())),
            "{msg}"
        );
        drop(first);
        TunablesLock::acquire(&p, Duration::ZERO).unwrap();
        std::fs::remove_file(&p).unwrap();
    }
}
