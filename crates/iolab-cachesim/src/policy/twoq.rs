//! 2Q (Johnson & Shasha, VLDB'94, the full version): new blocks enter a FIFO `A1in`;
//! blocks pushed out of `A1in` leave their id in a FIFO ghost `A1out`; a miss that finds
//! its id in `A1out` enters the LRU `Am`. Hits in `A1in` change nothing.
//!
//! Sizes and order of operations are libCacheSim's (`TwoQ`, defaults Ain 25 %, Aout 50 %),
//! per set of `w` ways: `kin = ⌊w·ain⌋`, `kout = ⌊w·aout⌋`. When a miss finds the set full,
//! `A1in`'s oldest block is evicted (its id entering `A1out`, which first forgets its oldest
//! id when it holds `kout`) if `A1in` holds more than `kin` blocks, otherwise `Am`'s LRU
//! block. While the set fills, every new block enters `A1in`, which may exceed `kin`.
//! Differences for tiny sets only: libCacheSim caches nothing when `kin = 0` (fewer than
//! 4 blocks); iolab keeps at least one block in `A1in` there, and with one way a returning
//! block re-enters `A1in`.

use super::ghost::Ghosts;
use super::queues::TwoQueues;
use super::Policy;
use crate::cache::Geometry;
use crate::map::IdMap;
use crate::Request;

const AIN: usize = 0;
const AM: usize = 1;

/// 2Q, one instance per set.
pub struct TwoQ {
    kin: u32,
    kout: usize,
    am_cap: u32,
    /// A1in and Am of every set.
    q: TwoQueues,
    aout: Ghosts,
    ghost_hit: bool,
}

impl TwoQ {
    /// For a cache of shape `g`; `ain` and `aout` are the shares of a set.
    pub fn new(g: Geometry, ain: f64, aout: f64) -> TwoQ {
        let w = g.ways as usize;
        let sets = g.sets as usize;
        let kin = ((w as f64 * ain) as usize).clamp(1, w);
        let kout = (w as f64 * aout) as usize;
        TwoQ {
            kin: kin as u32,
            kout,
            am_cap: (w - kin) as u32,
            q: TwoQueues::new(sets, g.blocks as usize),
            aout: Ghosts::new(sets, 1, kout * sets, g.blocks),
            ghost_hit: false,
        }
    }
}

impl Policy for TwoQ {
    const GHOSTS_IN_MAP: bool = true;

    fn ghost_capacity(&self) -> usize {
        self.aout.capacity()
    }

    #[inline(always)]
    fn hit(&mut self, set: usize, slot: u32, _: &Request) {
        if self.q.which(slot) == AM {
            self.q.requeue(set, slot);
        }
    }

    #[inline(always)]
    fn admit(&mut self, _: usize, _: &Request, ghost: Option<u32>) -> bool {
        self.ghost_hit = ghost.map(|g| self.aout.take(g)).is_some() && self.am_cap > 0;
        true
    }

    #[inline(always)]
    fn evict(&mut self, set: usize, _: &Request, ids: &[u64], map: &mut IdMap) -> u32 {
        let [ain, am] = self.q.lens(set);
        if ain > self.kin || am == 0 {
            let slot = self.q.pop(set, AIN);
            if self.kout > 0 {
                while self.aout.len(set, 0) >= self.kout {
                    self.aout.drop_back(set, 0, map);
                }
                self.aout.push(set, 0, ids[slot as usize], map);
            } else {
                map.remove(ids[slot as usize]);
            }
            slot
        } else {
            let slot = self.q.pop(set, AM);
            map.remove(ids[slot as usize]);
            slot
        }
    }

    #[inline(always)]
    fn insert(&mut self, set: usize, slot: u32, _: &Request) {
        let list = if self.ghost_hit { AM } else { AIN };
        self.ghost_hit = false;
        self.q.push(set, list, slot);
    }

    fn remove(&mut self, set: usize, slot: u32) {
        self.q.remove(set, slot);
    }

    fn metadata_bytes(&self) -> usize {
        self.q.bytes() + self.aout.bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::probe::{cache, full, run};

    #[test]
    fn sizes_follow_libcachesim_defaults() {
        let q = TwoQ::new(full(10), 0.25, 0.5);
        assert_eq!((q.kin, q.kout, q.am_cap), (2, 5, 8));
    }

    #[test]
    fn a_block_returns_through_a1out_into_am() {
        // c = 4: kin = 1, kout = 2.
        let mut c = cache(full(4), TwoQ::new(full(4), 0.25, 0.5));
        // 1..4 fill A1in (beyond kin while the set has room).
        assert_eq!(run(&mut c, &[1, 2, 3, 4]), "mmmm");
        // 5: full, |A1in| = 4 > 1 → 1 is evicted into A1out.
        assert_eq!(run(&mut c, &[5]), "m");
        assert_eq!(c.policy().aout.ids(0, 0), [1]);
        // 2 hits A1in: nothing moves (2 stays the oldest after 1 left).
        assert_eq!(run(&mut c, &[2]), "h");
        // 1 hits A1out: A1in's oldest (2) goes to A1out, 1 enters Am.
        assert_eq!(run(&mut c, &[1]), "m");
        assert_eq!(c.policy().aout.ids(0, 0), [2]);
        assert_eq!(c.policy().q.lens(0), [3, 1]);
        assert_eq!(run(&mut c, &[1]), "h");
        // 6, 7, 8: A1in's oldest (3, 4, 5) go to A1out, which keeps 2 ids.
        assert_eq!(run(&mut c, &[6, 7, 8]), "mmm");
        assert_eq!(c.policy().aout.ids(0, 0), [5, 4]);
        // 4 hits A1out → 6 goes to A1out, 4 enters Am.
        assert_eq!(run(&mut c, &[4]), "m");
        assert_eq!(c.policy().aout.ids(0, 0), [6, 5]);
        assert_eq!(c.policy().q.lens(0), [2, 2]);
        // 9: |A1in| = 2 > 1 → 7 out (5 forgotten); 1 and 4 still hit in Am.
        assert_eq!(run(&mut c, &[9, 1, 4]), "mhh");
        assert_eq!(c.policy().aout.ids(0, 0), [7, 6]);
        // 10 11: A1in's oldest go (8, 9); 12: |A1in| = 2 → 10 goes. Am is never touched
        // while A1in holds more than kin.
        assert_eq!(run(&mut c, &[10, 11, 12, 1, 4]), "mmmhh");
    }

    #[test]
    fn am_evicts_its_lru_when_a1in_is_at_kin() {
        // c = 4 with Ain 50 %: kin = 2. Fill 1 2 3 4; 5 → 1 out; 6 → 2 out; 1 → 3 out, 1 in
        // Am; 2 → 4 out, 2 in Am: A1in = [6, 5] (= kin), Am = [2, 1].
        let mut c = cache(full(4), TwoQ::new(full(4), 0.5, 0.5));
        assert_eq!(run(&mut c, &[1, 2, 3, 4, 5, 6, 1, 2]), "mmmmmmmm");
        assert_eq!(c.policy().q.lens(0), [2, 2]);
        // 7: |A1in| = 2 = kin → Am's LRU (1) is evicted (no ghost); 7 enters A1in.
        assert_eq!(run(&mut c, &[7, 2, 1]), "mhm");
    }
}
