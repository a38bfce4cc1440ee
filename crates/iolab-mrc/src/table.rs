//! A growable open-addressing map from a block id to a `u32`, for the stack-distance pass
//! (the number of distinct blocks is not known in advance). Linear probing, Fibonacci
//! hashing; key and value side by side (16 bytes per entry, at most 3/4 full), so that a
//! lookup touches one cache line. Removal leaves a tombstone (only SHARDS removes, and the
//! blocks it drops never come back, so there are few); growing drops the tombstones.

const EMPTY: u32 = u32::MAX;
const TOMB: u32 = u32::MAX - 1;

#[derive(Clone, Copy)]
#[repr(C)]
struct Entry {
    key: u64,
    val: u32,
}

const VACANT: Entry = Entry { key: 0, val: EMPTY };

/// Block id → value (below `u32::MAX - 1`).
pub struct Table {
    slots: Vec<Entry>,
    shift: u32,
    len: usize,
}

impl Table {
    /// A map sized for about `n` entries.
    pub fn with_capacity(n: usize) -> Table {
        let size = (n.max(64) * 4 / 3 + 1).next_power_of_two();
        Table {
            slots: vec![VACANT; size],
            shift: 64 - size.trailing_zeros(),
            len: 0,
        }
    }

    /// Entries, tombstones included.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.len
    }

    #[inline(always)]
    fn home(&self, key: u64) -> usize {
        (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    /// The index of `key`'s entry, or of the empty position where it would go.
    #[inline(always)]
    fn find(&self, key: u64) -> usize {
        let mask = self.slots.len() - 1;
        let mut i = self.home(key);
        loop {
            let e = self.slots[i];
            if e.val == EMPTY || e.key == key {
                return i;
            }
            i = (i + 1) & mask;
        }
    }

    /// Asks the CPU to load `key`'s home position into the cache (a hint; no effect on the
    /// contents).
    #[inline(always)]
    pub fn prefetch(&self, key: u64) {
        crate::prefetch(&self.slots[self.home(key)]);
    }

    /// The value of `key`, without prefetching or checks beyond the lookup.
    #[inline(always)]
    pub fn get(&self, key: u64) -> Option<u32> {
        let v = self.slots[self.find(key)].val;
        (v < TOMB).then_some(v)
    }

    /// Sets `key` to `val`; the previous value.
    #[inline(always)]
    pub fn replace(&mut self, key: u64, val: u32) -> Option<u32> {
        let i = self.find(key);
        let old = self.slots[i].val;
        self.slots[i] = Entry { key, val };
        if old < TOMB {
            return Some(old);
        }
        if old == TOMB {
            return None;
        }
        self.len += 1;
        if self.len * 4 > self.slots.len() * 3 {
            self.grow();
        }
        None
    }

    /// Removes `key`; its value.
    pub fn remove(&mut self, key: u64) -> Option<u32> {
        let i = self.find(key);
        let v = self.slots[i].val;
        if v >= TOMB {
            return None;
        }
        self.slots[i].val = TOMB;
        Some(v)
    }

    /// Replaces every value `v` by `f(v)`.
    pub fn map_values(&mut self, mut f: impl FnMut(u32) -> u32) {
        for e in self.slots.iter_mut().filter(|e| e.val < TOMB) {
            e.val = f(e.val);
        }
    }

    fn grow(&mut self) {
        let size = self.slots.len() * 2;
        let old = std::mem::replace(&mut self.slots, vec![VACANT; size]);
        self.shift -= 1;
        self.len = 0;
        for e in old.into_iter().filter(|e| e.val < TOMB) {
            let i = self.find(e.key);
            self.slots[i] = e;
            self.len += 1;
        }
    }

    /// Bytes.
    pub fn bytes(&self) -> usize {
        std::mem::size_of::<Entry>() * self.slots.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn agrees_with_std_hashmap_while_growing_and_removing() {
        let mut t = Table::with_capacity(4);
        let mut r = HashMap::new();
        let mut x: u64 = 99;
        for step in 0..200_000u32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let key = x % 5000;
            if step % 5 == 0 {
                assert_eq!(t.remove(key), r.remove(&key));
            } else {
                assert_eq!(t.replace(key, step), r.insert(key, step));
            }
            assert!(t.len() >= r.len());
        }
        for k in 0..5000 {
            assert_eq!(t.get(k), r.get(&k).copied());
        }
    }
}
