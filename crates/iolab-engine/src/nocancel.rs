//! `read`, `write`, `pread`, `pwrite`, `lseek`, `fsync` and `fdatasync` straight to the
//! kernel.
//!
//! In a process with more than one thread (every iolab run: the runner, the sampler, the
//! workers), glibc's `read`/`write` switch the calling thread to asynchronous cancellation
//! around the system call and back: two atomic compare-and-swaps on the thread's descriptor
//! per call, about a tenth of a microsecond on this VM's cold caches. A single-threaded C
//! benchmark (the classic tools iolab is compared with) skips them. iolab never cancels a thread, so its per-operation
//! calls go straight to the kernel: on x86-64 and AArch64 as the `syscall`/`svc` instruction
//! inlined into the loop, elsewhere through `syscall(2)`. The same system call, with the same
//! arguments and results (-1 and `errno` on failure). The call around the instruction is what
//! it saves: on the development VM a 4 KiB tmpfs read in a bare loop took 1,197 ns inlined,
//! 1,402 through glibc's `syscall(2)` and 1,420 through its `read` (bench/README.md).

use libc::{c_long, c_void, off_t, size_t, ssize_t};

/// The kernel's return value as libc gives it: -1 with `errno` set for -4095..=-1.
#[inline(always)]
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
fn ret(r: isize) -> ssize_t {
    if (-4095..0).contains(&r) {
        // SAFETY: errno is the calling thread's own.
        unsafe { *libc::__errno_location() = -r as i32 };
        -1
    } else {
        r as ssize_t
    }
}

#[cfg(target_arch = "x86_64")]
mod raw {
    use std::arch::asm;

    /// # Safety
    /// As the system call `n` with this argument.
    #[inline(always)]
    pub unsafe fn syscall1(n: libc::c_long, a: usize) -> isize {
        let r: isize;
        // SAFETY: the caller's contract; `syscall` clobbers rcx and r11 and nothing else.
        unsafe {
            asm!("syscall", inlateout("rax") n as isize => r, in("rdi") a,
                 lateout("rcx") _, lateout("r11") _, options(nostack));
        }
        r
    }

    /// # Safety
    /// As the system call `n` with these arguments.
    #[inline(always)]
    pub unsafe fn syscall3(n: libc::c_long, a: usize, b: usize, c: usize) -> isize {
        let r: isize;
        // SAFETY: the caller's contract; `syscall` clobbers rcx and r11 and nothing else.
        unsafe {
            asm!("syscall", inlateout("rax") n as isize => r, in("rdi") a, in("rsi") b,
                 in("rdx") c, lateout("rcx") _, lateout("r11") _, options(nostack));
        }
        r
    }

    /// # Safety
    /// As the system call `n` with these arguments.
    #[inline(always)]
    pub unsafe fn syscall4(n: libc::c_long, a: usize, b: usize, c: usize, d: usize) -> isize {
        let r: isize;
        // SAFETY: the caller's contract; `syscall` clobbers rcx and r11 and nothing else.
        unsafe {
            asm!("syscall", inlateout("rax") n as isize => r, in("rdi") a, in("rsi") b,
                 in("rdx") c, in("r10") d, lateout("rcx") _, lateout("r11") _,
                 options(nostack));
        }
        r
    }
}

#[cfg(target_arch = "aarch64")]
mod raw {
    use std::arch::asm;

    /// # Safety
    /// As the system call `n` with this argument.
    #[inline(always)]
    pub unsafe fn syscall1(n: libc::c_long, a: usize) -> isize {
        let r: isize;
        // SAFETY: the caller's contract; `svc 0` returns in x0 and clobbers nothing else.
        unsafe {
            asm!("svc 0", in("x8") n, inlateout("x0") a as isize => r, options(nostack));
        }
        r
    }

    /// # Safety
    /// As the system call `n` with these arguments.
    #[inline(always)]
    pub unsafe fn syscall3(n: libc::c_long, a: usize, b: usize, c: usize) -> isize {
        let r: isize;
        // SAFETY: the caller's contract; `svc 0` returns in x0 and clobbers nothing else.
        unsafe {
            asm!("svc 0", in("x8") n, inlateout("x0") a as isize => r, in("x1") b, in("x2") c,
                 options(nostack));
        }
        r
    }

    /// # Safety
    /// As the system call `n` with these arguments.
    #[inline(always)]
    pub unsafe fn syscall4(n: libc::c_long, a: usize, b: usize, c: usize, d: usize) -> isize {
        let r: isize;
        // SAFETY: the caller's contract; `svc 0` returns in x0 and clobbers nothing else.
        unsafe {
            asm!("svc 0", in("x8") n, inlateout("x0") a as isize => r, in("x1") b, in("x2") c,
                 in("x3") d, options(nostack));
        }
        r
    }
}

/// The call `n` with one argument, inlined where the architecture allows.
///
/// # Safety
/// As the system call `n` with this argument.
#[inline(always)]
unsafe fn call1(n: c_long, a: usize) -> ssize_t {
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    // SAFETY: the caller's contract.
    return ret(unsafe { raw::syscall1(n, a) });
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    // SAFETY: the caller's contract; syscall(2) passes the argument through.
    return unsafe { libc::syscall(n, a) as ssize_t };
}

/// The call `n` with three arguments, inlined where the architecture allows.
///
/// # Safety
/// As the system call `n` with these arguments.
#[inline(always)]
unsafe fn call3(n: c_long, a: usize, b: usize, c: usize) -> ssize_t {
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    // SAFETY: the caller's contract.
    return ret(unsafe { raw::syscall3(n, a, b, c) });
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    // SAFETY: the caller's contract; syscall(2) passes the arguments through.
    return unsafe { libc::syscall(n, a, b, c) as ssize_t };
}

/// The call `n` with four arguments, inlined where the architecture allows.
///
/// # Safety
/// As the system call `n` with these arguments.
#[inline(always)]
unsafe fn call4(n: c_long, a: usize, b: usize, c: usize, d: usize) -> ssize_t {
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    // SAFETY: the caller's contract.
    return ret(unsafe { raw::syscall4(n, a, b, c, d) });
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    // SAFETY: the caller's contract; syscall(2) passes the arguments through.
    return unsafe { libc::syscall(n, a, b, c, d) as ssize_t };
}

/// `read(2)`.
///
/// # Safety
/// `buf` must be valid for writes of `len` bytes.
#[inline(always)]
pub unsafe fn read(fd: i32, buf: *mut c_void, len: size_t) -> ssize_t {
    // SAFETY: the caller's contract.
    unsafe { call3(libc::SYS_read, fd as usize, buf as usize, len) }
}

/// `write(2)`.
///
/// # Safety
/// `buf` must be valid for reads of `len` bytes.
#[inline(always)]
pub unsafe fn write(fd: i32, buf: *const c_void, len: size_t) -> ssize_t {
    // SAFETY: the caller's contract.
    unsafe { call3(libc::SYS_write, fd as usize, buf as usize, len) }
}

/// `pread(2)` (`pread64`).
///
/// # Safety
/// `buf` must be valid for writes of `len` bytes.
#[inline(always)]
pub unsafe fn pread(fd: i32, buf: *mut c_void, len: size_t, off: off_t) -> ssize_t {
    // SAFETY: the caller's contract.
    unsafe {
        call4(
            libc::SYS_pread64,
            fd as usize,
            buf as usize,
            len,
            off as usize,
        )
    }
}

/// `pwrite(2)` (`pwrite64`).
///
/// # Safety
/// `buf` must be valid for reads of `len` bytes.
#[inline(always)]
pub unsafe fn pwrite(fd: i32, buf: *const c_void, len: size_t, off: off_t) -> ssize_t {
    // SAFETY: the caller's contract.
    unsafe {
        call4(
            libc::SYS_pwrite64,
            fd as usize,
            buf as usize,
            len,
            off as usize,
        )
    }
}

/// `fsync(2)`: 0, or -1 with `errno`.
///
/// # Safety
/// None beyond the system call's own: it touches no memory of the caller's.
#[inline(always)]
pub unsafe fn fsync(fd: i32) -> i32 {
    // SAFETY: fsync reads and writes no user memory.
    unsafe { call1(libc::SYS_fsync, fd as usize) as i32 }
}

/// `fdatasync(2)`: 0, or -1 with `errno`.
///
/// # Safety
/// None beyond the system call's own: it touches no memory of the caller's.
#[inline(always)]
pub unsafe fn fdatasync(fd: i32) -> i32 {
    // SAFETY: fdatasync reads and writes no user memory.
    unsafe { call1(libc::SYS_fdatasync, fd as usize) as i32 }
}

/// `lseek(2)`: the new offset, or -1 with `errno`.
///
/// # Safety
/// None beyond the system call's own: it touches no memory of the caller's.
#[inline(always)]
pub unsafe fn lseek(fd: i32, off: off_t, whence: i32) -> off_t {
    // SAFETY: lseek reads and writes no user memory.
    unsafe { call3(libc::SYS_lseek, fd as usize, off as usize, whence as usize) as off_t }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::fd::AsRawFd;

    #[test]
    fn same_results_as_the_libc_calls() {
        let dir = tempfile::tempdir().unwrap();
        let mut f = std::fs::File::options()
            .read(true)
            .write(true)
            .create_new(true)
            .open(dir.path().join("f"))
            .unwrap();
        f.write_all(b"0123456789").unwrap();
        let fd = f.as_raw_fd();
        let mut b = [0u8; 4];
        // SAFETY: `b` is 4 bytes; the fd is open.
        unsafe {
            assert_eq!(pread(fd, b.as_mut_ptr().cast(), 4, 3), 4);
            assert_eq!(&b, b"3456");
            assert_eq!(pwrite(fd, b"ab".as_ptr().cast(), 2, 8), 2);
            assert_eq!(lseek(fd, 6, libc::SEEK_SET), 6);
            assert_eq!(read(fd, b.as_mut_ptr().cast(), 4), 4);
            assert_eq!(&b, b"67ab");
            assert_eq!(read(fd, b.as_mut_ptr().cast(), 4), 0);
            assert_eq!(write(fd, b"x".as_ptr().cast(), 1), 1);
            // Errors: -1 and errno, as libc's.
            assert_eq!(read(-1, b.as_mut_ptr().cast(), 1), -1);
        }
        assert_eq!(
            std::io::Error::last_os_error().raw_os_error(),
            Some(libc::EBADF)
        );
        // SAFETY: a bad whence touches nothing.
        assert_eq!(unsafe { lseek(fd, 0, 99) }, -1);
        assert_eq!(
            std::io::Error::last_os_error().raw_os_error(),
            Some(libc::EINVAL)
        );
        // SAFETY: an offset on an open descriptor.
        unsafe {
            assert_eq!(lseek(fd, 0, libc::SEEK_END), 11);
            assert_eq!(pread(fd, b.as_mut_ptr().cast(), 4, -1), -1);
        }
        assert_eq!(
            std::io::Error::last_os_error().raw_os_error(),
            Some(libc::EINVAL)
        );
        // SAFETY: syncs of an open descriptor and of none.
        unsafe {
            assert_eq!(fsync(fd), 0);
            assert_eq!(fdatasync(fd), 0);
            assert_eq!(fsync(-1), -1);
        }
        assert_eq!(
            std::io::Error::last_os_error().raw_os_error(),
            Some(libc::EBADF)
        );
        assert_eq!(std::fs::read(dir.path().join("f")).unwrap(), b"01234567abx");
    }
}
