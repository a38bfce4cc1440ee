//! The tracer's four BPF programs, assembled by hand (no compiler, no BPF library): a few
//! dozen `struct bpf_insn`s each, with forward jumps to labels.
//!
//! Maps (see `tracer.rs`): `tasks`, a bitmap of two bits per TID ([`FOLLOW_BIT`]: the tasks
//! it creates are counted; [`COUNT_BIT`]: its own calls too) in an array of u64 words — word
//! `tid / 32`, bits `(tid % 32) * 2` and `+ 1` — which the programs and the tracer (through a
//! shared mapping of the array) change with atomic operations; `counts`, a per-CPU array of
//! [`Slot`]s, one per system call number below [`NR_SLOTS`], then [`SLOT_OTHER`] (higher
//! numbers), [`SLOT_ADDED`] (tasks the programs added) and [`SLOT_MISSED`] (tasks whose TID
//! is beyond `tasks`), then a scratch slot; `fast` (BTF programs only), a cache of followed
//! tasks' TIDs by `pt_regs` address ([`FAST_ENTRIES`]). Array lookups are inlined by the
//! verifier: a counted task's calls go through the BTF `sys_exit` program without a helper
//! call.
//! Per-CPU slots need no atomic operations: the programs run with preemption disabled, and
//! the kernel does not run a program again on a CPU where it is running.

use crate::names::NR_SLOTS;

/// The value of a `counts` slot: `calls` (tasks, in the last two slots), `bytes` (the sum
/// of the positive return values), `errors` (calls that returned -4095..-1), `sizes` (the
/// positive return values by power of two: `sizes[b]` counts those in `[2^b, 2^(b+1))`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Slot {
    pub calls: u64,
    pub bytes: u64,
    pub errors: u64,
    pub sizes: [u64; SIZE_BUCKETS],
}

impl Default for Slot {
    fn default() -> Self {
        Slot {
            calls: 0,
            bytes: 0,
            errors: 0,
            sizes: [0; SIZE_BUCKETS],
        }
    }
}

pub(crate) const SIZE_BUCKETS: usize = 64;
/// Bytes of a [`Slot`] (u64s: calls, bytes, errors, then the sizes).
pub(crate) const SLOT_SIZE: u32 = 8 * (3 + SIZE_BUCKETS as u32);
const SIZES_AT: i16 = 24;
pub(crate) const SLOT_OTHER: u32 = NR_SLOTS;
pub(crate) const SLOT_ADDED: u32 = NR_SLOTS + 1;
pub(crate) const SLOT_MISSED: u32 = NR_SLOTS + 2;
/// A per-CPU slot the `sys_exit` program turns a pointer into a number through.
pub(crate) const SLOT_SCRATCH: u32 = NR_SLOTS + 3;
pub(crate) const COUNT_SLOTS: u32 = NR_SLOTS + 4;

/// A task's bits in `tasks`, shifted down.
pub(crate) const FOLLOW_BIT: i32 = 1;
pub(crate) const COUNT_BIT: i32 = 2;
const TRACKED_BITS: i32 = FOLLOW_BIT | COUNT_BIT;
/// TIDs per `tasks` word.
pub(crate) const TASKS_PER_WORD: u32 = 32;

/// `offsetof(struct pt_regs, orig_ax)` on x86_64: the system call number.
const ORIG_AX: i32 = 15 * 8;

/// Largest errno a system call returns (as -errno).
const MAX_ERRNO: i32 = 4095;

/// One `struct bpf_insn`: opcode, dst_reg (low nibble) and src_reg (high nibble), offset,
/// immediate.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Insn {
    code: u8,
    regs: u8,
    off: i16,
    imm: i32,
}

const R0: u8 = 0;
const R1: u8 = 1;
const R2: u8 = 2;
const R3: u8 = 3;
const R4: u8 = 4;
const R6: u8 = 6;
const R7: u8 = 7;
const R8: u8 = 8;
const R9: u8 = 9;
const FP: u8 = 10;

// Opcodes (class | op | source).
const ALU64_MOV_K: u8 = 0x07 | 0xb0;
const ALU64_MOV_X: u8 = 0x07 | 0xb0 | 0x08;
const ALU64_ADD_K: u8 = 0x07;
const ALU64_ADD_X: u8 = 0x07 | 0x08;
const ALU32_MOV_X: u8 = 0x04 | 0xb0 | 0x08;
const ALU64_AND_K: u8 = 0x07 | 0x50;
const ALU64_XOR_K: u8 = 0x07 | 0xa0;
const ALU64_LSH_K: u8 = 0x07 | 0x60;
const ALU64_LSH_X: u8 = 0x07 | 0x60 | 0x08;
const ALU64_RSH_K: u8 = 0x07 | 0x70;
const ALU64_RSH_X: u8 = 0x07 | 0x70 | 0x08;
/// `BPF_STX | BPF_ATOMIC | BPF_DW`; the operation is the immediate.
const ATOMIC_DW: u8 = 0x03 | 0xc0 | 0x18;
const ATOMIC_OR: i32 = 0x40;
const ATOMIC_AND: i32 = 0x50;
/// `BPF_CMPXCHG`: `r0 = *(dst + off)`, and `*(dst + off) = src` if that was `r0`.
const ATOMIC_CMPXCHG: i32 = 0xf0 | 0x01;
const LDX_W: u8 = 0x01 | 0x60;
const LDX_DW: u8 = 0x01 | 0x60 | 0x18;
const STX_W: u8 = 0x03 | 0x60;
const STX_DW: u8 = 0x03 | 0x60 | 0x18;
const ST_W: u8 = 0x02 | 0x60;
const ST_DW: u8 = 0x02 | 0x60 | 0x18;
const LD_IMM64: u8 = 0x18;
const JA: u8 = 0x05;
const JEQ_K: u8 = 0x05 | 0x10;
const JEQ_X: u8 = 0x05 | 0x10 | 0x08;
const JNE_K: u8 = 0x05 | 0x50;
const JNE_X: u8 = 0x05 | 0x50 | 0x08;
const JSGT_K: u8 = 0x05 | 0x60;
const JLT_K: u8 = 0x05 | 0xa0;
const JLT_X: u8 = 0x05 | 0xa0 | 0x08;
const JSLT_K: u8 = 0x05 | 0xc0;
const CALL: u8 = 0x85;
const EXIT: u8 = 0x95;
/// `src_reg` of a `LD_IMM64` whose immediate is a map fd.
const PSEUDO_MAP_FD: u8 = 1;

// Helper functions.
const MAP_LOOKUP_ELEM: i32 = 1;
const GET_CURRENT_PID_TGID: i32 = 14;
const PROBE_READ_KERNEL: i32 = 113;
const GET_CURRENT_TASK_BTF: i32 = 158;
const TASK_PT_REGS: i32 = 175;

/// A program being written: instructions, and jumps waiting for their label.
#[derive(Default)]
struct Asm {
    insns: Vec<Insn>,
    labels: Vec<Option<usize>>,
    jumps: Vec<(usize, usize)>,
}

#[derive(Clone, Copy)]
struct Label(usize);

impl Asm {
    fn op(&mut self, code: u8, dst: u8, src: u8, off: i16, imm: i32) -> &mut Self {
        self.insns.push(Insn {
            code,
            regs: dst | (src << 4),
            off,
            imm,
        });
        self
    }

    fn label(&mut self) -> Label {
        self.labels.push(None);
        Label(self.labels.len() - 1)
    }

    fn here(&mut self, l: Label) -> &mut Self {
        self.labels[l.0] = Some(self.insns.len());
        self
    }

    fn jump(&mut self, code: u8, dst: u8, src: u8, imm: i32, to: Label) -> &mut Self {
        self.jumps.push((self.insns.len(), to.0));
        self.op(code, dst, src, 0, imm)
    }

    fn mov(&mut self, dst: u8, src: u8) -> &mut Self {
        self.op(ALU64_MOV_X, dst, src, 0, 0)
    }

    fn mov_imm(&mut self, dst: u8, imm: i32) -> &mut Self {
        self.op(ALU64_MOV_K, dst, 0, 0, imm)
    }

    fn add_imm(&mut self, dst: u8, imm: i32) -> &mut Self {
        self.op(ALU64_ADD_K, dst, 0, 0, imm)
    }

    /// `dst = fp + off`: a pointer to the stack.
    fn stack_ptr(&mut self, dst: u8, off: i16) -> &mut Self {
        self.mov(dst, FP).add_imm(dst, i32::from(off))
    }

    fn load_map(&mut self, dst: u8, map_fd: i32) -> &mut Self {
        self.op(LD_IMM64, dst, PSEUDO_MAP_FD, 0, map_fd)
            .op(0, 0, 0, 0, 0)
    }

    fn call(&mut self, helper: i32) -> &mut Self {
        self.op(CALL, 0, 0, 0, helper)
    }

    /// `r0 = lookup(map, fp + key_off)`.
    fn lookup(&mut self, map_fd: i32, key_off: i16) -> &mut Self {
        self.stack_ptr(R2, key_off)
            .load_map(R1, map_fd)
            .call(MAP_LOOKUP_ELEM)
    }

    /// `*(u64 *)(r0 + off) += src` (r0: a map value), through `tmp`.
    fn add_to_value(&mut self, off: i16, src: u8, tmp: u8) -> &mut Self {
        self.op(LDX_DW, tmp, R0, off, 0)
            .op(ALU64_ADD_X, tmp, src, 0, 0)
            .op(STX_DW, R0, tmp, off, 0)
    }

    /// `*(u64 *)(r0 + off) += 1`.
    fn bump_value(&mut self, off: i16) -> &mut Self {
        self.op(LDX_DW, R1, R0, off, 0)
            .add_imm(R1, 1)
            .op(STX_DW, R0, R1, off, 0)
    }

    /// `r0 = 0; exit`.
    fn ret(&mut self) -> &mut Self {
        self.mov_imm(R0, 0).op(EXIT, 0, 0, 0, 0)
    }

    fn finish(mut self) -> Vec<Insn> {
        for &(at, label) in &self.jumps {
            let to = self.labels[label].expect("every label is placed");
            self.insns[at].off = i16::try_from(to as isize - at as isize - 1)
                .expect("jumps stay within a short program");
        }
        self.insns
    }
}

/// Loads into `dst` the shift of task `tid`'s two bits in its `tasks` word: `(tid % 32) * 2`,
/// and leaves `tid / 32` at `fp + key_off` (the word's key).
fn task_bits(a: &mut Asm, dst: u8, tid: u8, key_off: i16) {
    a.mov(dst, tid)
        .op(ALU64_RSH_K, dst, 0, 0, 5)
        .op(STX_W, FP, dst, key_off, 0)
        .mov(dst, tid)
        .op(ALU64_AND_K, dst, 0, 0, 31)
        .op(ALU64_LSH_K, dst, 0, 0, 1);
}

/// How the `sys_exit` program finds the task's TID and the system call number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    /// A raw tracepoint program: `bpf_get_current_pid_tgid()`, and
    /// `bpf_probe_read_kernel()` of `regs->orig_ax` at its x86_64 offset.
    Raw,
    /// A BTF tracepoint program: plain loads of `regs->orig_ax` and of the TID cached in
    /// `fast` (map fd) for the task's `pt_regs` address, `current->pid` on a miss (the
    /// offsets the kernel's BTF gives). A helper call costs as much as all the rest of the
    /// program on the machines measured (≈ 19 ns with retpolines and SRSO's safe RET): the
    /// counted tasks make none.
    Btf {
        task_pid: i16,
        regs_nr: i16,
        fast: i32,
    },
}

/// Entries of the `fast` cache: the address of a tracked task's `pt_regs` (a task's is
/// fixed for its life, and no two live tasks share one) → its TID. Direct-mapped by
/// address bits 14 and up (kernel stacks are 16 KiB apart at least); a task whose entry is
/// taken by another takes the slow way, still counted.
pub(crate) const FAST_ENTRIES: u32 = 8192;
/// Bytes of a `fast` entry: the address (0: free), the TID, padding.
pub(crate) const FAST_SIZE: u32 = 16;

/// `r1 = tid r7's two bits (0..3)`; to `out` if r7 is beyond `tasks`. Clobbers r0-r5.
fn check_bits(a: &mut Asm, tasks: i32, out: Label) {
    a.mov(R1, R7)
        .op(ALU64_RSH_K, R1, 0, 0, 5)
        .op(STX_W, FP, R1, -4, 0)
        .lookup(tasks, -4)
        .jump(JEQ_K, R0, 0, 0, out)
        .op(LDX_DW, R1, R0, 0, 0)
        .mov(R2, R7)
        .op(ALU64_AND_K, R2, 0, 0, 31)
        .op(ALU64_LSH_K, R2, 0, 0, 1)
        .op(ALU64_RSH_X, R1, R2, 0, 0)
        .op(ALU64_AND_K, R1, 0, 0, TRACKED_BITS);
}

/// `r9 = the pt_regs pointer in r8 as a number`, through the per-CPU scratch slot of
/// `counts` (the verifier lets a privileged program store a pointer in a map and read it
/// back as a number, not cast it); `r0` = the `fast` entry for it. To `out` on a failed
/// lookup. Clobbers r0-r5.
fn fast_entry(a: &mut Asm, counts: i32, fast: i32, out: Label) {
    a.op(ST_W, FP, 0, -4, SLOT_SCRATCH as i32)
        .lookup(counts, -4)
        .jump(JEQ_K, R0, 0, 0, out)
        .op(STX_DW, R0, R8, 0, 0)
        .op(LDX_DW, R9, R0, 0, 0)
        .mov(R1, R9)
        .op(ALU64_RSH_K, R1, 0, 0, 14)
        .op(ALU64_AND_K, R1, 0, 0, FAST_ENTRIES as i32 - 1)
        .op(STX_W, FP, R1, -4, 0)
        .lookup(fast, -4)
        .jump(JEQ_K, R0, 0, 0, out);
}

/// Frees the current task's `fast` entry, if it has one: it exits (its stack, and so its
/// `pt_regs` address, may go to the next task created) or takes another TID (exec).
/// Clobbers r0-r5, r8, r9.
fn forget_fast(a: &mut Asm, counts: i32, fast: i32) {
    let done = a.label();
    a.call(GET_CURRENT_TASK_BTF)
        .mov(R1, R0)
        .call(TASK_PT_REGS)
        .mov(R8, R0);
    fast_entry(a, counts, fast, done);
    a.op(LDX_DW, R1, R0, 0, 0)
        .jump(JNE_X, R1, R9, 0, done)
        .op(ST_DW, R0, 0, 0, 0);
    a.here(done);
}

/// Tracepoint `sys_exit(struct pt_regs *regs, long ret)`: for a counted task, one call more
/// in the slot of the system call number (`regs->orig_ax`), `ret` added to its bytes when
/// positive, one error more when it is an error.
pub(crate) fn sys_exit(tasks: i32, counts: i32, access: Access) -> Vec<Insn> {
    let mut a = Asm::default();
    let (out, bits, store, bytes) = (a.label(), a.label(), a.label(), a.label());
    a.mov(R6, R1);
    match access {
        Access::Raw => {
            a.call(GET_CURRENT_PID_TGID).op(ALU32_MOV_X, R7, R0, 0, 0);
            check_bits(&mut a, tasks, out);
        }
        Access::Btf { task_pid, fast, .. } => {
            let slow = a.label();
            a.op(LDX_DW, R8, R6, 0, 0);
            fast_entry(&mut a, counts, fast, out);
            a.mov(R8, R0)
                .op(LDX_DW, R1, R8, 0, 0)
                .jump(JNE_X, R1, R9, 0, slow)
                .op(LDX_W, R7, R8, 8, 0);
            check_bits(&mut a, tasks, out);
            a.jump(JA, 0, 0, 0, bits);
            a.here(slow)
                .call(GET_CURRENT_TASK_BTF)
                .op(LDX_W, R7, R0, task_pid, 0);
            check_bits(&mut a, tasks, out);
            // A tracked task takes the entry if it is free (one taken by another live task
            // stays its).
            a.jump(JEQ_K, R1, 0, 0, out)
                .mov_imm(R0, 0)
                .op(ATOMIC_DW, R8, R9, 0, ATOMIC_CMPXCHG)
                .jump(JNE_K, R0, 0, 0, bits)
                .op(STX_W, R8, R7, 8, 0);
        }
    }
    a.here(bits)
        .op(ALU64_AND_K, R1, 0, 0, COUNT_BIT)
        .jump(JEQ_K, R1, 0, 0, out);
    match access {
        Access::Raw => {
            // probe_read_kernel(fp - 16, 8, regs + ORIG_AX)
            a.op(LDX_DW, R3, R6, 0, 0)
                .add_imm(R3, ORIG_AX)
                .stack_ptr(R1, -16)
                .mov_imm(R2, 8)
                .call(PROBE_READ_KERNEL)
                .mov_imm(R1, SLOT_OTHER as i32)
                .jump(JNE_K, R0, 0, 0, store)
                .op(LDX_DW, R1, FP, -16, 0);
        }
        Access::Btf { regs_nr, .. } => {
            a.op(LDX_DW, R3, R6, 0, 0).op(LDX_DW, R1, R3, regs_nr, 0);
        }
    }
    a.jump(JLT_K, R1, 0, NR_SLOTS as i32, store)
        .mov_imm(R1, SLOT_OTHER as i32);
    a.here(store)
        .op(STX_W, FP, R1, -4, 0)
        .lookup(counts, -4)
        .jump(JEQ_K, R0, 0, 0, out);
    a.bump_value(0)
        .op(LDX_DW, R1, R6, 8, 0)
        .jump(JSGT_K, R1, 0, 0, bytes)
        .jump(JEQ_K, R1, 0, 0, out)
        .jump(JSLT_K, R1, 0, -MAX_ERRNO, out)
        .bump_value(16)
        .jump(JA, 0, 0, 0, out);
    a.here(bytes).add_to_value(8, R1, R2);
    log2_bucket(&mut a);
    a.here(out).ret();
    a.finish()
}

/// `sizes[floor(log2(r1))] += 1` for `r1 > 0` in the slot at `r0`, by binary search
/// (BPF has no count-leading-zeros); clobbers r1, r3, r4.
fn log2_bucket(a: &mut Asm) {
    let done = a.label();
    a.mov_imm(R3, 0)
        .mov_imm(R4, 1)
        .op(ALU64_LSH_K, R4, 0, 0, 32);
    let next = a.label();
    a.jump(JLT_X, R1, R4, 0, next)
        .op(ALU64_RSH_K, R1, 0, 0, 32)
        .add_imm(R3, 32);
    a.here(next);
    for bits in [16, 8, 4, 2] {
        let next = a.label();
        a.jump(JLT_K, R1, 0, 1 << bits, next)
            .op(ALU64_RSH_K, R1, 0, 0, bits)
            .add_imm(R3, bits);
        a.here(next);
    }
    a.jump(JLT_K, R1, 0, 2, done).add_imm(R3, 1);
    // The mask bounds the index for the verifier; it is at most 63 anyway.
    a.here(done)
        .op(ALU64_AND_K, R3, 0, 0, SIZE_BUCKETS as i32 - 1)
        .op(ALU64_LSH_K, R3, 0, 0, 3)
        .op(ALU64_ADD_X, R0, R3, 0, 0)
        .bump_value(SIZES_AT);
}

/// Tracepoint `sched/sched_process_fork` (runs in the parent, before the child runs): a
/// task created by a tracked task is counted, whether its creator is counted or only
/// followed; one task more in [`SLOT_ADDED`] (in [`SLOT_MISSED`] if its TID is beyond
/// `tasks`). `child_pid` is the offset of that field in the event's record.
pub(crate) fn fork(tasks: i32, counts: i32, child_pid: i16) -> Vec<Insn> {
    let mut a = Asm::default();
    let (out, bump) = (a.label(), a.label());
    a.mov(R6, R1)
        .call(GET_CURRENT_PID_TGID)
        .op(ALU32_MOV_X, R7, R0, 0, 0);
    task_bits(&mut a, R8, R7, -4);
    a.lookup(tasks, -4)
        .jump(JEQ_K, R0, 0, 0, out)
        .op(LDX_DW, R1, R0, 0, 0)
        .op(ALU64_RSH_X, R1, R8, 0, 0)
        .op(ALU64_AND_K, R1, 0, 0, FOLLOW_BIT)
        .jump(JEQ_K, R1, 0, 0, out)
        .op(LDX_W, R7, R6, child_pid, 0);
    task_bits(&mut a, R8, R7, -4);
    a.lookup(tasks, -4)
        .mov_imm(R1, SLOT_MISSED as i32)
        .jump(JEQ_K, R0, 0, 0, bump)
        .mov_imm(R1, TRACKED_BITS)
        .op(ALU64_LSH_X, R1, R8, 0, 0)
        .op(ATOMIC_DW, R0, R1, 0, ATOMIC_OR)
        .mov_imm(R1, SLOT_ADDED as i32);
    a.here(bump)
        .op(STX_W, FP, R1, -4, 0)
        .lookup(counts, -4)
        .jump(JEQ_K, R0, 0, 0, out)
        .bump_value(0);
    a.here(out).ret();
    a.finish()
}

/// Clears task `tid`'s bits (`r0`: its word), through `r1`.
fn clear_bits(a: &mut Asm, shift: u8) {
    a.mov_imm(R1, TRACKED_BITS)
        .op(ALU64_LSH_X, R1, shift, 0, 0)
        .op(ALU64_XOR_K, R1, 0, 0, -1)
        .op(ATOMIC_DW, R0, R1, 0, ATOMIC_AND);
}

/// Tracepoint `sched/sched_process_exec`: a thread other than the leader that calls
/// execve takes the leader's TID (`pid`; its own was `old_pid`), whose bits were cleared
/// when the leader exited: the thread's bits move to its new TID (and its `fast` entry,
/// which has the old one, goes).
pub(crate) fn exec(tasks: i32, counts: i32, pid: i16, old_pid: i16, access: Access) -> Vec<Insn> {
    let mut a = Asm::default();
    let out = a.label();
    a.mov(R6, R1)
        .op(LDX_W, R7, R6, old_pid, 0)
        .op(LDX_W, R1, R6, pid, 0)
        .jump(JEQ_X, R7, R1, 0, out);
    if let Access::Btf { fast, .. } = access {
        forget_fast(&mut a, counts, fast);
    }
    task_bits(&mut a, R8, R7, -4);
    a.lookup(tasks, -4)
        .jump(JEQ_K, R0, 0, 0, out)
        .op(LDX_DW, R9, R0, 0, 0)
        .op(ALU64_RSH_X, R9, R8, 0, 0)
        .op(ALU64_AND_K, R9, 0, 0, TRACKED_BITS)
        .jump(JEQ_K, R9, 0, 0, out);
    clear_bits(&mut a, R8);
    a.op(LDX_W, R7, R6, pid, 0);
    task_bits(&mut a, R8, R7, -4);
    a.lookup(tasks, -4)
        .jump(JEQ_K, R0, 0, 0, out)
        .op(ALU64_LSH_X, R9, R8, 0, 0)
        .op(ATOMIC_DW, R0, R9, 0, ATOMIC_OR);
    a.here(out).ret();
    a.finish()
}

/// Raw tracepoint `sched_process_exit` (runs in the exiting task): clears its bits, since
/// the kernel may give its TID to an unrelated task later, and frees its `fast` entry.
pub(crate) fn exit(tasks: i32, counts: i32, access: Access) -> Vec<Insn> {
    let mut a = Asm::default();
    let out = a.label();
    if let Access::Btf { fast, .. } = access {
        forget_fast(&mut a, counts, fast);
    }
    a.call(GET_CURRENT_PID_TGID).op(ALU32_MOV_X, R7, R0, 0, 0);
    task_bits(&mut a, R8, R7, -4);
    a.lookup(tasks, -4)
        .jump(JEQ_K, R0, 0, 0, out)
        .op(LDX_DW, R1, R0, 0, 0)
        .op(ALU64_RSH_X, R1, R8, 0, 0)
        .op(ALU64_AND_K, R1, 0, 0, TRACKED_BITS)
        .jump(JEQ_K, R1, 0, 0, out);
    clear_bits(&mut a, R8);
    a.here(out).ret();
    a.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jumps_land_on_their_labels() {
        let mut a = Asm::default();
        let (l, m) = (a.label(), a.label());
        a.jump(JEQ_K, R0, 0, 0, l)
            .mov_imm(R1, 1)
            .load_map(R1, 7)
            .here(l)
            .jump(JA, 0, 0, 0, m)
            .here(m)
            .ret();
        let p = a.finish();
        assert_eq!(p.len(), 7);
        // From 0 over the mov and the two halves of LD_IMM64 to 4.
        assert_eq!(p[0].off, 3);
        assert_eq!(p[4].off, 0);
        assert_eq!(p[2].regs, R1 | (PSEUDO_MAP_FD << 4));
        assert_eq!(p[2].imm, 7);
        assert_eq!(
            *p.last().unwrap(),
            Insn {
                code: EXIT,
                regs: 0,
                off: 0,
                imm: 0
            }
        );
    }

    #[test]
    fn programs_end_with_exit() {
        let btf = Access::Btf {
            task_pid: 8,
            regs_nr: 120,
            fast: 5,
        };
        for p in [
            sys_exit(3, 4, Access::Raw),
            sys_exit(3, 4, btf),
            fork(3, 4, 20),
            exec(3, 4, 12, 16, Access::Raw),
            exec(3, 4, 12, 16, btf),
            exit(3, 4, Access::Raw),
            exit(3, 4, btf),
        ] {
            assert_eq!(p.last().unwrap().code, EXIT);
            assert!(p.len() < 150);
        }
        assert_eq!(std::mem::size_of::<Insn>(), 8);
    }
}
