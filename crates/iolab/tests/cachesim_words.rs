//! One meaning per word in `iolab cachesim` (seed 004's review): sizes are bytes in `mrc` as
//! in `cachesim`, `mrc` and `cachesim` count the same requests (stage 1's curve said 0.470
//! where stage 2 simulated 0.427 for the same cache), and a trace whose format cannot tell
//! reads from writes is said to be simulated as reads only.

mod common;

use common::{assert_clean_failure, stderr, stdout, Scratch};
use serde_json::Value;

/// A CSV trace (iolab's columns) of reads and writes — every other one to four hot blocks,
/// the rest spread over 61 — every third request a discard or another request, which a cache
/// never sees.
fn mixed_csv(s: &Scratch) -> std::path::PathBuf {
    let mut text = String::from("time,obj_id,obj_size,op\n");
    for i in 0..600u64 {
        let id = if i % 2 == 0 { i % 4 } else { (i * 7919) % 61 };
        let op = match i % 6 {
            2 => "discard",
            5 => "other",
            1 | 4 => "write",
            _ => "read",
        };
        text.push_str(&format!("{i},{id},4096,{op}\n"));
    }
    s.write("mixed.csv", &text)
}

fn mrc_json(s: &Scratch, args: &[&str]) -> Value {
    let mut a = vec!["cachesim", "mrc"];
    a.extend_from_slice(args);
    a.extend_from_slice(&["--format", "json"]);
    let o = s.run(&a);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn sim_json(s: &Scratch, args: &[&str]) -> (Value, String) {
    let mut a = vec!["cachesim"];
    a.extend_from_slice(args);
    a.extend_from_slice(&["--json", "--no-db"]);
    let o = s.run(&a);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    (serde_json::from_slice(&o.stdout).unwrap(), stderr(&o))
}

#[test]
fn the_curve_and_the_simulation_of_one_cache_give_one_miss_ratio() {
    let s = Scratch::new();
    let t = mixed_csv(&s);
    let t = t.to_str().unwrap();
    for blocks in [8u64, 32, 64] {
        let curve = mrc_json(
            &s,
            &[t, "--max-blocks", &blocks.to_string(), "--points", "1"],
        );
        let (sim, _) = sim_json(
            &s,
            &[t, "--size", &(blocks * 4096).to_string(), "--policy", "lru"],
        );
        assert_eq!(curve["curve"][0]["size_blocks"], blocks);
        assert_eq!(
            curve["requests"], sim["result"]["requests"],
            "the same requests: {blocks} blocks"
        );
        assert_eq!(
            curve["curve"][0]["misses"], sim["result"]["misses"],
            "{blocks} blocks"
        );
        assert_eq!(
            curve["curve"][0]["miss_ratio"], sim["result"]["miss_ratio"],
            "{blocks} blocks"
        );
    }
}

#[test]
fn mrc_sizes_are_bytes_as_cachesims() {
    let s = Scratch::new();
    let t = mixed_csv(&s);
    let t = t.to_str().unwrap();
    // 32m is 32 MiB in both: 8192 blocks of 4 KiB, not 32 million blocks.
    let v = mrc_json(&s, &[t, "--max-size", "32m", "--points", "4"]);
    let sizes: Vec<u64> = v["curve"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["size_blocks"].as_u64().unwrap())
        .collect();
    assert_eq!(sizes, [2048, 4096, 6144, 8192]);
    let v = mrc_json(
        &s,
        &[
            t,
            "--max-size",
            "32m",
            "--block-size",
            "8k",
            "--points",
            "1",
        ],
    );
    assert_eq!(v["curve"][0]["size_blocks"], 4096);
    // Blocks have a flag of their own.
    let v = mrc_json(&s, &[t, "--max-blocks", "8K", "--points", "1"]);
    assert_eq!(v["curve"][0]["size_blocks"], 8000);
    assert_clean_failure(
        &s.run(&["cachesim", "mrc", t, "--max-size", "1k"]),
        2,
        "less than one block",
    );
    assert_clean_failure(
        &s.run(&[
            "cachesim",
            "mrc",
            t,
            "--max-size",
            "1m",
            "--max-blocks",
            "4",
        ]),
        2,
        "cannot be used with",
    );
}

#[test]
fn a_trace_that_cannot_tell_writes_from_reads_says_so() {
    let s = Scratch::new();
    let p = s.path().join("w.oracleGeneral");
    let mut bytes = Vec::new();
    for i in 0..50u32 {
        bytes.extend_from_slice(&iolab_tracefile::oracle::encode(
            i,
            u64::from(i % 9),
            4096,
            None,
        ));
    }
    std::fs::write(&p, bytes).unwrap();
    let (v, err) = sim_json(
        &s,
        &[
            p.to_str().unwrap(),
            "--size",
            "16k",
            "--write-policy",
            "write-back",
        ],
    );
    assert_eq!(v["result"]["writes"], 0);
    assert!(
        err.contains("do not say whether a request reads or writes")
            && err.contains("simulated as a read"),
        "{err}"
    );
    // The human output says it too.
    let o = s.run(&[
        "cachesim",
        p.to_str().unwrap(),
        "--size",
        "16k",
        "--write-policy",
        "write-around",
        "--no-db",
    ]);
    assert!(o.status.success() && !stdout(&o).is_empty());
    assert!(stderr(&o).contains("simulated as a read"), "{}", stderr(&o));
    // Write-through, the default: a read-only object trace as libCacheSim reads it, nothing
    // to say. A trace with its operations says nothing either.
    let (_, err) = sim_json(&s, &[p.to_str().unwrap(), "--size", "16k"]);
    assert!(err.is_empty(), "{err}");
    let t = mixed_csv(&s);
    let (_, err) = sim_json(
        &s,
        &[
            t.to_str().unwrap(),
            "--size",
            "16k",
            "--write-policy",
            "write-back",
        ],
    );
    assert!(!err.contains("simulated as a read"), "{err}");
}
