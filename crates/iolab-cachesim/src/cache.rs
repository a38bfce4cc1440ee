//! The simulated cache: sets of slots, the id→slot map, write policies and counters.
//!
//! A cache of `blocks` blocks with `ways` ways has `sets = blocks / ways` sets. Set `s` owns
//! the slots `s * ways .. (s + 1) * ways`; a block with id `b` lives in set `b mod sets`
//! (the low bits of the block number, as in hardware caches: consecutive blocks fall into
//! consecutive sets). One policy instance serves all sets through flat arrays indexed by
//! slot and by set, so direct-mapped caches (one way, many sets) cost no more per block
//! than fully associative ones (one set).

use serde::Serialize;

use crate::map::IdMap;
use crate::policy::Policy;
use crate::{Op, Request};

/// No slot.
const NIL: u32 = u32::MAX;

/// What a write does (reads always fill the cache on a miss, if the policy admits the block).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum WritePolicy {
    /// Writes go to the cache (allocating on a miss) and to the origin.
    WriteThrough,
    /// Writes go to the cache only (allocating on a miss) and mark the block dirty; a dirty
    /// block is written to the origin when it is evicted.
    WriteBack,
    /// Writes go to the origin only and invalidate a cached copy.
    WriteAround,
}

impl WritePolicy {
    /// Every write policy, with the names the CLI and experiment files use.
    pub const ALL: &'static [(&'static str, WritePolicy)] = &[
        ("write-through", WritePolicy::WriteThrough),
        ("write-back", WritePolicy::WriteBack),
        ("write-around", WritePolicy::WriteAround),
    ];

    /// Its name: `write-back`.
    pub fn name(self) -> &'static str {
        WritePolicy::ALL
            .iter()
            .find(|(_, w)| *w == self)
            .map_or("", |(n, _)| n)
    }

    /// The write policy called `name`.
    pub fn from_name(name: &str) -> Option<WritePolicy> {
        WritePolicy::ALL
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, w)| *w)
    }
}

/// The shape of a validated cache (see [`crate::CacheConfig::validate`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Geometry {
    /// Blocks in the cache.
    pub blocks: u32,
    /// Blocks per set (`blocks` for a fully associative cache, 1 for direct-mapped).
    pub ways: u32,
    /// `blocks / ways`.
    pub sets: u32,
    /// Bytes per block.
    pub block_size: u32,
}

impl Geometry {
    /// The first slot of `set`.
    #[inline(always)]
    pub fn first_slot(&self, set: usize) -> u32 {
        set as u32 * self.ways
    }
}

/// Everything a policy's constructor is given.
#[derive(Debug, Clone, Copy)]
pub struct Setup {
    /// The cache's shape.
    pub geometry: Geometry,
    /// What writes do.
    pub write: WritePolicy,
}

/// Operations and bytes one device saw, by direction and access pattern.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Traffic {
    /// Requests: `[read, write][random, sequential]`.
    pub ops: [[u64; 2]; 2],
    /// Bytes: `[read, write][random, sequential]`.
    pub bytes: [[u64; 2]; 2],
}

impl Traffic {
    #[inline(always)]
    fn add(&mut self, op: usize, seq: usize, bytes: u64) {
        self.ops[op][seq] += 1;
        self.bytes[op][seq] += bytes;
    }

    /// Bytes read.
    pub fn read_bytes(&self) -> u64 {
        self.bytes[0][0] + self.bytes[0][1]
    }

    /// Bytes written.
    pub fn write_bytes(&self) -> u64 {
        self.bytes[1][0] + self.bytes[1][1]
    }

    /// This traffic without `part` (a part of it).
    pub fn without(&self, part: &Traffic) -> Traffic {
        let mut t = *self;
        for op in 0..2 {
            for pat in 0..2 {
                t.ops[op][pat] = t.ops[op][pat].saturating_sub(part.ops[op][pat]);
                t.bytes[op][pat] = t.bytes[op][pat].saturating_sub(part.bytes[op][pat]);
            }
        }
        t
    }
}

/// The counters of one simulation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Stats {
    /// Read requests.
    pub reads: u64,
    /// Write requests.
    pub writes: u64,
    /// Bytes the requests asked for.
    pub bytes: u64,
    /// Reads that found their block cached.
    pub read_hits: u64,
    /// Writes that found their block cached.
    pub write_hits: u64,
    /// Blocks put into the cache.
    pub promotions: u64,
    /// Blocks evicted to make room.
    pub demotions: u64,
    /// Evicted blocks that were dirty (written to the origin on eviction; write-back only).
    pub dirty_evictions: u64,
    /// Bytes those dirty evictions wrote back (each block's last write).
    pub writeback_bytes: u64,
    /// Cached blocks dropped because a write bypassed them (write-around only).
    pub invalidations: u64,
    /// Blocks the policy declined to cache on a miss.
    pub bypasses: u64,
    /// Requests to the cache device.
    pub cache: Traffic,
    /// Requests to the origin device.
    pub origin: Traffic,
}

impl Stats {
    /// Reads that missed.
    pub fn read_misses(&self) -> u64 {
        self.reads - self.read_hits
    }

    /// Writes that missed.
    pub fn write_misses(&self) -> u64 {
        self.writes - self.write_hits
    }

    /// All requests.
    pub fn requests(&self) -> u64 {
        self.reads + self.writes
    }

    /// All misses.
    pub fn misses(&self) -> u64 {
        self.read_misses() + self.write_misses()
    }

    /// Misses per request (0 for an empty trace).
    pub fn miss_ratio(&self) -> f64 {
        ratio(self.misses(), self.requests())
    }

    /// Read hits per read.
    pub fn read_hit_ratio(&self) -> f64 {
        ratio(self.read_hits, self.reads)
    }

    /// Write hits per write.
    pub fn write_hit_ratio(&self) -> f64 {
        ratio(self.write_hits, self.writes)
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// A cache simulation with its policy chosen at run time: what the registry builds.
pub trait Simulator: Send {
    /// Feeds the next requests of the trace (in order; call any number of times).
    fn run(&mut self, requests: &[Request]);
    /// The counters so far.
    fn stats(&self) -> Stats;
    /// The cache's shape.
    fn geometry(&self) -> Geometry;
    /// Estimated bytes of metadata a real cache of this shape and policy keeps: the
    /// simulator's own per-block and per-set arrays (a conservative stand-in).
    fn metadata_bytes(&self) -> u64;
    /// Whether the policy reads [`Request::next`].
    fn needs_future(&self) -> bool;
}

/// A cache driven by policy `P`; the request loop is compiled once per policy.
pub struct Cache<P> {
    geo: Geometry,
    write: WritePolicy,
    /// `sets - 1` when `sets` is a power of two.
    set_mask: Option<u64>,
    map: IdMap,
    /// The block id in each slot.
    ids: Vec<u64>,
    /// Dirty flag per slot (write-back).
    dirty: Vec<bool>,
    /// Per slot: the bytes of the last write to its block, which a dirty eviction writes back
    /// (write-back). Traffic accounting only, not in the metadata estimate: a block cache's
    /// blocks all have the block size.
    dirty_bytes: Vec<u32>,
    /// Per set: ways never used yet start at `fill[set]`.
    fill: Vec<u32>,
    /// Per set: the first slot freed by an invalidation, linked through `free_next`.
    free_head: Vec<u32>,
    free_next: Vec<u32>,
    /// The previous request's block id (sequential detection).
    last_id: u64,
    stats: Stats,
    policy: P,
}

impl<P: Policy> Cache<P> {
    /// An empty cache.
    pub fn new(setup: Setup, policy: P) -> Cache<P> {
        let g = setup.geometry;
        let n = g.blocks as usize;
        let s = g.sets as usize;
        let invalidates = setup.write == WritePolicy::WriteAround;
        Cache {
            geo: g,
            write: setup.write,
            set_mask: g.sets.is_power_of_two().then(|| u64::from(g.sets) - 1),
            map: IdMap::with_capacity(n + policy.ghost_capacity()),
            ids: crate::mem::filled(n, 0),
            dirty: if setup.write == WritePolicy::WriteBack {
                vec![false; n]
            } else {
                Vec::new()
            },
            dirty_bytes: if setup.write == WritePolicy::WriteBack {
                vec![0; n]
            } else {
                Vec::new()
            },
            fill: vec![0; s],
            free_head: if invalidates {
                vec![NIL; s]
            } else {
                Vec::new()
            },
            free_next: if invalidates {
                vec![NIL; n]
            } else {
                Vec::new()
            },
            last_id: u64::MAX - 1,
            stats: Stats::default(),
            policy,
        }
    }

    /// The policy (for tests that look inside).
    pub fn policy(&self) -> &P {
        &self.policy
    }

    #[inline(always)]
    fn set_of(&self, id: u64) -> usize {
        match self.set_mask {
            Some(m) => (id & m) as usize,
            None => (id % u64::from(self.geo.sets)) as usize,
        }
    }

    /// Whether the map value `v` is a slot (not a ghost of the policy).
    #[inline(always)]
    fn is_slot(&self, v: u32) -> bool {
        !P::GHOSTS_IN_MAP || v < self.geo.blocks
    }

    /// The slot of `id`, or `Err` with its ghost entry's value when the policy remembers it.
    #[inline(always)]
    fn lookup(&self, id: u64) -> Result<u32, Option<u32>> {
        match self.map.get(id) {
            Some(v) if self.is_slot(v) => Ok(v),
            other => Err(other),
        }
    }

    /// Whether `id` is cached.
    pub fn contains(&self, id: u64) -> bool {
        self.lookup(id).is_ok()
    }

    /// Processes one request.
    ///
    /// Traffic counts the bytes of the request as the trace gives them, on every device and
    /// whether it hits or misses: a block of a block trace (the block size), an object of an
    /// object trace (its size, whatever the block size; with `--block-size 1` a block is one
    /// object). A dirty eviction moves what the evicted block's last write wrote.
    #[inline]
    pub fn access(&mut self, r: &Request) {
        let set = self.set_of(r.id);
        let seq = usize::from(r.id == self.last_id.wrapping_add(1) || r.id == self.last_id);
        self.last_id = r.id;
        let size = u64::from(r.size);
        self.stats.bytes += size;
        match r.op {
            Op::Read => {
                self.stats.reads += 1;
                match self.lookup(r.id) {
                    Ok(slot) => {
                        self.stats.read_hits += 1;
                        self.stats.cache.add(0, seq, size);
                        self.policy.hit(set, slot, r);
                    }
                    Err(ghost) => {
                        self.stats.origin.add(0, seq, size);
                        if self.place(set, r, false, ghost) {
                            self.stats.cache.add(1, seq, size);
                        }
                    }
                }
            }
            Op::Write => {
                self.stats.writes += 1;
                match (self.lookup(r.id), self.write) {
                    (Ok(slot), WritePolicy::WriteAround) => {
                        self.stats.write_hits += 1;
                        self.stats.invalidations += 1;
                        self.stats.origin.add(1, seq, size);
                        self.policy.remove(set, slot);
                        self.map.remove(r.id);
                        self.free_next[slot as usize] = self.free_head[set];
                        self.free_head[set] = slot;
                    }
                    (Err(_), WritePolicy::WriteAround) => {
                        self.stats.origin.add(1, seq, size);
                    }
                    (Ok(slot), w) => {
                        self.stats.write_hits += 1;
                        self.stats.cache.add(1, seq, size);
                        if w == WritePolicy::WriteBack {
                            self.dirty[slot as usize] = true;
                            self.dirty_bytes[slot as usize] = r.size;
                        } else {
                            self.stats.origin.add(1, seq, size);
                        }
                        self.policy.hit(set, slot, r);
                    }
                    (Err(ghost), w) => {
                        let back = w == WritePolicy::WriteBack;
                        if self.place(set, r, back, ghost) {
                            self.stats.cache.add(1, seq, size);
                            if !back {
                                self.stats.origin.add(1, seq, size);
                            }
                        } else {
                            self.stats.origin.add(1, seq, size);
                        }
                    }
                }
            }
        }
    }

    /// Puts the missed block of `r` into `set` if the policy admits it, evicting when the set
    /// is full; whether it was placed. `ghost`: the value of its ghost entry in the map.
    #[inline(always)]
    fn place(&mut self, set: usize, r: &Request, dirty: bool, ghost: Option<u32>) -> bool {
        if !self.policy.admit(set, r, ghost) {
            if ghost.is_some() {
                self.map.remove(r.id);
            }
            self.stats.bypasses += 1;
            return false;
        }
        let slot = if self.fill[set] < self.geo.ways {
            let s = self.geo.first_slot(set) + self.fill[set];
            self.fill[set] += 1;
            s
        } else if !self.free_head.is_empty() && self.free_head[set] != NIL {
            let s = self.free_head[set];
            self.free_head[set] = self.free_next[s as usize];
            s
        } else {
            let s = self.policy.evict(set, r, &self.ids, &mut self.map);
            if !P::GHOSTS_IN_MAP {
                self.map.remove(self.ids[s as usize]);
            }
            self.stats.demotions += 1;
            if !self.dirty.is_empty() && self.dirty[s as usize] {
                self.dirty[s as usize] = false;
                self.stats.dirty_evictions += 1;
                let bytes = u64::from(self.dirty_bytes[s as usize]);
                self.stats.writeback_bytes += bytes;
                self.stats.cache.add(0, 0, bytes);
                self.stats.origin.add(1, 0, bytes);
            }
            s
        };
        self.ids[slot as usize] = r.id;
        if P::GHOSTS_IN_MAP {
            // A returning ghost's entry becomes the block's.
            self.map.put(r.id, slot);
        } else {
            self.map.insert(r.id, slot);
        }
        if dirty {
            self.dirty[slot as usize] = true;
            self.dirty_bytes[slot as usize] = r.size;
        }
        self.stats.promotions += 1;
        self.policy.insert(set, slot, r);
        self.policy.prefetch_victims(set, &self.ids, &self.map);
        true
    }
}

impl<P: Policy + Send> Simulator for Cache<P> {
    fn run(&mut self, requests: &[Request]) {
        // The trace is known ahead: fetch the map line of the request FAR ahead and, once
        // that is in, the policy's data of the request NEAR ahead, so that the accesses of
        // the request at hand mostly find their lines cached. Hints only: the state may
        // change before a request is reached, the results never do.
        const FAR: usize = 16;
        const NEAR: usize = 8;
        for (i, r) in requests.iter().enumerate() {
            if let Some(f) = requests.get(i + FAR) {
                self.map.prefetch(f.id);
            }
            if let (true, Some(n)) = (P::PREFETCH, requests.get(i + NEAR)) {
                if let Ok(slot) = self.lookup(n.id) {
                    self.policy.prefetch(self.set_of(n.id), slot);
                }
            }
            self.access(r);
        }
    }

    fn stats(&self) -> Stats {
        self.stats
    }

    fn geometry(&self) -> Geometry {
        self.geo
    }

    fn needs_future(&self) -> bool {
        P::NEEDS_FUTURE
    }

    fn metadata_bytes(&self) -> u64 {
        let own = self.map.bytes()
            + self.ids.len() * 8
            + self.dirty.len()
            + 4 * (self.fill.len() + self.free_head.len() + self.free_next.len());
        (own + self.policy.metadata_bytes()) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::config;
    use crate::{fill_next, simulate};

    fn run(write: WritePolicy, blocks: u64, t: &[Request]) -> Stats {
        let mut c = config("lru", blocks, None);
        c.write = write;
        let mut t = t.to_vec();
        fill_next(&mut t, 0);
        simulate(&c, &t).unwrap()
    }

    const B: u64 = 4096;

    #[test]
    fn write_back_writes_dirty_blocks_when_they_are_evicted() {
        let (w, r) = (Request::write, Request::read);
        // 2 blocks: W1 (dirty), R2, R3 evicts 1 (dirty: written to the origin), R1 evicts 2.
        let s = run(
            WritePolicy::WriteBack,
            2,
            &[w(1, 4096), r(2, 4096), r(3, 4096), r(1, 4096)],
        );
        assert_eq!((s.reads, s.read_hits, s.writes, s.write_hits), (3, 0, 1, 0));
        assert_eq!((s.promotions, s.demotions, s.dirty_evictions), (4, 2, 1));
        assert_eq!(s.writeback_bytes, B);
        assert_eq!(s.origin.write_bytes(), B);
        assert_eq!(s.origin.read_bytes(), 3 * B);
        assert_eq!(s.cache.write_bytes(), 4 * B);
        assert_eq!(
            s.cache.read_bytes(),
            B,
            "the dirty block is read from the cache"
        );
        // A write hit dirties too; a clean eviction costs nothing. The dirty eviction writes
        // back what was written (traffic counts the requests' bytes, not the block size).
        let s = run(
            WritePolicy::WriteBack,
            1,
            &[r(1, 512), w(1, 512), r(2, 512)],
        );
        assert_eq!((s.write_hits, s.dirty_evictions), (1, 1));
        assert_eq!(s.origin.write_bytes(), 512);
    }

    #[test]
    fn traffic_counts_the_requests_bytes_whatever_the_block_size() {
        let (w, r) = (Request::write, Request::read);
        // Two objects of a libCacheSim-style cache (--block-size 1): object 1 hits once,
        // 3 evicts 2, 4 evicts the written (dirty) 1.
        let mut c = config("lru", 2, None);
        c.block_size = 1;
        c.size = 2;
        c.write = WritePolicy::WriteBack;
        let t = [
            r(1, 4096),
            r(2, 300),
            r(1, 4096),
            w(1, 1000),
            r(3, 20),
            r(4, 7),
        ];
        let s = simulate(&c, &t).unwrap();
        assert_eq!((s.read_hits, s.write_hits, s.dirty_evictions), (1, 1, 1));
        assert_eq!(s.bytes, 4096 + 300 + 4096 + 1000 + 20 + 7);
        assert_eq!(s.origin.read_bytes(), 4096 + 300 + 20 + 7, "read misses");
        assert_eq!(
            s.cache.write_bytes(),
            4096 + 300 + 1000 + 20 + 7,
            "fills, the write"
        );
        assert_eq!(
            s.cache.read_bytes(),
            4096 + 1000,
            "the hit, the dirty eviction"
        );
        assert_eq!(s.origin.write_bytes(), 1000, "object 1 as written");
    }

    #[test]
    fn write_through_writes_both_devices_and_allocates() {
        let (w, r) = (Request::write, Request::read);
        let s = run(
            WritePolicy::WriteThrough,
            2,
            &[w(1, 4096), r(1, 4096), w(1, 100)],
        );
        assert_eq!((s.read_hits, s.write_hits, s.promotions), (1, 1, 1));
        assert_eq!(s.origin.write_bytes(), 4096 + 100);
        assert_eq!(s.cache.write_bytes(), 4096 + 100);
        assert_eq!(s.cache.read_bytes(), 4096);
        assert_eq!(s.dirty_evictions, 0);
    }

    #[test]
    fn write_around_bypasses_the_cache_and_invalidates() {
        let (w, r) = (Request::write, Request::read);
        // R1 fills; W1 hits and invalidates; R1 misses again; W2 goes to the origin only.
        let s = run(
            WritePolicy::WriteAround,
            2,
            &[r(1, 4096), w(1, 4096), r(1, 4096), w(2, 4096), r(2, 4096)],
        );
        assert_eq!((s.reads, s.read_hits, s.writes, s.write_hits), (3, 0, 2, 1));
        assert_eq!((s.invalidations, s.promotions, s.demotions), (1, 3, 0));
        assert_eq!(s.origin.write_bytes(), 2 * B);
        assert_eq!(
            s.cache.write_bytes(),
            3 * B,
            "only read fills reach the cache"
        );
    }

    #[test]
    fn sequential_requests_are_told_apart() {
        let r = Request::read;
        let s = run(
            WritePolicy::WriteThrough,
            8,
            &[r(10, 4096), r(11, 4096), r(12, 4096), r(3, 4096)],
        );
        // 10 follows nothing (random), 11 and 12 follow their predecessor, 3 jumps.
        assert_eq!(s.origin.ops[0], [2, 2]);
    }
}
