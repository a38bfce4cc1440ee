//! `/proc/stat`: CPU time per mode (machine total and per CPU) and scheduler counters.
//!
//! CPU times are cumulative since boot in `USER_HZ` ticks (see [`crate::process::clock_ticks`],
//! 100 on every mainstream architecture); only their differences mean anything.
//! [`CpuTimes::percent_since`] turns two samples into the percentages `iostat` prints.

use iolab_sys::error::{parse_u64, read_to_string, Error, ParseError, ParseErrorKind};

/// The file this module parses.
pub const PATH: &str = "/proc/stat";

/// Cumulative CPU time per mode, in `USER_HZ` ticks, from one `cpu`/`cpuN` line.
///
/// Columns a kernel does not write read as 0: `iowait` appeared in 2.5.41, `irq` and
/// `softirq` in 2.6.0, `steal` in 2.6.11, `guest` in 2.6.24, `guest_nice` in 2.6.33.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CpuTimes {
    /// User mode, including `guest` (the kernel adds guest time to both).
    pub user: u64,
    /// User mode at low priority (nice > 0), including `guest_nice`.
    pub nice: u64,
    /// Kernel mode, not counting interrupts.
    pub system: u64,
    /// Idle task.
    pub idle: u64,
    /// Idle while some task waited for I/O. Not reliable: a CPU does not wait for I/O, and on
    /// NO_HZ kernels this counter can even go backwards between samples (proc(5)).
    pub iowait: u64,
    /// Servicing hard interrupts.
    pub irq: u64,
    /// Servicing soft interrupts.
    pub softirq: u64,
    /// Stolen by the hypervisor while this (virtual) CPU wanted to run.
    pub steal: u64,
    /// Running a guest's virtual CPU (already contained in `user`).
    pub guest: u64,
    /// Running a niced guest's virtual CPU (already contained in `nice`).
    pub guest_nice: u64,
}

/// CPU percentages over an interval, as `iostat` computes them.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct CpuPercent {
    /// user + nice (iostat's `%user` + `%nice`; guest time is included, as in iostat).
    pub usr: f64,
    /// system + irq + softirq (iostat's `%system`).
    pub sys: f64,
    /// iowait (iostat's `%iowait`).
    pub iowait: f64,
    /// idle (iostat's `%idle`).
    pub idle: f64,
    /// steal (iostat's `%steal`).
    pub steal: f64,
    /// 100 − idle − iowait: the "Active" of mobibench's `[CPU] : Active,Idle,IoWait` line.
    pub active: f64,
}

impl CpuTimes {
    /// Sum of all modes, without `guest`/`guest_nice` (already counted in `user`/`nice`);
    /// the denominator sysstat uses.
    pub fn total(&self) -> u64 {
        self.user
            + self.nice
            + self.system
            + self.idle
            + self.iowait
            + self.irq
            + self.softirq
            + self.steal
    }

    /// Ticks per mode from `earlier` to `self`; a mode whose counter went backwards gives 0.
    pub fn delta_since(&self, earlier: &CpuTimes) -> CpuTimes {
        CpuTimes {
            user: self.user.saturating_sub(earlier.user),
            nice: self.nice.saturating_sub(earlier.nice),
            system: self.system.saturating_sub(earlier.system),
            idle: self.idle.saturating_sub(earlier.idle),
            iowait: self.iowait.saturating_sub(earlier.iowait),
            irq: self.irq.saturating_sub(earlier.irq),
            softirq: self.softirq.saturating_sub(earlier.softirq),
            steal: self.steal.saturating_sub(earlier.steal),
            guest: self.guest.saturating_sub(earlier.guest),
            guest_nice: self.guest_nice.saturating_sub(earlier.guest_nice),
        }
    }

    /// Percentages of the time between `earlier` and `self`, exactly as sysstat's `iostat`:
    /// each mode's difference over the difference of [`total`](Self::total).
    ///
    /// A mode whose counter went backwards (iowait does, see [`CpuTimes::iowait`]) counts 0,
    /// as sysstat's `ll_sp_value` does. When no tick elapsed (samples less than a tick apart,
    /// or the same sample twice) every field is 0, `active` included. `active` is clamped
    /// at 0 so that the backwards-counter case cannot make it negative.
    pub fn percent_since(&self, earlier: &CpuTimes) -> CpuPercent {
        let total = self.total().saturating_sub(earlier.total());
        if total == 0 {
            return CpuPercent::default();
        }
        let pct =
            |later: u64, before: u64| later.saturating_sub(before) as f64 / total as f64 * 100.0;
        let usr = pct(self.user + self.nice, earlier.user + earlier.nice);
        let sys = pct(
            self.system + self.irq + self.softirq,
            earlier.system + earlier.irq + earlier.softirq,
        );
        let iowait = pct(self.iowait, earlier.iowait);
        let idle = pct(self.idle, earlier.idle);
        let steal = pct(self.steal, earlier.steal);
        CpuPercent {
            usr,
            sys,
            iowait,
            idle,
            steal,
            active: (100.0 - idle - iowait).max(0.0),
        }
    }
}

/// One per-CPU line (`cpuN`). Offline CPUs have no line, so the number is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PerCpu {
    /// The N of `cpuN`.
    pub cpu: u32,
    /// Its times.
    pub times: CpuTimes,
}

/// The parts of `/proc/stat` iolab uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcStat {
    /// The `cpu` line: all CPUs summed (not averaged).
    pub total: CpuTimes,
    /// The `cpuN` lines, in file order.
    pub cpus: Vec<PerCpu>,
    /// `ctxt`: context switches since boot, all CPUs.
    pub ctxt: u64,
    /// `processes`: forks (processes and threads created) since boot.
    pub processes: u64,
    /// `procs_running`: tasks runnable right now (a gauge, not a counter).
    pub procs_running: u64,
    /// `procs_blocked`: tasks blocked on I/O right now (a gauge).
    pub procs_blocked: u64,
    /// `btime`: boot time, seconds since the Unix epoch (absent in some containers' fake /proc).
    pub btime: Option<u64>,
    /// First number of the `intr` line: interrupts serviced since boot.
    pub intr: Option<u64>,
}

const CPU_FIELDS: [&str; 10] = [
    "user",
    "nice",
    "system",
    "idle",
    "iowait",
    "irq",
    "softirq",
    "steal",
    "guest",
    "guest_nice",
];

fn parse_cpu_times(idx: usize, line: &str, fields: &[&str]) -> Result<CpuTimes, ParseError> {
    // Four columns (user nice system idle) are the oldest format; anything past ten is a
    // column added by a newer kernel that we do not know yet, and ignored.
    if fields.len() < 4 {
        return Err(ParseError::at(
            PATH,
            idx,
            ParseErrorKind::FieldCount {
                expected: "at least 4 CPU time",
                found: fields.len(),
            },
            line,
        ));
    }
    let mut v = [0u64; 10];
    for (slot, (value, name)) in v.iter_mut().zip(fields.iter().zip(CPU_FIELDS)) {
        *slot = parse_u64(PATH, idx, line, name, value)?;
    }
    Ok(CpuTimes {
        user: v[0],
        nice: v[1],
        system: v[2],
        idle: v[3],
        iowait: v[4],
        irq: v[5],
        softirq: v[6],
        steal: v[7],
        guest: v[8],
        guest_nice: v[9],
    })
}

/// Parse the text of `/proc/stat`. Lines iolab does not use (`softirq`, `page`, …) are
/// skipped; `cpu`, `ctxt`, `processes`, `procs_running` and `procs_blocked` are required
/// (every kernel since 2.6 writes them).
pub fn parse(text: &str) -> Result<ProcStat, ParseError> {
    let mut total = None;
    let mut cpus = Vec::new();
    let (mut ctxt, mut processes, mut running, mut blocked) = (None, None, None, None);
    let (mut btime, mut intr) = (None, None);

    for (idx, line) in text.lines().enumerate() {
        let mut it = line.split_ascii_whitespace();
        let Some(key) = it.next() else { continue };
        // Only the first value is needed for the scalar keys; the `intr` line has a thousand.
        let first = it.clone().next();
        let single = |name: &str| -> Result<u64, ParseError> {
            match first {
                Some(v) => parse_u64(PATH, idx, line, name, v),
                None => Err(ParseError::at(
                    PATH,
                    idx,
                    ParseErrorKind::FieldCount {
                        expected: "1 value",
                        found: 0,
                    },
                    line,
                )),
            }
        };
        let times = || parse_cpu_times(idx, line, &it.clone().collect::<Vec<_>>());
        match key {
            "cpu" => total = Some(times()?),
            k if k.starts_with("cpu") => {
                let cpu = parse_u64(PATH, idx, line, "cpu number", &k[3..])?;
                let cpu = u32::try_from(cpu).map_err(|_| {
                    ParseError::at(PATH, idx, ParseErrorKind::Malformed("CPU number"), line)
                })?;
                cpus.push(PerCpu {
                    cpu,
                    times: times()?,
                });
            }
            "ctxt" => ctxt = Some(single("ctxt")?),
            "processes" => processes = Some(single("processes")?),
            "procs_running" => running = Some(single("procs_running")?),
            "procs_blocked" => blocked = Some(single("procs_blocked")?),
            "btime" => btime = Some(single("btime")?),
            "intr" => intr = Some(single("intr")?),
            _ => {}
        }
    }

    let need =
        |v: Option<u64>, name| v.ok_or(ParseError::whole(PATH, ParseErrorKind::Missing(name)));
    Ok(ProcStat {
        total: total.ok_or(ParseError::whole(PATH, ParseErrorKind::Missing("cpu")))?,
        cpus,
        ctxt: need(ctxt, "ctxt")?,
        processes: need(processes, "processes")?,
        procs_running: need(running, "procs_running")?,
        procs_blocked: need(blocked, "procs_blocked")?,
        btime,
        intr,
    })
}

/// Read and parse `/proc/stat`.
pub fn read() -> Result<ProcStat, Error> {
    Ok(parse(&read_to_string(PATH)?)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = include_str!("../tests/fixtures/proc_stat_a.txt");
    const B: &str = include_str!("../tests/fixtures/proc_stat_b.txt");

    #[test]
    fn parses_captured_file() {
        let s = parse(A).unwrap();
        assert_eq!(
            s.total,
            CpuTimes {
                user: 5778,
                nice: 0,
                system: 3149,
                idle: 77163,
                iowait: 808,
                irq: 0,
                softirq: 88,
                steal: 1052,
                guest: 0,
                guest_nice: 0,
            }
        );
        assert_eq!(s.cpus.len(), 2);
        assert_eq!(s.cpus[1].cpu, 1);
        assert_eq!(s.cpus[1].times.user, 4233);
        assert_eq!(s.cpus[1].times.steal, 545);
        assert!(s.ctxt > 0);
        assert!(s.processes > 0);
        assert!(s.procs_running >= 1);
        assert!(s.btime.is_some());
        assert!(s.intr.is_some());
    }

    #[test]
    fn percent_between_captured_samples() {
        let a = parse(A).unwrap().total;
        let b = parse(B).unwrap().total;
        // Deltas: user 103, nice 0, system 14, idle 1001, iowait 8, irq 0, softirq 2,
        // steal 18 → total 1146.
        let p = b.percent_since(&a);
        let t = 1146.0;
        assert_eq!(p.usr, 103.0 / t * 100.0);
        assert_eq!(p.sys, 16.0 / t * 100.0);
        assert_eq!(p.iowait, 8.0 / t * 100.0);
        assert_eq!(p.idle, 1001.0 / t * 100.0);
        assert_eq!(p.steal, 18.0 / t * 100.0);
        assert_eq!(p.active, 100.0 - 1001.0 / t * 100.0 - 8.0 / t * 100.0);
        let sum = p.usr + p.sys + p.iowait + p.idle + p.steal;
        assert!((sum - 100.0).abs() < 1e-9);
    }

    #[test]
    fn old_kernel_with_four_columns() {
        let text = "cpu  10 20 30 40\ncpu0 10 20 30 40\nctxt 5\nprocesses 6\n\
                    procs_running 1\nprocs_blocked 0\n";
        let s = parse(text).unwrap();
        assert_eq!(s.total.idle, 40);
        assert_eq!(s.total.iowait, 0);
        assert_eq!(s.total.steal, 0);
        assert_eq!(s.btime, None);
        assert_eq!(s.intr, None);
    }

    #[test]
    fn future_extra_columns_are_ignored() {
        let text = "cpu  1 2 3 4 5 6 7 8 9 10 11 12\nctxt 1\nprocesses 1\n\
                    procs_running 1\nprocs_blocked 0\n";
        let s = parse(text).unwrap();
        assert_eq!(s.total.guest_nice, 10);
    }

    #[test]
    fn offline_cpu_keeps_numbers() {
        let text = "cpu  1 1 1 1\ncpu0 1 1 1 1\ncpu2 0 0 0 0\nctxt 1\nprocesses 1\n\
                    procs_running 1\nprocs_blocked 0\n";
        let s = parse(text).unwrap();
        let ids: Vec<u32> = s.cpus.iter().map(|c| c.cpu).collect();
        assert_eq!(ids, vec![0, 2]);
    }

    #[test]
    fn errors_name_line_and_field() {
        let text = "cpu  1 2 3 4\ncpu0 1 x 3 4\n";
        let e = parse(text).unwrap_err();
        assert_eq!(e.line, Some(2));
        assert_eq!(
            e.kind,
            ParseErrorKind::BadNumber {
                field: "nice".into(),
                value: "x".into()
            }
        );
        let e = parse("cpu 1 2\n").unwrap_err();
        assert!(matches!(
            e.kind,
            ParseErrorKind::FieldCount { found: 2, .. }
        ));
        let e = parse("ctxt 1\n").unwrap_err();
        assert_eq!(e.kind, ParseErrorKind::Missing("cpu"));
        let e = parse("cpu 1 2 3 4\nprocesses 1\nprocs_running 1\nprocs_blocked 0\n").unwrap_err();
        assert_eq!(e.kind, ParseErrorKind::Missing("ctxt"));
    }

    #[test]
    fn backwards_iowait_counts_zero_and_no_ticks_gives_zeros() {
        let a = CpuTimes {
            user: 100,
            idle: 100,
            iowait: 50,
            ..Default::default()
        };
        let d = CpuTimes {
            user: 150,
            idle: 200,
            iowait: 40,
            ..Default::default()
        }
        .delta_since(&a);
        assert_eq!((d.user, d.idle, d.iowait), (50, 100, 0));
        let b = CpuTimes {
            user: 150,
            idle: 200,
            iowait: 40,
            ..Default::default()
        };
        // total: 250 → 390, Δ = 140; iowait went back by 10 → 0 %.
        let p = b.percent_since(&a);
        assert_eq!(p.iowait, 0.0);
        assert_eq!(p.usr, 50.0 / 140.0 * 100.0);
        assert_eq!(p.idle, 100.0 / 140.0 * 100.0);
        assert_eq!(a.percent_since(&a), CpuPercent::default());
    }

    #[test]
    fn mobibench_active() {
        let a = CpuTimes::default();
        let b = CpuTimes {
            user: 30,
            system: 10,
            idle: 50,
            iowait: 10,
            ..Default::default()
        };
        let p = b.percent_since(&a);
        assert_eq!(p.active, 40.0);
        assert_eq!(p.idle, 50.0);
        assert_eq!(p.iowait, 10.0);
    }

    #[test]
    fn reads_this_machine() {
        let s = read().unwrap();
        assert!(s.total.total() > 0);
        assert!(!s.cpus.is_empty());
    }
}
