//! Bad input to `iolab cachesim` and to `cachesim = { … }`: a message naming the flag or the
//! located key, exit code 2, nothing stored.

mod common;

use common::{assert_clean_failure, stderr, Scratch};

fn trace(s: &Scratch) -> String {
    let mut bytes = Vec::new();
    for i in 0..10u64 {
        bytes.extend_from_slice(&iolab_tracefile::oracle::encode(
            i as u32,
            i % 3,
            4096,
            None,
        ));
    }
    let p = s.path().join("t.oracleGeneral");
    std::fs::write(&p, bytes).unwrap();
    p.to_str().unwrap().to_string()
}

#[test]
fn impossible_caches_and_unknown_names_are_refused_naming_the_flag() {
    let s = Scratch::new();
    let t = trace(&s);
    let sim = |args: &[&str]| {
        let mut a = vec!["cachesim", t.as_str()];
        a.extend_from_slice(args);
        s.run(&a)
    };
    assert_clean_failure(
        &sim(&["--size", "1m", "--block-size", "3000"]),
        2,
        "--block-size: the block size 3000 B does not divide the cache size 1048576 B",
    );
    assert_clean_failure(
        &sim(&["--size", "64k", "--assoc", "32"]),
        2,
        "--assoc: associativity 32 is larger than the cache's 16 blocks",
    );
    assert_clean_failure(
        &sim(&["--size", "64k", "--assoc", "3"]),
        2,
        "does not divide the cache's 16 blocks",
    );
    let o = sim(&["--size", "64k", "--policy", "sieev"]);
    assert_clean_failure(&o, 2, "unknown replacement policy `sieev`");
    assert!(
        stderr(&o).contains("did you mean `sieve`"),
        "{}",
        stderr(&o)
    );
    assert!(stderr(&o).contains("--policy"), "{}", stderr(&o));
    assert_clean_failure(
        &sim(&["--size", "64k", "--policy", "clock:m=4,s=9"]),
        2,
        "cannot exceed the maximum count",
    );
    assert_clean_failure(&sim(&["--size", "64k", "--policy", "clock:q=1"]), 2, "`m`");
    assert_clean_failure(
        &sim(&["--size", "64k", "--write-policy", "write-behind"]),
        2,
        "write-back",
    );
    assert_clean_failure(
        &sim(&["--size", "64k", "--origin-device", "hdd,raed=1ms"]),
        2,
        "read",
    );
    assert_clean_failure(&sim(&[]), 2, "--size");
    assert!(!s.db().exists(), "nothing stored");
}

#[test]
fn traces_in_the_wrong_format_are_bad_input() {
    let s = Scratch::new();
    // 30 bytes: not a whole number of 24-byte records.
    let p = s.path().join("bad.oracleGeneral");
    std::fs::write(&p, [0u8; 30]).unwrap();
    let o = s.run(&["cachesim", p.to_str().unwrap(), "--size", "64k", "--no-db"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("bad.oracleGeneral"), "{}", stderr(&o));
    let csv = s.write("t.csv", "time,obj_id,obj_size,op\n1,x7,4096,read\n");
    let o = s.run(&[
        "cachesim",
        csv.to_str().unwrap(),
        "--size",
        "64k",
        "--no-db",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("t.csv:2"),
        "located at the line: {}",
        stderr(&o)
    );
    let o = s.run(&[
        "cachesim",
        "/nonexistent/iolab.trace",
        "--size",
        "64k",
        "--no-db",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn experiment_files_get_located_errors() {
    let s = Scratch::new();
    trace(&s);
    // (the line, the text the error points at, what it says)
    for (line, at, needle) in [
        (
            r#"cachesim = { trace = "t.oracleGeneral", size = "64k", assoc = 32 }"#,
            "32 }",
            "`workload.cachesim.assoc`: associativity 32 is larger",
        ),
        (
            r#"cachesim = { trace = "t.oracleGeneral", size = "64k", policy = "lfuu" }"#,
            "\"lfuu\"",
            "did you mean `lfu`",
        ),
        (
            r#"cachesim = { trace = "t.oracleGeneral", size = "64k", policy = "clock:m=2,s=3" }"#,
            "\"clock:",
            "cannot exceed the maximum count",
        ),
        (
            r#"cachesim = { trace = "t.oracleGeneral", size = "100k", block_size = "3k" }"#,
            "\"3k\"",
            "`workload.cachesim.block_size`",
        ),
        (
            r#"cachesim = { trace = "t.oracleGeneral" }"#,
            "cachesim",
            "`workload.cachesim.size` is missing",
        ),
        (
            r#"cachesim = { trace = "t.oracleGeneral", size = "64k", colour = 1 }"#,
            "colour",
            "colour",
        ),
    ] {
        let file = s.write("sim.toml", &format!("name = \"bad\"\n[workload]\n{line}\n"));
        let o = s.run(&["run", file.to_str().unwrap()]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{line}: {err}");
        assert!(err.contains(needle), "{line}: expected `{needle}` in {err}");
        let col = line.find(at).unwrap() + 1;
        let loc = format!("sim.toml:3:{col}:");
        assert!(err.contains(&loc), "{line}: located at {loc}: {err}");
    }
    assert!(!s.db().exists(), "nothing stored");
}
