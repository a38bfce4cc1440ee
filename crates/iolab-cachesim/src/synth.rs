//! Synthetic traces: seeded, deterministic Zipf request streams.
//!
//! Object ranks are drawn with the rejection-inversion method of Hörmann and Derflinger
//! ("Rejection-inversion to generate variates from monotone discrete distributions", ACM
//! TOMACS 1996): O(1) per request and no table, so 10 M objects cost no memory. The object of
//! rank `k` (1 = most popular) has id `k`; with α = 0 every object is equally likely.
//! The random numbers come from xoshiro256** seeded through SplitMix64, so a seed gives
//! the same trace on every machine.
//!
//! [`write_oracle`] writes a trace as libCacheSim's `oracleGeneral` (through
//! `iolab_tracefile`), with the next-request index of every record filled in.

use std::io::Write;
use std::path::Path;

use iolab_tracefile::oracle::{encode, RECORD_LEN};

/// What to generate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ZipfSpec {
    /// The skew α (≥ 0; 0 = uniform).
    pub alpha: f64,
    /// Distinct objects (ids 1 ..= objects).
    pub objects: u64,
    /// Requests.
    pub requests: u64,
    /// The random seed.
    pub seed: u64,
    /// Size written for every object, bytes.
    pub object_size: u32,
}

/// A spec that cannot be generated.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SynthError {
    /// α negative or not a number.
    #[error("the Zipf skew must be a number ≥ 0, not {0}")]
    Alpha(f64),
    /// No objects, or more than ids of the written trace can index.
    #[error("the object count must be 1 to {max}, not {0}", max = u32::MAX)]
    Objects(u64),
    /// More requests than an oracleGeneral time stamp and next index can carry.
    #[error("the request count must be 1 to {max}, not {0}", max = u32::MAX - 1)]
    Requests(u64),
}

impl ZipfSpec {
    /// Checks the spec.
    pub fn validate(&self) -> Result<(), SynthError> {
        if !(self.alpha >= 0.0 && self.alpha.is_finite()) {
            return Err(SynthError::Alpha(self.alpha));
        }
        if self.objects == 0 || self.objects > u64::from(u32::MAX) {
            return Err(SynthError::Objects(self.objects));
        }
        if self.requests == 0 || self.requests >= u64::from(u32::MAX) {
            return Err(SynthError::Requests(self.requests));
        }
        Ok(())
    }
}

/// The seeded generator of synthetic traces: xoshiro256++ (iolab-util's, the one the
/// statistics use too).
pub use iolab_util::xoshiro::Rng;

/// Zipf ranks 1 ..= n with P(k) ∝ k^−α.
#[derive(Debug, Clone)]
pub struct Zipf {
    n: f64,
    alpha: f64,
    h_x1: f64,
    h_n: f64,
    s_cut: f64,
}

impl Zipf {
    /// The distribution over `n` ≥ 1 ranks with skew `alpha` ≥ 0.
    pub fn new(n: u64, alpha: f64) -> Zipf {
        let mut z = Zipf {
            n: n as f64,
            alpha,
            h_x1: 0.0,
            h_n: 0.0,
            s_cut: 0.0,
        };
        z.h_x1 = z.h_integral(1.5) - 1.0;
        z.h_n = z.h_integral(z.n + 0.5);
        z.s_cut = 2.0 - z.h_integral_inverse(z.h_integral(2.5) - z.h(2.0));
        z
    }

    /// One rank.
    #[inline]
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        loop {
            let u = self.h_n + rng.next_f64() * (self.h_x1 - self.h_n);
            let x = self.h_integral_inverse(u);
            let k = (x + 0.5).floor().clamp(1.0, self.n);
            if k - x <= self.s_cut || u >= self.h_integral(k + 0.5) - self.h(k) {
                return k as u64;
            }
        }
    }

    /// H(x) = ∫ h: ((x^(1−α)) − 1) / (1 − α), or ln x for α = 1.
    #[inline(always)]
    fn h_integral(&self, x: f64) -> f64 {
        let ln = x.ln();
        helper2((1.0 - self.alpha) * ln) * ln
    }

    /// h(x) = x^−α.
    #[inline(always)]
    fn h(&self, x: f64) -> f64 {
        (-self.alpha * x.ln()).exp()
    }

    #[inline(always)]
    fn h_integral_inverse(&self, x: f64) -> f64 {
        let t = (x * (1.0 - self.alpha)).max(-1.0);
        (helper1(t) * x).exp()
    }
}

/// ln(1 + x) / x, accurate near 0.
#[inline(always)]
fn helper1(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))
    }
}

/// (e^x − 1) / x, accurate near 0.
#[inline(always)]
fn helper2(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x * 0.5 * (1.0 + x / 3.0 * (1.0 + 0.25 * x))
    }
}

/// The object ids of the trace `spec` describes, in request order.
pub fn zipf_ids(spec: &ZipfSpec) -> Result<Vec<u32>, SynthError> {
    spec.validate()?;
    let z = Zipf::new(spec.objects, spec.alpha);
    let mut rng = Rng::new(spec.seed);
    Ok((0..spec.requests)
        .map(|_| z.sample(&mut rng) as u32)
        .collect())
}

/// What [`write_oracle`] wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Written {
    /// Records.
    pub requests: u64,
    /// Distinct objects requested.
    pub objects: u64,
}

/// Writes the trace `spec` describes to `out` as oracleGeneral records: time = request
/// index / 1000 (1000 requests per second, so libCacheSim's default TTL of 300 days never
/// expires an object), id, `object_size`, next-request index (one backward pass in memory: 4 bytes per
/// request and per object).
pub fn write_oracle(spec: &ZipfSpec, out: &mut impl Write) -> Result<Written, WriteError> {
    let ids = zipf_ids(spec)?;
    let mut last = vec![u32::MAX; spec.objects as usize + 1];
    let mut next = vec![u32::MAX; ids.len()];
    let mut objects = 0u64;
    for (i, &id) in ids.iter().enumerate().rev() {
        let l = &mut last[id as usize];
        if *l == u32::MAX {
            objects += 1;
        }
        next[i] = *l;
        *l = i as u32;
    }
    drop(last);
    let mut buf = Vec::with_capacity(RECORD_LEN << 14);
    for (i, (&id, &n)) in ids.iter().zip(&next).enumerate() {
        let n = (n != u32::MAX).then_some(u64::from(n));
        buf.extend_from_slice(&encode(
            (i / 1000) as u32,
            u64::from(id),
            spec.object_size,
            n,
        ));
        if buf.len() == buf.capacity() {
            out.write_all(&buf)?;
            buf.clear();
        }
    }
    out.write_all(&buf)?;
    out.flush()?;
    Ok(Written {
        requests: ids.len() as u64,
        objects,
    })
}

/// Generates the trace into the file `path` (created or truncated).
pub fn write_oracle_file(spec: &ZipfSpec, path: &Path) -> Result<Written, WriteError> {
    spec.validate()?;
    let mut f = std::fs::File::create(path)?;
    write_oracle(spec, &mut f)
}

/// Why a trace could not be written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// The spec is wrong.
    #[error(transparent)]
    Spec(#[from] SynthError),
    /// Writing failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(alpha: f64, objects: u64, requests: u64, seed: u64) -> ZipfSpec {
        ZipfSpec {
            alpha,
            objects,
            requests,
            seed,
            object_size: 4096,
        }
    }

    #[test]
    fn same_seed_same_trace_other_seed_other_trace() {
        let a = zipf_ids(&spec(1.0, 1000, 10_000, 7)).unwrap();
        let b = zipf_ids(&spec(1.0, 1000, 10_000, 7)).unwrap();
        let c = zipf_ids(&spec(1.0, 1000, 10_000, 8)).unwrap();
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert!(a.iter().all(|&k| (1..=1000).contains(&k)));
    }

    #[test]
    fn frequencies_follow_the_zipf_law() {
        // 1 M draws over 100 ranks: the share of rank k is k^−α / H(100, α); each of the
        // first 5 ranks' shares is within 5 standard errors of a binomial proportion of it
        // (a bound any seed's draws meet, unlike a fixed 1 %, which held for one stream).
        for alpha in [0.8, 1.0, 1.2] {
            let ids = zipf_ids(&spec(alpha, 100, 1_000_000, 3)).unwrap();
            let mut count = [0u64; 101];
            for &k in &ids {
                count[k as usize] += 1;
            }
            let h: f64 = (1..=100).map(|k| (k as f64).powf(-alpha)).sum();
            for k in 1..=5u64 {
                let want = (k as f64).powf(-alpha) / h;
                let got = count[k as usize] as f64 / ids.len() as f64;
                let se = (want * (1.0 - want) / ids.len() as f64).sqrt();
                assert!(
                    (got - want).abs() < 5.0 * se,
                    "α {alpha} rank {k}: {got} vs {want} (± {se})"
                );
            }
        }
    }

    #[test]
    fn alpha_zero_is_uniform() {
        let ids = zipf_ids(&spec(0.0, 4, 400_000, 1)).unwrap();
        for k in 1..=4u32 {
            let n = ids.iter().filter(|&&i| i == k).count() as f64;
            assert!((n / 100_000.0 - 1.0).abs() < 0.01, "rank {k}: {n}");
        }
    }

    #[test]
    fn oracle_records_carry_the_next_request_from_one() {
        let s = spec(1.0, 50, 2_000, 9);
        let ids = zipf_ids(&s).unwrap();
        let mut out = Vec::new();
        let w = write_oracle(&s, &mut out).unwrap();
        assert_eq!(w.requests, 2_000);
        assert_eq!(out.len(), 2_000 * RECORD_LEN);
        let expected: Vec<Option<u64>> =
            iolab_tracefile::next_access(&ids.iter().map(|&i| u64::from(i)).collect::<Vec<_>>());
        for (i, rec) in out.chunks(RECORD_LEN).enumerate() {
            let id = u64::from_le_bytes(rec[4..12].try_into().unwrap());
            let size = u32::from_le_bytes(rec[12..16].try_into().unwrap());
            let next = i64::from_le_bytes(rec[16..24].try_into().unwrap());
            assert_eq!(id, u64::from(ids[i]));
            assert_eq!(size, 4096);
            assert_eq!(next, expected[i].map_or(-1, |n| n as i64 + 1), "record {i}");
        }
        let distinct: std::collections::HashSet<u32> = ids.iter().copied().collect();
        assert_eq!(w.objects, distinct.len() as u64);
    }

    #[test]
    fn bad_specs_are_refused() {
        assert_eq!(
            zipf_ids(&spec(-1.0, 10, 10, 1)),
            Err(SynthError::Alpha(-1.0))
        );
        assert_eq!(zipf_ids(&spec(1.0, 0, 10, 1)), Err(SynthError::Objects(0)));
        assert_eq!(zipf_ids(&spec(1.0, 10, 0, 1)), Err(SynthError::Requests(0)));
    }
}
