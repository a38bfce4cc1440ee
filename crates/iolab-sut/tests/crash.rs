//! Crash recovery: a session is SIGKILLed at random points (seeded), then `recover` must
//! leave no mount, no loop device, no image, no mount point, no cgroup, and the tunable at
//! its original value.
//!
//! The session runs in a child process: this test binary re-executed with
//! `IOLAB_SUT_CRASH_CHILD` set, running only `crash_child`, which prepares and tears down
//! runs in a loop until it is killed.

mod common;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::*;
use iolab_sut::{recover_path, Error, Sut, SutOptions};

const CHILD_ENV: &str = "IOLAB_SUT_CRASH_CHILD";
const DIRTY_EXPIRE: &str = "/proc/sys/vm/dirty_expire_centisecs";
const TRIALS: usize = 24;
const SEED: u64 = 0x1a_b0_5e_ed;

/// The child: not a test of its own (does nothing unless the test below runs it).
#[test]
#[ignore = "child half of kill_9_at_random_points_then_recover, which runs it"]
fn crash_child() {
    let Some(dir) = std::env::var_os(CHILD_ENV) else {
        return;
    };
    let dir = PathBuf::from(dir);
    let value = std::env::var("IOLAB_SUT_CRASH_VALUE").unwrap();
    let sut = Sut::open(SutOptions::under(&dir)).unwrap();
    let plan = spec(&format!(
        r#"{{"target":{{"kind":"loop_image","size":"64M"}},
            "fs":{{"kind":"ext4","mount_options":"data=journal"}},
            "tunables":{{"vm.dirty_expire_centisecs":{value},"queue/scheduler":"mq-deadline"}},
            "cache_limit":"64M"}}"#
    ))
    .validate()
    .unwrap();
    for i in 0.. {
        let run = sut.prepare(&plan).unwrap();
        run.cgroup.as_ref().unwrap().add_current_thread().unwrap();
        std::fs::write(run.mountpoint.join("f"), vec![0u8; 1 << 20]).unwrap();
        if i == 0 {
            std::fs::write(dir.join("ready"), b"").unwrap();
        }
        sut.teardown(run).into_result().unwrap();
    }
}

struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn our_cgroups(parent: &Path, pid: u32) -> Vec<String> {
    let prefix = format!("{}{pid}-", iolab_sut::NAME_PREFIX);
    std::fs::read_dir(parent)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(&prefix))
        .collect()
}

#[test]
#[ignore = "needs root: loop devices, mounts, tunables and a cgroup"]
fn kill_9_at_random_points_then_recover() {
    require_root();
    let _g = global_lock();
    let s = Scratch::new("crash");
    let original = read_sysctl(DIRTY_EXPIRE);
    let value = if original == "999" { "998" } else { "999" };
    let cgroup_parent = iolab_sut::cgroup::parent_dir().unwrap();
    // IOLAB_SUT_CRASH_SEED=N tries other kill points.
    let seed = std::env::var("IOLAB_SUT_CRASH_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(SEED);
    let mut rng = XorShift(seed);
    let mut stages = std::collections::BTreeMap::<String, usize>::new();
    let mut with_leftovers = 0;
    let mut undone = 0;
    let started = Instant::now();
    for trial in 0..TRIALS {
        let delay = Duration::from_millis(rng.next() % 400);
        let mut child = iolab_testkit::child_half("crash_child")
            .env(CHILD_ENV, &s.dir)
            .env("IOLAB_SUT_CRASH_VALUE", value)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        if trial == 0 {
            // While the session lives, nobody else may recover its journal.
            let ready = s.dir.join("ready");
            let t0 = Instant::now();
            while !ready.exists() {
                assert!(
                    t0.elapsed() < Duration::from_secs(60),
                    "hung: the child never got ready"
                );
                assert!(child.try_wait().unwrap().is_none(), "child died");
                std::thread::sleep(Duration::from_millis(5));
            }
            match recover_path(&s.journal()) {
                Err(Error::JournalBusy { holder, .. }) => assert_eq!(holder, Some(child.id())),
                other => panic!("recover during a live session: {other:?}"),
            }
        }
        std::thread::sleep(delay);
        child.kill().unwrap();
        child.wait().unwrap();

        let report = recover_path(&s.journal())
            .unwrap_or_else(|e| panic!("trial {trial} (after {delay:?}): recover failed: {e}"));
        let failures: Vec<String> = report
            .failures()
            .map(|a| format!("#{} {}: {:?}", a.seq, a.entry.describe(), a.result))
            .collect();
        assert!(
            failures.is_empty(),
            "trial {trial} (after {delay:?}): {failures:#?}"
        );
        if !report.is_empty() {
            with_leftovers += 1;
            let done: Vec<&str> = report
                .actions
                .iter()
                .filter(|a| matches!(a.result, Ok(iolab_sut::Outcome::Undone(_))))
                .map(|a| match a.entry {
                    iolab_sut::Entry::Mount { .. } => "mount",
                    iolab_sut::Entry::Loop { .. } => "loop",
                    iolab_sut::Entry::Image { .. } => "image",
                    iolab_sut::Entry::Mkdir { .. } => "dir",
                    iolab_sut::Entry::Tunable { .. } => "tunable",
                    iolab_sut::Entry::Cgroup { .. } => "cgroup",
                    _ => "other",
                })
                .collect();
            undone += done.len();
            *stages.entry(done.join("+")).or_default() += 1;
        }
        assert_eq!(read_sysctl(DIRTY_EXPIRE), original, "trial {trial}");
        s.assert_clean();
        assert!(
            our_cgroups(&cgroup_parent, child.id()).is_empty(),
            "trial {trial}: cgroup left"
        );
        let _ = std::fs::remove_file(s.dir.join("ready"));
    }
    eprintln!(
        "{TRIALS} kills (seed {seed:#x}) in {:?}: {with_leftovers} left changes behind, \
         {undone} changes undone; undone per kill: {stages:?}",
        started.elapsed()
    );
    assert!(
        with_leftovers >= TRIALS / 2,
        "kills too early to test anything"
    );
}
