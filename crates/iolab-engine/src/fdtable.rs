//! A private file-descriptor table for each worker thread.
//!
//! While a process's fd table is shared by several threads, every system call that takes an fd
//! must take and drop a reference on the file (two atomic operations on a shared line), and
//! read/write/lseek must lock the file position. With a table of one user the kernel borrows the
//! file instead (the fast path of `fdget`). For a 1 µs page-cache pread that is a few percent,
//! and a bare single-threaded syscall loop gets it for free. `unshare(CLONE_FILES)` gives the
//! calling thread its own copy of the table, so a worker pays what a single-threaded program
//! pays.
//!
//! The copy holds extra references to every file open at that moment (the results database,
//! monitor files); they are dropped when the worker thread exits. POSIX record locks are owned
//! by the table that took them, so the copy can neither take nor release the main thread's
//! SQLite locks. A worker must call this before it opens its files and must close them itself:
//! fds it opens afterwards exist only in its own table.

/// Gives the calling thread a private fd table. Returns false when the kernel refuses (a
/// seccomp filter, say): the thread then keeps the shared table, which is slower but correct.
pub fn make_private() -> bool {
    // SAFETY: unshare takes no pointers; CLONE_FILES affects only the calling thread.
    unsafe { libc::unshare(libc::CLONE_FILES) == 0 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    #[test]
    fn fds_opened_after_unsharing_stay_in_the_thread() {
        let main_file = std::fs::File::open("/proc/self/stat").unwrap();
        let main_fd = main_file.as_raw_fd();
        let fd = std::thread::spawn(move || {
            assert!(make_private());
            // The copy still sees what was open before.
            // SAFETY: fcntl(F_GETFD) only queries the fd.
            assert!(unsafe { libc::fcntl(main_fd, libc::F_GETFD) } >= 0);
            let f = std::fs::File::open("/proc/self/status").unwrap();
            let fd = f.as_raw_fd();
            std::mem::forget(f); // leave it open in the private table
            fd
        })
        .join()
        .unwrap();
        // The thread's table died with it; in the shared table that number is closed (or reused
        // by something else, never by the thread's file).
        let link = std::fs::read_link(format!("/proc/self/fd/{fd}"));
        assert!(
            link.map_or(true, |p| !p.ends_with("status")),
            "the worker's fd leaked into the process table"
        );
        drop(main_file);
    }
}
