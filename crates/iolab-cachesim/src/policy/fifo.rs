//! FIFO: evicts the block that entered the set first; hits change nothing.
//!
//! A set's slots form a ring with a hand at the oldest block: the victim is the block under
//! the hand, the new block takes its slot and the hand moves on — so the new block is the
//! youngest, exactly a FIFO queue with no list to maintain.

use super::Policy;
use crate::cache::Geometry;
use crate::map::IdMap;
use crate::Request;

/// First in, first out.
pub struct Fifo {
    ways: u32,
    /// Per set: the way of the oldest block.
    hand: Vec<u32>,
}

impl Fifo {
    /// For a cache of shape `g`.
    pub fn new(g: Geometry) -> Fifo {
        Fifo {
            ways: g.ways,
            hand: vec![0; g.sets as usize],
        }
    }
}

impl Policy for Fifo {
    #[inline(always)]
    fn hit(&mut self, _: usize, _: u32, _: &Request) {}

    #[inline(always)]
    fn evict(&mut self, set: usize, _: &Request, _: &[u64], _: &mut IdMap) -> u32 {
        let h = self.hand[set];
        self.hand[set] = if h + 1 == self.ways { 0 } else { h + 1 };
        set as u32 * self.ways + h
    }

    #[inline(always)]
    fn insert(&mut self, _: usize, _: u32, _: &Request) {}

    fn remove(&mut self, _: usize, _: u32) {}

    fn metadata_bytes(&self) -> usize {
        4 * self.hand.len()
    }

    #[inline(always)]
    fn prefetch_victims(&self, set: usize, ids: &[u64], map: &IdMap) {
        map.prefetch(ids[(set as u32 * self.ways + self.hand[set]) as usize]);
    }
}

#[cfg(test)]
mod tests {
    use crate::testutil::{misses, reads};

    #[test]
    fn fifo_hand_computed() {
        // 3 blocks: 1 2 3 1(h) 4 evicts 1 [2 3 4] 1 evicts 2 [3 4 1] 2 evicts 3 [4 1 2] 3 evicts 4
        // → misses: 1 2 3 4 1 2 3 = 7
        assert_eq!(
            misses("fifo", 3, None, &reads(&[1, 2, 3, 1, 4, 1, 2, 3])),
            7
        );
        // LRU keeps the re-used 1 where FIFO does not: 1 2 1 3 1 with 2 blocks.
        assert_eq!(misses("fifo", 2, None, &reads(&[1, 2, 1, 3, 1])), 4);
        assert_eq!(misses("lru", 2, None, &reads(&[1, 2, 1, 3, 1])), 3);
    }
}
