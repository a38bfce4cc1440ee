//! The throttled origin: a blkio cgroup with limits on the run's loop device, removed at
//! teardown — and what cgroup v1 charges to it (the limits apply to exactly that I/O),
//! measured with the cgroup's own counters and the device's, never with a clock.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::*;
use iolab_sut::{drop_caches, recover_path, Sut, SutOptions, ThrottleCgroup};

const CHILD_ENV: &str = "IOLAB_SUT_THROTTLE_CHILD";

/// Run `cmd` in a shell that first moves itself into the cgroup.
fn in_cgroup(cg: &ThrottleCgroup, cmd: &str) {
    let procs = cg.path.join("cgroup.procs");
    let o = Command::new("sh")
        .arg("-c")
        .arg(format!("echo $$ > {} && exec {cmd}", procs.display()))
        .output()
        .unwrap();
    assert!(o.status.success(), "{cmd}: {o:?}");
}

/// Sectors written to a block device (/sys/block/NAME/stat field 7) × 512.
fn device_written(name: &str) -> u64 {
    let t = std::fs::read_to_string(format!("/sys/block/{name}/stat")).unwrap();
    t.split_whitespace().nth(6).unwrap().parse::<u64>().unwrap() * 512
}

fn sync() {
    assert!(Command::new("sync").status().unwrap().success());
}

#[test]
#[ignore = "needs root: loop devices, mounts, blkio cgroups, drop_caches"]
fn throttle_cgroup_charges_what_its_tasks_submit() {
    let _hang = iolab_testkit::timeout(300);
    require_root();
    let _g = global_lock();
    let s = Scratch::new("throttle");
    let sut = s.sut();
    let plan = spec(
        r#"{"target":{"kind":"loop_image","size":"128M"},"fs":{"kind":"ext4"},
            "throttle":{"read_bps":"64M","write_bps":"64M","write_iops":2000}}"#,
    )
    .validate()
    .unwrap();
    let run = sut.prepare(&plan).unwrap();
    let cg = run.throttle.clone().unwrap();
    let dev = run.device.clone().unwrap();
    assert_eq!(cg.dev, dev.dev);
    let name = cg.path.file_name().unwrap().to_str().unwrap().to_owned();
    assert!(name.starts_with(iolab_sut::NAME_PREFIX), "{name}");
    assert!(
        cg.path.starts_with("/sys/fs/cgroup/blkio"),
        "{}",
        cg.path.display()
    );
    let limit = |f: &str| std::fs::read_to_string(cg.path.join(f)).unwrap();
    assert_eq!(
        limit("blkio.throttle.write_bps_device").trim(),
        format!("{} {}", dev.dev, 64 << 20)
    );
    assert_eq!(
        limit("blkio.throttle.write_iops_device").trim(),
        format!("{} 2000", dev.dev)
    );
    assert_eq!(limit("blkio.throttle.read_iops_device").trim(), "");
    let mnt = run.mountpoint.clone();
    let f = |n: &str| mnt.join(n).display().to_string();
    sync();

    // O_DIRECT writes are submitted by the task: charged.
    let c0 = cg.charged().unwrap();
    in_cgroup(
        &cg,
        &format!(
            "dd if=/dev/zero of={} bs=1M count=8 oflag=direct status=none",
            f("direct")
        ),
    );
    let c1 = cg.charged().unwrap();
    assert!(c1.write_bytes - c0.write_bytes >= 8 << 20, "{c0:?} {c1:?}");

    // Buffered writes flushed by the kernel (sync from outside the cgroup): the device
    // writes them, the cgroup is charged nothing — the limits do not apply.
    let d0 = device_written(&dev.name);
    in_cgroup(
        &cg,
        &format!(
            "dd if=/dev/zero of={} bs=1M count=16 status=none",
            f("buffered")
        ),
    );
    sync();
    let c2 = cg.charged().unwrap();
    let d1 = device_written(&dev.name);
    assert!(d1 - d0 >= 16 << 20, "the device wrote {} bytes", d1 - d0);
    assert!(
        c2.write_bytes - c1.write_bytes < 1 << 20,
        "flusher writeback charged {} bytes",
        c2.write_bytes - c1.write_bytes
    );

    // The task's own fsync writes its dirty pages back itself: charged.
    in_cgroup(
        &cg,
        &format!(
            "dd if=/dev/zero of={} bs=1M count=16 conv=fsync status=none",
            f("fsynced")
        ),
    );
    let c3 = cg.charged().unwrap();
    assert!(c3.write_bytes - c2.write_bytes >= 16 << 20, "{c2:?} {c3:?}");

    // Reads that miss the page cache: charged.
    drop_caches(&[]).unwrap();
    in_cgroup(&cg, &format!("cat {}", f("fsynced")));
    let c4 = cg.charged().unwrap();
    assert!(c4.read_bytes - c3.read_bytes >= 16 << 20, "{c3:?} {c4:?}");

    let path = cg.path.clone();
    sut.teardown(run).into_result().unwrap();
    assert!(!path.exists(), "blkio cgroup removed");
    s.assert_clean();
}

/// Dropping the session (an error path) removes the cgroup as well.
#[test]
#[ignore = "needs root: loop devices, mounts, blkio cgroups"]
fn dropped_session_removes_the_throttle() {
    let _hang = iolab_testkit::timeout(300);
    require_root();
    let s = Scratch::new("throttle-drop");
    let path = {
        let sut = s.sut();
        let plan = spec(
            r#"{"target":{"kind":"loop_image","size":"64M"},"fs":{"kind":"ext4"},
                "throttle":{"read_iops":150}}"#,
        )
        .validate()
        .unwrap();
        let run = sut.prepare(&plan).unwrap();
        let cg = run.throttle.clone().unwrap();
        cg.add_current_thread().unwrap();
        cg.path
    };
    assert!(!Path::new(&path).exists(), "{}", path.display());
    let own = std::fs::read_to_string("/proc/thread-self/cgroup").unwrap();
    assert!(!own.contains(iolab_sut::NAME_PREFIX), "{own}");
    s.assert_clean();
}

/// The child of `killed_session_leaves_no_throttle_after_recover`: prepares a throttled run,
/// joins its cgroup, says so, and waits to be killed.
#[test]
#[ignore = "child half of killed_session_leaves_no_throttle_after_recover, which runs it"]
fn throttle_child() {
    let Some(dir) = std::env::var_os(CHILD_ENV) else {
        return;
    };
    let dir = PathBuf::from(dir);
    let sut = Sut::open(SutOptions::under(&dir)).unwrap();
    let plan = spec(
        r#"{"target":{"kind":"loop_image","size":"64M"},"fs":{"kind":"ext4"},
            "throttle":{"write_iops":5000}}"#,
    )
    .validate()
    .unwrap();
    let run = sut.prepare(&plan).unwrap();
    let cg = run.throttle.as_ref().unwrap();
    cg.add_current_thread().unwrap();
    std::fs::write(dir.join("ready"), cg.path.to_str().unwrap()).unwrap();
    loop {
        std::thread::sleep(Duration::from_secs(1));
    }
}

/// SIGKILL with the cgroup populated: `recover` moves nothing it does not own, removes
/// the blkio cgroup (the dead task has left it) with the rest of the run.
#[test]
#[ignore = "needs root: loop devices, mounts, blkio cgroups"]
fn killed_session_leaves_no_throttle_after_recover() {
    let _hang = iolab_testkit::timeout(300);
    require_root();
    let s = Scratch::new("throttle-kill");
    let (mut child, text) = start_child_half("throttle_child", CHILD_ENV, &s.dir);
    let ready = s.dir.join("ready");
    let cg = PathBuf::from(text);
    assert!(cg.is_dir());
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(cg.is_dir(), "a killed session leaves its cgroup");
    let report = recover_path(&s.journal()).unwrap();
    assert!(report.failures().next().is_none(), "{report:?}");
    assert!(!cg.exists(), "recover removed {}", cg.display());
    std::fs::remove_file(&ready).unwrap();
    s.assert_clean();
}
