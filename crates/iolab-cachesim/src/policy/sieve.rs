//! SIEVE (Zhang et al., NSDI'24): a FIFO queue with a visited bit and a hand that stays put.
//!
//! New blocks enter at the head; a hit sets the block's visited bit. To evict, the hand
//! walks from where it stopped last (first: the tail) towards the head, clearing visited
//! bits, wrapping to the tail; the first unvisited block is the victim and the hand stops
//! at the block before it (towards the head). Survivors are not moved. Same as
//! libCacheSim's `Sieve`.

use super::Policy;
use crate::cache::Geometry;
use crate::list::{Lists, NIL};
use crate::map::IdMap;
use crate::Request;

/// SIEVE.
pub struct Sieve {
    /// Per set: the queue, head = newest.
    lists: Lists,
    visited: Vec<bool>,
    /// Per set: where the hand stopped, or NIL (start at the tail).
    hand: Vec<u32>,
}

impl Sieve {
    /// For a cache of shape `g`.
    pub fn new(g: Geometry) -> Sieve {
        Sieve {
            lists: Lists::new(g.sets as usize, g.blocks as usize),
            visited: vec![false; g.blocks as usize],
            hand: vec![NIL; g.sets as usize],
        }
    }
}

impl Policy for Sieve {
    #[inline(always)]
    fn hit(&mut self, _: usize, slot: u32, _: &Request) {
        self.visited[slot as usize] = true;
    }

    #[inline]
    fn evict(&mut self, set: usize, _: &Request, _: &[u64], _: &mut IdMap) -> u32 {
        let mut s = self.hand[set];
        if s == NIL {
            s = self.lists.back(set);
        }
        while self.visited[s as usize] {
            self.visited[s as usize] = false;
            s = self.lists.prev(s);
            if s == NIL {
                s = self.lists.back(set);
            }
        }
        self.hand[set] = self.lists.prev(s);
        self.lists.unlink(set, s);
        s
    }

    #[inline(always)]
    fn insert(&mut self, set: usize, slot: u32, _: &Request) {
        self.visited[slot as usize] = false;
        self.lists.push_front(set, slot);
    }

    fn remove(&mut self, set: usize, slot: u32) {
        if self.hand[set] == slot {
            self.hand[set] = self.lists.prev(slot);
        }
        self.lists.unlink(set, slot);
    }

    fn metadata_bytes(&self) -> usize {
        self.lists.bytes() + self.visited.len() + 4 * self.hand.len()
    }
}

#[cfg(test)]
mod tests {
    use crate::testutil::{misses, reads};

    #[test]
    fn sieve_hand_computed() {
        // 3 blocks: 1 2 3 (queue head→tail: 3 2 1), 1 hit (visited), 4: hand at tail 1
        // (visited → clear), moves to 2: victim; hand stops at 3. Queue 4 3 1.
        // 5: hand at 3 (unvisited) → victim, hand at 4. Queue 5 4 1.
        // 1 hit. 2: hand at 4 → victim. Misses 1 2 3 4 5 2 = 6.
        assert_eq!(
            misses("sieve", 3, None, &reads(&[1, 2, 3, 1, 4, 5, 1, 2])),
            6
        );
        // 2 blocks: 1 2 1 3 1 2. 3: hand at the tail 1 (visited → clear), 2 is the victim,
        // 2 was the head so the hand restarts at the tail; queue 3 1. 1 hits (visited).
        // 2: hand at 1 (visited → clear), 3 is the victim. Misses 1 2 3 2 = 4.
        assert_eq!(misses("sieve", 2, None, &reads(&[1, 2, 1, 3, 1, 2])), 4);
    }
}
