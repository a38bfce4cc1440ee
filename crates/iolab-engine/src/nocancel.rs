//! `read`, `write`, `pread` and `pwrite` without glibc's cancellation-point wrapper.
//!
//! In a process with more than one thread (every iolab run: the runner, the sampler, the
//! workers), glibc's `read`/`write` switch the calling thread to asynchronous cancellation
//! around the system call and back: two atomic compare-and-swaps on the thread's descriptor
//! per call, about a tenth of a microsecond on this VM's cold caches. A single-threaded C
//! benchmark (iozone, bonnie++) skips them. iolab never cancels a thread, so its per-operation
//! calls go straight to the kernel through `syscall(2)`: the same system call, with the same
//! arguments and results (-1 and `errno` on failure).

use libc::{c_long, c_void, off_t, size_t, ssize_t};

/// `read(2)`.
///
/// # Safety
/// `buf` must be valid for writes of `len` bytes.
#[inline(always)]
pub unsafe fn read(fd: i32, buf: *mut c_void, len: size_t) -> ssize_t {
    // SAFETY: the caller's contract; syscall(2) passes the arguments through.
    unsafe { libc::syscall(libc::SYS_read, c_long::from(fd), buf, len) as ssize_t }
}

/// `write(2)`.
///
/// # Safety
/// `buf` must be valid for reads of `len` bytes.
#[inline(always)]
pub unsafe fn write(fd: i32, buf: *const c_void, len: size_t) -> ssize_t {
    // SAFETY: the caller's contract; syscall(2) passes the arguments through.
    unsafe { libc::syscall(libc::SYS_write, c_long::from(fd), buf, len) as ssize_t }
}

/// `pread(2)` (`pread64`).
///
/// # Safety
/// `buf` must be valid for writes of `len` bytes.
#[inline(always)]
pub unsafe fn pread(fd: i32, buf: *mut c_void, len: size_t, off: off_t) -> ssize_t {
    // SAFETY: the caller's contract; syscall(2) passes the arguments through.
    unsafe { libc::syscall(libc::SYS_pread64, c_long::from(fd), buf, len, off) as ssize_t }
}

/// `pwrite(2)` (`pwrite64`).
///
/// # Safety
/// `buf` must be valid for reads of `len` bytes.
#[inline(always)]
pub unsafe fn pwrite(fd: i32, buf: *const c_void, len: size_t, off: off_t) -> ssize_t {
    // SAFETY: the caller's contract; syscall(2) passes the arguments through.
    unsafe { libc::syscall(libc::SYS_pwrite64, c_long::from(fd), buf, len, off) as ssize_t }
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
            assert_eq!(libc::lseek(fd, 6, libc::SEEK_SET), 6);
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
        assert_eq!(std::fs::read(dir.path().join("f")).unwrap(), b"01234567abx");
    }
}
