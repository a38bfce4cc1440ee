//! `iolab cachesim gen` and `iolab cachesim mrc` through the binary: generated traces are
//! byte-identical for a seed, the exact curve agrees with the simulator's LRU, and bad
//! options give exit 2 with the flag named and no file left behind.

mod common;

use common::{assert_clean_failure, stdout, Scratch};

fn gen(s: &Scratch, name: &str, seed: &str) -> std::path::PathBuf {
    let p = s.path().join(name);
    let o = s.run(&[
        "cachesim",
        "gen",
        "--zipf",
        "0.9",
        "--objects",
        "2k",
        "--requests",
        "30k",
        "--seed",
        seed,
        "-o",
        p.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", common::stderr(&o));
    p
}

#[test]
fn the_same_seed_writes_the_same_bytes() {
    let s = Scratch::new();
    let a = std::fs::read(gen(&s, "a.oracleGeneral.bin", "3")).unwrap();
    let b = std::fs::read(gen(&s, "b.oracleGeneral.bin", "3")).unwrap();
    let c = std::fs::read(gen(&s, "c.oracleGeneral.bin", "4")).unwrap();
    assert_eq!(a.len(), 30_000 * 24);
    assert_eq!(a, b);
    assert_ne!(a, c);
    // No temporary file is left next to the output.
    let names: Vec<_> = std::fs::read_dir(s.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert!(names.iter().all(|n| !n.ends_with(".part")), "{names:?}");
}

#[test]
fn the_exact_curve_matches_lru_simulations() {
    let s = Scratch::new();
    let t = gen(&s, "z.oracleGeneral.bin", "1");
    let t = t.to_str().unwrap();
    let o = s.run(&[
        "cachesim",
        "mrc",
        t,
        "--format",
        "csv",
        "--points",
        "4",
        "--max-blocks",
        "400",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", common::stderr(&o));
    let curve: Vec<(u64, u64)> = stdout(&o)
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[0].parse().unwrap(), f[2].parse().unwrap())
        })
        .collect();
    assert_eq!(
        curve.iter().map(|c| c.0).collect::<Vec<_>>(),
        [100, 200, 300, 400]
    );
    for (size, misses) in curve {
        let o = s.run(&[
            "cachesim",
            t,
            "--policy",
            "lru",
            "--size",
            &(size * 4096).to_string(),
            "--block-size",
            "4096",
            "--no-db",
            "--json",
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", common::stderr(&o));
        let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        assert_eq!(v["result"]["misses"].as_u64(), Some(misses), "size {size}");
    }
}

#[test]
fn bad_options_name_the_flag_and_leave_nothing() {
    let s = Scratch::new();
    let out = s.path().join("x.oracleGeneral.bin");
    let out = out.to_str().unwrap();
    let g = |args: &[&str]| {
        let mut a = vec!["cachesim", "gen", "-o", out];
        a.extend_from_slice(args);
        s.run(&a)
    };
    assert_clean_failure(
        &g(&["--zipf", "-1", "--objects", "10", "--requests", "10"]),
        2,
        "--zipf",
    );
    assert_clean_failure(
        &g(&["--zipf", "1", "--objects", "0", "--requests", "10"]),
        2,
        "--objects",
    );
    assert_clean_failure(
        &g(&["--zipf", "1", "--objects", "10", "--requests", "1.5"]),
        2,
        "not a whole count",
    );
    assert!(std::fs::read_dir(s.path()).unwrap().next().is_none());
    let t = gen(&s, "t.oracleGeneral.bin", "1");
    let t = t.to_str().unwrap();
    assert_clean_failure(
        &s.run(&["cachesim", "mrc", t, "--shards", "0"]),
        2,
        "--shards 0",
    );
    assert_clean_failure(
        &s.run(&["cachesim", "mrc", t, "--shards", "1.5"]),
        2,
        "(0, 1]",
    );
    assert_clean_failure(
        &s.run(&[
            "cachesim",
            "mrc",
            t,
            "--shards",
            "0.1",
            "--shards-blocks",
            "9",
        ]),
        2,
        "cannot be used with",
    );
    let bad = s.path().join("bad.oracleGeneral.bin");
    std::fs::write(&bad, [1u8; 30]).unwrap();
    assert_clean_failure(
        &s.run(&["cachesim", "mrc", bad.to_str().unwrap()]),
        2,
        "bad.oracleGeneral.bin",
    );
}

#[test]
fn the_curve_as_json_carries_the_one_stamp() {
    let s = Scratch::new();
    let t = gen(&s, "z.oracleGeneral.bin", "1");
    let o = s.run(&[
        "cachesim",
        "mrc",
        t.to_str().unwrap(),
        "--format",
        "json",
        "--points",
        "3",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", common::stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["schema"], "iolab.mrc/1");
    assert_eq!(v["iolab_version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(v["requests"], 30_000);
    assert_eq!(v["curve"].as_array().map(Vec::len), Some(3));
}
