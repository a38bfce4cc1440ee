//! `iolab cachesim` and the `cachesim` kind, driven through the binary on small traces whose
//! results are computed by hand, in each trace format.

mod common;

use std::path::PathBuf;

use common::{stderr, stdout, Scratch};
use iolab_tracefile::{BlockRequest, Flags, IolabWriter, Op, TraceInfo};
use serde_json::Value;

/// An oracleGeneral trace of these object ids (size 4096), next-access indices filled in.
fn oracle(s: &Scratch, name: &str, ids: &[u64]) -> PathBuf {
    let mut bytes = Vec::new();
    for (i, id) in ids.iter().enumerate() {
        let next = ids[i + 1..]
            .iter()
            .position(|x| x == id)
            .map(|p| (i + 1 + p) as u64);
        bytes.extend_from_slice(&iolab_tracefile::oracle::encode(i as u32, *id, 4096, next));
    }
    let p = s.path().join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

fn json(s: &Scratch, args: &[&str]) -> Value {
    let mut a = vec!["cachesim"];
    a.extend_from_slice(args);
    a.extend_from_slice(&["--json", "--no-db"]);
    let o = s.run(&a);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn an_oracle_trace_gives_the_hand_computed_counts() {
    let s = Scratch::new();
    // 3 objects of cache: 1 2 3 1 4 2 5 1.
    let t = oracle(&s, "t.oracleGeneral", &[1, 2, 3, 1, 4, 2, 5, 1]);
    let t = t.to_str().unwrap();
    let run = |policy: &str| {
        json(
            &s,
            &[t, "--size", "3", "--block-size", "1", "--policy", policy],
        )
    };
    // LRU: 1 2 3 miss, 1 hit, 4 evicts 2, 2 evicts 3, 5 evicts 1, 1 evicts 4: 7 misses.
    let lru = run("lru");
    assert_eq!(lru["schema"], "iolab.cachesim/1");
    assert_eq!(lru["result"]["read_misses"], 7);
    assert_eq!(lru["result"]["demotions"], 4);
    assert_eq!(lru["cache"]["sets"], 1);
    // Belady with the trace's own next-access field: 4 evicts 3, 5 evicts 4 or 2: 5 misses.
    assert_eq!(run("belady")["result"]["read_misses"], 5);
    // FIFO: 4 evicts 1, 2 hits, 5 evicts 2, 1 evicts 3: 6 misses.
    assert_eq!(run("fifo")["result"]["read_misses"], 6);
    // One set of all blocks is the fully associative cache.
    let one_set = json(&s, &[t, "--size", "3", "--block-size", "1", "--assoc", "3"]);
    assert_eq!(one_set["result"], {
        let mut r = lru["result"].clone();
        for k in ["simulate_ns", "elapsed_ns", "requests_per_s"] {
            r[k] = one_set["result"][k].clone();
        }
        r
    });
}

#[test]
fn a_block_trace_is_split_into_blocks_and_writes_follow_the_write_policy() {
    let s = Scratch::new();
    let p = s.path().join("run.iolt");
    let mut w = IolabWriter::create(&p, &TraceInfo::default()).unwrap();
    let req = |offset: u64, len: u32, op: Op| BlockRequest {
        time_ns: 0,
        offset,
        len,
        latency_ns: None,
        op,
        flags: Flags::default(),
    };
    // Write 16 KiB at 0 (blocks 0-3), read them back, flush, write 4 KiB at 64 KiB (block 16).
    w.write(&req(0, 16384, Op::Write)).unwrap();
    w.write(&req(0, 16384, Op::Read)).unwrap();
    w.write(&req(0, 0, Op::Flush)).unwrap();
    w.write(&req(65536, 4096, Op::Write)).unwrap();
    w.finish().unwrap();
    let t = p.to_str().unwrap();
    let run = |wp: &str| {
        json(
            &s,
            &[
                t,
                "--size",
                "32k",
                "--block-size",
                "4k",
                "--write-policy",
                wp,
            ],
        )
    };
    let wt = run("write-through");
    assert_eq!(wt["trace"]["format"], "iolab");
    let r = &wt["result"];
    assert_eq!(
        (r["writes"].clone(), r["reads"].clone()),
        (5.into(), 4.into())
    );
    assert_eq!(r["read_hits"], 4, "the written blocks were allocated");
    assert_eq!(r["origin_device"]["write_bytes"], 5 * 4096);
    let wa = run("write-around");
    assert_eq!(
        wa["result"]["read_hits"], 0,
        "write-around does not allocate"
    );
    assert_eq!(wa["result"]["promotions"], 4);
    let wb = run("write-back");
    assert_eq!(wb["result"]["origin_device"]["write_bytes"], 0);
    assert_eq!(wb["result"]["cache_device"]["write_bytes"], 5 * 4096);
    // 8 KiB blocks: the 16 KiB request is 2 blocks.
    let big = json(&s, &[t, "--size", "32k", "--block-size", "8k"]);
    assert_eq!(big["result"]["reads"], 2);
}

#[test]
fn a_csv_trace_and_the_human_table() {
    let s = Scratch::new();
    let t = s.write(
        "t.csv",
        "time,obj_id,obj_size,op\n1,7,4096,read\n2,7,4096,read\n3,8,4096,write\n4,9,4096,delete\n",
    );
    let o = s.run(&["cachesim", t.to_str().unwrap(), "--size", "8k", "--no-db"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("2 blocks of 4096 B, fully associative; policy lru, write-through"),
        "{out}"
    );
    assert!(out.contains("skipped"), "the delete is skipped: {out}");
    let j = json(
        &s,
        &[t.to_str().unwrap(), "--size", "8k", "--format", "csv"],
    );
    assert_eq!(j["result"]["read_hits"], 1);
    assert_eq!(j["trace"]["skipped"], 1);
}

#[test]
fn a_sweep_is_an_experiment_without_a_target_and_each_configuration_runs_once() {
    let s = Scratch::new();
    let ids: Vec<u64> = (0..400u64).map(|i| (i * 7919) % 53 + (i % 5) * 3).collect();
    oracle(&s, "w.oracleGeneral", &ids);
    let file = s.write(
        "sweep.toml",
        "name = \"sweep\"\n[factors]\nassoc = [\"1\", \"16\", \"full\"]\npolicy = [\"lru\", \"clock:m=4,i=4\", \"belady\"]\n\
         [workload]\ncachesim = { trace = \"w.oracleGeneral\", size = 16, block_size = 1, assoc = \"${assoc}\", policy = \"${policy}\" }\n\
         [repetitions]\nmetric = \"miss_ratio\"\n",
    );
    let o = s.run(&["run", file.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let e = s.latest();
    let configs = e["configs"].as_array().unwrap();
    assert_eq!(configs.len(), 9);
    let mut miss = std::collections::BTreeMap::new();
    for c in configs {
        let note = c["outcome"]["note"].as_str().unwrap_or_default();
        assert!(note.starts_with("deterministic"), "{note}");
        assert_eq!(c["outcome"]["converged"], true);
        // One run of a simulation is exact, not too few: seed 004's report flagged
        // too-few-runs on all 182 of its configurations.
        let findings = c["findings"].as_array().map_or(&[][..], |f| f.as_slice());
        assert!(findings.is_empty(), "{findings:?}");
        let runs = c["runs"].as_array().unwrap();
        assert_eq!(runs.len(), 1, "one run each");
        let m = runs[0]["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == "miss_ratio")
            .unwrap();
        miss.insert(
            c["label"].as_str().unwrap().to_string(),
            m["value"].as_f64().unwrap(),
        );
    }
    for p in ["lru", "clock:m=4,i=4"] {
        assert!(miss["assoc=full policy=belady"] <= miss[&format!("assoc=full policy={p}")]);
        assert!(miss["assoc=16 policy=belady"] <= miss[&format!("assoc=16 policy={p}")]);
    }
    // 16 ways of 16 blocks is one set: the fully associative cache.
    assert_eq!(miss["assoc=16 policy=lru"], miss["assoc=full policy=lru"]);
}

/// The trace of [`oracle`] with every next-access position counted from 0 (the index of
/// the next request, not the index plus 1), as some converters write them.
fn oracle_from_zero(s: &Scratch, name: &str, ids: &[u64]) -> PathBuf {
    let p = oracle(s, name, ids);
    let mut bytes = std::fs::read(&p).unwrap();
    for rec in bytes.chunks_mut(24) {
        let next = i64::from_le_bytes(rec[16..24].try_into().unwrap());
        if next > 0 {
            rec[16..24].copy_from_slice(&(next - 1).to_le_bytes());
        }
    }
    std::fs::write(&p, bytes).unwrap();
    p
}

#[test]
fn next_access_counted_from_zero_warns_once_and_only_belady_refuses_it() {
    let s = Scratch::new();
    // 1 1 2 …: record 0's next access is record 1, stored as 1 (from 0) instead of 2.
    let ids = [1, 1, 2, 3, 1, 4, 2, 2, 5, 1];
    let good = oracle(&s, "good.oracleGeneral", &ids);
    let bad = oracle_from_zero(&s, "zero.oracleGeneral", &ids);
    let sim = |t: &PathBuf, policy: &str| {
        s.run(&[
            "cachesim",
            t.to_str().unwrap(),
            "--size",
            "3",
            "--block-size",
            "1",
            "--policy",
            policy,
            "--json",
            "--no-db",
        ])
    };
    for policy in ["lru", "fifo", "s3fifo"] {
        let o = sim(&bad, policy);
        let err = stderr(&o);
        assert!(o.status.success(), "{policy}: {err}");
        assert_eq!(
            err.matches("warning").count(),
            1,
            "{policy}: one warning for the whole trace: {err}"
        );
        assert!(
            err.contains("iolab: warning: ") && err.contains("next-access"),
            "{err}"
        );
        let want = sim(&good, policy);
        assert!(stderr(&want).is_empty(), "{}", stderr(&want));
        let (got, want): (Value, Value) = (
            serde_json::from_slice(&o.stdout).unwrap(),
            serde_json::from_slice(&want.stdout).unwrap(),
        );
        assert_eq!(
            got["result"]["misses"], want["result"]["misses"],
            "{policy}"
        );
    }
    // Belady reads the field: refused, located, with the way to rewrite it.
    let o = sim(&bad, "belady");
    common::assert_clean_failure(
        &o,
        2,
        "zero.oracleGeneral: record 0 (byte 16): bad next-access index",
    );
    assert!(stderr(&o).contains("iolab trace convert"), "{}", stderr(&o));
    // That rewrite gives Belady the trace it needs.
    let fixed = s.path().join("fixed.oracleGeneral");
    let o = s.run(&[
        "trace",
        "convert",
        bad.to_str().unwrap(),
        fixed.to_str().unwrap(),
        "--to",
        "oracleGeneral",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        std::fs::read(&fixed).unwrap(),
        std::fs::read(&good).unwrap()
    );
    let o = sim(&fixed, "belady");
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn libcachesim_policy_names_are_accepted() {
    let s = Scratch::new();
    let ids: Vec<u64> = (0..300u64).map(|i| (i * 7919) % 41 + (i % 7) * 2).collect();
    let t = oracle(&s, "w.oracleGeneral", &ids);
    let t = t.to_str().unwrap();
    let misses = |policy: &str| {
        let j = json(
            &s,
            &[t, "--size", "16", "--block-size", "1", "--policy", policy],
        );
        (j["result"]["misses"].clone(), j["cache"]["policy"].clone())
    };
    for (alias, name) in [
        ("twoq", "2q"),
        ("TwoQ", "2q"),
        ("fifo-reinsertion", "clock"),
        ("second-chance", "clock"),
        ("s3-fifo", "s3fifo"),
        ("S3FIFO", "s3fifo"),
        ("LRU", "lru"),
    ] {
        let (m, p) = misses(alias);
        assert_eq!(p, name, "{alias} is {name}");
        assert_eq!(m, misses(name).0, "{alias}");
    }
    // Parameters go with an alias as with the name.
    assert_eq!(misses("twoq:ain=0.5").1, "2q:ain=0.5");
    // The suggestions know the aliases.
    let o = s.run(&["cachesim", t, "--size", "16", "--policy", "twoqq"]);
    common::assert_clean_failure(&o, 2, "did you mean `twoq`");
}

#[test]
fn traffic_counts_the_bytes_the_requests_ask_for() {
    let s = Scratch::new();
    // Objects of 4096 bytes in a cache of 3 objects (--block-size 1): LRU on 1 2 3 1 4 2 5 1
    // hits once and misses 7 times.
    let t = oracle(&s, "t.oracleGeneral", &[1, 2, 3, 1, 4, 2, 5, 1]);
    let j = json(
        &s,
        &[t.to_str().unwrap(), "--size", "3", "--block-size", "1"],
    );
    let r = &j["result"];
    assert_eq!(
        (r["read_hits"].clone(), r["read_misses"].clone()),
        (1.into(), 7.into())
    );
    assert_eq!(r["cache_device"]["read_bytes"], 4096, "the hit");
    assert_eq!(r["origin_device"]["read_bytes"], 7 * 4096, "the misses");
    assert_eq!(r["cache_device"]["write_bytes"], 7 * 4096, "the fills");
    assert_eq!(r["bytes"], 8 * 4096);
    // Objects of their own sizes, write-back: the dirty object evicted is written back whole.
    let csv = s.write(
        "t.csv",
        "time,obj_id,obj_size,op\n1,7,1000,write\n2,8,2000,read\n3,9,300,read\n4,8,2000,read\n",
    );
    let j = json(
        &s,
        &[
            csv.to_str().unwrap(),
            "--size",
            "2",
            "--block-size",
            "1",
            "--write-policy",
            "write-back",
        ],
    );
    let r = &j["result"];
    assert_eq!(r["dirty_evictions"], 1);
    assert_eq!(
        r["origin_device"]["write_bytes"], 1000,
        "object 7 written back"
    );
    assert_eq!(
        r["origin_device"]["read_bytes"],
        2000 + 300,
        "the read misses"
    );
    assert_eq!(
        r["cache_device"]["read_bytes"],
        1000 + 2000,
        "write-back read, the hit"
    );
    assert_eq!(
        r["cache_device"]["write_bytes"],
        1000 + 2000 + 300,
        "the write, the fills"
    );
}
