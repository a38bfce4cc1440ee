//! S3-FIFO (Yang et al., SOSP'23): a small FIFO `S` for new blocks, a main FIFO `M` with
//! reinsertion, and a ghost FIFO `G` of ids recently evicted from `S`.
//!
//! The semantics are libCacheSim's (`S3FIFO`, defaults small 10 %, ghost 90 %, move to main
//! after 2 hits), per set of `w` ways:
//! - sizes: `S` holds `⌊w·small⌋`, `M` holds the rest, `G` remembers `⌊w·ghost⌋` ids;
//! - a hit in `S` or `M` increments the block's counter;
//! - a miss whose id is in `G` takes it out of `G` and inserts the block into `M`; any other
//!   miss inserts into `S`; both start with counter 0; while the set fills, `S` may exceed
//!   its share;
//! - a miss in a full set evicts: when `M` holds more than its share or `S` is empty, `M`'s
//!   oldest block goes back to the head with counter min(counter, 3) − 1 as long as its
//!   counter is at least 1, and the first one with counter 0 is evicted; otherwise `S`'s
//!   oldest block moves to the head of `M` (counter 0) when it was hit at least `promote`
//!   times, and the first one hit fewer times is evicted, its id entering `G` (which first
//!   forgets its oldest id when full). Moves from `S` to `M` do not free a slot, so this
//!   repeats until a block has left the set.
//!
//! Difference for tiny sets only: libCacheSim admits no new block when `S` would hold at
//! most one (caches of fewer than 20 blocks); iolab keeps at least one block in `S` and
//! admits every block.

use super::ghost::Ghosts;
use super::queues::TwoQueues;
use super::Policy;
use crate::cache::Geometry;
use crate::list::NIL;
use crate::map::IdMap;
use crate::Request;

const S: usize = 0;
const M: usize = 1;

/// S3-FIFO, one instance per set.
pub struct S3Fifo {
    m_cap: u32,
    g_cap: usize,
    promote: u32,
    /// S and M of every set.
    q: TwoQueues,
    freq: Vec<u32>,
    ghosts: Ghosts,
    ghost_hit: bool,
}

impl S3Fifo {
    /// For a cache of shape `g`: `small` and `ghost` are shares of a set, `promote` the hits
    /// in `S` that move a block to `M`.
    pub fn new(g: Geometry, small: f64, ghost: f64, promote: u32) -> S3Fifo {
        let w = g.ways as usize;
        let sets = g.sets as usize;
        let s_cap = ((w as f64 * small) as usize).clamp(1, w);
        let g_cap = (w as f64 * ghost) as usize;
        S3Fifo {
            m_cap: (w - s_cap) as u32,
            g_cap,
            promote,
            q: TwoQueues::new(sets, g.blocks as usize),
            freq: vec![0; g.blocks as usize],
            ghosts: Ghosts::new(sets, 1, g_cap * sets, g.blocks),
            ghost_hit: false,
        }
    }

    /// Evicts from `M`: reinserts blocks that were hit, returns the first that was not
    /// (forgotten in `map`).
    #[inline(always)]
    fn evict_main(&mut self, set: usize, ids: &[u64], map: &mut IdMap) -> u32 {
        loop {
            let slot = self.q.pop(set, M);
            let f = self.freq[slot as usize];
            if f == 0 {
                map.remove(ids[slot as usize]);
                return slot;
            }
            self.freq[slot as usize] = f.min(3) - 1;
            self.q.push(set, M, slot);
        }
    }

    /// Evicts from `S`: moves blocks hit often enough to `M`, returns the first other one
    /// (after remembering it in `G`, or forgetting it in `map`), or `None` when `S` ran empty.
    #[inline(always)]
    fn evict_small(&mut self, set: usize, ids: &[u64], map: &mut IdMap) -> Option<u32> {
        while self.q.len(set, S) > 0 {
            let slot = self.q.pop(set, S);
            if self.freq[slot as usize] >= self.promote {
                self.freq[slot as usize] = 0;
                self.q.push(set, M, slot);
            } else {
                if self.g_cap > 0 {
                    while self.ghosts.len(set, 0) >= self.g_cap {
                        self.ghosts.drop_back(set, 0, map);
                    }
                    self.ghosts.push(set, 0, ids[slot as usize], map);
                } else {
                    map.remove(ids[slot as usize]);
                }
                return Some(slot);
            }
        }
        None
    }
}

impl Policy for S3Fifo {
    const GHOSTS_IN_MAP: bool = true;

    fn ghost_capacity(&self) -> usize {
        self.ghosts.capacity()
    }

    #[inline(always)]
    fn hit(&mut self, _: usize, slot: u32, _: &Request) {
        let f = &mut self.freq[slot as usize];
        *f = f.saturating_add(1);
    }

    #[inline(always)]
    fn admit(&mut self, _: usize, _: &Request, ghost: Option<u32>) -> bool {
        self.ghost_hit = ghost.map(|g| self.ghosts.take(g)).is_some();
        true
    }

    #[inline(always)]
    fn evict(&mut self, set: usize, _: &Request, ids: &[u64], map: &mut IdMap) -> u32 {
        loop {
            let [s, m] = self.q.lens(set);
            if m > self.m_cap || s == 0 {
                return self.evict_main(set, ids, map);
            }
            if let Some(slot) = self.evict_small(set, ids, map) {
                return slot;
            }
        }
    }

    #[inline(always)]
    fn insert(&mut self, set: usize, slot: u32, _: &Request) {
        let list = if self.ghost_hit { M } else { S };
        self.ghost_hit = false;
        self.freq[slot as usize] = 0;
        self.q.push(set, list, slot);
    }

    fn remove(&mut self, set: usize, slot: u32) {
        self.q.remove(set, slot);
    }

    fn metadata_bytes(&self) -> usize {
        self.q.bytes() + 4 * self.freq.len() + self.ghosts.bytes()
    }

    #[inline(always)]
    fn prefetch_victims(&self, set: usize, ids: &[u64], map: &IdMap) {
        // The next eviction looks at the oldest blocks of S and M (their counters; the
        // victim's entry becomes a ghost or goes) and drops G's oldest id.
        for list in [S, M] {
            let slot = self.q.back(set, list);
            if slot != NIL {
                crate::prefetch(&self.freq[slot as usize]);
            }
            self.q.prefetch_back(set, list, ids, map);
        }
        self.ghosts.prefetch_back(set, 0, map);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::probe::{cache, full, run};

    fn s3(blocks: u32) -> crate::cache::Cache<S3Fifo> {
        cache(full(blocks), S3Fifo::new(full(blocks), 0.1, 0.9, 2))
    }

    #[test]
    fn sizes_follow_libcachesim_defaults() {
        let p = S3Fifo::new(full(20), 0.1, 0.9, 2);
        assert_eq!((p.m_cap, p.g_cap), (18, 18));
    }

    #[test]
    fn one_hit_wonders_leave_through_the_ghost_and_return_to_main() {
        // c = 20: S's share 2, M's 18, G 18 ids; S holds all 20 while the cache fills.
        let mut c = s3(20);
        let fill: Vec<u64> = (1..=20).collect();
        assert_eq!(run(&mut c, &fill), "m".repeat(20));
        // 1 and 2 are hit twice, 3 once.
        assert_eq!(run(&mut c, &[1, 1, 2, 2, 3]), "hhhhh");
        // 21: M is empty → evict from S: 1 and 2 (2 hits) move to M, 3 (1 hit) leaves into G.
        assert_eq!(run(&mut c, &[21]), "m");
        assert_eq!(c.policy().q.lens(0), [18, 2]);
        assert_eq!(c.policy().ghosts.ids(0, 0), [3]);
        // 3 returns: a ghost hit → M; S's oldest (4, never hit) leaves into G.
        assert_eq!(run(&mut c, &[3]), "m");
        assert_eq!(c.policy().q.lens(0), [17, 3]);
        assert_eq!(c.policy().ghosts.ids(0, 0), [4]);
        assert_eq!(run(&mut c, &[1, 2, 3, 4]), "hhhm");
        assert_eq!(c.policy().q.lens(0), [16, 4]);
    }

    #[test]
    fn main_reinserts_hit_blocks_with_a_lower_counter() {
        let mut c = s3(20);
        let fill: Vec<u64> = (1..=20).collect();
        run(&mut c, &fill);
        for k in 1..=18u64 {
            run(&mut c, &[k, k]);
        }
        // 21: 1..18 (2 hits) move to M, 19 leaves into G; S = [21, 20].
        assert_eq!(run(&mut c, &[21]), "m");
        assert_eq!(c.policy().q.lens(0), [2, 18]);
        // 1 (M's oldest) is hit 4 times, 21 twice.
        assert_eq!(run(&mut c, &[1, 1, 1, 1, 21, 21]), "hhhhhh");
        // 23: S's oldest 20 (no hit) leaves into G.
        assert_eq!(run(&mut c, &[23]), "m");
        assert_eq!(c.policy().ghosts.ids(0, 0), [20, 19]);
        // 24: 21 (2 hits) moves to M (19 > 18), 23 leaves into G.
        assert_eq!(run(&mut c, &[24]), "m");
        assert_eq!(c.policy().q.lens(0), [1, 19]);
        // 25: M is over its share → 1 (counter 4) goes back with counter 2, 2 (counter 0,
        // reset when it moved to M) is evicted without a ghost.
        assert_eq!(run(&mut c, &[25]), "m");
        assert_eq!(c.policy().q.lens(0), [2, 18]);
        // 2 is not a ghost: it re-enters S, pushing S's oldest (24) into G.
        assert_eq!(run(&mut c, &[1, 3, 2]), "hhm");
        assert_eq!(c.policy().ghosts.ids(0, 0), [24, 23, 20, 19]);
    }
}
