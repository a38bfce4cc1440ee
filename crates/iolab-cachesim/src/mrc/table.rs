//! A growable open-addressing map from a block id to a `u32`, for the stack-distance pass
//! (the number of distinct blocks is not known in advance). Linear probing, Fibonacci
//! hashing, deletion by backward shift; keys and values in separate arrays (12 bytes per
//! entry, at most 3/4 full).

const EMPTY: u32 = u32::MAX;

/// Block id → value (never `u32::MAX`).
pub struct Table {
    keys: Vec<u64>,
    vals: Vec<u32>,
    shift: u32,
    len: usize,
}

impl Table {
    /// A map sized for about `n` entries.
    pub fn with_capacity(n: usize) -> Table {
        let size = (n.max(64) * 4 / 3 + 1).next_power_of_two();
        Table {
            keys: vec![0; size],
            vals: vec![EMPTY; size],
            shift: 64 - size.trailing_zeros(),
            len: 0,
        }
    }

    /// Entries.
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
        let mask = self.keys.len() - 1;
        let mut i = self.home(key);
        loop {
            if self.vals[i] == EMPTY || self.keys[i] == key {
                return i;
            }
            i = (i + 1) & mask;
        }
    }

    /// Sets `key` to `val`; the previous value.
    #[inline(always)]
    pub fn replace(&mut self, key: u64, val: u32) -> Option<u32> {
        let i = self.find(key);
        let old = self.vals[i];
        self.vals[i] = val;
        if old != EMPTY {
            return Some(old);
        }
        self.keys[i] = key;
        self.len += 1;
        if self.len * 4 > self.keys.len() * 3 {
            self.grow();
        }
        None
    }

    /// The value of `key`.
    #[inline(always)]
    pub fn get(&self, key: u64) -> Option<u32> {
        let v = self.vals[self.find(key)];
        (v != EMPTY).then_some(v)
    }

    /// Removes `key`; its value.
    pub fn remove(&mut self, key: u64) -> Option<u32> {
        let mask = self.keys.len() - 1;
        let mut hole = self.find(key);
        let val = self.vals[hole];
        if val == EMPTY {
            return None;
        }
        let mut j = hole;
        loop {
            j = (j + 1) & mask;
            if self.vals[j] == EMPTY {
                break;
            }
            let h = self.home(self.keys[j]);
            let stays = if hole <= j {
                hole < h && h <= j
            } else {
                hole < h || h <= j
            };
            if !stays {
                self.keys[hole] = self.keys[j];
                self.vals[hole] = self.vals[j];
                hole = j;
            }
        }
        self.vals[hole] = EMPTY;
        self.len -= 1;
        Some(val)
    }

    /// Replaces every value `v` by `f(v)`.
    pub fn map_values(&mut self, mut f: impl FnMut(u32) -> u32) {
        for v in self.vals.iter_mut().filter(|v| **v != EMPTY) {
            *v = f(*v);
        }
    }

    fn grow(&mut self) {
        let size = self.keys.len() * 2;
        let keys = std::mem::replace(&mut self.keys, vec![0; size]);
        let vals = std::mem::replace(&mut self.vals, vec![EMPTY; size]);
        self.shift -= 1;
        self.len = 0;
        for (k, v) in keys.into_iter().zip(vals) {
            if v != EMPTY {
                let i = self.find(k);
                self.keys[i] = k;
                self.vals[i] = v;
                self.len += 1;
            }
        }
    }

    /// Bytes.
    pub fn bytes(&self) -> usize {
        12 * self.keys.len()
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
            assert_eq!(t.len(), r.len());
        }
        for k in 0..5000 {
            assert_eq!(t.get(k), r.get(&k).copied());
        }
    }
}
