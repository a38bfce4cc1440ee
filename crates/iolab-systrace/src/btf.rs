//! Just enough of the kernel's BTF (`/sys/kernel/btf/vmlinux`, the kernel's own type
//! information) to attach the `sys_exit` program as a BTF tracepoint: the id of the typedef
//! `btf_trace_sys_exit`, and the offsets of `task_struct.pid` and `pt_regs.orig_ax`. A BTF
//! program reads those fields with plain loads, where a raw tracepoint program would call
//! `bpf_probe_read_kernel` (≈10 ns a call more on the machines measured).
//!
//! Format: `include/uapi/linux/btf.h` — a header, then the types (ids from 1, each a
//! 12-byte `struct btf_type` and data whose size depends on its kind), then the strings.

use std::path::Path;

/// `/sys/kernel/btf/vmlinux`.
pub(crate) const VMLINUX: &str = "/sys/kernel/btf/vmlinux";

const MAGIC: u16 = 0xeb9f;

const KIND_INT: u32 = 1;
const KIND_ARRAY: u32 = 3;
const KIND_STRUCT: u32 = 4;
const KIND_UNION: u32 = 5;
const KIND_ENUM: u32 = 6;
const KIND_TYPEDEF: u32 = 8;
const KIND_FUNC_PROTO: u32 = 13;
const KIND_VAR: u32 = 14;
const KIND_DATASEC: u32 = 15;
const KIND_DECL_TAG: u32 = 17;
const KIND_ENUM64: u32 = 19;

/// What the `sys_exit` program needs from the kernel's types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct KernelTypes {
    /// The type id of `typedef ... btf_trace_sys_exit` (the program's attach point).
    pub sys_exit: u32,
    /// `offsetof(struct task_struct, pid)`, bytes.
    pub task_pid: i16,
    /// `offsetof(struct pt_regs, orig_ax)`, bytes.
    pub regs_nr: i16,
}

/// Reads [`KernelTypes`] from the kernel's BTF; `None` without BTF or when something is
/// missing (then the tracer uses a raw tracepoint).
pub(crate) fn kernel_types() -> Option<KernelTypes> {
    let data = std::fs::read(Path::new(VMLINUX)).ok()?;
    find(&data)
}

fn u32_at(d: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(d.get(at..at + 4)?.try_into().ok()?))
}

fn find(d: &[u8]) -> Option<KernelTypes> {
    if u16::from_le_bytes(d.get(0..2)?.try_into().ok()?) != MAGIC {
        return None;
    }
    let hdr_len = u32_at(d, 4)? as usize;
    let (type_off, type_len) = (u32_at(d, 8)? as usize, u32_at(d, 12)? as usize);
    let (str_off, str_len) = (u32_at(d, 16)? as usize, u32_at(d, 20)? as usize);
    let types = d.get(hdr_len + type_off..hdr_len + type_off + type_len)?;
    let strings = d.get(hdr_len + str_off..hdr_len + str_off + str_len)?;
    let name = |off: u32| -> &[u8] {
        let s = strings.get(off as usize..).unwrap_or_default();
        &s[..s.iter().position(|&b| b == 0).unwrap_or(s.len())]
    };
    // Offset of member `want` of the struct whose members start at `at`.
    let member = |at: usize, vlen: usize, kind_flag: bool, want: &[u8]| -> Option<i16> {
        (0..vlen).find_map(|i| {
            let m = at + i * 12;
            if name(u32_at(types, m)?) != want {
                return None;
            }
            let mut bits = u32_at(types, m + 8)?;
            if kind_flag {
                // The high 8 bits are a bitfield's size; the low 24 its offset.
                bits &= 0x00ff_ffff;
            }
            (bits % 8 == 0).then(|| i16::try_from(bits / 8).ok())?
        })
    };
    let (mut sys_exit, mut task_pid, mut regs_nr) = (None, None, None);
    let mut at = 0;
    let mut id = 1u32;
    while at + 12 <= types.len() {
        let name_off = u32_at(types, at)?;
        let info = u32_at(types, at + 4)?;
        let (vlen, kind, kind_flag) = (
            (info & 0xffff) as usize,
            (info >> 24) & 0x1f,
            info >> 31 == 1,
        );
        let data = at + 12;
        match kind {
            KIND_TYPEDEF if name(name_off) == b"btf_trace_sys_exit" => sys_exit = Some(id),
            KIND_STRUCT if name(name_off) == b"task_struct" => {
                task_pid = member(data, vlen, kind_flag, b"pid")
            }
            KIND_STRUCT if name(name_off) == b"pt_regs" => {
                regs_nr = member(data, vlen, kind_flag, b"orig_ax")
            }
            _ => {}
        }
        let extra = match kind {
            KIND_INT | KIND_VAR | KIND_DECL_TAG => 4,
            KIND_ARRAY => 12,
            KIND_STRUCT | KIND_UNION | KIND_DATASEC | KIND_ENUM64 => 12 * vlen,
            KIND_ENUM | KIND_FUNC_PROTO => 8 * vlen,
            _ => 0,
        };
        at = data + extra;
        id += 1;
        if let (Some(sys_exit), Some(task_pid), Some(regs_nr)) = (sys_exit, task_pid, regs_nr) {
            return Some(KernelTypes {
                sys_exit,
                task_pid,
                regs_nr,
            });
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A BTF blob of the given types (name, kind, vlen, data) and strings.
    fn blob(types: &[(u32, u32, u32, Vec<u32>)], strings: &[u8]) -> Vec<u8> {
        let mut t = Vec::new();
        for (name, kind, vlen, data) in types {
            for w in [*name, (kind << 24) | vlen, 0].iter().chain(data) {
                t.extend_from_slice(&w.to_le_bytes());
            }
        }
        let mut d = Vec::new();
        d.extend_from_slice(&MAGIC.to_le_bytes());
        d.extend_from_slice(&[1, 0]);
        for w in [
            24u32,
            0,
            t.len() as u32,
            t.len() as u32,
            strings.len() as u32,
        ] {
            d.extend_from_slice(&w.to_le_bytes());
        }
        d.extend_from_slice(&t);
        d.extend_from_slice(strings);
        d
    }

    #[test]
    fn finds_the_three_facts() {
        // 1 int, 2 struct task_struct {int x; int pid;}, 3 enum (one value), 4 struct
        // pt_regs {long orig_ax at byte 120}, 5 typedef btf_trace_sys_exit.
        let s = b"\0int\0task_struct\0x\0pid\0pt_regs\0orig_ax\0btf_trace_sys_exit\0e\0";
        let at = |w: &[u8]| {
            s.windows(w.len() + 1)
                .position(|x| &x[1..] == w && x[0] == 0)
                .unwrap() as u32
                + 1
        };
        let d = blob(
            &[
                (at(b"int"), KIND_INT, 0, vec![32]),
                (
                    at(b"task_struct"),
                    KIND_STRUCT,
                    2,
                    vec![at(b"x"), 1, 0, at(b"pid"), 1, 32],
                ),
                (0, KIND_ENUM, 1, vec![at(b"e"), 7]),
                (at(b"pt_regs"), KIND_STRUCT, 1, vec![at(b"orig_ax"), 1, 960]),
                (at(b"btf_trace_sys_exit"), KIND_TYPEDEF, 0, vec![]),
            ],
            s,
        );
        assert_eq!(
            find(&d),
            Some(KernelTypes {
                sys_exit: 5,
                task_pid: 4,
                regs_nr: 120
            })
        );
        assert_eq!(find(&d[..d.len() - 30]), None);
        assert_eq!(find(b"not btf at all, no"), None);
    }

    #[test]
    fn the_running_kernels_types() {
        // Where the kernel has BTF (Linux 6.18 here), the offsets are x86_64's.
        if let Some(k) = kernel_types() {
            assert_eq!(k.regs_nr, 120);
            assert!(k.sys_exit > 0 && k.task_pid > 0);
        }
    }
}
