//! A fast hasher for integer ids (the multiply-rotate of rustc's FxHash): the map of the
//! next-access pass is hit once per request, and SipHash would dominate it.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// FxHash-style hasher for `u64` keys.
#[derive(Default, Clone, Copy)]
pub struct IdHasher(u64);

const K: u64 = 0xf135_7aea_2e62_a9c5;

impl Hasher for IdHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(26) ^ n).wrapping_mul(K);
    }

    fn finish(&self) -> u64 {
        // The high bits are the well-mixed ones; hashbrown takes its control byte from the top.
        self.0.rotate_left(26)
    }
}

/// A map keyed by object id.
pub type IdMap<V> = HashMap<u64, V, BuildHasherDefault<IdHasher>>;
