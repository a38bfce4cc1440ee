//! A small filesystem to fill up without touching the real ones.

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// A tmpfs of a given size mounted on a fresh directory under the temporary directory, and
/// unmounted (then the directory removed) when dropped.
pub struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    /// Mounts a tmpfs of `size` bytes. For tests marked `#[ignore = "needs root: …"]`.
    pub fn mount(size: u64) -> Tmpfs {
        Tmpfs::mount_opts(&format!("size={size},mode=0755"))
    }

    /// Mounts a tmpfs of `size` bytes with room for `inodes` files and directories (the root
    /// included): creating more fails with ENOSPC, which iolab's space check, counting bytes
    /// and blocks, does not foresee — a population that fails midway.
    pub fn mount_inodes(size: u64, inodes: u64) -> Tmpfs {
        Tmpfs::mount_opts(&format!("size={size},nr_inodes={inodes},mode=0755"))
    }

    fn mount_opts(opts: &str) -> Tmpfs {
        crate::require_root();
        let dir = tempfile::tempdir().expect("temporary directory");
        let target = CString::new(dir.path().as_os_str().as_bytes()).expect("no NUL in path");
        let opts = CString::new(opts).expect("no NUL");
        // SAFETY: NUL-terminated strings that outlive the call.
        let r = unsafe {
            libc::mount(
                c"tmpfs".as_ptr(),
                target.as_ptr(),
                c"tmpfs".as_ptr(),
                0,
                opts.as_ptr().cast(),
            )
        };
        assert_eq!(r, 0, "cannot mount a tmpfs: {}", io::Error::last_os_error());
        Tmpfs { dir }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Bytes in use on the filesystem.
    pub fn used(&self) -> u64 {
        let c = CString::new(self.path().as_os_str().as_bytes()).expect("no NUL in path");
        // SAFETY: a zeroed out-struct and a NUL-terminated path.
        let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
        assert_eq!(unsafe { libc::statvfs(c.as_ptr(), &mut st) }, 0);
        #[allow(clippy::useless_conversion)] // fsblkcnt_t is not u64 everywhere
        let used = u64::from(st.f_blocks - st.f_bfree) * st.f_frsize;
        used
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let c = CString::new(self.path().as_os_str().as_bytes()).expect("no NUL in path");
        // SAFETY: a NUL-terminated path. MNT_DETACH: never leave it mounted, even if a test
        // still holds a file open there.
        unsafe { libc::umount2(c.as_ptr(), libc::MNT_DETACH) };
    }
}
