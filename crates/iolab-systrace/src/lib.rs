//! iolab-systrace: the system calls of a process tree, counted per kind — calls, bytes
//! moved, errors — in the kernel, at a cost small enough to leave on during a measurement.
//! `iolab trace --syscalls -- CMD` uses it, and the runner can (a thread that spawns the
//! workload is followed, iolab's other threads are not).
//!
//! How: four BPF programs, assembled here by hand (`insn`) and loaded with bpf(2) (`bpf`),
//! no compiler or BPF library needed:
//! - on the tracepoint `sys_exit` (every system call's return, every task): if the current
//!   TID's "count" bit is set in the `tasks` bitmap, one call more, the return value added
//!   to the bytes and its power-of-two bucket (when positive) or one error more
//!   (-4095..-1), in a per-CPU array slot of the call's number. Nothing goes through a ring
//!   buffer; no event is lost. Where the kernel has BTF (`btf`), a BTF tracepoint program
//!   that calls no helper for a followed task (its TID is cached by its `pt_regs` address);
//!   a raw tracepoint program that calls two otherwise;
//! - on `sched/sched_process_fork` (threads and processes alike, in the parent, before the
//!   child runs): a child of a tracked task is counted;
//! - on `sched/sched_process_exec`: a non-leader thread that execs takes the leader's TID,
//!   and its bits move with it (its cache entry goes);
//! - on `sched_process_exit`: the TID's bits are cleared (TIDs are reused) and its cache
//!   entry goes (kernel stacks are reused).
//!
//! The bitmap is mapped into this process too (`BPF_F_MMAPABLE`): counting, following and
//! forgetting a task are atomic operations on shared memory, not system calls.
//!
//! [`SyscallTracer::stop`] detaches them and sums the per-CPU slots into
//! [`SyscallCounts`]. Every kernel object is an fd the tracer owns: dropping the tracer (a
//! panic, an error on the way) detaches and frees everything.
//!
//! Facts this relies on (checked on Linux 6.18, x86_64): the `sys_exit` tracepoint's
//! arguments are `(struct pt_regs *, long ret)` and the number is `regs->orig_ax`; syscall
//! tracepoints run BPF programs with preemption disabled (so per-CPU slots need no atomics);
//! `sched_process_fork` fires for every clone before the child is woken, and
//! `sched_process_exit` before the exiting thread's `clear_child_tid` wakes its joiner; a
//! program detached from `sys_exit` is freed after an RCU grace period, not at once; a
//! task's `pt_regs` sit at the top of its kernel stack, at an address fixed for its life
//! and shared with no other live task (kernel stacks are 16 KiB and more apart); the
//! verifier lets a privileged program store a pointer in a map and read it back as a
//! number (it refuses casts and partial reads of a spilled pointer). `exit`
//! and `exit_group` never return, so they are never counted; io_uring's reads and writes
//! are not system calls (only `io_uring_enter` is counted).
//!
//! | module | content |
//! |---|---|
//! | `tracer` | [`SyscallTracer`] |
//! | `counts` | [`SyscallCounts`], [`SyscallKind`], [`TracerCost`] |
//! | [`names`] | x86_64 numbers → names, the calls that return byte counts |
//! | `insn` | the four programs |
//! | `bpf` | the bpf(2) and perf_event_open(2) calls |
//! | `btf` | the kernel's BTF: the ids and offsets the BTF program needs |
//!
//! This crate never prints.

mod bpf;
mod btf;
mod counts;
mod error;
mod insn;
pub mod names;
mod tracer;

pub use counts::{SyscallCounts, SyscallKind, TracerCost};
pub use error::SysTraceError;
pub use names::BYTE_CALLS;
pub use tracer::{gettid, KernelObject, SyscallTracer, MAX_TID};
