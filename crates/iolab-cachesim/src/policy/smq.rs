//! A model of dm-cache's `smq` policy (Linux `drivers/md/dm-cache-policy-smq.c`): what it
//! promotes, not its timing.
//!
//! What is modelled:
//! - **Hotspot tracking.** smq does not cache a block because it was read once. It tracks
//!   *hotspot regions* of `region` consecutive blocks (the kernel uses 16 cache blocks) in a
//!   table of at most max(blocks / 4, 1024) regions (here per set: max(ways / 4, 16), so
//!   that each set is a small smq cache of its own, as every policy's sets are), replacing
//!   the least recently touched region when full. Every request (hit or miss) touches its
//!   region; a region's level rises by one at most once per period (the kernel clears its
//!   hit bits every tick; here a period is `period` requests to the set), up to 63.
//! - **Promotion.** A read miss is cached only when its region's level reaches the promote
//!   level: 1 while the set still has free blocks (the kernel is eager then), `promote`
//!   once it is full; a write miss is cached at once while there are free blocks (the
//!   kernel's fast promotion of whole-block writes) and otherwise needs `promote + 2` (the
//!   kernel's write promote level is two above the read level). So a streaming read touches
//!   each region within one period and stays uncached, while regions read again in later
//!   periods are promoted.
//! - **Demotion.** Cached blocks are kept in LRU order per set (a hit requeues a block); the
//!   least recently used block is demoted.
//!
//! Not modelled: the kernel's 64-level queues with periodic redistribution, the adaptive
//! promote level (it follows the hit ratio in the kernel), its sentinels and writeback
//! scheduling (dirty blocks here are written when evicted, as the write policy says).

use super::Policy;
use crate::cache::Geometry;
use crate::list::{Lists, NIL};
use crate::map::IdMap;
use crate::Request;

/// The highest hotspot level.
const MAX_LEVEL: u8 = 63;

/// The smq model.
pub struct Smq {
    ways: u32,
    region: u64,
    promote: u8,
    period: u64,
    /// Per set: requests seen.
    clock: Vec<u64>,
    /// Per set: blocks cached.
    len: Vec<u32>,
    lists: Lists,
    /// Hotspot regions: per set an LRU list over its `hot_cap` entries, a map from
    /// (region, set) to entry.
    hot_cap: u32,
    hot: Lists,
    hot_map: IdMap,
    hot_key: Vec<u64>,
    hot_level: Vec<u8>,
    hot_period: Vec<u64>,
    hot_used: Vec<u32>,
    sets: u64,
}

impl Smq {
    /// For a cache of shape `g`.
    pub fn new(g: Geometry, region: u64, promote: u8, period: u64) -> Smq {
        let sets = g.sets as usize;
        let hot_cap = (g.ways / 4).max(16);
        let regions = sets * hot_cap as usize;
        Smq {
            ways: g.ways,
            region: region.max(1),
            promote: promote.min(MAX_LEVEL),
            period: period.max(1),
            clock: vec![0; sets],
            len: vec![0; sets],
            lists: Lists::new(sets, g.blocks as usize),
            hot_cap,
            hot: Lists::new(sets, regions),
            hot_map: IdMap::with_capacity(regions),
            hot_key: vec![0; regions],
            hot_level: vec![0; regions],
            hot_period: vec![0; regions],
            hot_used: vec![0; sets],
            sets: u64::from(g.sets),
        }
    }

    /// Touches the region of `id` in `set`; its level now.
    #[inline(always)]
    fn touch(&mut self, set: usize, id: u64) -> u8 {
        let period = self.clock[set] / self.period;
        self.clock[set] += 1;
        let key = (id / self.region)
            .wrapping_mul(self.sets)
            .wrapping_add(set as u64);
        if let Some(e) = self.hot_map.get(key) {
            let i = e as usize;
            if self.hot_period[i] != period {
                self.hot_period[i] = period;
                self.hot_level[i] = (self.hot_level[i] + 1).min(MAX_LEVEL);
            }
            self.hot.move_to_front(set, e);
            return self.hot_level[i];
        }
        let e = if self.hot_used[set] < self.hot_cap {
            self.hot_used[set] += 1;
            set as u32 * self.hot_cap + self.hot_used[set] - 1
        } else {
            let old = self.hot.pop_back(set);
            debug_assert!(old != NIL);
            self.hot_map.remove(self.hot_key[old as usize]);
            old
        };
        let i = e as usize;
        self.hot_key[i] = key;
        self.hot_level[i] = 1;
        self.hot_period[i] = period;
        self.hot_map.insert(key, e);
        self.hot.push_front(set, e);
        1
    }
}

impl Policy for Smq {
    #[inline(always)]
    fn hit(&mut self, set: usize, slot: u32, req: &Request) {
        self.touch(set, req.id);
        self.lists.move_to_front(set, slot);
    }

    #[inline(always)]
    fn admit(&mut self, set: usize, req: &Request, _: Option<u32>) -> bool {
        let level = self.touch(set, req.id);
        let free = self.len[set] < self.ways;
        match req.op {
            crate::Op::Read => level >= if free { 1 } else { self.promote },
            crate::Op::Write => free || level >= self.promote.saturating_add(2),
        }
    }

    #[inline(always)]
    fn evict(&mut self, set: usize, _: &Request, _: &[u64], _: &mut IdMap) -> u32 {
        self.len[set] -= 1;
        self.lists.pop_back(set)
    }

    #[inline(always)]
    fn insert(&mut self, set: usize, slot: u32, _: &Request) {
        self.len[set] += 1;
        self.lists.push_front(set, slot);
    }

    fn remove(&mut self, set: usize, slot: u32) {
        self.len[set] -= 1;
        self.lists.unlink(set, slot);
    }

    fn metadata_bytes(&self) -> usize {
        self.lists.bytes()
            + 16 * self.len.len()
            + self.hot.bytes()
            + self.hot_map.bytes()
            + 17 * self.hot_key.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::probe::{cache, full, run};
    use crate::Simulator;

    #[test]
    fn fills_eagerly_then_promotes_only_regions_seen_in_two_periods() {
        // 4 blocks, regions of 1 block, promote at level 2, periods of 4 requests.
        let mut c = cache(full(4), Smq::new(full(4), 1, 2, 4));
        // Period 0: 1 2 3 4 fill the free cache.
        assert_eq!(run(&mut c, &[1, 2, 3, 4]), "mmmm");
        // Period 1: 5 6 are new (level 1) → not promoted; 5 again in the same period stays
        // at level 1 → still not promoted.
        assert_eq!(run(&mut c, &[5, 6, 5, 1]), "mmmh");
        assert_eq!(c.stats().bypasses, 3);
        // Period 2: 5 reaches level 2 → promoted, evicting the LRU block (2).
        assert_eq!(run(&mut c, &[5, 5, 2, 1]), "mhmh");
        assert_eq!(c.stats().promotions, 6);
    }

    #[test]
    fn a_streaming_scan_leaves_a_full_cache_alone() {
        let mut c = cache(full(8), Smq::new(full(8), 16, 2, 1024));
        let hot: Vec<u64> = (0..8).collect();
        run(&mut c, &hot);
        let scan: Vec<u64> = (1000..1400).collect();
        run(&mut c, &scan);
        assert_eq!(run(&mut c, &hot), "h".repeat(8));
    }
}
