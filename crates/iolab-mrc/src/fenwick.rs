//! A Fenwick (binary indexed) tree of counts over time slots, for stack distances: slot `t`
//! holds 1 when some block was last requested at time `t`.

/// Counts over `len` slots (a power of two).
pub struct Fenwick {
    tree: Vec<u32>,
}

impl Fenwick {
    /// `len` slots, all 0 (`len` is rounded up to a power of two).
    pub fn new(len: usize) -> Fenwick {
        Fenwick {
            tree: vec![0; len.next_power_of_two() + 1],
        }
    }

    /// Slots.
    pub fn len(&self) -> usize {
        self.tree.len() - 1
    }

    /// Adds 1 at slot `i`.
    #[inline(always)]
    pub fn inc(&mut self, i: usize) {
        let mut i = i + 1;
        let n = self.tree.len();
        while i < n {
            self.tree[i] += 1;
            i += i & i.wrapping_neg();
        }
    }

    /// Subtracts 1 at slot `i`.
    #[inline(always)]
    pub fn dec(&mut self, i: usize) {
        let mut i = i + 1;
        let n = self.tree.len();
        while i < n {
            self.tree[i] -= 1;
            i += i & i.wrapping_neg();
        }
    }

    /// The sum of slots `0 ..= i`.
    #[inline(always)]
    pub fn prefix(&self, i: usize) -> u32 {
        let mut i = i + 1;
        let mut s = 0;
        while i > 0 {
            s += self.tree[i];
            i &= i - 1;
        }
        s
    }

    /// Asks the CPU to load slot `i`'s leaf (a hint).
    #[inline(always)]
    pub fn prefetch(&self, i: usize) {
        if let Some(v) = self.tree.get(i + 1) {
            crate::prefetch(v);
        }
    }

    /// Sets slots `0 .. k` to 1 and the rest to 0, in O(len).
    pub fn fill_prefix(&mut self, k: usize) {
        let n = self.tree.len();
        for (i, v) in self.tree.iter_mut().enumerate().skip(1) {
            // Node i covers slots (i - lowbit(i), i]; count how many of them are < k.
            let lo = i - (i & i.wrapping_neg());
            *v = (i.min(k).saturating_sub(lo)) as u32;
        }
        debug_assert!(n > k);
    }

    /// Bytes.
    pub fn bytes(&self) -> usize {
        4 * self.tree.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_sums_follow_point_updates() {
        let mut f = Fenwick::new(16);
        let mut plain = [0u32; 16];
        for (step, i) in [3usize, 7, 7, 15, 0, 3, 9].iter().enumerate() {
            if step % 3 == 2 {
                f.dec(*i);
                plain[*i] -= 1;
            } else {
                f.inc(*i);
                plain[*i] += 1;
            }
            for j in 0..16 {
                assert_eq!(f.prefix(j), plain[..=j].iter().sum::<u32>());
            }
        }
        f.fill_prefix(5);
        for j in 0..16 {
            assert_eq!(f.prefix(j), (j as u32 + 1).min(5));
        }
    }
}
