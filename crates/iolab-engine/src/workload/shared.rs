//! State shared by all worker threads of a workload run: the stop signal, global counters
//! for limits and finishon* flowops, the event generator, and block/wakeup and semaphore
//! objects. Nothing here is touched per I/O unless the workload uses it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// How often a waiting thread re-checks the stop signal.
pub(crate) const POLL: Duration = Duration::from_millis(50);

/// The run-wide stop signal.
#[derive(Default)]
pub(crate) struct Stop(AtomicBool);

impl Stop {
    #[inline]
    pub fn is_set(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    pub fn set(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// Sleeps for `d` unless the run stops first; false if it stopped.
    pub fn sleep(&self, d: Duration) -> bool {
        sleep_unless(&self.0, d)
    }
}

/// Sleeps for `d` in slices of [`POLL`] unless `flag` is set first (false then); a `d` past
/// any representable instant sleeps until the flag.
pub(crate) fn sleep_unless(flag: &AtomicBool, d: Duration) -> bool {
    let end = Instant::now().checked_add(d);
    loop {
        if flag.load(Ordering::Relaxed) {
            return false;
        }
        let left = end.map_or(POLL, |e| e.saturating_duration_since(Instant::now()));
        if left.is_zero() {
            return true;
        }
        std::thread::sleep(left.min(POLL));
    }
}

/// Data operations and bytes of all threads, kept only when a flowop needs run-wide totals
/// (iopslimit/opslimit/bwlimit/finishon* without a target), as filebench's controlstats.
#[derive(Default)]
pub(crate) struct GlobalCounts {
    pub ops: AtomicU64,
    pub bytes: AtomicU64,
}

/// filebench's eventgen without its busy-spinning thread: events are a virtual token bucket
/// in time — by instant t, `rate × (t − start)` events exist; a consumer that takes more
/// sleeps until they do. Unconsumed events accumulate, as in filebench's queue.
pub(crate) struct EventGen {
    rate: f64,
    start: Instant,
    taken: AtomicU64,
}

impl EventGen {
    pub fn new(rate: u64, start: Instant) -> EventGen {
        EventGen {
            rate: rate as f64,
            start,
            taken: AtomicU64::new(0),
        }
    }

    /// Takes `n` events, waiting until they have been generated; false if the run stopped.
    pub fn take(&self, n: u64, stop: &Stop) -> bool {
        let upto = self.taken.fetch_add(n, Ordering::Relaxed) + n;
        let due = self.start + Duration::from_secs_f64(upto as f64 / self.rate);
        let now = Instant::now();
        if due <= now {
            return true;
        }
        stop.sleep(due - now)
    }
}

/// A condition that `block` waits on and `wakeup` broadcasts. A wakeup with no waiter is
/// lost, as with filebench's pthread condition.
#[derive(Default)]
pub(crate) struct Cond {
    generation: Mutex<u64>,
    cv: Condvar,
}

impl Cond {
    pub fn wait(&self, stop: &Stop) {
        let mut g = self.generation.lock().unwrap_or_else(|e| e.into_inner());
        let start = *g;
        while *g == start && !stop.is_set() {
            g = self
                .cv
                .wait_timeout(g, POLL)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    pub fn broadcast(&self) {
        *self.generation.lock().unwrap_or_else(|e| e.into_inner()) += 1;
        self.cv.notify_all();
    }
}

/// semblock/sempost as filebench does them with a pair of SysV semaphores: `posted` counts
/// posts not yet consumed; `room` is how many more a blocking poster may make. semblock first
/// gives `value` of room back, then waits for `value` posts; a blocking sempost waits for room
/// before posting. `room` starts at the semblock's `highwater`.
pub(crate) struct Semaphore {
    state: Mutex<(u64, u64)>,
    cv: Condvar,
}

impl Semaphore {
    pub fn new(highwater: u64) -> Semaphore {
        Semaphore {
            state: Mutex::new((0, highwater)),
            cv: Condvar::new(),
        }
    }

    /// semblock: waits for `n` posts; false if the run stopped first.
    pub fn acquire(&self, n: u64, stop: &Stop) -> bool {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.1 += n;
        self.cv.notify_all();
        while st.0 < n {
            if stop.is_set() {
                return false;
            }
            st = self
                .cv
                .wait_timeout(st, POLL)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        st.0 -= n;
        true
    }

    /// sempost: adds `n` posts; a blocking poster first waits for room. False if the run
    /// stopped while waiting.
    pub fn post(&self, n: u64, blocking: bool, stop: &Stop) -> bool {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if blocking {
            while st.1 < n {
                if stop.is_set() {
                    return false;
                }
                st = self
                    .cv
                    .wait_timeout(st, POLL)
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
            }
            st.1 -= n;
        }
        st.0 += n;
        self.cv.notify_all();
        true
    }
}

/// Every instance of each named block/semblock flowop, so that a wakeup/sempost reaches all
/// of them (filebench signals every instance of the target name).
#[derive(Default)]
pub(crate) struct SyncObjects {
    pub conds: HashMap<String, Vec<Arc<Cond>>>,
    pub sems: HashMap<String, Vec<Arc<Semaphore>>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eventgen_paces_consumers() {
        let stop = Stop::default();
        let start = Instant::now();
        let g = EventGen::new(1000, start);
        for _ in 0..200 {
            assert!(g.take(1, &stop));
        }
        let took = start.elapsed();
        // 200 events at 1000/s take at least 0.2 s: a lower bound the pacing guarantees (a
        // loaded machine can only make it longer, so there is no upper one).
        assert!(took >= Duration::from_millis(195), "{took:?}");
    }

    #[test]
    fn semaphore_counts_and_stops() {
        let stop = Stop::default();
        let s = Semaphore::new(0);
        assert!(s.post(3, false, &stop));
        assert!(s.acquire(2, &stop));
        stop.set();
        assert!(!s.acquire(2, &stop), "only one left, and the run stopped");
    }

    #[test]
    fn blocking_posters_wait_for_room_that_semblock_gives_back() {
        let _hang = iolab_testkit::timeout(120);
        // oltp's log writer: highwater 2, value 3. Posters get 2 posts of room; the blocked
        // side gives 3 more back before it waits, so it can collect its 3 posts.
        let stop = Stop::default();
        let s = Arc::new(Semaphore::new(2));
        assert!(s.post(1, true, &stop));
        assert!(s.post(1, true, &stop));
        let s2 = s.clone();
        let poster = std::thread::spawn(move || s2.post(1, true, &Stop::default()));
        std::thread::sleep(Duration::from_millis(30));
        assert!(!poster.is_finished(), "no room left: the third post waits");
        assert!(s.acquire(3, &stop));
        assert!(poster.join().unwrap());
    }

    #[test]
    fn cond_wakes_a_waiter() {
        let _hang = iolab_testkit::timeout(120);
        let c = Arc::new(Cond::default());
        let c2 = c.clone();
        let t = std::thread::spawn(move || c2.wait(&Stop::default()));
        // A wakeup before the waiter waits is lost: keep waking until it has been seen.
        while !t.is_finished() {
            c.broadcast();
            std::thread::sleep(Duration::from_millis(5));
        }
        t.join().unwrap();
    }
}
