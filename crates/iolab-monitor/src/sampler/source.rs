//! One sample of every source: the texts of the /proc files, parsed with the crate's parsers
//! into the few numbers the sampler keeps ([`Snapshot`]), and the reader that gets the texts
//! from the real files with buffers and file handles reused from tick to tick.

use std::fs::File;
use std::io;
use std::path::PathBuf;
use std::time::Instant;

use crate::diskstats::{self, DiskStat};
use crate::pressure::{self, Pressure, Resource};
use crate::process;
use crate::procstat::{self, CpuTimes};
use crate::vmstat;
use iolab_sys::meminfo;

use super::perfset::{PerfValues, ProcessPerf};

/// Memory gauges from `/proc/meminfo`, bytes.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) struct Mem {
    /// `free(1)`'s used ([`meminfo::Meminfo::used`]).
    pub used: u64,
    /// `Cached`.
    pub cached: u64,
    /// `Dirty`.
    pub dirty: u64,
    /// `Writeback`.
    pub writeback: u64,
    /// `MemTotal`.
    pub total: u64,
    /// `Committed_AS`, and `MemTotal + SwapTotal` (sar's `%commit` denominator).
    pub commit: Option<(u64, u64)>,
}

/// The `/proc/vmstat` counters the sampler reports, in [`VM_KEYS`] order.
pub(crate) type Vm = [Option<u64>; 6];

/// Keys of [`Vm`].
pub(crate) const VM_KEYS: [&str; 6] = [
    "pgfault",
    "pgmajfault",
    "pgpgin",
    "pgpgout",
    "pswpin",
    "pswpout",
];

/// Counters of the watched process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Proc {
    /// `utime`, ticks.
    pub utime: u64,
    /// `stime`, ticks.
    pub stime: u64,
    /// Minor faults.
    pub minflt: u64,
    /// Major faults.
    pub majflt: u64,
    /// Voluntary context switches.
    pub voluntary: u64,
    /// Involuntary context switches.
    pub involuntary: u64,
}

/// Which source a note is about (each is noted once).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Source {
    Stat,
    Meminfo,
    Vmstat,
    Diskstats,
    Pressure,
    Process,
    Perf,
}

impl Source {
    pub(crate) fn bit(self) -> u32 {
        1 << self as u32
    }
}

/// Everything read at one tick. `None` = not readable (or not parseable) this time.
#[derive(Debug, Clone)]
pub(crate) struct Snapshot {
    /// When the reading started (monotonic clock).
    pub at: Instant,
    pub cpu: Option<CpuTimes>,
    pub mem: Option<Mem>,
    pub vm: Option<Vm>,
    /// The watched devices that exist (`None`: diskstats unreadable).
    pub disks: Option<Vec<DiskStat>>,
    /// cpu, io, memory.
    pub psi: [Option<Pressure>; 3],
    pub proc_: Option<Proc>,
    pub perf: Option<PerfValues>,
    /// Why a source failed this time.
    pub errors: Vec<(Source, String)>,
}

/// The texts of one tick (`None`: the file could not be read).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Texts<'a> {
    pub stat: Option<&'a str>,
    pub meminfo: Option<&'a str>,
    pub vmstat: Option<&'a str>,
    pub diskstats: Option<&'a str>,
    pub psi: [Option<&'a str>; 3],
    pub pid_stat: Option<&'a str>,
    pub pid_status: Option<&'a str>,
}

impl Snapshot {
    /// Parse the texts of one tick, keeping only the devices named in `devices`.
    ///
    /// Only the lines the sampler uses are handed to the parsers (a few of the ~190 lines of
    /// vmstat, the `cpu` line of /proc/stat but not its per-CPU and `intr` lines, the watched
    /// devices of diskstats): that keeps a tick cheap on big machines. Should the filtered
    /// text not parse, the whole text is parsed again for an error that names the right line.
    pub(crate) fn parse(at: Instant, t: &Texts<'_>, devices: &[String]) -> Snapshot {
        let mut errors = Vec::new();
        let e = &mut errors;
        let mut buf = String::new();
        let cpu = t.stat.and_then(|s| {
            let f = keep_lines(s, &mut buf, |l| {
                STAT_KEYS.contains(&l.split_ascii_whitespace().next().unwrap_or(""))
            });
            let r = procstat::parse(f).or_else(|_| procstat::parse(s));
            keep(e, Source::Stat, r.map(|p| p.total))
        });
        let mem = t.meminfo.and_then(|s| {
            let f = keep_lines(s, &mut buf, |l| {
                MEMINFO_KEYS.contains(&l.split(':').next().unwrap_or(""))
            });
            let r = meminfo::parse(f).or_else(|_| meminfo::parse(s));
            keep(
                e,
                Source::Meminfo,
                r.map(|m| Mem {
                    used: m.used(),
                    cached: m.cached,
                    dirty: m.dirty,
                    writeback: m.writeback,
                    total: m.mem_total,
                    commit: m
                        .get("Committed_AS")
                        .map(|c| (c, m.mem_total.saturating_add(m.swap_total))),
                }),
            )
        });
        let vm = t.vmstat.and_then(|s| {
            let f = keep_lines(s, &mut buf, |l| {
                VM_KEYS.contains(&l.split_ascii_whitespace().next().unwrap_or(""))
            });
            let r = vmstat::parse(f).or_else(|_| vmstat::parse(s));
            keep(e, Source::Vmstat, r.map(|v| VM_KEYS.map(|k| v.get(k))))
        });
        let disks = t.diskstats.and_then(|s| {
            let f = keep_lines(s, &mut buf, |l| {
                l.split_ascii_whitespace()
                    .nth(2)
                    .is_some_and(|n| devices.iter().any(|d| d == n))
            });
            let r = diskstats::parse(f).or_else(|_| diskstats::parse(s));
            keep(
                e,
                Source::Diskstats,
                r.map(|mut d| {
                    d.disks.retain(|x| devices.contains(&x.name));
                    d.disks
                }),
            )
        });
        let mut psi = [None; 3];
        for (slot, (text, r)) in psi.iter_mut().zip(t.psi.iter().zip(Resource::ALL)) {
            *slot = text.and_then(|s| keep(e, Source::Pressure, pressure::parse_file(r.path(), s)));
        }
        let proc_ = match (t.pid_stat, t.pid_status) {
            (Some(st), Some(status)) => {
                let r = process::parse_stat(st).and_then(|st| {
                    let s = process::parse_status(status)?;
                    // With the children it waited for: a tool the exec kind ran, a WML
                    // `system` command — the run's own work, not a neighbour's.
                    Ok(Proc {
                        utime: st.utime + st.cutime,
                        stime: st.stime + st.cstime,
                        minflt: st.minflt + st.cminflt,
                        majflt: st.majflt + st.cmajflt,
                        voluntary: s.voluntary_ctxt_switches,
                        involuntary: s.nonvoluntary_ctxt_switches,
                    })
                });
                keep(e, Source::Process, r)
            }
            _ => None,
        };
        Snapshot {
            at,
            cpu,
            mem,
            vm,
            disks,
            psi,
            proc_,
            perf: None,
            errors,
        }
    }
}

/// Lines of /proc/stat the sampler needs: `cpu`, and those the parser requires.
const STAT_KEYS: [&str; 5] = ["cpu", "ctxt", "processes", "procs_running", "procs_blocked"];

/// Keys of /proc/meminfo the sampler needs (the parser requires most of them).
const MEMINFO_KEYS: [&str; 11] = [
    "MemTotal",
    "MemFree",
    "MemAvailable",
    "Buffers",
    "Cached",
    "SwapCached",
    "SwapTotal",
    "SwapFree",
    "Dirty",
    "Writeback",
    "Committed_AS",
];

/// The lines of `text` for which `keep` holds, copied into `buf`.
fn keep_lines<'b>(text: &str, buf: &'b mut String, keep: impl Fn(&str) -> bool) -> &'b str {
    buf.clear();
    for l in text.lines().filter(|l| keep(l)) {
        buf.push_str(l);
        buf.push('\n');
    }
    buf
}

/// `r`'s value, or `None` with the error noted.
fn keep<T>(
    errors: &mut Vec<(Source, String)>,
    src: Source,
    r: Result<T, crate::ParseError>,
) -> Option<T> {
    r.map_err(|e| errors.push((src, e.to_string()))).ok()
}

/// A /proc file kept open and read again from offset 0 at every tick (procfs regenerates
/// the text on each read from the start), into a buffer that is reused.
#[derive(Debug)]
struct ProcFile {
    path: PathBuf,
    file: Option<File>,
    buf: Vec<u8>,
    /// Gave up on it: the kernel does not have it (PSI off) or the process is gone.
    gone: bool,
}

impl ProcFile {
    fn new(path: impl Into<PathBuf>) -> Self {
        ProcFile {
            path: path.into(),
            file: None,
            buf: Vec::with_capacity(4096),
            gone: false,
        }
    }

    /// Read the whole file with `pread(2)` from offset 0 (no seek, no `statx` as
    /// `read_to_end` would do); on error the handle is dropped and reopened next time.
    fn read(&mut self) -> io::Result<()> {
        self.buf.clear();
        let file = match &mut self.file {
            Some(f) => f,
            None => self.file.insert(File::open(&self.path)?),
        };
        let r = read_all_at(file, &mut self.buf);
        if r.is_err() {
            self.file = None;
        }
        r
    }

    /// The text read last (lossy: `comm` in /proc/PID/stat may hold any bytes).
    fn text(&self) -> std::borrow::Cow<'_, str> {
        match std::str::from_utf8(&self.buf) {
            Ok(s) => std::borrow::Cow::Borrowed(s),
            Err(_) => String::from_utf8_lossy(&self.buf),
        }
    }
}

/// Append the whole file to `buf`, reading from offset 0 until end of file.
fn read_all_at(file: &File, buf: &mut Vec<u8>) -> io::Result<()> {
    use std::os::unix::fs::FileExt;
    loop {
        if buf.capacity() - buf.len() < 4096 {
            buf.reserve(buf.capacity().max(4096));
        }
        let len = buf.len();
        buf.resize(buf.capacity(), 0);
        let r = file.read_at(&mut buf[len..], len as u64);
        match r {
            Ok(0) => {
                buf.truncate(len);
                return Ok(());
            }
            Ok(n) => buf.truncate(len + n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => buf.truncate(len),
            Err(e) => {
                buf.truncate(len);
                return Err(e);
            }
        }
    }
}

/// Whether an error means "this file will not come back" (no PSI, process exited).
fn is_permanent(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::NotFound
        || matches!(e.raw_os_error(), Some(libc::EOPNOTSUPP) | Some(libc::ESRCH))
}

/// Reads the real files.
#[derive(Debug)]
pub(crate) struct Reader {
    stat: ProcFile,
    meminfo: ProcFile,
    vmstat: ProcFile,
    diskstats: ProcFile,
    psi: [ProcFile; 3],
    pid_stat: ProcFile,
    pid_status: ProcFile,
    devices: Vec<String>,
    perf: Option<ProcessPerf>,
    /// Read errors to report with the next snapshot.
    pending: Vec<(Source, String)>,
}

impl Reader {
    pub(crate) fn new(pid: u32, devices: Vec<String>, perf: Option<ProcessPerf>) -> Reader {
        Reader {
            stat: ProcFile::new(procstat::PATH),
            meminfo: ProcFile::new(meminfo::PATH),
            vmstat: ProcFile::new(vmstat::PATH),
            diskstats: ProcFile::new(diskstats::PATH),
            psi: Resource::ALL.map(|r| ProcFile::new(r.path())),
            pid_stat: ProcFile::new(format!("/proc/{pid}/stat")),
            pid_status: ProcFile::new(format!("/proc/{pid}/status")),
            devices,
            perf,
            pending: Vec::new(),
        }
    }

    fn load(f: &mut ProcFile, src: Source, pending: &mut Vec<(Source, String)>) -> bool {
        if f.gone {
            return false;
        }
        match f.read() {
            Ok(()) => true,
            Err(e) => {
                if is_permanent(&e) {
                    f.gone = true;
                }
                pending.push((src, format!("cannot read {}: {e}", f.path.display())));
                false
            }
        }
    }

    /// Read every source now.
    pub(crate) fn sample(&mut self) -> Snapshot {
        let at = Instant::now();
        let p = &mut self.pending;
        // diskstats first, right at `at`: the disk columns are the ones compared with iostat.
        let d = Self::load(&mut self.diskstats, Source::Diskstats, p);
        let s = Self::load(&mut self.stat, Source::Stat, p);
        let m = Self::load(&mut self.meminfo, Source::Meminfo, p);
        let v = Self::load(&mut self.vmstat, Source::Vmstat, p);
        let mut ps = [false; 3];
        for (ok, f) in ps.iter_mut().zip(self.psi.iter_mut()) {
            *ok = Self::load(f, Source::Pressure, p);
        }
        let pst = Self::load(&mut self.pid_stat, Source::Process, p);
        let pstatus = pst && Self::load(&mut self.pid_status, Source::Process, p);
        let perf = self.perf.as_ref().and_then(|pp| match pp.read() {
            Ok(v) => Some(v),
            Err(e) => {
                p.push((Source::Perf, format!("cannot read perf counters: {e}")));
                None
            }
        });
        let (dt, st, mt, vt) = (
            self.diskstats.text(),
            self.stat.text(),
            self.meminfo.text(),
            self.vmstat.text(),
        );
        let psi_t = [self.psi[0].text(), self.psi[1].text(), self.psi[2].text()];
        let (pt, pst_t) = (self.pid_stat.text(), self.pid_status.text());
        let texts = Texts {
            stat: s.then_some(&*st),
            meminfo: m.then_some(&*mt),
            vmstat: v.then_some(&*vt),
            diskstats: d.then_some(&*dt),
            psi: [
                ps[0].then_some(&*psi_t[0]),
                ps[1].then_some(&*psi_t[1]),
                ps[2].then_some(&*psi_t[2]),
            ],
            pid_stat: pstatus.then_some(&*pt),
            pid_status: pstatus.then_some(&*pst_t),
        };
        let mut snap = Snapshot::parse(at, &texts, &self.devices);
        snap.perf = perf;
        snap.errors.append(&mut self.pending);
        snap
    }
}
