//! Ghost lists: ids of blocks no longer cached, remembered in per-set FIFO/LRU order so
//! that a policy can tell a returning block from a new one (ARC's B1/B2, 2Q's A1out,
//! S3-FIFO's ghost queue). Nodes come from one arena sized once; nothing is allocated per
//! request.

use crate::list::{Lists, NIL};
use crate::map::IdMap;

/// `per_set` ghost lists for each of `sets` sets over at most `cap` ids in total.
pub struct Ghosts {
    per_set: usize,
    lists: Lists,
    len: Vec<u32>,
    keys: Vec<u64>,
    which: Vec<u32>,
    map: IdMap,
    free: Vec<u32>,
}

impl Ghosts {
    /// Room for `cap` ids in `per_set` lists per set.
    pub fn new(sets: usize, per_set: usize, cap: usize) -> Ghosts {
        let nodes = cap + 1;
        Ghosts {
            per_set,
            lists: Lists::new(sets * per_set, nodes),
            len: vec![0; sets * per_set],
            keys: vec![0; nodes],
            which: vec![0; nodes],
            map: IdMap::with_capacity(nodes),
            free: (0..nodes as u32).rev().collect(),
        }
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

    /// Puts `id` (not a ghost yet) at the front of list `k` of `set`.
    #[inline(always)]
    pub fn push(&mut self, set: usize, k: usize, id: u64) {
        let l = self.list(set, k);
        let n = self
            .free
            .pop()
            .expect("ghost arena sized for the policy's bound");
        self.keys[n as usize] = id;
        self.which[n as usize] = l as u32;
        self.map.insert(id, n);
        self.lists.push_front(l, n);
        self.len[l] += 1;
    }

    /// Forgets the oldest id of list `k` of `set` (none when empty).
    #[inline(always)]
    pub fn drop_back(&mut self, set: usize, k: usize) {
        let l = self.list(set, k);
        let n = self.lists.pop_back(l);
        if n != NIL {
            self.len[l] -= 1;
            self.map.remove(self.keys[n as usize]);
            self.free.push(n);
        }
    }

    /// Forgets `id`; which list of its set held it.
    #[inline(always)]
    pub fn take(&mut self, id: u64) -> Option<usize> {
        let n = self.map.remove(id)?;
        let l = self.which[n as usize] as usize;
        self.lists.unlink(l, n);
        self.len[l] -= 1;
        self.free.push(n);
        Some(l % self.per_set)
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

    /// Bytes of the arrays.
    pub fn bytes(&self) -> usize {
        self.lists.bytes() + self.map.bytes() + 4 * self.len.len() + 12 * self.keys.len()
    }
}
