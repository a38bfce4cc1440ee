//! LRU: evicts the block whose last request is the oldest.
//!
//! One list per set, most recent at the front; a hit moves the block to the front, the
//! victim is the back.

use super::Policy;
use crate::cache::Geometry;
use crate::list::Lists;
use crate::map::IdMap;
use crate::Request;

/// Least recently used.
pub struct Lru {
    lists: Lists,
}

impl Lru {
    /// For a cache of shape `g`.
    pub fn new(g: Geometry) -> Lru {
        Lru {
            lists: Lists::new(g.sets as usize, g.blocks as usize),
        }
    }
}

impl Policy for Lru {
    const PREFETCH: bool = true;

    #[inline(always)]
    fn hit(&mut self, set: usize, slot: u32, _: &Request) {
        self.lists.move_to_front(set, slot);
    }

    #[inline(always)]
    fn evict(&mut self, set: usize, _: &Request, _: &[u64], _: &mut IdMap) -> u32 {
        self.lists.pop_back(set)
    }

    #[inline(always)]
    fn insert(&mut self, set: usize, slot: u32, _: &Request) {
        self.lists.push_front(set, slot);
    }

    fn remove(&mut self, set: usize, slot: u32) {
        self.lists.unlink(set, slot);
    }

    fn metadata_bytes(&self) -> usize {
        self.lists.bytes()
    }

    #[inline(always)]
    fn prefetch(&self, _: usize, slot: u32) {
        self.lists.prefetch(slot);
    }

    #[inline(always)]
    fn prefetch_victims(&self, set: usize, ids: &[u64], map: &IdMap) {
        self.lists.prefetch_back(set, ids, map);
    }
}

#[cfg(test)]
mod tests {
    use crate::testutil::{misses, reads};

    #[test]
    fn lru_hand_computed() {
        // 3 blocks, fully associative. Trace: 1 2 3 1 4 2 5 1
        // 1m 2m 3m 1h [order 1,3,2] 4m evicts 2 [4,1,3] 2m evicts 3 [2,4,1]
        // 5m evicts 1 [5,2,4] 1m evicts 4 → misses 7
        assert_eq!(misses("lru", 3, None, &reads(&[1, 2, 3, 1, 4, 2, 5, 1])), 7);
        // 1 2 1 3 1 4 1: 1 stays → misses 4
        assert_eq!(misses("lru", 2, None, &reads(&[1, 2, 1, 3, 1, 4, 1])), 4);
    }
}
