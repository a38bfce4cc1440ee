//! The system calls of `iolab bonnie`'s phases, as `strace -ff` sees them thread by thread,
//! match docs/bonnie.md (bonnie++ 2.00's sequence): 1-byte calls in the per-char phases,
//! read–modify–lseek–write per chunk in the rewrite, `fsync` + `close` ending every I/O
//! phase, seekers doing `lseek` + `read` (and one in ten a rewrite), files created in
//! creation order, stat'ed and deleted in the directory's order by the sequential phases and
//! in two different shuffled orders by the random ones.

mod common;

use std::collections::HashMap;
use std::path::Path;

/// One traced call: its name, its arguments as strace prints them, its return value.
#[derive(Debug, Clone)]
struct Call {
    name: String,
    args: String,
    ret: String,
}

impl Call {
    fn parse(line: &str) -> Option<Call> {
        let (call, ret) = line.rsplit_once(" = ")?;
        // strace pads short calls with spaces before the `=`.
        let call = call.trim_end();
        let open = call.find('(')?;
        Some(Call {
            name: call[..open].to_string(),
            args: call[open + 1..].strip_suffix(')')?.to_string(),
            ret: ret.split_whitespace().next()?.to_string(),
        })
    }

    /// The first argument (a descriptor, or `AT_FDCWD`).
    fn fd(&self) -> &str {
        self.args.split(',').next().unwrap_or("").trim()
    }

    /// The last argument (a byte count, an lseek's whence, flags).
    fn last(&self) -> &str {
        self.args.rsplit(", ").next().unwrap_or("").trim()
    }

    /// The quoted name in the arguments.
    fn path(&self) -> Option<&str> {
        let a = self.args.find('"')?;
        let b = self.args[a + 1..].find('"')?;
        Some(&self.args[a + 1..a + 1 + b])
    }
}

const CHUNK: usize = 4096;
const CHUNKS: usize = 16;
const CHAR_CHUNKS: usize = 2;
const SEEKS: usize = 40;
const FILES: usize = 1024;

/// Runs `iolab bonnie` under `strace -ff` and returns each thread's calls.
fn trace(dir: &Path) -> Vec<Vec<Call>> {
    trace_with(dir, CHAR_CHUNKS, &[])
}

/// [`trace`] with `char_chunks` chunks for the per-char phases and more flags.
fn trace_with(dir: &Path, char_chunks: usize, extra: &[&str]) -> Vec<Vec<Call>> {
    let out = tempfile::tempdir().unwrap();
    let prefix = out.path().join("t");
    let o = iolab_testkit::bounded("strace", common::HUNG)
        .args(["-ff", "-qq", "-o"])
        .arg(&prefix)
        .args([
            "-e",
            "trace=openat,read,write,lseek,fsync,close,newfstatat,unlink,unlinkat,sync,\
             mkdir,mkdirat,rmdir",
        ])
        .arg(env!("CARGO_BIN_EXE_iolab"))
        .args(["bonnie", "--dir"])
        .arg(dir)
        .args([
            "--size",
            &format!("{}", CHUNK * CHUNKS),
            "--chunk-size",
            &format!("{CHUNK}"),
            "--char-size",
            &format!("{}", CHUNK * char_chunks),
            "--seeks",
            &format!("{SEEKS}"),
            "--seekers",
            "2",
            "--files",
            "1",
            "--max-file-size",
            "100",
            "--format",
            "bonnie",
            "--no-monitor",
            "--no-db",
        ])
        .args(extra)
        .output()
        .expect("strace runs");
    assert!(
        o.status.success(),
        "iolab bonnie failed under strace: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let mut threads = Vec::new();
    for e in std::fs::read_dir(out.path()).unwrap() {
        let text = std::fs::read_to_string(e.unwrap().path()).unwrap();
        threads.push(text.lines().filter_map(Call::parse).collect());
    }
    threads
}

/// The test file's name as the calls show it.
fn is_test_file(c: &Call) -> bool {
    c.path().is_some_and(|p| p.ends_with("/iolab-bonnie"))
}

/// The calls on descriptor `fd` from `from` until (and with) its `close`.
fn on_fd(calls: &[Call], from: usize, fd: &str) -> Vec<Call> {
    let mut out = Vec::new();
    for c in &calls[from..] {
        if c.fd() == fd && c.name != "openat" {
            out.push(c.clone());
            if c.name == "close" {
                break;
            }
        }
    }
    out
}

/// `name(size)` for each call: `write(1)`, `read(4096)`, `lseek(SEEK_CUR)`.
fn shape(calls: &[Call]) -> Vec<String> {
    calls
        .iter()
        .map(|c| match c.name.as_str() {
            "read" | "write" | "lseek" => format!("{}({})", c.name, c.last()),
            _ => c.name.clone(),
        })
        .collect()
}

/// Whether an open's flags include O_DIRECT (not O_DIRECTORY).
fn o_direct(c: &Call) -> bool {
    c.args
        .split([',', '|'])
        .any(|flag| flag.trim() == "O_DIRECT")
}

fn repeat(items: &[&str], n: usize) -> Vec<String> {
    (0..n)
        .flat_map(|_| items.iter().map(|s| s.to_string()))
        .collect()
}

#[test]
#[ignore = "needs strace (scripts/test.sh installs it as root)"]
fn every_phase_issues_bonnies_calls_in_bonnies_order() {
    iolab_testkit::require_tool("strace");
    let dir = tempfile::tempdir().unwrap();
    let threads = trace(dir.path());
    assert!(
        common::entries(dir.path()).is_empty(),
        "the run leaves nothing behind"
    );
    let worker = threads
        .iter()
        .find(|t| {
            t.iter()
                .any(|c| is_test_file(c) && c.args.contains("O_CREAT|O_EXCL"))
        })
        .expect("a thread creates the test file");

    // The I/O phases: each open of the test file and what is done on its descriptor.
    let opens: Vec<usize> = (0..worker.len())
        .filter(|&i| worker[i].name == "openat" && is_test_file(&worker[i]))
        .collect();
    assert_eq!(opens.len(), 5, "putc, put_block, rewrite, getc, get_block");
    let phase = |k: usize| on_fd(worker, opens[k], &worker[opens[k]].ret);
    let chunk = CHUNK.to_string();
    let per_char_write = vec!["write(1)"; CHUNK * CHAR_CHUNKS];
    let mut want: Vec<String> = per_char_write.iter().map(|s| s.to_string()).collect();
    want.extend(["fsync".into(), "close".into()]);
    assert_eq!(shape(&phase(0)), want, "putc: one byte per write");
    assert!(worker[opens[0]].args.contains("O_RDWR|O_CREAT|O_EXCL"));

    // put_block: the file is unlinked and created again.
    let unlinked = worker[..opens[1]]
        .iter()
        .rposition(|c| c.name.starts_with("unlink") && is_test_file(c));
    assert!(
        unlinked.is_some_and(|u| u > opens[0]),
        "unlink before put_block"
    );
    assert!(worker[opens[1]].args.contains("O_RDWR|O_CREAT|O_EXCL"));
    let mut want = repeat(&[&format!("write({chunk})")], CHUNKS);
    want.extend(["fsync".into(), "close".into()]);
    assert_eq!(shape(&phase(1)), want, "put_block: a chunk per write");

    // rewrite: read, lseek back, write, per chunk.
    assert!(worker[opens[2]].args.contains("O_RDWR") && !worker[opens[2]].args.contains("O_CREAT"));
    let mut want = vec!["lseek(SEEK_SET)".to_string()];
    want.extend(repeat(
        &[
            &format!("read({chunk})"),
            "lseek(SEEK_CUR)",
            &format!("write({chunk})"),
        ],
        CHUNKS,
    ));
    want.extend(["fsync".into(), "close".into()]);
    let rewrite = phase(2);
    assert_eq!(shape(&rewrite), want, "rewrite: read-modify-lseek-write");
    assert!(
        rewrite
            .iter()
            .filter(|c| c.name == "lseek" && c.last() == "SEEK_CUR")
            .all(|c| c.args.contains(&format!("-{chunk}"))),
        "the rewrite seeks back one chunk"
    );

    let mut want = repeat(&["read(1)"], CHUNK * CHAR_CHUNKS);
    want.extend(["fsync".into(), "close".into()]);
    assert_eq!(shape(&phase(3)), want, "getc: one byte per read");
    let mut want = vec!["lseek(SEEK_SET)".to_string()];
    want.extend(repeat(&[&format!("read({chunk})")], CHUNKS));
    want.extend(["fsync".into(), "close".into()]);
    assert_eq!(shape(&phase(4)), want, "get_block: a chunk per read");

    // The seekers: their own descriptors, lseek + read, one in ten rewritten.
    let seekers: Vec<&Vec<Call>> = threads
        .iter()
        .filter(|t| !std::ptr::eq(*t, worker))
        .filter(|t| t.iter().any(|c| c.name == "openat" && is_test_file(c)))
        .collect();
    assert_eq!(seekers.len(), 2, "two seekers");
    let (mut reads, mut rewrites) = (0, 0);
    for s in &seekers {
        let at = s
            .iter()
            .position(|c| c.name == "openat" && is_test_file(c))
            .unwrap();
        let calls = on_fd(s, at, &s[at].ret);
        let shape = shape(&calls);
        let mut i = 0;
        while i < shape.len() - 2 {
            assert_eq!(shape[i], "lseek(SEEK_SET)", "{shape:?}");
            assert_eq!(shape[i + 1], format!("read({chunk})"), "{shape:?}");
            reads += 1;
            i += 2;
            if shape[i] == "lseek(SEEK_SET)" && shape.get(i + 1) == Some(&format!("write({chunk})"))
            {
                assert_eq!(
                    calls[i].args,
                    calls[i - 2].args,
                    "rewrites the chunk it read"
                );
                rewrites += 1;
                i += 2;
            }
        }
        assert_eq!(&shape[shape.len() - 2..], ["fsync", "close"]);
    }
    assert_eq!(reads, SEEKS, "the seekers share the seeks");
    assert!(
        rewrites > 0 && rewrites < SEEKS / 2,
        "about one in ten: {rewrites}"
    );

    // The file phases.
    let creates: Vec<&Call> = worker
        .iter()
        .filter(|c| c.name == "openat" && c.args.contains("O_WRONLY|O_CREAT|O_EXCL"))
        .collect();
    assert_eq!(creates.len(), 2 * FILES, "sequential and random creates");
    let names = |calls: &[&Call]| -> Vec<String> {
        calls
            .iter()
            .map(|c| c.path().unwrap().to_string())
            .collect()
    };
    let index = |n: &str, random: bool| -> usize {
        let hex = if random { &n[n.len() - 10..] } else { &n[..10] };
        usize::from_str_radix(hex, 16).unwrap_or_else(|_| panic!("{n}"))
    };
    let seq_created = names(&creates[..FILES]);
    let ran_created = names(&creates[FILES..]);
    for (i, n) in seq_created.iter().enumerate() {
        assert_eq!(
            index(n, false),
            i,
            "sequential names start with the creation index"
        );
    }
    for (i, n) in ran_created.iter().enumerate() {
        assert_eq!(
            index(n, true),
            i,
            "random names end with the creation index"
        );
    }
    let stats: Vec<&Call> = worker.iter().filter(|c| c.name == "newfstatat").collect();
    let dels: Vec<&Call> = worker
        .iter()
        .filter(|c| c.name == "unlinkat" && c.fd() != "AT_FDCWD")
        .collect();
    // (glibc's opendir may fstat its descriptor: `newfstatat(fd, "", …, AT_EMPTY_PATH)`.)
    let stats: Vec<&Call> = stats
        .into_iter()
        .filter(|c| c.fd() != "AT_FDCWD" && c.path().is_some_and(|p| !p.is_empty()))
        .collect();
    assert_eq!(stats.len(), 2 * FILES);
    assert_eq!(dels.len(), 2 * FILES);
    let (seq_stat, ran_stat) = (names(&stats[..FILES]), names(&stats[FILES..]));
    let (seq_del, ran_del) = (names(&dels[..FILES]), names(&dels[FILES..]));
    let sorted = |v: &[String]| {
        let mut v = v.to_vec();
        v.sort();
        v
    };
    // Each phase visits each file once.
    for (what, v, of) in [
        ("seq stat", &seq_stat, &seq_created),
        ("seq del", &seq_del, &seq_created),
        ("ran stat", &ran_stat, &ran_created),
        ("ran del", &ran_del, &ran_created),
    ] {
        assert_eq!(sorted(v), sorted(of), "{what} visits every file once");
    }
    // The sequential phases read the directory: both see its one order.
    assert_eq!(seq_stat, seq_del, "stat and delete in readdir order");
    assert!(
        worker.iter().filter(|c| c.name == "sync").count() == 4,
        "a sync() ends each create and delete"
    );
    // The random ones shuffle: neither creation order nor the directory's, nor each other's.
    assert_ne!(ran_stat, ran_created, "random stat is shuffled");
    assert_ne!(ran_del, ran_created, "random delete is shuffled");
    assert_ne!(ran_stat, ran_del, "a new shuffle for the deletes");
    let pos: HashMap<&String, usize> = ran_created
        .iter()
        .enumerate()
        .map(|(i, n)| (n, i))
        .collect();
    let ascending = ran_stat
        .windows(2)
        .filter(|w| pos[&w[0]] < pos[&w[1]])
        .count();
    assert!(
        (FILES / 4..3 * FILES / 4).contains(&ascending),
        "a shuffle, not a near-sorted order: {ascending} of {} steps go up",
        FILES - 1
    );
}

#[test]
#[ignore = "needs strace (scripts/test.sh installs it as root)"]
fn sync_adds_bonnies_b_fsyncs_where_bonnie_2_00a_issues_them() {
    iolab_testkit::require_tool("strace");
    let _hang = iolab_testkit::timeout(common::HUNG);
    let dir = tempfile::tempdir().unwrap();
    let threads = trace_with(dir.path(), CHAR_CHUNKS, &["--sync"]);
    let creates = |t: &[Call]| {
        t.iter()
            .filter(|c| c.name == "openat" && c.args.contains("O_WRONLY|O_CREAT|O_EXCL"))
            .count()
    };
    let worker = threads
        .iter()
        .find(|t| creates(t) > 0)
        .expect("a thread creates the files");
    assert_eq!(creates(worker), 2 * FILES);
    // Each created file: its data, fsync of the file, fsync of its directory, close.
    let mut synced_creates = 0;
    for (i, c) in worker.iter().enumerate() {
        if !(c.name == "openat" && c.args.contains("O_WRONLY|O_CREAT|O_EXCL")) {
            continue;
        }
        let (dirfd, fd) = (c.fd(), c.ret.as_str());
        let rest = &worker[i + 1..];
        let end = rest.iter().position(|c| c.name != "write").unwrap();
        assert!(rest[..end].iter().all(|w| w.fd() == fd));
        let tail: Vec<(&str, &str)> = rest[end..end + 3]
            .iter()
            .map(|c| (c.name.as_str(), c.fd()))
            .collect();
        assert_eq!(tail, [("fsync", fd), ("fsync", dirfd), ("close", fd)]);
        synced_creates += 1;
    }
    assert_eq!(synced_creates, 2 * FILES);
    // Each delete: the unlink, then fsync of its directory.
    let mut synced_dels = 0;
    for (i, c) in worker.iter().enumerate() {
        if c.name == "unlinkat" && c.fd() != "AT_FDCWD" {
            let next = &worker[i + 1];
            assert_eq!((next.name.as_str(), next.fd()), ("fsync", c.fd()));
            synced_dels += 1;
        }
    }
    assert_eq!(synced_dels, 2 * FILES);
    // The sequential I/O phases keep their one fsync at the end (bonnie++ 2.00a's -b adds
    // none there): putc, put_block, rewrite, getc, get_block.
    let fsyncs = worker.iter().filter(|c| c.name == "fsync").count();
    assert_eq!(fsyncs, 5 + 2 * 2 * FILES + 2 * FILES);
    // The seekers: every rewrite is followed by an fsync of its descriptor.
    let mut rewrites = 0;
    for t in threads.iter().filter(|t| creates(t) == 0) {
        for (i, c) in t.iter().enumerate() {
            if c.name == "write" && c.last() == CHUNK.to_string() {
                let next = &t[i + 1];
                assert_eq!((next.name.as_str(), next.fd()), ("fsync", c.fd()));
                rewrites += 1;
            }
        }
    }
    assert!(rewrites > 0, "some seeks rewrite their chunk");
}

#[test]
#[ignore = "needs strace (scripts/test.sh installs it as root)"]
fn direct_opens_every_open_of_the_test_file_with_o_direct_and_nothing_else() {
    iolab_testkit::require_tool("strace");
    let _hang = iolab_testkit::timeout(common::HUNG);
    for direct in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let extra: &[&str] = if direct { &["--direct"] } else { &[] };
        let threads = trace_with(dir.path(), 0, extra);
        let opens: Vec<&Call> = threads
            .iter()
            .flatten()
            .filter(|c| c.name == "openat")
            .collect();
        let test_file: Vec<&&Call> = opens.iter().filter(|c| is_test_file(c)).collect();
        // put_block's creating open, rewrite, get_block and the two seekers.
        assert_eq!(test_file.len(), 5, "{test_file:?}");
        for c in test_file {
            assert_eq!(o_direct(c), direct, "{c:?}");
        }
        // The file phases' files and directories never have it.
        let others = opens
            .iter()
            .filter(|c| {
                c.path()
                    .is_some_and(|p| p.contains("iolab-bonnie.d") || !p.contains('/'))
            })
            .count();
        assert!(others >= 2 * FILES, "the file phases' opens: {others}");
        for c in opens.iter().filter(|c| !is_test_file(c)) {
            assert!(!o_direct(c), "{c:?}");
        }
    }
}
