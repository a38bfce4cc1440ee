//! ARC (Megiddo & Modha, FAST'03): two resident LRU lists T1 (seen once) and T2 (seen
//! at least twice) plus two ghost lists B1 and B2 of the ids evicted from them, and an
//! adaptive target `p` for the size of T1.
//!
//! The semantics are libCacheSim's (so miss counts match it block for block):
//! - the ghost lists are trimmed only when the cache is full and a miss must evict
//!   (case IV of the paper: when |T1| + |B1| reaches the capacity, the LRU ghost of B1 goes,
//!   or — with B1 empty — the LRU block of T1 goes without leaving a ghost; otherwise, when
//!   all four lists hold 2c entries, the LRU ghost of B2 goes);
//! - a ghost hit adapts `p` by max(|B2|/|B1|, 1) (B1) or max(|B1|/|B2|, 1) (B2), computed in
//!   floating point before the ghost is removed, and the block is inserted at the MRU end of T2;
//! - REPLACE evicts the LRU block of T1 into B1 when T1 is not empty and (|T1| > p, or |T1| = p
//!   and the request hit B2), or when T2 is empty; otherwise the LRU block of T2 into B2.

use super::ghost::Ghosts;
use super::queues::TwoQueues;
use super::Policy;
use crate::cache::Geometry;
use crate::map::IdMap;
use crate::Request;

const T1: usize = 0;
const T2: usize = 1;
const B1: usize = 0;
const B2: usize = 1;

/// Where the current miss was found among the ghosts.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Found {
    Nowhere,
    B1,
    B2,
}

/// Adaptive replacement cache, one instance of the algorithm per set.
pub struct Arc {
    cap: usize,
    /// Per set: the target size of T1.
    p: Vec<f64>,
    /// T1 and T2 of every set over the cache's slots.
    q: TwoQueues,
    ghosts: Ghosts,
    found: Found,
    /// The id in each slot (tests look inside).
    #[cfg(test)]
    keys: Vec<u64>,
}

impl Arc {
    /// For a cache of shape `g`.
    pub fn new(g: Geometry) -> Arc {
        let sets = g.sets as usize;
        Arc {
            cap: g.ways as usize,
            p: vec![0.0; sets],
            q: TwoQueues::new(sets, g.blocks as usize),
            // |B1| + |B2| never exceeds the ways of a set.
            ghosts: Ghosts::new(sets, 2, g.blocks as usize, g.blocks),
            found: Found::Nowhere,
            #[cfg(test)]
            keys: vec![0; g.blocks as usize],
        }
    }

    /// The target size of T1 in `set`.
    pub fn target(&self, set: usize) -> f64 {
        self.p[set]
    }

    /// REPLACE: the LRU block of T1 or T2 becomes a ghost in B1 or B2.
    #[inline(always)]
    fn replace(&mut self, set: usize, ids: &[u64], map: &mut IdMap) -> u32 {
        let [t1, t2] = self.q.lens(set);
        let t1f = f64::from(t1);
        let p = self.p[set];
        let from_t1 = (t1 > 0 && (t1f > p || (t1f == p && self.found == Found::B2))) || t2 == 0;
        let (list, ghost) = if from_t1 { (T1, B1) } else { (T2, B2) };
        let slot = self.q.pop(set, list);
        self.ghosts.push(set, ghost, ids[slot as usize], map);
        slot
    }
}

impl Policy for Arc {
    const GHOSTS_IN_MAP: bool = true;
    const PREFETCH: bool = true;

    #[inline(always)]
    fn prefetch(&self, _: usize, slot: u32) {
        self.q.prefetch(slot);
    }

    fn ghost_capacity(&self) -> usize {
        self.ghosts.capacity()
    }

    #[inline(always)]
    fn hit(&mut self, set: usize, slot: u32, _: &Request) {
        if self.q.which(slot) == T1 {
            self.q.move_to(set, slot, T2);
        } else {
            self.q.requeue(set, slot);
        }
    }

    #[inline(always)]
    fn admit(&mut self, set: usize, _: &Request, ghost: Option<u32>) -> bool {
        self.found = match ghost.map(|g| self.ghosts.take(g)) {
            None => Found::Nowhere,
            Some(B1) => {
                // The ratio of the ghost lists before this ghost left B1.
                let b1 = (self.ghosts.len(set, B1) + 1) as f64;
                let delta = (self.ghosts.len(set, B2) as f64 / b1).max(1.0);
                self.p[set] = (self.p[set] + delta).min(self.cap as f64);
                Found::B1
            }
            Some(_) => {
                let b2 = (self.ghosts.len(set, B2) + 1) as f64;
                let delta = (self.ghosts.len(set, B1) as f64 / b2).max(1.0);
                self.p[set] = (self.p[set] - delta).max(0.0);
                Found::B2
            }
        };
        true
    }

    #[inline(always)]
    fn evict(&mut self, set: usize, _: &Request, ids: &[u64], map: &mut IdMap) -> u32 {
        if self.found != Found::Nowhere {
            return self.replace(set, ids, map);
        }
        // Case IV of the paper, trimming the ghosts only now that the set is full.
        let [t1, t2] = self.q.lens(set).map(|n| n as usize);
        let b1 = self.ghosts.len(set, B1);
        let b2 = self.ghosts.len(set, B2);
        if t1 + b1 + 1 > self.cap {
            if b1 > 0 {
                self.ghosts.drop_back(set, B1, map);
                self.replace(set, ids, map)
            } else {
                let slot = self.q.pop(set, T1);
                map.remove(ids[slot as usize]);
                slot
            }
        } else {
            if t1 + b1 + t2 + b2 >= 2 * self.cap && b2 > 0 {
                self.ghosts.drop_back(set, B2, map);
            }
            self.replace(set, ids, map)
        }
    }

    #[inline(always)]
    fn insert(&mut self, set: usize, slot: u32, _req: &Request) {
        #[cfg(test)]
        {
            self.keys[slot as usize] = _req.id;
        }
        let list = if self.found == Found::Nowhere { T1 } else { T2 };
        self.found = Found::Nowhere;
        self.q.push(set, list, slot);
    }

    fn remove(&mut self, set: usize, slot: u32) {
        self.q.remove(set, slot);
    }

    fn metadata_bytes(&self) -> usize {
        self.q.bytes() + 8 * self.p.len() + self.ghosts.bytes()
    }

    #[inline(always)]
    fn prefetch_victims(&self, set: usize, ids: &[u64], map: &IdMap) {
        // REPLACE turns the back of T1 or T2 into a ghost; case IV drops the back of B1 or
        // B2.
        self.q.prefetch_back(set, T1, ids, map);
        self.q.prefetch_back(set, T2, ids, map);
        self.ghosts.prefetch_back(set, B1, map);
        self.ghosts.prefetch_back(set, B2, map);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::Cache;
    use crate::policy::probe::{self, run};
    use crate::testutil::{misses, reads};

    fn cache(blocks: u32) -> Cache<Arc> {
        probe::cache(probe::full(blocks), Arc::new(probe::full(blocks)))
    }

    /// The ids of resident list `list`, most recent first.
    fn ids(c: &Cache<Arc>, list: usize) -> Vec<u64> {
        let a = c.policy();
        a.q.slots(0, list)
            .iter()
            .map(|&n| a.keys[n as usize])
            .collect()
    }

    #[test]
    fn second_hit_promotes_to_t2_and_a_miss_demotes_t1_into_b1() {
        // c = 2: 1 1 → T2 = [1]; 2 → T1 = [2]; 3 → full, |T1| + |B1| + 1 = 2 ≤ 2 → REPLACE:
        // |T1| = 1 > p = 0 → 2 becomes a ghost in B1.
        let mut c = cache(2);
        assert_eq!(run(&mut c, &[1, 1, 2, 3]), "mhmm");
        assert_eq!(ids(&c, T1), [3]);
        assert_eq!(ids(&c, T2), [1]);
        assert_eq!(c.policy().ghosts.ids(0, B1), [2]);
        assert_eq!(c.policy().target(0), 0.0);
    }

    #[test]
    fn ghost_hits_adapt_p_and_enter_t2() {
        let mut c = cache(2);
        run(&mut c, &[1, 1, 2, 3]);
        // 2 hits B1: p = min(0 + max(0/1, 1), 2) = 1; REPLACE: |T1| = 1 = p, but the ghost
        // was in B1 → T2's LRU (1) goes to B2; 2 enters T2.
        assert_eq!(run(&mut c, &[2]), "m");
        assert_eq!(c.policy().target(0), 1.0);
        assert_eq!(ids(&c, T1), [3]);
        assert_eq!(ids(&c, T2), [2]);
        assert_eq!(c.policy().ghosts.ids(0, B2), [1]);
        // 1 hits B2: p = max(1 - max(0/1, 1), 0) = 0; REPLACE: |T1| = 1 > 0 → 3 to B1.
        assert_eq!(run(&mut c, &[1]), "m");
        assert_eq!(c.policy().target(0), 0.0);
        assert_eq!(ids(&c, T2), [1, 2]);
        assert_eq!(c.policy().ghosts.ids(0, B1), [3]);
        assert!(c.policy().ghosts.ids(0, B2).is_empty());
    }

    #[test]
    fn a_scan_drops_t1_without_ghosts() {
        // c = 2: from the 3rd miss on |T1| + |B1| = 2 with B1 empty → T1's LRU goes
        // without a ghost, so a scan never fills B1 (as in the paper's case IV).
        let mut c = cache(2);
        assert_eq!(run(&mut c, &[1, 2, 3, 4, 1, 2]), "mmmmmm");
        assert_eq!(ids(&c, T1), [2, 1]);
        assert!(c.policy().ghosts.ids(0, B1).is_empty());
    }

    #[test]
    fn sets_run_separate_arcs() {
        // 4 blocks in 2 sets of 2: even ids in set 0, odd in set 1; each set behaves as the
        // 2-block cache above.
        let t = reads(&[2, 3, 2, 5, 4, 7, 6, 9, 4]);
        assert_eq!(misses("arc", 4, Some(2), &t), 8);
        let one = reads(&[2, 2, 4, 6, 4]);
        assert_eq!(misses("arc", 2, None, &one), 4);
    }
}
