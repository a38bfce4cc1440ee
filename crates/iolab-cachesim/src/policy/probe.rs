//! Helpers for the hand-computed tests of the policies: a fully associative cache of a
//! policy and a hit/miss string per request.

use super::Policy;
use crate::cache::{Cache, Geometry, Setup, WritePolicy};
use crate::{Request, Simulator};

/// The shape of a fully associative cache of `blocks` 4 KiB blocks.
pub fn full(blocks: u32) -> Geometry {
    Geometry {
        blocks,
        ways: blocks,
        sets: 1,
        block_size: 4096,
    }
}

/// A write-through cache of shape `g` run by `policy`.
pub fn cache<P: Policy>(g: Geometry, policy: P) -> Cache<P> {
    Cache::new(
        Setup {
            geometry: g,
            write: WritePolicy::WriteThrough,
        },
        policy,
    )
}

/// Reads `keys`; 'h' per hit, 'm' per miss.
pub fn run<P: Policy + Send>(c: &mut Cache<P>, keys: &[u64]) -> String {
    keys.iter()
        .map(|&k| {
            let hits = c.stats().read_hits;
            c.access(&Request::read(k, 4096));
            if c.stats().read_hits > hits {
                'h'
            } else {
                'm'
            }
        })
        .collect()
}
