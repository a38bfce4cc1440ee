//! LFU: evicts the least frequently requested block; among those, the one that reached its
//! count first. Counts start at 1 on insertion and are forgotten on eviction (libCacheSim's
//! `LFU`).
//!
//! Constant time per request (Shah, Mitra, Matani, "An O(1) algorithm for implementing the
//! LFU cache eviction scheme", 2010): each set keeps an ascending list of frequency nodes,
//! each node a FIFO of the blocks with that count. A hit moves the block to the back of the
//! next node (creating it when missing); the victim is the front of the set's first node.
//! Frequency nodes come from a pool of `blocks + 1` (a non-empty node holds a block; one
//! more is needed while a block moves).

use super::Policy;
use crate::cache::Geometry;
use crate::list::{Lists, NIL};
use crate::map::IdMap;
use crate::Request;

/// Least frequently used.
pub struct Lfu {
    /// The blocks of each frequency node, in the order they reached its count.
    items: Lists,
    /// Per slot: its frequency node.
    node_of: Vec<u32>,
    /// Per frequency node: the count, and the neighbours in its set's ascending list.
    freq: Vec<u64>,
    fprev: Vec<u32>,
    fnext: Vec<u32>,
    /// Per set: the node with the smallest count.
    first: Vec<u32>,
    /// Unused frequency nodes, linked through `fnext`.
    free: u32,
}

impl Lfu {
    /// For a cache of shape `g`.
    pub fn new(g: Geometry) -> Lfu {
        let nodes = g.blocks as usize + 1;
        let fnext: Vec<u32> = (1..=nodes as u32)
            .map(|i| if i as usize == nodes { NIL } else { i })
            .collect();
        Lfu {
            items: Lists::new(nodes, g.blocks as usize),
            node_of: vec![NIL; g.blocks as usize],
            freq: vec![0; nodes],
            fprev: vec![NIL; nodes],
            fnext,
            first: vec![NIL; g.sets as usize],
            free: 0,
        }
    }

    /// A node with count `f` linked into `set`'s list after `after` (NIL: at the start).
    #[inline(always)]
    fn new_node(&mut self, set: usize, f: u64, after: u32) -> u32 {
        let n = self.free;
        self.free = self.fnext[n as usize];
        self.freq[n as usize] = f;
        let next = if after == NIL {
            self.first[set]
        } else {
            self.fnext[after as usize]
        };
        self.fprev[n as usize] = after;
        self.fnext[n as usize] = next;
        if after == NIL {
            self.first[set] = n;
        } else {
            self.fnext[after as usize] = n;
        }
        if next != NIL {
            self.fprev[next as usize] = n;
        }
        n
    }

    /// Takes `slot` out of its node, freeing the node when it becomes empty.
    #[inline(always)]
    fn detach(&mut self, set: usize, slot: u32) {
        let n = self.node_of[slot as usize];
        self.items.unlink(n as usize, slot);
        if self.items.front(n as usize) == NIL {
            let (p, x) = (self.fprev[n as usize], self.fnext[n as usize]);
            if p == NIL {
                self.first[set] = x;
            } else {
                self.fnext[p as usize] = x;
            }
            if x != NIL {
                self.fprev[x as usize] = p;
            }
            self.fnext[n as usize] = self.free;
            self.free = n;
        }
    }
}

impl Policy for Lfu {
    #[inline]
    fn hit(&mut self, set: usize, slot: u32, _: &Request) {
        let n = self.node_of[slot as usize];
        let f = self.freq[n as usize] + 1;
        let x = self.fnext[n as usize];
        let to = if x != NIL && self.freq[x as usize] == f {
            x
        } else {
            self.new_node(set, f, n)
        };
        self.detach(set, slot);
        self.items.push_back(to as usize, slot);
        self.node_of[slot as usize] = to;
    }

    #[inline]
    fn evict(&mut self, set: usize, _: &Request, _: &[u64], _: &mut IdMap) -> u32 {
        let n = self.first[set];
        let slot = self.items.front(n as usize);
        self.detach(set, slot);
        slot
    }

    #[inline]
    fn insert(&mut self, set: usize, slot: u32, _: &Request) {
        let f = self.first[set];
        let to = if f != NIL && self.freq[f as usize] == 1 {
            f
        } else {
            self.new_node(set, 1, NIL)
        };
        self.items.push_back(to as usize, slot);
        self.node_of[slot as usize] = to;
    }

    fn remove(&mut self, set: usize, slot: u32) {
        self.detach(set, slot);
    }

    fn metadata_bytes(&self) -> usize {
        self.items.bytes()
            + 4 * (self.node_of.len() + self.fprev.len() + self.fnext.len())
            + 8 * self.freq.len()
            + 4 * self.first.len()
    }
}

#[cfg(test)]
mod tests {
    use crate::testutil::{misses, reads};

    #[test]
    fn lfu_hand_computed() {
        // 2 blocks: 1 1 2 3 — 3 evicts 2 (count 1 < 1's count 2); then 1 hits, 2 misses.
        assert_eq!(misses("lfu", 2, None, &reads(&[1, 1, 2, 3, 1, 2])), 4);
        // Ties: the oldest of the least frequent. 3 blocks: 1 2 3 then 2 and 1 hit (count 2),
        // 4 evicts 3 (only count 1); 5 evicts 4 (count 1, forgotten 3 not counted);
        // 3 evicts 5 → misses 1 2 3 4 5 3 = 6; then 2 hits, 1 hits.
        assert_eq!(
            misses("lfu", 3, None, &reads(&[1, 2, 3, 2, 1, 4, 5, 3, 2, 1])),
            6
        );
        // Among equal counts the one that reached the count first goes: 2 blocks, 1 2 1 2
        // (both count 2; 1 reached it first) 3 evicts 1.
        assert_eq!(misses("lfu", 2, None, &reads(&[1, 2, 1, 2, 3, 2, 1])), 4);
    }
}
