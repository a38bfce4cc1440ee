//! How a supervised command ended.

use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::time::Duration;

/// What iolab does to the command once the cancel flag is set or the timeout passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnStop {
    /// Never signal it: wait up to the grace period for it to end by itself (a command in
    /// iolab's process group got the terminal's Ctrl-C too), then leave it running.
    Leave,
    /// SIGTERM (to its process group, if it has one of its own), up to the grace period for
    /// it to end, then SIGKILL and up to another grace period.
    Terminate,
}

/// Why supervision stopped before the command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// The cancel flag was set.
    Cancelled,
    /// The timeout passed.
    TimedOut,
}

/// How the command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// It ended by itself (any exit status, or a signal iolab did not send).
    Exited(ExitStatus),
    /// Supervision stopped first (or in the same moment it ended).
    Stopped {
        reason: Reason,
        /// How it ended, if it did within the grace periods; `None`: still running.
        status: Option<ExitStatus>,
        /// The last signal iolab sent it ([`OnStop::Terminate`]), if any.
        sent: Option<i32>,
    },
}

impl End {
    /// The exit status, if the command ended.
    pub fn status(&self) -> Option<ExitStatus> {
        match *self {
            End::Exited(s) => Some(s),
            End::Stopped { status, .. } => status,
        }
    }
}

/// The child's resource usage, from wait4(2): its own and that of the children it waited
/// for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Usage {
    /// CPU time in user mode.
    pub user: Duration,
    /// CPU time in the kernel.
    pub system: Duration,
    /// Peak resident set size, KiB.
    pub max_rss_kib: u64,
    /// Context switches: waits (I/O, locks) and preemptions.
    pub voluntary_switches: u64,
    pub involuntary_switches: u64,
}

impl Usage {
    pub(crate) fn from_rusage(ru: &libc::rusage) -> Usage {
        let tv = |t: libc::timeval| {
            Duration::from_secs(t.tv_sec.max(0) as u64)
                + Duration::from_micros(t.tv_usec.max(0) as u64)
        };
        Usage {
            user: tv(ru.ru_utime),
            system: tv(ru.ru_stime),
            // Linux counts ru_maxrss in KiB.
            max_rss_kib: ru.ru_maxrss.max(0) as u64,
            voluntary_switches: ru.ru_nvcsw.max(0) as u64,
            involuntary_switches: ru.ru_nivcsw.max(0) as u64,
        }
    }
}

/// A supervised run of a command.
#[derive(Debug)]
pub struct Outcome<T> {
    pub end: End,
    /// What the recorder's `end` hook returned.
    pub recorded: T,
    /// The command's pid.
    pub pid: u32,
    /// From just before the spawn to its end (to when iolab stopped waiting, if it did not end).
    pub wall: Duration,
    /// Its resource usage, if it ended (was reaped).
    pub usage: Option<Usage>,
}

impl<T> Outcome<T> {
    /// Whether the run counts as interrupted: the cancel flag was set, or the command died
    /// of SIGINT — Ctrl-C reaches the terminal's whole process group, so a command in
    /// iolab's group may die of it before the flag is seen.
    pub fn interrupted(&self) -> bool {
        match self.end {
            End::Exited(s) => s.signal() == Some(libc::SIGINT),
            End::Stopped { reason, .. } => reason == Reason::Cancelled,
        }
    }
}

/// A recording with no command: until the cancel flag or the timeout.
#[derive(Debug)]
pub struct Recording<T> {
    pub reason: Reason,
    /// What the recorder's `end` hook returned.
    pub recorded: T,
    /// From just after `begin` to `end`.
    pub wall: Duration,
}
