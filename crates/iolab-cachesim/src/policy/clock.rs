//! CLOCK with a saturating counter per block: a generalized second-chance FIFO.
//!
//! Parameters: maximum count `m`, start value `s`, increment `i`. A block enters with
//! count `s`; each hit adds `i`, saturating at `m`. A set's slots form a ring with a hand at
//! the oldest block; to evict, the hand looks at its block: a count above 0 is decreased by
//! 1 and the hand moves on (the block gets another round), a count of 0 makes the block the
//! victim. The new block takes the victim's slot and the hand moves past it, so it is the
//! youngest.
//!
//! `m = 1, s = 0, i = 1` (the defaults) is the classic one-bit CLOCK, the same as
//! libCacheSim's `Clock`; `m = 2^n - 1` with `s = 0, i = 1` is its `n-bit-counter` variant.
//! With `i = 1` frequent blocks survive longer (LFU-like); with `i = m` every hit restores
//! full protection (LRU-like).

use super::{ParamError, Params, Policy};
use crate::cache::Geometry;
use crate::map::IdMap;
use crate::Request;

/// Counter CLOCK.
pub struct Clock {
    ways: u32,
    max: u8,
    start: u8,
    inc: u8,
    /// Per slot: the counter.
    count: Vec<u8>,
    /// Per set: the way under the hand.
    hand: Vec<u32>,
}

impl Clock {
    /// For a cache of shape `g` with the parameters `m`, `s`, `i`.
    pub fn new(g: Geometry, p: &Params) -> Result<Clock, ParamError> {
        let (m, s, i) = (p.get("m"), p.get("s"), p.get("i"));
        if s > m {
            return Err(ParamError::Invalid {
                name: "s".into(),
                value: s,
                why: format!("the start value cannot exceed the maximum count m = {m}"),
            });
        }
        Ok(Clock {
            ways: g.ways,
            max: m as u8,
            start: s as u8,
            inc: i as u8,
            count: vec![0; g.blocks as usize],
            hand: vec![0; g.sets as usize],
        })
    }
}

impl Policy for Clock {
    #[inline(always)]
    fn hit(&mut self, _: usize, slot: u32, _: &Request) {
        let c = &mut self.count[slot as usize];
        *c = c.saturating_add(self.inc).min(self.max);
    }

    #[inline(always)]
    fn evict(&mut self, set: usize, _: &Request, _: &[u64], _: &mut IdMap) -> u32 {
        let first = set as u32 * self.ways;
        let mut h = self.hand[set];
        loop {
            let slot = first + h;
            h = if h + 1 == self.ways { 0 } else { h + 1 };
            let c = &mut self.count[slot as usize];
            if *c == 0 {
                self.hand[set] = h;
                return slot;
            }
            *c -= 1;
        }
    }

    #[inline(always)]
    fn insert(&mut self, _: usize, slot: u32, _: &Request) {
        self.count[slot as usize] = self.start;
    }

    fn remove(&mut self, _: usize, slot: u32) {
        self.count[slot as usize] = 0;
    }

    fn metadata_bytes(&self) -> usize {
        self.count.len() + 4 * self.hand.len()
    }
}

#[cfg(test)]
mod tests {
    use crate::testutil::{config, reads};
    use crate::{simulate, CacheConfig};

    fn with(m: f64, s: f64, i: f64) -> CacheConfig {
        let mut c = config("clock", 3, None);
        c.params = vec![("m".into(), m), ("s".into(), s), ("i".into(), i)];
        c
    }

    #[test]
    fn one_bit_clock_hand_computed() {
        // 3 blocks, trace 1 2 3 1 4 5:
        // 1 2 3 miss (ring 1 2 3, hand at 1); 1 hit → bit 1.
        // 4: hand at 1 (bit 1) → clear, on to 2 (bit 0) → evict 2, ring 1 4 3, hand at 3.
        // 5: 3 has bit 0 → evicted. 1 is still cached: the final 1 hits.
        let t = reads(&[1, 2, 3, 1, 4, 5, 1, 2]);
        let s = simulate(&with(1.0, 0.0, 1.0), &t).unwrap();
        // misses: 1 2 3 4 5 2 = 6
        assert_eq!(s.misses(), 6);
        let plain = simulate(&config("clock", 3, None), &t).unwrap();
        assert_eq!(plain, s, "defaults are the one-bit CLOCK");
    }

    #[test]
    fn counter_clock_hand_computed() {
        // m = 2, s = 1, i = 2, 2 blocks. Trace 1 2 1 3 2 1:
        // 1 m (c=1), 2 m (c=1), 1 h (c=min(3,2)=2).
        // 3: hand at 1 (2→1), 2 (1→0), 1 (1→0), 2 (0) → evict 2; ring 1 3 (c3=1), hand at 1.
        // 2: hand at 1 (0) → evict 1; ring 2 3, hand at 3. 1: hand at 3 (1→0), 2 (1→0),
        // 3 (0) → evict 3. Misses: 1 2 3 2 1 = 5.
        let t = reads(&[1, 2, 1, 3, 2, 1]);
        let mut c = with(2.0, 1.0, 2.0);
        c.size = 2 * 4096;
        assert_eq!(simulate(&c, &t).unwrap().misses(), 5);
    }

    #[test]
    fn start_above_max_is_refused() {
        assert!(with(4.0, 5.0, 1.0).build().is_err());
    }
}
