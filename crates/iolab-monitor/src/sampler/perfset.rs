//! perf counters for a whole process: one [`PerfCounters`] set per thread that exists when
//! counting starts, each with `inherit = 1`, so that threads created later (by any of them)
//! are counted by their creator's set. Reading sums the sets.
//!
//! A thread created while the sets are being opened, by a thread whose set is not open yet,
//! is missed; opening takes microseconds per thread, before the run begins. Threads that
//! exit keep their counts (the kernel folds an inherited child's count into its parent's
//! event, and an event of an exited thread stays readable).
//!
//! The sampler's own process (iolab measuring itself, the usual case) gets its software
//! counts from the kernel's accounting instead: task-clock from `CLOCK_PROCESS_CPUTIME_ID`,
//! context switches and page faults from `getrusage(RUSAGE_SELF)`, each minus the sampler
//! thread's own share (`CLOCK_THREAD_CPUTIME_ID`, `RUSAGE_THREAD`). The kernel keeps these
//! for every thread, alive or exited, at no cost. A per-thread perf event is not free: the
//! kernel switches its context out and in at every context switch of the thread, about
//! 2 µs per switch on these VMs, which a worker that sleeps on every I/O pays once per
//! operation (15 % more CPU and 5-15 % less throughput for 4 KiB direct I/O on a loop
//! device). CPU migrations have no such account, so they are not counted for the own
//! process (a note says so); hardware counters, where the machine has a PMU, still need
//! perf events and are opened as before.

use std::io;

use crate::perf::{Counter, PerfCounters};

/// Counter values in [`Counter::ALL`] order; `None` = unavailable (never 0 for "absent").
pub(crate) type PerfValues = [Option<u64>; 6];

/// The sets of one process.
#[derive(Debug)]
pub(crate) struct ProcessPerf {
    sets: Vec<PerfCounters>,
    /// The counters the sets hold: [`Counter::ALL`], or only [`Counter::HARDWARE`] when the
    /// software ones come from the own process's accounting.
    opened: &'static [Counter],
    /// The sampler's own process: software counts from the kernel's accounting.
    own: bool,
    /// Counters that opened for every thread (a counter missing for some threads would give
    /// a partial sum, so it counts as unavailable).
    available: [bool; 6],
}

impl ProcessPerf {
    /// Open the counters for every thread of `pid` except `exclude_tid` (the sampler's own
    /// thread) and enable them. Returns the set and one note per unavailable counter.
    pub(crate) fn open(pid: u32, exclude_tid: i32) -> (Option<ProcessPerf>, Vec<String>) {
        let mut notes = Vec::new();
        let own = pid == std::process::id();
        let opened: &'static [Counter] = if own {
            &Counter::HARDWARE
        } else {
            &Counter::ALL
        };
        let tids = match std::fs::read_dir(format!("/proc/{pid}/task")) {
            Ok(rd) => rd
                .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
                .filter(|&t| t != exclude_tid)
                .collect::<Vec<_>>(),
            Err(e) => {
                notes.push(format!("perf: cannot list /proc/{pid}/task: {e}"));
                return (None, notes);
            }
        };
        let mut sets = Vec::with_capacity(tids.len());
        let mut available = Counter::ALL.map(|c| opened.contains(&c));
        let mut why: [Option<String>; 6] = Default::default();
        for tid in tids {
            let set = PerfCounters::open_task(tid, opened);
            // The thread exited between listing and opening: nothing to count for it.
            if opened
                .iter()
                .any(|&c| set.unavailable(c).is_some_and(|u| u.errno == libc::ESRCH))
            {
                continue;
            }
            for (i, &c) in Counter::ALL.iter().enumerate() {
                if let Some(u) = set.unavailable(c) {
                    available[i] = false;
                    why[i].get_or_insert_with(|| u.to_string());
                }
            }
            sets.push(set);
        }
        if own {
            // No perf event where nothing opened: the threads then carry no perf context.
            if !Counter::HARDWARE.iter().any(|&c| available[c as usize]) {
                sets.clear();
            }
            for c in OWN_ACCOUNTED {
                available[c as usize] = true;
            }
            notes.push(format!(
                "perf {}: not counted for iolab's own process, whose other software counts \
                 come from the kernel's accounting: a per-thread perf event costs every \
                 context switch (left out, not reported as 0)",
                Counter::CpuMigrations
            ));
        } else if sets.is_empty() {
            notes.push(format!("perf: no thread of process {pid} could be counted"));
            return (None, notes);
        }
        for (i, c) in Counter::ALL.iter().enumerate() {
            if let Some(w) = &why[i] {
                notes.push(format!("perf {c}: {w} (left out, not reported as 0)"));
            }
        }
        if !available.iter().any(|&a| a) {
            return (None, notes);
        }
        for s in &sets {
            if let Err(e) = s.enable() {
                notes.push(format!("perf: cannot enable counters: {e}"));
                return (None, notes);
            }
        }
        (
            Some(ProcessPerf {
                sets,
                opened,
                own,
                available,
            }),
            notes,
        )
    }

    /// Sum of every set, per counter.
    pub(crate) fn read(&self) -> io::Result<PerfValues> {
        let mut out: PerfValues = self.available.map(|a| a.then_some(0u64));
        if self.own {
            for (c, v) in OWN_ACCOUNTED.into_iter().zip(own_accounting()?) {
                out[c as usize] = Some(v);
            }
        }
        for s in &self.sets {
            let r = s.read()?;
            for (slot, &c) in out.iter_mut().zip(Counter::ALL.iter()) {
                if !self.opened.contains(&c) {
                    continue;
                }
                if let Some(v) = slot {
                    // Multiplexed and never scheduled: no value this time.
                    match r.get(c) {
                        Some(x) => *v = v.saturating_add(x),
                        None => *slot = None,
                    }
                }
            }
        }
        Ok(out)
    }
}

/// The software counters iolab's own process takes from the kernel's accounting, in the order
/// [`own_accounting`] returns them.
const OWN_ACCOUNTED: [Counter; 3] = [
    Counter::TaskClock,
    Counter::ContextSwitches,
    Counter::PageFaults,
];

/// The calling process's CPU nanoseconds, context switches and page faults, all threads alive
/// or exited, minus the calling (sampler) thread's own.
fn own_accounting() -> io::Result<[u64; 3]> {
    use crate::process::{rusage, Who};
    let cpu = |clock| -> io::Result<u64> {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: clock_gettime writes only into `ts`.
        if unsafe { libc::clock_gettime(clock, &mut ts) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(ts.tv_sec.max(0) as u64 * 1_000_000_000 + ts.tv_nsec.max(0) as u64)
    };
    let process = cpu(libc::CLOCK_PROCESS_CPUTIME_ID)?;
    let thread = cpu(libc::CLOCK_THREAD_CPUTIME_ID)?;
    let (p, t) = (rusage(Who::Process)?, rusage(Who::Thread)?);
    Ok([
        process.saturating_sub(thread),
        (p.nvcsw + p.nivcsw).saturating_sub(t.nvcsw + t.nivcsw),
        (p.minflt + p.majflt).saturating_sub(t.minflt + t.majflt),
    ])
}
