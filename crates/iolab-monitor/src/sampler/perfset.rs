//! perf counters for a whole process: one [`PerfCounters`] set per thread that exists when
//! counting starts, each with `inherit = 1`, so that threads created later (by any of them)
//! are counted by their creator's set. Reading sums the sets.
//!
//! A thread created while the sets are being opened, by a thread whose set is not open yet,
//! is missed; opening takes microseconds per thread, before the run begins. Threads that
//! exit keep their counts (the kernel folds an inherited child's count into its parent's
//! event, and an event of an exited thread stays readable).

use std::io;

use crate::perf::{Counter, PerfCounters};

/// Counter values in [`Counter::ALL`] order; `None` = unavailable (never 0 for "absent").
pub(crate) type PerfValues = [Option<u64>; 6];

/// The sets of one process.
#[derive(Debug)]
pub(crate) struct ProcessPerf {
    sets: Vec<PerfCounters>,
    /// Counters that opened for every thread (a counter missing for some threads would give
    /// a partial sum, so it counts as unavailable).
    available: [bool; 6],
}

impl ProcessPerf {
    /// Open the counters for every thread of `pid` except `exclude_tid` (the sampler's own
    /// thread) and enable them. Returns the set and one note per unavailable counter.
    pub(crate) fn open(pid: u32, exclude_tid: i32) -> (Option<ProcessPerf>, Vec<String>) {
        let mut notes = Vec::new();
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
        let mut available = [true; 6];
        let mut why: [Option<String>; 6] = Default::default();
        for tid in tids {
            let set = PerfCounters::open_task(tid, &Counter::ALL);
            // The thread exited between listing and opening: nothing to count for it.
            if Counter::SOFTWARE
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
        if sets.is_empty() {
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
        (Some(ProcessPerf { sets, available }), notes)
    }

    /// Sum of every set, per counter.
    pub(crate) fn read(&self) -> io::Result<PerfValues> {
        let mut out: PerfValues = self.available.map(|a| a.then_some(0u64));
        for s in &self.sets {
            let r = s.read()?;
            for (slot, &c) in out.iter_mut().zip(Counter::ALL.iter()) {
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
