//! Trace-driven block-cache simulation.
//!
//! A trace is a sequence of [`Request`]s (a block id, a size, read or write, and the index
//! of the next request to the same block). A [`CacheConfig`] — cache size, block size,
//! associativity, write policy, replacement policy and its parameters — is validated into a
//! [`Geometry`] and built into a [`Simulator`] through the policy registry
//! ([`policy::POLICIES`]); feeding it the trace yields [`Stats`].
//!
//! The request loop is generic over the policy (compiled once per policy); the policy is
//! chosen at run time only when the simulator is built. Nothing is allocated per request:
//! all sets share flat arrays indexed by slot, and blocks are found through a pre-sized
//! open-addressing map ([`map::IdMap`]). The simulation is deterministic.

pub mod cache;
pub mod command;
pub mod kind;
pub mod list;
pub mod map;
mod mem;
pub mod model;
pub mod output;
pub mod policy;
pub mod report;
pub mod run;
pub mod spec;
pub mod synth;

pub use cache::{Cache, Geometry, Setup, Simulator, Stats, Traffic, WritePolicy};
pub use model::{DeviceModel, Writeback};
pub use policy::{Params, PolicyDef, POLICIES};
pub use run::{run, Outcome, RunError, Warning};
pub use spec::{CachesimSettings, CachesimSpec, CachesimTable, SpecError, OPTIONS};

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Hints the CPU to bring a value's cache line in; no effect on results.
pub use iolab_mrc::prefetch;

/// [`Request::next`] of a request whose block is never requested again.
pub const NEVER: u64 = u64::MAX;

/// Read or write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Op {
    /// A read.
    Read,
    /// A write.
    Write,
}

/// One request of a trace: one block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    /// The block (or object) id.
    pub id: u64,
    /// The index in the trace (counting from 0) of the next request to the same id, or
    /// [`NEVER`]. Only Belady reads it; [`fill_next`] computes it for traces without it.
    pub next: u64,
    /// Bytes requested: the block size for split block traces, the object's size for object
    /// traces. Traffic counts these bytes, whatever the block size.
    pub size: u32,
    /// Read or write.
    pub op: Op,
}

impl Request {
    /// A read of `id` with no next-request index yet.
    pub fn read(id: u64, size: u32) -> Request {
        Request {
            id,
            next: NEVER,
            size,
            op: Op::Read,
        }
    }

    /// A write of `id` with no next-request index yet.
    pub fn write(id: u64, size: u32) -> Request {
        Request {
            id,
            next: NEVER,
            size,
            op: Op::Write,
        }
    }
}

/// Fills [`Request::next`] of a whole trace in one backward pass. `base` is the index of
/// `trace[0]` in the full trace (0 unless the trace is a later part of a longer one, in
/// which case requests whose next access lies beyond the part get [`NEVER`]).
pub fn fill_next(trace: &mut [Request], base: u64) {
    let mut seen: HashMap<u64, u64, BuildHasherDefault<IdHasher>> =
        HashMap::with_capacity_and_hasher(1024, Default::default());
    for (i, r) in trace.iter_mut().enumerate().rev() {
        let at = base + i as u64;
        r.next = seen.insert(r.id, at).unwrap_or(NEVER);
    }
}

/// A one-multiplication hasher for `u64` keys (std's SipHash is several times slower here).
#[derive(Default)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(*b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (v ^ (v >> 29)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// Associativity: blocks per set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Assoc {
    /// One set holding every block.
    Full,
    /// Sets of this many blocks (1 = direct-mapped).
    Ways(u64),
}

/// A cache as the user describes it, before validation.
#[derive(Debug, Clone, PartialEq)]
pub struct CacheConfig {
    /// Cache capacity in bytes.
    pub size: u64,
    /// Block size in bytes.
    pub block_size: u64,
    /// Blocks per set.
    pub assoc: Assoc,
    /// What writes do.
    pub write: WritePolicy,
    /// The replacement policy's name (see [`POLICIES`]).
    pub policy: String,
    /// Parameters given for the policy (the others take their defaults).
    pub params: Vec<(String, f64)>,
}

/// A cache that cannot be built.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ConfigError {
    /// Block size 0.
    #[error("the block size must be at least 1 byte")]
    ZeroBlockSize,
    /// The cache size is not a multiple of the block size.
    #[error("the block size {block_size} B does not divide the cache size {size} B")]
    BlockSizeDoesNotDivide {
        /// Cache size.
        size: u64,
        /// Block size.
        block_size: u64,
    },
    /// Fewer than one block, or more than the simulator can index.
    #[error("the cache holds {blocks} blocks; it must hold 1 to {max}")]
    BlockCount {
        /// Blocks asked for.
        blocks: u64,
        /// The most the simulator indexes.
        max: u64,
    },
    /// Zero ways.
    #[error("the associativity must be at least 1 way")]
    ZeroWays,
    /// More ways than blocks.
    #[error("associativity {ways} is larger than the cache's {blocks} blocks")]
    AssocTooLarge {
        /// Ways asked for.
        ways: u64,
        /// Blocks in the cache.
        blocks: u64,
    },
    /// The ways do not divide the blocks into whole sets.
    #[error("associativity {ways} does not divide the cache's {blocks} blocks into whole sets")]
    AssocDoesNotDivide {
        /// Ways asked for.
        ways: u64,
        /// Blocks in the cache.
        blocks: u64,
    },
    /// No policy has this name.
    #[error("unknown replacement policy `{0}`")]
    UnknownPolicy(String),
    /// A parameter is wrong.
    #[error(transparent)]
    Param(#[from] policy::ParamError),
}

/// Slots are `u32` indices with `u32::MAX` meaning none.
const MAX_BLOCKS: u64 = u32::MAX as u64 - 1;

impl CacheConfig {
    /// The cache's shape, checked.
    pub fn geometry(&self) -> Result<Geometry, ConfigError> {
        if self.block_size == 0 {
            return Err(ConfigError::ZeroBlockSize);
        }
        if !self.size.is_multiple_of(self.block_size) {
            return Err(ConfigError::BlockSizeDoesNotDivide {
                size: self.size,
                block_size: self.block_size,
            });
        }
        let blocks = self.size / self.block_size;
        if blocks == 0 || blocks > MAX_BLOCKS || self.block_size > u64::from(u32::MAX) {
            return Err(ConfigError::BlockCount {
                blocks,
                max: MAX_BLOCKS,
            });
        }
        let ways = match self.assoc {
            Assoc::Full => blocks,
            Assoc::Ways(0) => return Err(ConfigError::ZeroWays),
            Assoc::Ways(w) if w > blocks => {
                return Err(ConfigError::AssocTooLarge { ways: w, blocks })
            }
            Assoc::Ways(w) if !blocks.is_multiple_of(w) => {
                return Err(ConfigError::AssocDoesNotDivide { ways: w, blocks })
            }
            Assoc::Ways(w) => w,
        };
        Ok(Geometry {
            blocks: blocks as u32,
            ways: ways as u32,
            sets: (blocks / ways) as u32,
            block_size: self.block_size as u32,
        })
    }

    /// The policy, its full parameters and the geometry, each checked on its own.
    fn resolve(&self) -> Result<(&'static PolicyDef, Params, Geometry), ConfigError> {
        let geometry = self.geometry()?;
        let def = policy::find(&self.policy)
            .ok_or_else(|| ConfigError::UnknownPolicy(self.policy.clone()))?;
        let params = def.params(&self.params)?;
        Ok((def, params, geometry))
    }

    /// Checks everything [`CacheConfig::build`] checks. Parameters that constrain each other
    /// (CLOCK's start value at most its maximum) are the constructor's to check, so this
    /// builds the simulator once and drops it.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.build().map(drop)
    }

    /// A simulator for this cache.
    pub fn build(&self) -> Result<Box<dyn Simulator>, ConfigError> {
        let (def, params, geometry) = self.resolve()?;
        let setup = Setup {
            geometry,
            write: self.write,
        };
        Ok((def.build)(setup, &params)?)
    }
}

/// Simulates `trace` (a whole trace in memory) on the cache `config` describes.
pub fn simulate(config: &CacheConfig, trace: &[Request]) -> Result<Stats, ConfigError> {
    let mut sim = config.build()?;
    sim.run(trace);
    Ok(sim.stats())
}

#[cfg(test)]
pub(crate) mod testutil {
    //! Small helpers for hand-computed tests.
    use super::*;

    /// Reads of these ids, 4 KiB each, with next-request indices.
    pub fn reads(ids: &[u64]) -> Vec<Request> {
        let mut t: Vec<Request> = ids.iter().map(|&i| Request::read(i, 4096)).collect();
        fill_next(&mut t, 0);
        t
    }

    /// A cache of `blocks` 4 KiB blocks.
    pub fn config(policy: &str, blocks: u64, ways: Option<u64>) -> CacheConfig {
        CacheConfig {
            size: blocks * 4096,
            block_size: 4096,
            assoc: ways.map_or(Assoc::Full, Assoc::Ways),
            write: WritePolicy::WriteThrough,
            policy: policy.to_string(),
            params: Vec::new(),
        }
    }

    /// Misses of `trace` on `policy` with `blocks` blocks and `ways` ways (None: full).
    pub fn misses(policy: &str, blocks: u64, ways: Option<u64>, trace: &[Request]) -> u64 {
        simulate(&config(policy, blocks, ways), trace)
            .expect("valid config")
            .misses()
    }
}

/// What this place gives the rest of iolab (see [`iolab_kind::Plugin`]); its one line in the
/// registry is `&iolab_cachesim::PLUGIN`.
pub static PLUGIN: iolab_kind::Plugin = iolab_kind::Plugin {
    kinds: &[&kind::CACHESIM],
    commands: &[&command::CachesimCommand],
    files: &[],
    sections: &[&report::CachesimSection],
    schemas: &[output::SCHEMA, output::mrc::SCHEMA],
};

#[cfg(test)]
mod tests {
    use super::testutil::*;
    use super::*;

    #[test]
    fn lru_misses_at_every_size_equal_the_curve() {
        // A random trace over 600 blocks (uniform and Zipf mixed): the LRU policy of the
        // simulator at several sizes misses exactly as often as the curve says.
        let mut rng = crate::synth::Rng::new(17);
        let zipf = crate::synth::Zipf::new(600, 0.9);
        let ids: Vec<u64> = (0..60_000)
            .map(|i| {
                if i % 3 == 0 {
                    1 + rng.next_u64() % 600
                } else {
                    zipf.sample(&mut rng)
                }
            })
            .collect();
        let curve = iolab_mrc::exact(ids.iter().copied());
        let trace = testutil::reads(&ids);
        for size in [1u64, 2, 3, 5, 16, 64, 100, 255, 256, 400, 599, 600, 1000] {
            let lru = testutil::misses("lru", size, None, &trace);
            assert_eq!(lru as f64, curve.misses(size), "size {size}");
        }
    }

    #[test]
    fn fill_next_links_each_request_to_the_next_of_its_id() {
        let t = reads(&[5, 6, 5, 7, 6, 5]);
        let next: Vec<u64> = t.iter().map(|r| r.next).collect();
        assert_eq!(next, [2, 4, 5, NEVER, NEVER, NEVER]);
    }

    #[test]
    fn impossible_caches_are_refused() {
        let mut c = config("lru", 8, Some(16));
        assert_eq!(
            c.geometry(),
            Err(ConfigError::AssocTooLarge {
                ways: 16,
                blocks: 8
            })
        );
        c.assoc = Assoc::Ways(3);
        assert!(matches!(
            c.geometry(),
            Err(ConfigError::AssocDoesNotDivide { .. })
        ));
        c.assoc = Assoc::Full;
        c.block_size = 3000;
        assert!(matches!(
            c.geometry(),
            Err(ConfigError::BlockSizeDoesNotDivide { .. })
        ));
        c.block_size = 4096;
        c.policy = "lruu".into();
        assert!(matches!(c.build(), Err(ConfigError::UnknownPolicy(_))));
    }

    #[test]
    fn sets_are_chosen_by_id_modulo_set_count() {
        // 4 blocks, 2 ways → 2 sets; even ids in set 0, odd in set 1.
        // 0 2 4 0: set 0 holds {2,4} after 4 evicts 0 → 0 misses again: 4 misses.
        assert_eq!(misses("lru", 4, Some(2), &reads(&[0, 2, 4, 0])), 4);
        // Fully associative keeps all three: 3 misses.
        assert_eq!(misses("lru", 4, None, &reads(&[0, 2, 4, 0])), 3);
        // Direct-mapped: 0 and 4 collide in set 0 of 4 sets.
        assert_eq!(misses("lru", 4, Some(1), &reads(&[0, 4, 0, 1, 2, 3, 1])), 6);
    }
}
