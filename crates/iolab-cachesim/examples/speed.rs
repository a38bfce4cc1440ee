//! Simulation speed on a synthetic Zipf trace, single thread:
//! `cargo run --release -p iolab-cachesim --example speed -- [REQUESTS] [OBJECTS] [ALPHA]`.
//! Prints requests per second of simulator time for every policy at 1 % and 10 % of the
//! objects (fully associative, one object per block).

use iolab_cachesim::{fill_next, run::run_requests, Assoc, CachesimSpec, Request, POLICIES};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args
        .get(1)
        .map_or(20_000_000, |a| a.parse().expect("requests"));
    let objects: usize = args
        .get(2)
        .map_or(1_000_000, |a| a.parse().expect("objects"));
    let alpha: f64 = args.get(3).map_or(1.0, |a| a.parse().expect("alpha"));
    let mut trace = zipf(n, objects, alpha, 42);
    fill_next(&mut trace, 0);
    let pcts: Vec<u64> = args.get(4).map_or(vec![1, 10], |a| {
        a.split(',').map(|p| p.parse().expect("percent")).collect()
    });
    for pct in pcts {
        for def in POLICIES {
            let mut spec = CachesimSpec::with_defaults();
            spec.cache.block_size = 1;
            spec.cache.size = (objects as u64 * pct / 100).max(1);
            spec.cache.assoc = Assoc::Full;
            spec.cache.policy = def.name.into();
            let cpu = thread_cpu_ns();
            let o = run_requests(&spec, &trace).expect("valid");
            let cpu_s = (thread_cpu_ns() - cpu) as f64 / 1e9;
            println!(
                "{:>8} {:>3}% misses {:>10} miss ratio {:.4} {:>7.2} M req/s wall, {:>7.2} M req/s CPU (incl. setup)",
                def.name,
                pct,
                o.stats.misses(),
                o.stats.miss_ratio(),
                o.requests_per_s() / 1e6,
                n as f64 / cpu_s / 1e6
            );
        }
    }
}

/// `n` reads of Zipf(`alpha`)-distributed ids over `objects` (rank 1 = id 0 … shuffled by a
/// multiplicative permutation so popular ids are not neighbours).
fn zipf(n: usize, objects: usize, alpha: f64, seed: u64) -> Vec<Request> {
    let mut cdf = Vec::with_capacity(objects);
    let mut sum = 0.0;
    for k in 1..=objects {
        sum += 1.0 / (k as f64).powf(alpha);
        cdf.push(sum);
    }
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            let u = (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64;
            let rank = cdf.partition_point(|&c| c < u * sum).min(objects - 1) as u64;
            Request::read(mix(rank), 1)
        })
        .collect()
}

/// splitmix64's finalizer: a bijection, so distinct ranks stay distinct ids.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// This thread's time on a CPU, from the scheduler's statistics (ns).
fn thread_cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}
