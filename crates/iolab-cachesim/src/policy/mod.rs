//! Replacement policies: one file each behind [`Policy`], one line each in [`POLICIES`].
//!
//! # Adding a policy
//!
//! 1. Write `src/policy/NAME.rs` with a struct implementing [`Policy`]. Keep its state in
//!    flat arrays indexed by slot (`0 .. geometry.blocks`) and by set (`0 .. geometry.sets`),
//!    e.g. one [`crate::list::Lists`] with one list per set: a set's slots are
//!    `set * ways .. (set + 1) * ways`. Allocate in the constructor only, never per request.
//! 2. Add `mod NAME;` below and one [`PolicyDef`] line to [`POLICIES`]: its name, a one-line
//!    summary, its parameters ([`ParamDef`], with defaults and ranges, checked before the
//!    constructor runs) and the constructor, which wraps the policy in a [`Cache`] with
//!    [`boxed`] so the simulation loop is compiled for it.
//! 3. Add hand-computed tests next to it, its row to docs/cachesim.md (the docs test checks
//!    that every registered policy is documented).
//!
//! The CLI (`iolab cachesim --policy`), the `cachesim` workload kind and the docs read
//! [`POLICIES`]; nothing else names a policy.

mod arc;
mod belady;
mod clock;
mod fifo;
mod ghost;
mod lfu;
mod lru;
#[cfg(test)]
mod probe;
mod queues;
mod s3fifo;
mod sieve;
mod slru;
mod smq;
mod twoq;

use crate::cache::{Cache, Setup, Simulator};
use crate::map::IdMap;
use crate::Request;

pub use arc::Arc;
pub use belady::Belady;
pub use clock::Clock;
pub use fifo::Fifo;
pub use lfu::Lfu;
pub use lru::Lru;
pub use s3fifo::S3Fifo;
pub use sieve::Sieve;
pub use slru::Slru;
pub use smq::Smq;
pub use twoq::TwoQ;

/// A replacement policy for all sets of one cache.
///
/// The cache calls, per request: [`Policy::hit`] when the block is cached; otherwise
/// [`Policy::admit`], then (when the set is full) [`Policy::evict`], then
/// [`Policy::insert`]. [`Policy::remove`] takes a block out without an eviction (a
/// write-around invalidation). `set` is the request's set, `slot` a slot of that set.
///
/// The cache's map holds the slot of every cached block. A policy that remembers evicted
/// ids (ghosts, see `ghost.rs`) keeps them in that same map ([`Policy::GHOSTS_IN_MAP`]):
/// one lookup per request then finds a cached block, a ghost, or nothing, and a block
/// evicted into a ghost list keeps its entry, with a new value.
pub trait Policy {
    /// Whether it reads [`Request::next`] (traces without it then get it computed first).
    const NEEDS_FUTURE: bool = false;
    /// Whether it keeps ghost entries in the cache's map: values from the cache's block
    /// count upwards, at most [`Policy::ghost_capacity`] of them. Its [`Policy::evict`] then
    /// also updates the victim's entry (into a ghost's, or removed), which the cache
    /// otherwise removes itself.
    const GHOSTS_IN_MAP: bool = false;
    /// Ghost entries it may keep in the cache's map at once.
    fn ghost_capacity(&self) -> usize {
        0
    }
    /// The block in `slot` was requested again.
    fn hit(&mut self, set: usize, slot: u32, req: &Request);
    /// Whether the missed block of `req` should be cached (default: always). `ghost` is its
    /// map entry's value when the map holds it as a ghost; the cache replaces that entry
    /// when the block is placed and removes it when it is not.
    #[inline(always)]
    fn admit(&mut self, _set: usize, _req: &Request, _ghost: Option<u32>) -> bool {
        true
    }
    /// Chooses the slot to empty in the full `set` for `req` and forgets it; `ids` holds the
    /// block id of every slot (for ghost entries), `map` is the cache's map (for policies
    /// with [`Policy::GHOSTS_IN_MAP`]).
    fn evict(&mut self, set: usize, req: &Request, ids: &[u64], map: &mut IdMap) -> u32;
    /// The block of `req` now occupies `slot` (empty until now).
    fn insert(&mut self, set: usize, slot: u32, req: &Request);
    /// Forgets the block in `slot` without evicting it.
    fn remove(&mut self, set: usize, slot: u32);
    /// Bytes of the policy's own arrays.
    fn metadata_bytes(&self) -> usize;
    /// Whether [`Policy::prefetch`] does something (the simulator then looks requests up
    /// ahead of time to call it).
    const PREFETCH: bool = false;
    /// A hint that `slot` (in `set`) will be looked at soon: prefetch what [`Policy::hit`]
    /// will touch (default: nothing).
    #[inline(always)]
    fn prefetch(&self, _set: usize, _slot: u32) {}
    /// Called after each miss in `set`: a hint to prefetch the map entries that the next
    /// eviction from `set` will change (its likely victims' and ghosts'), which are
    /// otherwise scattered over the map and read only when that miss comes (default:
    /// nothing).
    #[inline(always)]
    fn prefetch_victims(&self, _set: usize, _ids: &[u64], _map: &IdMap) {}
}

/// One parameter of a policy.
#[derive(Debug, Clone, Copy)]
pub struct ParamDef {
    /// Its name (`m`, `small`).
    pub name: &'static str,
    /// What it means, one sentence.
    pub doc: &'static str,
    /// The value when none is given.
    pub default: f64,
    /// Smallest allowed value.
    pub min: f64,
    /// Largest allowed value.
    pub max: f64,
    /// Whether it must be a whole number.
    pub integer: bool,
}

/// The values of a policy's parameters, all present after [`PolicyDef::params`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Params {
    values: Vec<(&'static str, f64)>,
}

impl Params {
    /// The value of `name` (a parameter the policy declares).
    pub fn get(&self, name: &str) -> f64 {
        self.values
            .iter()
            .find(|(n, _)| *n == name)
            .map_or(f64::NAN, |(_, v)| *v)
    }

    /// `(name, value)` in declaration order.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, f64)> + '_ {
        self.values.iter().copied()
    }
}

/// A policy parameter that cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ParamError {
    /// The policy has no such parameter.
    #[error("policy `{policy}` has no parameter `{name}`")]
    Unknown {
        /// The policy.
        policy: &'static str,
        /// The name given.
        name: String,
        /// The parameters it has.
        known: Vec<&'static str>,
    },
    /// Out of range or not whole.
    #[error("`{name}` = {value} is not allowed: {why}")]
    Invalid {
        /// The parameter.
        name: String,
        /// The value given.
        value: f64,
        /// What is allowed.
        why: String,
    },
}

/// Builds the simulator of a policy from a validated setup and parameters.
pub type Build = fn(Setup, &Params) -> Result<Box<dyn Simulator>, ParamError>;

/// A policy as users name it.
#[derive(Debug, Clone, Copy)]
pub struct PolicyDef {
    /// Its name (`lru`, `s3fifo`).
    pub name: &'static str,
    /// Other names it answers to: libCacheSim's names for it where they differ (`twoq`), so
    /// that its command lines carry over.
    pub aliases: &'static [&'static str],
    /// One line: what it evicts.
    pub summary: &'static str,
    /// Whether every missed block enters the cache (demand paging). A policy that may leave a
    /// missed block out (dm-cache's smq promotes only blocks hit repeatedly) can miss fewer
    /// times than Belady's optimal demand-paging cache.
    pub admits_every_miss: bool,
    /// Its parameters.
    pub params: &'static [ParamDef],
    /// The constructor.
    pub build: Build,
}

impl PolicyDef {
    /// Its name, then its aliases.
    pub fn names(&self) -> impl Iterator<Item = &'static str> {
        std::iter::once(self.name).chain(self.aliases.iter().copied())
    }

    /// The full parameter values from the `given` ones (checked) and the defaults.
    pub fn params(&self, given: &[(String, f64)]) -> Result<Params, ParamError> {
        let mut values: Vec<(&'static str, f64)> =
            self.params.iter().map(|p| (p.name, p.default)).collect();
        for (name, value) in given {
            let Some(def) = self.params.iter().find(|p| p.name == name) else {
                return Err(ParamError::Unknown {
                    policy: self.name,
                    name: name.clone(),
                    known: self.params.iter().map(|p| p.name).collect(),
                });
            };
            let v = *value;
            if !(def.min..=def.max).contains(&v) || (def.integer && v.fract() != 0.0) {
                let kind = if def.integer {
                    "a whole number"
                } else {
                    "a number"
                };
                return Err(ParamError::Invalid {
                    name: name.clone(),
                    value: v,
                    why: format!("it is {kind} from {} to {}", def.min, def.max),
                });
            }
            if let Some(slot) = values.iter_mut().find(|(n, _)| *n == def.name) {
                slot.1 = v;
            }
        }
        Ok(Params { values })
    }
}

/// Wraps `policy` in a cache whose request loop is compiled for it.
pub fn boxed<P: Policy + Send + 'static>(setup: Setup, policy: P) -> Box<dyn Simulator> {
    Box::new(Cache::new(setup, policy))
}

/// Every policy. A new policy is one line here.
pub static POLICIES: &[PolicyDef] = &[
    PolicyDef {
        name: "lru",
        aliases: &[],
        summary: "evicts the least recently used block",
        admits_every_miss: true,
        params: &[],
        build: |s, _| Ok(boxed(s, Lru::new(s.geometry))),
    },
    PolicyDef {
        name: "fifo",
        aliases: &[],
        summary: "evicts the block that entered first; hits change nothing",
        admits_every_miss: true,
        params: &[],
        build: |s, _| Ok(boxed(s, Fifo::new(s.geometry))),
    },
    PolicyDef {
        name: "clock",
        aliases: &["fifo-reinsertion", "second-chance"],
        summary: "FIFO ring with a saturating counter per block (one bit by default)",
        admits_every_miss: true,
        params: &[
            ParamDef {
                name: "m",
                doc: "maximum count (1 = the classic one-bit CLOCK)",
                default: 1.0,
                min: 1.0,
                max: 255.0,
                integer: true,
            },
            ParamDef {
                name: "s",
                doc: "count a block starts with when it enters the cache (at most m)",
                default: 0.0,
                min: 0.0,
                max: 255.0,
                integer: true,
            },
            ParamDef {
                name: "i",
                doc: "added to the count on every hit, saturating at m",
                default: 1.0,
                min: 1.0,
                max: 255.0,
                integer: true,
            },
        ],
        build: |s, p| Ok(boxed(s, Clock::new(s.geometry, p)?)),
    },
    PolicyDef {
        name: "lfu",
        aliases: &[],
        summary: "evicts the least frequently used block, the oldest among ties; counts are forgotten on eviction",
        admits_every_miss: true,
        params: &[],
        build: |s, _| Ok(boxed(s, Lfu::new(s.geometry))),
    },
    PolicyDef {
        name: "sieve",
        aliases: &[],
        summary: "FIFO queue with a visited bit and a hand that keeps its place (SIEVE)",
        admits_every_miss: true,
        params: &[],
        build: |s, _| Ok(boxed(s, Sieve::new(s.geometry))),
    },
    PolicyDef {
        name: "belady",
        aliases: &[],
        summary: "evicts the block requested again farthest in the future (optimal; needs the trace's future)",
        admits_every_miss: true,
        params: &[],
        build: |s, _| Ok(boxed(s, Belady::new(s.geometry))),
    },
    PolicyDef {
        name: "arc",
        aliases: &[],
        summary: "adaptive replacement: LRU lists of blocks seen once and seen twice, sized by ghost hits",
        admits_every_miss: true,
        params: &[],
        build: |s, _| Ok(boxed(s, Arc::new(s.geometry))),
    },
    PolicyDef {
        name: "2q",
        aliases: &["twoq"],
        summary: "new blocks in a FIFO; blocks returning after leaving it go to an LRU",
        admits_every_miss: true,
        params: &[
            ParamDef {
                name: "ain",
                doc: "share of a set for the FIFO of new blocks",
                default: 0.25,
                min: 0.0,
                max: 1.0,
                integer: false,
            },
            ParamDef {
                name: "aout",
                doc: "ids remembered after leaving the FIFO, as a share of a set",
                default: 0.5,
                min: 0.0,
                max: 4.0,
                integer: false,
            },
        ],
        build: |s, p| Ok(boxed(s, TwoQ::new(s.geometry, p.get("ain"), p.get("aout")))),
    },
    PolicyDef {
        name: "slru",
        aliases: &[],
        summary: "segmented LRU: a hit moves a block one segment up, overflow demotes one down",
        admits_every_miss: true,
        params: &[
            ParamDef {
                name: "segments",
                doc: "LRU segments of equal size per set",
                default: 4.0,
                min: 1.0,
                max: 16.0,
                integer: true,
            },
        ],
        build: |s, p| Ok(boxed(s, Slru::new(s.geometry, p.get("segments") as u32))),
    },
    PolicyDef {
        name: "s3fifo",
        aliases: &["s3-fifo"],
        summary: "small FIFO for new blocks, main FIFO with reinsertion, ghost FIFO of one-hit wonders",
        admits_every_miss: true,
        params: &[
            ParamDef {
                name: "small",
                doc: "share of a set for the small FIFO",
                default: 0.10,
                min: 0.0,
                max: 1.0,
                integer: false,
            },
            ParamDef {
                name: "ghost",
                doc: "ids remembered after leaving the small FIFO, as a share of a set",
                default: 0.90,
                min: 0.0,
                max: 4.0,
                integer: false,
            },
            ParamDef {
                name: "promote",
                doc: "hits in the small FIFO that move a block to the main FIFO",
                default: 2.0,
                min: 1.0,
                max: 1e9,
                integer: true,
            },
        ],
        build: |s, p| {
            let (small, ghost) = (p.get("small"), p.get("ghost"));
            let promote = p.get("promote") as u32;
            Ok(boxed(s, S3Fifo::new(s.geometry, small, ghost, promote)))
        },
    },
    PolicyDef {
        name: "smq",
        aliases: &[],
        summary: "model of dm-cache's smq: promotes blocks whose region is hit in several periods, demotes LRU",
        admits_every_miss: false,
        params: &[
            ParamDef {
                name: "region",
                doc: "blocks per hotspot region",
                default: 16.0,
                min: 1.0,
                max: 1e9,
                integer: true,
            },
            ParamDef {
                name: "promote",
                doc: "region level a read miss needs once the set is full",
                default: 2.0,
                min: 1.0,
                max: 63.0,
                integer: true,
            },
            ParamDef {
                name: "period",
                doc: "requests per period (a region's level rises at most once per period)",
                default: 1024.0,
                min: 1.0,
                max: 1e12,
                integer: true,
            },
        ],
        build: |s, p| {
            let region = p.get("region") as u64;
            let (promote, period) = (p.get("promote") as u8, p.get("period") as u64);
            Ok(boxed(s, Smq::new(s.geometry, region, promote, period)))
        },
    },
];

/// The policy called `name` or one of its aliases (case-insensitive, as libCacheSim).
pub fn find(name: &str) -> Option<&'static PolicyDef> {
    POLICIES
        .iter()
        .find(|p| p.names().any(|n| n.eq_ignore_ascii_case(name)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_and_alias_finds_one_policy() {
        let mut seen: Vec<String> = Vec::new();
        for def in POLICIES {
            for n in def.names() {
                let lower = n.to_ascii_lowercase();
                assert!(!seen.contains(&lower), "`{n}` names two policies");
                assert_eq!(
                    find(&n.to_ascii_uppercase()).map(|d| d.name),
                    Some(def.name)
                );
                seen.push(lower);
            }
        }
    }
}
