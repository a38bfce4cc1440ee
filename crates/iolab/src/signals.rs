//! Ctrl-C and SIGTERM: the first one sets the cancel flag that the engine and the runner
//! poll (the run in flight ends, is stored as interrupted, and the system is restored
//! within seconds); a second one exits at once, leaving the journal for `iolab recover`
//! (which the next iolab start also runs). A run whose I/O stalled past the bound is
//! stored by the runner's watchdog, which then ends the process here: its stuck thread
//! cannot be stopped.

use std::io;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::flag;

pub fn install() -> io::Result<Arc<AtomicBool>> {
    let cancel = Arc::new(AtomicBool::new(false));
    for sig in [SIGINT, SIGTERM] {
        // On the second signal, say what is left behind before the exit below.
        let again = Arc::clone(&cancel);
        // SAFETY: the handler only loads an atomic and calls write(2), both
        // async-signal-safe; it allocates nothing and takes no lock.
        unsafe {
            signal_hook::low_level::register(sig, move || {
                if again.load(std::sync::atomic::Ordering::SeqCst) {
                    const MSG: &[u8] =
                        b"\niolab: interrupted again: exiting now; mounts, loop devices and \
tunables may be left as they were: `iolab recover` (or the next iolab run) restores them\n";
                    libc::write(2, MSG.as_ptr().cast(), MSG.len());
                }
            })?;
        }
        // Registered before the flag, so it sees the flag before the handler below sets it: exits
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

/// The stall watchdog's settings: `bound` (`--stall-timeout`) or the runner's default; an
/// abandoned run ends the process with its message, as a failure (exit 1) or, after Ctrl-C,
/// as an interruption (exit 130).
pub fn stall_options(
    bound: Option<std::time::Duration>,
) -> iolab_experiment::run::watchdog::StallOptions {
    use iolab_experiment::run::watchdog::{StallOptions, DEFAULT_STALL_BOUND};
    StallOptions {
        bound: bound.unwrap_or(DEFAULT_STALL_BOUND),
        abandon: Some(Arc::new(|message: &str, interrupted: bool| {
            eprintln!("iolab: run failed: {message}");
            let code = if interrupted {
                crate::error::EXIT_INTERRUPTED
            } else {
                crate::error::EXIT_FAILED
            };
            std::process::exit(code.into());
        })),
    }
}
