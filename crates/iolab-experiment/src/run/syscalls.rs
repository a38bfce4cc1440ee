//! The syscall view of a run (`--trace-syscalls`, `[procedure] trace_syscalls = true`): the
//! calls and the bytes of every system call the workload made over the timed region — its
//! whole process tree, iolab's own kinds and another tool alike — counted in the kernel
//! (iolab-systrace), stored as `sys.*` run metrics, and set by the checks against what the
//! workload claims and what the device moved.
//!
//! Which tasks are the workload's: when the timed region starts, every thread of iolab's
//! process but iolab's own helpers (the sampler, the cache cap's watcher, the block tracer's
//! reader, the stall watchdog, the cancel forwarder: [`OWN_THREADS`]) is counted, and so is everything they create from then
//! on. The thread that runs the workload is counted too — unless it only supervises another
//! program (the exec kind), in which case only what it starts is. iolab's progress line,
//! written by a counted thread, is left out ([`SyscallView::quiet`]).

use iolab_store::{Metric, RunRecord};
use iolab_systrace::{SyscallCounts, SyscallTracer};

/// iolab's own helper threads, by name: the sampler (iolab-monitor), the cache cap's watcher
/// (iolab-sut), the block tracer's reader (iolab-blocktrace), the stall watchdog and the run's
/// cancel forwarder (the runner). The workload's threads have other names (`iolab-w0`,
/// `iolab-iozone1`, …).
const OWN_THREADS: &[&str] = &[
    "iolab-sampler",
    "iolab-cap",
    "iolab-blocktrace",
    "iolab-watchdog",
    "iolab-cancel",
];

/// The calls whose return value is bytes read from a file (or a socket, a pipe).
pub const READS: &[&str] = &["read", "pread64", "readv", "preadv", "preadv2"];
/// The calls whose return value is bytes written.
pub const WRITES: &[&str] = &["write", "pwrite64", "writev", "pwritev", "pwritev2"];
/// Calls that move data without returning it as bytes: what the syscall view sees of their
/// I/O is a lower bound.
pub const ASYNC: &[&str] = &[
    "io_uring_enter",
    "io_submit",
    "io_getevents",
    "io_pgetevents",
];

/// The tracer over one run.
#[derive(Default)]
pub struct SyscallView {
    tracer: Option<SyscallTracer>,
    counts: Option<SyscallCounts>,
    /// Why the view is off or partial, for the user.
    pub note: Option<String>,
    supervising: bool,
    /// The workload runs in this worker process (a container's): its threads are counted,
    /// not this process's.
    worker: Option<u32>,
    /// The calling thread is counted (so [`SyscallView::quiet`] pauses it).
    counting_me: Option<i32>,
}

impl SyscallView {
    /// Loads the tracer (before the timed region: loading costs milliseconds).
    pub fn start() -> SyscallView {
        match SyscallTracer::start() {
            Ok(t) => SyscallView {
                tracer: Some(t),
                ..SyscallView::default()
            },
            Err(e) => SyscallView {
                note: Some(format!("the syscall view is off: {e}")),
                ..SyscallView::default()
            },
        }
    }

    /// The thread that starts the timed region only supervises another program: count what
    /// it starts, not its own waiting.
    pub fn supervising(&mut self) {
        self.supervising = true;
    }

    /// A view that counts nothing, and says why.
    pub fn off(note: String) -> SyscallView {
        SyscallView {
            note: Some(note),
            ..SyscallView::default()
        }
    }

    /// The workload runs in the worker process `pid` (`iolab __worker` in a container): its
    /// threads, and what they create, are counted instead of this process's; the worker's
    /// link to the runner ([`super::worker::LINK_THREADS`]) is not.
    pub fn worker(&mut self, pid: u32) {
        self.worker = Some(pid);
    }

    /// The timed region starts: the workload's threads are counted from now on.
    pub fn begin(&mut self) {
        let Some(t) = &self.tracer else { return };
        if let Some(pid) = self.worker {
            let mut failed = None;
            for (tid, name) in threads(&format!("/proc/{pid}/task")) {
                if super::worker::LINK_THREADS.contains(&name.as_str()) {
                    continue;
                }
                if let Err(e) = t.count_task(tid) {
                    failed.get_or_insert(e.to_string());
                }
            }
            if let Some(e) = failed {
                self.note = Some(format!(
                    "the syscall view missed a thread of the worker: {e}"
                ));
            }
            return;
        }
        let me = iolab_systrace::gettid();
        let mut failed = None;
        for (tid, name) in threads("/proc/self/task") {
            if tid == me || OWN_THREADS.contains(&name.as_str()) {
                continue;
            }
            if let Err(e) = t.count_task(tid) {
                failed.get_or_insert(e.to_string());
            }
        }
        let r = if self.supervising {
            t.follow_task(me)
        } else {
            self.counting_me = Some(me);
            t.count_task(me)
        };
        if let Err(e) = r {
            failed.get_or_insert(e.to_string());
        }
        if let Some(e) = failed {
            self.note = Some(format!("the syscall view missed a thread: {e}"));
        }
    }

    /// Runs `f` (iolab's own output) without counting the calling thread's calls.
    pub fn quiet<R>(&self, f: impl FnOnce() -> R) -> R {
        let (Some(t), Some(me)) = (&self.tracer, self.counting_me) else {
            return f();
        };
        if iolab_systrace::gettid() != me || t.forget_task(me).is_err() {
            return f();
        }
        let r = f();
        let _ = t.count_task(me);
        r
    }

    /// The timed region has ended: the counts.
    pub fn end(&mut self) {
        if let Some(t) = self.tracer.take() {
            // Reading the counts takes system calls of this thread's own.
            if let Some(me) = self.counting_me.take() {
                let _ = t.forget_task(me);
            }
            match t.stop() {
                Ok(c) => self.counts = Some(c),
                Err(e) => self.note = Some(format!("the syscall counts were lost: {e}")),
            }
        }
    }

    /// Adds the counts to `rec` as `sys.*` run metrics.
    pub fn add_metrics(&self, rec: &mut RunRecord) {
        if let Some(c) = &self.counts {
            add_metrics(rec, c);
        }
    }
}

/// The threads of this process: (TID, name).
/// The threads listed in a `/proc/PID/task` directory, with their names.
fn threads(task_dir: &str) -> Vec<(i32, String)> {
    let Ok(dir) = std::fs::read_dir(task_dir) else {
        return Vec::new();
    };
    dir.filter_map(Result::ok)
        .filter_map(|e| {
            let tid = e.file_name().to_str()?.parse::<i32>().ok()?;
            let name = std::fs::read_to_string(e.path().join("comm")).unwrap_or_default();
            Some((tid, name.trim_end().to_string()))
        })
        .collect()
}

/// The `sys.*` metrics of `c`: per system call its calls (`sys.NAME.calls`) and, for the
/// calls that return byte counts, its bytes (`sys.NAME.bytes`); the totals of the read and
/// write families (`sys.read_bytes`, `sys.write_bytes`), all calls, errors, the calls of
/// asynchronous I/O, the tasks followed and the tracer's estimated cost.
pub fn add_metrics(rec: &mut RunRecord, c: &SyscallCounts) {
    let m = &mut rec.metrics;
    let mut put = |name: String, v: f64, unit: &str| m.push(Metric::new(name, v, unit));
    let sum = |names: &[&str]| names.iter().map(|n| c.bytes_of(n)).sum::<u64>() as f64;
    put("sys.calls".into(), c.calls as f64, "");
    put("sys.errors".into(), c.errors as f64, "");
    put("sys.read_bytes".into(), sum(READS), "B");
    put("sys.write_bytes".into(), sum(WRITES), "B");
    put(
        "sys.async_calls".into(),
        ASYNC.iter().map(|n| c.calls(n)).sum::<u64>() as f64,
        "",
    );
    put("sys.tasks".into(), c.tasks as f64, "");
    if let Some(cost) = c.cost {
        put(
            "sys.tracer_ns".into(),
            cost.estimate_ns(c.calls) as f64,
            "ns",
        );
    }
    for k in &c.kinds {
        put(format!("sys.{}.calls", k.name), k.calls as f64, "");
        if let Some(b) = k.bytes {
            put(format!("sys.{}.bytes", k.name), b as f64, "B");
        }
    }
}
