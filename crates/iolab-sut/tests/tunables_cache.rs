//! Tunables set for a run and restored after it, drop_caches with its check, and the
//! page-cache cgroup.

mod common;

use std::io::Read;

use common::*;
use iolab_sut::{drop_caches, Error, Sut};

const DIRTY_EXPIRE: &str = "/proc/sys/vm/dirty_expire_centisecs";

fn dir_plan(s: &Scratch, extra: &str) -> iolab_sut::SutPlan {
    let data = s.dir.join("data");
    std::fs::create_dir_all(&data).unwrap();
    spec(&format!(
        r#"{{"target":{{"kind":"directory","path":"{}"}}{extra}}}"#,
        data.display()
    ))
    .validate()
    .unwrap()
}

#[test]
#[ignore = "needs root: sets kernel tunables"]
fn sysctl_is_set_for_the_run_and_restored() {
    require_root();
    let _g = global_lock();
    let s = Scratch::new("sysctl");
    let original = read_sysctl(DIRTY_EXPIRE);
    let value = if original == "777" { "778" } else { "777" };
    let sut = s.sut();
    let run = sut
        .prepare(&dir_plan(
            &s,
            &format!(r#","tunables":{{"vm.dirty_expire_centisecs":"{value}"}}"#),
        ))
        .unwrap();
    assert_eq!(read_sysctl(DIRTY_EXPIRE), value);
    assert_eq!(run.tunables[0].value, value);
    assert_eq!(run.tunables[0].original, original);
    let j = std::fs::read_to_string(s.journal()).unwrap();
    assert!(
        j.contains(&format!(
            r#""op":"tunable","path":"{DIRTY_EXPIRE}","original":"{original}""#
        )),
        "{j}"
    );
    sut.teardown(run).into_result().unwrap();
    assert_eq!(read_sysctl(DIRTY_EXPIRE), original);
    s.assert_clean();
}

/// Two sessions of different journals (two iolab processes, or tests side by side) changing
/// the same tunable: the second waits for the first to put it back, so each records the true
/// original and the machine ends as it began. Without the machine-wide lock the second took
/// the first's value for the original and restored it last.
#[test]
#[ignore = "needs root: sets kernel tunables"]
fn two_sessions_changing_one_tunable_leave_it_as_it_was() {
    require_root();
    let _g = global_lock();
    let _hang = iolab_testkit::timeout(120);
    let (a, b) = (Scratch::new("lock-a"), Scratch::new("lock-b"));
    let original = read_sysctl(DIRTY_EXPIRE);
    let plan = |s: &Scratch, v: &str| {
        dir_plan(
            s,
            &format!(r#","tunables":{{"vm.dirty_expire_centisecs":"{v}"}}"#),
        )
    };
    let (va, vb) = if original == "1234" {
        ("1235", "1236")
    } else {
        ("1234", "1235")
    };
    let sut_a = a.sut();
    let run_a = sut_a.prepare(&plan(&a, va)).unwrap();
    assert_eq!(read_sysctl(DIRTY_EXPIRE), va);
    let plan_b = plan(&b, vb);
    let second = std::thread::scope(|scope| {
        let t = scope.spawn(|| {
            let sut_b = b.sut();
            let run_b = sut_b.prepare(&plan_b).unwrap();
            let seen = (
                read_sysctl(DIRTY_EXPIRE),
                run_b.tunables[0].original.clone(),
            );
            sut_b.teardown(run_b).into_result().unwrap();
            seen
        });
        // The second session is waiting, not changing the tunable under the first.
        std::thread::sleep(std::time::Duration::from_millis(300));
        assert_eq!(read_sysctl(DIRTY_EXPIRE), va);
        sut_a.teardown(run_a).into_result().unwrap();
        t.join().unwrap()
    });
    assert_eq!(second, (vb.to_string(), original.clone()));
    assert_eq!(read_sysctl(DIRTY_EXPIRE), original);
    a.assert_clean();
    b.assert_clean();
}

/// Dropping the session (as on an early return or panic) restores too.
#[test]
#[ignore = "needs root: sets kernel tunables"]
fn dropping_the_session_restores() {
    require_root();
    let _g = global_lock();
    let s = Scratch::new("drop");
    let original = read_sysctl(DIRTY_EXPIRE);
    {
        let sut = s.sut();
        let _run = sut
            .prepare(&dir_plan(
                &s,
                r#","tunables":{"vm.dirty_expire_centisecs":"1501"}"#,
            ))
            .unwrap();
        assert_eq!(read_sysctl(DIRTY_EXPIRE), "1501");
    }
    assert_eq!(read_sysctl(DIRTY_EXPIRE), original);
    s.assert_clean();
}

/// teardown_all from another thread (a signal handler) restores and closes the session.
#[test]
#[ignore = "needs root: sets kernel tunables"]
fn teardown_all_from_another_thread() {
    let _hang = iolab_testkit::timeout(300);
    require_root();
    let _g = global_lock();
    let s = Scratch::new("handle");
    let original = read_sysctl(DIRTY_EXPIRE);
    let sut = s.sut();
    let plan = spec(
        r#"{"target":{"kind":"loop_image","size":"64M"},"fs":{"kind":"ext4"},
            "tunables":{"vm.dirty_expire_centisecs":"1502"}}"#,
    )
    .validate()
    .unwrap();
    let run = sut.prepare(&plan).unwrap();
    assert_eq!(read_sysctl(DIRTY_EXPIRE), "1502");
    let h = sut.handle();
    let report = std::thread::spawn(move || h.teardown_all()).join().unwrap();
    assert!(report.is_clean(), "{report:?}");
    assert_eq!(read_sysctl(DIRTY_EXPIRE), original);
    s.assert_clean();
    assert!(matches!(sut.prepare(&plan), Err(Error::TornDown)));
    // The run's own teardown afterwards has nothing left to do.
    assert!(sut.teardown(run).is_empty());
}

/// The scheduler of the target's own device (a loop device here), read and written in the
/// `none [mq-deadline]` format.
#[test]
#[ignore = "needs root: attaches a loop device and sets its scheduler"]
fn queue_scheduler_of_the_target_device() {
    require_root();
    let s = Scratch::new("sched");
    let sut = s.sut();
    let plan = spec(
        r#"{"target":{"kind":"loop_image","size":"64M"},"fs":{"kind":"ext4"},
            "tunables":{"queue/scheduler":"mq-deadline","queue/read_ahead_kb":"256"}}"#,
    )
    .validate()
    .unwrap();
    let run = sut.prepare(&plan).unwrap();
    let name = run.device.as_ref().unwrap().name.clone();
    let sched = format!("/sys/block/{name}/queue/scheduler");
    let text = read_sysctl(&sched);
    assert!(text.contains("[mq-deadline]"), "{text}");
    let applied = &run.tunables[1];
    assert_eq!(applied.name, "queue/scheduler");
    assert_eq!(applied.value, "mq-deadline");
    let original = applied.original.clone();
    assert!(!original.contains('['), "{original}");
    assert_eq!(
        read_sysctl(&format!("/sys/block/{name}/queue/read_ahead_kb")),
        "256"
    );
    sut.teardown(run).into_result().unwrap();
    let after = read_sysctl(&sched);
    assert!(after.contains(&format!("[{original}]")), "{after}");
    s.assert_clean();
}

/// vm.dirty_bytes and vm.dirty_ratio zero each other, and dirty_bytes cannot be written as
/// 0: restoring must write back whichever one was in force.
#[test]
#[ignore = "needs root: sets kernel tunables"]
fn coupled_dirty_limits_are_restored() {
    require_root();
    let _g = global_lock();
    let ratio0 = read_sysctl("/proc/sys/vm/dirty_ratio");
    let bytes0 = read_sysctl("/proc/sys/vm/dirty_bytes");
    let s = Scratch::new("dirtypair");
    let sut = s.sut();
    let run = sut
        .prepare(&dir_plan(
            &s,
            r#","tunables":{"vm.dirty_bytes":"268435456"}"#,
        ))
        .unwrap();
    assert_eq!(read_sysctl("/proc/sys/vm/dirty_bytes"), "268435456");
    assert_eq!(read_sysctl("/proc/sys/vm/dirty_ratio"), "0");
    sut.teardown(run).into_result().unwrap();
    assert_eq!(read_sysctl("/proc/sys/vm/dirty_ratio"), ratio0);
    assert_eq!(read_sysctl("/proc/sys/vm/dirty_bytes"), bytes0);
    s.assert_clean();
}

#[test]
#[ignore = "needs root: sets kernel tunables"]
fn bad_tunables_change_nothing() {
    require_root();
    let _g = global_lock();
    let s = Scratch::new("badtun");
    let original = read_sysctl(DIRTY_EXPIRE);
    let sut = s.sut();
    let e = sut
        .prepare(&dir_plan(
            &s,
            r#","tunables":{"vm.dirty_expire_centisecs":"1503","vm.dirty_expire_centisec":"1"}"#,
        ))
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("did you mean `vm.dirty_expire_centisecs`"),
        "{e}"
    );
    assert_eq!(read_sysctl(DIRTY_EXPIRE), original);
    // A value the kernel rejects: recorded, attempted, and rolled back.
    let e = sut
        .prepare(&dir_plan(&s, r#","tunables":{"vm.swappiness":"-5"}"#))
        .unwrap_err();
    assert!(e.to_string().contains("rejected"), "{e}");
    s.assert_clean();
}

#[test]
#[ignore = "needs root: drops the page cache"]
fn drop_caches_evicts_the_run_files() {
    require_root();
    let s = Scratch::new("cache");
    let f = s.dir.join("warm");
    std::fs::write(&f, vec![7u8; 64 << 20]).unwrap();
    let mut buf = Vec::new();
    std::fs::File::open(&f)
        .unwrap()
        .read_to_end(&mut buf)
        .unwrap();
    let r = drop_caches(std::slice::from_ref(&s.dir)).unwrap();
    assert_eq!(r.run_after.files, 1, "{r:?}");
    assert_eq!(r.run_after.bytes, 64 << 20, "{r:?}");
    assert_eq!(r.run_after.resident_bytes(), 0, "{r:?}");
    assert!(!r.run_after.memory_fs);
}

/// Pages someone keeps mapped cannot be dropped: the run would start warm, and the drop says
/// so, naming how much of the run's files stayed.
#[test]
#[ignore = "needs root: drops the page cache"]
fn drop_caches_fails_when_the_run_files_stay_cached() {
    require_root();
    let s = Scratch::new("pinned");
    let f = s.dir.join("pinned");
    let len = 8usize << 20;
    std::fs::write(&f, vec![7u8; len]).unwrap();
    let file = std::fs::File::open(&f).unwrap();
    // SAFETY: a fresh read-only mapping of an open file of `len` bytes.
    let addr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ,
            libc::MAP_SHARED,
            std::os::fd::AsRawFd::as_raw_fd(&file),
            0,
        )
    };
    assert_ne!(addr, libc::MAP_FAILED);
    for off in (0..len).step_by(4096) {
        // SAFETY: inside the mapping.
        unsafe { std::ptr::read_volatile((addr as *const u8).add(off)) };
    }
    let r = drop_caches(std::slice::from_ref(&f));
    // SAFETY: the mapping made above.
    unsafe { libc::munmap(addr, len) };
    let e = r.unwrap_err();
    assert!(matches!(e, Error::CachesNotDropped { .. }), "{e:?}");
    assert!(
        e.to_string()
            .contains("8 MiB of the run's 8 MiB (1 files) still in the page cache"),
        "{e}"
    );
}

/// The cache cgroup exists with its limit during the run, holds the thread added to it, and
/// is gone afterwards with the thread back in its original cgroup.
#[test]
#[ignore = "needs root: creates a memory cgroup"]
fn cache_cgroup_created_and_removed() {
    let _hang = iolab_testkit::timeout(300);
    require_root();
    let s = Scratch::new("cgroup");
    let sut: Sut = s.sut();
    let run = sut
        .prepare(&dir_plan(&s, r#","cache_limit":"64M""#))
        .unwrap();
    let cg = run.cgroup.clone().unwrap();
    assert!(cg.path.is_dir());
    assert_eq!(cg.limit_bytes, 64 << 20);
    let name = cg.path.file_name().unwrap().to_str().unwrap();
    assert!(name.starts_with(iolab_sut::NAME_PREFIX), "{name}");
    let file = s.dir.join("data/through-cgroup");
    std::fs::write(&file, vec![1u8; 8 << 20]).unwrap();
    let memory_line = |text: String| {
        text.lines()
            .find(|l| l.contains(":memory:"))
            .unwrap()
            .to_string()
    };
    let own = memory_line(std::fs::read_to_string("/proc/thread-self/cgroup").unwrap());
    // A thread that joins the cgroup and stays alive through the teardown.
    let (tx, rx) = std::sync::mpsc::channel();
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let cg2 = cg.clone();
    let worker = std::thread::spawn(move || {
        cg2.add_current_thread().unwrap();
        let _ = drop_caches(&[]);
        let mut b = Vec::new();
        std::fs::File::open(&file)
            .unwrap()
            .read_to_end(&mut b)
            .unwrap();
        // SAFETY: no failure mode.
        let tid = unsafe { libc::gettid() };
        tx.send((tid, cg2.usage_bytes().unwrap(), cg2.tasks().unwrap()))
            .unwrap();
        done_rx.recv().unwrap();
    });
    let (tid, usage, tasks) = rx.recv().unwrap();
    assert!(usage > 0, "page cache is charged to the cgroup");
    assert_eq!(tasks, vec![tid]);
    let path = cg.path.clone();
    sut.teardown(run).into_result().unwrap();
    assert!(!path.exists(), "cgroup removed");
    let task_cg =
        memory_line(std::fs::read_to_string(format!("/proc/self/task/{tid}/cgroup")).unwrap());
    assert_eq!(task_cg, own, "the thread is back where it was");
    done_tx.send(()).unwrap();
    worker.join().unwrap();
    s.assert_clean();
}

/// A device setting on a target without a block device is a clear input error.
#[test]
fn device_tunable_needs_a_block_device() {
    let s = Scratch::new("nodev");
    let shm = std::path::Path::new("/dev/shm");
    if iolab_sut::DevInfo::of_file(shm).is_some() {
        return iolab_testkit::not_run("/dev/shm is on a block device here");
    }
    let sut = s.sut();
    let plan = spec(r#"{"target":{"kind":"directory","path":"/dev/shm"},"tunables":{"queue/scheduler":"none"}}"#)
        .validate()
        .unwrap();
    let e = sut.prepare(&plan).unwrap_err();
    assert!(e.is_bad_input(), "{e:?}");
    assert!(e.to_string().contains("no block device"), "{e}");
    s.assert_clean();
}
