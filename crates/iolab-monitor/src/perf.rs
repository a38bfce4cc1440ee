//! perf counters through `perf_event_open(2)`, counting the calling thread and every thread
//! or process it creates afterwards (`inherit = 1`).
//!
//! Open the counters on the thread that will spawn the workers, *before* spawning them:
//! threads that already exist are not counted ([`PerfCounters::open_task`] opens a set for
//! one given thread; [`crate::sampler`] opens one per existing thread of a process to count
//! the whole process). Reading returns the sum over the thread and
//! its descendants, alive or exited. Counts are cumulative from [`PerfCounters::enable`]: take
//! differences between readings ([`PerfReading::delta`]). There is deliberately no reset:
//! `PERF_EVENT_IOC_RESET` clears the parent's own count but not what exited inherited threads
//! already folded into it, so a "reset" counter would not read 0.
//!
//! Software counters (task-clock, context-switches, cpu-migrations, page-faults) are kept by
//! the kernel itself and work everywhere perf is allowed. Hardware counters (cycles,
//! instructions) need a PMU; virtual machines often have none, and the kernel then refuses
//! them (ENOENT / EOPNOTSUPP). Such a counter is reported as unavailable — `None`, never 0.

use std::fmt;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// A counter iolab knows how to open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Counter {
    /// `task-clock`: CPU time of the counted tasks, nanoseconds.
    TaskClock,
    /// `context-switches`: voluntary and involuntary.
    ContextSwitches,
    /// `cpu-migrations`: moves of a task to another CPU.
    CpuMigrations,
    /// `page-faults`: minor and major.
    PageFaults,
    /// `cycles` (hardware).
    Cycles,
    /// `instructions` (hardware).
    Instructions,
}

impl Counter {
    /// The software counters the spec asks for.
    pub const SOFTWARE: [Counter; 4] = [
        Counter::TaskClock,
        Counter::ContextSwitches,
        Counter::CpuMigrations,
        Counter::PageFaults,
    ];
    /// The hardware counters attempted.
    pub const HARDWARE: [Counter; 2] = [Counter::Cycles, Counter::Instructions];
    /// Software then hardware.
    pub const ALL: [Counter; 6] = [
        Counter::TaskClock,
        Counter::ContextSwitches,
        Counter::CpuMigrations,
        Counter::PageFaults,
        Counter::Cycles,
        Counter::Instructions,
    ];

    /// perf's name for it (`perf stat -e NAME`).
    pub fn name(self) -> &'static str {
        match self {
            Counter::TaskClock => "task-clock",
            Counter::ContextSwitches => "context-switches",
            Counter::CpuMigrations => "cpu-migrations",
            Counter::PageFaults => "page-faults",
            Counter::Cycles => "cycles",
            Counter::Instructions => "instructions",
        }
    }

    /// Whether it needs a hardware PMU.
    pub fn is_hardware(self) -> bool {
        matches!(self, Counter::Cycles | Counter::Instructions)
    }

    /// (`perf_event_attr.type`, `.config`) from include/uapi/linux/perf_event.h.
    fn type_config(self) -> (u32, u64) {
        const HW: u32 = 0; // PERF_TYPE_HARDWARE
        const SW: u32 = 1; // PERF_TYPE_SOFTWARE
        match self {
            Counter::Cycles => (HW, 0),          // PERF_COUNT_HW_CPU_CYCLES
            Counter::Instructions => (HW, 1),    // PERF_COUNT_HW_INSTRUCTIONS
            Counter::TaskClock => (SW, 1),       // PERF_COUNT_SW_TASK_CLOCK
            Counter::PageFaults => (SW, 2),      // PERF_COUNT_SW_PAGE_FAULTS
            Counter::ContextSwitches => (SW, 3), // PERF_COUNT_SW_CONTEXT_SWITCHES
            Counter::CpuMigrations => (SW, 4),   // PERF_COUNT_SW_CPU_MIGRATIONS
        }
    }
}

impl fmt::Display for Counter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a counter could not be opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unavailable {
    /// errno of `perf_event_open` (ENOENT / EOPNOTSUPP: no such event here, typically no
    /// PMU; EACCES / EPERM: `kernel.perf_event_paranoid` or a seccomp filter; ENOSYS: no perf).
    pub errno: i32,
}

impl fmt::Display for Unavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "not supported: {}",
            io::Error::from_raw_os_error(self.errno)
        )
    }
}

impl std::error::Error for Unavailable {}

/// `struct perf_event_attr` up to `PERF_ATTR_SIZE_VER0` (64 bytes), which every kernel
/// since 2.6.31 accepts; the fields iolab needs are all in it.
#[repr(C)]
#[derive(Default)]
struct PerfEventAttr {
    type_: u32,
    size: u32,
    config: u64,
    sample_period: u64,
    sample_type: u64,
    read_format: u64,
    flags: u64,
    wakeup_events: u32,
    bp_type: u32,
    config1: u64,
}

const ATTR_SIZE_VER0: u32 = 64;
const _: () = assert!(std::mem::size_of::<PerfEventAttr>() == ATTR_SIZE_VER0 as usize);

// perf_event_attr flag bits.
const FLAG_DISABLED: u64 = 1 << 0;
const FLAG_INHERIT: u64 = 1 << 1;
const FLAG_EXCLUDE_KERNEL: u64 = 1 << 5;
const FLAG_EXCLUDE_HV: u64 = 1 << 6;
// read_format bits: the value is followed by time enabled and time running (ns), which show
// whether the kernel multiplexed the counter.
const FORMAT_TOTAL_TIME_ENABLED: u64 = 1 << 0;
const FORMAT_TOTAL_TIME_RUNNING: u64 = 1 << 1;
const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 1 << 3;

// ioctl numbers: _IO('$', n). _IOC_NONE is 0 on most architectures but 1 (in bit 29) on
// powerpc, mips and sparc.
#[cfg(any(
    target_arch = "powerpc",
    target_arch = "powerpc64",
    target_arch = "mips",
    target_arch = "mips64",
    target_arch = "sparc",
    target_arch = "sparc64"
))]
const IOC_NONE: libc::c_ulong = 1 << 29;
#[cfg(not(any(
    target_arch = "powerpc",
    target_arch = "powerpc64",
    target_arch = "mips",
    target_arch = "mips64",
    target_arch = "sparc",
    target_arch = "sparc64"
)))]
const IOC_NONE: libc::c_ulong = 0;
const IOC_ENABLE: libc::c_ulong = IOC_NONE | 0x2400;
const IOC_DISABLE: libc::c_ulong = IOC_NONE | 0x2401;

fn open_one(counter: Counter, tid: libc::pid_t, exclude_kernel: bool) -> Result<OwnedFd, i32> {
    let (type_, config) = counter.type_config();
    let mut flags = FLAG_DISABLED | FLAG_INHERIT | FLAG_EXCLUDE_HV;
    if exclude_kernel {
        flags |= FLAG_EXCLUDE_KERNEL;
    }
    let attr = PerfEventAttr {
        type_,
        size: ATTR_SIZE_VER0,
        config,
        read_format: FORMAT_TOTAL_TIME_ENABLED | FORMAT_TOTAL_TIME_RUNNING,
        flags,
        ..Default::default()
    };
    // pid 0 = calling thread (else that thread id), cpu -1 = any CPU, no group.
    // SAFETY: `attr` is a valid perf_event_attr of the size it declares and outlives the call.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            &attr as *const PerfEventAttr,
            tid,
            -1 as libc::c_int,
            -1 as libc::c_int,
            PERF_FLAG_FD_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error().raw_os_error().unwrap_or(0));
    }
    // SAFETY: the kernel returned a new file descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as libc::c_int) })
}

/// One opened (or refused) counter.
#[derive(Debug)]
struct Slot {
    counter: Counter,
    fd: Result<OwnedFd, Unavailable>,
    user_only: bool,
}

/// A set of counters for the calling thread and its future descendants.
#[derive(Debug)]
pub struct PerfCounters {
    slots: Vec<Slot>,
}

/// One counter's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Count {
    /// The count as the kernel reports it.
    pub raw: u64,
    /// Nanoseconds the counter was enabled.
    pub time_enabled_ns: u64,
    /// Nanoseconds it was actually counting (less than enabled when the kernel multiplexed
    /// hardware counters; software counters always run when enabled).
    pub time_running_ns: u64,
    /// Opened with `exclude_kernel` because the kernel refused to count kernel mode
    /// (`perf_event_paranoid` ≥ 2 without privileges): user-mode only.
    pub user_only: bool,
}

impl Count {
    /// The count scaled for multiplexing (`raw × enabled / running`, as `perf stat` does);
    /// `None` if the counter was enabled but never got to run.
    pub fn scaled(&self) -> Option<u64> {
        if self.time_running_ns == self.time_enabled_ns {
            Some(self.raw)
        } else if self.time_running_ns == 0 {
            None
        } else {
            let v = self.raw as u128 * self.time_enabled_ns as u128 / self.time_running_ns as u128;
            Some(v.min(u64::MAX as u128) as u64)
        }
    }
}

/// The values of a [`PerfCounters`] set at one moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PerfReading {
    /// Each counter, in the order opened: its count, or why it is unavailable.
    pub values: Vec<(Counter, Result<Count, Unavailable>)>,
}

impl PerfReading {
    /// Scaled value of `counter`; `None` when unavailable (never 0 for "absent").
    pub fn get(&self, counter: Counter) -> Option<u64> {
        self.values
            .iter()
            .find(|(c, _)| *c == counter)
            .and_then(|(_, v)| v.as_ref().ok())
            .and_then(Count::scaled)
    }

    /// `get(c)` of `self` minus that of `earlier` (`None` if either is unavailable).
    pub fn delta(&self, earlier: &PerfReading, counter: Counter) -> Option<u64> {
        Some(self.get(counter)?.saturating_sub(earlier.get(counter)?))
    }
}

impl PerfCounters {
    /// Open `counters` for the calling thread with `inherit = 1`, disabled until
    /// [`enable`](Self::enable). A counter the kernel refuses is kept as unavailable; if it
    /// refused to count kernel mode (EACCES/EPERM), a user-mode-only counter is tried.
    pub fn open(counters: &[Counter]) -> PerfCounters {
        Self::open_task(0, counters)
    }

    /// Like [`open`](Self::open), for the thread `tid` (any thread of any process the caller
    /// may trace; 0 = the calling thread) and every thread it creates afterwards. Counting a
    /// whole process takes one set per thread that exists when counting starts
    /// (`/proc/PID/task`); threads created later are inherited by the set of their creator.
    /// ESRCH (the thread exited meanwhile) shows up as every counter unavailable.
    pub fn open_task(tid: i32, counters: &[Counter]) -> PerfCounters {
        let slots = counters
            .iter()
            .map(|&counter| {
                let (fd, user_only) = match open_one(counter, tid, false) {
                    Ok(fd) => (Ok(fd), false),
                    Err(e) if e == libc::EACCES || e == libc::EPERM => {
                        match open_one(counter, tid, true) {
                            Ok(fd) => (Ok(fd), true),
                            Err(e) => (Err(e), false),
                        }
                    }
                    Err(e) => (Err(e), false),
                };
                Slot {
                    counter,
                    fd: fd.map_err(|errno| Unavailable { errno }),
                    user_only,
                }
            })
            .collect();
        PerfCounters { slots }
    }

    /// [`Counter::ALL`]: the four software counters, and cycles and instructions where the
    /// machine has them.
    pub fn open_default() -> PerfCounters {
        Self::open(&Counter::ALL)
    }

    /// Why `counter` is unavailable, if it is (`None` also when it was not asked for).
    pub fn unavailable(&self, counter: Counter) -> Option<&Unavailable> {
        self.slots
            .iter()
            .find(|s| s.counter == counter)
            .and_then(|s| s.fd.as_ref().err())
    }

    /// Whether at least one counter opened.
    pub fn any_available(&self) -> bool {
        self.slots.iter().any(|s| s.fd.is_ok())
    }

    fn ioctl_all(&self, request: libc::c_ulong) -> io::Result<()> {
        for s in &self.slots {
            if let Ok(fd) = &s.fd {
                // SAFETY: `fd` is an open perf event fd; these requests take no argument.
                if unsafe { libc::ioctl(fd.as_raw_fd(), request as _, 0) } < 0 {
                    return Err(io::Error::last_os_error());
                }
            }
        }
        Ok(())
    }

    /// Start counting (also in inherited copies of the counters).
    pub fn enable(&self) -> io::Result<()> {
        self.ioctl_all(IOC_ENABLE)
    }

    /// Stop counting; values stay readable.
    pub fn disable(&self) -> io::Result<()> {
        self.ioctl_all(IOC_DISABLE)
    }

    /// Read every counter: value, time enabled, time running (three u64, as `read_format`
    /// asked).
    pub fn read(&self) -> io::Result<PerfReading> {
        let mut values = Vec::with_capacity(self.slots.len());
        for s in &self.slots {
            let v = match &s.fd {
                Err(u) => Err(u.clone()),
                Ok(fd) => {
                    let mut buf = [0u64; 3];
                    // SAFETY: `buf` is writable for its full size; the fd is open.
                    let n = unsafe {
                        libc::read(
                            fd.as_raw_fd(),
                            buf.as_mut_ptr().cast(),
                            std::mem::size_of_val(&buf),
                        )
                    };
                    if n < 0 {
                        return Err(io::Error::last_os_error());
                    }
                    if n as usize != std::mem::size_of_val(&buf) {
                        return Err(io::Error::new(
                            io::ErrorKind::UnexpectedEof,
                            format!("perf counter {}: short read of {n} bytes", s.counter),
                        ));
                    }
                    Ok(Count {
                        raw: buf[0],
                        time_enabled_ns: buf[1],
                        time_running_ns: buf[2],
                        user_only: s.user_only,
                    })
                }
            };
            values.push((s.counter, v));
        }
        Ok(PerfReading { values })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn scaling() {
        let c = |raw, e, r| Count {
            raw,
            time_enabled_ns: e,
            time_running_ns: r,
            user_only: false,
        };
        assert_eq!(c(100, 10, 10).scaled(), Some(100));
        assert_eq!(c(100, 20, 10).scaled(), Some(200));
        assert_eq!(c(0, 20, 0).scaled(), None);
        // Never enabled: a genuine 0.
        assert_eq!(c(0, 0, 0).scaled(), Some(0));
    }

    #[test]
    fn unavailable_reads_as_none() {
        let r = PerfReading {
            values: vec![
                (
                    Counter::Cycles,
                    Err(Unavailable {
                        errno: libc::ENOENT,
                    }),
                ),
                (
                    Counter::PageFaults,
                    Ok(Count {
                        raw: 7,
                        time_enabled_ns: 1,
                        time_running_ns: 1,
                        user_only: false,
                    }),
                ),
            ],
        };
        assert_eq!(r.get(Counter::Cycles), None);
        assert_eq!(r.get(Counter::PageFaults), Some(7));
        assert_eq!(r.get(Counter::TaskClock), None);
        let e = Unavailable {
            errno: libc::ENOENT,
        }
        .to_string();
        assert!(e.starts_with("not supported: "), "{e}");
    }

    /// A set opened for another, already running thread counts that thread (and is still
    /// readable after it exited).
    #[test]
    fn counts_another_existing_thread() {
        let _hang = iolab_testkit::timeout(120);
        let (tid_tx, tid_rx) = std::sync::mpsc::channel();
        let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
        let worker = std::thread::spawn(move || {
            tid_tx.send(crate::process::gettid()).unwrap();
            go_rx.recv().unwrap();
            let start = crate::process::rusage(crate::process::Who::Thread).unwrap();
            let t0 = Instant::now();
            let mut x = 1u64;
            while t0.elapsed() < Duration::from_millis(100) {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            }
            std::hint::black_box(x);
            let end = crate::process::rusage(crate::process::Who::Thread).unwrap();
            (end.utime + end.stime).saturating_sub(start.utime + start.stime)
        });
        let tid = tid_rx.recv().unwrap();
        let pc = PerfCounters::open_task(tid, &Counter::SOFTWARE);
        if let Some(u) = pc.unavailable(Counter::TaskClock) {
            go_tx.send(()).unwrap();
            worker.join().unwrap();
            return iolab_testkit::not_run(format!("software perf counters unavailable ({u})"));
        }
        pc.enable().unwrap();
        go_tx.send(()).unwrap();
        let cpu = worker.join().unwrap();
        let r = pc.read().unwrap();
        let tc = r.get(Counter::TaskClock).unwrap();
        assert!(
            tc as u128 >= cpu.as_nanos() * 8 / 10,
            "task-clock {tc} ns < 80 % of the thread's CPU time {cpu:?}"
        );
        // Not the calling thread: this one did not run the loop.
        assert!(tc as u128 <= cpu.as_nanos() * 2 + 20_000_000);
    }

    /// Counters opened here must count a thread spawned afterwards (inherit = 1).
    /// Needs perf_event_open for software events (root, or perf_event_paranoid ≤ 2).
    #[test]
    fn counts_threads_spawned_later() {
        let _hang = iolab_testkit::timeout(120);
        let pc = PerfCounters::open_default();
        if Counter::SOFTWARE
            .iter()
            .all(|&c| pc.unavailable(c).is_some())
        {
            return iolab_testkit::not_run(format!(
                "software perf counters unavailable ({})",
                pc.unavailable(Counter::TaskClock).unwrap()
            ));
        }
        for c in Counter::SOFTWARE {
            assert_eq!(
                pc.unavailable(c),
                None,
                "{c} should open where task-clock does"
            );
        }
        let before = pc.read().unwrap();
        assert_eq!(
            before.get(Counter::TaskClock),
            Some(0),
            "disabled until enable()"
        );
        pc.enable().unwrap();

        let worker = std::thread::spawn(|| {
            let start = crate::process::rusage(crate::process::Who::Thread).unwrap();
            // Busy CPU time.
            let t0 = Instant::now();
            let mut x = 0u64;
            while t0.elapsed() < Duration::from_millis(150) {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            }
            std::hint::black_box(x);
            // Fresh pages: faults.
            let v = vec![1u8; 8 << 20];
            std::hint::black_box(v.iter().step_by(4096).map(|&b| b as u64).sum::<u64>());
            // Sleeps: voluntary context switches.
            for _ in 0..5 {
                std::thread::sleep(Duration::from_millis(2));
            }
            let end = crate::process::rusage(crate::process::Who::Thread).unwrap();
            (
                (end.utime + end.stime).saturating_sub(start.utime + start.stime),
                end.minflt - start.minflt,
                end.nvcsw - start.nvcsw,
            )
        });
        let (cpu, faults, vcsw) = worker.join().unwrap();
        pc.disable().unwrap();
        let r = pc.read().unwrap();

        let task_clock = r.get(Counter::TaskClock).unwrap();
        assert!(
            task_clock as u128 >= cpu.as_nanos() * 8 / 10,
            "task-clock {task_clock} ns < 80 % of the worker's own CPU time {cpu:?}"
        );
        // No absolute bound: on a loaded machine the worker gets less CPU than wall time.
        assert!(task_clock > 0);
        let pf = r.get(Counter::PageFaults).unwrap();
        assert!(
            pf >= faults,
            "page-faults {pf} < worker's minor faults {faults}"
        );
        let cs = r.get(Counter::ContextSwitches).unwrap();
        let user_only = r
            .values
            .iter()
            .any(|(c, v)| *c == Counter::ContextSwitches && v.as_ref().is_ok_and(|v| v.user_only));
        // A switch happens in the kernel: a user-mode-only counter (perf_event_paranoid ≥ 2
        // without privileges) never sees one.
        if !user_only {
            assert!(
                cs >= vcsw.min(5),
                "context-switches {cs}, worker slept 5 times"
            );
        }
        assert!(r.get(Counter::CpuMigrations).is_some());
        // Hardware counters: a number, or absent — never a made-up 0 for "absent".
        for c in Counter::HARDWARE {
            match pc.unavailable(c) {
                Some(_) => assert_eq!(r.get(c), None),
                None => assert!(r.values.iter().any(|(k, v)| *k == c && v.is_ok())),
            }
        }
        // Disabled: the values stay put.
        let again = pc.read().unwrap();
        assert_eq!(again.get(Counter::TaskClock), Some(task_clock));
        assert_eq!(again.delta(&r, Counter::PageFaults), Some(0));
    }
}
