//! Ghost lists: ids of blocks no longer cached, remembered in per-set FIFO/LRU order so
//! that a policy can tell a returning block from a new one (ARC's B1/B2, 2Q's A1out,
//! S3-FIFO's ghost queue). Nodes come from one arena sized once; nothing is allocated per
//! request.
//!
//! The ids live in the cache's own map (see [`super::Policy::GHOSTS_IN_MAP`]): a ghost is
//! an entry whose value is `base + node`, `base` being the cache's block count, so that one
//! lookup per request tells a cached block, a ghost and a new block apart, and a block that
//! is evicted into a ghost list keeps its entry (its value changes, in one probe).

use crate::list::{Lists, NIL};
use crate::map::IdMap;

/// `per_set` ghost lists for each of `sets` sets over at most `cap` ids in total.
pub struct Ghosts {
    per_set: usize,
    /// The map value of node 0.
    base: u32,
    lists: Lists,
    len: Vec<u32>,
    keys: Vec<u64>,
    which: Vec<u32>,
    free: Vec<u32>,
}

impl Ghosts {
    /// Room for `cap` ids in `per_set` lists per set, their map values from `base` (the
    /// cache's block count) upwards.
    pub fn new(sets: usize, per_set: usize, cap: usize, base: u32) -> Ghosts {
        let nodes = cap + 1;
        Ghosts {
            per_set,
            base,
            lists: Lists::new(sets * per_set, nodes),
            len: vec![0; sets * per_set],
            keys: crate::mem::filled(nodes, 0),
            which: crate::mem::filled(nodes, 0),
            free: (0..nodes as u32).rev().collect(),
        }
    }

    /// Map entries the ghosts may hold at most.
    pub fn capacity(&self) -> usize {
        self.keys.len()
    }

    #[inline(always)]
    fn list(&self, set: usize, k: usize) -> usize {
        set * self.per_set + k
    }

    /// Ids in list `k` of `set`.
    #[inline(always)]
    pub fn len(&self, set: usize, k: usize) -> usize {
        self.len[self.list(set, k)] as usize
    }

    /// Puts `id` (not a ghost yet) at the front of list `k` of `set`; its entry in `map`
    /// (added, or the evicted block's, replaced) becomes the ghost's.
    #[inline(always)]
    pub fn push(&mut self, set: usize, k: usize, id: u64, map: &mut IdMap) {
        let l = self.list(set, k);
        let n = self
            .free
            .pop()
            .expect("ghost arena sized for the policy's bound");
        self.keys[n as usize] = id;
        self.which[n as usize] = l as u32;
        map.put(id, self.base + n);
        self.lists.push_front(l, n);
        self.len[l] += 1;
    }

    /// Prefetches the map entry of the oldest id of list `k` of `set` (the next to be
    /// dropped).
    #[inline(always)]
    pub fn prefetch_back(&self, set: usize, k: usize, map: &IdMap) {
        self.lists.prefetch_back(self.list(set, k), &self.keys, map);
    }

    /// Forgets the oldest id of list `k` of `set` (none when empty), also in `map`.
    #[inline(always)]
    pub fn drop_back(&mut self, set: usize, k: usize, map: &mut IdMap) {
        let l = self.list(set, k);
        let n = self.lists.pop_back(l);
        if n != NIL {
            self.len[l] -= 1;
            map.remove(self.keys[n as usize]);
            self.free.push(n);
        }
    }

    /// Forgets the ghost whose map value is `entry` (the id is being cached again: the
    /// cache replaces its map entry); which list of its set held it.
    #[inline(always)]
    pub fn take(&mut self, entry: u32) -> usize {
        let n = entry - self.base;
        let l = self.which[n as usize] as usize;
        self.lists.unlink(l, n);
        self.len[l] -= 1;
        self.free.push(n);
        l % self.per_set
    }

    /// The ids of list `k` of `set`, most recent first (for tests).
    #[cfg(test)]
    pub fn ids(&self, set: usize, k: usize) -> Vec<u64> {
        let mut out = Vec::new();
        let mut n = self.lists.front(self.list(set, k));
        while n != NIL {
            out.push(self.keys[n as usize]);
            n = self.lists.next(n);
        }
        out
    }

    /// Bytes of the arrays (their entries in the cache's map are counted there).
    pub fn bytes(&self) -> usize {
        self.lists.bytes() + 4 * self.len.len() + 16 * self.keys.len()
    }
}
