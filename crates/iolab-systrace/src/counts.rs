//! What the tracer counted: calls, bytes and errors per system call, tasks followed, and the
//! tracer's own cost.

use iolab_blocktrace::{Bucket, Pow2Histogram};
use serde::Serialize;

use crate::insn::Slot;
use crate::names::{self, NR_SLOTS, OTHER};

/// The calls of one system call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SyscallKind {
    /// `"pwrite64"`; `"other"` for numbers not in the 64-bit table.
    pub name: String,
    /// Its x86_64 number (`None` for `"other"`).
    pub nr: Option<u32>,
    /// Calls that returned (so `exit` and `exit_group` are never counted).
    pub calls: u64,
    /// For the calls that return a byte count ([`crate::BYTE_CALLS`]): the sum of their
    /// positive return values. `None` for the others.
    pub bytes: Option<u64>,
    /// Calls that returned an error (-4095..-1).
    pub errors: u64,
    /// For the calls that return a byte count: their positive return values by power of
    /// two (64 writes of 1 MiB: one bucket `{low: 1048576, count: 64}`).
    pub sizes: Option<Pow2Histogram>,
}

/// The tracer's cost, measured when it started: `getppid(2)` timed in a loop on the thread
/// that started it, before the programs were attached, after, and with the thread counted.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TracerCost {
    /// One call without the tracer, ns.
    pub base_ns: f64,
    /// What the tracer adds to every call of every task on the machine, ns (the
    /// tracepoint, and looking up whether the task is tracked).
    pub any_call_ns: f64,
    /// What it adds to a counted call, ns (that, and counting).
    pub counted_call_ns: f64,
}

impl TracerCost {
    /// The time the tracer added to `calls` counted calls, ns (an estimate: what it added
    /// to the other tasks' calls is not in it).
    pub fn estimate_ns(&self, calls: u64) -> u64 {
        (self.counted_call_ns.max(0.0) * calls as f64).round() as u64
    }
}

/// What [`SyscallTracer::stop`](crate::SyscallTracer::stop) returns.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SyscallCounts {
    /// One per system call made at least once: most calls first, then by name.
    pub kinds: Vec<SyscallKind>,
    /// All calls counted.
    pub calls: u64,
    /// All calls that returned an error.
    pub errors: u64,
    /// The bytes of all calls that return a byte count.
    pub bytes: u64,
    /// Tasks counted or followed: those given to the tracer and those they created.
    pub tasks: u64,
    /// Tasks created by tracked tasks that could not be tracked (the table of tracked tasks
    /// was full): their calls are missing. 0 in any sane run.
    pub tasks_missed: u64,
    /// From the start of the tracer to the counts, ns.
    pub duration_ns: u64,
    /// The tracer's cost, if it could be measured.
    pub cost: Option<TracerCost>,
    /// How the calls were counted: `"tp_btf"` (a BTF tracepoint program on `sys_exit`) or
    /// `"raw_tp"` (a raw tracepoint program, on kernels without BTF: ≈10 ns a call more).
    pub mechanism: &'static str,
}

impl Slot {
    fn add(&mut self, s: &Slot) {
        self.calls += s.calls;
        self.errors += s.errors;
    }
}

impl SyscallCounts {
    /// `slots[i]`: the summed counts of slot `i` (system call `i` below [`NR_SLOTS`], then
    /// other, added tasks, missed tasks).
    pub(crate) fn from_slots(slots: &[Slot], given_tasks: u64, duration_ns: u64) -> Self {
        let mut kinds = Vec::new();
        let mut other = Slot::default();
        for (nr, s) in (0u32..).zip(slots.iter().take(NR_SLOTS as usize)) {
            if s.calls == 0 {
                continue;
            }
            match names::name(nr) {
                Some(name) => kinds.push(kind(name, Some(nr), s)),
                None => other.add(s),
            }
        }
        if let Some(s) = slots.get(NR_SLOTS as usize) {
            other.add(s);
        }
        if other.calls > 0 {
            kinds.push(kind(OTHER, None, &other));
        }
        kinds.sort_by(|a, b| b.calls.cmp(&a.calls).then_with(|| a.name.cmp(&b.name)));
        let at = |i: u32| slots.get(i as usize).map_or(0, |s| s.calls);
        SyscallCounts {
            calls: kinds.iter().map(|k| k.calls).sum(),
            errors: kinds.iter().map(|k| k.errors).sum(),
            bytes: kinds.iter().filter_map(|k| k.bytes).sum(),
            kinds,
            tasks: given_tasks + at(crate::insn::SLOT_ADDED),
            tasks_missed: at(crate::insn::SLOT_MISSED),
            duration_ns,
            cost: None,
            mechanism: "",
        }
    }

    /// The counts of system call `name`, if it was called.
    pub fn kind(&self, name: &str) -> Option<&SyscallKind> {
        self.kinds.iter().find(|k| k.name == name)
    }

    /// Calls of `name` (0 if none).
    pub fn calls(&self, name: &str) -> u64 {
        self.kind(name).map_or(0, |k| k.calls)
    }

    /// Bytes of `name` (0 if none or not a byte-moving call).
    pub fn bytes_of(&self, name: &str) -> u64 {
        self.kind(name).and_then(|k| k.bytes).unwrap_or(0)
    }
}

fn kind(name: &str, nr: Option<u32>, s: &Slot) -> SyscallKind {
    let bytes = names::moves_bytes(name);
    SyscallKind {
        name: name.to_owned(),
        nr,
        calls: s.calls,
        bytes: bytes.then_some(s.bytes),
        errors: s.errors,
        sizes: bytes.then(|| Pow2Histogram {
            buckets: (0u32..)
                .zip(s.sizes)
                .filter(|&(_, count)| count > 0)
                .map(|(b, count)| Bucket {
                    low: 1u64 << b,
                    count,
                })
                .collect(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::insn::{COUNT_SLOTS, SLOT_ADDED, SLOT_MISSED, SLOT_OTHER};

    fn slot(calls: u64, bytes: u64, errors: u64) -> Slot {
        Slot {
            calls,
            bytes,
            errors,
            ..Default::default()
        }
    }

    #[test]
    fn slots_become_kinds() {
        let mut slots = vec![Slot::default(); COUNT_SLOTS as usize];
        slots[1] = slot(67, (64 << 20) + 100, 0); // write
        slots[1].sizes[20] = 64;
        slots[1].sizes[4] = 3;
        slots[0] = slot(65, 64 << 20, 1); // read
        slots[9] = slot(3, 0x7f00_0000_0000, 0); // mmap: an address, not bytes
        slots[400] = slot(2, 0, 2); // no such call
        slots[SLOT_OTHER as usize] = slot(1, 0, 1);
        slots[SLOT_ADDED as usize] = slot(2, 0, 0);
        slots[SLOT_MISSED as usize] = slot(1, 0, 0);
        let c = SyscallCounts::from_slots(&slots, 1, 5);
        let names: Vec<&str> = c.kinds.iter().map(|k| k.name.as_str()).collect();
        assert_eq!(names, ["write", "read", "mmap", "other"]);
        assert_eq!(c.calls, 65 + 67 + 3 + 3);
        assert_eq!(c.bytes, (128 << 20) + 100);
        assert_eq!(c.errors, 4);
        assert_eq!(c.kind("mmap").unwrap().bytes, None);
        assert_eq!(c.kind("write").unwrap().nr, Some(1));
        assert_eq!(
            (c.calls("write"), c.bytes_of("write")),
            (67, (64 << 20) + 100)
        );
        let sizes = c.kind("write").unwrap().sizes.as_ref().unwrap();
        assert_eq!(
            sizes.buckets,
            [
                Bucket { low: 16, count: 3 },
                Bucket {
                    low: 1 << 20,
                    count: 64
                }
            ]
        );
        assert_eq!(c.kind("read").unwrap().sizes.as_ref().unwrap().total(), 0);
        assert_eq!(c.kind("mmap").unwrap().sizes, None);
        assert_eq!((c.calls("fsync"), c.bytes_of("mmap")), (0, 0));
        assert_eq!(c.kind("other").unwrap().errors, 3);
        assert_eq!((c.tasks, c.tasks_missed), (3, 1));
    }

    #[test]
    fn cost_estimate() {
        let c = TracerCost {
            base_ns: 100.0,
            any_call_ns: 20.0,
            counted_call_ns: 35.5,
        };
        assert_eq!(c.estimate_ns(1000), 35_500);
        let c = TracerCost {
            counted_call_ns: -3.0,
            ..c
        };
        assert_eq!(c.estimate_ns(1000), 0);
    }
}
