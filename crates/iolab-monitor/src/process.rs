//! Per-process counters: `/proc/[pid]/status`, `/proc/[pid]/stat`, and `getrusage(2)`.
//!
//! `/proc/self/...` covers the whole process (all threads, including threads that already
//! exited); `/proc/self/task/TID/...` covers one thread.

use std::time::Duration;

use iolab_sys::error::{parse_u64, read_to_string, Error, ParseError, ParseErrorKind};

/// Default file name for [`parse_status`] errors.
pub const STATUS_PATH: &str = "/proc/self/status";
/// Default file name for [`parse_stat`] errors.
pub const STAT_PATH: &str = "/proc/self/stat";

/// Clock ticks per second (`USER_HZ`, `sysconf(_SC_CLK_TCK)`), the unit of CPU times in
/// `/proc/[pid]/stat` and `/proc/stat`. The kernel converts its internal HZ to this fixed
/// user-visible rate; it is 100 on all mainstream architectures.
pub fn clock_ticks() -> u64 {
    // SAFETY: sysconf only reads a configuration value.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 {
        t as u64
    } else {
        100
    }
}

/// Convert `USER_HZ` ticks to a duration.
pub fn ticks_to_duration(ticks: u64, clock_ticks: u64) -> Duration {
    let hz = clock_ticks.max(1);
    Duration::from_secs(ticks / hz) + Duration::from_nanos((ticks % hz) * 1_000_000_000 / hz)
}

/// The lines of `/proc/[pid]/status` iolab uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Status {
    /// `voluntary_ctxt_switches`: the task gave up the CPU (blocked on I/O, a lock, sleep).
    pub voluntary_ctxt_switches: u64,
    /// `nonvoluntary_ctxt_switches`: the scheduler took the CPU away (time slice over).
    pub nonvoluntary_ctxt_switches: u64,
    /// `VmRSS` in bytes: resident memory now. Absent for kernel threads.
    pub vm_rss: Option<u64>,
    /// `VmHWM` in bytes: peak resident memory ("high water mark"). Absent for kernel threads.
    pub vm_hwm: Option<u64>,
    /// `Threads`: number of threads now.
    pub threads: Option<u64>,
}

/// Parse the text of `/proc/[pid]/status`. Sizes there are in kB (KiB) and become bytes.
pub fn parse_status(text: &str) -> Result<Status, ParseError> {
    let file = STATUS_PATH;
    let (mut vol, mut nonvol) = (None, None);
    let mut s = Status::default();
    for (idx, line) in text.lines().enumerate() {
        let Some((key, rest)) = line.split_once(':') else {
            continue;
        };
        let fields: Vec<&str> = rest.split_ascii_whitespace().collect();
        let value = || parse_u64(file, idx, line, key, fields.first().copied().unwrap_or(""));
        let kib = || -> Result<u64, ParseError> {
            let v = value()?;
            if fields.get(1) != Some(&"kB") {
                return Err(ParseError::at(
                    file,
                    idx,
                    ParseErrorKind::Malformed("expected a kB value"),
                    line,
                ));
            }
            // A value of more than 2^54 kB cannot be real, and must not wrap or panic.
            v.checked_mul(1024).ok_or_else(|| {
                ParseError::at(
                    file,
                    idx,
                    ParseErrorKind::Malformed("value too large"),
                    line,
                )
            })
        };
        match key {
            "voluntary_ctxt_switches" => vol = Some(value()?),
            "nonvoluntary_ctxt_switches" => nonvol = Some(value()?),
            "VmRSS" => s.vm_rss = Some(kib()?),
            "VmHWM" => s.vm_hwm = Some(kib()?),
            "Threads" => s.threads = Some(value()?),
            _ => {}
        }
    }
    s.voluntary_ctxt_switches = vol.ok_or(ParseError::whole(
        file,
        ParseErrorKind::Missing("voluntary_ctxt_switches"),
    ))?;
    s.nonvoluntary_ctxt_switches = nonvol.ok_or(ParseError::whole(
        file,
        ParseErrorKind::Missing("nonvoluntary_ctxt_switches"),
    ))?;
    Ok(s)
}

/// The fields of `/proc/[pid]/stat` iolab uses (numbers as in proc(5)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stat {
    /// (1) pid (or tid for a task file).
    pub pid: i32,
    /// (2) command name, without the parentheses; may contain spaces and `)`.
    pub comm: String,
    /// (3) state letter (R, S, D, Z, …).
    pub state: char,
    /// (4) parent pid.
    pub ppid: i32,
    /// (10) minor faults: resolved without I/O.
    pub minflt: u64,
    /// (11) minor faults of waited-for children.
    pub cminflt: u64,
    /// (12) major faults: needed to read a page from storage.
    pub majflt: u64,
    /// (13) major faults of waited-for children.
    pub cmajflt: u64,
    /// (14) user-mode CPU time, `USER_HZ` ticks ([`clock_ticks`]).
    pub utime: u64,
    /// (15) kernel-mode CPU time, `USER_HZ` ticks.
    pub stime: u64,
    /// (16) user time of waited-for children, ticks.
    pub cutime: u64,
    /// (17) kernel time of waited-for children, ticks.
    pub cstime: u64,
    /// (20) number of threads.
    pub num_threads: u64,
    /// (22) start time after boot, ticks.
    pub starttime: u64,
}

/// Parse the text of `/proc/[pid]/stat` (one line).
///
/// `comm` is in parentheses and may itself contain spaces and parentheses, so the fields
/// after it are located from the *last* `)` of the line.
pub fn parse_stat(text: &str) -> Result<Stat, ParseError> {
    let file = STAT_PATH;
    let line = text.lines().next().unwrap_or("");
    let malformed = |what| ParseError::at(file, 0, ParseErrorKind::Malformed(what), line);
    let open = line
        .find('(')
        .ok_or_else(|| malformed("no `(` before comm"))?;
    let close = line
        .rfind(')')
        .ok_or_else(|| malformed("no `)` after comm"))?;
    if close < open {
        return Err(malformed("`)` before `(`"));
    }
    let pid = line[..open].trim();
    let pid = pid.parse::<i32>().map_err(|_| {
        ParseError::at(
            file,
            0,
            ParseErrorKind::BadNumber {
                field: "pid".into(),
                value: pid.into(),
            },
            line,
        )
    })?;
    let comm = line[open + 1..close].to_owned();
    // rest[0] is field 3 (state), so field N is rest[N - 3].
    let rest: Vec<&str> = line[close + 1..].split_ascii_whitespace().collect();
    if rest.len() < 20 {
        return Err(ParseError::at(
            file,
            0,
            ParseErrorKind::FieldCount {
                expected: "at least 22",
                found: rest.len() + 2,
            },
            line,
        ));
    }
    let field = |n: usize, name: &str| parse_u64(file, 0, line, name, rest[n - 3]);
    let mut state = rest[0].chars();
    let (Some(state), None) = (state.next(), state.next()) else {
        return Err(malformed("state is not one letter"));
    };
    let ppid = rest[1].parse::<i32>().map_err(|_| {
        ParseError::at(
            file,
            0,
            ParseErrorKind::BadNumber {
                field: "ppid".into(),
                value: rest[1].into(),
            },
            line,
        )
    })?;
    // cutime/cstime are `long` in the kernel but never negative in practice.
    Ok(Stat {
        pid,
        comm,
        state,
        ppid,
        minflt: field(10, "minflt")?,
        cminflt: field(11, "cminflt")?,
        majflt: field(12, "majflt")?,
        cmajflt: field(13, "cmajflt")?,
        utime: field(14, "utime")?,
        stime: field(15, "stime")?,
        cutime: field(16, "cutime")?,
        cstime: field(17, "cstime")?,
        num_threads: field(20, "num_threads")?,
        starttime: field(22, "starttime")?,
    })
}

fn read_status_at(path: String) -> Result<Status, Error> {
    let text = read_to_string(&path)?;
    Ok(parse_status(&text).map_err(|e| e.with_file(path))?)
}

fn read_stat_at(path: String) -> Result<Stat, Error> {
    let text = read_to_string(&path)?;
    Ok(parse_stat(&text).map_err(|e| e.with_file(path))?)
}

/// `/proc/self/status` of the calling process.
pub fn read_status() -> Result<Status, Error> {
    read_status_at(STATUS_PATH.to_owned())
}

/// `/proc/self/stat` of the calling process.
pub fn read_stat() -> Result<Stat, Error> {
    read_stat_at(STAT_PATH.to_owned())
}

/// `/proc/PID/status` of another process.
pub fn read_status_of(pid: i32) -> Result<Status, Error> {
    read_status_at(format!("/proc/{pid}/status"))
}

/// `/proc/PID/stat` of another process.
pub fn read_stat_of(pid: i32) -> Result<Stat, Error> {
    read_stat_at(format!("/proc/{pid}/stat"))
}

/// `/proc/self/task/TID/status`: one thread of the calling process.
pub fn read_thread_status(tid: i32) -> Result<Status, Error> {
    read_status_at(format!("/proc/self/task/{tid}/status"))
}

/// `/proc/self/task/TID/stat`: one thread of the calling process.
pub fn read_thread_stat(tid: i32) -> Result<Stat, Error> {
    read_stat_at(format!("/proc/self/task/{tid}/stat"))
}

/// Thread id of the calling thread (`gettid(2)`), for [`read_thread_stat`].
pub fn gettid() -> i32 {
    // SAFETY: gettid has no arguments and cannot fail.
    unsafe { libc::syscall(libc::SYS_gettid) as i32 }
}

/// Whose resource usage [`rusage`] reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Who {
    /// The calling process, all its threads (`RUSAGE_SELF`).
    Process,
    /// The calling thread only (`RUSAGE_THREAD`, Linux 2.6.26+).
    Thread,
    /// Terminated and waited-for children (`RUSAGE_CHILDREN`).
    Children,
}

/// `getrusage(2)` result, in plain units.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Rusage {
    /// User-mode CPU time (microsecond resolution).
    pub utime: Duration,
    /// Kernel-mode CPU time.
    pub stime: Duration,
    /// Peak resident set size in bytes (the kernel reports KiB).
    pub maxrss: u64,
    /// Minor faults.
    pub minflt: u64,
    /// Major faults.
    pub majflt: u64,
    /// Blocks read by the filesystem layer, in 512-byte units; only I/O that reached the
    /// block layer counts, so page-cache hits do not.
    pub inblock: u64,
    /// Blocks written, 512-byte units (counted when pages are dirtied for writeback).
    pub oublock: u64,
    /// Voluntary context switches.
    pub nvcsw: u64,
    /// Involuntary context switches.
    pub nivcsw: u64,
}

/// `getrusage(2)` for the process, the calling thread, or waited-for children.
pub fn rusage(who: Who) -> std::io::Result<Rusage> {
    let w = match who {
        Who::Process => libc::RUSAGE_SELF,
        Who::Thread => libc::RUSAGE_THREAD,
        Who::Children => libc::RUSAGE_CHILDREN,
    };
    // SAFETY: an all-zero rusage is a valid value, and getrusage writes only into it.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `ru` is a valid, writable rusage.
    if unsafe { libc::getrusage(w, &mut ru) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    let tv = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec.max(0) as u64) + Duration::from_micros(t.tv_usec.max(0) as u64)
    };
    let n = |v: libc::c_long| v.max(0) as u64;
    Ok(Rusage {
        utime: tv(ru.ru_utime),
        stime: tv(ru.ru_stime),
        maxrss: n(ru.ru_maxrss) * 1024,
        minflt: n(ru.ru_minflt),
        majflt: n(ru.ru_majflt),
        inblock: n(ru.ru_inblock),
        oublock: n(ru.ru_oublock),
        nvcsw: n(ru.ru_nvcsw),
        nivcsw: n(ru.ru_nivcsw),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by the `proc` fuzz target (fuzz/regressions/proc/): a kB value whose bytes do
    /// not fit in a u64 overflowed the conversion to bytes.
    #[test]
    fn status_kb_value_too_large_is_an_error() {
        let text = "voluntary_ctxt_switches:\t1\nnonvoluntary_ctxt_switches:\t2\n\
                    VmRSS:\t18014398509481984 kB\n";
        let e = parse_status(text).unwrap_err();
        assert!(e.to_string().contains("value too large"), "{e}");
        // The largest value that fits still reads.
        let ok = text.replace("18014398509481984", "18014398509481983");
        assert_eq!(
            parse_status(&ok).unwrap().vm_rss,
            Some(18014398509481983 * 1024)
        );
    }

    #[test]
    fn parses_captured_status() {
        let s = parse_status(include_str!("../tests/fixtures/proc_self_status.txt")).unwrap();
        assert_eq!(s.voluntary_ctxt_switches, 0);
        assert_eq!(s.nonvoluntary_ctxt_switches, 0);
        assert_eq!(s.vm_rss, Some(1608 * 1024));
        assert_eq!(s.vm_hwm, Some(1608 * 1024));
        assert_eq!(s.threads, Some(1));
    }

    #[test]
    fn kernel_thread_status_has_no_vm_lines() {
        let text = "Name:\tkworker/0:1\nThreads:\t1\nvoluntary_ctxt_switches:\t12\n\
                    nonvoluntary_ctxt_switches:\t3\n";
        let s = parse_status(text).unwrap();
        assert_eq!(s.voluntary_ctxt_switches, 12);
        assert_eq!(s.nonvoluntary_ctxt_switches, 3);
        assert_eq!(s.vm_rss, None);
    }

    #[test]
    fn status_errors() {
        let e = parse_status("VmRSS:\t12 MB\nvoluntary_ctxt_switches:\t1\n").unwrap_err();
        assert_eq!(e.line, Some(1));
        let e = parse_status("voluntary_ctxt_switches:\t1\n").unwrap_err();
        assert_eq!(
            e.kind,
            ParseErrorKind::Missing("nonvoluntary_ctxt_switches")
        );
    }

    #[test]
    fn parses_captured_stat() {
        let s = parse_stat(include_str!("../tests/fixtures/proc_self_stat.txt")).unwrap();
        assert_eq!(s.pid, 5343);
        assert_eq!(s.comm, "cat");
        assert_eq!(s.state, 'R');
        assert_eq!(s.ppid, 5333);
        assert_eq!(s.minflt, 114);
        assert_eq!(s.majflt, 0);
        assert_eq!(s.utime, 0);
        assert_eq!(s.stime, 0);
        assert_eq!(s.num_threads, 1);
        assert_eq!(s.starttime, 43999);
    }

    #[test]
    fn comm_with_spaces_and_parens() {
        let rest = "S 1 1 1 0 -1 4194560 5000 7 3 1 250 125 4 2 20 0 9 0 1234 0 0";
        let text = format!("77 (my (odd) prog) {rest}\n");
        let s = parse_stat(&text).unwrap();
        assert_eq!(s.pid, 77);
        assert_eq!(s.comm, "my (odd) prog");
        assert_eq!(s.state, 'S');
        assert_eq!(s.minflt, 5000);
        assert_eq!(s.cminflt, 7);
        assert_eq!(s.majflt, 3);
        assert_eq!(s.cmajflt, 1);
        assert_eq!(s.utime, 250);
        assert_eq!(s.stime, 125);
        assert_eq!(s.cutime, 4);
        assert_eq!(s.cstime, 2);
        assert_eq!(s.num_threads, 9);
        assert_eq!(s.starttime, 1234);
    }

    #[test]
    fn stat_errors() {
        let e = parse_stat("12 (x) S 1 2 3\n").unwrap_err();
        assert!(matches!(e.kind, ParseErrorKind::FieldCount { .. }));
        let e = parse_stat("12 x S\n").unwrap_err();
        assert!(matches!(e.kind, ParseErrorKind::Malformed(_)));
        let rest = "S 1 1 1 0 -1 4194560 x 7 3 1 250 125 4 2 20 0 9 0 1234 0 0";
        let e = parse_stat(&format!("5 (a) {rest}")).unwrap_err();
        assert_eq!(
            e.kind,
            ParseErrorKind::BadNumber {
                field: "minflt".into(),
                value: "x".into()
            }
        );
    }

    #[test]
    fn ticks() {
        assert_eq!(ticks_to_duration(250, 100), Duration::from_millis(2500));
        assert_eq!(ticks_to_duration(1, 3), Duration::from_nanos(333_333_333));
        assert!(clock_ticks() > 0);
    }

    #[test]
    fn reads_this_process() {
        let st = read_stat().unwrap();
        assert_eq!(st.pid as u32, std::process::id());
        let status = read_status().unwrap();
        assert!(status.vm_rss.unwrap() > 0);
        let t = read_thread_stat(gettid()).unwrap();
        assert_eq!(t.pid, gettid());
        read_thread_status(gettid()).unwrap();
        read_stat_of(std::process::id() as i32).unwrap();
        read_status_of(std::process::id() as i32).unwrap();
        let e = read_stat_of(-5).unwrap_err();
        assert!(matches!(e, Error::Read { .. }));
    }

    #[test]
    fn rusage_counts_faults() {
        let before = rusage(Who::Thread).unwrap();
        // Touch a fresh anonymous mapping (malloc could hand back memory already touched):
        // the first touch of each page is a minor fault.
        let len = 4 << 20;
        // SAFETY: a new private anonymous mapping; written only within its length, then
        // unmapped.
        unsafe {
            let p = libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            assert_ne!(p, libc::MAP_FAILED);
            for off in (0..len).step_by(4096) {
                p.cast::<u8>().add(off).write_volatile(1);
            }
            libc::munmap(p, len);
        }
        let after = rusage(Who::Thread).unwrap();
        assert!(after.minflt > before.minflt);
        let p = rusage(Who::Process).unwrap();
        assert!(p.maxrss > 0);
        rusage(Who::Children).unwrap();
    }
}
