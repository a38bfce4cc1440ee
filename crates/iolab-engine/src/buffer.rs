//! Page-aligned I/O buffers: O_DIRECT needs the buffer address aligned to the device's logical
//! block size; 4096 covers every device these machines have, and io_uring and mmap copies are
//! no slower for it.

use std::io;
use std::ptr::NonNull;

use iolab_util::rng::Rng;

pub const ALIGN: usize = 4096;

/// A buffer of `len` bytes could not be allocated. Callers say what it was for
/// ([`crate::EngineError::Alloc`]); the process never aborts over a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("cannot allocate a {} buffer: out of memory", human(.len))]
pub struct AllocError {
    pub len: u64,
}

/// `100 GiB`, for messages.
pub(crate) fn human(len: &u64) -> String {
    iolab_util::units::format_bytes(*len)
}

impl From<AllocError> for io::Error {
    fn from(e: AllocError) -> io::Error {
        io::Error::new(io::ErrorKind::OutOfMemory, e)
    }
}

impl AllocError {
    /// The allocation failure inside an `io::Error` made by `From`, if that is what it is.
    pub fn from_io(e: &io::Error) -> Option<AllocError> {
        e.get_ref()?.downcast_ref::<AllocError>().copied()
    }
}

/// An owned, zero-initialised, 4096-byte-aligned byte buffer: an anonymous mapping whose pages
/// go back to the system when it is dropped.
///
/// Its pages are made resident and private when it is allocated (`MAP_POPULATE`), outside any
/// timed region. A page of an anonymous mapping that was never written is the kernel's shared
/// zero page (or nothing at all), and the fast path that pins user pages for direct I/O
/// refuses it: every `O_DIRECT` write from such a buffer would take the slow path (the
/// process's mmap lock and a VMA lookup, about a microsecond per call here) where the buffers
/// of the benchmarks it is compared with, which they fill, take the fast one.
pub struct AlignedBuf {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: AlignedBuf owns its mapping exclusively, like a Box<[u8]>.
unsafe impl Send for AlignedBuf {}

impl AlignedBuf {
    /// Allocates `len` zeroed bytes (at least one page, so the pointer is always valid).
    /// Fails, instead of aborting the process, when the memory is not there.
    pub fn zeroed(len: u64) -> Result<AlignedBuf, AllocError> {
        let err = AllocError { len };
        let len = usize::try_from(len)
            .ok()
            .filter(|&l| l <= isize::MAX as usize - ALIGN)
            .ok_or(err)?
            .max(ALIGN);
        // SAFETY: a fresh private anonymous mapping; checked for MAP_FAILED.
        let raw = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_POPULATE,
                -1,
                0,
            )
        };
        if raw == libc::MAP_FAILED {
            return Err(err);
        }
        let ptr = NonNull::new(raw.cast()).ok_or(err)?;
        Ok(AlignedBuf { ptr, len })
    }

    /// Allocates `len` bytes filled per the data pattern: zeros, or seeded random bytes.
    pub fn with_data(len: u64, random: Option<&mut Rng>) -> Result<AlignedBuf, AllocError> {
        let mut buf = AlignedBuf::zeroed(len)?;
        if let Some(rng) = random {
            rng.fill(buf.as_mut_slice());
        }
        Ok(buf)
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        false
    }

    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: ptr is valid for len initialised bytes for the life of self.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above, and &mut self guarantees exclusivity.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }

    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr.as_ptr()
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly what `zeroed` mapped.
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_and_zeroed() {
        let mut b = AlignedBuf::zeroed(10_000).unwrap();
        assert_eq!(b.as_mut_ptr() as usize % ALIGN, 0);
        assert!(b.len() >= 10_000);
        assert!(b.as_slice().iter().all(|&x| x == 0));
        let r = AlignedBuf::with_data(4096, Some(&mut Rng::new(1))).unwrap();
        assert!(r.as_slice().iter().any(|&x| x != 0));
    }

    /// Every page is present and the process's own (pagemap bits 63 and 56), not the shared
    /// zero page: direct I/O pins such pages through its fast path.
    #[test]
    fn pages_are_resident_and_private_from_the_start() {
        use std::io::{Read, Seek, SeekFrom};
        let b = AlignedBuf::zeroed(16 * 4096 + 1).unwrap();
        let page = 4096usize;
        let mut map = std::fs::File::open("/proc/self/pagemap").unwrap();
        for i in 0..b.len() / page {
            let vpn = (b.as_slice().as_ptr() as usize + i * page) / page;
            map.seek(SeekFrom::Start(vpn as u64 * 8)).unwrap();
            let mut e = [0u8; 8];
            map.read_exact(&mut e).unwrap();
            let e = u64::from_le_bytes(e);
            assert!(e >> 63 & 1 == 1, "page {i} is not present");
            assert!(
                e >> 56 & 1 == 1,
                "page {i} is not exclusively mapped (the zero page?)"
            );
        }
        assert!(b.as_slice().iter().all(|&x| x == 0));
    }

    #[test]
    fn an_impossible_size_is_an_error_not_an_abort() {
        // Larger than any address space (and than isize::MAX): no mapping can serve it,
        // whatever the overcommit policy.
        for len in [1u64 << 62, u64::MAX] {
            let e = AlignedBuf::zeroed(len).err().expect("cannot be allocated");
            assert_eq!(e.len, len);
            let io = io::Error::from(e);
            assert_eq!(io.kind(), io::ErrorKind::OutOfMemory);
            assert_eq!(AllocError::from_io(&io), Some(e));
        }
        assert_eq!(
            AllocError { len: 100 << 30 }.to_string(),
            "cannot allocate a 100 GiB buffer: out of memory"
        );
    }
}
