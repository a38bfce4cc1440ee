//! SHARDS (Waldspurger, Park, Garthwaite & Ahmad, FAST'15): miss-ratio curves from a spatial
//! sample of the blocks.
//!
//! A block is tracked when `hash(id) mod 2^24 < T`; the sampling rate is `R = T / 2^24`.
//! The tracked blocks' stack distances `d` stand for distances `d / R` in the full trace,
//! and each sampled request for `1 / R` requests.
//! - **Fixed rate** ([`ShardsMode::Rate`]): `T` is fixed; the histogram has buckets of
//!   `1 / R` blocks. The estimated misses are divided by the true request count (the
//!   paper's SHARDS-adj correction, which removes most of the bias of a few very popular
//!   blocks being sampled or not).
//! - **Fixed size** ([`ShardsMode::Blocks`]): at most `s` blocks are tracked; when a new
//!   block would exceed that, the tracked block with the largest hash is dropped and `T`
//!   lowered to its hash, so the rate adapts to the trace. Each sampled request counts with
//!   the weight `1 / R` of the rate in force when it was seen.

use std::collections::BinaryHeap;

use super::exact::StackDistance;
use super::Mrc;

/// Hash values are taken modulo this.
const MODULUS: u64 = 1 << 24;

/// How many blocks SHARDS tracks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ShardsMode {
    /// A fixed sampling rate in (0, 1].
    Rate(f64),
    /// At most this many blocks (the rate drops as needed).
    Blocks(usize),
}

/// A SHARDS pass over a request stream.
pub struct Shards {
    mode: ShardsMode,
    threshold: u64,
    sd: StackDistance,
    /// Fixed size: (hash, id) of the tracked blocks, largest hash on top.
    heap: BinaryHeap<(u64, u64)>,
    hist: Vec<f64>,
    cold: f64,
    sampled: u64,
    requests: u64,
    unit: f64,
}

/// A well-mixed 64-bit hash of a block id (SplitMix64's finaliser).
#[inline(always)]
fn mix(id: u64) -> u64 {
    let mut z = id.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Shards {
    /// A pass with `mode` (a rate is clamped to (0, 1], a size to at least 1 block).
    pub fn new(mode: ShardsMode) -> Shards {
        let (threshold, unit, blocks) = match mode {
            ShardsMode::Rate(r) => {
                let t = ((r.clamp(0.0, 1.0) * MODULUS as f64).round() as u64).clamp(1, MODULUS);
                (t, MODULUS as f64 / t as f64, 1 << 16)
            }
            ShardsMode::Blocks(s) => (MODULUS, 1.0, s.max(1)),
        };
        Shards {
            mode,
            threshold,
            sd: StackDistance::new(blocks),
            heap: BinaryHeap::new(),
            hist: Vec::new(),
            cold: 0.0,
            sampled: 0,
            requests: 0,
            unit,
        }
    }

    /// The sampling rate now.
    pub fn rate(&self) -> f64 {
        self.threshold as f64 / MODULUS as f64
    }

    /// Requests sampled so far.
    pub fn sampled(&self) -> u64 {
        self.sampled
    }

    /// Bytes of the structures (the histogram included).
    pub fn bytes(&self) -> usize {
        self.sd.bytes() + 16 * self.heap.capacity() + 8 * self.hist.capacity()
    }

    /// One request.
    #[inline]
    pub fn access(&mut self, id: u64) {
        self.requests += 1;
        let h = mix(id) % MODULUS;
        if h >= self.threshold {
            return;
        }
        self.sampled += 1;
        let rate = self.rate();
        let w = 1.0 / rate;
        match self.sd.access(id) {
            None => {
                self.cold += w;
                if let ShardsMode::Blocks(s) = self.mode {
                    self.heap.push((h, id));
                    if self.sd.blocks() as usize > s {
                        let (top, victim) = self.heap.pop().expect("tracked blocks");
                        self.sd.remove(victim);
                        // Drop every block hashed to the new threshold (ties), too.
                        while let Some(&(t, v)) = self.heap.peek() {
                            if t < top {
                                break;
                            }
                            self.heap.pop();
                            self.sd.remove(v);
                        }
                        self.threshold = top;
                    }
                }
            }
            Some(d) => {
                let i = match self.mode {
                    ShardsMode::Rate(_) => d as usize,
                    ShardsMode::Blocks(_) => (d as f64 * w) as usize,
                };
                if i >= self.hist.len() {
                    self.hist.resize((i + 1).max(2 * self.hist.len()), 0.0);
                }
                self.hist[i] += w;
            }
        }
    }

    /// The estimated curve.
    pub fn finish(mut self) -> Mrc {
        while self.hist.last() == Some(&0.0) {
            self.hist.pop();
        }
        // The estimated misses are divided by the true number of requests, not by the
        // sampled weight: this is the SHARDS-adj correction (adding the difference between
        // expected and sampled requests to the smallest distances, which hit at every size),
        // and it keeps one very popular block that happens to be sampled (or not) from
        // skewing the whole curve.
        Mrc {
            requests: self.requests as f64,
            cold: self.cold,
            hist: self.hist,
            unit: self.unit,
        }
    }
}

/// The SHARDS curve of a stream of block ids.
pub fn shards(ids: impl IntoIterator<Item = u64>, mode: ShardsMode) -> Mrc {
    let mut s = Shards::new(mode);
    for id in ids {
        s.access(id);
    }
    s.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{even_sizes, exact};
    use iolab_cachesim::synth::{zipf_ids, ZipfSpec};

    fn zipf(alpha: f64, objects: u64, requests: u64) -> Vec<u64> {
        let spec = ZipfSpec {
            alpha,
            objects,
            requests,
            seed: 5,
            object_size: 4096,
        };
        zipf_ids(&spec)
            .unwrap()
            .into_iter()
            .map(u64::from)
            .collect()
    }

    #[test]
    fn rate_one_is_the_exact_curve() {
        let t = zipf(0.9, 5_000, 100_000);
        let e = exact(t.iter().copied());
        let s = shards(t.iter().copied(), ShardsMode::Rate(1.0));
        let sizes = even_sizes(5_000, 50);
        assert!(e.mean_abs_error(&s, &sizes) < 1e-12);
    }

    #[test]
    fn one_percent_sampling_is_within_a_hundredth() {
        let t = zipf(1.0, 200_000, 2_000_000);
        let e = exact(t.iter().copied());
        let sizes = even_sizes(200_000, 100);
        let s = shards(t.iter().copied(), ShardsMode::Rate(0.01));
        let mae = e.mean_abs_error(&s, &sizes);
        assert!(mae < 0.01, "fixed rate: MAE {mae}");
        let f = shards(t.iter().copied(), ShardsMode::Blocks(4_000));
        let mae = e.mean_abs_error(&f, &sizes);
        assert!(mae < 0.01, "fixed size: MAE {mae}");
    }
}
