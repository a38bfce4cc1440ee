//! Safety refusals: the root disk, devices iolab did not create, devices with a signature,
//! mounted devices, and journal entries that name things iolab never creates.

mod common;

use std::path::PathBuf;

use common::*;
use iolab_sut::{recover_path, Error, Refusal};
use iolab_sys::mountinfo;

fn block_device_plan(path: &str, allow_destroy: bool, force: bool) -> iolab_sut::SutPlan {
    spec(&format!(
        r#"{{"target":{{"kind":"block_device","path":"{path}","allow_destroy":{allow_destroy},"force":{force}}},
            "fs":{{"kind":"ext4"}}}}"#
    ))
    .validate()
    .unwrap()
}

fn refusals(e: Error) -> Vec<Refusal> {
    match e {
        Error::Refused { reasons, .. } => reasons,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

/// The device holding / (on these machines /dev/vda) is refused even with every override.
#[test]
#[ignore = "needs root: opens the root device"]
fn refuses_the_root_device_whatever_the_settings() {
    require_root();
    let mounts = mountinfo::read().unwrap();
    let root = mountinfo::top_mount_at(&mounts, std::path::Path::new("/")).unwrap();
    if !root.source.starts_with("/dev/") {
        return iolab_testkit::not_run(format!("/ is on {}, not a block device", root.source));
    }
    let s = Scratch::new("rootdev");
    let sut = s.sut();
    for (allow, force) in [(false, false), (true, true)] {
        let e = sut
            .prepare(&block_device_plan(&root.source, allow, force))
            .unwrap_err();
        let msg = e.to_string();
        let r = refusals(e);
        assert!(r.contains(&Refusal::BacksRoot), "{r:?}");
        assert!(
            r.iter()
                .any(|x| matches!(x, Refusal::Mounted { at } if at.contains(&PathBuf::from("/")))),
            "{r:?}"
        );
        assert!(msg.contains("holds the root filesystem"), "{msg}");
    }
    s.assert_clean();
}

/// A loop device with an ext4 signature that the test attached itself (iolab's journal does
/// not know it): refused without allow_destroy, then without force; accepted with both, and
/// then iolab formats and mounts it but does not detach it (not its own).
#[test]
#[ignore = "needs root: loop devices and mounts"]
fn refuses_a_foreign_loop_device_with_a_signature() {
    require_root();
    let s = Scratch::new("foreign");
    let lo = TestLoop::new(&s.dir, "64M");
    sh("mkfs.ext4", &["-q", "-F", &lo.device]);
    let sut = s.sut();

    let r = refusals(
        sut.prepare(&block_device_plan(&lo.device, false, false))
            .unwrap_err(),
    );
    assert_eq!(
        r,
        vec![Refusal::NotOurs, Refusal::Signature { kind: "ext4" }]
    );

    let e = sut
        .prepare(&block_device_plan(&lo.device, true, false))
        .unwrap_err();
    assert!(
        e.to_string().contains("ext4 signature; set `force = true`"),
        "{e}"
    );
    assert_eq!(refusals(e), vec![Refusal::Signature { kind: "ext4" }]);

    let r = refusals(
        sut.prepare(&block_device_plan(&lo.device, false, true))
            .unwrap_err(),
    );
    assert_eq!(r, vec![Refusal::NotOurs]);
    assert!(s.mounts().is_empty());

    let run = sut
        .prepare(&block_device_plan(&lo.device, true, true))
        .unwrap();
    assert_eq!(
        proc_mounts_line(&run.mountpoint).unwrap().split(' ').next(),
        Some(lo.device.as_str())
    );
    sut.teardown(run).into_result().unwrap();
    assert!(s.mounts().is_empty());
    // Still attached: iolab only undoes what it did.
    assert_eq!(
        std::fs::canonicalize(&lo.image).unwrap(),
        iolab_sys::SysBlock::system()
            .loop_backing_file(lo.device.trim_start_matches("/dev/"))
            .unwrap()
            .unwrap()
            .0
    );
}

/// A mounted device is refused even with allow_destroy and force.
#[test]
#[ignore = "needs root: loop devices and mounts"]
fn refuses_a_mounted_device() {
    require_root();
    let s = Scratch::new("mounted");
    let lo = TestLoop::new(&s.dir, "64M");
    sh("mkfs.ext4", &["-q", "-F", &lo.device]);
    let mnt = s.dir.join("test-mnt");
    std::fs::create_dir(&mnt).unwrap();
    sh("mount", &[&lo.device, mnt.to_str().unwrap()]);
    let sut = s.sut();
    let r = refusals(
        sut.prepare(&block_device_plan(&lo.device, true, true))
            .unwrap_err(),
    );
    assert_eq!(
        r,
        vec![Refusal::Mounted {
            at: vec![mnt.clone()]
        }]
    );
    sh("umount", &[mnt.to_str().unwrap()]);
}

#[test]
fn refuses_what_is_not_a_block_device() {
    let s = Scratch::new("notblk");
    let f = s.dir.join("plain-file");
    std::fs::write(&f, b"x").unwrap();
    let sut = s.sut();
    let r = refusals(
        sut.prepare(&block_device_plan(f.to_str().unwrap(), true, true))
            .unwrap_err(),
    );
    assert_eq!(r, vec![Refusal::NotBlockDevice]);
}

/// A damaged or hand-edited journal cannot make recovery touch anything iolab does not
/// create: each such entry fails with a reason and nothing happens to the files named.
#[test]
fn recovery_ignores_entries_naming_foreign_things() {
    let s = Scratch::new("foreignjournal");
    let precious = s.dir.join("precious.img");
    std::fs::write(&precious, b"keep me").unwrap();
    let keep_dir = s.dir.join("keep");
    std::fs::create_dir(&keep_dir).unwrap();
    let lines = [
        format!(r#"{{"seq":1,"pid":1,"time":0,"op":"image","path":"{}"}}"#, precious.display()),
        format!(r#"{{"seq":2,"pid":1,"time":0,"op":"mkdir","path":"{}"}}"#, keep_dir.display()),
        r#"{"seq":3,"pid":1,"time":0,"op":"mount","source":"/dev/vda","target":"/","fstype":"ext4"}"#.to_string(),
        r#"{"seq":4,"pid":1,"time":0,"op":"tunable","path":"/etc/hostname","original":"x"}"#.to_string(),
        r#"{"seq":5,"pid":1,"time":0,"op":"cgroup","path":"/sys/fs/cgroup/memory"}"#.to_string(),
        r#"{"seq":6,"pid":1,"time":0,"op":"loop","image":"/etc/passwd"}"#.to_string(),
    ];
    std::fs::write(s.journal(), lines.join("\n") + "\n").unwrap();
    let report = recover_path(&s.journal()).unwrap();
    assert_eq!(report.actions.len(), 6);
    for a in &report.actions {
        assert!(
            matches!(a.result, Err(Error::ForeignEntry { .. })),
            "entry {} was acted on: {:?}",
            a.seq,
            a.result
        );
    }
    assert_eq!(std::fs::read(&precious).unwrap(), b"keep me");
    assert!(keep_dir.is_dir());
    // They stay in the journal for a human to look at.
    assert_eq!(
        std::fs::read_to_string(s.journal())
            .unwrap()
            .lines()
            .count(),
        6
    );
}
