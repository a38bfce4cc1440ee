//! Starting worker threads together, safely when some cannot be started.
//!
//! [`Gate`] is a one-shot barrier that can also be aborted: when the OS refuses a thread
//! (`EAGAIN` under `ulimit -u` or `kernel.threads-max`), the threads already started must
//! not wait forever for parties that will never come, and no stand-in thread may be needed
//! to release them (it could not be started either). [`worker_builder`] names the threads
//! and is the one place where they are configured.

use iolab_kind::run::{Event, RunHooks};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

/// How often a crew's progress ([`Event::Records`]) is reported, and how often the thread
/// watching a run's workers looks at them.
pub const PROGRESS_PERIOD: Duration = Duration::from_millis(500);

/// Where workers sign off, so that the thread waiting for them wakes the moment the last one
/// is done. Polling `JoinHandle::is_finished` after a worker's wake-up loses that wake-up
/// whenever the waiting thread runs before the worker has returned (on a single CPU it
/// always does): it then sleeps out a whole progress period, which lengthens every pass by
/// up to half a second and, with threads that each time their own share, what the waiting
/// thread measures over them all.
pub struct FinishLine {
    left: AtomicUsize,
    waiter: thread::Thread,
}

impl FinishLine {
    /// A finish line for `workers` workers, waited for by the calling thread.
    pub fn new(workers: usize) -> FinishLine {
        FinishLine {
            left: AtomicUsize::new(workers),
            waiter: thread::current(),
        }
    }

    /// A worker's sign-off, given when it is dropped: on return and on unwinding alike.
    pub fn sign(&self) -> SignOff<'_> {
        SignOff(self)
    }

    pub fn all_done(&self) -> bool {
        self.left.load(Ordering::Acquire) == 0
    }

    /// Parks the waiting thread until every worker has signed off, calling `tick` after each
    /// wake-up (at least every `period`).
    pub fn wait(&self, period: Duration, mut tick: impl FnMut()) {
        while !self.all_done() {
            thread::park_timeout(period);
            tick();
        }
    }
}

/// See [`FinishLine::sign`].
pub struct SignOff<'a>(&'a FinishLine);

impl Drop for SignOff<'_> {
    fn drop(&mut self) {
        self.0.left.fetch_sub(1, Ordering::Release);
        self.0.waiter.unpark();
    }
}

/// A one-shot barrier for `parties` threads that [`Gate::abort`] can release early.
pub struct Gate {
    parties: usize,
    state: Mutex<GateState>,
    cv: Condvar,
}

#[derive(Default)]
struct GateState {
    arrived: usize,
    open: bool,
    aborted: bool,
}

impl Gate {
    pub fn new(parties: usize) -> Gate {
        Gate {
            parties,
            state: Mutex::new(GateState::default()),
            cv: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, GateState> {
        // The state is a few plain fields, consistent after any panic.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Arrives at the gate: the outcome when it is decided at once (the gate was open or
    /// aborted, or this was the last party), else the lock to wait on.
    fn arrive(&self) -> Result<bool, MutexGuard<'_, GateState>> {
        let mut s = self.lock();
        if s.open {
            return Ok(true);
        }
        if s.aborted {
            return Ok(false);
        }
        s.arrived += 1;
        if s.arrived >= self.parties {
            s.open = true;
            self.cv.notify_all();
            return Ok(true);
        }
        Err(s)
    }

    /// Waits until every party has arrived (true) or the gate is aborted (false; at once if
    /// it already was).
    pub fn wait(&self) -> bool {
        let mut s = match self.arrive() {
            Ok(decided) => return decided,
            Err(s) => s,
        };
        while !s.open && !s.aborted {
            s = self.cv.wait(s).unwrap_or_else(|p| p.into_inner());
        }
        s.open
    }

    /// [`Gate::wait`] that calls `tick` (outside the lock) at least every `period` while it
    /// waits: the caller's way to report the parties' set-up.
    pub fn wait_ticking(&self, period: Duration, mut tick: impl FnMut()) -> bool {
        let mut s = match self.arrive() {
            Ok(decided) => return decided,
            Err(s) => s,
        };
        while !s.open && !s.aborted {
            let (g, timeout) = self
                .cv
                .wait_timeout(s, period)
                .unwrap_or_else(|p| p.into_inner());
            s = g;
            if timeout.timed_out() && !s.open && !s.aborted {
                drop(s);
                tick();
                s = self.lock();
            }
        }
        s.open
    }

    /// Releases every waiting party with false, and makes later waits return false at once.
    /// No effect once the gate has opened.
    pub fn abort(&self) {
        let mut s = self.lock();
        if !s.open {
            s.aborted = true;
            self.cv.notify_all();
        }
    }
}

/// Aborts the gates when dropped during a panic, so that a worker that panics before it
/// reaches them cannot leave the others (and the caller) waiting forever.
pub struct AbortOnPanic<'a>(pub [&'a Gate; 2]);

impl Drop for AbortOnPanic<'_> {
    fn drop(&mut self) {
        if thread::panicking() {
            for g in self.0 {
                g.abort();
            }
        }
    }
}

/// The OS refused worker `handles.len()` of `wanted`: releases the workers already waiting at
/// the gates (they return at once), joins them, and says so.
pub fn spawn_failed<T>(
    gates: [&Gate; 2],
    handles: Vec<thread::ScopedJoinHandle<'_, T>>,
    wanted: usize,
    source: std::io::Error,
) -> crate::EngineError {
    for g in gates {
        g.abort();
    }
    let started = handles.len();
    for h in handles {
        let _ = h.join();
    }
    crate::EngineError::Spawn {
        wanted,
        started,
        source,
    }
}

/// What a crew of worker threads shares to start together and be watched while it works:
/// the two gates (every worker has set up / go), the instant they were released, the flag
/// that tells them to stop, and each one's count of completed operations.
pub struct Crew {
    /// Abortable, so that a thread the OS refuses to start cannot leave the others waiting.
    pub ready: Gate,
    pub go: Gate,
    start: OnceLock<Instant>,
    /// Set when the run is cancelled or a worker failed: the others stop.
    pub abort: AtomicBool,
    pub progress: Vec<Progress>,
    /// Each worker's set-up work done and in all (units of its choosing; a worker that
    /// reports none leaves both at 0), reported as preparing while the crew sets up.
    pub setup_done: Vec<Progress>,
    pub setup_total: Vec<Progress>,
    /// What those counters count (singular), for the progress display.
    pub setup_unit: &'static str,
}

impl Crew {
    /// A crew of `n` workers (the caller is the gates' last party).
    pub fn new(n: usize) -> Crew {
        Crew {
            ready: Gate::new(n + 1),
            go: Gate::new(n + 1),
            start: OnceLock::new(),
            abort: AtomicBool::new(false),
            progress: (0..n).map(|_| Progress::default()).collect(),
            setup_done: (0..n).map(|_| Progress::default()).collect(),
            setup_total: (0..n).map(|_| Progress::default()).collect(),
            setup_unit: "step",
        }
    }

    /// Passes both gates: true when the crew was released, false when the run ended before
    /// its start (a thread could not be started, a worker panicked or failed to set up).
    pub fn released(&self) -> bool {
        self.ready.wait() && self.go.wait()
    }

    /// The instant the crew was released (set before any worker passes the `go` gate).
    pub fn start(&self) -> Instant {
        *self
            .start
            .get()
            .expect("the start is set before the workers are released")
    }

    /// Tells `hooks` the workers' set-up so far, summed over them, when any reports one.
    fn report_setup(&self, hooks: &mut dyn RunHooks) {
        let sum = |v: &[Progress]| v.iter().map(|p| p.0.load(Ordering::Relaxed)).sum::<u64>();
        let total = sum(&self.setup_total);
        if total > 0 {
            hooks.event(&Event::SettingUp {
                done: sum(&self.setup_done),
                total,
                unit: self.setup_unit,
            });
        }
    }

    /// Runs `work(t)` on threads `name0`, `name1`, … (one per progress counter). Each worker
    /// sets up, then calls [`Crew::released`]; once all are ready, `hooks.timed_start()` runs and
    /// they are released together. While they work the caller reports progress towards
    /// `planned` operations (or, under a time `limit`, towards what the rate so far will reach
    /// by then) and turns `cancel` into `abort`. Nobody starts when a thread
    /// cannot be started (its error is the only outcome), a worker panics before the gates,
    /// or a worker sets `abort` while setting up.
    pub fn run<T: Send, E: Send + From<crate::EngineError>>(
        &self,
        name: &str,
        planned: u64,
        limit: Option<Duration>,
        cancel: &AtomicBool,
        hooks: &mut dyn RunHooks,
        work: &(dyn Fn(usize) -> Result<T, E> + Sync),
    ) -> Vec<Result<T, E>> {
        let n = self.progress.len();
        let line = FinishLine::new(n);
        thread::scope(|s| {
            let mut handles = Vec::with_capacity(n);
            for t in 0..n {
                let line = &line;
                let h = worker_builder(format!("{name}{t}"), t, None).spawn_scoped(s, move || {
                    let _signed = line.sign();
                    work(t)
                });
                match h {
                    Ok(h) => handles.push(h),
                    Err(e) => {
                        self.abort.store(true, Ordering::Relaxed);
                        let err = spawn_failed([&self.ready, &self.go], handles, n, e);
                        return vec![Err(err.into())];
                    }
                }
            }
            let set_up = self.ready.wait_ticking(PROGRESS_PERIOD, || {
                if cancel.load(Ordering::Relaxed) {
                    self.abort.store(true, Ordering::Relaxed);
                }
                self.report_setup(hooks);
            });
            if !set_up || self.abort.load(Ordering::Relaxed) {
                // A worker panicked or failed before the start: that is the error.
                self.go.abort();
                return handles.into_iter().map(join).collect();
            }
            // The set-up's last word: all of it done.
            self.report_setup(hooks);
            hooks.timed_start();
            let _ = self.start.set(Instant::now());
            if !self.go.wait() {
                return handles.into_iter().map(join).collect();
            }
            self.watch(&line, planned, limit, cancel, hooks);
            let out: Vec<_> = handles.into_iter().map(join).collect();
            hooks.timed_end();
            out
        })
    }

    /// The caller's part while the workers run: every [`PROGRESS_PERIOD`] (or when a worker
    /// signs off), tell `hooks` the operations done so far (against [`expected`]), and set
    /// `abort` once `cancel` is set. Returns when every worker has signed off at `line`.
    fn watch(
        &self,
        line: &FinishLine,
        planned: u64,
        limit: Option<Duration>,
        cancel: &AtomicBool,
        hooks: &mut dyn RunHooks,
    ) {
        let start = self.start();
        line.wait(PROGRESS_PERIOD, || {
            if cancel.load(Ordering::Relaxed) {
                self.abort.store(true, Ordering::Relaxed);
            }
            let done = self
                .progress
                .iter()
                .map(|p| p.0.load(Ordering::Relaxed))
                .sum();
            let elapsed = start.elapsed();
            hooks.event(&Event::Records {
                done,
                planned: expected(done, planned, limit, elapsed),
                elapsed,
            });
        });
    }
}

/// A worker's outcome; a panic is an error.
fn join<T, E: From<crate::EngineError>>(
    h: thread::ScopedJoinHandle<'_, Result<T, E>>,
) -> Result<T, E> {
    h.join()
        .unwrap_or_else(|p| Err(crate::EngineError::from_panic(p).into()))
}

/// A worker's completed-operation count, alone on its cache line so that publishing it costs
/// a plain store and never bounces a line between cores.
#[repr(align(64))]
#[derive(Default)]
pub struct Progress(pub AtomicU64);

/// The operations a run will have done when it ends: `planned`, or under a time `limit` what
/// the rate so far reaches by then (never fewer than are done), so that progress tracks the
/// clock when the limit comes first.
fn expected(done: u64, planned: u64, limit: Option<Duration>, elapsed: Duration) -> u64 {
    match limit {
        Some(l) if done > 0 && !elapsed.is_zero() => {
            let by_then = done as f64 * l.as_secs_f64() / elapsed.as_secs_f64();
            (by_then as u64).clamp(done, planned.max(done))
        }
        _ => planned,
    }
}

#[cfg(any(test, feature = "testing"))]
thread_local! {
    /// Test hook (for the engine's tests and, with the `testing` feature, the kinds'): workers
    /// with an index at or above this are given a stack larger than any address space, so
    /// the OS refuses to create them exactly as it does under `ulimit -u` (pthread_create
    /// fails with EAGAIN) and the real error path runs.
    pub static FAIL_SPAWN_FROM: std::cell::Cell<Option<usize>> =
        const { std::cell::Cell::new(None) };
}

/// The builder for worker `index`.
pub fn worker_builder(name: String, index: usize, stack: Option<usize>) -> thread::Builder {
    let mut b = thread::Builder::new().name(name);
    if let Some(s) = stack {
        b = b.stack_size(s);
    }
    #[cfg(any(test, feature = "testing"))]
    if FAIL_SPAWN_FROM
        .with(|f| f.get())
        .is_some_and(|k| index >= k)
    {
        b = b.stack_size(1 << 60);
    }
    #[cfg(not(any(test, feature = "testing")))]
    let _ = index;
    b
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn progress_under_a_time_limit_follows_the_clock() {
        let s = Duration::from_secs;
        // No limit, or nothing done yet: the plan.
        assert_eq!(expected(10, 1000, None, s(1)), 1000);
        assert_eq!(expected(0, 1000, Some(s(10)), s(1)), 1000);
        // A tenth of the way to the limit with 10 done: 100 expected, 10 %.
        assert_eq!(expected(10, 1000, Some(s(10)), s(1)), 100);
        // The plan still caps it, and past the limit what is done is all there will be.
        assert_eq!(expected(500, 1000, Some(s(10)), s(1)), 1000);
        assert_eq!(expected(40, 1000, Some(s(10)), s(20)), 40);
    }

    #[test]
    fn a_ticking_wait_ticks_until_the_others_arrive() {
        let _hang = iolab_testkit::timeout(120);
        let g = Gate::new(2);
        let ticked = AtomicUsize::new(0);
        thread::scope(|s| {
            // The other party arrives only once the waiter has ticked twice.
            s.spawn(|| {
                while ticked.load(Ordering::Acquire) < 2 {
                    thread::yield_now();
                }
                assert!(g.wait());
            });
            let open = g.wait_ticking(Duration::from_millis(1), || {
                ticked.fetch_add(1, Ordering::Release);
            });
            assert!(open);
        });
        assert!(ticked.load(Ordering::Relaxed) >= 2);
        // An aborted gate ends a ticking wait with false.
        let g = Gate::new(2);
        let open = g.wait_ticking(Duration::from_millis(1), || g.abort());
        assert!(!open);
    }

    #[test]
    fn opens_when_all_arrive() {
        let _hang = iolab_testkit::timeout(120);
        let g = Gate::new(3);
        thread::scope(|s| {
            let a = s.spawn(|| g.wait());
            let b = s.spawn(|| g.wait());
            assert!(g.wait());
            assert!(a.join().unwrap() && b.join().unwrap());
        });
        g.abort();
        assert!(g.wait(), "an open gate stays open");
    }

    #[test]
    fn abort_releases_waiters_and_later_arrivals() {
        let _hang = iolab_testkit::timeout(120);
        let g = Gate::new(5);
        thread::scope(|s| {
            let a = s.spawn(|| g.wait());
            thread::sleep(Duration::from_millis(20));
            g.abort();
            assert!(!a.join().unwrap());
        });
        assert!(!g.wait());
    }

    #[test]
    fn a_panicking_party_aborts_the_gates() {
        let _hang = iolab_testkit::timeout(120);
        let (g1, g2) = (Gate::new(2), Gate::new(2));
        thread::scope(|s| {
            let h = s.spawn(|| {
                let _guard = AbortOnPanic([&g1, &g2]);
                panic!("before the gate");
            });
            assert!(!g1.wait());
            assert!(h.join().is_err());
        });
        assert!(!g2.wait());
    }

    #[test]
    fn the_waiter_wakes_when_the_last_worker_signs_off_not_when_it_returns() {
        let _hang = iolab_testkit::timeout(120);
        let line = FinishLine::new(2);
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let line = &line;
        thread::scope(|s| {
            s.spawn(|| drop(line.sign()));
            s.spawn(move || {
                drop(line.sign());
                // Signed off but not returned, as a worker is between its wake-up call and
                // its exit: it returns only once the wait below has ended. A waiter that
                // watched the threads instead would sleep out its hour-long period.
                rx.recv().unwrap();
            });
            line.wait(Duration::from_secs(3600), || {});
            assert!(line.all_done());
            tx.send(()).unwrap();
        });
    }

    #[test]
    fn a_panicking_worker_still_signs_off() {
        let _hang = iolab_testkit::timeout(120);
        let line = FinishLine::new(1);
        thread::scope(|s| {
            let h = s.spawn(|| {
                let _signed = line.sign();
                panic!("mid-pass");
            });
            line.wait(Duration::from_secs(3600), || {});
            assert!(h.join().is_err());
        });
    }

    #[test]
    fn the_spawn_hook_makes_the_os_refuse_the_thread() {
        FAIL_SPAWN_FROM.with(|f| f.set(Some(1)));
        let ok = worker_builder("ok".into(), 0, None).spawn(|| 1).unwrap();
        let err = worker_builder("refused".into(), 1, Some(1 << 16))
            .spawn(|| 2)
            .unwrap_err();
        FAIL_SPAWN_FROM.with(|f| f.set(None));
        assert_eq!(ok.join().unwrap(), 1);
        assert_eq!(err.raw_os_error(), Some(libc::EAGAIN), "{err}");
    }
}
