//! The few bpf(2) and perf_event_open(2) calls the tracer makes, by hand: maps, program
//! loading (with the verifier's log on failure), attaching to raw and perf tracepoints.
//! Every object is an [`OwnedFd`]: closing the last fd of a link, a perf event, a program
//! or a map detaches or frees it, so nothing outlives the tracer, whatever path it ends by.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::AtomicU64;

use crate::error::SysTraceError;
use crate::insn::Insn;

const BPF_MAP_CREATE: libc::c_int = 0;
const BPF_MAP_LOOKUP_ELEM: libc::c_int = 1;
const BPF_MAP_UPDATE_ELEM: libc::c_int = 2;
const BPF_PROG_LOAD: libc::c_int = 5;
const BPF_PROG_GET_FD_BY_ID: libc::c_int = 13;
const BPF_MAP_GET_FD_BY_ID: libc::c_int = 14;
const BPF_OBJ_GET_INFO_BY_FD: libc::c_int = 15;
const BPF_RAW_TRACEPOINT_OPEN: libc::c_int = 17;

pub(crate) const BPF_MAP_TYPE_ARRAY: u32 = 2;
pub(crate) const BPF_MAP_TYPE_PERCPU_ARRAY: u32 = 6;
/// Map flag: user space may mmap(2) the array.
pub(crate) const BPF_F_MMAPABLE: u32 = 1 << 10;
pub(crate) const BPF_PROG_TYPE_TRACEPOINT: u32 = 5;
pub(crate) const BPF_PROG_TYPE_RAW_TRACEPOINT: u32 = 17;
pub(crate) const BPF_PROG_TYPE_TRACING: u32 = 26;
/// The attach type of a BTF tracepoint program (`tp_btf`).
pub(crate) const BPF_TRACE_RAW_TP: u32 = 23;
/// Update flag: create or replace.
pub(crate) const BPF_ANY: u64 = 0;

const PERF_TYPE_TRACEPOINT: u32 = 2;
/// bpf(2) fds are close-on-exec already; a perf event fd only when asked.
const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 8;
/// `_IO('$', 0)` and `_IOW('$', 8, __u32)`.
const PERF_EVENT_IOC_ENABLE: libc::c_ulong = 0x2400;
const PERF_EVENT_IOC_SET_BPF: libc::c_ulong = 0x4004_2408;

/// How much of the verifier's log to keep when a program is refused.
const LOG_SIZE: usize = 1 << 16;

fn sys_bpf<T>(cmd: libc::c_int, attr: &mut T) -> io::Result<libc::c_long> {
    let size = std::mem::size_of::<T>() as libc::c_uint;
    // SAFETY: `attr` is a #[repr(C)] prefix of `union bpf_attr` for `cmd`, zero-filled
    // beyond the fields set, valid for `size` bytes; pointers in it outlive the call.
    let r = unsafe { libc::syscall(libc::SYS_bpf, cmd, attr as *mut T, size) };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

fn fd_of(r: libc::c_long) -> OwnedFd {
    // SAFETY: the kernel returned a new fd that nothing else owns.
    unsafe { OwnedFd::from_raw_fd(r as RawFd) }
}

#[repr(C)]
#[derive(Default)]
struct MapCreate {
    map_type: u32,
    key_size: u32,
    value_size: u32,
    max_entries: u32,
    map_flags: u32,
    inner_map_fd: u32,
    numa_node: u32,
    map_name: [u8; 16],
}

/// Fills a 16-byte object name (`BPF_OBJ_NAME_LEN`): letters, digits and `_` only.
fn obj_name(name: &str) -> [u8; 16] {
    let mut out = [0u8; 16];
    for (o, b) in out.iter_mut().zip(name.bytes().take(15)) {
        *o = b;
    }
    out
}

/// A BPF map.
#[derive(Debug)]
pub(crate) struct Map {
    fd: OwnedFd,
    value_size: usize,
}

impl Map {
    pub(crate) fn create(
        name: &str,
        map_type: u32,
        key_size: u32,
        value_size: u32,
        max_entries: u32,
        map_flags: u32,
    ) -> Result<Map, SysTraceError> {
        let mut attr = MapCreate {
            map_type,
            key_size,
            value_size,
            max_entries,
            map_flags,
            map_name: obj_name(name),
            ..Default::default()
        };
        let fd = sys_bpf(BPF_MAP_CREATE, &mut attr)
            .map_err(|e| SysTraceError::bpf(format!("create the map {name}"), e))?;
        Ok(Map {
            fd: fd_of(fd),
            value_size: value_size as usize,
        })
    }

    pub(crate) fn raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// The bytes of one value (of every CPU's, in CPU order, for a per-CPU map, each
    /// rounded up to 8 bytes): `None` when the key is absent.
    pub(crate) fn lookup(&self, key: &[u8], value: &mut [u8]) -> io::Result<bool> {
        let mut attr = ElemAttr {
            map_fd: self.fd.as_raw_fd() as u32,
            pad: 0,
            key: key.as_ptr() as u64,
            value: value.as_mut_ptr() as u64,
            flags: 0,
        };
        match sys_bpf(BPF_MAP_LOOKUP_ELEM, &mut attr) {
            Ok(_) => Ok(true),
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => Ok(false),
            Err(e) => Err(e),
        }
    }

    pub(crate) fn update(&self, key: &[u8], value: &[u8], flags: u64) -> io::Result<()> {
        let mut attr = ElemAttr {
            map_fd: self.fd.as_raw_fd() as u32,
            pad: 0,
            key: key.as_ptr() as u64,
            value: value.as_ptr() as u64,
            flags,
        };
        sys_bpf(BPF_MAP_UPDATE_ELEM, &mut attr).map(drop)
    }

    /// Maps the first `words` u64 values of a `BPF_F_MMAPABLE` array into this process,
    /// shared with the programs.
    pub(crate) fn mmap(&self, words: usize) -> io::Result<Shared> {
        let len = words * 8;
        // SAFETY: a new shared mapping of the map's fd; the kernel checks the length and
        // keeps the map alive while it is mapped.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                self.fd.as_raw_fd(),
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Shared {
            ptr: p.cast(),
            words,
        })
    }

    pub(crate) fn value_size(&self) -> usize {
        self.value_size
    }

    /// The map's kernel id (for the checks that it is gone).
    pub(crate) fn id(&self) -> io::Result<u32> {
        // struct bpf_map_info: type, id, ...
        let mut info = [0u32; 20];
        obj_info(self.fd.as_raw_fd(), &mut info)?;
        Ok(info[1])
    }
}

/// A BPF array mapped into this process: u64 words the programs change with atomic
/// operations, and so does the tracer. Unmapped on drop.
#[derive(Debug)]
pub(crate) struct Shared {
    ptr: *mut AtomicU64,
    words: usize,
}

// SAFETY: the mapping is plain shared memory, only ever accessed through atomics.
unsafe impl Send for Shared {}
// SAFETY: as above.
unsafe impl Sync for Shared {}

impl Shared {
    pub(crate) fn words(&self) -> &[AtomicU64] {
        // SAFETY: `words` u64s mapped read-write at a page-aligned address for as long as
        // `self` lives; AtomicU64 has the layout of u64.
        unsafe { std::slice::from_raw_parts(self.ptr, self.words) }
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `Map::mmap`, not used after this.
        unsafe { libc::munmap(self.ptr.cast(), self.words * 8) };
    }
}

#[repr(C)]
struct ElemAttr {
    map_fd: u32,
    pad: u32,
    key: u64,
    value: u64,
    flags: u64,
}

#[repr(C)]
#[derive(Default)]
struct ProgLoad {
    prog_type: u32,
    insn_cnt: u32,
    insns: u64,
    license: u64,
    log_level: u32,
    log_size: u32,
    log_buf: u64,
    kern_version: u32,
    prog_flags: u32,
    prog_name: [u8; 16],
    prog_ifindex: u32,
    expected_attach_type: u32,
    prog_btf_fd: u32,
    func_info_rec_size: u32,
    func_info: u64,
    func_info_cnt: u32,
    line_info_rec_size: u32,
    line_info: u64,
    line_info_cnt: u32,
    attach_btf_id: u32,
}

/// A loaded BPF program.
#[derive(Debug)]
pub(crate) struct Prog {
    fd: OwnedFd,
}

impl Prog {
    /// Loads `insns` (GPL: `bpf_probe_read_kernel` is GPL-only). When the verifier refuses
    /// the program, loads it again with the log on and returns the log's end in the error.
    pub(crate) fn load(name: &str, prog_type: u32, insns: &[Insn]) -> Result<Prog, SysTraceError> {
        Self::load_to(name, prog_type, None, insns)
    }

    /// [`Prog::load`] of a BTF tracepoint program for the kernel type `btf_id`
    /// (`btf_trace_<tracepoint>`).
    pub(crate) fn load_btf(name: &str, btf_id: u32, insns: &[Insn]) -> Result<Prog, SysTraceError> {
        Self::load_to(name, BPF_PROG_TYPE_TRACING, Some(btf_id), insns)
    }

    fn load_to(
        name: &str,
        prog_type: u32,
        btf_id: Option<u32>,
        insns: &[Insn],
    ) -> Result<Prog, SysTraceError> {
        let license = c"GPL";
        let attempt = |log: Option<&mut Vec<u8>>| {
            let mut attr = ProgLoad {
                prog_type,
                insn_cnt: insns.len() as u32,
                insns: insns.as_ptr() as u64,
                license: license.as_ptr() as u64,
                prog_name: obj_name(name),
                ..Default::default()
            };
            if let Some(id) = btf_id {
                attr.expected_attach_type = BPF_TRACE_RAW_TP;
                attr.attach_btf_id = id;
            }
            if let Some(log) = log {
                attr.log_level = 1;
                attr.log_size = log.len() as u32;
                attr.log_buf = log.as_mut_ptr() as u64;
            }
            sys_bpf(BPF_PROG_LOAD, &mut attr)
        };
        match attempt(None) {
            Ok(fd) => Ok(Prog { fd: fd_of(fd) }),
            Err(e) if e.raw_os_error() == Some(libc::EPERM) => {
                Err(SysTraceError::bpf(format!("load the program {name}"), e))
            }
            Err(e) => {
                let mut log = vec![0u8; LOG_SIZE];
                if let Ok(fd) = attempt(Some(&mut log)) {
                    // Passed the second time: the first refusal was transient.
                    return Ok(Prog { fd: fd_of(fd) });
                }
                let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
                let text = String::from_utf8_lossy(&log[..end]);
                let tail: Vec<&str> = text.lines().rev().take(12).collect();
                Err(SysTraceError::Verifier {
                    program: name.to_owned(),
                    source: e,
                    log: tail.into_iter().rev().collect::<Vec<_>>().join("\n"),
                })
            }
        }
    }

    /// Attaches to the raw tracepoint `tp` (`sys_exit`; a BTF program attaches to the one it
    /// was loaded for); detached when the link is closed.
    pub(crate) fn attach_raw(&self, tp: &str, btf: bool) -> Result<OwnedFd, SysTraceError> {
        #[repr(C)]
        struct RawTpOpen {
            name: u64,
            prog_fd: u32,
            pad: u32,
        }
        let name = CString::new(tp).map_err(|_| {
            SysTraceError::bpf(
                format!("attach to {tp}"),
                io::Error::from(io::ErrorKind::InvalidInput),
            )
        })?;
        let mut attr = RawTpOpen {
            name: if btf { 0 } else { name.as_ptr() as u64 },
            prog_fd: self.fd.as_raw_fd() as u32,
            pad: 0,
        };
        let fd = sys_bpf(BPF_RAW_TRACEPOINT_OPEN, &mut attr)
            .map_err(|e| SysTraceError::bpf(format!("attach to the raw tracepoint {tp}"), e))?;
        Ok(fd_of(fd))
    }

    /// Attaches to the tracepoint with tracefs id `id` (`events/<group>/<name>/id`) through a
    /// perf event: one event on CPU 0 for all tasks is enough, the program runs wherever the
    /// tracepoint fires. Detached when the event is closed.
    pub(crate) fn attach_perf(&self, what: &str, id: u64) -> Result<OwnedFd, SysTraceError> {
        let attach = |e| SysTraceError::bpf(format!("attach to the tracepoint {what}"), e);
        // struct perf_event_attr, PERF_ATTR_SIZE_VER0: type, size, config, sample_period,
        // sample_type, read_format, flags (bit 0: disabled), wakeup_events, bp_type, config1.
        let mut attr = [0u64; 8];
        attr[0] = u64::from(PERF_TYPE_TRACEPOINT) | (64u64 << 32);
        attr[1] = id;
        attr[2] = 1;
        attr[5] = 1;
        // SAFETY: a zero-filled perf_event_attr of the size it says; pid -1 and CPU 0 are
        // valid; no group fd.
        let r = unsafe {
            libc::syscall(
                libc::SYS_perf_event_open,
                attr.as_mut_ptr(),
                -1 as libc::pid_t,
                0 as libc::c_int,
                -1 as libc::c_int,
                PERF_FLAG_FD_CLOEXEC,
            )
        };
        if r < 0 {
            return Err(attach(io::Error::last_os_error()));
        }
        let event = fd_of(r);
        // SAFETY: ioctls on the perf event fd we own, with an int argument.
        let r = unsafe {
            libc::ioctl(
                event.as_raw_fd(),
                PERF_EVENT_IOC_SET_BPF,
                self.fd.as_raw_fd(),
            )
        };
        if r < 0 {
            return Err(attach(io::Error::last_os_error()));
        }
        // SAFETY: as above.
        let r = unsafe { libc::ioctl(event.as_raw_fd(), PERF_EVENT_IOC_ENABLE, 0) };
        if r < 0 {
            return Err(attach(io::Error::last_os_error()));
        }
        Ok(event)
    }

    /// The program's kernel id (for the checks that it is gone).
    pub(crate) fn id(&self) -> io::Result<u32> {
        // struct bpf_prog_info: type, id, ...
        let mut info = [0u32; 40];
        obj_info(self.fd.as_raw_fd(), &mut info)?;
        Ok(info[1])
    }
}

fn obj_info(fd: RawFd, info: &mut [u32]) -> io::Result<()> {
    #[repr(C)]
    struct InfoByFd {
        bpf_fd: u32,
        info_len: u32,
        info: u64,
    }
    let mut attr = InfoByFd {
        bpf_fd: fd as u32,
        info_len: std::mem::size_of_val(info) as u32,
        info: info.as_mut_ptr() as u64,
    };
    sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &mut attr).map(drop)
}

/// Whether a program or map with this id still exists (`false` once its last reference is
/// gone).
pub(crate) fn exists(id: u32, map: bool) -> io::Result<bool> {
    #[repr(C)]
    struct GetFdById {
        id: u32,
        next_id: u32,
        open_flags: u32,
    }
    let mut attr = GetFdById {
        id,
        next_id: 0,
        open_flags: 0,
    };
    let cmd = if map {
        BPF_MAP_GET_FD_BY_ID
    } else {
        BPF_PROG_GET_FD_BY_ID
    };
    match sys_bpf(cmd, &mut attr) {
        Ok(fd) => {
            drop(fd_of(fd));
            Ok(true)
        }
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => Ok(false),
        Err(e) => Err(e),
    }
}
