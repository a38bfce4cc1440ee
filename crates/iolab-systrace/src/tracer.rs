//! The live tracer: two maps, four programs attached, the tasks to count.

use std::io;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::bpf::{self, Map, Prog, Shared};
use crate::btf;
use crate::counts::{SyscallCounts, TracerCost};
use crate::error::SysTraceError;
use crate::insn::{self, Access, Slot, COUNT_SLOTS, SLOT_SCRATCH, SLOT_SIZE};

/// The highest TID the tracer can track, plus one: the kernel's limit on 64-bit systems
/// (`PID_MAX_LIMIT`; `kernel.pid_max` cannot go higher).
pub const MAX_TID: u32 = 1 << 22;

/// Bits of a counted task (its own calls are counted), and of one only followed.
const COUNT: u64 = (insn::FOLLOW_BIT | insn::COUNT_BIT) as u64;
const FOLLOW: u64 = insn::FOLLOW_BIT as u64;

/// The calibration: batches of `getppid` calls, the fastest batch kept.
const CAL_BATCHES: usize = 15;
const CAL_CALLS: u32 = 1000;

/// A running system call count. Tasks are added with [`count_task`](Self::count_task) and
/// [`follow_task`](Self::follow_task); every task a tracked task creates (process or
/// thread) is counted from its creation on. [`stop`](Self::stop) detaches and returns the
/// counts; dropping the tracer detaches too. Needs root.
#[derive(Debug)]
pub struct SyscallTracer {
    // Dropped first: closing a link or perf event detaches its program.
    links: Vec<OwnedFd>,
    progs: Vec<Prog>,
    bits: Shared,
    /// The `pt_regs` address → TID cache of the BTF programs.
    fast: Option<Map>,
    tasks: Map,
    counts: Map,
    ncpus: usize,
    given: AtomicU64,
    started: Instant,
    cost: Option<TracerCost>,
    btf: bool,
}

/// A program or map of a tracer, by kernel id: [`KernelObject::exists`] tells whether it is
/// still loaded (it is not, once the tracer is stopped or dropped).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelObject {
    pub id: u32,
    pub is_map: bool,
}

impl KernelObject {
    pub fn exists(&self) -> io::Result<bool> {
        bpf::exists(self.id, self.is_map)
    }
}

impl SyscallTracer {
    /// Loads and attaches the programs, and measures what they cost a call
    /// ([`SyscallCounts::cost`]). Counts nothing until a task is given.
    pub fn start() -> Result<SyscallTracer, SysTraceError> {
        Self::start_with(btf::kernel_types())
    }

    /// [`start`](Self::start) with the BTF programs when `types` are given (the `sys_exit`
    /// program a BTF tracepoint program), the raw ones (slower) otherwise.
    fn start_with(types: Option<btf::KernelTypes>) -> Result<SyscallTracer, SysTraceError> {
        let root = iolab_blocktrace::tracefs_root()?;
        let fork_tp = Tracepoint::read(&root, "sched", "sched_process_fork")?;
        let exec_tp = Tracepoint::read(&root, "sched", "sched_process_exec")?;
        let child_pid = fork_tp.pid_field("child_pid")?;
        let (pid, old_pid) = (exec_tp.pid_field("pid")?, exec_tp.pid_field("old_pid")?);
        let ncpus = possible_cpus()?;

        let words = MAX_TID / insn::TASKS_PER_WORD;
        let tasks = Map::create(
            "iolab_tasks",
            bpf::BPF_MAP_TYPE_ARRAY,
            4,
            8,
            words,
            bpf::BPF_F_MMAPABLE,
        )?;
        let bits = tasks
            .mmap(words as usize)
            .map_err(|e| SysTraceError::bpf("map the task bitmap", e))?;
        let counts = Map::create(
            "iolab_counts",
            bpf::BPF_MAP_TYPE_PERCPU_ARRAY,
            4,
            SLOT_SIZE,
            COUNT_SLOTS,
            0,
        )?;
        let (t, c) = (tasks.raw_fd(), counts.raw_fd());
        let load = |access: Access| -> Result<[Prog; 4], SysTraceError> {
            use bpf::{BPF_PROG_TYPE_RAW_TRACEPOINT as RAW, BPF_PROG_TYPE_TRACEPOINT as PERF};
            let sys_exit = insn::sys_exit(t, c, access);
            Ok([
                Prog::load("iolab_exit", RAW, &insn::exit(t, c, access))?,
                Prog::load("iolab_fork", PERF, &insn::fork(t, c, child_pid))?,
                Prog::load("iolab_exec", PERF, &insn::exec(t, c, pid, old_pid, access))?,
                match (access, types) {
                    (Access::Btf { .. }, Some(k)) => {
                        Prog::load_btf("iolab_sys_exit", k.sys_exit, &sys_exit)?
                    }
                    _ => Prog::load("iolab_sys_exit", RAW, &sys_exit)?,
                },
            ])
        };
        let mut with_btf = None;
        if let Some(k) = types {
            let fast = Map::create(
                "iolab_fast",
                bpf::BPF_MAP_TYPE_ARRAY,
                4,
                insn::FAST_SIZE,
                insn::FAST_ENTRIES,
                0,
            )?;
            let access = Access::Btf {
                task_pid: k.task_pid,
                regs_nr: k.regs_nr,
                fast: fast.raw_fd(),
            };
            match load(access) {
                Ok(progs) => with_btf = Some((progs, fast)),
                // A kernel with BTF that refuses what the BTF programs do (before 5.15).
                Err(SysTraceError::Verifier { .. } | SysTraceError::Bpf { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        let btf = with_btf.is_some();
        let ([exit, fork, exec, sys_exit], fast) = match with_btf {
            Some((progs, fast)) => (progs, Some(fast)),
            None => (load(Access::Raw)?, None),
        };

        let base = per_call_ns();
        let links = vec![
            exit.attach_raw("sched_process_exit", false)?,
            fork.attach_perf("sched/sched_process_fork", fork_tp.id)?,
            exec.attach_perf("sched/sched_process_exec", exec_tp.id)?,
            sys_exit.attach_raw("sys_exit", btf)?,
        ];
        let mut tracer = SyscallTracer {
            links,
            progs: vec![exit, fork, exec, sys_exit],
            bits,
            fast,
            tasks,
            counts,
            ncpus,
            given: AtomicU64::new(0),
            started: Instant::now(),
            cost: None,
            btf,
        };
        tracer.cost = Some(tracer.calibrate(base)?);
        tracer.started = Instant::now();
        Ok(tracer)
    }

    /// Times `getppid` with the programs attached, on this thread untracked and counted,
    /// then clears what that counted.
    fn calibrate(&self, base_ns: f64) -> Result<TracerCost, SysTraceError> {
        let me = gettid();
        let any = per_call_ns();
        self.set(me, COUNT)?;
        let counted = per_call_ns();
        self.forget_task(me)?;
        let zeros = vec![0u8; self.per_cpu_len() * self.ncpus];
        for key in 0..COUNT_SLOTS {
            self.counts
                .update(&key.to_ne_bytes(), &zeros, bpf::BPF_ANY)
                .map_err(|e| SysTraceError::bpf("clear the counts", e))?;
        }
        Ok(TracerCost {
            base_ns,
            any_call_ns: any - base_ns,
            counted_call_ns: counted - base_ns,
        })
    }

    /// Sets `tid`'s two bits to `bits`. The other tasks' bits in the word may change at the
    /// same time (a program adding a child): both sides change them atomically.
    fn set(&self, tid: i32, bits: u64) -> Result<(), SysTraceError> {
        let (word, shift) = self.place(tid)?;
        if bits != 0 && !Path::new("/proc").join(tid.to_string()).exists() {
            return Err(SysTraceError::NoSuchTask(tid));
        }
        word.fetch_or(bits << shift, Ordering::SeqCst);
        word.fetch_and(!((COUNT & !bits) << shift), Ordering::SeqCst);
        Ok(())
    }

    fn place(&self, tid: i32) -> Result<(&AtomicU64, u32), SysTraceError> {
        let t = u32::try_from(tid)
            .ok()
            .filter(|&t| t > 0 && t < MAX_TID)
            .ok_or(SysTraceError::NoSuchTask(tid))?;
        let word = &self.bits.words()[(t / insn::TASKS_PER_WORD) as usize];
        Ok((word, (t % insn::TASKS_PER_WORD) * 2))
    }

    /// Counts `tid`'s calls and those of every task it creates from now on.
    pub fn count_task(&self, tid: i32) -> Result<(), SysTraceError> {
        self.set(tid, COUNT)?;
        self.given.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// Does not count `tid`'s own calls, but counts every task it creates from now on (the
    /// thread that spawns the workload).
    pub fn follow_task(&self, tid: i32) -> Result<(), SysTraceError> {
        self.set(tid, FOLLOW)?;
        self.given.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// Stops counting `tid` (and following it): its calls and the tasks it creates from now
    /// on are not counted. A task not tracked is fine.
    pub fn forget_task(&self, tid: i32) -> Result<(), SysTraceError> {
        self.set(tid, 0)
    }

    /// Whether `tid`'s calls are counted now (a task that exited is not).
    pub fn is_counted(&self, tid: i32) -> bool {
        self.place(tid)
            .is_ok_and(|(word, shift)| (word.load(Ordering::SeqCst) >> shift) & COUNT == COUNT)
    }

    /// The counts so far (the tracer keeps counting).
    pub fn counts(&self) -> Result<SyscallCounts, SysTraceError> {
        let stride = self.per_cpu_len();
        let mut buf = vec![0u8; stride * self.ncpus];
        let mut slots = Vec::with_capacity(SLOT_SCRATCH as usize);
        // Not the scratch slot: it holds an address, not counts.
        for key in 0..SLOT_SCRATCH {
            let found = self
                .counts
                .lookup(&key.to_ne_bytes(), &mut buf)
                .map_err(|e| SysTraceError::bpf("read the counts", e))?;
            let mut sum = Slot::default();
            if found {
                for cpu in buf.chunks_exact(stride) {
                    let field = |i: usize| {
                        u64::from_ne_bytes(cpu[i * 8..i * 8 + 8].try_into().unwrap_or([0; 8]))
                    };
                    sum.calls += field(0);
                    sum.bytes = sum.bytes.wrapping_add(field(1));
                    sum.errors += field(2);
                    for (b, n) in sum.sizes.iter_mut().enumerate() {
                        *n += field(3 + b);
                    }
                }
            }
            slots.push(sum);
        }
        let duration = u64::try_from(self.started.elapsed().as_nanos()).unwrap_or(u64::MAX);
        let mut c = SyscallCounts::from_slots(&slots, self.given.load(Ordering::Relaxed), duration);
        c.cost = self.cost;
        c.mechanism = if self.btf { "tp_btf" } else { "raw_tp" };
        Ok(c)
    }

    /// Detaches the programs, reads the counts, and frees everything.
    pub fn stop(mut self) -> Result<SyscallCounts, SysTraceError> {
        self.links.clear();
        self.counts()
    }

    /// The tracer's programs and maps (to check that none is left once it is gone).
    pub fn kernel_objects(&self) -> io::Result<Vec<KernelObject>> {
        let mut out = Vec::new();
        for p in &self.progs {
            out.push(KernelObject {
                id: p.id()?,
                is_map: false,
            });
        }
        for m in [Some(&self.tasks), Some(&self.counts), self.fast.as_ref()]
            .into_iter()
            .flatten()
        {
            out.push(KernelObject {
                id: m.id()?,
                is_map: true,
            });
        }
        Ok(out)
    }

    /// A per-CPU value's room in a lookup: rounded up to 8 bytes.
    fn per_cpu_len(&self) -> usize {
        self.counts.value_size().div_ceil(8) * 8
    }
}

/// The calling thread's TID.
pub fn gettid() -> i32 {
    // SAFETY: gettid has no preconditions and cannot fail.
    unsafe { libc::gettid() }
}

/// ns per `getppid` on this thread: the fastest of a few batches (the others were
/// interrupted or shared the CPU).
fn per_call_ns() -> f64 {
    let mut best = Duration::MAX;
    for _ in 0..CAL_BATCHES {
        let t = Instant::now();
        for _ in 0..CAL_CALLS {
            // SAFETY: no preconditions; a real system call every time (no caching in libc).
            unsafe { libc::syscall(libc::SYS_getppid) };
        }
        best = best.min(t.elapsed());
    }
    best.as_nanos() as f64 / f64::from(CAL_CALLS)
}

/// How many CPUs the kernel may ever bring up (`/sys/devices/system/cpu/possible`, e.g.
/// `0-1` or `0,2-7`): a per-CPU map has a value for each.
fn possible_cpus() -> Result<usize, SysTraceError> {
    let path = Path::new("/sys/devices/system/cpu/possible");
    let text = std::fs::read_to_string(path).map_err(|e| SysTraceError::Tracepoint {
        path: path.to_owned(),
        what: format!("cannot read it: {e}"),
    })?;
    parse_cpu_list(&text).ok_or_else(|| SysTraceError::Tracepoint {
        path: path.to_owned(),
        what: format!("not a CPU list: {:?}", text.trim()),
    })
}

fn parse_cpu_list(text: &str) -> Option<usize> {
    let mut n = 0;
    for part in text.trim().split(',') {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let (a, b) = (a.parse::<usize>().ok()?, b.parse::<usize>().ok()?);
        n += b.checked_sub(a)? + 1;
    }
    (n > 0).then_some(n)
}

/// A tracepoint's tracefs id and record format.
struct Tracepoint {
    id: u64,
    format: String,
    format_path: PathBuf,
}

impl Tracepoint {
    fn read(root: &Path, group: &str, name: &str) -> Result<Tracepoint, SysTraceError> {
        let dir = root.join("events").join(group).join(name);
        let read = |file: &str| {
            let p = dir.join(file);
            std::fs::read_to_string(&p).map_err(|e| {
                if e.kind() == io::ErrorKind::PermissionDenied {
                    SysTraceError::Tracefs(iolab_blocktrace::TraceError::NeedsRoot(p))
                } else {
                    SysTraceError::Tracepoint {
                        path: p,
                        what: format!("cannot read it: {e}"),
                    }
                }
            })
        };
        let id_text = read("id")?;
        let id = id_text
            .trim()
            .parse()
            .map_err(|_| SysTraceError::Tracepoint {
                path: dir.join("id"),
                what: format!("not a number: {:?}", id_text.trim()),
            })?;
        Ok(Tracepoint {
            id,
            format: read("format")?,
            format_path: dir.join("format"),
        })
    }

    /// The offset of the `pid_t` field `name` in the record.
    fn pid_field(&self, name: &str) -> Result<i16, SysTraceError> {
        field_offset(&self.format, name, 4).ok_or_else(|| SysTraceError::Tracepoint {
            path: self.format_path.clone(),
            what: format!("no 4-byte field {name}"),
        })
    }
}

/// In a tracefs `format` file, the offset of field `name` if its size is `size`:
/// `field:pid_t child_pid; offset:20; size:4; signed:1;`.
fn field_offset(format: &str, name: &str, size: u32) -> Option<i16> {
    format.lines().find_map(|line| {
        let mut parts = line.trim().split(';').map(str::trim);
        let decl = parts.next()?.strip_prefix("field:")?;
        if decl
            .rsplit(|c: char| c.is_whitespace() || c == '*')
            .next()?
            != name
        {
            return None;
        }
        let mut offset = None;
        let mut sz = None;
        for p in parts {
            if let Some(v) = p.strip_prefix("offset:") {
                offset = v.parse::<i16>().ok();
            } else if let Some(v) = p.strip_prefix("size:") {
                sz = v.parse::<u32>().ok();
            }
        }
        (sz == Some(size)).then_some(offset?)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tracer_can_be_shared_between_threads() {
        fn send_sync<T: Send + Sync>() {}
        send_sync::<SyscallTracer>();
    }

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpu_list("0-1\n"), Some(2));
        assert_eq!(parse_cpu_list("0"), Some(1));
        assert_eq!(parse_cpu_list("0,2-7"), Some(7));
        assert_eq!(parse_cpu_list(""), None);
        assert_eq!(parse_cpu_list("3-1"), None);
    }

    #[test]
    fn offsets_from_the_format_file() {
        // sched_process_fork of Linux 6.18.
        let f = "name: sched_process_fork\nID: 366\nformat:\n\
            \tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
            \tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\
            \tfield:__data_loc char[] parent_comm;\toffset:8;\tsize:4;\tsigned:0;\n\
            \tfield:pid_t parent_pid;\toffset:12;\tsize:4;\tsigned:1;\n\
            \tfield:__data_loc char[] child_comm;\toffset:16;\tsize:4;\tsigned:0;\n\
            \tfield:pid_t child_pid;\toffset:20;\tsize:4;\tsigned:1;\n";
        assert_eq!(field_offset(f, "child_pid", 4), Some(20));
        assert_eq!(field_offset(f, "parent_pid", 4), Some(12));
        assert_eq!(field_offset(f, "pid", 4), None);
        assert_eq!(field_offset(f, "child_pid", 8), None);
    }

    /// `n` calls of `getppid` on this thread.
    fn getppids(n: u32) {
        for _ in 0..n {
            // SAFETY: no preconditions.
            unsafe { libc::syscall(libc::SYS_getppid) };
        }
    }

    #[test]
    #[ignore = "needs root: bpf(2) and tracefs"]
    fn both_programs_count_this_thread() {
        iolab_testkit::require_root();
        let types = btf::kernel_types();
        assert!(types.is_some(), "the kernel's BTF is not readable");
        for (types, mechanism) in [(types, "tp_btf"), (None, "raw_tp")] {
            let t = SyscallTracer::start_with(types).unwrap_or_else(|e| panic!("{e}"));
            let me = gettid();
            getppids(100);
            t.count_task(me).unwrap();
            getppids(1234);
            t.forget_task(me).unwrap();
            getppids(100);
            let c = t.stop().unwrap();
            assert_eq!(c.mechanism, mechanism);
            // Nothing else: counting and forgetting are writes to shared memory.
            assert_eq!(c.calls("getppid"), 1234, "{mechanism}: {c:?}");
            assert_eq!(c.calls, 1234, "{mechanism}: {c:?}");
            assert_eq!(c.kind("getppid").unwrap().nr, Some(110));
            let cost = c.cost.unwrap();
            assert!(cost.base_ns > 0.0, "{cost:?}");
        }
    }

    #[test]
    #[ignore = "needs root: tracefs"]
    fn the_live_format_files_have_the_fields() {
        iolab_testkit::require_root();
        let root = iolab_blocktrace::tracefs_root().unwrap();
        let fork = Tracepoint::read(&root, "sched", "sched_process_fork").unwrap();
        assert!(fork.pid_field("child_pid").is_ok());
        assert!(fork.id > 0);
        let exec = Tracepoint::read(&root, "sched", "sched_process_exec").unwrap();
        assert!(exec.pid_field("old_pid").is_ok());
    }
}
