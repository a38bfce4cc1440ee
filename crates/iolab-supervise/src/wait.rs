//! Waiting for a started child: reaping it with wait4(2) (for its rusage), napping until it
//! ends or a deadline passes, signalling it.
//!
//! The child is never reaped through `std::process::Child` (which would lose the rusage):
//! only [`Waiter::try_reap`] reaps it. Until then its pid cannot be reused, so signalling it
//! by pid is safe.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::time::{Duration, Instant};

use crate::outcome::Usage;

/// The longest nap: how late the cancel flag and deadlines are seen at worst. A signal
/// handler running on another thread does not interrupt the nap, so this bounds the
/// reaction to Ctrl-C.
pub(crate) const POLL: Duration = Duration::from_millis(20);

pub(crate) struct Waiter {
    pid: libc::pid_t,
    /// Readable once the child has ended: naps end at its exit, not at the next poll tick,
    /// so the recorder stops right after it and the wall time is exact. `None` (kernels
    /// before 5.3) falls back to sleeping [`POLL`] at a time.
    pidfd: Option<OwnedFd>,
    /// Signal the child's process group (it leads one of its own), not only the child.
    group: bool,
}

/// How the child ended, as wait4 reported it.
pub(crate) struct Reaped {
    pub status: ExitStatus,
    pub usage: Usage,
    pub at: Instant,
}

impl Waiter {
    pub(crate) fn new(pid: u32, group: bool, use_pidfd: bool) -> Waiter {
        let pid = pid as libc::pid_t;
        let pidfd = if use_pidfd { pidfd_open(pid) } else { None };
        Waiter { pid, pidfd, group }
    }

    /// Reaps the child if it has ended.
    pub(crate) fn try_reap(&self) -> io::Result<Option<Reaped>> {
        loop {
            let mut status: libc::c_int = 0;
            // SAFETY: rusage is plain data; all zeroes is a valid value.
            let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
            // SAFETY: both pointers are to live locals of the right types.
            let r = unsafe { libc::wait4(self.pid, &mut status, libc::WNOHANG, &mut ru) };
            match r {
                0 => return Ok(None),
                -1 => {
                    let e = io::Error::last_os_error();
                    if e.kind() != io::ErrorKind::Interrupted {
                        return Err(e);
                    }
                }
                _ => {
                    return Ok(Some(Reaped {
                        status: ExitStatus::from_raw(status),
                        usage: Usage::from_rusage(&ru),
                        at: Instant::now(),
                    }))
                }
            }
        }
    }

    /// Sleeps at most `max` (and at most [`POLL`]); returns early when the child ends.
    pub(crate) fn nap(&self, max: Duration) {
        let max = max.min(POLL);
        match &self.pidfd {
            Some(fd) => {
                let mut p = libc::pollfd {
                    fd: fd.as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                };
                // Rounded up: a deadline 0.3 ms away must not become a busy loop of 0 ms polls.
                let ms = max.as_nanos().div_ceil(1_000_000) as libc::c_int;
                // SAFETY: one valid pollfd. An error (EINTR) only ends the nap early; the
                // caller checks everything again.
                unsafe { libc::poll(&mut p, 1, ms) };
            }
            None => std::thread::sleep(max),
        }
    }

    /// Naps until the child ends (reaping it) or `deadline` passes.
    pub(crate) fn reap_by(&self, deadline: Instant) -> io::Result<Option<Reaped>> {
        loop {
            if let Some(r) = self.try_reap()? {
                return Ok(Some(r));
            }
            let now = Instant::now();
            if now >= deadline {
                return Ok(None);
            }
            self.nap(deadline - now);
        }
    }

    /// Sends `sig` to the child, or to its process group.
    pub(crate) fn signal(&self, sig: libc::c_int) -> io::Result<()> {
        let target = if self.group { -self.pid } else { self.pid };
        // SAFETY: kill has no memory-safety preconditions; the pid is our unreaped child.
        if unsafe { libc::kill(target, sig) } == -1 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

fn pidfd_open(pid: libc::pid_t) -> Option<OwnedFd> {
    // SAFETY: pidfd_open takes a pid and flags and returns a new fd or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if fd < 0 {
        return None;
    }
    // SAFETY: the fd was just returned by the kernel and is owned by nobody else.
    Some(unsafe { OwnedFd::from_raw_fd(fd as libc::c_int) })
}
