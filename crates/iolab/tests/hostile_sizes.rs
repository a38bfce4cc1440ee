//! Sizes and paths from input iolab did not write: a fileset of 10^12 entries, a huge
//! iosize, a trace whose header announces 10^12 requests, a file list of absurd sizes, a
//! replay whose name is a symbolic link out of its directory. Each is refused with a clear
//! error, located where the input has a location, before anything is allocated or written:
//! the binary runs under an address-space limit (`ulimit -v`) and must end with its own
//! message, never an abort.

mod common;

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Output;

use common::{stderr, Scratch};

/// The address-space limit the binary runs under: far less than the sizes refused below.
const LIMIT: u64 = 3 << 30;

fn bounded(s: &Scratch, args: &[&str]) -> Output {
    let mut c = s.cmd();
    c.args(args);
    // SAFETY: setrlimit is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        c.pre_exec(|| {
            let rl = libc::rlimit {
                rlim_cur: LIMIT,
                rlim_max: LIMIT,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &rl) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    c.output().unwrap()
}

/// Ended by its own error (exit `code`), not by a signal or a panic, saying `needle`.
fn assert_refused(o: &Output, code: i32, needle: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(code), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(!err.contains("memory allocation of"), "{err}");
    assert!(err.contains(needle), "expected `{needle}` in:\n{err}");
    assert!(err.contains("hint:"), "no hint:\n{err}");
}

fn wml(s: &Scratch, entries: &str, iosize: &str) -> String {
    let dir = s.path().join("wml");
    std::fs::create_dir_all(&dir).unwrap();
    let f = s.write(
        "big.f",
        &format!(
            "set $dir={}\nset $nfiles={entries}\n\
             define fileset name=many,path=$dir,entries=$nfiles,size=1k,prealloc=0,dirwidth=1000\n\
             define file name=one,path=$dir,size=64k,prealloc\n\
             define process name=p {{\n  thread name=t {{\n    \
             flowop read name=r,filename=one,iosize={iosize}\n  }}\n}}\nrun 1\n",
            dir.display()
        ),
    );
    f.to_str().unwrap().to_string()
}

#[test]
fn a_fileset_too_large_to_index_is_refused_at_its_entries() {
    let s = Scratch::new();
    // More entries than iolab indexes at all: the message was not located.
    let f = wml(&s, "1000000000000", "4k");
    let o = bounded(&s, &["run", &f, "--no-db"]);
    assert_refused(
        &o,
        2,
        "big.f:3:36: error: fileset `many`: 1000000000000 entries",
    );
    assert!(stderr(&o).contains("`--set nfiles=…`"), "{}", stderr(&o));
    // Fewer than that, but an index larger than the memory allowed: was an abort
    // ("memory allocation of … failed") once the engine laid the fileset out.
    let f = wml(&s, "300000000", "4k");
    let o = bounded(&s, &["run", &f, "--no-db"]);
    assert_refused(
        &o,
        2,
        "big.f:3:36: error: fileset `many`: 300000000 entries need",
    );
    assert!(stderr(&o).contains("of memory"), "{}", stderr(&o));
    assert!(std::fs::read_dir(s.path().join("wml"))
        .unwrap()
        .next()
        .is_none());
}

#[test]
fn an_iosize_too_large_for_memory_is_refused_at_its_flowop() {
    let s = Scratch::new();
    let f = wml(&s, "10", "1t");
    let o = bounded(&s, &["run", &f, "--no-db"]);
    let err = stderr(&o);
    assert!(o.status.code().is_some(), "killed by a signal: {err}");
    assert_refused(
        &o,
        o.status.code().unwrap(),
        "big.f:7:5: error: cannot allocate a 1 TiB buffer",
    );
}

#[test]
fn a_trace_announcing_a_trillion_requests_is_refused_at_its_end() {
    let s = Scratch::new();
    let t = s.path().join("t.iolt");
    let mut w = iolab_tracefile::IolabWriter::create(&t, &Default::default()).unwrap();
    for i in 0..2u64 {
        w.write(&iolab_tracefile::BlockRequest {
            time_ns: i,
            offset: i * 4096,
            len: 4096,
            latency_ns: None,
            op: iolab_tracefile::Op::Read,
            flags: Default::default(),
        })
        .unwrap();
    }
    w.finish().unwrap();
    // The header's count (bytes 40..48) says 10^12.
    let mut bytes = std::fs::read(&t).unwrap();
    bytes[40..48].copy_from_slice(&1_000_000_000_000u64.to_le_bytes());
    std::fs::write(&t, bytes).unwrap();
    let out = s.path().join("t.csv");
    let o = bounded(
        &s,
        &[
            "trace",
            "convert",
            t.to_str().unwrap(),
            out.to_str().unwrap(),
            "--to",
            "csv",
        ],
    );
    // Nothing is sized by the header's count: the records are read, and the count that
    // does not match them is a located error.
    assert_refused(
        &o,
        2,
        "record 2 (byte 160): the header says 1000000000000 records, the file ends after 2",
    );
    assert!(!out.exists());
}

fn replay(s: &Scratch, dir: &Path, list: &str) -> Output {
    let l = s.write("hostile.list", list);
    bounded(
        s,
        &[
            "replay",
            "--dir",
            dir.to_str().unwrap(),
            "--install",
            l.to_str().unwrap(),
            "--no-db",
        ],
    )
}

#[test]
fn a_file_list_of_absurd_sizes_is_refused_before_writing() {
    let s = Scratch::new();
    let dir = s.path().join("run");
    std::fs::create_dir(&dir).unwrap();
    // More than the filesystem holds: it was written until the disk was full.
    let o = replay(&s, &dir, "a, 1000000000000000000, c\n");
    assert_refused(&o, 2, "at their peak");
    // Sizes adding up past 2^64: the sum overflowed (a panic in a debug build).
    let o = replay(
        &s,
        &dir,
        "a, 9223372036854775808, c\nb, 9223372036854775808, c\n",
    );
    assert_refused(&o, 2, "16 EiB at their peak");
    assert!(std::fs::read_dir(&dir).unwrap().next().is_none());
}

#[test]
fn a_file_list_cannot_write_through_a_link_out_of_its_directory() {
    let s = Scratch::new();
    let (dir, outside) = (s.path().join("run"), s.path().join("outside"));
    std::fs::create_dir(&dir).unwrap();
    std::fs::create_dir(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, dir.join("docs")).unwrap();
    let o = replay(&s, &dir, "docs/a, 10, c\n");
    assert_refused(&o, 2, "exists already");
    assert!(std::fs::read_dir(&outside).unwrap().next().is_none());
    // `..` and absolute names never reach the file system (replay_errors.rs has the rest).
    let o = replay(&s, &dir, "x/../../a, 10, c\n");
    assert_refused(&o, 2, "hostile.list:1:1: error:");
    let o = replay(&s, &dir, "/tmp/a, 10, c\n");
    assert_refused(&o, 2, "is absolute");
}
