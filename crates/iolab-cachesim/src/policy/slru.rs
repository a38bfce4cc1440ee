//! Segmented LRU (Karedla, Love & Wherry 1994) with `n` LRU segments of ⌊w/n⌋ blocks per
//! set, libCacheSim's `SLRU` semantics (default 4 segments):
//! - a miss in a full set evicts the LRU block of the lowest non-empty segment; the new
//!   block enters the MRU end of the lowest segment with room (while the set fills, new
//!   blocks land in upper segments too), or segment 0 when none has room;
//! - a hit in the top segment moves the block to its MRU end; a hit in segment i moves it to
//!   the MRU end of segment i + 1, and while a segment is over its size its LRU block is
//!   demoted to the MRU end of the segment below (cascading down).
//!
//! Difference: when the demotions reach an over-full segment 0 (only when w is not a
//! multiple of n), libCacheSim evicts blocks on that hit; iolab keeps them there.

use super::Policy;
use crate::cache::Geometry;
use crate::list::Lists;
use crate::map::IdMap;
use crate::Request;

/// The most segments.
pub const MAX_SEGMENTS: u32 = 16;

/// Segmented LRU, one instance per set.
pub struct Slru {
    n: usize,
    seg_cap: u32,
    /// Per set and segment: blocks.
    len: Vec<u32>,
    lists: Lists,
    seg: Vec<u8>,
}

impl Slru {
    /// For a cache of shape `g` with `n` (1 ..= 16) segments per set.
    pub fn new(g: Geometry, n: u32) -> Slru {
        let n = n.clamp(1, MAX_SEGMENTS) as usize;
        let sets = g.sets as usize;
        Slru {
            n,
            seg_cap: g.ways / n as u32,
            len: vec![0; sets * n],
            lists: Lists::new(sets * n, g.blocks as usize),
            seg: vec![0; g.blocks as usize],
        }
    }

    /// Blocks per segment of `set`, bottom first.
    pub fn segments(&self, set: usize) -> &[u32] {
        &self.len[set * self.n..(set + 1) * self.n]
    }

    #[inline(always)]
    fn push(&mut self, base: usize, i: usize, slot: u32) {
        self.lists.push_front(base + i, slot);
        self.seg[slot as usize] = i as u8;
        self.len[base + i] += 1;
    }
}

impl Policy for Slru {
    #[inline(always)]
    fn hit(&mut self, set: usize, slot: u32, _: &Request) {
        let base = set * self.n;
        let i = self.seg[slot as usize] as usize;
        if i + 1 == self.n {
            self.lists.move_to_front(base + i, slot);
            return;
        }
        self.lists.unlink(base + i, slot);
        self.len[base + i] -= 1;
        self.push(base, i + 1, slot);
        // Demote down the segments while one is over its size (never out of segment 0).
        let mut j = i + 1;
        while j > 0 && self.len[base + j] > self.seg_cap {
            let s = self.lists.pop_back(base + j);
            self.len[base + j] -= 1;
            self.push(base, j - 1, s);
            j -= 1;
        }
    }

    #[inline(always)]
    fn evict(&mut self, set: usize, _: &Request, _: &[u64], _: &mut IdMap) -> u32 {
        let base = set * self.n;
        let i = (0..self.n)
            .find(|&i| self.len[base + i] > 0)
            .expect("a full set has blocks");
        self.len[base + i] -= 1;
        self.lists.pop_back(base + i)
    }

    #[inline(always)]
    fn insert(&mut self, set: usize, slot: u32, _: &Request) {
        let base = set * self.n;
        let i = (0..self.n)
            .find(|&i| self.len[base + i] < self.seg_cap)
            .unwrap_or(0);
        self.push(base, i, slot);
    }

    fn remove(&mut self, set: usize, slot: u32) {
        let l = set * self.n + self.seg[slot as usize] as usize;
        self.lists.unlink(l, slot);
        self.len[l] -= 1;
    }

    fn metadata_bytes(&self) -> usize {
        self.lists.bytes() + self.seg.len() + 4 * self.len.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::probe::{cache, full, run};

    #[test]
    fn filling_spills_upwards_and_hits_promote_one_segment() {
        // 4 blocks, 2 segments of 2.
        let mut c = cache(full(4), Slru::new(full(4), 2));
        assert_eq!(run(&mut c, &[1, 2, 3]), "mmm");
        assert_eq!(c.policy().segments(0), [2, 1]);
        // 1 hits segment 0 → segment 1 (room); 2 hits → segment 1 is over its size → its
        // LRU (3) is demoted to segment 0.
        assert_eq!(run(&mut c, &[1, 2]), "hh");
        assert_eq!(c.policy().segments(0), [1, 2]);
        // 4 fits into segment 0; 5 evicts segment 0's LRU (3); 3 then evicts 4.
        assert_eq!(run(&mut c, &[4, 5, 3]), "mmm");
        // 1 and 2 survived in the protected segment; 5 too, 4 did not.
        assert_eq!(run(&mut c, &[1, 2, 5, 4]), "hhhm");
    }

    #[test]
    fn a_scan_only_washes_the_lowest_segment() {
        // 8 blocks, 4 segments of 2: 1..8 fill all segments; hits lift 7 and 8 … the scan
        // 11..20 then only replaces segment 0's blocks.
        let mut c = cache(full(8), Slru::new(full(8), 4));
        let fill: Vec<u64> = (1..=8).collect();
        assert_eq!(run(&mut c, &fill), "mmmmmmmm");
        assert_eq!(c.policy().segments(0), [2, 2, 2, 2]);
        // Each hit of 1 and 2 (segment 0) promotes them, demoting 4 and 3 in exchange.
        assert_eq!(run(&mut c, &[1, 2]), "hh");
        let scan: Vec<u64> = (11..=20).collect();
        assert_eq!(run(&mut c, &scan), "m".repeat(10));
        assert_eq!(run(&mut c, &[1, 2, 5, 6, 7, 8, 3, 4]), "hhhhhhmm");
    }
}
