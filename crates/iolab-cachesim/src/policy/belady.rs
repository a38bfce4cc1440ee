//! Belady's OPT: evicts the block whose next request lies farthest in the future (a block
//! never requested again first). It needs [`Request::next`], the index of the next request
//! to the same block: oracleGeneral traces carry it, [`crate::fill_next`] computes it.
//!
//! Each set is a binary max-heap keyed by the next-request index, stored in the set's own
//! range of one flat array (the heap of set `s` lives at `s * ways ..`), with each slot's
//! heap position kept for updates on hits.

use super::Policy;
use crate::cache::Geometry;
use crate::map::IdMap;
use crate::Request;

/// Optimal replacement (needs the future).
pub struct Belady {
    ways: u32,
    /// Per slot: the index of its block's next request.
    key: Vec<u64>,
    /// Heap entries (slots), per set at `set * ways ..`.
    heap: Vec<u32>,
    /// Per slot: its position in its set's heap (relative to the set's start).
    pos: Vec<u32>,
    /// Per set: heap size.
    len: Vec<u32>,
}

impl Belady {
    /// For a cache of shape `g`.
    pub fn new(g: Geometry) -> Belady {
        let n = g.blocks as usize;
        Belady {
            ways: g.ways,
            key: vec![0; n],
            heap: vec![0; n],
            pos: vec![0; n],
            len: vec![0; g.sets as usize],
        }
    }

    #[inline(always)]
    fn at(&self, base: usize, i: u32) -> u32 {
        self.heap[base + i as usize]
    }

    #[inline(always)]
    fn put(&mut self, base: usize, i: u32, slot: u32) {
        self.heap[base + i as usize] = slot;
        self.pos[slot as usize] = i;
    }

    #[inline]
    fn sift_up(&mut self, base: usize, mut i: u32) {
        let slot = self.at(base, i);
        let k = self.key[slot as usize];
        while i > 0 {
            let p = (i - 1) / 2;
            let ps = self.at(base, p);
            if self.key[ps as usize] >= k {
                break;
            }
            self.put(base, i, ps);
            i = p;
        }
        self.put(base, i, slot);
    }

    #[inline]
    fn sift_down(&mut self, base: usize, mut i: u32, len: u32) {
        let slot = self.at(base, i);
        let k = self.key[slot as usize];
        loop {
            let l = 2 * i + 1;
            if l >= len {
                break;
            }
            let mut c = l;
            if l + 1 < len
                && self.key[self.at(base, l + 1) as usize] > self.key[self.at(base, l) as usize]
            {
                c = l + 1;
            }
            let cs = self.at(base, c);
            if self.key[cs as usize] <= k {
                break;
            }
            self.put(base, i, cs);
            i = c;
        }
        self.put(base, i, slot);
    }

    /// Takes heap position `i` of `set` out.
    fn take(&mut self, set: usize, i: u32) {
        let base = set * self.ways as usize;
        let len = self.len[set] - 1;
        self.len[set] = len;
        if i < len {
            let last = self.at(base, len);
            self.put(base, i, last);
            self.sift_down(base, i, len);
            self.sift_up(base, self.pos[last as usize]);
        }
    }
}

impl Policy for Belady {
    const NEEDS_FUTURE: bool = true;

    #[inline]
    fn hit(&mut self, set: usize, slot: u32, r: &Request) {
        // The next request only moves later, so the key grows: sift towards the root.
        self.key[slot as usize] = r.next;
        let base = set * self.ways as usize;
        self.sift_up(base, self.pos[slot as usize]);
    }

    #[inline]
    fn evict(&mut self, set: usize, _: &Request, _: &[u64], _: &mut IdMap) -> u32 {
        let base = set * self.ways as usize;
        let victim = self.at(base, 0);
        self.take(set, 0);
        victim
    }

    #[inline]
    fn insert(&mut self, set: usize, slot: u32, r: &Request) {
        self.key[slot as usize] = r.next;
        let base = set * self.ways as usize;
        let i = self.len[set];
        self.len[set] = i + 1;
        self.put(base, i, slot);
        self.sift_up(base, i);
    }

    fn remove(&mut self, set: usize, slot: u32) {
        self.take(set, self.pos[slot as usize]);
    }

    fn metadata_bytes(&self) -> usize {
        16 * self.key.len() + 4 * self.len.len()
    }
}

#[cfg(test)]
mod tests {
    use crate::testutil::{misses, reads};

    #[test]
    fn belady_hand_computed() {
        // 2 blocks: 1 2 3 1 2 — at 3, 1 is next needed at 3, 2 at 4: evict 2; 1 hits, 2 misses.
        assert_eq!(misses("belady", 2, None, &reads(&[1, 2, 3, 1, 2])), 4);
        // 3 blocks, 1 2 3 4 1 2 3 4: 4 evicts 3 (needed last); 1, 2 hit; 3 evicts 1 or 2
        // (never needed again); 4 hits. OPT misses 5, LRU 8.
        let t = reads(&[1, 2, 3, 4, 1, 2, 3, 4]);
        assert_eq!(misses("belady", 3, None, &t), 5);
        assert_eq!(misses("lru", 3, None, &t), 8);
    }
}
