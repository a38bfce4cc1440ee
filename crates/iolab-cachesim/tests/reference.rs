//! The fast policies against naive reference implementations written from their textbook
//! descriptions (queues as `Vec`s, head at index 0), on random traces; set associativity
//! against per-set simulations; Belady against everything.

use iolab_cachesim::{fill_next, simulate, Assoc, CacheConfig, Request, WritePolicy, POLICIES};

/// xorshift64*: a small deterministic generator for test traces.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

/// `len` reads over `objects` ids, skewed (squared uniform) so that some blocks are hot.
fn trace(seed: u64, len: usize, objects: u64) -> Vec<Request> {
    let mut rng = Rng(seed | 1);
    let mut t: Vec<Request> = (0..len)
        .map(|_| {
            let u = (rng.next() % 1_000_000) as f64 / 1e6;
            Request::read((u * u * objects as f64) as u64, 4096)
        })
        .collect();
    fill_next(&mut t, 0);
    t
}

fn config(policy: &str, blocks: u64, assoc: Assoc) -> CacheConfig {
    CacheConfig {
        size: blocks * 4096,
        block_size: 4096,
        assoc,
        write: WritePolicy::WriteThrough,
        policy: policy.into(),
        params: Vec::new(),
    }
}

fn misses(policy: &str, blocks: u64, assoc: Assoc, t: &[Request]) -> u64 {
    simulate(&config(policy, blocks, assoc), t)
        .unwrap()
        .misses()
}

/// Naive simulations: `cache` holds (id, counter) pairs, head first.
fn naive(policy: &str, cap: usize, t: &[Request]) -> u64 {
    let mut q: Vec<(u64, u64)> = Vec::new();
    let mut hand: Option<usize> = None; // SIEVE: index of the hand
    let mut misses = 0;
    for (now, r) in t.iter().enumerate() {
        if let Some(i) = q.iter().position(|e| e.0 == r.id) {
            match policy {
                "lru" => {
                    let e = q.remove(i);
                    q.insert(0, e);
                }
                "clock" => q[i].1 = 1,
                "sieve" => q[i].1 = 1,
                // LFU: count in .1, and the time the block reached it in a parallel slot:
                // keep order by re-appending (the tail is the newest at its count).
                "lfu" => {
                    let mut e = q.remove(i);
                    e.1 += 1;
                    q.push(e);
                }
                "belady" => {}
                _ => {}
            }
            continue;
        }
        misses += 1;
        if q.len() == cap {
            match policy {
                "lru" | "fifo" => {
                    q.pop();
                }
                "clock" => loop {
                    let mut e = q.pop().unwrap();
                    if e.1 == 0 {
                        break;
                    }
                    e.1 = 0;
                    q.insert(0, e);
                },
                "sieve" => {
                    let mut i = hand.unwrap_or(q.len() - 1);
                    while q[i].1 == 1 {
                        q[i].1 = 0;
                        i = if i == 0 { q.len() - 1 } else { i - 1 };
                    }
                    q.remove(i);
                    // The hand stops at the block before the victim (towards the head).
                    hand = if i == 0 { None } else { Some(i - 1) };
                }
                "lfu" => {
                    // Least count; among equal counts the earliest in the vector (the
                    // vector is ordered by the time each block reached its count).
                    let min = q.iter().map(|e| e.1).min().unwrap();
                    let i = q.iter().position(|e| e.1 == min).unwrap();
                    q.remove(i);
                }
                "belady" => {
                    let next = |id: u64| {
                        t[now + 1..]
                            .iter()
                            .position(|x| x.id == id)
                            .map_or(u64::MAX, |p| p as u64)
                    };
                    let far = q.iter().map(|e| next(e.0)).max().unwrap();
                    let i = q.iter().position(|e| next(e.0) == far).unwrap();
                    q.remove(i);
                }
                _ => unreachable!(),
            }
        }
        match policy {
            "lfu" => q.push((r.id, 1)),
            _ => {
                q.insert(0, (r.id, 0));
                if let Some(h) = hand.as_mut() {
                    *h += 1; // the hand keeps pointing at the same block
                }
            }
        }
    }
    misses
}

#[test]
fn policies_agree_with_naive_references_on_random_traces() {
    for seed in 1..=6u64 {
        let t = trace(seed, 3000, 120);
        for cap in [1u64, 2, 7, 30, 64] {
            for p in ["lru", "fifo", "clock", "sieve", "lfu", "belady"] {
                assert_eq!(
                    misses(p, cap, Assoc::Full, &t),
                    naive(p, cap as usize, &t),
                    "{p}, {cap} blocks, seed {seed}"
                );
            }
        }
    }
}

#[test]
fn one_set_of_all_blocks_is_the_fully_associative_policy() {
    let t = trace(7, 20_000, 500);
    for def in POLICIES {
        let full = simulate(&config(def.name, 64, Assoc::Full), &t).unwrap();
        let one_set = simulate(&config(def.name, 64, Assoc::Ways(64)), &t).unwrap();
        assert_eq!(full, one_set, "{}", def.name);
    }
}

#[test]
fn each_set_behaves_like_a_small_fully_associative_cache() {
    // 8 sets of 4 ways: the misses are the sum over sets of a 4-block fully associative
    // cache fed the requests whose id mod 8 selects that set (8 is a power of two: the mask
    // path) — and the same with 6 sets (the modulo path).
    let t = trace(11, 20_000, 300);
    for sets in [8u64, 6] {
        for def in POLICIES {
            let assoc = misses(def.name, 4 * sets, Assoc::Ways(4), &t);
            let per_set: u64 = (0..sets)
                .map(|s| {
                    let mut sub: Vec<Request> =
                        t.iter().filter(|r| r.id % sets == s).copied().collect();
                    fill_next(&mut sub, 0);
                    misses(def.name, 4, Assoc::Full, &sub)
                })
                .sum();
            assert_eq!(assoc, per_set, "{} with {sets} sets", def.name);
        }
    }
}

#[test]
fn belady_never_misses_more_than_any_policy() {
    for seed in 1..=5u64 {
        let t = trace(seed * 31, 30_000, 2_000);
        for blocks in [16u64, 128, 512] {
            for assoc in [Assoc::Full, Assoc::Ways(4), Assoc::Ways(1)] {
                let opt = misses("belady", blocks, assoc, &t);
                // Belady is optimal among caches that take in every missed block.
                for def in POLICIES.iter().filter(|d| d.admits_every_miss) {
                    let m = misses(def.name, blocks, assoc, &t);
                    assert!(
                        opt <= m,
                        "belady {opt} > {} {m} ({blocks} blocks, {assoc:?}, seed {seed})",
                        def.name
                    );
                }
            }
        }
    }
}
