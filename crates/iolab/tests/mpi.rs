//! Runs under `mpirun` (docs/multi-host.md): ranks that add up to one stored run, a rank
//! that fails or is killed, ranks on two "hosts" (network namespaces), and the default build
//! launched by mpirun. The MPI tests need iolab built with `--features mpi` (scripts/test.sh
//! builds and runs them) and Open MPI's mpirun.

mod common;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use common::*;
use serde_json::Value;

const NEEDS_MPI: &str = "needs iolab built with --features mpi and Open MPI (scripts/test.sh)";

/// `mpirun` for `np` ranks of this iolab on this machine, its arguments next; the ranks use
/// `s`'s database and state directory, as [`Scratch::cmd`] does.
fn mpirun(np: usize, s: &Scratch) -> Command {
    let mut c = iolab_testkit::bounded("mpirun", 300);
    c.args([
        "--allow-run-as-root",
        "--oversubscribe",
        "-np",
        &np.to_string(),
        env!("CARGO_BIN_EXE_iolab"),
    ])
    .env("IOLAB_DB", s.db())
    .env("IOLAB_STATE_DIR", s.state());
    c
}

/// `iolab ARGS` on `np` ranks under mpirun, its output.
fn on_ranks<A: AsRef<OsStr>>(np: usize, s: &Scratch, args: impl IntoIterator<Item = A>) -> Output {
    mpirun(np, s).args(args).output().expect(NEEDS_MPI)
}

/// `iolab run FILE` (and `args`) on `np` ranks, which must succeed.
fn run_ok(np: usize, s: &Scratch, file: &Path, args: &[&str]) -> Output {
    let mut all = vec![OsStr::new("run"), file.as_os_str()];
    all.extend(args.iter().map(OsStr::new));
    succeeded(on_ranks(np, s, all))
}

/// `o`, of a command that must have succeeded.
fn succeeded(o: Output) -> Output {
    assert!(o.status.success(), "{}", text(&o));
    o
}

/// The first run of the experiment `s` stored last.
fn first_run(s: &Scratch) -> Value {
    export(s)["configs"][0]["runs"][0].take()
}

/// `iolab run` of a small experiment of writes, launched as rank 0 of `size` as mpirun
/// would (its environment), without mpirun.
fn as_rank_0_of(s: &Scratch, size: &str) -> Output {
    let (f, _) = writes(s, r#"{ access = "write", bs = "4k", size = "64k" }"#);
    s.cmd()
        .args(["run", f.to_str().unwrap()])
        .env("OMPI_COMM_WORLD_RANK", "0")
        .env("OMPI_COMM_WORLD_SIZE", size)
        .output()
        .unwrap()
}

/// A directory experiment of `micro` writes, `size` per rank, in the scratch's `t`: the file
/// (`x.toml`) and the target.
fn writes(s: &Scratch, micro: &str) -> (PathBuf, PathBuf) {
    let target = s.path().join("t");
    std::fs::create_dir_all(&target).unwrap();
    let f = s.write(
        "x.toml",
        &format!(
            r#"
name = "ranks"
[sut]
target = {{ kind = "directory", path = "{}" }}
[workload]
micro = {micro}
[procedure]
drop_caches = false
[repetitions]
min = 1
max = 1
"#,
            target.display()
        ),
    );
    (f, target)
}

fn export(s: &Scratch) -> Value {
    s.latest()
}

fn metric(run: &Value, name: &str) -> f64 {
    run_metric(run, name).unwrap_or_else(|| panic!("{name} missing in {run}"))
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), stderr(o))
}

#[test]
#[cfg_attr(
    feature = "mpi",
    ignore = "the default build's behaviour; this build has MPI (the other tests here run it)"
)]
fn launched_by_mpirun_without_the_feature_iolab_says_how_to_build_it() {
    let s = Scratch::new();
    let o = as_rank_0_of(&s, "4");
    assert_clean_failure(&o, 2, "one of 4 ranks, but this build has no MPI");
    assert!(stderr(&o).contains("--features mpi"), "{}", stderr(&o));
    assert!(!s.db().exists(), "nothing was stored");
}

/// Launched as the only rank, iolab runs as it does without MPI (in both builds).
#[test]
fn one_rank_runs_as_without_mpi() {
    let s = Scratch::new();
    succeeded(as_rank_0_of(&s, "1"));
    let run = &first_run(&s);
    assert_eq!(metric(run, "bytes"), 65536.0);
    assert!(run_metric(run, "ranks.count").is_none());
}

#[test]
#[cfg_attr(not(feature = "mpi"), ignore = "needs iolab built with --features mpi")]
fn four_ranks_store_one_run_whose_counts_add_up() {
    let _hang = iolab_testkit::timeout(300);
    let s = Scratch::new();
    let (f, target) = writes(&s, r#"{ access = "write", bs = "64k", size = "2m" }"#);
    let o = run_ok(4, &s, &f, &[]);
    // Rank 0 alone prints the summary.
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(out.matches("runs: 1 ok").count(), 1, "{out}");
    let exp = export(&s);
    let run = &exp["configs"][0]["runs"][0];
    assert_eq!(run["status"], "ok", "{run}");
    assert_eq!(metric(run, "bytes"), 4.0 * 2097152.0, "every rank's bytes");
    assert_eq!(metric(run, "ranks.count"), 4.0);
    let skew = metric(run, "ranks.start_skew_s");
    assert!((0.0..=metric(run, "elapsed_s")).contains(&skew), "{skew}");
    // The aggregate rate is the ranks' bytes over first start to last end.
    let rate = metric(run, "bytes") / 1048576.0 / metric(run, "elapsed_s");
    assert!((metric(run, "mib_per_s") / rate - 1.0).abs() < 1e-6);
    assert!(metric(run, "ranks.mib_per_s_min") <= metric(run, "ranks.mib_per_s_max"));
    let ranks = run["environment"]["ranks"].as_array().unwrap();
    assert_eq!(ranks.len(), 4);
    for (r, rank) in ranks.iter().enumerate() {
        assert_eq!(rank["rank"], r);
        assert_eq!(
            rank["metrics"]["bytes"], 2097152.0,
            "each rank's own values"
        );
        assert!(rank["timed_unix_ns"][1].as_u64() > rank["timed_unix_ns"][0].as_u64());
    }
    assert_eq!(exp["experiment"]["host"]["mpi"]["ranks"], 4);
    // Each rank wrote in a directory of its own, removed after the run.
    assert!(entries(&target).is_empty(), "{:?}", entries(&target));
}

#[test]
#[cfg_attr(not(feature = "mpi"), ignore = "needs iolab built with --features mpi")]
fn ior_ranks_move_ior_s_bytes_file_per_process_and_shared() {
    let _hang = iolab_testkit::timeout(300);
    let s = Scratch::new();
    let dir = s.path().join("ior");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("testFile");
    for extra in [&["-F"][..], &[][..]] {
        let ior = ["ior", "-a", "POSIX", "-t", "64k", "-b", "256k", "-s", "3"];
        let o = on_ranks(
            4,
            &s,
            ior.iter()
                .chain(extra)
                .chain(&["-o", file.to_str().unwrap(), "--json", "--no-db"]),
        );
        assert!(o.status.success(), "{extra:?}: {}", text(&o));
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        let phases = &v["iterations"][0]["phases"];
        for p in ["write", "read"] {
            assert_eq!(phases[p]["bytes"], 4.0 * 3.0 * 262144.0, "{extra:?} {p}");
        }
        assert_eq!(v["ranks"], 4);
        assert!(entries(&dir).is_empty(), "{:?}", entries(&dir));
    }
}

#[test]
#[cfg_attr(not(feature = "mpi"), ignore = "needs iolab built with --features mpi")]
fn a_failing_rank_fails_the_run_on_every_rank_with_its_reason() {
    let _hang = iolab_testkit::timeout(300);
    let s = Scratch::new();
    let (good, target) = writes(&s, r#"{ access = "write", bs = "64k", size = "1m" }"#);
    // The last rank's file has the same configuration, on a target it cannot write in
    // (sysfs makes no files): its run fails on that host alone.
    let bad = s.write(
        "bad.toml",
        &std::fs::read_to_string(&good)
            .unwrap()
            .replace(target.to_str().unwrap(), "/sys/kernel/mm"),
    );
    let o = on_ranks(
        2,
        &s,
        [
            "run",
            good.to_str().unwrap(),
            ":",
            "-np",
            "1",
            env!("CARGO_BIN_EXE_iolab"),
            "run",
            bad.to_str().unwrap(),
        ],
    );
    assert!(!o.status.success(), "{}", text(&o));
    let run = &first_run(&s);
    assert_eq!(run["status"], "failed");
    let error = run["error"].as_str().unwrap();
    assert!(
        error.starts_with("rank 2 (host ") && error.contains("/sys/kernel/mm/rank-2"),
        "{error}"
    );
    assert!(error.contains("2 other ranks ended with it"), "{error}");
    assert!(entries(&target).is_empty());
}

/// A rank killed outright: mpirun ends the others (SIGTERM), which store the run as
/// interrupted and clean up; `--resume` under mpirun finishes the experiment and removes what
/// the killed rank left.
#[test]
#[cfg_attr(not(feature = "mpi"), ignore = "needs iolab built with --features mpi")]
fn a_killed_rank_ends_every_rank_cleanly_and_the_experiment_resumes() {
    let _hang = iolab_testkit::timeout(300);
    let s = Scratch::new();
    let (f, target) = writes(
        &s,
        r#"{ access = "randwrite", bs = "4k", size = "4m", time = "5s", loops = 1000000 }"#,
    );
    let child = mpirun(3, &s)
        .args(["run", f.to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect(NEEDS_MPI);
    // Rank 2, once its run writes (its directory exists).
    let rank2 = (0..600)
        .find_map(|_| {
            std::thread::sleep(Duration::from_millis(100));
            let pid = rank_pid(child.id() as i32, 2)?;
            target.join("rank-2/iolab-micro.0").exists().then_some(pid)
        })
        .expect("rank 2 started writing");
    // SAFETY: kill(2) on the PID of a rank this test started (its environment says so).
    unsafe { libc::kill(rank2, libc::SIGKILL) };
    let o = child.wait_with_output().unwrap();
    assert!(!o.status.success());
    let exp = export(&s);
    assert_eq!(exp["experiment"]["status"], "interrupted", "{}", text(&o));
    let run = &exp["configs"][0]["runs"][0];
    assert_eq!(run["status"], "interrupted");
    assert!(
        run["error"].as_str().unwrap().contains("under MPI"),
        "{run}"
    );
    // The ranks that lived cleaned up; the killed one's files wait for the next run.
    assert_eq!(entries(&target), ["rank-2"]);
    run_ok(3, &s, &f, &["--resume"]);
    let exp = export(&s);
    assert_eq!(exp["experiment"]["status"], "done");
    let runs = exp["configs"][0]["runs"].as_array().unwrap();
    assert!(runs.iter().any(|r| r["status"] == "ok"), "{runs:?}");
    assert!(entries(&target).is_empty(), "{:?}", entries(&target));
}

/// The PID of iolab's rank `rank` under `ancestor` (this test's mpirun; by its environment).
fn rank_pid(ancestor: i32, rank: usize) -> Option<i32> {
    let me = format!("OMPI_COMM_WORLD_RANK={rank}");
    let parent = |pid: i32| -> Option<i32> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        stat.rsplit(')')
            .next()?
            .split_whitespace()
            .nth(1)?
            .parse()
            .ok()
    };
    let under = |mut pid: i32| {
        while let Some(p) = parent(pid).filter(|&p| p > 1) {
            if p == ancestor {
                return true;
            }
            pid = p;
        }
        false
    };
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
        let pid: i32 = e.file_name().to_str()?.parse().ok()?;
        if !under(pid) {
            return None;
        }
        let exe = std::fs::read_link(e.path().join("exe")).ok()?;
        if exe != Path::new(env!("CARGO_BIN_EXE_iolab")) {
            return None;
        }
        let env = std::fs::read(e.path().join("environ")).ok()?;
        env.split(|&b| b == 0)
            .any(|v| v == me.as_bytes())
            .then_some(pid)
    })
}

/// Two "hosts": network namespaces on a bridge (scripts/mpi-netns.sh), one rank each. Each
/// rank's host is stored, and nothing of the namespaces is left.
#[test]
#[cfg_attr(not(feature = "mpi"), ignore = "needs iolab built with --features mpi")]
fn ranks_on_two_hosts_store_each_host() {
    let _hang = iolab_testkit::timeout(300);
    iolab_testkit::require_root();
    let s = Scratch::new();
    let (f, _) = writes(&s, r#"{ access = "write", bs = "64k", size = "1m" }"#);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/mpi-netns.sh");
    let o = iolab_testkit::bounded(&script, 300)
        .args([
            "run",
            "-n",
            "2",
            "--",
            "mpirun",
            "--allow-run-as-root",
            "-np",
            "2",
        ])
        .arg(env!("CARGO_BIN_EXE_iolab"))
        .args(["run", f.to_str().unwrap(), "--db", s.db().to_str().unwrap()])
        .output()
        .unwrap();
    succeeded(o);
    let exp = export(&s);
    let hosts: Vec<&str> = exp["experiment"]["host"]["mpi"]["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["hostname"].as_str().unwrap())
        .collect();
    assert_eq!(hosts.len(), 2);
    assert_ne!(hosts[0], hosts[1], "each rank's own host");
    let run = &exp["configs"][0]["runs"][0];
    assert_eq!(metric(run, "bytes"), 2.0 * 1048576.0);
    let ns = Command::new("ip").args(["netns", "list"]).output().unwrap();
    assert!(
        !String::from_utf8_lossy(&ns.stdout).contains("iolab-mpi-"),
        "namespaces left: {}",
        String::from_utf8_lossy(&ns.stdout)
    );
    let links = Command::new("ip").args(["-br", "link"]).output().unwrap();
    assert!(!String::from_utf8_lossy(&links.stdout).contains("iolab-mpi"));
}

/// Ranks on one node share the filesystem its first rank makes (here ext4 on a loop image):
/// one mkfs and mount, every rank's files in it, all of it undone after the run.
#[test]
#[cfg_attr(not(feature = "mpi"), ignore = "needs iolab built with --features mpi")]
fn ranks_on_one_node_share_the_filesystem_its_first_rank_makes() {
    let _hang = iolab_testkit::timeout(300);
    iolab_testkit::require_root();
    let s = Scratch::new();
    let f = s.write(
        "x.toml",
        r#"
name = "shared"
[sut]
target = { kind = "loop_image", size = "96M" }
fs = { kind = "ext4" }
[workload]
micro = { access = "write", bs = "64k", size = "4m" }
[repetitions]
min = 2
max = 2
"#,
    );
    run_ok(3, &s, &f, &[]);
    let exp = export(&s);
    for run in exp["configs"][0]["runs"].as_array().unwrap() {
        assert_eq!(run["status"], "ok", "{run}");
        assert_eq!(metric(run, "bytes"), 3.0 * 4194304.0);
        let env = &run["environment"];
        let fs = |e: &Value| e["sut"]["fs_uuid"].clone();
        let ranks = env["ranks"].as_array().unwrap();
        assert!(fs(env).is_string(), "{env}");
        // The others used rank 0's mount point as a directory.
        for r in &ranks[1..] {
            assert_eq!(
                r["environment"]["sut"]["mountpoint"],
                env["sut"]["mountpoint"]
            );
        }
    }
    assert!(s.mounts().is_empty(), "left mounted: {:?}", s.mounts());
    assert!(s.loops().is_empty(), "left attached: {:?}", s.loops());
}

/// IOR's stonewall with wear-out under mpirun: every rank stops at the deadline, then goes on
/// until it has done as much as the busiest rank had: all ranks end with equal counts.
#[test]
#[cfg_attr(not(feature = "mpi"), ignore = "needs iolab built with --features mpi")]
fn stonewall_with_wear_out_ends_every_rank_with_equal_counts() {
    let _hang = iolab_testkit::timeout(300);
    let s = Scratch::new();
    let dir = s.path().join("ior");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("testFile");
    // Transfers this small take far longer than the 1 s deadline to fill the block.
    let ior = [
        "ior", "-a", "POSIX", "-t", "64", "-b", "1g", "-F", "-D", "1",
    ];
    let wear_out = ["-O", "stoneWallingWearOut=1", "-o", file.to_str().unwrap()];
    succeeded(on_ranks(3, &s, ior.iter().chain(&wear_out)));
    let run = &first_run(&s);
    let ranks = run["environment"]["ranks"].as_array().unwrap();
    let ops: Vec<f64> = ranks
        .iter()
        .map(|r| r["metrics"]["write.ops"].as_f64().unwrap())
        .collect();
    assert_eq!(ops.len(), 3);
    assert!(ops.iter().all(|&n| n == ops[0] && n > 0.0), "{ops:?}");
    // The deadline came first: no rank wrote its whole block.
    assert!(ops[0] < (1u64 << 30) as f64 / 64.0, "{ops:?}");
    assert_eq!(metric(run, "write.ops"), 3.0 * ops[0]);
}

/// A file of two stages under mpirun, then `--resume` of it with the first stage done and the
/// second interrupted: every rank skips the first stage (rank 0 says it is done; the others
/// have no database) and runs the second.
#[test]
#[cfg_attr(not(feature = "mpi"), ignore = "needs iolab built with --features mpi")]
fn stages_resume_alike_on_every_rank() {
    let _hang = iolab_testkit::timeout(300);
    let s = Scratch::new();
    let target = s.path().join("t");
    std::fs::create_dir_all(&target).unwrap();
    let stage = |name: &str, prefix: &str| {
        format!(
            r#"
{prefix}name = "{name}"
[{prefix2}sut]
target = {{ kind = "directory", path = "{}" }}
[{prefix2}workload]
micro = {{ access = "write", bs = "64k", size = "1m" }}
[{prefix2}repetitions]
min = 2
max = 2
[{prefix2}procedure]
drop_caches = false
"#,
            target.display(),
            prefix2 = if prefix.is_empty() { "" } else { "then." },
        )
    };
    let f = s.write(
        "x.toml",
        &format!("{}\n[[then]]\n{}", stage("first", ""), stage("second", "x"))
            .replace("xname", "name"),
    );
    run_ok(2, &s, &f, &[]);
    // Both stages are done: resuming says so on rank 0, and no rank waits.
    let o = on_ranks(2, &s, ["run", f.to_str().unwrap(), "--resume"]);
    assert!(text(&o).contains("every stage of"), "{}", text(&o));
    assert!(text(&o).contains("done before"), "{}", text(&o));
}
