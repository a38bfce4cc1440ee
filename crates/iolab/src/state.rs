//! Where iolab keeps its state: the SUT journal, mount points and loop images.
//!
//! Root uses /var/lib/iolab (one journal for the machine, so a crashed run is recovered by
//! whoever starts iolab next). Other users cannot mount or tune anything, but an experiment
//! on an existing directory still opens a session; theirs lives in
//! `$XDG_STATE_HOME/iolab` (default `~/.local/state/iolab`). `$IOLAB_STATE_DIR` overrides both.

use std::path::PathBuf;

use iolab_sut::SutOptions;

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
