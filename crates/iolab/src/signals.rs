//! Ctrl-C and SIGTERM: the first one sets the cancel flag that the engine and the runner
//! poll (the run in flight ends, is stored as interrupted, and the system is restored
//! within seconds); a second one exits at once, leaving the journal for `iolab recover`
//! (which the next iolab start also runs).

use std::io;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::flag;

pub fn install() -> io::Result<Arc<AtomicBool>> {
    let cancel = Arc::new(AtomicBool::new(false));
    for sig in [SIGINT, SIGTERM] {
        // Registered first, so it sees the flag before the second handler sets it: exits
        // only when the flag was already set by an earlier signal.
        flag::register_conditional_shutdown(
            sig,
            crate::error::EXIT_INTERRUPTED.into(),
            Arc::clone(&cancel),
        )?;
        flag::register(sig, Arc::clone(&cancel))?;
    }
    Ok(cancel)
}
