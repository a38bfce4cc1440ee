//! Two resident queues per set over the cache's slots (ARC's T1/T2, 2Q's A1in/Am,
//! S3-FIFO's small and main FIFO): which queue each slot is in and how long each queue is.

use crate::list::Lists;

/// Queues 0 and 1 of every set.
pub struct TwoQueues {
    lists: Lists,
    which: Vec<u8>,
    len: Vec<[u32; 2]>,
}

impl TwoQueues {
    /// For `sets` sets over `slots` slots.
    pub fn new(sets: usize, slots: usize) -> TwoQueues {
        TwoQueues {
            lists: Lists::new(2 * sets, slots),
            which: vec![0; slots],
            len: vec![[0; 2]; sets],
        }
    }

    /// Blocks in queue `q` of `set`.
    #[inline(always)]
    pub fn len(&self, set: usize, q: usize) -> u32 {
        self.len[set][q]
    }

    /// Both queues' lengths.
    #[inline(always)]
    pub fn lens(&self, set: usize) -> [u32; 2] {
        self.len[set]
    }

    /// The queue `slot` is in.
    #[inline(always)]
    pub fn which(&self, slot: u32) -> usize {
        self.which[slot as usize] as usize
    }

    /// Puts `slot` (in no queue) at the front of queue `q`.
    #[inline(always)]
    pub fn push(&mut self, set: usize, q: usize, slot: u32) {
        self.lists.push_front(2 * set + q, slot);
        self.which[slot as usize] = q as u8;
        self.len[set][q] += 1;
    }

    /// The back of queue `q` of `set`, or [`crate::list::NIL`].
    #[inline(always)]
    pub fn back(&self, set: usize, q: usize) -> u32 {
        self.lists.back(2 * set + q)
    }

    /// Prefetches for evicting the back of queue `q` (see [`Lists::prefetch_back`]).
    #[inline(always)]
    pub fn prefetch_back(&self, set: usize, q: usize, ids: &[u64], map: &crate::map::IdMap) {
        self.lists.prefetch_back(2 * set + q, ids, map);
    }

    /// Prefetches `slot`'s links (a hit is coming).
    #[inline(always)]
    pub fn prefetch(&self, slot: u32) {
        self.lists.prefetch(slot);
    }

    /// Takes the back of queue `q` (not empty) out.
    #[inline(always)]
    pub fn pop(&mut self, set: usize, q: usize) -> u32 {
        self.len[set][q] -= 1;
        self.lists.pop_back(2 * set + q)
    }

    /// Moves `slot` to the front of its queue.
    #[inline(always)]
    pub fn requeue(&mut self, set: usize, slot: u32) {
        self.lists.move_to_front(2 * set + self.which(slot), slot);
    }

    /// Takes `slot` out of its queue.
    #[inline(always)]
    pub fn remove(&mut self, set: usize, slot: u32) {
        let q = self.which(slot);
        self.lists.unlink(2 * set + q, slot);
        self.len[set][q] -= 1;
    }

    /// Moves `slot` from its queue to the front of queue `q`.
    #[inline(always)]
    pub fn move_to(&mut self, set: usize, slot: u32, q: usize) {
        self.remove(set, slot);
        self.push(set, q, slot);
    }

    /// The slots of queue `q` of `set`, front first (for tests).
    #[cfg(test)]
    pub fn slots(&self, set: usize, q: usize) -> Vec<u32> {
        let mut out = Vec::new();
        let mut n = self.lists.front(2 * set + q);
        while n != crate::list::NIL {
            out.push(n);
            n = self.lists.next(n);
        }
        out
    }

    /// Bytes of the arrays.
    pub fn bytes(&self) -> usize {
        self.lists.bytes() + self.which.len() + 8 * self.len.len()
    }
}
