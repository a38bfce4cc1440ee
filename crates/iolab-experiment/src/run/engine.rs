//! The runner's side of the seam ([`iolab_kind::run`]): the hooks a run calls, turned into
//! the runner's work — dropping caches and starting the monitors where the timed region
//! starts, stopping them where it ends — and into events for the command's display.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use iolab_kind::run::{Event, RunFailure, RunHooks};

use super::monitor::Watch;
use super::{Phase, RunnerObserver};

/// The runner's [`RunHooks`] for one run.
pub(crate) struct Hooks<'a> {
    pub outer: &'a mut dyn RunnerObserver,
    pub drop_caches: bool,
    pub drop_error: Option<String>,
    pub drop_freed_kib: Option<u64>,
    /// The workload's planned run time (progress fractions).
    pub planned: Option<Duration>,
    pub watch: Watch,
    /// Shell commands the workload skipped, for the checks.
    pub skipped_system: Vec<String>,
    /// The run's files, whose leaving the page cache the drop checks.
    pub run_files: Vec<PathBuf>,
    /// Under MPI: the ranks, whose timed regions start together.
    pub ranks: Option<&'a dyn iolab_kind::Ranks>,
    /// Under MPI: set when another rank failed, so that this rank's workload ends too (the
    /// run's cancel flag).
    pub abort: Option<Arc<AtomicBool>>,
    /// Under MPI: why this rank's run ended with another's failure.
    pub rank_error: Option<RunFailure>,
    /// Under MPI: the timed region on this rank's clock (Unix ns), from the start barrier's
    /// release.
    pub timed: Option<[u64; 2]>,
}

impl Hooks<'_> {
    /// Every rank at once: a sync that fails ends this rank's run (another rank failed).
    fn rank_barrier(&mut self) {
        let Some(r) = self.ranks else { return };
        if let Err(f) = r.barrier() {
            if let Some(a) = &self.abort {
                a.store(true, Ordering::Relaxed);
            }
            self.rank_error.get_or_insert(f);
        }
    }
}

impl RunHooks for Hooks<'_> {
    fn run_files(&mut self, files: Vec<PathBuf>) {
        self.run_files = files;
    }

    /// Drops caches where the timed region is about to start (after population, so the run
    /// starts cold), then starts the monitors.
    fn timed_start(&mut self) {
        // Every rank has made its files before any drops caches.
        self.rank_barrier();
        if self.drop_caches {
            self.outer.phase(Phase::DroppingCaches);
            match iolab_sut::drop_caches(&self.run_files) {
                Ok(r) => {
                    self.drop_freed_kib = Some(r.freed_kib());
                    self.watch.caches_dropped(&r);
                }
                Err(e) => self.drop_error = Some(format!("dropping caches: {e}")),
            }
        }
        self.watch.start();
        // The timed region starts on every rank at this barrier's release.
        if self.ranks.is_some() {
            self.rank_barrier();
            self.timed = Some([super::ranks::unix_ns(), 0]);
        }
        let outer = &mut *self.outer;
        self.watch.quiet(|| {
            outer.phase(Phase::Running);
            outer.event(&Event::TimedStart);
        });
    }

    /// The run's files leave the page cache again (the drop's own I/O is not the workload's).
    fn between_phases(&mut self) {
        if !self.drop_caches {
            return;
        }
        let files = &self.run_files;
        let r = self.watch.quiet(|| iolab_sut::drop_caches(files));
        match r {
            Ok(r) => {
                *self.drop_freed_kib.get_or_insert(0) += r.freed_kib();
                self.watch.caches_dropped(&r);
            }
            Err(e) => self.drop_error = Some(format!("dropping caches between phases: {e}")),
        }
    }

    fn timed_end(&mut self) {
        if let Some(t) = &mut self.timed {
            t[1] = super::ranks::unix_ns();
        }
        self.watch.stop();
        self.outer.event(&Event::TimedEnd);
    }

    fn supervising(&mut self) {
        self.watch.supervising();
    }

    /// Forwarded to the display outside the syscall view: iolab's progress line is not the
    /// workload's writes.
    fn event(&mut self, event: &Event<'_>) {
        let Hooks {
            watch,
            outer,
            planned,
            skipped_system,
            ..
        } = self;
        watch.quiet(|| forward(&mut **outer, *planned, skipped_system, event));
    }
}

/// What the display and the checks get of a workload's event.
fn forward(
    outer: &mut dyn RunnerObserver,
    runner_planned: Option<Duration>,
    skipped_system: &mut Vec<String>,
    event: &Event<'_>,
) {
    {
        match *event {
            Event::Records {
                done,
                planned,
                elapsed,
            } if planned > 0 => outer.progress(done as f64 / planned as f64, elapsed),
            Event::Operations {
                elapsed, planned, ..
            } => {
                let planned = runner_planned.unwrap_or(planned);
                if !planned.is_zero() {
                    outer.progress(elapsed.as_secs_f64() / planned.as_secs_f64(), elapsed);
                }
            }
            Event::SystemSkipped(command) => skipped_system.push(command.to_string()),
            _ => {}
        }
        match *event {
            // The display sees the planned time the runner knows.
            Event::Operations {
                ops,
                elapsed,
                planned,
            } => outer.event(&Event::Operations {
                ops,
                elapsed,
                planned: runner_planned.unwrap_or(planned),
            }),
            _ => outer.event(event),
        }
    }
}
