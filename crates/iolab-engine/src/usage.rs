//! CPU time and context switches of the calling thread, from getrusage(RUSAGE_THREAD).
//! Per-thread rather than per-process so that setup work and the idle main thread are not
//! charged to the measurement (mobibench's CPU figure is system-wide; fio's is per job).

use std::ops::{Add, Sub};

use serde::Serialize;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Usage {
    pub user_ns: u64,
    pub sys_ns: u64,
    pub voluntary_switches: u64,
    pub involuntary_switches: u64,
    pub minor_faults: u64,
    pub major_faults: u64,
}

impl Usage {
    /// The CPU figures a run's record keeps.
    pub fn cpu(&self) -> iolab_kind::record::Cpu {
        iolab_kind::record::Cpu {
            user_ns: self.user_ns,
            sys_ns: self.sys_ns,
            voluntary_switches: self.voluntary_switches,
            involuntary_switches: self.involuntary_switches,
        }
    }
}

/// The calling thread's CPU time so far, in nanoseconds (`CLOCK_THREAD_CPUTIME_ID`: the
/// scheduler's runtime brought up to now, unlike getrusage's tick-sampled figures, which
/// can charge a pass of a few milliseconds nothing or a whole tick).
pub fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime fills the struct; this clock exists on every Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The calling thread's CPU at one moment, both ways: getrusage (user and system apart,
/// tick-sampled) and the scheduler's clock (exact). A timed region starts with one and ends
/// with [`CpuMark::since`].
#[derive(Debug, Clone, Copy)]
pub struct CpuMark {
    usage: Usage,
    ns: u64,
}

impl CpuMark {
    pub fn now() -> CpuMark {
        CpuMark {
            usage: Usage::thread(),
            ns: thread_cpu_ns(),
        }
    }

    /// What the calling thread used since the mark: getrusage's usage, and the scheduler's
    /// CPU time in nanoseconds.
    pub fn since(self) -> (Usage, u64) {
        let now = CpuMark::now();
        (now.usage - self.usage, now.ns.saturating_sub(self.ns))
    }
}

impl Usage {
    /// The calling thread's usage so far.
    pub fn thread() -> Usage {
        Self::get(libc::RUSAGE_THREAD)
    }

    /// The whole process's usage so far (all threads, living and joined).
    pub fn process() -> Usage {
        Self::get(libc::RUSAGE_SELF)
    }

    fn get(who: libc::c_int) -> Usage {
        // SAFETY: getrusage fills the struct; an all-zero rusage is a valid initial value.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // getrusage cannot fail for RUSAGE_THREAD/RUSAGE_SELF with a valid pointer.
        unsafe { libc::getrusage(who, &mut ru) };
        let ns = |tv: libc::timeval| tv.tv_sec as u64 * 1_000_000_000 + tv.tv_usec as u64 * 1000;
        Usage {
            user_ns: ns(ru.ru_utime),
            sys_ns: ns(ru.ru_stime),
            voluntary_switches: ru.ru_nvcsw as u64,
            involuntary_switches: ru.ru_nivcsw as u64,
            minor_faults: ru.ru_minflt as u64,
            major_faults: ru.ru_majflt as u64,
        }
    }

    pub fn cpu_ns(&self) -> u64 {
        self.user_ns + self.sys_ns
    }
}

impl Sub for Usage {
    type Output = Usage;
    fn sub(self, o: Usage) -> Usage {
        Usage {
            user_ns: self.user_ns.saturating_sub(o.user_ns),
            sys_ns: self.sys_ns.saturating_sub(o.sys_ns),
            voluntary_switches: self.voluntary_switches.saturating_sub(o.voluntary_switches),
            involuntary_switches: self
                .involuntary_switches
                .saturating_sub(o.involuntary_switches),
            minor_faults: self.minor_faults.saturating_sub(o.minor_faults),
            major_faults: self.major_faults.saturating_sub(o.major_faults),
        }
    }
}

impl Add for Usage {
    type Output = Usage;
    fn add(self, o: Usage) -> Usage {
        Usage {
            user_ns: self.user_ns + o.user_ns,
            sys_ns: self.sys_ns + o.sys_ns,
            voluntary_switches: self.voluntary_switches + o.voluntary_switches,
            involuntary_switches: self.involuntary_switches + o.involuntary_switches,
            minor_faults: self.minor_faults + o.minor_faults,
            major_faults: self.major_faults + o.major_faults,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_usage_grows_with_work() {
        // Accounting may be tick-based and a busy machine may not charge this thread a tick
        // for a while: spin for up to 2 s of wall time, in 10 ms rounds, until it shows.
        let before = Usage::thread();
        let start = std::time::Instant::now();
        let mut x = 0u64;
        let mut d = Usage::thread() - before;
        while d.cpu_ns() == 0 && start.elapsed() < std::time::Duration::from_secs(2) {
            let round = std::time::Instant::now();
            while round.elapsed() < std::time::Duration::from_millis(10) {
                x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(1));
            }
            d = Usage::thread() - before;
        }
        assert!(d.cpu_ns() > 0, "2 s of spinning charged no CPU time: {d:?}");
    }
}
