//! Where iolab keeps its state: the SUT journal, mount points and loop images.
//!
//! Root uses /var/lib/iolab (one journal for the machine, so a crashed run is recovered by
//! whoever starts iolab next). Other users cannot mount or tune anything, but an experiment
//! on an existing directory still opens a session; theirs lives in
//! `$XDG_STATE_HOME/iolab` (default `~/.local/state/iolab`). `$IOLAB_STATE_DIR` overrides both.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use iolab_experiment::run::ranks::Ranked;
use iolab_kind::Group;
use iolab_sut::SutOptions;

/// Under MPI with several ranks: this process's group (set once, at start-up).
static GROUP: OnceLock<Ranked> = OnceLock::new();

/// This process is a rank of an MPI job. A rank other than 0 writes nothing to stdout (its
/// results are rank 0's to print and store).
pub fn join(group: Arc<dyn Group + Send + Sync>) {
    if group.rank() != 0 {
        // SAFETY: open and dup2 on a path and descriptors of our own.
        unsafe {
            let null = libc::open(c"/dev/null".as_ptr(), libc::O_WRONLY);
            if null >= 0 {
                libc::dup2(null, 1);
                libc::close(null);
            }
        }
    }
    let _ = GROUP.set(Ranked(group));
}

/// The ranks, for the runner (`None` without MPI or with one rank).
pub fn group() -> Option<Ranked> {
    GROUP.get().cloned()
}

/// Whether this process prints progress and notes: not a rank other than 0.
pub fn speaks() -> bool {
    GROUP.get().is_none_or(|g| g.0.rank() == 0)
}

/// `rank N (host H)` under MPI.
pub fn rank_name() -> Option<String> {
    GROUP
        .get()
        .map(|g| format!("rank {} (host {})", g.0.rank(), g.0.hosts()[g.0.rank()]))
}

pub fn is_root() -> bool {
    // SAFETY: geteuid has no failure mode.
    unsafe { libc::geteuid() == 0 }
}

pub fn sut_options() -> SutOptions {
    if let Some(d) = std::env::var_os("IOLAB_STATE_DIR") {
        return SutOptions::under(&PathBuf::from(d));
    }
    if is_root() {
        return SutOptions::default();
    }
    let base = std::env::var_os("XDG_STATE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/state")))
        .unwrap_or_else(std::env::temp_dir);
    SutOptions::under(&base.join("iolab"))
}
