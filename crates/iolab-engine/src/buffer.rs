//! Page-aligned I/O buffers: O_DIRECT needs the buffer address aligned to the device's logical
//! block size; 4096 covers every device these machines have, and io_uring and mmap copies are
//! no slower for it.

use std::alloc::{self, Layout};
use std::ptr::NonNull;

use iolab_workload::rng::Rng;

pub const ALIGN: usize = 4096;

/// An owned, zero-initialised, 4096-byte-aligned byte buffer.
pub struct AlignedBuf {
    ptr: NonNull<u8>,
    layout: Layout,
}

// SAFETY: AlignedBuf owns its allocation exclusively, like a Box<[u8]>.
unsafe impl Send for AlignedBuf {}

impl AlignedBuf {
    /// Allocates `len` zeroed bytes (at least one page, so the pointer is always valid).
    pub fn zeroed(len: usize) -> AlignedBuf {
        let layout = Layout::from_size_align(len.max(ALIGN), ALIGN).expect("buffer layout");
        // SAFETY: the layout has a non-zero size.
        let raw = unsafe { alloc::alloc_zeroed(layout) };
        let ptr = NonNull::new(raw).unwrap_or_else(|| alloc::handle_alloc_error(layout));
        AlignedBuf { ptr, layout }
    }

    /// Allocates `len` bytes filled per the data pattern: zeros, or seeded random bytes.
    pub fn with_data(len: usize, random: Option<&mut Rng>) -> AlignedBuf {
        let mut buf = AlignedBuf::zeroed(len);
        if let Some(rng) = random {
            rng.fill(buf.as_mut_slice());
        }
        buf
    }

    pub fn len(&self) -> usize {
        self.layout.size()
    }

    pub fn is_empty(&self) -> bool {
        false
    }

    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: ptr is valid for layout.size() initialised bytes for the life of self.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.layout.size()) }
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above, and &mut self guarantees exclusivity.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.layout.size()) }
    }

    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr.as_ptr()
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated in `zeroed` with this layout.
        unsafe { alloc::dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_and_zeroed() {
        let mut b = AlignedBuf::zeroed(10_000);
        assert_eq!(b.as_mut_ptr() as usize % ALIGN, 0);
        assert!(b.len() >= 10_000);
        assert!(b.as_slice().iter().all(|&x| x == 0));
        let r = AlignedBuf::with_data(4096, Some(&mut Rng::new(1)));
        assert!(r.as_slice().iter().any(|&x| x != 0));
    }
}
