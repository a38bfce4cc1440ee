//! Every workload of filebench's repository runs with iolab's engine for 3 seconds on a tmpfs,
//! producing results (the corpus comes from `$IOLAB_FILEBENCH_CORPUS`, see iolab-testkit;
//! root for the mount). Sizes that would not fit are scaled down through --set, as a user
//! would.

mod common;

use common::{require_root, stderr, Tmpfs};

/// `--set` overrides for files whose defaults do not fit a test tmpfs (videoserver's
/// defaults are 2.2 TB). Everything else runs as written.
fn overrides(name: &str) -> &'static [&'static str] {
    match name {
        "videoserver.f" => &["filesize=32m", "numactivevids=4", "numpassivevids=4"],
        "randomread.f"
        | "randomrw.f"
        | "randomwrite.f"
        | "singlestreamread.f"
        | "singlestreamreaddirect.f" => &["filesize=256m"],
        "filemicro_rread.f"
        | "filemicro_rwrite.f"
        | "filemicro_rwritedsync.f"
        | "filemicro_rwritefsync.f"
        | "filemicro_seqread.f"
        | "fivestreamread.f"
        | "fivestreamreaddirect.f"
        | "fivestreamwrite.f"
        | "fivestreamwritedirect.f" => &["filesize=128m"],
        "cvar_example.f" => &["filesize=16m"],
        "createfiles.f" | "listdirs.f" | "openfiles.f" | "netsfs.f" => &["nfiles=5000"],
        "makedirs.f" | "removedirs.f" => &["ndirs=2000"],
        // Its 25 files (150 GB) are written into the file: scale them all.
        "tpcso.f" => &["--size-scale=0.001"],
        _ => &[],
    }
}

#[test]
#[ignore = "needs root: mounts a tmpfs"]
fn every_corpus_workload_runs_for_three_seconds_on_tmpfs() {
    require_root();
    let Some(corpus) = iolab_testkit::filebench_corpus() else {
        return;
    };
    let mut files: Vec<_> = std::fs::read_dir(&corpus)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert_eq!(files.len(), 47, "the corpus has 47 workloads");
    // Sequential stream writers write as fast as memory allows (several GB/s on a quiet
    // machine, five streams at once): they get 1 s, and the tmpfs room for that.
    let fs = Tmpfs::new("size=10g");
    let mut failures = Vec::new();
    for f in &files {
        let name = f.file_name().unwrap().to_str().unwrap();
        let dir = fs.path().join(name.trim_end_matches(".f"));
        std::fs::create_dir(&dir).unwrap();
        let mut cmd = common::iolab();
        cmd.arg("run")
            .arg(f)
            .arg("--dir")
            .arg(&dir)
            .args([
                "--time",
                if name.contains("streamwrite") {
                    "1s"
                } else {
                    "3s"
                },
            ])
            .args(["--json", "-q"]);
        for s in overrides(name) {
            if s.starts_with("--") {
                cmd.arg(s);
            } else {
                cmd.args(["--set", s]);
            }
        }
        let o = cmd.output().unwrap();
        let ok = o.status.success()
            && serde_json::from_slice::<serde_json::Value>(&o.stdout)
                .map(|v| {
                    v["result"]["flowops"]
                        .as_array()
                        .is_some_and(|a| !a.is_empty())
                })
                .unwrap_or(false);
        if !ok {
            failures.push(format!(
                "{name}: exit {:?}: {}",
                o.status.code(),
                stderr(&o)
            ));
        }
        // Free the tmpfs for the next workload.
        let _ = std::fs::remove_dir_all(&dir);
    }
    assert!(
        failures.is_empty(),
        "{} of 47 failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// filebench aborts this one on fast filesystems with no results (and exit code 0).
#[test]
#[ignore = "needs root: mounts a tmpfs"]
fn varmail_with_1000_files_runs_its_full_minute_on_tmpfs() {
    require_root();
    let Some(corpus) = iolab_testkit::filebench_corpus() else {
        return;
    };
    let fs = Tmpfs::new("size=1g");
    let o = common::iolab()
        .arg("run")
        .arg(corpus.join("varmail.f"))
        .arg("--dir")
        .arg(fs.path())
        .args(["--json", "-q"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    // Its full minute: `run 60` ends the run, nothing before it.
    let elapsed = v["result"]["elapsed_ns"].as_u64().unwrap();
    assert!(elapsed >= 60_000_000_000, "ran {elapsed} ns");
    for f in v["result"]["flowops"].as_array().unwrap() {
        assert!(f["ops"].as_u64().unwrap() > 0, "{} never ran", f["name"]);
    }
}
