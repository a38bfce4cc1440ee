//! A fixed-capacity open-addressing map from a block id (`u64`) to a slot (`u32`).
//!
//! The simulator's hot path is one lookup per request, so the map is sized once for the
//! cache's block count (load factor at most 1/2), hashes with one multiplication (Fibonacci
//! hashing, Knuth TAOCP vol. 3 §6.4) instead of SipHash, probes linearly, and deletes by
//! backward shifting (Knuth's Algorithm R) so that no tombstones accumulate.

const EMPTY: u32 = u32::MAX;

#[derive(Clone, Copy)]
#[repr(C)]
struct Entry {
    key: u64,
    val: u32,
}

/// Maps at most the capacity given to [`IdMap::with_capacity`] ids to slots.
pub struct IdMap {
    table: Vec<Entry>,
    mask: usize,
    shift: u32,
    len: usize,
}

impl IdMap {
    /// A map for up to `cap` entries.
    pub fn with_capacity(cap: usize) -> IdMap {
        let size = (cap.max(8) * 2).next_power_of_two();
        IdMap {
            table: crate::mem::filled(size, Entry { key: 0, val: EMPTY }),
            mask: size - 1,
            shift: 64 - size.trailing_zeros(),
            len: 0,
        }
    }

    #[inline(always)]
    fn home(&self, key: u64) -> usize {
        // Folding the high half in first keeps keys that differ only there (ids shifted
        // left, hashed ids) apart.
        ((key ^ (key >> 32)).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    /// Asks the CPU to fetch the table line where `key`'s search starts (a hint; the
    /// simulator knows the trace ahead, so lookups need not wait for memory).
    #[inline(always)]
    pub fn prefetch(&self, key: u64) {
        crate::prefetch(&self.table[self.home(key)]);
    }

    /// Entries stored.
    pub fn len(&self) -> usize {
        self.len
    }

    /// No entries.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Where `key` is (`Ok`), or the empty entry where its search ended (`Err`).
    #[inline(always)]
    fn probe(&self, key: u64) -> Result<usize, usize> {
        let mut i = self.home(key);
        loop {
            let e = &self.table[i];
            if e.val == EMPTY {
                return Err(i);
            }
            if e.key == key {
                return Ok(i);
            }
            i = (i + 1) & self.mask;
        }
    }

    /// The slot of `key`.
    #[inline]
    pub fn get(&self, key: u64) -> Option<u32> {
        self.probe(key).ok().map(|i| self.table[i].val)
    }

    /// Stores `key → val`; `key` must be absent and the map below its capacity.
    #[inline]
    pub fn insert(&mut self, key: u64, val: u32) {
        debug_assert!(val != EMPTY);
        debug_assert!(self.len < self.table.len() / 2 + 1);
        match self.probe(key) {
            Err(i) => {
                self.table[i] = Entry { key, val };
                self.len += 1;
            }
            Ok(_) => debug_assert!(false, "key {key} inserted twice"),
        }
    }

    /// Stores `key → val`, replacing `key`'s value when it is present (one probe: a policy
    /// turning an evicted block into a ghost, or a ghost back into a cached block).
    #[inline]
    pub fn put(&mut self, key: u64, val: u32) {
        debug_assert!(val != EMPTY);
        match self.probe(key) {
            Ok(i) => self.table[i].val = val,
            Err(i) => {
                debug_assert!(self.len < self.table.len() / 2 + 1);
                self.table[i] = Entry { key, val };
                self.len += 1;
            }
        }
    }

    /// Removes `key`, returning its slot.
    #[inline]
    pub fn remove(&mut self, key: u64) -> Option<u32> {
        let i = self.probe(key).ok()?;
        let val = self.table[i].val;
        // Backward shift: move later entries of the probe run into the hole when their home
        // position does not lie cyclically in (hole, j].
        let mut hole = i;
        let mut j = i;
        loop {
            j = (j + 1) & self.mask;
            let e = self.table[j];
            if e.val == EMPTY {
                break;
            }
            let h = self.home(e.key);
            let keep = if hole <= j {
                hole < h && h <= j
            } else {
                hole < h || h <= j
            };
            if !keep {
                self.table[hole] = e;
                hole = j;
            }
        }
        self.table[hole].val = EMPTY;
        self.len -= 1;
        Some(val)
    }

    /// Bytes the table occupies.
    pub fn bytes(&self) -> usize {
        self.table.len() * std::mem::size_of::<Entry>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn agrees_with_std_hashmap_under_churn() {
        let mut m = IdMap::with_capacity(64);
        let mut reference = HashMap::new();
        let mut x: u64 = 12345;
        for step in 0..100_000u32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let key = x % 200;
            if let Some(v) = reference.remove(&key) {
                if step % 3 == 0 {
                    // Replacing a value keeps the key where it is.
                    m.put(key, step);
                    reference.insert(key, step);
                    continue;
                }
                assert_eq!(m.remove(key), Some(v));
            } else if reference.len() < 64 {
                m.insert(key, step);
                reference.insert(key, step);
            } else {
                assert_eq!(m.remove(key), None);
            }
            assert_eq!(m.len(), reference.len());
        }
        for k in 0..200 {
            assert_eq!(m.get(k), reference.get(&k).copied());
        }
    }
}
