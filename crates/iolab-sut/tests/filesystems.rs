//! Filesystems on loop images: each run gets its own fresh filesystem with the requested mount
//! options (as /proc/mounts shows them), and everything is gone afterwards.

mod common;

use common::*;
use iolab_sut::{availability, Error, FsKind};

const DIRTY_EXPIRE: &str = "/proc/sys/vm/dirty_expire_centisecs";

/// The ext4 journal-mode experiment: data=journal vs data=writeback, each on a fresh
/// filesystem and a fresh mount, with vm.dirty_expire_centisecs set during the run only.
#[test]
#[ignore = "needs root: loop devices, mkfs and mount"]
fn ext4_journal_modes_each_on_a_fresh_filesystem() {
    require_root();
    let _g = global_lock();
    let s = Scratch::new("ext4modes");
    let sut = s.sut();
    let original = read_sysctl(DIRTY_EXPIRE);
    let configured = if original == "1234" { "1235" } else { "1234" };
    let mut devices_seen = Vec::new();
    for mode in ["journal", "writeback"] {
        let plan = spec(&format!(
            r#"{{"target":{{"kind":"loop_image","size":"64M"}},
                "fs":{{"kind":"ext4","mount_options":"noatime,data={mode}"}},
                "tunables":{{"vm.dirty_expire_centisecs":{configured}}}}}"#
        ))
        .validate()
        .unwrap();
        let run = sut.prepare(&plan).unwrap();
        let line = proc_mounts_line(&run.mountpoint).expect("mounted");
        let opts = options_of(&line);
        assert!(line.starts_with("/dev/loop"), "{line}");
        assert!(line.contains(" ext4 "), "{line}");
        assert!(opts.contains(&format!("data={mode}")), "{line}");
        assert!(opts.contains(&"noatime".to_string()), "{line}");
        let dev = run.device.clone().unwrap();
        assert_eq!(run.direct_io, Some(true));
        assert!(dev.backing.as_ref().unwrap().starts_with(&s.dir));
        assert_eq!(read_sysctl(DIRTY_EXPIRE), configured, "during the run");
        assert_eq!(run.tunables[0].original, original);
        // Fresh: nothing of the previous run is there.
        assert!(!run.mountpoint.join("marker").exists());
        assert!(!devices_seen.contains(dev.backing.as_ref().unwrap()));
        devices_seen.push(dev.backing.clone().unwrap());
        std::fs::write(run.mountpoint.join("marker"), mode).unwrap();
        assert_eq!(run.mount.as_ref().unwrap().fs_type, "ext4");

        let report = sut.teardown(run).into_result().unwrap();
        assert!(report.actions.len() >= 5, "{report:?}");
        assert_eq!(read_sysctl(DIRTY_EXPIRE), original, "after the run");
        s.assert_clean();
    }
}

fn mount_and_check(kind: &str, size: &str, mount_options: &str, expect: &[&str]) {
    let s = Scratch::new(kind);
    let sut = s.sut();
    let plan = spec(&format!(
        r#"{{"target":{{"kind":"loop_image","size":"{size}"}},
            "fs":{{"kind":"{kind}","mount_options":"{mount_options}"}}}}"#
    ))
    .validate()
    .unwrap();
    let run = sut.prepare(&plan).unwrap();
    let line = proc_mounts_line(&run.mountpoint).expect("mounted");
    assert!(line.contains(&format!(" {kind} ")), "{line}");
    let opts = options_of(&line);
    for e in expect {
        assert!(opts.iter().any(|o| o == e), "{e} not in {line}");
    }
    std::fs::write(run.mountpoint.join("f"), b"x").unwrap();
    sut.teardown(run).into_result().unwrap();
    s.assert_clean();
}

#[test]
#[ignore = "needs root: loop devices, mkfs.xfs and mount"]
fn xfs_on_a_loop_image() {
    require_root();
    // scripts/test.sh installs xfsprogs when it runs as root.
    let a = availability(FsKind::Xfs);
    assert!(a.is_available(), "xfs is not usable here: {:?}", a.problems);
    mount_and_check(
        "xfs",
        "320M",
        "noatime,logbsize=64k",
        &["noatime", "logbsize=64k"],
    );
}

#[test]
#[ignore = "needs root: loop devices, mkfs.btrfs and mount"]
fn btrfs_on_a_loop_image() {
    require_root();
    // scripts/test.sh installs btrfs-progs when it runs as root.
    let a = availability(FsKind::Btrfs);
    assert!(
        a.is_available(),
        "btrfs is not usable here: {:?}",
        a.problems
    );
    mount_and_check(
        "btrfs",
        "128M",
        "noatime,commit=5",
        &["noatime", "commit=5"],
    );
}

/// f2fs works where the kernel has it; where it does not, prepare says so clearly and
/// changes nothing.
#[test]
#[ignore = "needs root: loop devices, mkfs and mount"]
fn f2fs_is_used_or_reported_unavailable() {
    require_root();
    let a = availability(FsKind::F2fs);
    if a.is_available() {
        mount_and_check("f2fs", "128M", "noatime", &["noatime"]);
        return;
    }
    let s = Scratch::new("f2fs");
    let sut = s.sut();
    let plan = spec(r#"{"target":{"kind":"loop_image","size":"128M"},"fs":{"kind":"f2fs"}}"#)
        .validate()
        .unwrap();
    let e = sut.prepare(&plan).unwrap_err();
    let msg = e.to_string();
    assert!(
        matches!(e, Error::FsUnavailable { fs: "f2fs", .. }),
        "{e:?}"
    );
    assert!(
        msg.starts_with("f2fs is not available on this machine: "),
        "{msg}"
    );
    if !a.in_kernel {
        assert!(msg.contains("does not support it"), "{msg}");
    }
    if a.mkfs.is_none() {
        assert!(msg.contains("apt-get install f2fs-tools"), "{msg}");
    }
    s.assert_clean();
}

#[test]
#[ignore = "needs root: mounts a tmpfs"]
fn tmpfs_target_and_remount() {
    require_root();
    let s = Scratch::new("tmpfs");
    let sut = s.sut();
    let plan = spec(
        r#"{"target":{"kind":"tmpfs","size":"32M"},"fs":{"kind":"tmpfs","mount_options":"nr_inodes=1000"}}"#,
    )
    .validate()
    .unwrap();
    let mut run = sut.prepare(&plan).unwrap();
    let line = proc_mounts_line(&run.mountpoint).unwrap();
    assert!(line.starts_with(iolab_sut::NAME_PREFIX), "{line}");
    let opts = options_of(&line);
    assert!(opts.contains(&"size=32768k".to_string()), "{line}");
    assert!(opts.contains(&"nr_inodes=1000".to_string()), "{line}");
    std::fs::write(run.mountpoint.join("f"), b"x").unwrap();
    // A remount of tmpfs is a new, empty tmpfs with the same options.
    sut.remount(&mut run).unwrap();
    assert!(!run.mountpoint.join("f").exists());
    assert_eq!(proc_mounts_line(&run.mountpoint).unwrap(), line);
    sut.teardown(run).into_result().unwrap();
    s.assert_clean();
}

#[test]
#[ignore = "needs root: loop devices, mkfs and mount"]
fn ext4_remount_keeps_data_and_options() {
    require_root();
    let s = Scratch::new("remount");
    let sut = s.sut();
    let plan = spec(
        r#"{"target":{"kind":"loop_image","size":"64M"},"fs":{"kind":"ext4","mount_options":"data=journal"}}"#,
    )
    .validate()
    .unwrap();
    let mut run = sut.prepare(&plan).unwrap();
    std::fs::write(run.mountpoint.join("kept"), b"x").unwrap();
    sut.remount(&mut run).unwrap();
    assert!(run.mountpoint.join("kept").exists());
    assert!(options_of(&proc_mounts_line(&run.mountpoint).unwrap())
        .contains(&"data=journal".to_string()));
    sut.teardown(run).into_result().unwrap();
    s.assert_clean();
}

/// A mount option the kernel rejects: the error carries the kernel's own message, and
/// everything prepared so far is undone.
#[test]
#[ignore = "needs root: loop devices, mkfs and mount"]
fn rejected_mount_option_is_explained_and_rolled_back() {
    require_root();
    let s = Scratch::new("badopt");
    let sut = s.sut();
    let plan = spec(
        r#"{"target":{"kind":"loop_image","size":"64M"},"fs":{"kind":"ext4","mount_options":"bogus_option_x"}}"#,
    )
    .validate()
    .unwrap();
    let e = sut.prepare(&plan).unwrap_err();
    let msg = e.to_string();
    assert!(matches!(e, Error::Mount(_)), "{e:?}");
    assert!(msg.contains("bogus_option_x"), "{msg}");
    s.assert_clean();
}

/// mkfs failing: its own message in the error, and everything undone.
#[test]
#[ignore = "needs root: loop devices, mkfs and mount"]
fn failing_mkfs_is_explained_and_rolled_back() {
    require_root();
    let s = Scratch::new("badmkfs");
    let sut = s.sut();
    let plan = spec(
        r#"{"target":{"kind":"loop_image","size":"64M"},"fs":{"kind":"ext4","mkfs_options":"-O no_such_feature"}}"#,
    )
    .validate()
    .unwrap();
    let e = sut.prepare(&plan).unwrap_err();
    let msg = e.to_string();
    assert!(matches!(e, Error::Command { .. }), "{e:?}");
    assert!(
        msg.contains("mkfs.ext4 -F -q -O no_such_feature /dev/loop"),
        "{msg}"
    );
    assert!(msg.contains("no_such_feature"), "{msg}");
    s.assert_clean();
}

/// A directory target is used as is: nothing mounted, nothing created.
#[test]
fn directory_target_is_used_as_is() {
    let s = Scratch::new("dir");
    std::fs::create_dir(s.dir.join("data")).unwrap();
    let sut = s.sut();
    let plan = spec(&format!(
        r#"{{"target":{{"kind":"directory","path":"{}"}}}}"#,
        s.dir.join("data").display()
    ))
    .validate()
    .unwrap();
    let run = sut.prepare(&plan).unwrap();
    assert_eq!(run.mountpoint, s.dir.join("data"));
    assert!(run.mount.is_none() && run.fs.is_none());
    let report = sut.teardown(run);
    assert!(report.is_empty());
    assert!(s.dir.join("data").is_dir());
}
