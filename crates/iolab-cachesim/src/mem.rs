//! Large per-block arrays on transparent huge pages.
//!
//! The simulator's arrays (the id map, list links, slot ids) are read at random: on a cache
//! of a million blocks most lookups also miss the CPU's TLB, which on 4 KiB pages costs a
//! page walk per access (two levels of walk under a hypervisor). Asking the kernel for
//! huge pages on these arrays (`madvise(MADV_HUGEPAGE)`, which Linux honours when
//! `/sys/kernel/mm/transparent_hugepage/enabled` is `always` or `madvise`) makes one TLB
//! entry cover 2 MiB. A hint only: results never depend on it.

/// The huge page size on x86-64 and most arm64 kernels.
const HUGE: usize = 2 << 20;

/// `n` copies of `value` in memory advised for huge pages before it is first touched.
pub fn filled<T: Clone>(n: usize, value: T) -> Vec<T> {
    let mut v: Vec<T> = Vec::with_capacity(n);
    advise_huge(v.as_ptr().cast(), n * std::mem::size_of::<T>());
    v.resize(n, value);
    v
}

/// Advises the huge-page-aligned part of `bytes` bytes at `p` (arrays under two huge pages
/// are left alone).
fn advise_huge(p: *const u8, bytes: usize) {
    if bytes < 2 * HUGE {
        return;
    }
    let start = (p as usize).next_multiple_of(HUGE);
    let end = (p as usize + bytes) & !(HUGE - 1);
    if end > start {
        #[cfg(target_os = "linux")]
        // SAFETY: the range lies inside the vector's own allocation; MADV_HUGEPAGE changes
        // how the kernel backs it, never its contents. A failure only means no huge pages.
        unsafe {
            libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn filled_arrays_hold_their_values() {
        for n in [0, 3, (5 << 20) / 8] {
            let v = super::filled(n, 7u64);
            assert_eq!(v.len(), n);
            assert!(v.iter().all(|&x| x == 7));
        }
    }
}
