//! Run one command under supervision while something records: `iolab trace -- CMD` (the
//! block tracer records) and workloads that run other tools.
//!
//! [`run_recorded`] checks the [`Job`] (working directory, output files), calls the
//! recorder's `begin` hook, spawns the command right after it and watches it: it ends by
//! itself, or the cancel flag is set (the binary's Ctrl-C / SIGTERM handler), or the timeout
//! passes. The `end` hook runs right after the command ended — or at once when supervision
//! stops, before the grace period in which the command may still end ([`OnStop`]) — so the
//! recording covers the command and nothing after it. The [`Outcome`] says how it ended, its
//! wall time and its rusage (CPU, peak RSS, from wait4(2)).
//!
//! Nothing here prints; errors are typed ([`Error`]) with a hint.

mod error;
mod job;
mod outcome;
mod wait;

use std::convert::Infallible;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub use error::Error;
pub use job::{Job, Output};
pub use outcome::{End, OnStop, Outcome, Reason, Recording, Usage};

use wait::{Reaped, Waiter, POLL};

/// How to watch: the cancel flag, the grace period, the timeout, what to do on stopping.
#[derive(Debug, Clone)]
pub struct Watch {
    cancel: Arc<AtomicBool>,
    grace: Duration,
    timeout: Option<Duration>,
    on_stop: OnStop,
    /// False only in tests of the fallback for kernels without pidfd_open.
    use_pidfd: bool,
}

impl Watch {
    /// Watch with `cancel` (set by a signal handler, say): 2 s of grace, no timeout,
    /// [`OnStop::Terminate`].
    pub fn new(cancel: Arc<AtomicBool>) -> Watch {
        Watch {
            cancel,
            grace: Duration::from_secs(2),
            timeout: None,
            on_stop: OnStop::Terminate,
            use_pidfd: true,
        }
    }

    /// How long the command has to end after supervision stopped (and after SIGTERM).
    pub fn grace(mut self, grace: Duration) -> Watch {
        self.grace = grace;
        self
    }

    /// Stop supervising this long after the spawn (after `begin`, without a command).
    pub fn timeout(mut self, timeout: Option<Duration>) -> Watch {
        self.timeout = timeout;
        self
    }

    pub fn on_stop(mut self, on_stop: OnStop) -> Watch {
        self.on_stop = on_stop;
        self
    }

    fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }

    /// Why to stop now, or how long to nap before looking again.
    fn due(&self, deadline: Option<Instant>) -> ControlFlow<Reason, Duration> {
        if self.cancelled() {
            return ControlFlow::Break(Reason::Cancelled);
        }
        match deadline {
            None => ControlFlow::Continue(POLL),
            Some(d) => match d.checked_duration_since(Instant::now()) {
                Some(left) if !left.is_zero() => ControlFlow::Continue(left),
                _ => ControlFlow::Break(Reason::TimedOut),
            },
        }
    }
}

/// Runs `job` under `watch`, with no recorder.
pub fn run(job: &Job, watch: &Watch) -> Result<Outcome<()>, Error> {
    run_recorded(job, watch, || Ok::<_, Infallible>(()), |()| ())
}

/// Runs `job` under `watch` while a recorder records: `begin` starts it just before the
/// spawn (after the job's checks; a failing `begin` starts nothing), `end` stops it right
/// after the command ended, or as soon as the cancel flag or the timeout stops supervision.
/// If the spawn or the wait fails, the recorder is dropped without `end`.
pub fn run_recorded<R, E, T>(
    job: &Job,
    watch: &Watch,
    begin: impl FnOnce() -> Result<R, E>,
    end: impl FnOnce(R) -> T,
) -> Result<Outcome<T>, Error<E>> {
    let mut cmd = job.prepare()?;
    let recorder = begin().map_err(Error::Begin)?;
    let started = Instant::now();
    let child = cmd.spawn().map_err(|source| Error::Spawn {
        program: job.program(),
        source,
    })?;
    let pid = child.id();
    // Never waited for through `child` (its wait would lose the rusage); dropping it
    // neither waits nor kills.
    drop(child);
    let waiter = Waiter::new(pid, job.has_own_group(), watch.use_pidfd);
    let wait_error = |source| Error::Wait {
        program: job.program(),
        pid,
        source,
    };
    let deadline = watch.timeout.map(|t| started + t);
    let reason = loop {
        if let Some(r) = waiter.try_reap().map_err(wait_error)? {
            let recorded = end(recorder);
            // The flag may have been set as it ended: a Ctrl-C that reached it too.
            let end = if watch.cancelled() {
                End::Stopped {
                    reason: Reason::Cancelled,
                    status: Some(r.status),
                    sent: None,
                }
            } else {
                End::Exited(r.status)
            };
            return Ok(outcome(end, recorded, pid, started, Some(r)));
        }
        match watch.due(deadline) {
            ControlFlow::Break(reason) => break reason,
            ControlFlow::Continue(nap) => waiter.nap(nap),
        }
    };
    // At once: what happens during the grace period is not the command's run.
    let recorded = end(recorder);
    let (reaped, sent) = stop(&waiter, watch).map_err(wait_error)?;
    let end = End::Stopped {
        reason,
        status: reaped.as_ref().map(|r| r.status),
        sent,
    };
    Ok(outcome(end, recorded, pid, started, reaped))
}

/// Records with no command: `begin`, then `end` once the cancel flag is set or the timeout
/// passed.
pub fn record_until_stopped<R, E, T>(
    watch: &Watch,
    begin: impl FnOnce() -> Result<R, E>,
    end: impl FnOnce(R) -> T,
) -> Result<Recording<T>, E> {
    let recorder = begin()?;
    let started = Instant::now();
    let deadline = watch.timeout.map(|t| started + t);
    let reason = loop {
        match watch.due(deadline) {
            ControlFlow::Break(reason) => break reason,
            ControlFlow::Continue(nap) => std::thread::sleep(nap.min(POLL)),
        }
    };
    let recorded = end(recorder);
    Ok(Recording {
        reason,
        recorded,
        wall: started.elapsed(),
    })
}

fn outcome<T>(
    end: End,
    recorded: T,
    pid: u32,
    started: Instant,
    reaped: Option<Reaped>,
) -> Outcome<T> {
    Outcome {
        end,
        recorded,
        pid,
        wall: reaped.as_ref().map_or_else(Instant::now, |r| r.at) - started,
        usage: reaped.map(|r| r.usage),
    }
}

/// After SIGKILL, how long to wait for the command at least, whatever the grace: it cannot
/// refuse to die, but dying takes the kernel a moment.
const KILL_WAIT: Duration = Duration::from_secs(1);

/// Supervision stopped: [`OnStop`]. Returns the command's end if it came, and the last
/// signal sent.
fn stop(waiter: &Waiter, watch: &Watch) -> std::io::Result<(Option<Reaped>, Option<i32>)> {
    let mut sent = None;
    // A failed kill (EPERM: a set-user-ID program) leaves it to end by itself.
    let mut send = |sig| {
        if waiter.signal(sig).is_ok() {
            sent = Some(sig);
        }
    };
    if watch.on_stop == OnStop::Terminate {
        send(libc::SIGTERM);
    }
    if let Some(r) = waiter.reap_by(Instant::now() + watch.grace)? {
        return Ok((Some(r), sent));
    }
    if watch.on_stop == OnStop::Leave {
        return Ok((None, sent));
    }
    send(libc::SIGKILL);
    let r = waiter.reap_by(Instant::now() + watch.grace.max(KILL_WAIT))?;
    Ok((r, sent))
}

#[cfg(test)]
mod tests;
