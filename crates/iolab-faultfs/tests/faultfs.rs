//! The fault filesystem mounted for real: files pass through to the backing directory, armed
//! faults fail or stall exactly the calls they name, and a power cut loses exactly the data
//! not yet fsync'd.

use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Read, Write};
use std::os::unix::fs::FileExt;
use std::time::Duration;

use iolab_faultfs::{Action, Fault, FaultFs, Op, Options};
use iolab_testkit::require_root;

fn dirs() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let d = tempfile::Builder::new()
        .prefix("iolab-faultfs")
        .tempdir_in("/var/tmp")
        .unwrap();
    let (b, m) = (d.path().join("backing"), d.path().join("mnt"));
    std::fs::create_dir(&b).unwrap();
    std::fs::create_dir(&m).unwrap();
    (d, b, m)
}

fn mounted(m: &std::path::Path) -> bool {
    std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap()
        .lines()
        .any(|l| l.split(' ').nth(4) == Some(m.to_str().unwrap()))
}

#[test]
#[ignore = "needs root: FUSE mounts"]
fn files_pass_through_and_faults_hit_only_their_calls() {
    require_root();
    let (_d, b, m) = dirs();
    let fs = FaultFs::mount(&b, &m).unwrap();
    std::fs::create_dir(m.join("cfg-a")).unwrap();
    std::fs::create_dir(m.join("cfg-b")).unwrap();
    std::fs::write(m.join("cfg-a/f"), b"hello").unwrap();
    std::fs::write(m.join("cfg-b/f"), b"world").unwrap();
    assert_eq!(std::fs::read(b.join("cfg-a/f")).unwrap(), b"hello");
    std::fs::rename(m.join("cfg-b/f"), m.join("cfg-b/g")).unwrap();
    assert_eq!(std::fs::read(m.join("cfg-b/g")).unwrap(), b"world");
    assert!(!b.join("cfg-b/f").exists());

    fs.set_fault(Fault::new(Op::Write, "cfg-a", Action::Fail(libc::ENOSPC)).after(1));
    fs.set_fault(Fault::new(Op::Fsync, "cfg-a", Action::Fail(libc::EIO)));
    fs.set_fault(Fault::new(Op::Read, "cfg-b", Action::Fail(libc::EIO)));
    let f = OpenOptions::new()
        .write(true)
        .open(m.join("cfg-a/f"))
        .unwrap();
    f.write_all_at(b"1", 0).unwrap();
    let e = f.write_all_at(b"2", 1).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::ENOSPC), "{e}");
    assert_eq!(f.sync_all().unwrap_err().raw_os_error(), Some(libc::EIO));
    // Other files, and other calls on the faulty ones, are untouched.
    std::fs::write(m.join("cfg-b/h"), b"ok").unwrap();
    File::open(m.join("cfg-b/h")).unwrap().sync_all().unwrap();
    assert_eq!(std::fs::read(m.join("cfg-a/f")).unwrap(), b"1ello");
    let mut buf = Vec::new();
    let e = File::open(m.join("cfg-b/g"))
        .unwrap()
        .read_to_end(&mut buf)
        .unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::EIO), "{e}");
    // The kernel may try a failed read twice (read-ahead, then the read itself).
    let hits = fs.hits();
    let ops: Vec<(Op, &str)> = hits.iter().map(|h| (h.op, h.path.as_str())).collect();
    assert_eq!(
        ops[..3],
        [
            (Op::Write, "cfg-a/f"),
            (Op::Fsync, "cfg-a/f"),
            (Op::Read, "cfg-b/g")
        ],
        "{hits:?}"
    );
    assert!(hits[3..].iter().all(|h| h.op == Op::Read), "{hits:?}");

    fs.clear_faults();
    std::fs::write(m.join("cfg-a/f"), b"again").unwrap();
    drop(f);
    drop(fs);
    assert!(!mounted(&m), "unmounted on drop");
    assert_eq!(std::fs::read(b.join("cfg-a/f")).unwrap(), b"again");
}

#[test]
#[ignore = "needs root: FUSE mounts"]
fn a_stalled_write_waits_until_released_and_the_unmount_ends_a_stall() {
    require_root();
    let (_d, b, m) = dirs();
    let fs = FaultFs::mount(&b, &m).unwrap();
    fs.set_fault(Fault::new(Op::Write, "slow", Action::Stall));
    let p = m.join("slow");
    let writer = std::thread::spawn(move || std::fs::write(p, b"late"));
    assert!(fs.wait_stalled(Duration::from_secs(60)), "the write stalls");
    // The rest of the filesystem still answers.
    std::fs::write(m.join("other"), b"x").unwrap();
    assert!(!writer.is_finished());
    fs.clear_faults();
    writer.join().unwrap().unwrap();
    assert_eq!(std::fs::read(b.join("slow")).unwrap(), b"late");

    fs.set_fault(Fault::new(Op::Write, "slow", Action::Stall));
    let p = m.join("slow");
    let writer = std::thread::spawn(move || std::fs::write(p, b"never"));
    assert!(fs.wait_stalled(Duration::from_secs(60)));
    fs.unmount().unwrap();
    let e = writer.join().unwrap().unwrap_err();
    assert!(
        e.raw_os_error() == Some(libc::EIO) || e.raw_os_error() == Some(libc::ENOTCONN),
        "{e}"
    );
    assert!(!mounted(&m));
}

#[test]
#[ignore = "needs root: FUSE mounts"]
fn a_power_cut_loses_exactly_what_was_not_fsynced() {
    require_root();
    let (_d, b, m) = dirs();
    let opts = Options {
        power_cut: true,
        ..Options::default()
    };
    let mut fs = FaultFs::mount_with(&b, &m, opts).unwrap();
    let mut synced = File::create(m.join("synced")).unwrap();
    synced.write_all(&[1u8; 10_000]).unwrap();
    synced.sync_all().unwrap();
    synced.write_all(&[2u8; 5000]).unwrap();
    let mut lost = File::create(m.join("lost")).unwrap();
    lost.write_all(b"gone").unwrap();
    // What the process sees meanwhile: everything it wrote.
    let mut seen = Vec::new();
    File::open(m.join("synced"))
        .unwrap()
        .read_to_end(&mut seen)
        .unwrap();
    assert_eq!(seen.len(), 15_000);
    assert_eq!(std::fs::read(m.join("lost")).unwrap(), b"gone");
    assert!(fs.cut() > 0);
    let e = std::fs::read(m.join("lost")).unwrap_err();
    assert_ne!(
        e.kind(),
        ErrorKind::NotFound,
        "after a cut, calls fail: {e}"
    );
    drop((synced, lost));
    drop(fs);
    assert!(!mounted(&m));
    let after = std::fs::read(b.join("synced")).unwrap();
    assert_eq!(after, vec![1u8; 10_000], "only the synced part survives");
    assert_eq!(
        std::fs::read(b.join("lost")).unwrap(),
        b"",
        "the name survives (directory operations are immediate), the data does not"
    );

    // A clean unmount writes what is pending.
    let fs = FaultFs::mount_with(&b, &m, opts).unwrap();
    std::fs::write(m.join("kept"), b"kept").unwrap();
    fs.unmount().unwrap();
    assert_eq!(std::fs::read(b.join("kept")).unwrap(), b"kept");
}
